"""The subspace SDP as a convex function of M, for the ``psd-barrier`` solver
(docs/formulations.md#fast-solver).

The subspace SDP (De Bie and Cristianini 2006, section 7.2; :mod:`s3vm.formulations.sdp_subspace`)
is

    min_M  g(M),   g(M) = max_{0 <= a <= C} 2 1'a - a'(K o V M V')a
    s.t.   M PSD (d x d),   v_i'M v_i <= 1,   [s'M v+ = 2P - u]

(hard margin: a >= 0 only): the LMI in t of the conic model is exactly this SVM dual. g is convex
(a maximum of functions affine in M). With Q(M) = K o VMV' and a(M) the SVM solution, its
gradient is -W(a) with W(a) = V'diag(a) K diag(a) V = (a o V)'U, U = K (a o V) (Danskin), and on
a fixed active set F = {0 < a_i < C_i} its Hessian is 2 J_F' Q_FF^-1 J_F in svec coordinates,
J_F[i, :] = svec(sym(v_i u_i')). For fixed a, 2 1'a - <W(a), M> is an affine minorant of g: the
engine's certificate is the low-rank dual of docs/formulations.md with W(a)'W(a) replaced by
W(a) for a general K.

Two oracles: :class:`DenseOracle` (Q formed whole; small n) and :class:`WorkingSetOracle`
(the SVM dual on a working set of points, the margins of all points checked through d kernel
column products over the support, violators added until none is left: then a, zero elsewhere,
is optimal for the whole SVM). The working set reads the kernel only by columns
(:class:`KernelColumns`): a dense K, exact rbf columns computed on demand from X (no n x n
matrix), or a factor K = G G' (Nystroem, linear features). Its memory is n x |W| floats.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import scipy.linalg as sla

from s3vm.solvers.engines.box_qp import box_qp
from s3vm.solvers.engines.psd_barrier import Evaluation, OracleError, svec_outer_rows
from s3vm.solvers.runtime.memory import available_memory

DENSE_ORACLE_MAX_N = 600          # the dense oracle up to this many points (with a dense K)
INITIAL_WORKING_SET = 500  # random points of the first working set (plus the labeled ones)
ADD_MAX = 2000             # at most this many violators join per round
SLACK = 300                # non-support points kept in the working set after a step
QP_TOL = 1e-11
#: Share of the memory the process can still use that the working set's columns and its dual
#: may take (the buffer is copied once as it grows, and Q is k x k on top).
MEMORY_SHARE = 0.25


class KernelColumns:
    """Columns K[:, idx] of a kernel matrix, in one of three forms.

    Parameters
    ----------
    K : ndarray (n, n), optional
        A dense kernel matrix.
    G : ndarray (n, r), optional
        A factor, K = G G'.
    X, sigma : ndarray (n, p), float, optional
        rbf data: exact columns exp(-|x_i - x_j|^2 / (2 sigma^2)) computed on demand.
    """

    def __init__(self, K=None, G=None, X=None, sigma=None):
        self.K = None if K is None else np.asarray(K, dtype=float)
        self.G = None if G is None else np.ascontiguousarray(G, dtype=float)
        if X is not None:
            self.X = np.ascontiguousarray(X, dtype=float)
            self.sq = (self.X * self.X).sum(axis=1)
            self.gamma = 1.0 / (2.0 * float(sigma) ** 2)
        else:
            self.X = None
        if self.K is None and self.G is None and self.X is None:
            raise ValueError("give K, G, or X and sigma")
        self.n = (self.K if self.K is not None else self.G if self.G is not None
                  else self.X).shape[0]

    def cols(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        if self.K is not None:
            return self.K[:, idx]
        if self.G is not None:
            return self.G @ self.G[idx].T
        D = self.X @ self.X[idx].T          # -|x_i - x_j|^2 / (2 sigma^2), in place
        D *= 2.0
        D -= self.sq[:, None]
        D -= self.sq[idx][None, :]
        np.minimum(D, 0.0, out=D)
        D *= self.gamma
        return np.exp(D, out=D)


def factor_rank_bound(columns: int, d: int) -> int:
    """The largest rank K o V M V' can have for K = G G' with ``columns`` columns and V with d:
    its rows are Khatri-Rao products of G's rows with the svec of v_i v_i', r d(d+1)/2 of them."""
    return int(columns) * d * (d + 1) // 2


def _check(qp) -> None:
    if not qp.converged:
        raise OracleError(
            f"the SVM dual did not converge (KKT residual {qp.kkt:.1e} after {qp.iterations} "
            "projected Newton steps): its kernel o V M V' is singular; use a soft margin, or a "
            "conic solver (--solver clarabel)")


def _hessian(V: np.ndarray, U: np.ndarray, QFF_factor) -> np.ndarray:
    """2 J' Q_FF^-1 J with J[i, :] = svec(sym(v_i u_i')) on the free rows (V, U given there)."""
    m = V.shape[1] * (V.shape[1] + 1) // 2
    if V.shape[0] == 0:
        return np.zeros((m, m))
    J = svec_outer_rows(V, U)
    X = QFF_factor(J)
    H = 2.0 * J.T @ X
    return (H + H.T) / 2.0


def _solver_for(Q: np.ndarray, F: np.ndarray, chol, chol_set):
    """A function B -> Q_FF^-1 B, reusing the SVM solve's factor when it is of the same set."""
    if chol is not None and chol_set is not None and np.array_equal(chol_set, F):
        return lambda B: sla.cho_solve(chol, B, check_finite=False)
    QFF = Q[np.ix_(F, F)]
    try:
        factor = sla.cho_factor(QFF, lower=True, check_finite=False)
        return lambda B: sla.cho_solve(factor, B, check_finite=False)
    except np.linalg.LinAlgError:   # singular Q_FF (a degenerate SVM): least squares
        return lambda B: np.linalg.lstsq(QFF, B, rcond=None)[0]


