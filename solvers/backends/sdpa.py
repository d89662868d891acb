"""SDPA (interior point) through CVXPY, where installed (pip install sdpa-python).
SDPA has no time limit through CVXPY: the profile's limit is not applied."""

from .cvxpy_conic import CvxpyBackend


class SdpaBackend(CvxpyBackend):
    name = "sdpa"
    cvxpy_name = "SDPA"
    python_package = "sdpa-python"
    extra = "sdpa"
