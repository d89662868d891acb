"""MOSEK through CVXPY for the SDP formulations (needs a MOSEK licence)."""

from s3vm.solvers.backends.cvxpy.conic import CvxpyBackend
from s3vm.solvers.backends.pyomo.mosek import NeedsMosekLicence
from s3vm.solvers.runtime.clock import call_limit


class CvxpyMosekBackend(NeedsMosekLicence, CvxpyBackend):
    name = "mosek"
    cvxpy_name = "MOSEK"

    def solver_options(self, profile):
        options = dict(profile.options)
        params = dict(options.pop("mosek_params", {}))
        limit = call_limit(profile.time_limit)
        if limit is not None:
            params.setdefault("MSK_DPAR_OPTIMIZER_MAX_TIME", float(limit))
        if profile.threads is not None:
            params.setdefault("MSK_IPAR_NUM_THREADS", int(profile.threads))
        if params:
            options["mosek_params"] = params
        return options