class DenseOracle:
    """g(M) with the whole Q = K o VMV' (n x n) formed at each evaluation (small n).

    Parameters
    ----------
    K : ndarray (n, n)
    V : ndarray (n, d)
    C : ndarray (n,), optional
        Upper bounds of a (None: hard margin).
    """

    def __init__(self, K: np.ndarray, V: np.ndarray, C: Optional[np.ndarray]):
        self.K = np.asarray(K, dtype=float)
        self.V = np.asarray(V, dtype=float)
        self.C = C
        self.a = None
        self.evaluations = 0

    def evaluate(self, M: np.ndarray, hessian: bool = True) -> Evaluation:
        Q = self.K * ((self.V @ M) @ self.V.T)
        qp = box_qp(Q, self.C, self.a, tol=QP_TOL)
        self.evaluations += 1
        if qp.unbounded:
            return Evaluation(np.inf)
        _check(qp)
        a = qp.a
        AV = a[:, None] * self.V
        U = self.K @ AV
        W = AV.T @ U
        H = None
        if hessian:
            ub = np.inf if self.C is None else self.C
            F = np.flatnonzero((a > 0) & (a < ub))
            H = _hessian(self.V[F], U[F], _solver_for(Q, F, qp.chol, qp.chol_set))
        return Evaluation(qp.value, -(W + W.T) / 2.0, H, state=a,
                          info={"svm_kkt": qp.kkt, "n_sv": int(np.sum(a > 0))})

    def accept(self, evaluation: Evaluation) -> None:
        self.a = evaluation.state


