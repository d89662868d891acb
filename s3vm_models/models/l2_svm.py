"""The squared-hinge (L2) kernel SVM, solved exactly: the objective J of S3VM-L2.

J is Chapelle, Sindhwani and Keerthi (2006), eq. (1) with squared losses
(docs/formulations.md#problem-1).

For a full labeling, Problem 1's inner problem is

    s(y) = min_{beta, b}  1/2 beta'K beta + sum_i C_i max(0, 1 - y_i f_i)^2,   f = K beta + b,

(``b = 0`` without bias), with C_i = C on labeled and C* on unlabeled points. It is solved by
Chapelle's primal Newton method in the expansion coefficients (Keerthi and DeCoste's finite
Newton method): each Newton point is the solution of the linear system on the current active set
{i : y_i f_i < 1},

    [K_AA + diag(1 / (2 C_A))  1] [beta_A]   [y_A]
    [1'                        0] [b     ] = [0  ],

and an exact line search on the convex piecewise-quadratic objective makes the iteration
terminate after finitely many steps. At the optimum beta_i = alpha_i y_i with alpha the dual
solution, alpha_i = 2 C_i max(0, 1 - y_i f_i), and s = 1/2 sum alpha.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy.linalg import cholesky, solve_triangular

from s3vm.core.kernels import kernel_matrix
from s3vm.solvers.errors import NumericalError

#: Margin tolerance of the optimality test: a point with y f within this of 1 may sit on either
#: side of the active set (its loss and gradient are zero to second order).
MARGIN_TOL = 1e-10
MAX_NEWTON = 200


@dataclass
class L2SVMSolution:
    """An exact squared-hinge SVM solution.

    Attributes
    ----------
    value : float
        The optimal objective s.
    beta : ndarray of shape (m,)
        Expansion coefficients over the training points (alpha_i y_i; zero off the support).
    b : float
        The offset (0 without bias).
    outputs : ndarray of shape (m,)
        f at the training points.
    active : ndarray of int
        Indices of the support vectors (y_i f_i < 1), increasing.
    newton_steps : int
        Linear systems solved.
    factor : ActiveFactor, optional
        The factor of the final active set (``active`` is its ``rows``).
    """

    value: float
    beta: np.ndarray
    b: float
    outputs: np.ndarray
    active: np.ndarray
    newton_steps: int
    factor: Optional["ActiveFactor"] = None


class ActiveFactor:
    """The Cholesky factor of the active set's system, kept for warm starts and add-one-in.

    With P = K_AA + diag(1 / (2 C_A)) = L L', it holds ``L``, ``Ly`` = L^-1 y_A and ``Le`` =
    L^-1 1. The bordered system with bias then needs no second factor: b = Le.Ly / Le.Le and
    beta_A = L'^-1 (Ly - b Le), and the SVM value is 1/2 (|Ly|^2 - (Le.Ly)^2 / |Le|^2) (the
    last term dropped without bias). Appending a point costs one triangular solve.

    Parameters
    ----------
    rows : ndarray of int
        The active points (indices into the kernel matrix), in the factor's order.
    L : ndarray of shape (a, a)
        Lower triangular factor.
    Ly, Le : ndarray of shape (a,)
    bias : bool
    """

    __slots__ = ("rows", "L", "Ly", "Le", "bias")

    def __init__(self, rows, L, Ly, Le, bias):
        self.rows, self.L, self.Ly, self.Le, self.bias = rows, L, Ly, Le, bias

    @classmethod
    def build(cls, K: np.ndarray, y: np.ndarray, inv2c: np.ndarray, rows: np.ndarray,
              bias: bool) -> "ActiveFactor":
        """Factor the system of the active points ``rows`` (indices into K, y and inv2c)."""
        rows = np.asarray(rows, dtype=int)
        P = K[np.ix_(rows, rows)]
        P[np.diag_indices_from(P)] += inv2c[rows]
        try:
            L = cholesky(P, lower=True, check_finite=False) if rows.size else np.zeros((0, 0))
        except np.linalg.LinAlgError:
            big = float(np.abs(np.diag(P)).max(initial=0.0))
            raise NumericalError(
                f"the squared-hinge SVM's system is singular to working precision (kernel "
                f"values up to {big:.3g} against 1/(2C) = {float(inv2c[rows].min()):.3g}): "
                "scale the features (--scale standard) or lower --C/--C-star") from None
        Ly = solve_triangular(L, y[rows], lower=True, check_finite=False)
        Le = solve_triangular(L, np.ones(rows.size), lower=True, check_finite=False)
        return cls(rows, L, Ly, Le, bias)

    def appended(self, row: int, k_col: np.ndarray, k_diag: float, y_row: float
                 ) -> Optional["ActiveFactor"]:
        """The factor with one more point (block formula), or None if it is not positive.

        ``k_col`` is K[rows, row] and ``k_diag`` is K[row, row] + 1 / (2 C_row).
        """
        a = self.rows.size
        ell = solve_triangular(self.L, k_col, lower=True, check_finite=False) if a else k_col
        d2 = k_diag - ell @ ell
        if not d2 > 0:
            return None
        d = np.sqrt(d2)
        L = np.zeros((a + 1, a + 1))
        L[:a, :a] = self.L
        L[a, :a] = ell
        L[a, a] = d
        Ly = np.append(self.Ly, (y_row - ell @ self.Ly) / d)
        Le = np.append(self.Le, (1.0 - ell @ self.Le) / d)
        return ActiveFactor(np.append(self.rows, row), L, Ly, Le, self.bias)

    def offset(self) -> float:
        if not self.bias or self.rows.size == 0:
            return 0.0
        return float(self.Le @ self.Ly / (self.Le @ self.Le))

    def coefficients(self) -> tuple[np.ndarray, float]:
        """beta_A and b of the Newton point."""
        b = self.offset()
        if self.rows.size == 0:
            return np.zeros(0), b
        beta = solve_triangular(self.L, self.Ly - b * self.Le, lower=True, trans="T",
                                check_finite=False)
        return beta, b

    def value(self) -> float:
        """The SVM objective at the Newton point, when it is the optimum (1/2 sum alpha)."""
        v = self.Ly @ self.Ly
        if self.bias and self.rows.size:
            v -= (self.Le @ self.Ly) ** 2 / (self.Le @ self.Le)
        return float(0.5 * v)


def newton_point(K: np.ndarray, y: np.ndarray, inv2c: np.ndarray, active: np.ndarray,
                 bias: bool) -> tuple[np.ndarray, float, ActiveFactor]:
    """The minimiser of the quadratic model on the active set ``active``.

    Returns ``beta_A`` (coefficients of the active points), ``b`` and the factor.
    """
    factor = ActiveFactor.build(K, y, inv2c, active, bias)
    beta, b = factor.coefficients()
    return beta, b, factor


def exact_line_search(grad0: float, curv: float, g: np.ndarray, h: np.ndarray,
                      c: np.ndarray) -> float:
    """argmin_{t >= 0} of grad0 t + curv t^2 / 2 + sum_i c_i max(0, g_i + t h_i)^2.

    The derivative is nondecreasing and piecewise linear; the root is found by sweeping the
    breakpoints t_i = -g_i / h_i in increasing order (vectorised with cumulative sums).
    """
    # Slope and intercept of phi'(t) on [0, first breakpoint).
    # A point at g = 0 moving inwards (h > 0) is charged from t = 0+ on.
    on = (g > 0) | ((g == 0) & (h > 0))
    a0 = grad0 + 2.0 * np.sum(c[on] * h[on] * g[on])
    a1 = curv + 2.0 * np.sum(c[on] * h[on] ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_break = -g / h
    # A point changes side at t_i > 0: entering (h > 0, g <= 0) or leaving (h < 0, g > 0).
    moves = (h != 0) & (t_break > 0) & ((h > 0) != on)
    idx = np.flatnonzero(moves)
    order = idx[np.argsort(t_break[idx], kind="stable")]
    tb = t_break[order]
    sign = np.where(h[order] > 0, 1.0, -1.0)
    d0 = np.concatenate(([a0], a0 + np.cumsum(sign * 2.0 * c[order] * h[order] * g[order])))
    d1 = np.concatenate(([a1], a1 + np.cumsum(sign * 2.0 * c[order] * h[order] ** 2)))
    # phi' at each breakpoint, from the piece on its left (phi' is continuous).
    at_break = d0[:-1] + d1[:-1] * tb
    past = np.flatnonzero(at_break >= 0)
    k = past[0] if past.size else tb.size
    if d1[k] <= 0:
        # Flat piece: only possible when phi' is already >= 0 there (a descent direction keeps
        # phi' < 0 at 0 otherwise); stay at its left end.
        return float(tb[k - 1]) if k > 0 else 0.0
    return float(max(-d0[k] / d1[k], 0.0))


def _not_converged(max_newton: int, C: np.ndarray) -> "NumericalError":
    """The error of a Newton solve that ran out of steps: singular systems at a huge C."""
    return NumericalError(
        f"the squared-hinge SVM did not converge in {max_newton} Newton steps: with C up to "
        f"{float(C.max(initial=0.0)):g} its systems are singular to working precision; lower "
        "--C/--C-star (1e6 or less) or scale the features")


def squared_hinge_svm(K: np.ndarray, y: np.ndarray, C: np.ndarray, bias: bool = True,
                      active: Optional[np.ndarray] = None,
                      max_newton: int = MAX_NEWTON) -> L2SVMSolution:
    """Train the squared-hinge SVM exactly.

    Parameters
    ----------
    K : ndarray of shape (m, m)
        Kernel matrix of the training points.
    y : ndarray of shape (m,)
        Labels +1/-1.
    C : ndarray of shape (m,) or float
        Per-point penalties C_i > 0 (points with C_i = 0 take no part and get beta_i = 0).
    bias : bool
        Whether f has an offset b.
    active : ndarray of int, optional
        A guess of the support vectors (a warm start); default all points.
    max_newton : int
        Safety cap on Newton steps (finite convergence makes it unreachable in practice).

    Returns
    -------
    L2SVMSolution
    """
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    m = y.size
    C = np.broadcast_to(np.asarray(C, dtype=float), (m,))
    used = C > 0
    with np.errstate(divide="ignore"):
        inv2c = np.where(used, 0.5 / np.where(used, C, 1.0), np.inf)
    if active is None:
        active = np.flatnonzero(used)
    else:
        active = np.intersect1d(np.asarray(active, dtype=int), np.flatnonzero(used))
    if bias and not (np.any(y[used] > 0) and np.any(y[used] < 0)):
        # One class only: w = 0 and b = y makes every margin 1 at zero cost.
        b = float(y[used][0]) if used.any() else 0.0
        return L2SVMSolution(0.0, np.zeros(m), b, np.full(m, b), np.zeros(0, dtype=int), 0)

    def consistent(f, members):
        # The Newton point of ``members`` is optimal when the active set at it is ``members``,
        # up to points on the margin (zero loss and gradient either way).
        margin = y * f
        inside = np.zeros(m, dtype=bool)
        inside[members] = True
        return (np.all(margin[members] <= 1.0 + MARGIN_TOL)
                and np.all(margin[used & ~inside] >= 1.0 - MARGIN_TOL))

    beta = np.zeros(m)
    beta_A, b, factor = newton_point(K, y, inv2c, active, bias)
    beta[active] = beta_A
    f = K[:, active] @ beta_A + b
    steps = 1
    optimal = consistent(f, active)
    while not optimal:
        if steps >= max_newton:
            raise _not_converged(max_newton, C)
        margin = y * f
        active = np.flatnonzero(used & (margin < 1.0))
        target_A, target_b, target_factor = newton_point(K, y, inv2c, active, bias)
        steps += 1
        target = np.zeros(m)
        target[active] = target_A
        f_target = K[:, active] @ target_A + target_b
        if consistent(f_target, active):
            beta, b, f, factor = target, target_b, f_target, target_factor
            break
        d_beta = target - beta
        d_b = target_b - b
        df = f_target - f
        # phi(t) = 1/2 (beta + t d)'K(beta + t d) + loss(f + t df), with K beta = f - b and
        # K d = df - d_b: the line search needs no kernel product.
        grad0 = float(beta @ (df - d_b))
        curv = float(d_beta @ (df - d_b))
        t = exact_line_search(grad0, curv, (1.0 - margin)[used], (-y * df)[used], C[used])
        if t == 1.0:
            beta, b, f, factor = target, target_b, f_target, target_factor
        else:
            beta, b, f = beta + t * d_beta, b + t * d_b, f + t * df
    value = objective_at(K, y, C, beta, f, b)
    return L2SVMSolution(value, beta, float(b), f, factor.rows, steps, factor)


def objective_at(K, y, C, beta, f, b) -> float:
    """1/2 beta'K beta + sum C_i max(0, 1 - y_i f_i)^2 at an iterate (K beta = f - b)."""
    slack = np.maximum(0.0, 1.0 - y * f)
    return float(0.5 * beta @ (f - b) + np.sum(C * slack * slack))


