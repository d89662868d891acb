"""``sdp-subspace``: the subspace approximation of the SDP relaxation.

De Bie and Cristianini (2006), section 7.2; (2003), section 3; docs/formulations.md#sdp-subspace.

The label matrix is restricted to Gamma = V M V' with V (n x d) from constrained spectral
transduction (:mod:`s3vm.spectral`: the 2003 paper's rule by default, the chapter's (7.6) with
``spectral_rule="book"``) and M (d x d) PSD:

    min  t
    s.t. M PSD,   diag(V M V') <= 1,   mu >= 0,  nu >= 0,
         [[K o (V M V'), 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD

(hard margin: mu = 0 and no C term). The diagonal is an inequality: equality is in general
infeasible in a subspace, and in the full space raising a diagonal entry never hurts.

It is an approximation, not a relaxation: Gamma need not be 1 on the diagonal, its value is not a
bound on min_y D(y), and no lower bound is reported. Restricting the SDP can only raise its value,
so ``sdp`` <= ``sdp-subspace``. With d = u + 1, the dimension of range(L) less the constant
column, V spans every vector that is constant on each labeled class, the feasible sets of Gamma
coincide and the two optima are equal (De Bie and Cristianini 2006, section 7.2.2, say d = u; the
count is u + 1 because the label column of L survives the constant-column rule).

Labels (De Bie and Cristianini 2003, section 4.2): by the constant-column rule every row of V of
a labeled positive point is the same vector v+ and every labeled negative row is -v+, so all
columns of Gamma of labeled points agree up to sign. The relaxed unlabeled labels are the column
of a positive labeled point on the unlabeled rows, gamma_u = Gamma[U, i+] = V_U M v+,
thresholded. The count balance is the linear sum_{j in U} Gamma[j, i+] = 2P - u, the ``sdp``'s
e'g = 2P - u.

Groups (the ``group`` column, De Bie and Cristianini 2006, sections 7.3.1 and 7.3.2) enter
through L: every column of V is s_i times one value on the rows of a group, so Gamma = V M V'
meets them for any M, and d is at most 1 + the number of free groups (u + 1 without groups).
"""

from __future__ import annotations

from typing import ClassVar, Optional

import numpy as np

from .conic_formulation import (ROUNDING, ConicFormulation, ConicModel, problem2_penalties,
                                round_scores, svm_lmi)
from .data import Instance
from .settings import Settings
from .svm_dual import svm_dual_value_factor
from .subspace import (DEFAULT_DIM, SPECTRAL_OPTIONS, balance_row, check_dim_fits,
                       subspace_basis, subspace_readers, subspace_scores)
from .subspace_oracle import KernelColumns, make_oracle, svm_value

__all__ = ["DEFAULT_DIM", "SubspaceFamily", "SubspaceSDP", "subspace_basis"]

EXACT_COLUMNS_MIN_N = 3000   # beyond this, the rbf kernel is read by columns computed on demand


