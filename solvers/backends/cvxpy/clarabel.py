"""Clarabel (interior point) through CVXPY: accurate SDP solutions on small problems."""

from s3vm.solvers.backends.cvxpy.conic import CvxpyBackend


class ClarabelBackend(CvxpyBackend):
    name = "clarabel"
    cvxpy_name = "CLARABEL"
    time_limit_option = "time_limit"
    threads_option = "max_threads"
