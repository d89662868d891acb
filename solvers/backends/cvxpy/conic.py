"""Shared code of the backends that solve a ``cvxpy.Problem`` (the SDP formulations).

Each solver's module names its CVXPY solver and how the profile's options are spelled for it.

Stopping. A solver call gets the time the solve's clock has left (the ``clock`` of
:meth:`CvxpyBackend.solve`), as the solver's own time-limit option. Two solvers need more than
that to stop on time and on a signal:

- SCS catches SIGINT itself while it runs (it replaces Python's handler) and returns its status
  "interrupted", which CVXPY reports as a failed solve: :class:`InterruptibleScs` turns that
  status back into :class:`~s3vm.solvers.runtime.supervisor.Interrupted`.
- SDPA has no time limit and holds the GIL for the whole solve, so no Python code (no signal
  handler, no clock) runs until it returns: :func:`solve_sdpa_in_process` runs it in a forked
  child process, killed when the solve's clock is stopped (its time limit, a signal).
"""

from __future__ import annotations

import math
import signal
import time
import warnings
from typing import ClassVar, Optional

from s3vm.solvers.backends.base import Backend, Outcome
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import INTERRUPTED, time_left
from s3vm.solvers.runtime.processes import ChildCallStopped, call_in_child, native_threads
from s3vm.solvers.runtime.supervisor import Interrupted


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


def hush_inaccurate_warning() -> None:
    """Keep CVXPY's "Solution may be inaccurate" warning out of the solves made here.

    The status carries it: CVXPY's OPTIMAL_INACCURATE is status ``feasible`` and the message
    ``optimal_inaccurate``, and the formulation decides what the solution is worth (an SDP whose
    certified bound meets its objective is optimal however inexact the solver was); a warning
    on top would contradict a result that says ``optimal``. The filter matches only warnings
    attributed to this module, so a user's own ``problem.solve`` still warns. Installed at every
    solve: a filter set once at import would not outlive a caller's ``catch_warnings`` block.
    """
    warnings.filterwarnings("ignore", message="Solution may be inaccurate",
                            category=UserWarning, module=__name__.replace(".", r"\."))


def _hit_time_limit(limit: Optional[float], seconds: float, stats) -> bool:
    """Whether a solve ended by its time limit (by the solver's clock or ours)."""
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
    #: The solver's option for its thread count, set by :func:`native_threads` (fork safety).
    threads_option: ClassVar[Optional[str]] = None

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

    def solver_options(self, profile, limit: Optional[float] = None) -> dict:
        """The profile's options, plus the call's time ``limit`` (seconds, None for none) in
        this solver's vocabulary."""
        options = dict(profile.options)
        if self.threads_option is not None:
            options.setdefault(self.threads_option, native_threads())
        if limit is not None and self.time_limit_option is not None:
            options.setdefault(self.time_limit_option, float(limit))
        return options

    def cvxpy_solver(self, clock=None):
        """What ``problem.solve(solver=...)`` gets: the CVXPY name, or a custom solver (one
        that watches ``clock``)."""
        return self.cvxpy_name

    def solve(self, problem, profile, clock=None) -> Outcome:
        import cvxpy as cp

        start = time.perf_counter()
        limit = time_left(clock, profile.time_limit)
        options = self.solver_options(profile, limit)
        hush_inaccurate_warning()
        try:
            problem.solve(solver=self.cvxpy_solver(clock), verbose=bool(profile.verbose),
                          **options)
        except cp.error.SolverError as exc:
            status = "time_limit" if clock is not None and clock.stopped \
                and not clock.interrupted else "error"
            return Outcome(status=status, seconds=time.perf_counter() - start,
                           message=f"{self.name}: {exc}".splitlines()[0])
        except (ValueError, TypeError) as exc:
            if profile.options:
                # A solver refusing an option of the profile (SCS: "max_iters must be
                # positive") is the profile's fault, not ours.
                raise InputError(f"{self.name} rejected the profile's options "
                                 f"{sorted(profile.options)}: "
                                 f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                                 ) from None
            raise
        seconds = time.perf_counter() - start
        status = map_cvxpy_status(problem.status)
        if status == "feasible" and _hit_time_limit(limit, seconds, problem.solver_stats):
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


# -- SCS: its own SIGINT handler -------------------------------------------------------------
SCS_SIGINT = -5  # SCS's status value after it caught SIGINT


def interruptible_scs(clock=None):
    """A CVXPY solver that is SCS, except that a solve SCS stopped on SIGINT raises
    :class:`~s3vm.solvers.runtime.supervisor.Interrupted` (and stops the solve's ``clock``)."""
    from cvxpy.reductions.solvers.conic_solvers.scs_conif import SCS

    class InterruptibleScs(SCS):
        def name(self):
            return "S3VM_SCS"

        def solve_via_data(self, data, warm_start, verbose, solver_opts, solver_cache=None):
            results = super().solve_via_data(data, warm_start, verbose, solver_opts,
                                             solver_cache)
            if results.get("info", {}).get("status_val") == SCS_SIGINT:
                if clock is not None:
                    clock.stop(INTERRUPTED, signal.SIGINT)
                raise Interrupted(signal.SIGINT)
            return results

    return InterruptibleScs()


# -- SDPA: in a child process ----------------------------------------------------------------
def _sdpa_solve(*args):
    import sdpap

    return sdpap.solve(*args)


def solve_sdpa_in_process(clock, *args):
    """``sdpap.solve(*args)`` in a forked child process (:func:`call_in_child`): killed when the
    solve's ``clock`` is stopped (the time limit, a signal), so that SDPA, which holds the GIL
    and has no time limit, can neither outrun the limit nor make the process deaf to
    signals."""
    return call_in_child(_sdpa_solve, *args, clock=clock)


def sdpa_in_process(clock=None):
    """A CVXPY solver that is SDPA run by :func:`solve_sdpa_in_process` under ``clock``."""
    from cvxpy.error import SolverError
    from cvxpy.reductions.solvers.conic_solvers import sdpa_conif

    class ProcessSdpa(sdpa_conif.SDPA):
        def name(self):
            return "S3VM_SDPA"

        def solve_via_data(self, data, warm_start, verbose, solver_opts, solver_cache=None):
            import cvxpy.settings as s
            import sdpap

            data[s.DIMS] = sdpa_conif.dims_to_solver_dict(data[s.DIMS])
            A, b, c, dims = data[s.A], data[s.B], data[s.C], data[s.DIMS]
            K = sdpap.SymCone(f=c.shape[0])
            J = sdpap.SymCone(f=dims["f"], l=dims["l"], s=tuple(dims["s"]))
            if "print" not in solver_opts:
                solver_opts["print"] = "display" if verbose else "no"
            try:
                x, y, sdpapinfo, timeinfo, sdpainfo = solve_sdpa_in_process(
                    clock, A, -b, c, K, J, solver_opts)
            except ChildCallStopped as exc:
                raise SolverError(f"SDPA: {exc}") from None
            solution = {s.STATUS: self.STATUS_MAP[sdpapinfo["phasevalue"]]}
            if solution[s.STATUS] in s.SOLUTION_PRESENT:
                x, y = x.toarray(), y.toarray()
                solution[s.VALUE] = sdpapinfo["primalObj"]
                solution[s.PRIMAL] = x
                solution[s.EQ_DUAL] = y[:dims["f"]]
                solution[s.INEQ_DUAL] = y[dims["f"]:]
            return solution

    return ProcessSdpa()
