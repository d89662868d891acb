"""The linear S3VM-L2 in the primal, on sparse data: SVMlin's modified finite Newton method.

Sindhwani and Keerthi (2006), "Large scale semi-supervised linear SVMs" (SIGIR), solve the
linear transductive SVM with the squared hinge by three pieces, all built here on matrix-vector
products with X and X' alone (X a ``scipy.sparse`` CSR matrix or a dense array; never
densified, no n x n matrix):

**L2-SVM-MFN** (their section 2; Keerthi and DeCoste 2005). For fixed labels the problem is

    min_{w,b} 1/2 |w|^2 + sum_i [ cp_i max(0, 1 - o_i)^2 + cn_i max(0, 1 + o_i)^2 ],
    o = X w + b,

with cp_i the cost of row i as a +1 and cn_i as a -1 (a labeled row, or an unlabeled row at
its current label, has one of the two; deterministic annealing gives an unlabeled row both).
On the active set (the terms with positive loss) the objective is a quadratic; its minimiser
solves the regularised least squares system

    (R + 2 X_A~' D X_A~) z = 2 X_A~' t,   D_i = cp_i [o_i < 1] + cn_i [o_i > -1],
                                          t_i = cp_i [o_i < 1] - cn_i [o_i > -1],

(X~ = [X 1] when there is a bias, which is not regularised: R = diag(1, .., 1, 0)), which
conjugate gradients in the CGLS form solve from the current point (their section 2.1: the
residual kept in the data space, one product with X_A and one with X_A' an iteration). An
exact line search on the convex piecewise-quadratic objective from the current point to z
(:func:`s3vm.models.l2_svm.exact_line_search`) makes the iteration converge in finitely many
steps: it stops when a full step leaves the active set unchanged.

**Multi-switch TSVM** (their section 3.1). Train on the labeled rows, label the unlabeled rows
by their outputs (the P largest +1 under the count, which is their fraction r = P / u), then
for C*' growing to C* (annealing): retrain with the current labels and switch every pair
(a positive at output o_p, a negative at o_n, o_p < o_n) that lowers the loss, as
:func:`s3vm.models.label_switching.switch` does, until no pair switches. Their S caps the
pairs switched at once; switching all of them is the case S = u, and each switch lowers the
objective at fixed w, so each stage ends.

**Deterministic annealing** (their section 3.2, after Sindhwani, Keerthi and Chapelle 2006).
The labels are relaxed to probabilities p_j of +1; for a temperature T the objective adds
T sum_j [p_j log p_j + (1 - p_j) log(1 - p_j)] to the losses C* sum_j [p_j l(o_j) +
(1 - p_j) l(-o_j)], with sum_j p_j = P. At fixed w the optimal p is the logistic
p_j = 1 / (1 + exp((g_j - nu) / T)), g_j = C* (l(o_j) - l(-o_j)), with nu set so that the
p_j sum to P; at fixed p, w is an L2-SVM-MFN solve with both costs on every unlabeled row.
T falls geometrically until the p_j are nearly 0 or 1; the labels are then read from the
outputs under the count, and a last switching stage at C* ends at a local minimum of J.

**Speed at scale.** Every training is warm-started from the last (w, b and the outputs carry
over, hence the active set), and the work is the products with X, so the rules below keep
their number down without changing the problem solved:

- CGLS stops when its gradient g is small against the point z, |g| <= tol |z| (at the
  minimiser z = 2 X~'r, and J's error is about tol^2 J), not against its starting gradient,
  which a warm start near the point makes tiny and turns into a demand for more digits than
  floating point holds;
- the search's trainings, which only rank labelings, take one Newton step at a loose
  tolerance (looser still in the annealing stages before the last: SVMlin's epsilon relaxed
  early, tightened at the end) on a float32 copy of a sparse X (a product 1.7 times faster:
  4-byte values beside the 4-byte indices, for 8 and 4); the labels returned are trained on that
  copy to :data:`PRESOLVE_TOL`, then on X itself to ``cg_tol`` from outputs formed anew, and
  switching goes on until no pair switches at those outputs;
- a stage before the last ends once a retraining switches at most
  :data:`STAGE_SWITCH_SHARE` of the unlabeled rows;
- the line search sorts only the breakpoints before a bracket of its step, and switching
  sorts only candidates found by partition.

The objective's scale is the project's (docs/formulations.md#problem-1): 1/2 |w|^2 + C sum_L
+ C* sum_U of the squared hinge. SVMlin writes lambda/2 |w|^2 + 1/(2l) sum_L + lambda'/(2u)
sum_U, which is C = 1/(lambda l) and C* = lambda'/(lambda u) here, with a regularised bias.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import scipy.sparse as sp

from s3vm.models.l2_svm import exact_line_search
from s3vm.models.label_switching import switch
from s3vm.solvers.bnb.problem import labels_by_outputs

#: Relative residual of conjugate gradients (|gradient| against its start) that ends a CGLS
#: solve, and the iterations it may take.
CG_TOL = 1e-6
MAX_CG = 200
MAX_NEWTON = 50
#: The active rows are copied out of a sparse X when they are at most this share of its
#: nonzeros: products on the copy then cost its nonzeros, not X's.
SUBSET_SHARE = 0.6
#: The switching stages' fractions of C* (SVMlin raises lambda' by a factor 1.5 from 1e-5 of
#: it; four stages a factor 8 apart reached the same labels on the two-topic corpus of
#: benchmarks/sparse_scale.py in a fraction of the trainings).
PRIMAL_ANNEAL = (2.0 ** -9, 2.0 ** -6, 2.0 ** -3, 1.0)
#: An annealing stage before the last ends when a retraining switches at most this share of
#: the unlabeled rows (the next stage goes on switching from its labels; the last stage runs
#: until no pair switches, the local minimum returned). At 10^6 rows the stages' tails of a
#: few pairs a retraining cost a quarter of the search.
STAGE_SWITCH_SHARE = 1e-4
#: The search's trainings (all but the last at C*): conjugate gradients to this relative
#: residual, and at most this many Newton steps. One step from the last training's point ranks
#: the labels as well as three (10^6 rows of benchmarks/sparse_scale.py: J 440.11945 against
#: 440.11969, 48 s against 56 s), each training's labels changing little; the labels returned
#: are trained to convergence.
SEARCH_TOL = 1e-3
SEARCH_NEWTON = 1
#: The trainings at the labels returned converge on the search's float32 copy of X to this
#: tolerance first (J's error about its square, 1e-8), then on X itself to ``cg_tol``.
PRESOLVE_TOL = 1e-4
#: CGLS's relative residual in the annealing stages before the last (SVMlin's tolerance relaxed
#: early, tightened at the end). On benchmarks/sparse_scale.py's 10^6 rows it cut the CGLS
#: iterations from 104 to 67 at C = 1, C* = 10 C l / u (J 440.119454 against 440.119449) and
#: from 1,556 to 1,351 at C = C* = 10 (J 32458.65 against 32474.16); kept at SEARCH_TOL in the
#: last stage, whose outputs decide the labels returned (at 3e-2 there too, the first search
#: took 37 Newton steps for 29).
STAGE_TOL = 3e-2
#: Deterministic annealing: the first temperature in units of C*, its decrease a stage, the mean
#: binary entropy of the p_j (nats) that ends it, and the fixed-T rounds at most.
DA_T0 = 10.0
DA_RATE = 1.5
DA_ENTROPY_TOL = 1e-4
DA_MAX_STAGES = 40
DA_INNER = 5
DA_KL_TOL = 1e-6


@dataclass
class PrimalSolution:
    """A solution of the L2-SVM-MFN problem.

    Attributes
    ----------
    w : ndarray of shape (p,)
    b : float
    outputs : ndarray of shape (n,)
        o = X w + b on every row.
    value : float
        The objective at (w, b).
    newton_steps, cg_iterations : int
        Work done (the last is the number of CGLS iterations, each one product with the active
        rows of X and one with their transpose).
    """

    w: np.ndarray
    b: float
    outputs: np.ndarray
    value: float
    newton_steps: int = 0
    cg_iterations: int = 0
    stopped: bool = False


def squared_hinge_value(w: np.ndarray, outputs: np.ndarray, cp: np.ndarray,
                        cn: np.ndarray) -> float:
    """1/2 |w|^2 + sum_i cp_i max(0, 1 - o_i)^2 + cn_i max(0, 1 + o_i)^2."""
    lp = np.maximum(0.0, 1.0 - outputs)
    ln = np.maximum(0.0, 1.0 + outputs)
    return float(0.5 * w @ w + cp @ (lp * lp) + cn @ (ln * ln))


class _Rows:
    """Products with the rows ``rows`` of X (a copy of them when that is cheaper, see
    :data:`SUBSET_SHARE`), the bias column included when there is one.

    Vectors enter the products in X's own precision (a float32 X is a search copy, see
    :func:`primal_tsvm`; scipy would otherwise copy X up to float64 in every product) and
    leave them as float64. With every row of X in the products (no copy), the product on all
    rows is kept in ``last_full``: the line search reads X dz from the conjugate gradients'
    own products instead of forming it anew.
    """

    def __init__(self, X, rows: np.ndarray, bias: bool):
        self.bias = bias
        self.rows = rows
        self.n = X.shape[0]
        self.dtype = X.dtype
        self.full = None
        self.last_full = None
        if sp.issparse(X):
            share = X.indptr[rows + 1].sum() - X.indptr[rows].sum() if rows.size else 0
            if share <= SUBSET_SHARE * max(X.nnz, 1):
                self.Xr = X[rows]
            else:
                self.Xr, self.full = None, X
        else:
            self.Xr = X[rows]

    def forward(self, v: np.ndarray, vb: float) -> np.ndarray:
        v = v.astype(self.dtype, copy=False)
        if self.full is not None:
            self.last_full = np.asarray(self.full @ v, dtype=float).ravel()
            out = self.last_full[self.rows]
        else:
            out = np.asarray(self.Xr @ v, dtype=float).ravel()
        return out + vb if self.bias else out

    def adjoint(self, r: np.ndarray) -> tuple[np.ndarray, float]:
        if self.full is not None:
            big = np.zeros(self.n, dtype=self.dtype)
            big[self.rows] = r
            g = self.full.T @ big
        else:
            g = self.Xr.T @ r.astype(self.dtype, copy=False)
        return np.asarray(g, dtype=float).ravel(), (float(r.sum()) if self.bias else 0.0)


def _cgls(rows: _Rows, D: np.ndarray, t: np.ndarray, w: np.ndarray, b: float,
          o_rows: np.ndarray, tol: float, max_iter: int,
          stop: Optional[Callable[[], bool]] = None) -> tuple:
    """The minimiser of 1/2 |z|^2 + sum_r (D_r o_r^2 - 2 t_r o_r), o = X_r z + zb, by CGLS from
    (w, b), whose outputs on the rows are ``o_rows``. Returns (z, zb, iterations, X (z - w)
    on every row of X without the bias, or None when the products were on a copy of the
    rows)."""
    z, zb = w.copy(), b
    moved = np.zeros(rows.n) if rows.full is not None else None
    r = t - D * o_rows                   # minus half the gradient with respect to the outputs
    gw, gb = rows.adjoint(r)
    gw = 2.0 * gw - z
    gb = 2.0 * gb                        # the bias is not regularised
    pw, pb = gw.copy(), gb
    gamma = gw @ gw + gb * gb
    if gamma <= tol * tol * (z @ z + zb * zb):
        # Already within the tolerance below (a Newton step after one whose active set
        # changed at rows of no weight): no step, and the Newton iteration ends.
        return z, zb, 0, moved
    for it in range(1, max_iter + 1):
        q = rows.forward(pw, pb)
        omega = pw @ pw + 2.0 * (D * q) @ q
        if not omega > 0:
            return z, zb, it, moved
        alpha = gamma / omega
        z += alpha * pw
        zb += alpha * pb
        if moved is not None:
            moved += alpha * rows.last_full
        r -= alpha * (D * q)
        gw, gb = rows.adjoint(r)
        gw = 2.0 * gw - z
        gb = 2.0 * gb
        new = gw @ gw + gb * gb
        # Relative to the point, not to the start: at the minimiser z = 2 X_r' r, so |g| <=
        # tol |z| bounds J's error by about tol^2 J (J >= |z|^2 / 2 and the Hessian is at least
        # the identity on w), from a warm start as from zero. A test relative to the start's
        # gradient asks a warm start, already near the point, for digits floating point cannot
        # give, and runs to max_iter.
        if new <= tol * tol * (z @ z + zb * zb):
            return z, zb, it, moved
        if stop is not None and it % 8 == 0 and stop():
            return z, zb, -it, moved   # cut short: the caller stops too
        pw *= new / gamma
        pw += gw
        pb = gb + (new / gamma) * pb
        gamma = new
    return z, zb, max_iter, moved


def bracketed_line_search(grad0: float, curv: float, g: np.ndarray, h: np.ndarray,
                          c: np.ndarray) -> float:
    """:func:`s3vm.models.l2_svm.exact_line_search`'s step, sorting only the breakpoints
    before a bracket of it.

    The derivative phi'(t) = grad0 + curv t + 2 sum_i c_i h_i max(0, g_i + t h_i) is
    nondecreasing: once phi'(T) >= 0 the step lies in [0, T], where a term whose side does
    not change is a quadratic (or zero) and joins grad0 and curv. Newton's steps are near 1,
    so few of the n breakpoints fall before T, and the sort of all of them (the cost of a
    product with X at 10^5 rows) shrinks to a sort of those few.
    """
    def slope(t):
        m = g + t * h
        on = m > 0
        return grad0 + curv * t + 2.0 * float(np.dot(c[on] * h[on], m[on]))

    T = 1.0
    while slope(T) < 0:
        T *= 4.0
        if T > 1e12:                     # no bracket: sort them all
            return exact_line_search(grad0, curv, g, h, c)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_break = -g / h
    changes = (h != 0) & (t_break > 0) & (t_break < T)
    # The others keep their side at t = 0+ on all of (0, T) (exact_line_search's rule).
    on = ~changes & ((g > 0) | ((g == 0) & (h > 0)))
    ch = c[on] * h[on]
    return exact_line_search(grad0 + 2.0 * float(ch @ g[on]), curv + 2.0 * float(ch @ h[on]),
                             g[changes], h[changes], c[changes])


def l2_svm_mfn(X, cp: np.ndarray, cn: np.ndarray, bias: bool = True,
               start: Optional[PrimalSolution] = None, cg_tol: float = CG_TOL,
               max_cg: int = MAX_CG, max_newton: int = MAX_NEWTON,
               stop: Optional[Callable[[], bool]] = None) -> PrimalSolution:
    """The squared-hinge linear SVM with per-row costs by the modified finite Newton method.

    Parameters
    ----------
    X : scipy.sparse matrix or ndarray of shape (n, p)
        Only products with row subsets of X and their transposes are formed.
    cp, cn : ndarray of shape (n,)
        Costs of row i as a +1 and as a -1 (either may be 0).
    bias : bool
        Whether o = X w + b has a (not regularised) offset b.
    start : PrimalSolution, optional
        Warm start (its w, b and outputs).
    stop : callable, optional
        Asked every few CGLS iterations; True ends the solve at its last point (a descent
        step towards the unfinished Newton point), marked ``stopped``.

    Returns
    -------
    PrimalSolution
    """
    n, p = X.shape
    if start is None:
        w, b, o = np.zeros(p), 0.0, np.zeros(n)
    else:
        w, b, o = start.w.copy(), float(start.b) if bias else 0.0, start.outputs.copy()
    has_p, has_n = cp > 0, cn > 0
    # The line search's terms: every row with a cost on a side, active or not.
    ip, i_n = np.flatnonzero(has_p), np.flatnonzero(has_n)
    c = np.concatenate((cp[ip], cn[i_n]))
    active = None
    steps = iters = 0
    stopped = full_step = False
    for steps in range(1, max_newton + 1):
        on_p = has_p & (o < 1.0)
        on_n = has_n & (o > -1.0)
        D = cp * on_p + cn * on_n
        rows = np.flatnonzero(D > 0)
        if active is not None and np.array_equal(rows, active) and full_step:
            break
        active = rows
        view = _Rows(X, rows, bias)
        z, zb, k, moved = _cgls(view, D[rows], (cp * on_p - cn * on_n)[rows], w, b, o[rows],
                                cg_tol, max_cg, stop)
        stopped = k < 0
        iters += abs(k)
        if k == 0:
            break                           # the gradient is within the tolerance at (w, b)
        dw, db = z - w, zb - b
        if moved is None:
            moved = np.asarray(X @ dw.astype(X.dtype, copy=False), dtype=float).ravel()
        delta = moved + db
        g = np.concatenate((1.0 - o[ip], 1.0 + o[i_n]))
        h = np.concatenate((-delta[ip], delta[i_n]))
        step = bracketed_line_search(float(w @ dw), float(dw @ dw), g, h, c)
        full_step = step >= 1.0 - 1e-12
        w += step * dw
        b += step * db
        o += step * delta
        if step == 0.0 or stopped:
            break
    return PrimalSolution(w, float(b), o, squared_hinge_value(w, o, cp, cn), steps, iters,
                          stopped)


@dataclass
class TSVMResult:
    """A local minimum of the linear S3VM-L2.

    Attributes
    ----------
    labels : ndarray of int, shape (u,)
        +1/-1 of the unlabeled rows, in row order.
    solution : PrimalSolution
        The SVM at those labels (its value is J at them).
    finished : bool
        False when ``stop`` ended the search: the labels are the search's so far and
        ``solution`` its last (unfinished) training, not the SVM at them.
    trainings : int
        L2-SVM-MFN solves.
    beta : ndarray of shape (n,)
        The expansion coefficients of w at the labels returned: beta_i = 2 (cp_i max(0,
        1 - o_i) - cn_i max(0, 1 + o_i)), so that w = X'beta at the optimum (the optimality
        condition of the SVM; to the conjugate gradients' tolerance here).
    """

    labels: np.ndarray
    solution: PrimalSolution
    finished: bool
    trainings: int
    beta: Optional[np.ndarray] = None


def _costs(label: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray]:
    cp = np.where(label > 0, C, 0.0)
    cn = np.where(label < 0, C, 0.0)
    return cp, cn


def labeled_ratio_count(y_labeled: np.ndarray, u: int) -> Optional[int]:
    """round(u x the labeled rows' share of +1); None when that puts every row in one class."""
    count = int(round(u * float(np.mean(y_labeled > 0)))) if y_labeled.size else 0
    return count if 0 < count < u else None


def primal_tsvm(X, label: np.ndarray, C: float, C_star: float, bias: bool = True,
                positives: Optional[int] = None, search: str = "switching",
                anneal=PRIMAL_ANNEAL, cg_tol: float = CG_TOL, search_tol: float = SEARCH_TOL,
                search_newton: int = SEARCH_NEWTON, stage_tol: float = STAGE_TOL,
                search_dtype=np.float32,
                stop: Optional[Callable[[], bool]] = None,
                on_stage: Optional[Callable[[str], None]] = None) -> TSVMResult:
    """A local minimum of the linear S3VM-L2 by multi-switch TSVM or deterministic annealing.

    Parameters
    ----------
    X : scipy.sparse matrix or ndarray of shape (n, p)
    label : ndarray of shape (n,)
        +1/-1 on labeled rows, 0 on unlabeled rows.
    C, C_star : float
        Penalties of the labeled and the unlabeled losses.
    bias : bool
    positives : int, optional
        The balance count P (the fraction r = P / u of SVMlin). Without one, switching anneals
        under the labeled rows' ratio and releases the count at C* (a search free of it from the
        first stage can drift to one class on large data, as
        :func:`s3vm.models.label_switching.label_switching` records); annealing has no
        constraint on the p_j.
    search : {"switching", "annealing"}
        Multi-switch TSVM or deterministic annealing (see the module's notes).
    anneal : sequence of float
        Fractions of C* of the switching stages (the last is 1).
    cg_tol : float
        CGLS's relative residual for the trainings at the labels returned (and the labeled
        rows' first one).
    search_tol, search_newton : float, int
        CGLS's relative residual and the Newton steps at most of the other trainings, which
        only rank the labels.
    stage_tol : float
        CGLS's relative residual in the stages before the last (looser: their labels are
        only a path to the last stage's).
    search_dtype : numpy dtype or None
        The precision of X in those trainings (a copy of a sparse float64 X in it; float32
        products are 1.7 times faster); None: X's own. The trainings at the labels returned
        converge on the copy to :data:`PRESOLVE_TOL`, then on X itself from outputs formed
        anew from w, so that J is X's own.
    stop : callable, optional
        Asked before each training; True ends the search with the labels so far.
    on_stage : callable, optional
        Called with a line before each stage (progress reports).

    Returns
    -------
    TSVMResult
    """
    label = np.asarray(label)
    L, U = np.flatnonzero(label != 0), np.flatnonzero(label == 0)
    cp, cn = _costs(label, C)
    trainings = [0]

    X_search = X
    if (search_dtype is not None and sp.issparse(X) and X.dtype != search_dtype
            and U.size > 0):
        X_search = X.astype(search_dtype)
    exact = [True]                          # whether the outputs are X's own (not X_search's)

    def train(cp, cn, warm, final=True, tol=search_tol):
        # The search's trainings only rank labels: a loose solve is enough (SVMlin's own
        # speed-up), and the labels returned are trained to cg_tol.
        trainings[0] += 1
        if final:
            if warm is not None and X_search is not X:
                # Most of the way on the fast copy (from a one-step search training the
                # optimum can be far: at C* = 10 this training did half of all CGLS
                # iterations), the last digits on X.
                warm = l2_svm_mfn(X_search, cp, cn, bias, warm, max(cg_tol, PRESOLVE_TOL),
                                  stop=stop)
                if warm.stopped:
                    return warm
                exact[0] = False
            if warm is not None and not exact[0]:
                # The search's outputs carry its products' rounding: form them anew.
                outputs = np.asarray(X @ warm.w, dtype=float).ravel() + (warm.b if bias
                                                                          else 0.0)
                warm = PrimalSolution(warm.w, warm.b, outputs, warm.value)
            exact[0] = True
            return l2_svm_mfn(X, cp, cn, bias, warm, cg_tol, stop=stop)
        exact[0] = X_search is X
        return l2_svm_mfn(X_search, cp, cn, bias, warm, max(cg_tol, tol),
                          max_newton=search_newton, stop=stop)

    sol = train(cp, cn, None)             # the labeled rows alone
    if U.size == 0:
        return TSVMResult(np.zeros(0, dtype=int), sol, True, trainings[0],
                          expansion(sol.outputs, cp, cn))
    count = positives
    release = False
    if positives is None and search == "switching":
        count = labeled_ratio_count(label[L], U.size)
        release = count is not None
    finished = True
    if search == "annealing":
        labels, sol, finished = _annealing(X, label, U, C_star, positives, cp, cn, sol,
                                           train, stop, on_stage)
        stages = (1.0,)
    else:
        labels = labels_by_outputs(sol.outputs[U], count)
        stages = tuple(anneal)
    at_labels = polished = False
    switched = U.size
    for k, fraction in enumerate(stages):
        if not finished:
            break
        if on_stage is not None:
            on_stage(f"label switching, stage {k + 1} of {len(stages)}")
        if release and k == len(stages) - 1:
            count = None
        for _ in range(U.size + 1):
            if stop is not None and stop():
                finished = False
                break
            cp[U], cn[U] = _costs(labels, fraction * C_star)
            last = fraction == 1.0
            sol = train(cp, cn, sol, final=last and polished,
                        tol=search_tol if last else max(search_tol, stage_tol))
            if sol.stopped:
                finished = False
                break
            at_labels = last and polished
            switched = _switch(labels, sol.outputs[U], count, switched)
            if not last and switched <= STAGE_SWITCH_SHARE * U.size:
                break
            if not switched:
                if last and not polished and finished:
                    # No pair switches at the loose solve: train to cg_tol, and go on
                    # switching if its outputs differ.
                    polished = True
                    continue
                break
            at_labels = False
    if not at_labels and finished:
        # J is the SVM's value at the labels returned, with the true C*.
        cp[U], cn[U] = _costs(labels, C_star)
        sol = train(cp, cn, sol)
    return TSVMResult(labels.astype(int), sol, finished, trainings[0],
                      expansion(sol.outputs, cp, cn))


def train_at_labels(X, label: np.ndarray, labels_U: np.ndarray, C: float, C_star: float,
                    bias: bool = True, start: Optional[PrimalSolution] = None,
                    stop: Optional[Callable[[], bool]] = None
                    ) -> tuple[PrimalSolution, np.ndarray]:
    """(solution, beta) of the squared-hinge SVM with the unlabeled rows labeled ``labels_U``
    (cost C*): its value is J of those labels, when it is not ``stopped``. For labels a search
    returned before it finished (its last training was cut short)."""
    U = np.flatnonzero(np.asarray(label) == 0)
    cp, cn = _costs(label, C)
    cp[U], cn[U] = _costs(np.asarray(labels_U), C_star)
    sol = l2_svm_mfn(X, cp, cn, bias, start, CG_TOL, stop=stop)
    return sol, expansion(sol.outputs, cp, cn)

def _switch(labels: np.ndarray, f: np.ndarray, count: Optional[int], last: int) -> int:
    """:func:`s3vm.models.label_switching.switch` on the candidates alone: the ``k`` least
    positive outputs among the +1 labels and the ``k`` most positive among the -1 (k a little
    above the ``last`` retraining's switches), found by partition in O(u) instead of two sorts
    of u/2 outputs (at 10^6 rows, 0.1 s each and an eighth of the search). The pairs switched
    are the first ones of the full sort, so the result is the full switch's unless every
    candidate pair switched, in which case the full switch runs on."""
    k = 2 * last + 1000
    pos, neg = np.flatnonzero(labels == 1), np.flatnonzero(labels == -1)
    if count is None or 2 * k >= min(pos.size, neg.size):
        return switch(labels, f, count)
    low = pos[np.argpartition(f[pos], k)[:k]]
    high = neg[np.argpartition(-f[neg], k)[:k]]
    cand = np.concatenate((low, high))
    sub = labels[cand]
    m = switch(sub, f[cand], count)
    labels[cand] = sub
    if m == k:                                  # maybe more beyond the candidates
        m += switch(labels, f, count)
    return m


def expansion(outputs: np.ndarray, cp: np.ndarray, cn: np.ndarray) -> np.ndarray:
    """beta with w = X'beta at the optimum of the squared-hinge SVM (zero off the margin)."""
    return 2.0 * (cp * np.maximum(0.0, 1.0 - outputs) - cn * np.maximum(0.0, 1.0 + outputs))


def _mean_share(g: np.ndarray, T: float, positives: int) -> np.ndarray:
    """p_j = 1 / (1 + exp((g_j - nu) / T)) with nu such that sum p = positives (bisection on
    nu: the sum is increasing in it)."""
    def probs(nu):
        return 0.5 * (1.0 - np.tanh((g - nu) / (2.0 * T)))   # the logistic, without overflow

    lo, hi = float(g.min()) - 40.0 * T, float(g.max()) + 40.0 * T
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if probs(mid).sum() < positives:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, abs(mid)):
            break
    return probs(0.5 * (lo + hi))