class LabelingObjective:
    """What an objective over labelings of the unlabeled rows reads of one instance: the kernel
    matrix K, the rows, the penalties C (C on labeled rows, C* on unlabeled ones) and the labels
    y (0 on the unlabeled rows); S3VM-L2's J (:class:`S3VMObjective`) and the hinge loss's
    (:class:`s3vm.models.hinge_svm.HingeObjective`) share it."""

    def __init__(self, instance, settings, K=None):
        self.K = kernel_matrix(instance.X, kernel=settings.kernel, sigma=settings.sigma) \
            if K is None else K
        self.labeled, self.unlabeled = instance.labeled, instance.unlabeled
        self.C = np.where(instance.label != 0, float(settings.C), float(settings.C_unlabeled))
        self.y = instance.label.astype(float)

    @property
    def u(self) -> int:
        return self.unlabeled.size

    def full_labels(self, labels_U: np.ndarray) -> np.ndarray:
        """The label vector of all n rows with ``labels_U`` on the unlabeled rows."""
        y = self.y.copy()
        y[self.unlabeled] = labels_U
        return y


class S3VMObjective(LabelingObjective):
    """J(y_U) of Problem 1 for one instance and settings (the objective every S3VM-L2 tool uses).

    Parameters
    ----------
    instance : Instance
    settings : Settings
        ``kernel``, ``sigma``, ``C``, ``C_star`` and ``bias`` are read.

    Attributes
    ----------
    K : ndarray of shape (n, n)
        The kernel matrix of all points, in file order.
    C : ndarray of shape (n,)
        C on labeled rows, C* on unlabeled rows.
    labeled, unlabeled : ndarray of int
        Row indices.
    """

    def __init__(self, instance, settings):
        super().__init__(instance, settings)
        self.bias = bool(settings.bias)

    def solve(self, labels_U: np.ndarray, active: Optional[np.ndarray] = None) -> L2SVMSolution:
        """The SVM trained on every point with the unlabeled rows labeled ``labels_U``."""
        labels_U = np.asarray(labels_U)
        if labels_U.shape != (self.u,) or not np.all(np.abs(labels_U) == 1):
            raise ValueError(f"labels_U must hold {self.u} values +1/-1")
        return squared_hinge_svm(self.K, self.full_labels(labels_U), self.C, self.bias, active)

    def train(self, y: np.ndarray, C: np.ndarray, warm=None) -> L2SVMSolution:
        """The SVM with labels ``y`` and penalties ``C`` on all rows, its active set guessed
        from the solution ``warm``."""
        return squared_hinge_svm(self.K, y, C, self.bias, None if warm is None else warm.active)

    def evaluate(self, labels_U: np.ndarray, warm=None):
        """The objective's own solution at ``labels_U`` (a balance it carries included),
        warm-started from a solution of :meth:`train`: what a search over labelings reports."""
        return self.train(self.full_labels(np.asarray(labels_U)), self.C, warm)

    def __call__(self, labels_U: np.ndarray) -> float:
        """J(labels_U)."""
        return self.solve(labels_U).value


