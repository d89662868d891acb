"""Clarabel (interior point) through CVXPY: accurate SDP solutions on small problems."""

from .cvxpy_conic import CvxpyBackend


class ClarabelBackend(CvxpyBackend):
    name = "clarabel"
    cvxpy_name = "CLARABEL"
    time_limit_option = "time_limit"
