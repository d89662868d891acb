"""Shared code of the backends that use Pyomo's newer solver interface (pyomo.contrib.solver).

HiGHS, SCIP and Gurobi have in-process interfaces there, with one option vocabulary
(time_limit, rel_gap, threads, tee, solver_options) and one results object; each solver's module
only names its class, its dependency and how it reports iterations and nodes.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Optional

from s3vm.solvers.backends.base import Backend, Outcome, Session
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import time_left


def map_status(termination, solution_status) -> str:
    """Translate Pyomo's termination condition into the Result vocabulary."""
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition as TC

    has_solution = solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
    if termination == TC.convergenceCriteriaSatisfied:
        return "optimal" if solution_status == SolutionStatus.optimal or has_solution else "error"
    if termination == TC.maxTimeLimit:
        return "time_limit"
    if termination in (TC.provenInfeasible, TC.locallyInfeasible, TC.infeasibleOrUnbounded):
        return "infeasible"
    if termination in (TC.iterationLimit, TC.objectiveLimit, TC.interrupted, TC.minStepLength):
        return "feasible" if has_solution else "error"
    return "feasible" if has_solution else "error"


def _finite(value) -> Optional[float]:
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


class PyomoContribBackend(Backend):
    """A backend over a ``pyomo.contrib.solver`` class; one instance keeps one solver object."""

    solver_class_path: str  # "module:Class"

    def __init__(self):
        module, cls = self.solver_class_path.split(":")
        self._solver = getattr(__import__(module, fromlist=[cls]), cls)()

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        import logging

        module, name = cls.solver_class_path.split(":")
        pyomo_log = logging.getLogger("pyomo")
        level = pyomo_log.level
        pyomo_log.setLevel(logging.ERROR)  # licence probes log warnings that are not ours
        try:
            solver = getattr(__import__(module, fromlist=[name]), name)()
            ok = solver.available()
            del solver  # its finaliser releases a licence and logs about it: keep that quiet
        except Exception as exc:  # an import or licence failure of a third-party package
            return f"{type(exc).__name__}: {exc}".splitlines()[0]
        finally:
            pyomo_log.setLevel(level)
        return None if bool(ok) else f"not available ({ok})"

    def _options(self, profile, clock=None) -> dict:
        """Pyomo's options of one call: the profile's, and the time ``clock`` has left as
        ``time_limit``."""
        options = {
            "load_solutions": False,
            "raise_exception_on_nonoptimal_result": False,
            "tee": sys.stderr if profile.verbose else False,
            "solver_options": dict(profile.options),
        }
        limit = time_left(clock, profile.time_limit)
        if limit is not None:
            options["time_limit"] = float(limit)
        if profile.mip_rel_gap is not None:
            options["rel_gap"] = float(profile.mip_rel_gap)
        if profile.threads is not None:
            options["threads"] = int(profile.threads)
        return options

    @staticmethod
    def _load_duals(model, results) -> None:
        """Row duals into the model's ``dual`` Suffix, when it has one and the solver gives them."""
        from pyomo.environ import Suffix

        suffix = getattr(model, "dual", None)
        if not isinstance(suffix, Suffix) or not suffix.import_enabled():
            return
        try:
            duals = results.solution_loader.get_duals()
        except Exception:  # a MIP, or a solver without duals: leave the suffix empty
            return
        suffix.clear()
        for con, value in duals.items():
            suffix[con] = value

    def counts(self, results) -> tuple[Optional[int], Optional[int]]:
        """(iterations, nodes) from the results' extra_info; per solver."""
        return None, None

    def _call(self, model, options: dict, clock):
        """The Pyomo solver's ``solve`` with ``options``; a backend that watches the clock
        during the call (SCIP) hands it on."""
        return self._solver.solve(model, **options)

    def solve(self, model, profile, clock=None) -> Outcome:
        import warnings

        from pyomo.contrib.solver.common.results import SolutionStatus

        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                # The dual Suffix is written by us after the solve, never read by the solver.
                warnings.filterwarnings("ignore", message=".*does not detect changes to suffixes")
                results = self._call(model, self._options(profile, clock), clock)
        except InputError:  # the profile's fault (an option the solver refused): exit 2
            raise
        except Exception as exc:  # the solver library failed; report, do not crash the caller
            return Outcome(status="error", seconds=time.perf_counter() - start,
                           message=f"{type(exc).__name__}: {exc}".splitlines()[0])
        status = map_status(results.termination_condition, results.solution_status)
        has_solution = results.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
        if has_solution:
            results.solution_loader.load_vars()
            self._load_duals(model, results)
        iterations, nodes = self.counts(results)
        objective = _finite(results.incumbent_objective) if has_solution else None
        bound = _finite(results.objective_bound)
        if status == "optimal" and bound is None:
            bound = objective
        return Outcome(
            status=status if has_solution or status in ("infeasible", "error", "time_limit")
            else "error",
            objective=objective,
            bound=bound,
            iterations=iterations,
            nodes=nodes,
            seconds=time.perf_counter() - start,
            message=str(results.termination_condition.name),
            has_solution=has_solution,
        )

    def session(self, model, profile, clock=None) -> Session:
        # The contrib solver objects are persistent: the same object re-solving the same model
        # sends only what changed (mutable parameters, fixed variables) and keeps the basis.
        return Session(self, model, profile, clock)
