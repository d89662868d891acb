"""MOSEK through CVXPY for the SDP formulations (needs a MOSEK licence)."""

from s3vm.solvers.backends.cvxpy.conic import CvxpyBackend
from s3vm.solvers.backends.pyomo.mosek import NeedsMosekLicence


class CvxpyMosekBackend(NeedsMosekLicence, CvxpyBackend):
    name = "mosek"
    cvxpy_name = "MOSEK"

    def solver_options(self, profile, limit=None):
        options = dict(profile.options)
        params = dict(options.pop("mosek_params", {}))
        if limit is not None:
            params.setdefault("MSK_DPAR_OPTIMIZER_MAX_TIME", float(limit))
        if profile.threads is not None:
            params.setdefault("MSK_IPAR_NUM_THREADS", int(profile.threads))
        if params:
            options["mosek_params"] = params
        return options
