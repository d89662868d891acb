"""CVXOPT (interior point) through CVXPY, where installed (pip install cvxopt).
CVXOPT has no time limit: the profile's limit is not applied."""

from s3vm.solvers.backends.cvxpy.conic import CvxpyBackend


class CvxoptBackend(CvxpyBackend):
    name = "cvxopt"
    cvxpy_name = "CVXOPT"
    extra = "cvxopt"
