"""Shared code of the backends that use Pyomo's SolverFactory interface (CBC, GLPK, CPLEX, MOSEK).

Each solver's module names its SolverFactory key and how the profile's options are spelled for it.
"""

from __future__ import annotations

import math
import time
from typing import Optional

from s3vm.solvers.backends.base import Backend, Outcome
from s3vm.solvers.runtime.clock import time_left


def map_legacy_status(termination, has_solution: bool) -> str:
    from pyomo.opt import TerminationCondition as TC

    if termination in (TC.optimal, TC.globallyOptimal):
        return "optimal"
    if termination in (TC.maxTimeLimit,):
        return "time_limit"
    if termination in (TC.infeasible, TC.infeasibleOrUnbounded, TC.invalidProblem):
        return "infeasible"
    if termination in (TC.feasible, TC.locallyOptimal, TC.maxIterations, TC.userInterrupt,
                       TC.maxEvaluations, TC.minStepLength):
        return "feasible" if has_solution else "error"
    return "feasible" if has_solution else "error"


class PyomoLegacyBackend(Backend):
    """A backend over ``pyomo.environ.SolverFactory(factory_name)``."""

    factory_name: str
    time_limit_option: str
    gap_option: str
    threads_option: Optional[str] = None

    def __init__(self):
        from pyomo.environ import SolverFactory

        self._solver = SolverFactory(self.factory_name)

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        from pyomo.environ import SolverFactory

        try:
            solver = SolverFactory(cls.factory_name)
            ok = solver.available(exception_flag=False)
            if ok and hasattr(solver, "license_is_valid") and not solver.license_is_valid():
                return "no valid licence"
        except Exception as exc:  # a third-party import or licence failure
            return f"{type(exc).__name__}: {exc}".splitlines()[0]
        return None if ok else "not installed"

    def _options(self, profile, clock=None) -> dict:
        options = dict(profile.options)
        limit = time_left(clock, profile.time_limit)
        if limit is not None:
            options[self.time_limit_option] = float(limit)
        if profile.mip_rel_gap is not None:
            options[self.gap_option] = float(profile.mip_rel_gap)
        if profile.threads is not None and self.threads_option:
            options[self.threads_option] = int(profile.threads)
        return options

    def solve(self, model, profile, clock=None) -> Outcome:
        from pyomo.opt import SolutionStatus

        start = time.perf_counter()
        try:
            results = self._solver.solve(model, tee=profile.verbose, load_solutions=False,
                                         options=self._options(profile, clock))
        except Exception as exc:  # the solver failed; report, do not crash the caller
            return Outcome(status="error", seconds=time.perf_counter() - start,
                           message=f"{type(exc).__name__}: {exc}".splitlines()[0])
        has_solution = len(results.solution) > 0 and results.solution(0).status in (
            SolutionStatus.optimal, SolutionStatus.feasible, SolutionStatus.globallyOptimal,
            SolutionStatus.locallyOptimal, SolutionStatus.bestSoFar)
        if has_solution:
            model.solutions.load_from(results)
        termination = results.solver.termination_condition
        status = map_legacy_status(termination, has_solution)
        objective = bound = None
        if has_solution:
            from pyomo.environ import Objective, value

            objective = float(value(next(model.component_data_objects(Objective, active=True))))
        lb = getattr(results.problem, "lower_bound", None)
        try:
            bound = float(lb) if lb is not None and math.isfinite(float(lb)) else None
        except (TypeError, ValueError):
            bound = None
        if status == "optimal" and bound is None:
            bound = objective
        return Outcome(status=status, objective=objective, bound=bound,
                       seconds=time.perf_counter() - start, message=str(termination),
                       has_solution=has_solution)
