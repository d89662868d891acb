"""MOSEK through its Fusion API, for SDP formulations built as Fusion models (needs a licence).

Fusion models are built (and exported) without a licence; :meth:`MosekFusionBackend.solve` is
the only step that checks one out. The profile's ``options`` are Fusion solver parameters
(``Model.setSolverParam`` names, e.g. ``intpntCoTolRelGap = 1e-9``).
"""

from __future__ import annotations

import sys
import time

from s3vm.solvers.backends.base import Backend, Outcome
from s3vm.solvers.backends.pyomo.mosek import NeedsMosekLicence
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import time_left


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


def _name(member) -> str:
    """``PrimalAndDualFeasible`` for ``ProblemStatus.PrimalAndDualFeasible``."""
    return str(member).rsplit(".", 1)[-1]


class MosekFusionBackend(NeedsMosekLicence, Backend):
    name = "mosek-fusion"
    model_kind = "fusion"
    provides_duals = False

    def set_parameters(self, model, profile, clock=None) -> None:
        """The time ``clock`` has left, threads, log and the profile's own options, as Fusion
        solver parameters."""
        import mosek.fusion as mf

        params = {}
        limit = time_left(clock, profile.time_limit)
        if limit is not None:
            params["optimizerMaxTime"] = float(limit)
        if profile.threads is not None:
            params["numThreads"] = int(profile.threads)
        params.update(profile.options)
        for key, value in params.items():
            try:
                model.setSolverParam(key, value)
            except (mf.ParameterError, ValueError, TypeError) as exc:
                raise InputError(f"MOSEK Fusion rejected parameter {key} = {value!r} "
                                 f"({_first_line(exc)})") from None
        if profile.verbose:
            model.setLogHandler(sys.stderr)

    def solve(self, model, profile, clock=None) -> Outcome:
        import mosek
        import mosek.fusion as mf

        start = time.perf_counter()
        self.set_parameters(model, profile, clock)
        try:
            model.solve()
        except (mf.OptimizeError, mf.FusionRuntimeException, mf.FusionException,
                mosek.Error) as exc:
            return Outcome(status="error", seconds=time.perf_counter() - start,
                           message=f"MOSEK: {_first_line(exc)}")
        seconds = time.perf_counter() - start
        response = model.getSolverIntInfo("optimizeResponse")
        iterations = model.getSolverIntInfo("intpntIter")
        problem = model.getProblemStatus()
        primal = model.getPrimalSolutionStatus()
        message = f"problem {_name(problem)}, primal solution {_name(primal)}"
        if response != int(mosek.rescode.ok):
            message += f", {_name(mosek.rescode(response))}"

        if primal == mf.SolutionStatus.Optimal:
            status = "optimal"
        elif problem == mf.ProblemStatus.PrimalInfeasible:
            status = "infeasible"
        elif response == int(mosek.rescode.trm_max_time):
            status = "time_limit"
        elif primal == mf.SolutionStatus.Feasible:
            status = "feasible"
        else:
            status = "error"
        has_solution = primal in (mf.SolutionStatus.Optimal, mf.SolutionStatus.Feasible)
        objective = bound = None
        if has_solution:
            # Let variable levels be read from a feasible (not only optimal) solution.
            model.acceptedSolutionStatus(mf.AccSolutionStatus.Feasible)
            objective = float(model.primalObjValue())
            if status == "optimal":
                bound = float(model.dualObjValue())
        return Outcome(status=status, objective=objective, bound=bound,
                       iterations=int(iterations), seconds=seconds, message=message,
                       has_solution=has_solution)