@dataclass
class PrimalSolution:
    """An exact squared-hinge SVM solution on explicit features: f = G w + b.

    Attributes
    ----------
    value : float
        The optimal objective 1/2 |w|^2 + sum_i C_i max(0, 1 - y_i f_i)^2.
    w : ndarray of shape (r,)
    b : float
    outputs : ndarray of shape (m,)
    active : ndarray of int
        The points with y_i f_i < 1 (and C_i > 0), increasing.
    newton_steps : int
    gram : ActiveGram, optional
        The normal matrix of the last Newton point, for a warm start.
    """

    value: float
    w: np.ndarray
    b: float
    outputs: np.ndarray
    active: np.ndarray
    newton_steps: int
    gram: Optional["ActiveGram"] = None


class ActiveGram:
    """M = Z_A' diag(C_A) Z_A + I/2 (Z = [G 1]) of an active set, updated point by point.

    The Newton point of Keerthi and DeCoste's method solves M [w; b] = Z_A' diag(C_A) y_A.
    Between Newton steps, and between the retrainings of label switching, few points enter or
    leave A (or change C_i), so updating M by their rows costs (changed) r^2 instead of |A| r^2;
    M is recomputed from scratch after :attr:`REFRESH` updates, against rounding drift.
    """

    REFRESH = 50

    __slots__ = ("weight", "M", "updates")

    def __init__(self, Z: np.ndarray, weight: np.ndarray):
        self.weight = weight.copy()  # C_i on the active points, 0 elsewhere
        on = np.flatnonzero(weight)
        Zon = Z[on]
        self.M = Zon.T @ (weight[on, None] * Zon)
        self.updates = 0

    def moved(self, Z: np.ndarray, weight: np.ndarray) -> "ActiveGram":
        """The Gram matrix of the weights ``weight`` (updated in place when few rows change)."""
        changed = np.flatnonzero(weight != self.weight)
        if self.updates >= self.REFRESH or 2 * changed.size > max(np.count_nonzero(weight), 1):
            return ActiveGram(Z, weight)
        if changed.size:
            Zc = Z[changed]
            delta = weight[changed] - self.weight[changed]
            self.M += Zc.T @ (delta[:, None] * Zc)
            self.weight[changed] = weight[changed]
            self.updates += 1
        return self


