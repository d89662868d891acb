"""SDPA (interior point) through CVXPY, where installed (pip install sdpa-python).

SDPA has no time limit and holds the GIL while it runs, so each solve runs in a child process
(:func:`solve_sdpa_in_process`) that is killed when the solve's time is up or a signal arrives."""

from s3vm.solvers.backends.conic_standard import SDPA_OPTIONS, sdpa_options
from s3vm.solvers.backends.cvxpy.conic import CvxpyBackend, sdpa_in_process


class SdpaBackend(CvxpyBackend):
    name = "sdpa"
    cvxpy_name = "SDPA"
    python_package = "sdpa-python"
    extra = "sdpa"
    option_types = SDPA_OPTIONS

    def solver_options(self, profile, limit=None) -> dict:
        return sdpa_options(super().solver_options(profile, limit))

    def cvxpy_solver(self, clock=None):
        return sdpa_in_process(clock)
