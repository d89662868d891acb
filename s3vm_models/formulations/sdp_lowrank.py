"""``sdp-lowrank``: the subspace SDP of Problem 2 with K = G G', and its low-rank dual.

Solved by default by ``psd-barrier`` (:mod:`s3vm.models.subspace_oracle`, reading the kernel through
G only); the CVXPY model below (``--solver scs``, ...) is the low-rank dual.

The project's reformulation, not in the papers: docs/formulations.md#low-rank-dual derives it.

With K = G G' (G n x r: the features for a linear kernel, a Nystroem factor for rbf),
a'(K o V M V')a = tr(M W'W) with W(a) = G' diag(a) V (r x d), linear in a. Swapping min over M
and max over a and dualising the inner max over {M PSD, v_i'M v_i <= 1} gives

    max_{a, lam}  2 1'a - 1'lam
    s.t.  0 <= a <= C  (hard margin: a >= 0),  lam >= 0,
          [[V' diag(lam) V, W(a)'], [W(a), I_r]]  PSD                  (one LMI of size d + r)

whose optimum is the optimum of ``sdp-subspace`` (same V, K = G G'). It is written as the CVXPY
minimum of the negative (``info["objective_sign"] = -1``), and M is the dual matrix of the LMI's
top-left block. The count balance s'M v+ = 2P - u (see :mod:`s3vm.formulations.sdp_subspace`) adds a
free multiplier eta: the top-left block becomes V' diag(lam) V + eta B with B = (v+ s' + s v+')/2
and the objective loses eta (2P - u).

At scale nothing n x n is formed: vec(W) = B_W a with B_W (r d x n) whose column i is
vec(g_i v_i') = v_i kron g_i, and vec(V' diag(lam) V) = B_V lam likewise
(:func:`lowrank_operators`).
The spectral step takes its sparse path beyond :data:`s3vm.models.spectral.DENSE_GRAPH_MAX_N`
points.

Two things make it fast with SCS (both leave the optimum unchanged): the LMI is scaled by the
congruence diag(I_d, beta I_r) with beta^2 near the optimum (:func:`dual_scale`), and beyond
:data:`WORKING_SET_MIN_N` points the solve generates columns and constraints over a working set
(:class:`LowRankSDP`): at the optimum most a_i and lam_i are 0.
"""

from __future__ import annotations

from typing import ClassVar, Optional

import numpy as np

from s3vm.core.options import SEED, Option
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.families.conic import ROUNDING
from s3vm.formulations.families.subspace import SubspaceFamily
from s3vm.models.conic import ConicModel, problem2_penalties
from s3vm.models.fusion.sdp_lowrank import build_lowrank
from s3vm.models.kernel_factor import DEFAULT_RANK, dual_scale, kernel_factor, kkt_violations
from s3vm.models.lowrank_dual import COMPONENTS, lowrank_dual_model
from s3vm.models.subspace import SPECTRAL_OPTIONS, balance_row, subspace_readers
from s3vm.models.subspace_oracle import (
    DENSE_ORACLE_MAX_N,
    KernelColumns,
    factor_rank_bound,
    svm_value,
)
from s3vm.models.svm_dual import svm_dual_value_factor
from s3vm.solvers.errors import InputError

