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
SCIP's incumbent value and dual bound for the progress line. The solve itself runs on one of a
few threads kept for SCIP (:data:`SCIP_THREADS`), whatever thread asks for it.
"""

from __future__ import annotations

import time

from s3vm.solvers.backends.pyomo.contrib import PyomoContribBackend
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import TIME_LIMIT
from s3vm.solvers.runtime.stdio import quiet_stderr
from s3vm.solvers.runtime.threads import ReusedThreads

REPORT_SECONDS = 0.5  # the event handler reads SCIP's bounds at most this often

#: The threads every SCIP solve runs on. SCIP's expression interpreter numbers each thread that
#: solves a nonlinear model, for good, and has room for 64 (see
#: :mod:`s3vm.solvers.runtime.threads`): a solve in each new thread of the caller (the Python
#: API's worker) crashed the process at the 64th. Sixteen solves at once is more than any run
#: here makes, and leaves room for the callers' own threads.
SCIP_THREADS = ReusedThreads("s3vm-scip", 16)


def _scip_direct_class():
    """ScipDirect without output capture, with interrupts (built lazily: pyomo.contrib.solver
    and pyscipopt are optional)."""
    import datetime

    import pyscipopt
    from pyomo.common.timing import HierarchicalTimer
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect
    from pyomo.core.staleflag import StaleFlagManager
    from pyomo.environ import value as pyo_value

    class _Watch(pyscipopt.Eventhdlr):
        """Stops SCIP when the solve's clock is stopped; reports bounds to it."""

        EVENTS = (pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND | pyscipopt.SCIP_EVENTTYPE.NODESOLVED
                  | pyscipopt.SCIP_EVENTTYPE.LPSOLVED)

        def __init__(self, clock, sign, hook=None, var_map=None):
            self.clock, self.sign, self.last = clock, sign, 0.0
            # The model's incumbent_hook (see HighsSession) and the Pyomo-to-SCIP variables.
            self.hook, self.var_map = hook, var_map
            self.discrete = True  # read from the model at eventinit

        def eventinit(self):
            model = self.model
            self.discrete = model.getNBinVars() + model.getNIntVars() > 0
            self.model.catchEvent(self.EVENTS, self)

        def eventexit(self):
            if self.model is not None:  # None once freed (QuietScipDirect.free)
                self.model.dropEvent(self.EVENTS, self)

        def eventexec(self, event):
            model = self.model
            if self.clock.stopped:
                model.interruptSolve()
                return
            now = time.perf_counter()
            found = event.getType() == pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND
            if found and self.hook is not None:
                self._load_incumbent(model)
            if now - self.last < REPORT_SECONDS and not found:
                return
            self.last = now
            if not self.discrete:
                # An LP (bb-mip's node bounds, a labeling's LP): its bounds and node count are
                # not the solve's; reported, they overwrote the branch and bound's incumbent
                # value and nodes on the clock, and a result stopped at its limit lost them.
                return
            inf = model.infinity()
            primal, dual = model.getPrimalbound(), model.getDualbound()
            self.clock.report(phase="solving (SCIP)", nodes=int(model.getNNodes()),
                              objective=self.sign * primal if abs(primal) < inf else None,
                              lower_bound=self.sign * dual if abs(dual) < inf else None)

        def _load_incumbent(self, model):
            """SCIP's best solution into the Pyomo variables, then the model's hook."""
            solution = model.getBestSol()
            for var, scip_var in self.var_map.items():
                if not var.fixed:
                    var.set_value(model.getSolVal(solution, scip_var), skip_validation=True)
            self.hook()

    class QuietScipDirect(ScipDirect):
        _watch = None

        def free(self):
            """Free the SCIP model once its results are read (the backend's solve has loaded
            them). Left to the interpreter's exit, a model was freed after pyscipopt's objects
            were torn down, and a serial run of the suite crashed (a segfault after its
            summary): the model and its event handler hold each other (``watch.model``, and
            SCIP's own reference to the handler, which the garbage collector cannot see), so
            nothing freed them before."""
            scip_model, watch = self._solver_model, self._watch
            self._clear()
            self._watch = None
            if scip_model is not None:
                scip_model.freeTransform()  # the handler's eventexit runs now, with its model
            if watch is not None:
                watch.model = None  # the cycle broken: the model is freed with its last name

        def _add_constraint(self, con):
            # A row of a matrix constraint (Pyomo's MatrixConstraint, flagged by
            # _linear_canonical_form) goes to SCIP from its sparse row: Pyomo's expression
            # walker, which builds and visits one node per term, took 4.4 s for the 531 dense
            # rows of l2-miqp on 270 points (docs/benchmarks/scale.md).
            terms = self._matrix_terms(con) if getattr(con, "_linear_canonical_form", False) \
                else None
            if terms is None:
                return super()._add_constraint(con)
            comp, index = con.parent_component(), con._index
            start, stop = comp._A_indptr[index], comp._A_indptr[index + 1]
            columns, coefs = comp._A_indices[start:stop], comp._A_data[start:stop]
            row = dict(zip(map(terms.__getitem__, columns), map(float, coefs)))
            if len(row) < len(columns):  # a column given twice in the row: add its entries
                row = {}
                for j, c in zip(columns, coefs):
                    row[terms[j]] = row.get(terms[j], 0.0) + float(c)
            lower, upper = con.lower, con.upper
            cons = pyscipopt.scip.ExprCons(
                pyscipopt.scip.Expr(row or None),
                lhs=None if lower is None else float(pyo_value(lower)),
                rhs=None if upper is None else float(pyo_value(upper)))
            self._pyomo_con_to_solver_con_map[con] = self._solver_model.addCons(cons)
            return None

        def _matrix_terms(self, con):
            """The SCIP terms of a matrix constraint's columns (cached per component for this
            translation), or None when a column is fixed or a coefficient is not a number (the
            general path then takes the row)."""
            comp = con.parent_component()
            key = id(comp)
            cache = self.__dict__.setdefault("_matrix_cache", {})
            if key not in cache:
                terms = None
                if not any(v.fixed for v in comp._x) and all(
                        isinstance(c, (int, float)) for c in comp._A_data):
                    solver_vars = self._pyomo_var_to_solver_var_map
                    terms = [pyscipopt.scip.Term(solver_vars[v] if v in solver_vars
                                                 else self._add_var(v)) for v in comp._x]
                cache[key] = (comp, terms)  # the component kept: ids stay unique
            return cache[key][1]

        def solve(self, model, clock=None, **kwds):
            """Pyomo's solve, watched by the solve's ``clock`` (None: not watched)."""
            start_timestamp = datetime.datetime.now(datetime.timezone.utc)
            config = self.config(value=kwds, preserve_implicit=True)
            self._matrix_cache = {}  # a new model: new components
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
                    why = (str(exc).strip() or type(exc).__name__).splitlines()[0]
                    raise InputError(f"SCIP rejected option {key} = {option!r} ({why})") from None
            timer.start("optimize")
            if clock is None:
                SCIP_THREADS.call(scip_model.optimizeNogil, scip_model.interruptSolve)
            else:
                sign = 1.0 if scip_model.getObjectiveSense() == "minimize" else -1.0
                hook = getattr(model, "incumbent_hook", None)
                watch = self._watch = _Watch(clock, sign, hook if callable(hook) else None,
                                             self._pyomo_var_to_solver_var_map)
                scip_model.includeEventhdlr(watch, "s3vm-watch",
                                            "stops SCIP when the solve is stopped")
                interrupt = scip_model.interruptSolve
                with clock.cancellable(interrupt):
                    SCIP_THREADS.call(scip_model.optimizeNogil, interrupt)
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

    def _options(self, profile, clock=None) -> dict:
        options = super()._options(profile, clock)
        # tee: SCIP's own log on fd 1 (stderr under --verbose), never through a pipe.
        options["tee"] = bool(profile.verbose)
        return options

    def counts(self, results):
        # extra_info is a ConfigDict: a missing entry is an "uninitialized" object, not None.
        nodes = getattr(results.extra_info, "NNodes", None)
        return None, nodes if isinstance(nodes, int) else None

    def _call(self, model, options: dict, clock):
        return self._solver.solve(model, clock=clock, **options)

    def solve(self, model, profile, clock=None):
        try:
            outcome = super().solve(model, profile, clock)
        finally:
            self._solver.free()
        if clock is not None and clock.stop_reason == TIME_LIMIT and \
                outcome.message == "interrupted":
            # Stopped by the solve's clock at its limit: a time limit, with SCIP's incumbent.
            outcome.status = "time_limit"
            outcome.message = "time limit reached"
        return outcome

