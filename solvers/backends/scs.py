"""SCS (splitting conic solver) through CVXPY: the embedded default for SDPs (first-order,
fast, moderately accurate)."""

from .cvxpy_conic import CvxpyBackend


class ScsBackend(CvxpyBackend):
    name = "scs"
    cvxpy_name = "SCS"
    time_limit_option = "time_limit_secs"