class WorkingSetOracle:
    """g(M) through kernel columns only (the SVM dual on a working set; see the module notes).

    The columns K[:, W] are kept in one buffer (n x capacity, in insertion order). After each
    accepted step the set is trimmed to the support plus the points of smallest margin.

    Parameters
    ----------
    kernel : KernelColumns
    V : ndarray (n, d)
    C : ndarray (n,), optional
    initial : ndarray of int, optional
        The first working set (default: ``INITIAL_WORKING_SET`` random points).
    seed : int
        Seed of the random first working set.
    """

    def __init__(self, kernel: KernelColumns, V: np.ndarray, C: Optional[np.ndarray],
                 initial: Optional[np.ndarray] = None, seed: int = 0):
        self.kernel = kernel
        self.V = np.asarray(V, dtype=float)
        n = self.n = self.V.shape[0]
        self.C = C
        self.ub = np.full(n, np.inf) if C is None else np.asarray(C, dtype=float)
        rng = np.random.default_rng(seed)
        first = rng.choice(n, size=min(INITIAL_WORKING_SET, n), replace=False)
        if initial is not None:
            initial = np.asarray(initial, dtype=int)
            if initial.size > INITIAL_WORKING_SET:
                # 10% labeled of 10^5 points would start the set at 10^4 columns (8 GB): the
                # labeled points the solution needs join as violators like any other.
                initial = rng.choice(initial, size=INITIAL_WORKING_SET, replace=False)
            first = np.union1d(first, initial)
        # The working set can only grow past the kernel's rank when K o V M V' is singular
        # (a linear kernel with few features): cap it by memory, and fail where a conic solver
        # can take over, rather than fill the machine.
        budget = available_memory()
        budget = MEMORY_SHARE * (budget if budget is not None else 8e9)
        self.max_columns = max(first.size, int(min(budget / (16.0 * n), np.sqrt(budget / 8.0))))
        self.buf = np.empty((n, min(n, self.max_columns, max(2 * first.size, 1024))), order="F")
        self.ids = np.empty(0, dtype=int)          # point ids in buffer order
        self.member = np.zeros(n, dtype=bool)
        # K o V M V' = (G * V) rows' Khatri-Rao products: rank <= r d(d+1)/2 for a factor G with
        # r columns. More free points than that make Q_FF singular, and g's Hessian (from Q_FF^-1)
        # undefined: tell at the first evaluation instead of growing the set toward n.
        self.rank_bound = (None if kernel.G is None
                           else factor_rank_bound(kernel.G.shape[1], self.V.shape[1]))
        self._grow(np.unique(first))
        self.a = np.zeros(n)
        self.evaluations = 0
        self.rounds = 0
        self.largest = self.ids.size

    def _grow(self, new: np.ndarray) -> None:
        new = np.asarray(new, dtype=int)
        new = new[~self.member[new]]
        if new.size == 0:
            return
        k, m = self.ids.size, new.size
        if k + m > self.max_columns:
            raise OracleError(
                f"the SVM dual's working set outgrew memory ({k + m} of {self.n} points would "
                f"need {16.0 * self.n * (k + m) / 1e9:.1f} GB of kernel columns): K o V M V' is "
                "likely singular (a linear kernel with few features); use a conic solver "
                "(--solver scs) or an rbf kernel")
        if k + m > self.buf.shape[1]:
            grown = np.empty((self.n, min(self.n, self.max_columns,
                                          max(k + m, int(1.5 * self.buf.shape[1])))),
                             order="F")
            grown[:, :k] = self.buf[:, :k]
            self.buf = grown
        self.buf[:, k:k + m] = self.kernel.cols(new)
        self.ids = np.concatenate([self.ids, new])
        self.member[new] = True

    def _keep(self, positions: np.ndarray) -> None:
        positions = np.sort(positions)
        self.buf[:, :positions.size] = self.buf[:, positions]
        self.member[:] = False
        self.ids = self.ids[positions]
        self.member[self.ids] = True

    def evaluate(self, M: np.ndarray, hessian: bool = True) -> Evaluation:
        a_full = self.a.copy()
        V = self.V
        VM = V @ M
        self.evaluations += 1
        while True:
            self.rounds += 1
            ids = self.ids
            k = ids.size
            Q = self.buf[ids, :k] * (VM[ids] @ V[ids].T)
            Q = (Q + Q.T) / 2.0
            qp = box_qp(Q, None if self.C is None else self.C[ids], a_full[ids], tol=QP_TOL)
            if qp.unbounded:
                return Evaluation(np.inf)
            if hessian and self.rank_bound is not None:
                free = int(np.count_nonzero((qp.a > 0) & (qp.a < self.ub[ids])))
                if free > self.rank_bound:
                    raise OracleError(
                        f"K o V M V' has rank at most {self.rank_bound} (a factor of "
                        f"{self.kernel.G.shape[1]} columns, d = {V.shape[1]}) but the SVM dual has "
                        f"{free} free points: its Hessian is singular; use a conic solver "
                        "(--solver scs) or a higher-rank kernel")
            _check(qp)
            a_full = np.zeros(self.n)
            a_full[ids] = qp.a
            spos = np.flatnonzero(qp.a > 0)               # the support, buffer positions
            AV = qp.a[spos, None] * V[ids[spos]]
            U = self.buf[:, spos] @ AV                      # K[:, S] (a o V)_S
            margin = np.einsum("ij,ij->i", VM, U) - 1.0     # (Q a)_i - 1 for every point
            below = -QP_TOL * max(1.0, float(qp.a.max(initial=0.0)))
            violators = np.flatnonzero(~self.member & (margin < below))
            if violators.size == 0:
                break
            self._grow(violators[np.argsort(margin[violators])][:ADD_MAX])
            self.largest = max(self.largest, self.ids.size)
        kkt = float(np.abs(a_full - np.clip(a_full - margin, 0.0, self.ub)).max())
        value = float(2.0 * a_full.sum() - a_full @ (margin + 1.0))
        W = AV.T @ U[ids[spos]]
        H = None
        if hessian:
            fpos = np.flatnonzero((qp.a > 0) & (qp.a < self.ub[ids]))
            free = ids[fpos]
            H = _hessian(V[free], U[free], _solver_for(Q, fpos, qp.chol, qp.chol_set))
        return Evaluation(value, -(W + W.T) / 2.0, H, state=(a_full, margin),
                          info={"svm_kkt": kkt, "n_sv": int(spos.size),
                                "working_set": int(ids.size),
                                "largest_working_set": int(self.largest)})

    def accept(self, evaluation: Evaluation) -> None:
        self.a, margin = evaluation.state
        ids = self.ids
        support = self.a[ids] > 0
        ns = int(support.sum())
        keep = max(2 * ns, ns + SLACK)
        if ids.size > keep + SLACK:
            rest = np.flatnonzero(~support)
            rest = rest[np.argsort(margin[ids[rest]])][:keep - ns]
            self._keep(np.concatenate([np.flatnonzero(support), rest]))


