"""SCS (splitting conic solver) through CVXPY: the embedded default for SDPs (first-order,
fast, moderately accurate)."""

from .cvxpy_conic import CvxpyBackend


class ScsBackend(CvxpyBackend):
    name = "scs"
    cvxpy_name = "SCS"

    def solver_options(self, profile):
        options = dict(profile.options)
        if profile.time_limit is not None:
            options.setdefault("time_limit_secs", float(profile.time_limit))
        return options