def _features_with_bias(G: np.ndarray, bias: bool) -> np.ndarray:
    return np.hstack([G, np.ones((G.shape[0], 1))]) if bias else G


def _newton_target(Z, y, C, active, r, gram: Optional[ActiveGram]
                   ) -> tuple[np.ndarray, float, ActiveGram]:
    """argmin 1/2 |w|^2 + sum_{i in A} C_i (y_i - g_i'w - b)^2: the Newton point of the active
    set A, from the (r + 1)-square normal equations (no m x m matrix is formed)."""
    weight = np.zeros(y.size)
    weight[active] = C[active]
    gram = ActiveGram(Z, weight) if gram is None else gram.moved(Z, weight)
    M = gram.M.copy()
    M[np.arange(r), np.arange(r)] += 0.5
    rhs = Z[active].T @ (C[active] * y[active])
    try:
        sol = np.linalg.solve(M, rhs)
    except np.linalg.LinAlgError:
        # No active point (or one class of them only): b is not determined; any least-squares
        # solution is a Newton point.
        sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
    return sol[:r], (float(sol[r]) if Z.shape[1] > r else 0.0), gram


def squared_hinge_primal(G: np.ndarray, y: np.ndarray, C, bias: bool = True,
                         start: Optional[PrimalSolution] = None,
                         max_newton: int = MAX_NEWTON, Z: Optional[np.ndarray] = None
                         ) -> PrimalSolution:
    """Train the squared-hinge SVM exactly in the primal of features G (kernel G G').

    Keerthi and DeCoste's (2005) modified finite Newton method (L2-SVM-MFN, the inner solver of
    Sindhwani and Keerthi's 2006 large-scale TSVM): from ``start``, alternate the regularized
    least-squares fit on the active set {i : y_i f_i < 1} with an exact line search on the
    piecewise-quadratic objective, until the active set is that of its own fit. With G G' = K
    it solves the same problem as :func:`squared_hinge_svm` (w = G' beta), at a cost linear in
    the number of points.

    Parameters
    ----------
    G : ndarray of shape (m, r)
        Features of the training points.
    y : ndarray of shape (m,)
        Labels +1/-1.
    C : ndarray of shape (m,) or float
        Per-point penalties C_i >= 0 (points with C_i = 0 take no part).
    bias : bool
    start : PrimalSolution, optional
        A warm start (its w, b and normal matrix); default w = 0, b = 0. Any point is a valid
        start.
    max_newton : int
    Z : ndarray of shape (m, r + bias), optional
        [G 1] (G without bias), when the caller keeps it.

    Returns
    -------
    PrimalSolution
    """
    G = np.asarray(G, dtype=float)
    y = np.asarray(y, dtype=float)
    m, r = G.shape
    C = np.broadcast_to(np.asarray(C, dtype=float), (m,))
    used = C > 0
    if bias and not (np.any(y[used] > 0) and np.any(y[used] < 0)):
        b = float(y[used][0]) if used.any() else 0.0
        return PrimalSolution(0.0, np.zeros(r), b, np.full(m, b), np.zeros(0, dtype=int), 0)
    Z = _features_with_bias(G, bias) if Z is None else Z
    if start is None:
        w, b, gram = np.zeros(r), 0.0, None
    else:
        w, b, gram = np.array(start.w, dtype=float), float(start.b) if bias else 0.0, start.gram
    f = G @ w + b
    steps = 0
    while True:
        if steps >= max_newton:
            raise _not_converged(max_newton, C)
        margin = y * f
        active = np.flatnonzero(used & (margin < 1.0))
        target_w, target_b, gram = _newton_target(Z, y, C, active, r, gram)
        steps += 1
        f_target = G @ target_w + target_b
        m_target = y * f_target
        inside = np.zeros(m, dtype=bool)
        inside[active] = True
        if (np.all(m_target[active] <= 1.0 + MARGIN_TOL)
                and np.all(m_target[used & ~inside] >= 1.0 - MARGIN_TOL)):
            w, b, f = target_w, target_b, f_target
            break
        d_w, d_b, df = target_w - w, target_b - b, f_target - f
        t = exact_line_search(float(w @ d_w), float(d_w @ d_w), (1.0 - margin)[used],
                              (-y * df)[used], C[used])
        w, b, f = w + t * d_w, b + t * d_b, f + t * df
    slack = np.maximum(0.0, 1.0 - y * f)
    value = float(0.5 * w @ w + np.sum(C * slack * slack))
    return PrimalSolution(value, w, float(b), f, np.flatnonzero(used & (y * f < 1.0)), steps,
                          gram)


