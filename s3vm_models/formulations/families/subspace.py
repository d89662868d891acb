"""The family of the subspace SDPs (``sdp-subspace``, ``sdp-lowrank``): the label matrix
restricted to Gamma = V M V' with V from constrained spectral transduction (De Bie and
Cristianini 2006, section 7.2; docs/formulations.md#sdp-subspace), solved by ``psd-barrier`` by
default with the conic model as its fallback and reference.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import ClassVar, Optional

import numpy as np

from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.families.conic import ROUNDING, ConicFormulation
from s3vm.models.conic import ConicModel, problem2_penalties, round_scores
from s3vm.models.subspace import (
    SPECTRAL_OPTIONS,
    balance_row,
    check_dim_fits,
    subspace_basis,
    subspace_readers,
    subspace_scores,
)
from s3vm.models.subspace_oracle import KernelColumns, make_oracle, svm_value
from s3vm.models.svm_dual import svm_dual_value, svm_dual_value_factor
from s3vm.solvers.engines.psd_barrier import PSDProblem
from s3vm.solvers.registry import get_backend, unavailable_reason
from s3vm.solvers.runtime.clock import Clock

EXACT_COLUMNS_MIN_N = 3000   # beyond this, the rbf kernel is read by columns computed on demand


class SubspaceFamily(ConicFormulation):
    """What ``sdp-subspace`` and ``sdp-lowrank`` share: the options of the spectral step
    (``dim``, ``spectral_rule``, ``graph``, ``threshold_quantile``), their checks, labels read
    from M and V (``read["M"]``, ``read["V"]``) without an n x n matrix, and the default solver
    ``psd-barrier`` (:mod:`s3vm.solvers.engines.psd_barrier` on :mod:`s3vm.models.subspace_oracle`):
    a barrier Newton method on the d(d+1)/2 entries of M with one SVM dual per evaluation, and a
    certificate. The CVXPY models (``--solver scs``, ``clarabel``, ...) and the MOSEK Fusion
    models stay, as the reference and for export."""

    is_relaxation: ClassVar[bool] = False
    preferred_solvers: ClassVar[tuple] = ("psd-barrier",)

    options: ClassVar[tuple] = (*SPECTRAL_OPTIONS, ROUNDING)

    def check(self, instance: Instance, settings: Settings) -> None:
        super().check(instance, settings)
        check_dim_fits(self.dim, instance)

    def infeasible_advice(self, instance: Instance, settings: Settings) -> str:
        advice = super().infeasible_advice(instance, settings)
        return (f"{advice}; the spectral subspace of dimension d = {self.dim} may miss what the "
                f"full relaxation reaches: raise --dim (at most "
                f"{instance.label_map().size}) or use sdp")
    def backend(self, profile):
        """With no solver named (a profile without one), the family's own ``psd-barrier``."""

        return get_backend(profile.solver or self.default_solver(), self.problem_class)

    def basis(self, instance: Instance, clock: Optional[Clock] = None) -> np.ndarray:
        """V from the spectral step with this formulation's options; a stop of ``clock`` (the
        solve's, None: none) aborts it."""
        # ARPACK's iteration (seconds at 1,000 points) checks no clock.
        with (clock.abortable() if clock is not None else nullcontext()):
            return subspace_basis(instance, self.dim, rule=self.spectral_rule,
                                  graph=self.graph, threshold_quantile=self.threshold_quantile)

    def prepare(self, instance: Instance, settings: Settings,
                V: Optional[np.ndarray] = None) -> tuple[Optional[np.ndarray], np.ndarray]:
        """What every builder of the family starts with: the checks, then (C, V) with C the
        penalties of Problem 2 (None: hard margin) and V defaulting to :meth:`basis`."""
        self.check(instance, settings)
        C = problem2_penalties(instance, settings)
        V = self.basis(instance) if V is None else np.asarray(V, dtype=float)
        return C, V

    def balance_equalities(self, V: np.ndarray, instance: Instance, settings: Settings) -> list:
        """[(B, 2P - u)] for the count balance s'M v+ = <B, M>, B = (v+ s' + s v+')/2; else []."""
        if settings.balance != "count":
            return []
        s, vp = balance_row(V, instance)
        B = (np.outer(vp, s) + np.outer(s, vp)) / 2.0
        return [(B, float(2 * settings.positive_count(instance) - instance.u))]

    def kernel_columns(self, instance: Instance, settings: Settings) -> KernelColumns:
        """How the oracle reads the kernel (the exact K here; ``sdp-lowrank`` its factor)."""
        if settings.kernel == "rbf" and instance.n > EXACT_COLUMNS_MIN_N:
            # exact columns on demand: no n x n matrix at this size
            return KernelColumns(X=instance.X, sigma=settings.sigma)
        return KernelColumns(K=self.kernel(instance, settings))

    def supervised_value(self, instance: Instance, settings: Settings, y: np.ndarray
                         ) -> tuple[float, Optional[np.ndarray], Optional[str]]:
        """D(y) of the rounded labels on the exact kernel, by the same projected Newton as the
        solver (:func:`s3vm.models.subspace_oracle.svm_value`): exact, and through kernel columns at
        scale (a generic SOCP solver took 45 s of a 47 s solve at 1000 points)."""
        C = problem2_penalties(instance, settings)
        if settings.kernel == "linear":
            # K = X X' is singular beyond p points: the factor form (a conic solver) is safe there
            return (*svm_dual_value_factor(np.asarray(instance.X, dtype=float), y, C), None)
        columns = self.kernel_columns(instance, settings)
        value, alpha = svm_value(columns, y, C)
        if np.isnan(value) and columns.K is not None:
            # An rbf kernel too close to singular for the projected Newton (sdp_art100: 100
            # points, 2 features, sigma 1): the conic SVM dual on the same exact kernel scores
            # the labels (Clarabel; its value certified from above), as sdp-lowrank falls back.

            value, alpha = svm_dual_value(columns.K, y, C)
            return value, alpha, ("D(y) by the conic SVM dual (Clarabel): the projected "
                                  "Newton did not converge on this kernel")
        return value, alpha, None

    def build_oracle(self, instance: Instance, settings: Settings,
                     V: Optional[np.ndarray] = None) -> ConicModel:
        """The problem of the ``psd-barrier`` solver: min_M g(M)
        (:mod:`s3vm.models.subspace_oracle`) over M PSD, diag(V M V') <= 1 and the balance."""

        C, V = self.prepare(instance, settings, V)
        oracle = make_oracle(V, C, self.kernel_columns(instance, settings),
                             initial=instance.labeled, seed=getattr(self, "seed", 0))
        problem = PSDProblem(oracle, V, self.balance_equalities(V, instance, settings))

        def m_value():
            return problem.result.M

        return ConicModel(problem, read=subspace_readers(V, m_value, instance),
                          info={"dim": V.shape[1]})

    def build(self, instance: Instance, settings: Settings, kind: str = "cvxpy") -> ConicModel:
        if kind == "psd-oracle":
            return self.build_oracle(instance, settings)
        return super().build(instance, settings, kind)

    def run_model(self, instance: Instance, settings: Settings, backend, profile, clock):
        """Solve; with ``psd-barrier`` also report its certificate: the primal value (g at the
        returned M), the dual value (of a feasible point of the low-rank dual: a lower bound on
        the subspace optimum) and their gap (``info["subspace_certificate"]``)."""
        by_default = backend.model_kind == "psd-oracle" and getattr(profile, "by_default", False)
        unsuited = self.barrier_unsuited(instance, settings) if by_default else None
        if unsuited:
            answer = self._solve_conic_instead(instance, settings, backend, profile, clock,
                                               unsuited, before=True)
            if answer is not None:
                return answer
        built, outcome, extra = super().run_model(instance, settings, backend, profile, clock)
        if by_default and outcome.status == "error" and clock.expired():
            # The limit came as psd-barrier failed, with no time left for the conic model: a
            # solve stopped by its limit (the labels at hand answer), not an error.
            reason = (outcome.message or "error").split("; use ")[0]
            outcome.status, outcome.has_solution = "time_limit", False
            outcome.message = f"psd-barrier failed ({reason}) as the time limit was reached"
        if by_default and outcome.status == "error" and not clock.stopped:
            # psd-barrier needs a nonsingular Q_FF for its exact SVM duals: a low-rank kernel
            # (linear, few features, many points) can defeat it. The user named no solver, so
            # the conic model of the same problem answers instead, and says so.
            reason = (outcome.message or "error").split("; use ")[0]  # its advice is taken
            answer = self._solve_conic_instead(instance, settings, backend, profile, clock,
                                               reason, before=False)
            if answer is not None:
                return answer
        result = getattr(built.model, "result", None)
        if backend.model_kind == "psd-oracle" and result is not None and result.M is not None:
            extra = {**extra, "subspace_certificate": {
                "primal": result.primal, "dual": result.dual, "gap": result.gap,
                "rel_gap": result.rel_gap, "newton_steps": result.iterations,
                "svm_solves": result.evaluations,
                **{k: result.info[k] for k in ("svm_kkt", "n_sv", "largest_working_set",
                                               "max_row_value", "min_eigenvalue",
                                               "equality_residuals") if k in result.info}}}
        elif backend.model_kind == "psd-oracle" and outcome.status == "infeasible":
            outcome.message = ("the subspace problem is infeasible: " + outcome.message
                               if outcome.message else "the subspace problem is infeasible")
        return built, outcome, extra

    def barrier_unsuited(self, instance: Instance, settings: Settings) -> Optional[str]:
        """Why the default ``psd-barrier`` should not be tried on this problem (None: try it)."""
        return None

    def _solve_conic_instead(self, instance, settings, backend, profile, clock, reason: str,
                             before: bool):
        """(built, outcome, extra) of the conic model in place of ``backend`` (psd-barrier),
        with ``info["solver_fallback"]`` saying why; None when no conic solver is installed."""
        fallback = self._conic_fallback()
        if fallback is None:
            return None
        if not before:
            clock.report(phase=f"psd-barrier failed; solving the conic model ({fallback.name})")
        # self, not super(): sdp-lowrank's conic model solves over its own working set
        built, outcome, extra = self.run_model(instance, settings, fallback, profile, clock)
        extra = {**extra, "solver_fallback": {"from": backend.name, "to": fallback.name,
                                              "reason": reason, "before": before}}
        return built, outcome, extra

    def _conic_fallback(self):
        """The backend of the conic model when the default ``psd-barrier`` fails: the first
        installed of SCS and Clarabel (None when neither is)."""

        for name in ("scs", "clarabel"):
            if unavailable_reason(name, self.problem_class) is None:
                return get_backend(name, self.problem_class)
        return None

    def determined_labels(self, instance: Instance, settings: Settings) -> Optional[np.ndarray]:
        """The one labeling the constraints allow when they fix every label, else None.

        The count P = 0 or P = u makes every unlabeled point -1 or +1, and groups tied to the
        labeled points fix the rest (no free representative): then there is nothing to relax,
        and the subspace, whose Gamma = V M V' need not reach that labeling's y y' (nor has
        an interior point there for psd-barrier), must not decide. An empty array means that
        the fixed labels contradict the count or a group.
        """
        u = instance.u
        count = settings.positive_count(instance) if settings.balance == "count" else None
        if count in (0, u):
            scores = np.full(u, 1.0 if count == u else -1.0)
        elif instance.label_map().size == 1:
            scores = np.zeros(u)
        else:
            return None
        labels, _ = round_scores(scores, instance, settings)
        y = instance.label.astype(int).copy()
        y[instance.unlabeled] = labels
        lm = instance.label_map()
        meets = all(len(set((y * lm.sign)[lm.rep == k])) <= 1 for k in range(lm.size))
        if (count is not None and int(np.sum(labels == 1)) != count) or not meets:
            return np.zeros(0, dtype=int)
        return labels

    def _solve_determined(self, instance, settings, labels, result) -> None:
        """The result of a labeling the constraints fix: its D(y), proven optimal."""
        if labels.size == 0 and instance.u:
            result.status = "infeasible"
            result.message = ("no labeling meets the balance count with the labels and groups "
                              "of the data: choose another --positives, or --balance none")
            return
        y = instance.label.astype(float)
        y[instance.unlabeled] = labels
        value, alpha, note = self.supervised_value(instance, settings, y)
        if value is None or not np.isfinite(value):
            result.status = "error"
            result.message = ("the constraints fix every label, and the supervised SVM at "
                              "those labels did not solve (D(y) is not finite)")
            return
        result.status = "optimal"
        result.labels, result.decision_values = labels, labels.astype(float)
        result.objective = result.lower_bound = value
        result.primal = {"alpha": alpha, "relaxation_value": None}
        result.iterations = 0
        result.message = ("the balance count and the groups fix every label: no SDP was "
                          "solved, the objective is D(y) of that labeling")
        if note:
            result.info["objective_note"] = note

    def _round_instead(self, instance, settings, result) -> None:
        """After the subspace problem turned out infeasible for a count that labelings meet:
        the labels of Gamma = V V' (M = I) rounded to the count, and the status ``feasible``
        with a message that the subspace, not the problem, is infeasible."""
        scores = subspace_scores(self.basis(instance), np.eye(self.dim), instance, "gamma")
        labels, scores = round_scores(scores, instance, settings)
        P = settings.positive_count(instance)
        if int(np.sum(labels == 1)) != P:
            return  # the groups keep the count out of the rounding's reach: said as it was
        y = instance.label.astype(float)
        y[instance.unlabeled] = labels
        value, alpha, note = self.supervised_value(instance, settings, y)
        if value is None or not np.isfinite(value):
            return
        result.status = "feasible"
        result.labels, result.decision_values, result.objective = labels, scores, value
        result.lower_bound = None
        result.primal = {"alpha": alpha, "relaxation_value": None}
        result.message = (
            f"the subspace of dimension d = {self.dim} holds no label matrix that meets the "
            f"balance count P = {P}, but the problem has labelings that do: the labels are the "
            f"spectral scores Gamma[U, i+] of Gamma = V V' (M = I) rounded to the count; "
            f"raise --dim (at most "
            f"{instance.label_map().size}), use sdp for the relaxation, or --balance none")
        if note:
            result.info["objective_note"] = note

    def run(self, instance, settings, backend, profile, clock, result):
        labels = self.determined_labels(instance, settings)
        if labels is not None:
            self._solve_determined(instance, settings, labels, result)
            return
        super().run(instance, settings, backend, profile, clock, result)
        # Not after the time limit, which the step has used; after a signal, which wants the best
        # labeling at hand, yes: the SDP's verdict is in, and the rounding is one D(y) (a signal
        # landing here left the answer "infeasible" without labels for a problem with labelings).
        if (result.status == "infeasible" and settings.balance == "count"
                and not settings.hard_margin and (clock.interrupted or not clock.stopped)):
            self._round_instead(instance, settings, result)
        fallback = result.info.get("solver_fallback")
        if fallback:
            result.solver = fallback["to"]
            verb = "passed over" if fallback["before"] else "failed"
            note = (f"psd-barrier {verb} ({fallback['reason']}); solved by the conic model with "
                    f"{fallback['to']}")
            result.message = note + (f"; {result.message}" if result.message else "")

    def labels_from(self, built: ConicModel, instance: Instance,
                    settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        if "M" not in built.read or "V" not in built.read:
            return super().labels_from(built, instance, settings)
        scores = subspace_scores(built.read["V"](), built.read["M"](), instance, self.rounding)
        return round_scores(scores, instance, settings)
