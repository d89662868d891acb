"""HiGHS through highspy: the embedded default for LP and MIP.

The Pyomo model is compiled to matrix form once (Pyomo's ``LinearStandardFormCompiler``) and
passed to highspy in two vectorised calls, which costs seconds at 100,000 rows where Pyomo's
persistent interfaces, adding variables and rows one at a time, cost tens of seconds
(docs/changelog.md). A :class:`HighsSession` keeps the highspy object between solves: before
each re-solve it sends only the objective coefficients whose mutable parameters changed and the
bounds of variables that were fixed, freed or re-bounded, so HiGHS starts from its last basis.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from contextlib import nullcontext
from typing import Optional

import numpy as np

from s3vm.solvers.backends.base import Backend, Outcome, Session
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import TIME_LIMIT, time_left

LARGE_LP_ROWS = 5000  # below this, simplex is fast whatever the start


class HighsBackend(Backend):
    name = "highs"
    extra = ""  # highspy is a core dependency

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        try:
            import highspy  # noqa: F401
        except ImportError as exc:
            return f"highspy is not installed ({exc})"
        return None

    def solve(self, model, profile, clock=None) -> Outcome:
        return HighsSession(self, model, profile, clock).resolve()

    def session(self, model, profile, clock=None) -> "HighsSession":
        return HighsSession(self, model, profile, clock)


def _objective(model):
    from pyomo.environ import Objective

    objectives = list(model.component_data_objects(Objective, active=True))
    if len(objectives) != 1:
        raise ValueError(f"expected one active objective, found {len(objectives)}")
    return objectives[0]


class HighsSession(Session):
    """One highspy model kept in step with one Pyomo model."""

    def __init__(self, backend, model, profile, clock=None):
        import highspy
        from pyomo.common.collections import ComponentMap
        from pyomo.core.expr.numvalue import is_constant
        from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler
        from pyomo.repn.standard_repn import generate_standard_repn

        super().__init__(backend, model, profile, clock)
        start = time.perf_counter()
        self.inf = highspy.kHighsInf
        objective = _objective(model)
        # Pyomo's compiler checks no clock (seconds for a large model): a stop aborts it.
        with (clock.abortable() if clock is not None else nullcontext()):
            info = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
        self.columns = info.columns
        self.offset = float(info.c_offset[0]) if len(info.c_offset) else 0.0
        n = len(self.columns)
        index = ComponentMap((v, j) for j, v in enumerate(self.columns))

        # Objective terms whose coefficient is an expression of mutable parameters: the only
        # coefficients a driver can change without rebuilding the model.
        repn = generate_standard_repn(objective.expr, compute_values=False, quadratic=False)
        terms = [(index[v], c) for v, c in zip(repn.linear_vars, repn.linear_coefs)
                 if not is_constant(c) and v in index]
        self.param_columns = np.array([j for j, _ in terms], dtype=np.int64)
        self.param_coefs = [c for _, c in terms]
        self.costs = np.asarray(info.c.toarray()).ravel() if n else np.zeros(0)
        # The part of each cost that no parameter can change.
        self.fixed_costs = self.costs.copy()
        np.subtract.at(self.fixed_costs, self.param_columns, self._param_values())
        self.lower, self.upper = self._bounds()
        self.was_fixed = np.zeros(n, dtype=bool)
        self.param_lb_columns = np.flatnonzero([not is_constant(v._lb) for v in self.columns])
        self.param_ub_columns = np.flatnonzero([not is_constant(v._ub) for v in self.columns])
        self.param_lb = [self.columns[j]._lb for j in self.param_lb_columns]
        self.param_ub = [self.columns[j]._ub for j in self.param_ub_columns]

        h = highspy.Highs()
        h.setOptionValue("output_flag", bool(profile.verbose))
        if profile.verbose:
            h.setOptionValue("log_to_console", True)
        if profile.mip_rel_gap is not None:
            h.setOptionValue("mip_rel_gap", float(profile.mip_rel_gap))
        # HiGHS sizes its thread scheduler, which is global to the process, at the first solve;
        # a later solve asking for another size fails. One thread unless the profile says
        # otherwise keeps every solve on the same size (and deterministic).
        h.setOptionValue("threads", 1 if profile.threads is None else int(profile.threads))
        for key, value in profile.options.items():
            try:
                accepted = h.setOptionValue(str(key), value) == highspy.HighsStatus.kOk
            except TypeError:  # a value of no type HiGHS has (a table): refused the same way
                accepted = False
            if not accepted:
                raise InputError(f"HiGHS rejected option {key} = {value!r}")
        empty_i, empty_f = np.array([], dtype=np.int32), np.array([], dtype=float)
        self.user_algorithm = any(k in profile.options for k in ("solver", "simplex_strategy"))
        self.solved_once = False
        h.addCols(n, self.costs, self.lower, self.upper, 0, empty_i, empty_i, empty_f)
        A, row_lower, row_upper, self.row_constraints = self._rows(info)
        if A.shape[0]:
            h.addRows(A.shape[0], row_lower, row_upper, A.nnz, A.indptr[:-1].astype(np.int32),
                      A.indices.astype(np.int32), A.data.astype(float))
        integer = np.flatnonzero([v.is_integer() for v in self.columns])
        self.is_mip = integer.size > 0
        if self.is_mip:
            h.changeColsIntegrality(integer.size, integer.astype(np.int32),
                                    np.full(integer.size, highspy.HighsVarType.kInteger))
        if self.offset:
            h.changeObjectiveOffset(self.offset)
        self.minimizing = objective.is_minimizing()
        if not self.minimizing:
            h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h
        self.cancel_requested = False
        if self.clock is not None:
            # Interrupt callbacks: a stop of the clock (a time limit, a signal) reaches the
            # solver between iterations, and a MIP reports its bounds to the progress line.
            # Not highspy's cancelSolve(): its flag is reset only by highspy's own threaded
            # solve, so after one cancel every later run() of the session stopped at once
            # (the decision values of a search stopped by a signal, say).
            h.cbSimplexInterrupt += self._interrupt
            h.cbIpmInterrupt += self._interrupt
            h.cbMipInterrupt += self._interrupt
            if self.is_mip:
                h.cbMipInterrupt += self._report_mip
        # A model that asks to see every incumbent (``incumbent_hook``, a callable without
        # arguments): HiGHS's improving solutions are loaded into the model's variables and the
        # hook is called, so that a solve stopped where HiGHS does not check its interrupt
        # (the root's cuts and heuristics, seconds on a larger MIP) still has its incumbent.
        self.incumbent_hook = getattr(model, "incumbent_hook", None)
        if self.is_mip and callable(self.incumbent_hook):
            h.cbMipImprovingSolution += self._improving_solution
        self.setup_seconds = time.perf_counter() - start

    def _cancel(self) -> None:
        self.cancel_requested = True

    def _interrupt(self, event) -> None:
        # Set both ways: HiGHS keeps the flag of an interrupted run in its callback input, so
        # without the reset every later run of the session is interrupted at its first check.
        event.interrupt(self.cancel_requested)

    def _report_mip(self, event) -> None:
        """Progress of a MIP solve: HiGHS's incumbent value and dual bound."""
        out = event.data_out
        primal, dual = float(out.mip_primal_bound), float(out.mip_dual_bound)
        sign = 1.0 if self.minimizing else -1.0
        self.clock.report(phase="solving the MIP (HiGHS)",
                          objective=sign * primal if math.isfinite(primal) else None,
                          nodes=int(out.mip_node_count))
        if math.isfinite(dual):
            self.clock.report(lower_bound=sign * dual)

    def _improving_solution(self, event) -> None:
        """An improving MIP solution: into the model's variables, then the model's hook."""
        values = np.asarray(event.data_out.mip_solution, dtype=float)
        if values.size != len(self.columns):
            return
        for var, x in zip(self.columns, values.tolist()):
            if not var.fixed:
                var.set_value(x, skip_validation=True)
        self.incumbent_hook()
        value = float(event.data_out.objective_function_value)
        if self.clock is not None and math.isfinite(value):
            # the incumbent's value with its labels, not the last progress report's
            self.clock.report(objective=value if self.minimizing else -value)

    def _rows(self, info):
        """Rows for HiGHS: the compiler splits a ranged constraint into a >= and a <= row;
        they are merged back into one ranged row (fewer rows, one dual per constraint)."""
        A = info.A.tocsr()
        m = A.shape[0]
        if m == 0:
            return A, np.zeros(0), np.zeros(0), []
        inf = self.inf
        sense = np.array([row.bound_type for row in info.rows])
        rhs = np.asarray(info.rhs, dtype=float)
        lower = np.where(sense <= 0, rhs, -inf)  # -1: >=, 0: ==, +1: <=
        upper = np.where(sense >= 0, rhs, inf)
        cons = [row.constraint for row in info.rows]
        same = np.fromiter((cons[i] is cons[i + 1] for i in range(m - 1)), dtype=bool,
                           count=m - 1)
        if same.any():
            first = np.flatnonzero(same)
            second = first + 1
            lower[first] = np.maximum(lower[first], lower[second])
            upper[first] = np.minimum(upper[first], upper[second])
            keep = np.ones(m, dtype=bool)
            keep[second] = False
            A, lower, upper = A[keep], lower[keep], upper[keep]
            cons = [c for c, k in zip(cons, keep) if k]
        return A, lower, upper, cons

    def _load_duals(self) -> None:
        """Row duals into the model's ``dual`` Suffix, when it has one (HiGHS's sign
        convention: the change of the minimised objective per unit increase of the bound)."""
        from pyomo.environ import Suffix

        suffix = getattr(self.model, "dual", None)
        if not isinstance(suffix, Suffix) or not suffix.import_enabled():
            return
        sign = 1.0 if self.minimizing else -1.0
        duals = self.h.getSolution().row_dual
        suffix.clear()
        for con, value in zip(self.row_constraints, duals):
            suffix[con] = sign * value

    def _bounds(self, columns=None):
        """(lower, upper) of the given columns (all by default); a fixed column is its value."""
        inf = self.inf
        cols = self.columns if columns is None else [self.columns[j] for j in columns]
        lower = np.array([-inf if v.fixed is False and v.lb is None else
                          (v.value if v.fixed else v.lb) for v in cols], dtype=float)
        upper = np.array([inf if v.fixed is False and v.ub is None else
                          (v.value if v.fixed else v.ub) for v in cols], dtype=float)
        return lower, upper

    def _columns_to_check(self) -> np.ndarray:
        """Columns fixed now or at the last solve: their bounds are re-read from Pyomo.

        Besides these, only bounds that are expressions of mutable parameters are followed
        (see :meth:`_sync`); a constant bound changed with setlb/setub is not seen: fix, unfix
        or a parameter is the way to change a bound between solves."""
        fixed = np.fromiter((v.fixed for v in self.columns), dtype=bool,
                            count=len(self.columns))
        candidates = np.flatnonzero(fixed | self.was_fixed)
        self.was_fixed = fixed
        return candidates

    def _param_values(self) -> np.ndarray:
        from pyomo.environ import value

        return np.fromiter((value(c) for c in self.param_coefs), dtype=float,
                           count=len(self.param_coefs))

    def _sync(self) -> None:
        """Send changed objective coefficients and bounds to HiGHS."""
        cost_changes = bound_changes = 0
        if self.param_coefs:
            costs = self.fixed_costs.copy()
            np.add.at(costs, self.param_columns, self._param_values())
            changed = np.flatnonzero(costs != self.costs)
            cost_changes = changed.size
            if changed.size:
                self.h.changeColsCost(changed.size, changed.astype(np.int32), costs[changed])
                self.costs = costs
        check = self._columns_to_check()
        lower, upper = self.lower.copy(), self.upper.copy()
        if self.param_lb_columns.size or self.param_ub_columns.size:
            # Parameter-valued bounds are read straight from the parameters: the Var.lb/ub
            # properties validate every value and cost several times more per column. (The
            # domain's own bound, e.g. 0 of NonNegativeReals, is on the other side here.)
            from pyomo.environ import value

            lower[self.param_lb_columns] = [value(b) for b in self.param_lb]
            upper[self.param_ub_columns] = [value(b) for b in self.param_ub]
        if check.size:
            lower[check], upper[check] = self._bounds(check)
        changed = np.flatnonzero((lower != self.lower) | (upper != self.upper))
        bound_changes = changed.size
        if changed.size:
            self.h.changeColsBounds(changed.size, changed.astype(np.int32), lower[changed],
                                    upper[changed])
            self.lower, self.upper = lower, upper
        return cost_changes, bound_changes

    def _choose_lp_algorithm(self, cost_changes: int, bound_changes: int) -> None:
        """Pick the LP algorithm for this solve unless the profile names one.

        A large LP solved cold with many rows, or re-solved after costs or bounds changed on
        many columns, goes to the interior point method with crossover (several times faster
        here than simplex from a distant basis, and crossover leaves a basis for the next
        solve); other solves go to simplex from the last basis (docs/changelog.md).
        """
        if self.user_algorithm or self.is_mip:
            return
        n_rows, n_cols = self.h.getNumRow(), len(self.columns)
        large_change = cost_changes + bound_changes > 0.02 * max(1, n_cols)
        cold = not self.solved_once
        if (n_rows >= LARGE_LP_ROWS and (cold or large_change)) or \
                (n_cols >= LARGE_LP_ROWS and self.solved_once and large_change):
            self.h.setOptionValue("solver", "ipm")
            self.h.setOptionValue("run_crossover", "on")
        else:
            # After cost changes the basis stays primal feasible (primal simplex); after bound
            # changes it stays dual feasible (dual simplex, also HiGHS's cold default).
            self.h.setOptionValue("solver", "simplex")
            primal = self.solved_once and cost_changes and not bound_changes
            self.h.setOptionValue("simplex_strategy", 4 if primal else 1)

    def _run(self) -> None:
        import highspy

        try:
            status = self.h.run()
        finally:
            if threading.current_thread() is not threading.main_thread():
                # As highspy does after its own threaded solve: release this thread's part of
                # HiGHS's scheduler, which would otherwise outlive the thread and abort the
                # process at exit ("terminate called without an active exception").
                highspy.Highs.resetThreadScheduler(False)
        if status == highspy.HighsStatus.kError and \
                self.h.getModelStatus() == highspy.HighsModelStatus.kNotset:
            # A profile asking for another number of threads than HiGHS's global scheduler was
            # started with: start it anew (no other solve runs in this process) and retry.
            highspy.Highs.resetGlobalScheduler(True)
            self.h.run()

    def resolve(self) -> Outcome:
        import highspy

        start = time.perf_counter()
        changes = self._sync()
        if not self.warm:
            self.h.clearSolver()  # forget the basis: a cold solve of the same model
            self.solved_once = False
        self._choose_lp_algorithm(*changes)
        self.solved_once = True
        if self.profile.verbose:
            sys.stderr.flush()
        # The limit of this call: what the solve's clock has left (a session re-solves many
        # times under one limit).
        limit = time_left(self.clock, self.profile.time_limit)
        # HiGHS holds its time limit against the total run time of this Highs object, summed
        # over every run() of the session, not against this call: the limit given is the
        # run time so far plus what this call may use (a bare limit would stop a session's
        # later LPs early, the more so the longer the session has run).
        self.h.setOptionValue("time_limit", math.inf if limit is None
                              else self.h.getRunTime() + float(limit))
        self.cancel_requested = False
        if self.clock is not None:
            with self.clock.cancellable(self._cancel):
                self._run()
        else:
            self._run()
        status = self.h.getModelStatus()
        info = self.h.getInfo()
        MS = highspy.HighsModelStatus
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        if status == MS.kOptimal:
            state = "optimal"
        elif status == MS.kTimeLimit or (status == MS.kInterrupt and self.clock is not None
                                         and self.clock.stop_reason == TIME_LIMIT):
            # (cancelled by the solve's clock at its limit: a time limit as well)
            state = "time_limit"
        elif status in (MS.kInfeasible, MS.kUnboundedOrInfeasible):
            state = "infeasible"
        elif has_solution:
            state = "feasible"
        else:
            state = "error"
        objective = bound = None
        if has_solution:
            values = self.h.getSolution().col_value
            for var, x in zip(self.columns, values):
                if not var.fixed:
                    var.set_value(x, skip_validation=True)
            objective = float(info.objective_function_value)
            if not self.is_mip and self.h.getSolution().dual_valid:
                self._load_duals()
        if self.is_mip:
            b = float(info.mip_dual_bound)
            bound = b if math.isfinite(b) else None
        elif state == "optimal":
            bound = objective
        # Simplex plus interior point iterations: after IPM the simplex count alone is 0.
        iterations = max(0, int(info.simplex_iteration_count)) + \
            max(0, int(info.ipm_iteration_count))
        nodes = int(info.mip_node_count) if self.is_mip and info.mip_node_count >= 0 else None
        # A cancel from the clock at its limit reads "Interrupted by user" in HiGHS.
        message = "time limit reached" if state == "time_limit" else \
            self.h.modelStatusToString(status)
        return Outcome(status=state, objective=objective, bound=bound, iterations=iterations,
                       nodes=nodes, seconds=time.perf_counter() - start,
                       message=message, has_solution=has_solution)
