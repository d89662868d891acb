"""Clarabel (interior point) through CVXPY: accurate SDP solutions on small problems."""

from .cvxpy_conic import CvxpyBackend


class ClarabelBackend(CvxpyBackend):
    name = "clarabel"
    cvxpy_name = "CLARABEL"

    def solver_options(self, profile):
        options = dict(profile.options)
        if profile.time_limit is not None:
            options.setdefault("time_limit", float(profile.time_limit))
        return options