class FactorObjective(S3VMObjective):
    """J(y_U) of Problem 1 on a kernel given by features: K = G G' (exact for the linear
    kernel's G = X, Nystroem's approximation for rbf), solved in the primal at a cost linear in n.

    Parameters
    ----------
    instance : Instance
    settings : Settings
    G : ndarray of shape (n, r)
        Features of all points, in file order.
    exact : bool
        Whether G G' is the instance's kernel (then J is the instance's objective).
    landmarks, V : ndarray, optional
        For G = K[:, landmarks] V (Nystroem): then f = G w + b is the kernel expansion
        sum_j (V w)_j k(x_landmark_j, x) + b, which :meth:`beta` returns over the rows.
    """

    def __init__(self, instance, settings, G: np.ndarray, exact: bool,
                 landmarks: Optional[np.ndarray] = None, V: Optional[np.ndarray] = None):
        self.G = np.asarray(G, dtype=float)
        self._Z = _features_with_bias(self.G, bool(settings.bias))
        self.exact = bool(exact)
        self.landmarks, self.V = landmarks, V
        self.bias = bool(settings.bias)
        self.labeled, self.unlabeled = instance.labeled, instance.unlabeled
        self.C = np.where(instance.label != 0, float(settings.C), float(settings.C_unlabeled))
        self.y = instance.label.astype(float)

    def train(self, y: np.ndarray, C: np.ndarray, warm=None) -> PrimalSolution:
        """The SVM with labels ``y`` and penalties ``C`` on all rows, from the solution ``warm``."""
        return squared_hinge_primal(self.G, y, C, self.bias, warm, Z=self._Z)

    def solve(self, labels_U: np.ndarray, warm=None) -> PrimalSolution:
        """The SVM trained on every point with the unlabeled rows labeled ``labels_U``."""
        labels_U = np.asarray(labels_U)
        if labels_U.shape != (self.u,) or not np.all(np.abs(labels_U) == 1):
            raise ValueError(f"labels_U must hold {self.u} values +1/-1")
        return self.train(self.full_labels(labels_U), self.C, warm)

    def beta(self, solution: PrimalSolution) -> np.ndarray:
        """Expansion coefficients over the rows: f = K beta + b on new points (on the
        landmarks for Nystroem; else the least-norm beta with G' beta = w, w being a
        combination of the rows' features at the optimum)."""
        if self.landmarks is not None:
            beta = np.zeros(self.y.size)
            beta[self.landmarks] = self.V @ solution.w
            return beta
        return np.linalg.lstsq(self.G.T, solution.w, rcond=None)[0]