def _entropy(p: np.ndarray) -> float:
    q = np.clip(p, 1e-300, 1.0)
    r = np.clip(1.0 - p, 1e-300, 1.0)
    return float(-np.mean(p * np.log(q) + (1.0 - p) * np.log(r)))


def _annealing(X, label, U, C_star, positives, cp, cn, sol, train, stop, on_stage):
    """Deterministic annealing from the labeled rows' SVM ``sol``: the labels it ends at (by
    the outputs, under the count), the last SVM and whether it finished."""
    u = U.size
    T = DA_T0 * C_star
    p = np.full(u, (positives / u) if positives is not None else 0.5)
    finished = True
    for stage in range(DA_MAX_STAGES):
        if on_stage is not None:
            on_stage(f"deterministic annealing, stage {stage + 1}, T = {T:.3g}")
        for _ in range(DA_INNER):
            if stop is not None and stop():
                finished = False
                break
            cp[U], cn[U] = C_star * p, C_star * (1.0 - p)
            sol = train(cp, cn, sol, final=False)
            if sol.stopped:
                finished = False
                break
            o = sol.outputs[U]
            lp, ln = np.maximum(0.0, 1.0 - o), np.maximum(0.0, 1.0 + o)
            g = C_star * (lp * lp - ln * ln)
            if positives is None:
                new = 0.5 * (1.0 - np.tanh(g / (2.0 * T)))
            else:
                new = _mean_share(g, T, positives)
            q = np.clip(new, 1e-12, 1 - 1e-12)
            s = np.clip(p, 1e-12, 1 - 1e-12)
            kl = float(np.mean(q * np.log(q / s) + (1 - q) * np.log((1 - q) / (1 - s))))
            p = new
            if kl < DA_KL_TOL:
                break
        if not finished or _entropy(p) < DA_ENTROPY_TOL:
            break
        T /= DA_RATE
    return labels_by_outputs(sol.outputs[U], positives), sol, finished
