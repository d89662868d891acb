"""SCIP through pyscipopt and Pyomo's direct interface (LP, MIP and MIQP).

Pyomo's ``ScipDirect.solve`` captures SCIP's log through a pipe that a Python thread drains,
while ``Model.optimize`` holds the GIL: once SCIP has written a pipe's worth (64 KiB, a long or
badly scaled solve), SCIP blocks on the pipe, the thread cannot run, and the process hangs for
good, deaf to its time limit and to Ctrl-C. :class:`ScipBackend` solves through the same Pyomo
translation but without any capture: SCIP's log goes straight to file descriptor 1 (which the
command line points at stderr with ``--verbose``, at the null device otherwise) or is switched
off, and ``optimizeNogil`` releases the GIL, so the supervising thread keeps the time limit and
answers signals. SCIP's own Ctrl-C handler is off (``misc/catchctrlc``): signals reach Python,
and a stop request reaches SCIP through ``interruptSolve``, from an event handler inside the solve
(the safe place) and from the cancel hook of the solve's clock. The event handler also reports
SCIP's incumbent value and dual bound for the progress line.
"""

from __future__ import annotations

import time

from s3vm.solvers.backends.pyomo.contrib import PyomoContribBackend
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import TIME_LIMIT, current
from s3vm.solvers.runtime.stdio import quiet_stderr

REPORT_SECONDS = 0.5  # the event handler reads SCIP's bounds at most this often


def _scip_direct_class():
    """ScipDirect without output capture, with interrupts (built lazily: pyomo.contrib.solver
    and pyscipopt are optional)."""
    import datetime

    import pyscipopt
    from pyomo.common.timing import HierarchicalTimer
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect
    from pyomo.core.staleflag import StaleFlagManager

    class _Watch(pyscipopt.Eventhdlr):
        """Stops SCIP when the solve's clock is stopped; reports bounds to it."""

        EVENTS = (pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND | pyscipopt.SCIP_EVENTTYPE.NODESOLVED
                  | pyscipopt.SCIP_EVENTTYPE.LPSOLVED)

        def __init__(self, clock, sign):
            self.clock, self.sign, self.last = clock, sign, 0.0

        def eventinit(self):
            self.model.catchEvent(self.EVENTS, self)

        def eventexit(self):
            self.model.dropEvent(self.EVENTS, self)

        def eventexec(self, event):
            model = self.model
            if self.clock.stopped:
                model.interruptSolve()
                return
            now = time.perf_counter()
            if now - self.last < REPORT_SECONDS and \
                    event.getType() != pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND:
                return
            self.last = now
            inf = model.infinity()
            primal, dual = model.getPrimalbound(), model.getDualbound()
            self.clock.report(phase="solving (SCIP)", nodes=int(model.getNNodes()),
                              objective=self.sign * primal if abs(primal) < inf else None,
                              lower_bound=self.sign * dual if abs(dual) < inf else None)

    class QuietScipDirect(ScipDirect):
        def solve(self, model, **kwds):
            start_timestamp = datetime.datetime.now(datetime.timezone.utc)
            config = self.config(value=kwds, preserve_implicit=True)
            StaleFlagManager.mark_all_as_stale()
            if config.timer is None:
                config.timer = HierarchicalTimer()
            timer = config.timer
            scip_model, solution_loader, has_obj = self._create_solver_model(model, config)
            scip_model.hideOutput(quiet=not config.tee)
            scip_model.setParam("misc/catchctrlc", False)
            if config.threads is not None:
                scip_model.setParam("lp/threads", config.threads)
            if config.time_limit is not None:
                scip_model.setParam("limits/time", config.time_limit)
            if config.rel_gap is not None:
                scip_model.setParam("limits/gap", config.rel_gap)
            if config.abs_gap is not None:
                scip_model.setParam("limits/absgap", config.abs_gap)
            if config.warmstart_discrete_vars:
                self._mipstart()
            for key, option in config.solver_options.items():
                try:
                    # SCIP prints a refused value's call trace on fd 2 (four lines): the
                    # message below says it in one.
                    with quiet_stderr(not config.tee):
                        scip_model.setParam(key, option)
                except (KeyError, LookupError, TypeError, ValueError) as exc:
                    # SCIP refuses an unknown parameter or a value of the wrong type: the
                    # profile's fault (exit 2), as HiGHS's refusal is, not a failed solve.
                    raise InputError(f"SCIP rejected option {key} = {option!r} "
                                     f"({(str(exc).strip() or type(exc).__name__).splitlines()[0]})") from None
            clock = current()
            timer.start("optimize")
            if clock is None:
                scip_model.optimizeNogil()
            else:
                sign = 1.0 if scip_model.getObjectiveSense() == "minimize" else -1.0
                scip_model.includeEventhdlr(_Watch(clock, sign), "s3vm-watch",
                                            "stops SCIP when the solve is stopped")
                with clock.cancellable(scip_model.interruptSolve):
                    scip_model.optimizeNogil()
            timer.stop("optimize")
            results = self._populate_results(scip_model, solution_loader, has_obj, config)
            results.solver_log = ""
            end_timestamp = datetime.datetime.now(datetime.timezone.utc)
            results.timing_info.start_timestamp = start_timestamp
            results.timing_info.wall_time = (end_timestamp - start_timestamp).total_seconds()
            results.timing_info.timer = timer
            return results

    return QuietScipDirect


class ScipBackend(PyomoContribBackend):
    name = "scip"
    extra = "scip"
    provides_duals = False  # Pyomo's SCIP interface does not return duals
    solver_class_path = "pyomo.contrib.solver.solvers.scip.scip_direct:ScipDirect"

    def __init__(self):
        self._solver = _scip_direct_class()()

    def _options(self, profile) -> dict:
        options = super()._options(profile)
        # tee: SCIP's own log on fd 1 (stderr under --verbose), never through a pipe.
        options["tee"] = bool(profile.verbose)
        return options

    def counts(self, results):
        # extra_info is a ConfigDict: a missing entry is an "uninitialized" object, not None.
        nodes = getattr(results.extra_info, "NNodes", None)
        return None, nodes if isinstance(nodes, int) else None

    def solve(self, model, profile):
        outcome = super().solve(model, profile)
        clock = current()
        if clock is not None and clock.stop_reason == TIME_LIMIT and \
                outcome.message == "interrupted":
            # Stopped by the solve's clock at its limit: a time limit, with SCIP's incumbent.
            outcome.status = "time_limit"
            outcome.message = "time limit reached"
        return outcome

