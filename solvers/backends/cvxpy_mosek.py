"""MOSEK through CVXPY for the SDP formulations (needs a MOSEK licence)."""

from typing import Optional

from .cvxpy_conic import CvxpyBackend
from .mosek import mosek_licence_problem


class CvxpyMosekBackend(CvxpyBackend):
    name = "mosek"
    cvxpy_name = "MOSEK"
    extra = "mosek"

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        return mosek_licence_problem() or super().unavailable_reason()

    def solver_options(self, profile):
        options = dict(profile.options)
        params = dict(options.pop("mosek_params", {}))
        if profile.time_limit is not None:
            params.setdefault("MSK_DPAR_OPTIMIZER_MAX_TIME", float(profile.time_limit))
        if profile.threads is not None:
            params.setdefault("MSK_IPAR_NUM_THREADS", int(profile.threads))
        if params:
            options["mosek_params"] = params
        return options
