"""Shared code of the backends that solve a ``cvxpy.Problem`` (the SDP formulations).

Each solver's module names its CVXPY solver and how the profile's options are spelled for it.
"""

from __future__ import annotations

import math
import time
from typing import ClassVar, Optional

from .base import Backend, Outcome


def map_cvxpy_status(status: str) -> str:
    import cvxpy as cp

    if status == cp.OPTIMAL:
        return "optimal"
    if status == cp.OPTIMAL_INACCURATE:
        return "feasible"
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return "infeasible"
    if status == cp.USER_LIMIT:
        return "time_limit"
    return "error"


def _hit_time_limit(profile, seconds: float, stats) -> bool:
    """Whether a solve ended by the profile's time limit (by the solver's clock or ours)."""
    limit = profile.time_limit
    if limit is None:
        return False
    solve_time = getattr(stats, "solve_time", None) or 0.0
    return max(seconds, float(solve_time)) >= 0.98 * float(limit)


class CvxpyBackend(Backend):
    """A backend that calls ``problem.solve(solver=cvxpy_name, ...)``."""

    model_kind = "cvxpy"
    cvxpy_name: ClassVar[str]
    python_package: ClassVar[str] = ""
    # The solver's own keyword for a time limit in seconds (None: the solver has none).
    time_limit_option: ClassVar[Optional[str]] = None

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        try:
            import cvxpy as cp
        except ImportError as exc:
            return f"cvxpy is not installed ({exc})"
        if cls.cvxpy_name not in cp.installed_solvers():
            package = cls.python_package or cls.cvxpy_name.lower()
            return f"CVXPY finds no {cls.cvxpy_name} (pip install {package})"
        return None

    def solver_options(self, profile) -> dict:
        """The profile's time limit in this solver's vocabulary, plus its options."""
        options = dict(profile.options)
        if profile.time_limit is not None and self.time_limit_option is not None:
            options.setdefault(self.time_limit_option, float(profile.time_limit))
        return options

    def solve(self, problem, profile) -> Outcome:
        import cvxpy as cp

        start = time.perf_counter()
        try:
            problem.solve(solver=self.cvxpy_name, verbose=bool(profile.verbose),
                          **self.solver_options(profile))
        except cp.error.SolverError as exc:
            return Outcome(status="error", seconds=time.perf_counter() - start,
                           message=f"{self.cvxpy_name}: {exc}".splitlines()[0])
        seconds = time.perf_counter() - start
        status = map_cvxpy_status(problem.status)
        if status == "feasible" and _hit_time_limit(profile, seconds, problem.solver_stats):
            # SCS and Clarabel stopped by their clock report an inaccurate "solution", which
            # CVXPY maps to OPTIMAL_INACCURATE: that is a time limit, not a converged solve.
            status = "time_limit"
        value = problem.value
        objective = float(value) if value is not None and math.isfinite(value) else None
        stats = problem.solver_stats
        iterations = getattr(stats, "num_iters", None)
        return Outcome(status=status, objective=objective,
                       bound=objective if status == "optimal" else None,
                       iterations=int(iterations) if iterations is not None else None,
                       seconds=seconds, message=str(problem.status),
                       has_solution=objective is not None and status != "infeasible")
