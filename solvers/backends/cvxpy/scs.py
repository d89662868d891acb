"""SCS (splitting conic solver) through CVXPY: the embedded default for SDPs (first-order,
fast, moderately accurate). SCS catches Ctrl-C itself; :func:`interruptible_scs` turns its
"interrupted" status back into an interrupt."""

from s3vm.solvers.backends.cvxpy.conic import CvxpyBackend, interruptible_scs


class ScsBackend(CvxpyBackend):
    name = "scs"
    cvxpy_name = "SCS"
    time_limit_option = "time_limit_secs"

    def cvxpy_solver(self, clock=None):
        return interruptible_scs(clock)