def make_oracle(V: np.ndarray, C: Optional[np.ndarray], kernel: KernelColumns,
                initial: Optional[np.ndarray] = None, seed: int = 0):
    """The dense oracle for a dense K with n <= :data:`DENSE_ORACLE_MAX_N`, else the working set."""
    if kernel.K is not None and kernel.n <= DENSE_ORACLE_MAX_N:
        return DenseOracle(kernel.K, V, C)
    return WorkingSetOracle(kernel, V, C, initial=initial, seed=seed)


def svm_value(kernel: KernelColumns, y: np.ndarray, C: Optional[np.ndarray]
              ) -> tuple[float, Optional[np.ndarray]]:
    """(D(y), its a) for a full labeling y: g at V = y (one column), M = 1, since
    K o y y' is the SVM's Q. Exact (projected Newton) and, beyond :data:`DENSE_ORACLE_MAX_N` points,
    by the working set through kernel columns only. (inf, None) when a hard margin cannot
    separate y; (nan, None) when its SVM dual does not converge."""
    y = np.asarray(y, dtype=float)
    oracle = make_oracle(y[:, None], C, kernel)
    try:
        ev = oracle.evaluate(np.eye(1), hessian=False)
    except OracleError:
        # a Q too close to singular for the exact projected Newton: no value it can vouch for
        return float("nan"), None
    if not np.isfinite(ev.value):
        return float("inf"), None
    a = ev.state[0] if isinstance(ev.state, tuple) else ev.state
    return float(ev.value), np.asarray(a, dtype=float)