class SubspaceFamily(ConicFormulation):
    """What ``sdp-subspace`` and ``sdp-lowrank`` share: the options of the spectral step
    (``dim``, ``spectral_rule``, ``graph``, ``threshold_quantile``), their checks, labels read
    from M and V (``read["M"]``, ``read["V"]``) without an n x n matrix, and the default solver
    ``psd-barrier`` (:mod:`s3vm.solvers.psd_barrier` on :mod:`s3vm.subspace_oracle`): a barrier
    Newton method on the d(d+1)/2 entries of M with one SVM dual per evaluation, and a
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
        from .solvers.registry import get_backend

        return get_backend(profile.solver or self.default_solver(), self.problem_class)

    def basis(self, instance: Instance) -> np.ndarray:
        """V from the spectral step with this formulation's options."""
        return subspace_basis(instance, self.dim, rule=self.spectral_rule, graph=self.graph,
                              threshold_quantile=self.threshold_quantile)

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
        solver (:func:`s3vm.subspace_oracle.svm_value`): exact, and through kernel columns at
        scale (a generic SOCP solver took 45 s of a 47 s solve at 1000 points)."""
        C = problem2_penalties(instance, settings)
        if settings.kernel == "linear":
            # K = X X' is singular beyond p points: the factor form (a conic solver) is safe there
            return (*svm_dual_value_factor(np.asarray(instance.X, dtype=float), y, C), None)
        return (*svm_value(self.kernel_columns(instance, settings), y, C), None)

    def build_oracle(self, instance: Instance, settings: Settings,
                     V: Optional[np.ndarray] = None) -> ConicModel:
        """The problem of the ``psd-barrier`` solver: min_M g(M) (:mod:`s3vm.subspace_oracle`)
        over M PSD, diag(V M V') <= 1 and the balance."""
        from .solvers.psd_barrier import PSDProblem

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
        from .solvers.registry import get_backend, unavailable_reason

        for name in ("scs", "clarabel"):
            if unavailable_reason(name, self.problem_class) is None:
                return get_backend(name, self.problem_class)
        return None

    def run(self, instance, settings, backend, profile, clock, result):
        super().run(instance, settings, backend, profile, clock, result)
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


class SubspaceSDP(SubspaceFamily):
    """The subspace SDP of De Bie and Cristianini (2006), section 7.2 (an approximation: no
    lower bound).

    Parameters
    ----------
    dim : int
        d, the number of columns of V (1 <= d <= u + 1; default 4).
    spectral_rule : {"nips", "book"}
        The spectral problem of V: De Bie and Cristianini (2003), section 4.1 (default), or
        their (2006) (7.6).
    graph : {"auto", "dense", "knn"}
        The spectral step's affinity (auto: dense up to 1000 points, a 10-NN graph beyond).
    threshold_quantile : float, optional
        Clip each column of V at this quantile of its absolute values (2003, footnote 4).
    rounding : {"gamma", "eigenvector"}
        Labels from Gamma[U, i+] (De Bie and Cristianini 2003, section 4.2) or from the
        dominant eigenvector of V M V'.
    """

    name: ClassVar[str] = "sdp-subspace"
    #: peak bytes per n^2 entry (linear, rbf), measured: the n x n blocks of the subspace model and its CVXPY copies
    dense_bytes: ClassVar[tuple] = (1400, 1400)
    #: and per n^2 d^2 under a CVXPY backend (``--solver scs``, ...): V M V' as an affine
    #: expression has an n x n block of coefficients for each of M's entries (at d = 40: 596 MiB
    #: at n = 60, 2.1 GiB at n = 150, a slope of 54 bytes; docs/benchmarks.md, peak memory)
    cvxpy_bytes_per_dim2: ClassVar[float] = 64

    def dense_bytes_per_entry(self, settings: Settings, backend=None) -> float:
        """The n x n blocks, and under a CVXPY backend the n^2 d^2 coefficients of V M V'."""
        base = super().dense_bytes_per_entry(settings, backend)
        if getattr(backend, "model_kind", None) == "cvxpy":
            return base + self.cvxpy_bytes_per_dim2 * self.dim ** 2
        return base

    def memory_advice(self, settings: Settings, backend=None) -> str:
        if getattr(backend, "model_kind", None) == "cvxpy":
            return (f"leave out --solver (psd-barrier forms no CVXPY model), take a smaller "
                    f"--dim than {self.dim}, or use sdp-lowrank")
        return super().memory_advice(settings, backend)
    summary: ClassVar[str] = "subspace approximation of the SDP relaxation (Gamma = V M V')"

    def build_cvxpy(self, instance: Instance, settings: Settings,
                    V: Optional[np.ndarray] = None) -> ConicModel:
        """The CVXPY model; ``V`` defaults to :func:`subspace_basis` (tests may pass their own)."""
        import cvxpy as cp

        C, V = self.prepare(instance, settings, V)
        K = self.kernel(instance, settings)
        n, u, d = instance.n, instance.u, self.dim
        M = cp.Variable((d, d), PSD=True, name="M")
        t, lmi = svm_lmi(K, V @ M @ V.T, C)
        constraints = [lmi, cp.sum(cp.multiply(V @ M, V), axis=1) <= 1]
        if settings.balance == "count":
            s, vp = balance_row(V, instance)
            constraints.append(s @ M @ vp == 2 * settings.positive_count(instance) - u)
        problem = cp.Problem(cp.Minimize(t), constraints)
        return ConicModel(problem, read=subspace_readers(
            V, lambda: np.asarray(M.value, dtype=float), instance),
            info={"lmi_sizes": [n + 1, d], "dim": d})

    def build_fusion(self, instance: Instance, settings: Settings) -> ConicModel:
        from .fusion.sdp_subspace import build_subspace

        return build_subspace(self, instance, settings)
