"""S3VM-L2 in output space: the form Piccialli, Schwiddessen and Sudoso (2024) solve, the mean
balance, exact labeling values, the incumbent-driven box, the instance in output order
(:class:`OutputSpaceData`) and the local searches over labelings (their 2-opt, single flips and
swaps) that ``bb-sdp``'s node loop calls (docs/formulations.md#output-space).

For a full labeling y and penalties C_i (C on L, C* on U), with v_i the margin-clipped output
(v_i = y_i max(1, y_i f_i)),

    J(y) = min_{w, v: y o v >= 1} 1/2 |w|^2 + sum_i C_i (v_i - w.phi_i)^2
         = min_{v: y o v >= 1} 1/2 v'K'^-1 v,        K' = K + diag(1 / (2 C_i)),

because min_w 1/2|w|^2 + sum C_i e_i^2 subject to Phi w + e = v is 1/2 v'(Phi Phi' + D)^-1 v
(D = diag(1 / (2 C_i))). With a bias f = w.phi + b, v - b 1 takes v's place and b is free:
J(y) = min_{v, b} 1/2 (v - b1)'K'^-1 (v - b1), i.e. v'Pv/2 with P = A - A11'A / (1'A1),
A = K'^-1 (b eliminated; P's null space is the constant vector).

**The mean balance** (``--balance mean``, the balance of Piccialli et al. 2024, their code's
``sum(x_var[l+1:n]) == rhs``): the unlabeled outputs v sum to u times the mean of the labeled
labels,

    sum_{j in U} v_j = rhs = u (1/l) sum_{i in L} y_i,

a linear constraint on v, hence on the margin-clipped outputs, not on f. J_mean(y) is then the
convex QP above with that row (:func:`labeling_qp`); J_mean >= J of the same labeling without
balance. Their penalty convention is C* = C l / u (C chosen by cross-validation on the labeled
points, :mod:`s3vm.selection`).

Every S3VM-L2 labeling with J(y) <= UB has its v in the ellipsoid v'Cm v <= UB (Cm = A / 2, no
bias), so min/max v_i over that ellipsoid, the balance and a box bound v_i over all such labelings
(:func:`box_bound`, their ``compute_bound_constraint_qp!``): the box the node relaxations of
``bb-sdp`` use, recomputed when the incumbent UB falls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from s3vm.models.l2_svm import S3VMObjective
from s3vm.solvers.bnb.problem import labels_by_outputs
from s3vm.solvers.runtime.processes import native_threads

#: Safety margin of the box: a bound is moved outwards by this before use (their TOL_BOUND).
BOX_TOL = 1e-5


def mean_rhs(yL: np.ndarray, u: int) -> float:
    """The right-hand side of the mean balance: u times the mean of the labeled labels."""
    yL = np.asarray(yL, dtype=float)
    return float(np.sum(yL)) * u / yL.size


def inverse_half(Kp: np.ndarray, bias: bool = False) -> np.ndarray:
    """Cm = 1/2 K'^-1 (symmetrised), or with ``bias`` 1/2 P with b eliminated (module
    docstring)."""
    A = np.linalg.inv(Kp)
    A = 0.5 * (A + A.T)
    if bias:
        a1 = A.sum(axis=1)
        A = A - np.outer(a1, a1) / a1.sum()
        A = 0.5 * (A + A.T)
    return 0.5 * A


# -- the labeling QP --------------------------------------------------------------------------
def labeling_qp(Cm: np.ndarray, y: np.ndarray, a: Optional[np.ndarray] = None,
                rhs: Optional[float] = None, max_iter: int = 200,
                active: Optional[np.ndarray] = None):
    """min v'Cm v  s.t.  y_i v_i >= 1 (all i),  a'v = rhs (when ``a`` is given).

    A primal-dual active-set method on z = y o v >= 1 (Hintermueller, Ito and Kunisch's
    semismooth Newton for bound constraints, with the equality row carried in the KKT system),
    which ends in finitely many steps on a strictly convex problem; after 25 iterations it changes
    one index at a time (no cycling), and if it still has not settled, or a system is singular,
    the QP goes to Clarabel through CVXPY.

    Returns
    -------
    value : float
        v'Cm v at the solution (inf when infeasible: every a_i y_i of one sign and rhs out of
        reach).
    v : ndarray or None
    """
    y = np.asarray(y, dtype=float)
    n = y.size
    H = 2.0 * (Cm * np.outer(y, y))
    eq = a is not None
    ay = a * y if eq else None
    if eq:
        pos, neg = bool(np.any(ay > 0)), bool(np.any(ay < 0))
        at_one = float(np.sum(ay))  # a'v at z = 1: the only value if no a_i y_i can grow
        if not ((pos and neg) or (pos and rhs >= at_one - 1e-12)
                or (neg and rhs <= at_one + 1e-12)):
            return math.inf, None
    act = np.zeros(n, dtype=bool) if active is None else np.asarray(active, dtype=bool).copy()
    for it in range(max_iter):
        free = np.flatnonzero(~act)
        fixed = np.flatnonzero(act)
        z = np.ones(n)
        mu = 0.0
        try:
            if eq:
                if free.size == 0 or not np.any(ay[free] != 0):
                    # The equality cannot move: release a bound point that can.
                    cand = np.flatnonzero(act & (ay != 0))
                    act[cand[0]] = False
                    continue
                kkt = np.zeros((free.size + 1, free.size + 1))
                kkt[:free.size, :free.size] = H[np.ix_(free, free)]
                kkt[:free.size, -1] = -ay[free]
                kkt[-1, :free.size] = -ay[free]
                right = np.concatenate([-H[np.ix_(free, fixed)].sum(axis=1),
                                        [-(rhs - ay[fixed].sum())]])
                sol = np.linalg.solve(kkt, right)
                z[free] = sol[:-1]
                mu = float(sol[-1])
            elif free.size:
                z[free] = np.linalg.solve(H[np.ix_(free, free)],
                                          -H[np.ix_(free, fixed)].sum(axis=1))
        except np.linalg.LinAlgError:
            break
        lam = H @ z - (mu * ay if eq else 0.0)
        new = (act & (lam > 1e-12)) | (~act & (z < 1.0 - 1e-12))
        if it >= 25 and not np.array_equal(new, act):
            score = np.where(act, -lam, 1.0 - z)
            score[new == act] = -np.inf
            k = int(np.argmax(score))
            new = act.copy()
            new[k] = not act[k]
        if np.array_equal(new, act):
            v = y * np.maximum(z, 1.0)
            return float(v @ Cm @ v), v
        act = new
    return _labeling_qp_conic(Cm, y, a, rhs)


def _labeling_qp_conic(Cm, y, a, rhs):
    """The labeling QP by Clarabel through CVXPY (the fallback of :func:`labeling_qp`)."""
    import cvxpy as cp

    n = y.size
    v = cp.Variable(n)
    cons = [cp.multiply(y, v) >= 1]
    if a is not None:
        cons.append(a @ v == rhs)
    w, U = np.linalg.eigh(0.5 * (Cm + Cm.T))
    R = U * np.sqrt(np.maximum(w, 0.0))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(R.T @ v)), cons)
    prob.solve(solver="CLARABEL", max_threads=native_threads())
    if v.value is None or prob.status not in ("optimal", "optimal_inaccurate"):
        return math.inf, None
    vv = y * np.maximum(y * v.value, 1.0)
    return float(vv @ Cm @ vv), vv


# -- local search over labelings (the incumbent heuristic of bb-sdp) ----------------------------
#: Moves a step of :func:`flip_search` re-solves exactly (the best by their estimated change).
SEARCH_CANDIDATES = 4
#: A point with y_i v_i below 1 + this sits on the margin.
MARGIN_TOL = 1e-9


def _move_estimates(Cm, Mdiag, y, v, a):
    """Estimated change of v'Cm v when point j's label flips (v_j to -y_j, the other margin),
    for every j: (estimate, step). The linear term is the Lagrangian's gradient (the balance's
    multiplier read off the points off the margin, whose gradient is mu a_i / 2 alone); the
    curvature averages two extremes, every other output held (Cm_jj) and every other output free
    (1 / (Cm^-1)_jj = 1 / M_jj). The exact re-solve decides; this only ranks."""
    g = Cm @ v
    if a is not None:
        off = (a > 0) & (y * v > 1.0 + MARGIN_TOL)
        mu = float(np.median(2.0 * g[off])) if np.any(off) else 0.0
        g = g - 0.5 * mu * a
    step = -y - v
    curv = 0.5 * (np.diag(Cm) + 1.0 / Mdiag)
    return 2.0 * g * step + curv * step * step, step


def flip_search(Cm: np.ndarray, Mdiag: np.ndarray, y: np.ndarray, movable: np.ndarray,
                a: Optional[np.ndarray] = None, rhs: Optional[float] = None,
                keep_count: bool = False, candidates: int = SEARCH_CANDIDATES,
                max_moves: Optional[int] = None):
    """Best-improvement local search over labelings from ``y``, every labeling scored by its QP
    (:func:`labeling_qp`, with the balance row a'v = rhs when ``a`` is given).

    A move flips one movable label (the number of positive labels changes: the move the 2-opt
    of Piccialli et al. (2024) cannot make, since it keeps the sum of the outputs), or with
    ``keep_count`` swaps a positive and a negative label (the count balance). Each step ranks
    every move by a vectorised estimate of its change (:func:`_move_estimates`; for a swap the
    two flips' estimates plus their coupling 2 d_i d_j Cm_ij), re-solves the ``candidates`` best
    exactly (warm-started at the current margin set) and takes the best that improves; it stops
    when none does or after ``max_moves`` moves (default: the number of movable points). The
    value falls at every move, so the search ends.

    Parameters
    ----------
    Cm : ndarray (n, n)
        1/2 K'^-1.
    Mdiag : ndarray (n,)
        The diagonal of Cm^-1 (= 2 K').
    y : ndarray (n,)
        A full labeling (+1/-1).
    movable : ndarray of bool (n,)
        The labels the search may change (the unlabeled points, less any a node fixed).
    a, rhs
        The mean balance's row, or None.
    keep_count : bool
        Swaps instead of flips.

    Returns
    -------
    value : float
        The QP's value at the labeling reached (inf when no labeling was feasible).
    v : ndarray or None
        Its outputs.
    y : ndarray
        The labeling reached.
    """
    y = np.asarray(y, dtype=float).copy()
    value, v = labeling_qp(Cm, y, a, rhs)
    if v is None:
        return math.inf, None, y
    idx = np.flatnonzero(movable)
    limit = idx.size if max_moves is None else int(max_moves)
    for _ in range(limit):
        est, step = _move_estimates(Cm, Mdiag, y, v, a)
        if keep_count:
            pos, neg = idx[y[idx] > 0], idx[y[idx] < 0]
            if pos.size == 0 or neg.size == 0:
                break
            pair = (est[pos][:, None] + est[neg][None, :]
                    + 2.0 * np.outer(step[pos], step[neg]) * Cm[np.ix_(pos, neg)])
            k = min(candidates, pair.size)
            flat = np.argpartition(pair.ravel(), k - 1)[:k]
            flat = flat[np.argsort(pair.ravel()[flat], kind="stable")]
            moves = [(pos[f // neg.size], neg[f % neg.size]) for f in flat]
        else:
            order = idx[np.argsort(est[idx], kind="stable")[:candidates]]
            moves = [(j,) for j in order]
        margin = y * v <= 1.0 + MARGIN_TOL
        best = None
        for move in moves:
            move = list(move)
            y2 = y.copy()
            y2[move] = -y2[move]
            act = margin.copy()
            act[move] = True
            val2, v2 = labeling_qp(Cm, y2, a, rhs, active=act)
            if v2 is not None and val2 < value - 1e-10 * max(1.0, abs(value)) \
                    and (best is None or val2 < best[0]):
                best = (val2, v2, y2)
        if best is None:
            break
        value, v, y = best
    return value, v, y


# -- the exact objective with the mean balance (bb, bb-sdp, l2-miqp share it) --------------------
@dataclass
class MeanSolution:
    """J_mean at one labeling with its classifier (the fields of an
    :class:`s3vm.models.l2_svm.L2SVMSolution` that the formulations read).

    value : float
        inf when the balance cannot be met.
    v : ndarray (n,) or None
        The margin-clipped outputs, in the objective's row order.
    beta : ndarray (n,)
        Expansion coefficients, f = K beta + b (beta = K'^-1 (v - b 1)).
    b : float
    outputs : ndarray (n,)
        f at every point.
    """

    value: float
    v: Optional[np.ndarray]
    beta: np.ndarray
    b: float
    outputs: np.ndarray
    active: Optional[np.ndarray] = None
    newton_steps: int = 0
    factor: object = None


class MeanBalanceObjective(S3VMObjective):
    """J_mean(y_U): S3VM-L2 with the mean balance on the outputs (module docstring), with or
    without bias; the interface of :class:`s3vm.models.l2_svm.S3VMObjective` (``solve``,
    ``__call__``, ``K``, ``C``, ``y``, ``bias``), which it extends.

    Parameters
    ----------
    instance : Instance
    settings : Settings
        ``kernel``, ``sigma``, ``C``, ``C_star`` and ``bias`` are read; the balance is the mean.
    """

    def __init__(self, instance, settings):
        super().__init__(instance, settings)
        self.Kp = self.K + np.diag(0.5 / self.C)
        self.Cm = inverse_half(self.Kp, self.bias)
        self.a = (self.y == 0).astype(float)
        self.rhs = mean_rhs(self.y[self.labeled], self.unlabeled.size)
        self._cache: dict = {}
        self._A = None

    def evaluate(self, labels_U: np.ndarray, warm=None) -> MeanSolution:
        """J_mean at ``labels_U``: the labeling's QP with the balance row, not the plain SVM a
        search trains (``warm`` does not apply)."""
        return self.solve(labels_U)

    def solve(self, labels_U: np.ndarray, active: Optional[np.ndarray] = None) -> MeanSolution:
        """The labeling's QP (``active``, a warm start of the Newton solver elsewhere, is
        ignored); each labeling is solved once."""
        labels_U = np.asarray(labels_U)
        if labels_U.shape != (self.u,) or not np.all(np.abs(labels_U) == 1):
            raise ValueError(f"labels_U must hold {self.u} values +1/-1")
        key = labels_U.astype(np.int8).tobytes()
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        y = self.full_labels(labels_U)
        value, v = labeling_qp(self.Cm, y, self.a, self.rhs)
        n = y.size
        if v is None:
            sol = MeanSolution(math.inf, None, np.zeros(n), 0.0, np.zeros(n))
        else:
            if self._A is None:
                A = np.linalg.inv(self.Kp)
                self._A = 0.5 * (A + A.T)
            A = self._A
            b = 0.0
            if self.bias:
                A1 = A.sum(axis=1)
                b = float((A1 @ v) / A1.sum())
            beta = A @ (v - b)
            sol = MeanSolution(float(value), v, beta, b, self.K @ beta + b)
        if len(self._cache) > 100000:
            self._cache.clear()
        self._cache[key] = sol
        return sol


def s3vm_objective(instance, settings):
    """J of S3VM-L2 under the settings' balance: :class:`MeanBalanceObjective` for ``mean``,
    else :class:`s3vm.models.l2_svm.S3VMObjective` (the count is a condition on the labels, not on
    J)."""
    if settings.balance == "mean":
        return MeanBalanceObjective(instance, settings)
    return S3VMObjective(instance, settings)


# -- the box ------------------------------------------------------------------------------------
def box_bound(M: np.ndarray, Ma: Optional[np.ndarray], aMa: float, rhs: Optional[float],
              sign: int, i: int, lo: np.ndarray, hi: np.ndarray, UB: float,
              max_iter: int = 200, batch: int = 8) -> float:
    """A certified lower bound on min sign v_i over {v'Cm v <= UB, a'v = rhs, lo <= v <= hi}
    (bounds on v_i itself dropped, as in Piccialli et al.'s compute_bound_constraint_qp!).

    M = Cm^-1 (= 2 K'), ``Ma`` = M a and ``aMa`` = a'M a (None and 0 without the balance).
    An active-set method on the ellipsoid: with a working set W of bounds held at equality and
    the rows A v = b (balance and W), the minimiser of c'v over v'Cm v <= UB, A v = b is

        v = M A' S^-1 b - P c / (2 lam),  P = M - M A' S^-1 A M,  S = A M A',
        2 lam = sqrt(c'Pc / rho^2),  rho^2 = UB - b'S^-1 b,

    with multipliers nu = S^-1 (A M c + 2 lam b). Every iterate's multipliers, those of bounds
    with the wrong sign set to 0, give the value of a dual feasible point of the convex QCQP,

        D = nu'b - sqrt(UB g'Mg),   g = c - A'nu,

    and the best D is returned: valid whatever the iteration does (an early stop costs
    tightness, never validity). -inf when nothing is certified."""
    n = M.shape[0]
    Mi = sign * M[:, i]
    has_a = rhs is not None
    lo = lo.copy()
    hi = hi.copy()
    lo[i], hi[i] = -np.inf, np.inf
    W: list = []  # j >= 0: lower bound of j held; -(j + 1): upper bound of j held
    best = -np.inf
    off = 1 if has_a else 0
    for _ in range(max_iter):
        J = np.array([w if w >= 0 else -w - 1 for w in W], dtype=int)
        bJ = np.array([lo[w] if w >= 0 else hi[-w - 1] for w in W])
        b = np.concatenate([[rhs], bJ]) if has_a else bJ
        k = b.size
        if k:
            MA = np.column_stack(([Ma] if has_a else []) + [M[:, J]]) if J.size else Ma[:, None]
            S = np.empty((k, k))
            if has_a:
                S[0, 0] = aMa
                S[0, 1:] = S[1:, 0] = Ma[J]
            S[off:, off:] = M[np.ix_(J, J)]
            AMc = MA[i] * sign
            try:
                Sb = np.linalg.solve(S, b)
                SAMc = np.linalg.solve(S, AMc)
            except np.linalg.LinAlgError:
                break
            rho2 = UB - float(b @ Sb)
            cPc = float(Mi[i] * sign - AMc @ SAMc)
        else:
            MA = np.zeros((n, 0))
            S = np.zeros((0, 0))
            AMc = Sb = SAMc = np.zeros(0)
            rho2, cPc = UB, float(Mi[i] * sign)
        if rho2 <= 0 or cPc < -1e-12:
            break
        cPc = max(cPc, 0.0)
        lam2 = math.sqrt(cPc / rho2) if cPc > 0 else 0.0
        nu = SAMc + lam2 * Sb
        v = MA @ Sb - ((Mi - MA @ SAMc) / lam2 if lam2 > 0 else 0.0)
        nuc = nu.copy()
        signs = np.array([1.0 if w >= 0 else -1.0 for w in W])
        if W:
            nuc[off:] = np.where(signs * nu[off:] > 0, nu[off:], 0.0)
        gMg = float(Mi[i] * sign - 2.0 * nuc @ AMc + nuc @ (S @ nuc)) if k else float(Mi[i] * sign)
        best = max(best, float(nuc @ b) - math.sqrt(UB * max(gMg, 0.0)))
        if W:
            wrong = signs * nu[off:]
            j = int(np.argmin(wrong))
            if wrong[j] < -1e-10:
                W.pop(j)
                continue
        viol_lo = lo - v
        viol_hi = v - hi
        if J.size:
            viol_lo[J] = -np.inf
            viol_hi[J] = -np.inf
        viol = np.maximum(viol_lo, viol_hi)
        order = np.argsort(-viol, kind="stable")[:batch]
        order = order[viol[order] > 1e-9]
        if order.size == 0:
            break
        for j in order:
            W.append(int(j) if viol_lo[j] >= viol_hi[j] else -int(j) - 1)
    return best


def project_box(L: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Outputs lie outside (-1, 1): a lower bound above -1 becomes at least 1 (the point is
    labeled +1), an upper bound below 1 at most -1."""
    L = np.where(L > -1.0 + BOX_TOL, np.maximum(L, 1.0), L)
    U = np.where(U < 1.0 - BOX_TOL, np.minimum(U, -1.0), U)
    return L, U


def compute_box(M: np.ndarray, a: Optional[np.ndarray], rhs: Optional[float], L: np.ndarray,
                U: np.ndarray, UB: float,
                deadline: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
    """Piccialli et al.'s compute_L_and_U!: both ends of every v_i by :func:`box_bound` over
    the ellipsoid of the incumbent value UB, from a copy of the current box; a side already
    known (L_i >= 1 or U_i <= -1) is skipped, and a bound only replaces a weaker one. Stops early
    (keeping what it has) at ``deadline`` (``time.perf_counter()``)."""
    import time

    Ma = M @ a if a is not None else None
    aMa = float(a @ Ma) if a is not None else 0.0
    L0, U0 = L.copy(), U.copy()
    L, U = L.copy(), U.copy()
    for i in range(M.shape[0]):
        if time.perf_counter() > deadline:
            break
        if L[i] < 1.0:
            low = box_bound(M, Ma, aMa, rhs, 1, i, L0, U0, UB)
            L[i] = max(L[i], low - BOX_TOL)
        if U[i] > -1.0:
            high = -box_bound(M, Ma, aMa, rhs, -1, i, L0, U0, UB)
            U[i] = min(U[i], high + BOX_TOL)
    return project_box(L, U)


class OutputSpaceData:
    """The instance in the order labeled first, then unlabeled (``order`` maps back to rows).

    Attributes: n, l, u, yL, Kp (K'), Cm (1/2 K'^-1), M (2 K'), a (indicator of U), rhs (mean
    balance, else None), positives (count, else None).
    """

    def __init__(self, K: np.ndarray, label: np.ndarray, C: np.ndarray, balance: str,
                 positives: Optional[int]):
        label = np.asarray(label, dtype=int)
        self.lab = np.flatnonzero(label != 0)
        self.unl = np.flatnonzero(label == 0)
        self.order = np.concatenate([self.lab, self.unl])
        self.n, self.l, self.u = label.size, self.lab.size, self.unl.size
        self.yL = label[self.lab].astype(float)
        K = np.asarray(K, dtype=float)[np.ix_(self.order, self.order)]
        self.C = np.asarray(C, dtype=float)[self.order]
        self.Kp = K + np.diag(0.5 / self.C)
        A = np.linalg.inv(self.Kp)
        self.Cm = 0.25 * (A + A.T)
        self.M = 2.0 * self.Kp
        self.Mdiag = np.diag(self.M).copy()
        self.a = np.r_[np.zeros(self.l), np.ones(self.u)]
        self.balance = balance
        self.rhs = mean_rhs(self.yL, self.u) if balance == "mean" else None
        self.positives = positives if balance == "count" else None

    def full(self, labels_U: np.ndarray) -> np.ndarray:
        return np.concatenate([self.yL, np.asarray(labels_U, dtype=float)])

    def qp(self, y: np.ndarray):
        """(value, v) of the labeling y (all n, internal order) under the mean balance when
        there is one, else without balance (the count is on y, not v)."""
        if self.rhs is not None:
            return labeling_qp(self.Cm, y, self.a, self.rhs)
        return labeling_qp(self.Cm, y)

    def initial_box(self) -> tuple[np.ndarray, np.ndarray]:
        L = np.where(np.r_[self.yL, np.zeros(self.u)] > 0, 1.0, -np.inf)
        U = np.where(np.r_[self.yL, np.zeros(self.u)] < 0, -1.0, np.inf)
        return L, U


def labels_count(f: np.ndarray, P: int) -> np.ndarray:
    """+1.0 for the P largest of f (ties by position), -1.0 elsewhere (as floats)."""
    return labels_by_outputs(f, P).astype(float)


def two_opt(Cm: np.ndarray, v: np.ndarray, movable: np.ndarray, qp, max_passes: int = 50):
    """Moves v_i += d, v_j -= d (the sum, hence the mean balance, kept) over pairs of movable
    points with |v| >= 1 kept, for each i the best j by the exact 1-D minimiser over the union of
    intervals (their two_opt_local_search!, with exact steps); after a pass that improved, the QP
    of the new labeling (``qp(y) -> (value, v)``); repeated while it improves."""
    v = v.copy()
    idx = np.flatnonzero(movable)
    if idx.size < 2:
        return v
    dC = np.diag(Cm)
    for _ in range(max_passes):
        g = Cm @ v
        improved = False
        for i in idx:
            js = idx[idx != i]
            curv = dC[i] + dC[js] - 2.0 * Cm[i, js]
            lin = 2.0 * (g[i] - g[js])
            xi, xj = v[i], v[js]
            candidates = [-lin / (2.0 * np.maximum(curv, 1e-300)),
                          np.full(js.size, -1.0 - xi), np.full(js.size, 1.0 - xi),
                          xj - 1.0, xj + 1.0]
            best_d = np.zeros(js.size)
            best_val = np.zeros(js.size)
            for d in candidates:
                ok = (np.abs(xi + d) >= 1.0 - 1e-12) & (np.abs(xj - d) >= 1.0 - 1e-12)
                val = lin * d + curv * d * d
                better = ok & (val < best_val - 1e-12 * (1.0 + np.abs(best_val)))
                best_d = np.where(better, d, best_d)
                best_val = np.where(better, val, best_val)
            k = int(np.argmin(best_val))
            if best_val[k] < -1e-9 * max(1.0, float(v @ g)):
                j, d = js[k], best_d[k]
                v[i] += d
                v[j] -= d
                g += d * (Cm[:, i] - Cm[:, j])
                improved = True
        if not improved:
            break
        value, w = qp(np.where(v >= 0, 1.0, -1.0))
        if w is None or value >= float(v @ Cm @ v) * (1 - 1e-6):
            break
        v = w
    return v
