"""The node relaxation of ``bb-sdp``: the Shor relaxation of S3VM-L2 in output space, as one list
of linear rows on a PSD matrix X (docs/formulations.md#bb-sdp).

Points are ordered labeled first, then unlabeled; X = [[1, x'], [x, V]] has order N = n + 1 (index
0 is the constant, point i sits at index i + 1); x stands for the outputs v, V for vv'. The
relaxation of Piccialli, Schwiddessen and Sudoso (2024) (their ``sdp_cut_and_tighten`` with
``use_small_relaxation``) at a node with box L <= v <= U is

    min <Cm, V>   s.t.  X PSD,  X_00 = 1                                  (one)
                        sum_{i in U} x_i = rhs                            (bal, mean balance)
                        x_i >= L_i  where L_i > 0,   -x_i >= -U_i  where U_i < 0    (xL, xU)
                        V_ii >= lmd_i where L_i < 0 < U_i                 (dL: |v_i| >= 1)
                        -V_ii >= -umd_i  for every i                       (dU: v_i^2 <= umd_i)
                        RLT rows on pairs (i, j) from the box             (cut)

with Cm = 1/2 K'^-1. The RLT (McCormick) rows are the products of the box's sides,

    type 1: (U_i - x_i)(U_j - x_j) >= 0:   X_ij - U_i x_j - U_j x_i + U_i U_j >= 0
    type 2: (x_i - L_i)(x_j - L_j) >= 0:   X_ij - L_i x_j - L_j x_i + L_i L_j >= 0
    type 3: (x_i - L_i)(U_j - x_j) >= 0:   L_i x_j + U_j x_i - L_i U_j - X_ij >= 0
    type 4: (U_i - x_i)(x_j - L_j) >= 0:   U_i x_j + L_j x_i - U_i L_j - X_ij >= 0

A :class:`RowList` holds rows as (kind, i, j, t) with their coefficients on X, the right-hand
side and the sense; from it come the standard form for SDPA/SCS (:func:`standard_form`), the
certified bound (:func:`certified_value`), a declarative CVXPY problem (:func:`cvxpy_problem`)
and the MOSEK Fusion twin (:mod:`s3vm.models.fusion.shor`).

**The certified bound.** For any multipliers y with y_k >= 0 on the inequality rows and any X
feasible, <C~, X> = b'y + <Z, X> + sum_{k ineq} y_k (<A_k, X> - b_k) >= b'y + <Z, X> with
Z = C~ - sum_k y_k A_k, and <Z, X> >= lambda_min(Z) tr(X). The rows X_00 = 1 and V_ii <= umd_i
hold for every feasible X, so tr(X) <= T = 1 + sum_i umd_i and

    b'y + T min(0, lambda_min(Z))

is a lower bound on the relaxation, whatever y the solver returned: the value of a dual feasible
point (the multipliers of X_00 = 1 and V_ii <= umd_i shifted by |lambda_min|). Piccialli et al.
multiply T by the sum of the negative eigenvalues (valid, weaker); a margin covers the
eigensolver's rounding. The solver's primal value is never reported.

**Facial reduction** (optional, for a valid X a = 0): then X = Q Xr Q' for a basis Q of a-perp,
every row becomes Q'A_kQ, and the certificate uses the generalised eigenvalue of (Z_r, Q'Q)
(since tr(X) = <Q'Q, Xr>).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import scipy.sparse as sp

#: The eigensolver's rounding, times |Z|_F: subtracted from the computed lambda_min.
EIG_SAFETY = 64 * np.finfo(float).eps
#: RLT types (see the module docstring).
RLT_TYPES = (1, 2, 3, 4)


@dataclass
class RowList:
    """Rows <A_k, X> >= b_k (or = b_k) on a symmetric X of order N.

    Each row has a ``kind`` and up to three integers (i, j, t) naming it (a point, a pair, a
    type); its terms are entries (p, q, coef) meaning coef * X_pq (X symmetric, so (p, q) and
    (q, p) are the same variable).
    """

    N: int
    kind: list = field(default_factory=list)
    ij: list = field(default_factory=list)       # (i, j, t) per row
    b: list = field(default_factory=list)
    eq: list = field(default_factory=list)
    _rows: list = field(default_factory=list)    # arrays of row indices, p, q, coef
    _p: list = field(default_factory=list)
    _q: list = field(default_factory=list)
    _c: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.b)

    def add(self, kind: str, p, q, coef, b, eq: bool, i=-1, j=-1, t=0) -> None:
        """Add m rows at once: p, q, coef of shape (m, T) (T terms a row; broadcast), b (m,);
        i, j, t name the rows."""
        b = np.atleast_1d(np.asarray(b, dtype=float))
        m = b.size
        if m == 0:
            return
        p, q, coef = (np.broadcast_to(np.asarray(x), np.broadcast_shapes(
            np.shape(p), np.shape(q), np.shape(coef))) for x in (p, q, coef))
        p = np.asarray(p).reshape(m, -1)
        q = np.asarray(q).reshape(m, -1)
        coef = np.asarray(coef, dtype=float).reshape(m, -1)
        start = len(self.b)
        rows = np.repeat(np.arange(start, start + m), p.shape[1])
        self._rows.append(rows)
        self._p.append(p.ravel().astype(np.int64))
        self._q.append(q.ravel().astype(np.int64))
        self._c.append(coef.ravel())
        i, j, t = (np.broadcast_to(np.asarray(x), (m,)) for x in (i, j, t))
        self.kind.extend([kind] * m)
        self.ij.extend(zip(i.tolist(), j.tolist(), t.tolist()))
        self.b.extend(b.tolist())
        self.eq.extend([bool(eq)] * m)

    def entries(self):
        """(row, p, q, coef) arrays of every term."""
        if not self._rows:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, np.zeros(0)
        return (np.concatenate(self._rows), np.concatenate(self._p), np.concatenate(self._q),
                np.concatenate(self._c))

    def matrix(self) -> sp.csr_matrix:
        """A (m x N^2): row k is vec of the symmetric coefficient matrix A_k (column-major; an
        off-diagonal coefficient split half and half between (p, q) and (q, p))."""
        N = self.N
        k, p, q, c = self.entries()
        off = p != q
        rows = np.concatenate([k, k[off]])
        cols = np.concatenate([q * N + p, (p * N + q)[off]])
        vals = np.concatenate([np.where(off, 0.5 * c, c), 0.5 * c[off]])
        A = sp.csr_matrix((vals, (rows, cols)), shape=(len(self.b), N * N))
        A.sum_duplicates()
        return A

    def arrays(self):
        """(A, b, eq mask)."""
        return self.matrix(), np.asarray(self.b, dtype=float), np.asarray(self.eq, dtype=bool)

    @classmethod
    def from_matrix(cls, N: int, A: sp.spmatrix, b, eq, like: Optional["RowList"] = None):
        """The rows of a matrix A (m x N^2, symmetric coefficient matrices vectorised column by
        column, as :meth:`matrix` makes them), named as the rows of ``like`` when given."""
        A = sp.coo_matrix(A)
        p, q = A.col % N, A.col // N
        upper = p <= q
        rows = cls(N)
        k, pp, qq, c = A.row[upper], p[upper], q[upper], A.data[upper]
        # (p, q) and (q, p) carry halves of one coefficient: the upper entry takes the sum.
        lower = ~upper
        extra = sp.coo_matrix((A.data[lower], (A.row[lower], p[lower] * N + q[lower])),
                              shape=A.shape).tocsr()
        c = c + np.asarray(extra[k, qq * N + pp]).ravel()
        b = np.asarray(b, dtype=float)
        rows._rows.append(k.astype(np.int64))
        rows._p.append(pp.astype(np.int64))
        rows._q.append(qq.astype(np.int64))
        rows._c.append(np.asarray(c, dtype=float))
        rows.b = b.tolist()
        rows.eq = [bool(e) for e in np.asarray(eq)]
        if like is not None:
            rows.kind, rows.ij = list(like.kind), list(like.ij)
        else:
            rows.kind, rows.ij = ["row"] * b.size, [(-1, -1, 0)] * b.size
        return rows

    def select(self, kind: str) -> np.ndarray:
        """Indices of the rows of one kind."""
        return np.flatnonzero(np.asarray(self.kind) == kind)


# -- the node model ------------------------------------------------------------------------------
def base_rows(N: int, n: int, unlabeled: np.ndarray, rhs: Optional[float], L: np.ndarray,
              U: np.ndarray, lmd: np.ndarray, umd: np.ndarray,
              upper: Optional[np.ndarray] = None,
              keep_free: Optional[np.ndarray] = None) -> RowList:
    """The rows of the node relaxation but the cuts (module docstring); ``unlabeled`` are the
    point indices of U (0-based, points; X index = point + 1). ``upper`` (a mask of points)
    keeps only those rows V_ii <= umd_i (the node loop hides the ones it has not seen
    violated). ``keep_free`` (a mask of points) keeps the rows V_ii >= lmd_i of these points
    also where the box fixed their sign (valid there: |v_i| >= 1 on every labeling), so that a
    child's rows hold every row of its parent (the cheap certificate of
    :mod:`s3vm.bounds.shor`)."""
    rows = RowList(N)
    rows.add("one", 0, 0, 1.0, 1.0, True)
    if rhs is not None:
        idx = 1 + np.asarray(unlabeled)
        rows.add("bal", np.zeros((1, idx.size), dtype=int), idx[None, :], 1.0, rhs, True)
    pts = np.arange(n)
    lo = np.flatnonzero(L > 0)
    rows.add("xL", 0, 1 + lo[:, None], 1.0, L[lo], False, i=lo)
    hi = np.flatnonzero(U < 0)
    rows.add("xU", 0, 1 + hi[:, None], -1.0, -U[hi], False, i=hi)
    free = (L < 0) & (U > 0)
    if keep_free is not None:
        free = free | np.asarray(keep_free, dtype=bool)
    free = np.flatnonzero(free)
    rows.add("dL", 1 + free[:, None], 1 + free[:, None], 1.0, lmd[free], False, i=free)
    if upper is not None:
        pts = pts[np.asarray(upper, dtype=bool)]
    rows.add("dU", 1 + pts[:, None], 1 + pts[:, None], -1.0, -umd[pts], False, i=pts)
    return rows


def add_rlt(rows: RowList, cuts: np.ndarray, L: np.ndarray, U: np.ndarray) -> None:
    """Add the RLT rows ``cuts`` (an array of (i, j, type)) with the current box."""
    cuts = np.asarray(cuts, dtype=np.int64).reshape(-1, 3)
    if cuts.size == 0:
        return
    i, j, t = cuts[:, 0], cuts[:, 1], cuts[:, 2]
    p, q = i + 1, j + 1
    # (s_x, coefficient of X_ij, of x_j, of x_i, constant moved to the right-hand side)
    ai = np.select([t == 1, t == 2, t == 3, t == 4], [U[i], L[i], L[i], U[i]])
    aj = np.select([t == 1, t == 2, t == 3, t == 4], [U[j], L[j], U[j], L[j]])
    sign = np.where(t <= 2, 1.0, -1.0)
    # type 1/2: X_ij - ai x_j - aj x_i + ai aj >= 0;  type 3/4: -X_ij + ai x_j + aj x_i - ai aj >= 0
    P = np.stack([p, np.zeros_like(p), np.zeros_like(p)], axis=1)
    Q = np.stack([q, q, p], axis=1)
    Cc = np.stack([sign, -sign * ai, -sign * aj], axis=1)
    rows.add("cut", P, Q, Cc, -sign * ai * aj, False, i=i, j=j, t=t)


def separate_rlt(X: np.ndarray, L: np.ndarray, U: np.ndarray, n: int,
                 min_violation: float) -> np.ndarray:
    """Every RLT row violated by less than ``min_violation`` (< 0) at X, most violated first,
    as an array of (i, j, type) with i < j (their separation: all pairs, all four types)."""
    x = X[0, 1:n + 1]
    V = X[1:n + 1, 1:n + 1]
    iu, ju = np.triu_indices(n, 1)
    Li, Lj, Ui, Uj = L[iu], L[ju], U[iu], U[ju]
    xi, xj, Vij = x[iu], x[ju], V[iu, ju]
    with np.errstate(invalid="ignore"):
        values = [Vij - Ui * xj - Uj * xi + Ui * Uj,
                  Vij - Li * xj - Lj * xi + Li * Lj,
                  Li * xj + Uj * xi - Li * Uj - Vij,
                  Ui * xj + Lj * xi - Ui * Lj - Vij]
    found = []
    for t, val in zip(RLT_TYPES, values):
        k = np.flatnonzero(np.isfinite(val) & (val < min_violation))
        found.append(np.stack([val[k], iu[k], ju[k], np.full(k.size, t)], axis=1))
    allv = np.concatenate(found) if found else np.zeros((0, 4))
    order = np.lexsort((allv[:, 3], allv[:, 2], allv[:, 1], allv[:, 0]))  # deterministic ties
    return allv[order, 1:].astype(np.int64)


# -- facial reduction ------------------------------------------------------------------------------
@dataclass
class FacialReduction:
    """X = Q Xr Q' for a basis Q (N x (N - 1)) of the complement of a vector a with X a = 0."""

    Q: sp.csr_matrix
    a: Optional[np.ndarray] = None
    QQ: sp.csr_matrix = None      # kron(Q, Q): vec(Q Xr Q') = QQ vec(Xr)
    G: np.ndarray = None          # Q'Q

    def __post_init__(self):
        self.Q = sp.csr_matrix(self.Q)
        self.QQ = sp.kron(self.Q, self.Q, format="csr")
        Qd = self.Q.toarray()
        self.G = Qd.T @ Qd

    @classmethod
    def for_vector(cls, a: np.ndarray) -> "FacialReduction":
        """A sparse, well-conditioned basis of a-perp: e_k for every a_k = 0, and
        e_k - (a_k / a_p) e_p for every other nonzero entry k, with one pivot p.

        The pivot is the largest |a_k| off index 0 (the constant): every row with a term in
        x = X_0. would become dense through a pivot at 0, while a pivot at a point leaves the
        rows of that point alone dense. Q'Q = I + w w' (w_k = a_k / a_p, k != p) has the
        condition number |a|^2 / a_p^2, u + rhs^2 for the mean balance's a = (-rhs, 0, 1_U). The
        basis of consecutive differences e_k / a_k - e_k' / a_k' used before has a tridiagonal Q'Q
        of condition of order u^2 rhs^2 (9.6e4 on ionosphere's root, where this one has 5.3e3): SDPA
        called that root infeasible at every accuracy (phase pINF_dFEAS, b'y = -1.8e13), and solves
        it in this basis (docs/formulations.md#bb-sdp)."""
        a = np.asarray(a, dtype=float)
        N = a.size
        nz = np.flatnonzero(a != 0)
        if nz.size == 0:
            raise ValueError("facial reduction needs a nonzero vector")
        points = nz[nz != 0] if nz.size > 1 else nz
        p = int(points[np.argmax(np.abs(a[points]))])
        keep = np.delete(np.arange(N), p)
        cols = np.arange(N - 1)
        rest = np.flatnonzero(a[keep] != 0)
        rows = np.concatenate([keep, np.full(rest.size, p)])
        cols = np.concatenate([cols, rest])
        vals = np.concatenate([np.ones(N - 1), -a[keep[rest]] / a[p]])
        return cls(sp.csr_matrix((vals, (rows, cols)), shape=(N, N - 1)), a)

    def reduce(self, A: sp.spmatrix, Ct: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        Qd = self.Q.toarray()
        Cr = Qd.T @ Ct @ Qd
        return sp.csr_matrix(A @ self.QQ), 0.5 * (Cr + Cr.T)

    def lift(self, Xr: np.ndarray) -> np.ndarray:
        X = self.Q @ (self.Q @ Xr).T
        return 0.5 * (X + X.T)


# -- standard form and certificate -----------------------------------------------------------------
def standard_form(A: sp.spmatrix, b: np.ndarray, eq: np.ndarray, Ct: np.ndarray):
    """(c, A_std, b, l): x = (slacks of the inequality rows, vec X); an inequality row
    <A_k, X> - s_k = b_k, s_k >= 0. The multipliers y of (A_std, b) are those of the rows."""
    m = A.shape[0]
    ineq = np.flatnonzero(~eq)
    S = sp.csr_matrix((-np.ones(ineq.size), (ineq, np.arange(ineq.size))), shape=(m, ineq.size))
    A_std = sp.hstack([S, A], format="csr")
    c = np.concatenate([np.zeros(ineq.size), np.asarray(Ct, dtype=float).reshape(-1, order="F")])
    return c, A_std, np.asarray(b, dtype=float), ineq.size


@dataclass
class Certificate:
    """A certified lower bound on a relaxation and what it came from."""

    value: float
    y: np.ndarray          # the multipliers used (inequalities clipped at 0)
    Z: np.ndarray          # the dual slack C~ - sum y_k A_k (of the reduced X under FR)
    lmin: float            # its least (generalised) eigenvalue, margin included
    dual: float            # b'y


def certified_value(Ct: np.ndarray, A: sp.spmatrix, b: np.ndarray, eq: np.ndarray,
                    y: np.ndarray, T: float, G: Optional[np.ndarray] = None) -> Certificate:
    """b'y + T min(0, lambda_min(Z)) with Z = C~ - sum_k y_k A_k and y_k clipped at 0 on the
    inequality rows (module docstring). ``G`` (facial reduction): lambda_min of the pencil
    (Z, G), tr(X) = <G, Xr>."""
    y = np.where(eq, y, np.maximum(y, 0.0))
    N = Ct.shape[0]
    Z = Ct - (A.T @ y).reshape(N, N, order="F")
    Z = 0.5 * (Z + Z.T)
    norm = float(np.linalg.norm(Z))
    if not np.isfinite(norm):
        return Certificate(-np.inf, y, Z, -np.inf, float(b @ y))
    if G is None:
        lmin = float(np.linalg.eigvalsh(Z)[0]) - EIG_SAFETY * norm
    else:
        import scipy.linalg as sla

        lmin = float(sla.eigh(Z, G, eigvals_only=True, subset_by_index=[0, 0])[0])
        lmin -= EIG_SAFETY * norm * (1.0 + float(np.linalg.norm(G)))
    dual = float(b @ y)
    return Certificate(dual + T * min(0.0, lmin), y, Z, lmin, dual)


@dataclass
class IncumbentScale:
    """The data of the incumbent-relative certificate (:func:`incumbent_certificate`): the
    Cholesky factor R of B = C~ + D (R R' = B, in the reduced coordinates under facial
    reduction), D a diagonal matrix whose every row has a fixed value <D, X> = ``offset`` on
    the relaxation (E_00 with X_00 = 1; under the lifted count also the labels' Y_kk = 1)."""

    R: np.ndarray
    offset: float

    @classmethod
    def build(cls, Ct: np.ndarray, fixed: np.ndarray, fr: Optional["FacialReduction"] = None
              ) -> Optional["IncumbentScale"]:
        """From C~ and the indices ``fixed`` of the diagonal entries fixed at 1 (None when B
        is not positive definite)."""
        from scipy.linalg import cholesky

        B = np.array(Ct, dtype=float)
        B[fixed, fixed] += 1.0
        if fr is not None:
            Qd = fr.Q.toarray()
            B = Qd.T @ B @ Qd
        try:
            R = cholesky(0.5 * (B + B.T), lower=True)
        except np.linalg.LinAlgError:
            return None
        return cls(R, float(len(fixed)))


def incumbent_certificate(Z: np.ndarray, dual: float, UB: float, scale: IncumbentScale) -> float:
    """b'y + (UB + offset) min(0, lambda_min(R^-1 Z R^-T)): a lower bound on <C~, X> over every
    feasible X with <C~, X> <= UB (docs/formulations.md#bb-sdp, "the certified bound"). With
    W = R^-1 Z R^-T, <Z, X> = <W, R'XR> >= lambda_min(W) tr(R'XR) = lambda_min(W) <B, X>, and
    <B, X> = <C~, X> + offset <= UB + offset, so for lambda_min(W) < 0 the bound of
    :func:`certified_value` holds with UB + offset in the place of the trace bound T; it needs no
    bound on tr(X), which overstates the trace by far (T is 13 to 70 times tr X at a node)."""
    from scipy.linalg import solve_triangular

    if not math.isfinite(UB):
        return -math.inf
    R = scale.R
    W = solve_triangular(R, solve_triangular(R, Z, lower=True).T, lower=True)
    W = 0.5 * (W + W.T)
    norm = float(np.linalg.norm(W))
    if not np.isfinite(norm):
        return -math.inf
    import scipy.linalg as sla

    lmin = float(sla.eigh(W, eigvals_only=True, subset_by_index=[0, 0])[0]) - EIG_SAFETY * norm
    return dual + (UB + scale.offset) * min(0.0, lmin)


def repair_diagonal(Ct: np.ndarray, A: sp.spmatrix, b: np.ndarray, eq: np.ndarray,
                    y: np.ndarray, X: np.ndarray, rows: RowList, T: float) -> Optional[Certificate]:
    """A second certificate from a first-order solver's output: the multipliers of the rows that
    touch the diagonal only (X_00 = 1, V_ii >= lmd_i, V_ii <= umd_i) refitted by least squares to
    the complementary slackness Z X = 0 at the solver's X (row i of Z X involves the diagonal
    multiplier of i only), every other multiplier kept. Any multipliers give a valid bound, so
    this changes the bound's tightness only. None when there is nothing to refit."""
    kinds = np.asarray(rows.kind)
    one = np.flatnonzero(kinds == "one")
    dL, dU = np.flatnonzero(kinds == "dL"), np.flatnonzero(kinds == "dU")
    if one.size != 1 or dU.size == 0:
        return None
    N = Ct.shape[0]
    idx = {k: rows.ij[k][0] + 1 for k in np.concatenate([dL, dU])}
    y0 = np.where(eq, y, np.maximum(y, 0.0)).copy()
    diag_rows = np.concatenate([one, dL, dU])
    rest = y0.copy()
    rest[diag_rows] = 0.0
    Z0 = Ct - (A.T @ rest).reshape(N, N, order="F")
    Z0 = 0.5 * (Z0 + Z0.T)
    ZX = Z0 @ X
    norms = np.maximum(np.einsum("ij,ij->i", X, X), 1e-300)
    omega = -np.einsum("ij,ij->i", ZX, X) / norms        # Z = Z0 + Diag(omega)
    new = rest.copy()
    new[one[0]] = -omega[0]                                # the row X_00 = 1 adds -y E_00
    has_dL = np.zeros(N, dtype=bool)
    for k in dL:
        has_dL[idx[k]] = True
    for k in dU:                                           # -V_ii >= -umd: adds +y E_ii
        new[k] = max(omega[idx[k]], 0.0)
    for k in dL:                                           # V_ii >= lmd: adds -y E_ii
        new[k] = max(-omega[idx[k]], 0.0)
    return certified_value(Ct, A, b, eq, new, T)


# -- a declarative CVXPY model of any row list -----------------------------------------------------
def cvxpy_problem(rows: RowList, Ct: np.ndarray):
    """The relaxation as a CVXPY problem: X (N x N, PSD) and the rows, minimising <C~, X>.
    Returns (problem, X, equality constraint, inequality constraint)."""
    import cvxpy as cp

    A, b, eq = rows.arrays()
    N = rows.N
    X = cp.Variable((N, N), PSD=True, name="X")
    vx = cp.vec(X, order="F")
    cons = []
    ce = ci = None
    if eq.any():
        ce = A[eq] @ vx == b[eq]
        cons.append(ce)
    if (~eq).any():
        ci = A[~eq] @ vx >= b[~eq]
        cons.append(ci)
    problem = cp.Problem(cp.Minimize(cp.sum(cp.multiply(Ct, X))), cons)
    return problem, X, ce, ci


def rlt_keys(cuts: np.ndarray) -> list:
    """Cuts as hashable (i, j, t) tuples."""
    return [tuple(int(v) for v in c) for c in np.asarray(cuts).reshape(-1, 3)]


def rlt_array(keys) -> np.ndarray:
    keys = list(keys)
    return np.array(keys, dtype=np.int64).reshape(-1, 3)


__all__ = ["RowList", "base_rows", "add_rlt", "separate_rlt", "FacialReduction",
           "standard_form", "Certificate", "certified_value", "IncumbentScale",
           "incumbent_certificate", "repair_diagonal",
           "cvxpy_problem", "rlt_keys", "rlt_array", "EIG_SAFETY"]