WORKING_SET_MIN_N = 1000   # default: a working set beyond this many points
DEFAULT_WORKING_SET = 1000  # its first size (plus the labeled points)
WORKING_SET_TOL = 1e-3     # a KKT violation above this brings a point into the working set
WORKING_SET_MAX_ROUNDS = 50
EXACT_SCORE_MAX_N = 2000   # beyond this, labels are scored on exact rbf columns, not a dense K
class LowRankSDP(SubspaceFamily):
    """The subspace SDP through its low-rank dual: one LMI of size d + r, for large n.

    Parameters
    ----------
    dim : int
        d, the number of columns of V (1 <= d <= u + 1; default 4).
    spectral_rule, graph, threshold_quantile
        The spectral step, as :class:`s3vm.formulations.sdp_subspace.SubspaceSDP`.
    rank : int, optional
        rbf kernel: number of Nystroem landmarks r (default 100, capped at n; rank = n is the
        exact factor). rank > n is an error. The linear kernel uses its features (exact).
    rounding : {"gamma", "eigenvector"}
        As :class:`s3vm.formulations.sdp_subspace.SubspaceSDP`.
    seed : int
        Seed of the landmark sample and of the first working set.
    working_set : int, optional
        Solve with a working set (column and constraint generation) starting from this many
        points plus the labeled ones; 0 solves the whole model at once. Default: 1000 points when
        n > 1000, else the whole model. Only CVXPY backends take the working set.

    Notes
    -----
    Working set: the model on a subset S of the points (a_i = lam_i = 0 elsewhere) is solved; a
    point outside S whose margin g_i' W M v_i is below 1 or whose v_i'M v_i exceeds 1 (by more
    than ``WORKING_SET_TOL``) violates the full problem's optimality conditions and joins S (the
    worst first, at most max(500, |S|/2) per round). With no violator left the restricted
    solution, padded with zeros, is optimal for all points. At the optimum most a_i are 0 (the
    points beyond the margin) and few v_i'M v_i <= 1 are tight, so S stays small.
    """

    name: ClassVar[str] = "sdp-lowrank"
    components: ClassVar[dict] = {**COMPONENTS, "V": "the spectral subspace (n x dim)"}
    #: peak bytes per n^2 entry (linear, rbf), measured: a Nystroem factor, no n x n matrix
    dense_bytes: ClassVar[tuple] = (0, 0)
    summary: ClassVar[str] = "subspace SDP through its low-rank dual (one LMI of size d + r)"

    options: ClassVar[tuple] = (
        *SPECTRAL_OPTIONS,
        Option("rank", "int", None, "rbf kernel: Nystroem landmarks r (default 100, at most n)",
               minimum=1),
        ROUNDING,
        SEED,
        Option("working_set", "int", None, "solve over a working set of this many points "
               "(0: all at once; default: 1000 beyond 1000 points)", minimum=0),
    )

    #: peak bytes per n^2 entry of ``--graph dense``: the rbf affinity over all points, its
    #: squared distances and the dense eigensolver's copies (docs/changelog.md, peak memory)
    dense_graph_bytes: ClassVar[float] = 64

    def dense_bytes_per_entry(self, settings: Settings, backend=None) -> float:
        """No n x n matrix but the spectral step's dense affinity, when ``--graph dense`` asks
        for one (``auto`` takes it only up to 1,000 points)."""
        if self.graph == "dense":
            return self.dense_graph_bytes
        return super().dense_bytes_per_entry(settings, backend)

    def memory_advice(self, settings: Settings, backend=None) -> str:
        if self.graph == "dense":
            return "use --graph knn (a sparse nearest-neighbour graph) or fewer points"
        return super().memory_advice(settings, backend)

    def check(self, instance: Instance, settings: Settings) -> None:
        super().check(instance, settings)
        if self.rank is not None and self.rank > instance.n:
            raise InputError(f"rank larger than n: rank = {self.rank}, n = {instance.n}")

    def factor(self, instance: Instance, settings: Settings) -> tuple[np.ndarray, bool]:
        """:func:`kernel_factor` with this formulation's rank and seed."""
        return kernel_factor(instance, settings, self.rank, self.seed)

    def kernel_columns(self, instance: Instance, settings: Settings) -> KernelColumns:
        """The factor G (K = G G', :meth:`factor`); a dense G G' only for small n, where the
        oracle forms Q whole anyway."""
        G, _ = self.factor(instance, settings)
        if instance.n <= DENSE_ORACLE_MAX_N:
            return KernelColumns(K=G @ G.T)
        return KernelColumns(G=G)

    def _balance(self, V: np.ndarray, instance: Instance, settings: Settings) -> Optional[tuple]:
        if settings.balance != "count":
            return None
        s, vp = balance_row(V, instance)
        return s, vp, 2 * settings.positive_count(instance) - instance.u

    def build_cvxpy(self, instance: Instance, settings: Settings, V: Optional[np.ndarray] = None,
                    G: Optional[np.ndarray] = None, beta: Optional[float] = None) -> ConicModel:
        """The CVXPY model on all points (:func:`lowrank_dual_model`). ``V``, ``G`` and ``beta``
        default to the spectral subspace, :meth:`factor` and :func:`dual_scale`."""
        C, V = self.prepare(instance, settings, V)
        if G is None:
            G, _ = self.factor(instance, settings)
        if beta is None:
            beta = dual_scale(G, instance, C)
        built = lowrank_dual_model(G, V, C, self._balance(V, instance, settings), beta)
        self._add_readers(built, V, instance)
        return built

    def build_fusion(self, instance: Instance, settings: Settings) -> ConicModel:
        return build_lowrank(self, instance, settings)

    @staticmethod
    def _add_readers(built: ConicModel, V: np.ndarray, instance: Instance) -> None:
        built.read.update(subspace_readers(V, built.read["M"], instance))

    def uses_working_set(self, instance: Instance) -> bool:
        if self.working_set is None:
            return instance.n > WORKING_SET_MIN_N
        return 0 < self.working_set < instance.n

    def _solve_working_set(self, instance, settings, backend, profile, clock):
        """Column and constraint generation (see the class notes): (built, outcome, info)."""
        C = problem2_penalties(instance, settings)
        n = instance.n
        V = self.basis(instance, clock)
        G, _ = self.factor(instance, settings)
        balance = self._balance(V, instance, settings)
        size = DEFAULT_WORKING_SET if self.working_set is None else self.working_set
        rng = np.random.default_rng(self.seed)
        S = np.union1d(instance.labeled, rng.choice(n, size=min(size, n), replace=False))
        beta = dual_scale(G, instance, C)
        iterations, rounds = 0, 0
        while True:
            rounds += 1
            built = lowrank_dual_model(G[S], V[S], None if C is None else C[S], balance, beta)
            outcome = backend.solve(built.model, profile, clock)
            iterations += outcome.iterations or 0
            info = {"working_set_rounds": rounds, "working_set_size": int(S.size)}
            if outcome.status not in ("optimal", "feasible") or not outcome.has_solution:
                break                      # (feasible: an inaccurate solve, still usable)
            a = np.zeros(n)
            a[S] = built.read["a"]()
            violation = kkt_violations(G, V, a, built.read["M"]())
            violation[S] = 0.0
            bad = np.flatnonzero(violation > WORKING_SET_TOL)
            if bad.size == 0:
                break
            if rounds >= WORKING_SET_MAX_ROUNDS:
                outcome.status = "feasible"
                outcome.message = f"working set not closed after {rounds} rounds"
                break
            bad = bad[np.argsort(-violation[bad], kind="stable")][:max(500, S.size // 2)]
            S = np.union1d(S, bad)
            if outcome.objective is not None and -outcome.objective > 1.0:
                beta = float(np.sqrt(-outcome.objective))
        outcome.iterations = iterations
        read_a = built.read["a"]
        S_final = S

        def full_a():
            out = np.zeros(n)
            out[S_final] = read_a()
            return out

        built.read["a"] = full_a
        self._add_readers(built, V, instance)
        return built, outcome, info

    def supervised_value(self, instance: Instance, settings: Settings,
                         y: np.ndarray) -> tuple[float, Optional[np.ndarray], Optional[str]]:
        """(D(y), a, note): on the true kernel when the factor is exact or n is small, else on
        G G' (then ``note`` says so)."""
        C = problem2_penalties(instance, settings)
        if settings.kernel == "rbf":
            # On the exact rbf kernel, positive definite, where the projected Newton of
            # svm_value is exact and fast: a dense K up to EXACT_SCORE_MAX_N points, columns
            # computed on demand beyond (no n x n matrix). On a low-rank G G' with a hard margin
            # it may not converge (Q_FF singular), and a Nystroem kernel is not the problem's.
            columns = (KernelColumns(K=self.kernel(instance, settings))
                       if instance.n <= EXACT_SCORE_MAX_N
                       else KernelColumns(X=instance.X, sigma=settings.sigma))
            value, alpha = svm_value(columns, y, C)
            if np.isnan(value):
                # An exact kernel too close to singular for the projected Newton (rbf, sigma 3,
                # 10 features, 10^4 points): the factor's conic SVM dual still scores the labels.
                G, _ = self.factor(instance, settings)
                value, alpha = svm_dual_value_factor(G, y, C)
                return value, alpha, ("D(y) on the Nystroem kernel G G': the exact kernel's SVM "
                                      "dual did not converge")
            return value, alpha, None
        G, _ = self.factor(instance, settings)      # linear: the features, exact
        return (*svm_dual_value_factor(G, y, C), None)

    def barrier_unsuited(self, instance: Instance, settings: Settings) -> Optional[str]:
        """Beyond the dense oracle's size, a factor of r columns gives K o V M V' a rank of at
        most r d(d+1)/2: when that is under n / 2, the SVM duals of ``psd-barrier`` have more
        free points than Q has rank (measured: a linear kernel with 10 features at 10^4 and 10^5
        points, and rbf rank 100, failed or ran out of time), and the conic model is the one to
        solve."""
        n, d = instance.n, self.dim
        if n <= DENSE_ORACLE_MAX_N:
            return None
        r = (instance.X.shape[1] if settings.kernel == "linear"
             else min(DEFAULT_RANK, n) if self.rank is None else int(self.rank))
        bound = factor_rank_bound(min(r, n), d)
        if bound >= n / 2:
            return None
        return (f"K o V M V' has rank at most {bound} (a factor of {min(r, n)} columns, d = {d}) "
                f"against n = {n} points")

    def run_model(self, instance: Instance, settings: Settings, backend, profile, clock):
        """Build and solve, with a working set where it applies (CVXPY backends only). An
        unbounded dual means that no M meets diag(V M V') <= 1 (and the balance) with a finite
        t: the subspace problem is infeasible."""
        if backend.model_kind == "cvxpy" and self.uses_working_set(instance):
            built, outcome, extra = self._solve_working_set(instance, settings, backend, profile,
                                                            clock)
        else:
            built, outcome, extra = super().run_model(instance, settings, backend, profile, clock)
        if str(getattr(built.model, "status", "")).startswith("unbounded"):
            outcome.status, outcome.has_solution = "infeasible", False
            outcome.message = "the subspace problem is infeasible (its low-rank dual is unbounded)"
        return built, outcome, extra
