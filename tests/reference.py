"""Pieces of the tests' independent computations, written apart from the package's code."""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import minimize


def dense_kernel(X, kind: str, sigma: float) -> np.ndarray:
    """The n x n kernel matrix, linear or rbf exp(-|x_i - x_j|^2 / (2 sigma^2)), by broadcasting
    (small instances only)."""
    X = np.asarray(X, dtype=float)
    if kind == "linear":
        return X @ X.T
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-sq / (2.0 * sigma ** 2))


def l2_svm_value(K, y, C, bias: bool) -> float:
    """The optimum of the squared-hinge SVM primal 1/2 |w|^2 + sum_i C_i max(0, 1 - y_i f_i)^2
    with an explicit feature map of K (its eigendecomposition), solved by CVXPY and Clarabel:
    J of Problem 1 at a full labeling y."""
    vals, vecs = np.linalg.eigh(K)
    keep = vals > 1e-10 * vals.max()
    return l2_svm_value_factor(vecs[:, keep] * np.sqrt(vals[keep]), y, C, bias)


def l2_svm_value_factor(G, y, C, bias: bool) -> float:
    """:func:`l2_svm_value` on explicit features G (K = G G')."""
    import cvxpy as cp

    w = cp.Variable(G.shape[1])
    b = cp.Variable() if bias else 0.0
    f = G @ w + b
    loss = cp.sum(cp.multiply(C, cp.square(cp.pos(1 - cp.multiply(y, f)))))
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + loss))
    problem.solve(solver="CLARABEL")
    return problem.value


def l2_objective(instance, settings, labels_U) -> float:
    """J(y_U) of Problem 1 from its definition (:class:`L2Reference`) with ``labels_U`` on the
    unlabeled rows, C on labeled and C* on unlabeled rows."""
    return L2Reference(instance, settings)(labels_U)

# -- Problem 3 (docs/formulations.md#bd-mip): the LP of one labeling, and all of them ---------
def problem3_columns(instance, kernel: str, sigma: float):
    """(A, d, B): the columns of Problem 3 for the labeled and unlabeled points (rbf: kernel
    values against every point) and the labeled labels."""
    X = np.asarray(instance.X, dtype=float)
    if kernel == "rbf":
        X = dense_kernel(X, "rbf", sigma)
    labeled = instance.label != 0
    return X[labeled], instance.label[labeled].astype(float), X[~labeled]


def problem3_labeling_lp(A, d, B, signs, mu, nu, tolerance=1e-10):
    """(optimum, w, g) of the LP of Problem 3 with unlabeled point j on side signs[j], written
    from the math as dense matrices in the variables (w, g, y, z, q) and solved by
    scipy.optimize.linprog:

        min  e'y + mu e'z + nu e'q
        s.t. D(A w - e g) + y >= e,  -z <= w <= z,  s_j (B_j w - g) + q_j >= 1,  y, z, q >= 0.

    The feasibility and optimality tolerances are 1e-10 (``tolerance``), so that the costs mu
    and nu of 1e-9 to 1e5 stay above them (on a near-singular rbf kernel HiGHS calls the LP
    unbounded at 1e-10: 1e-7, its default, is the check there)."""
    from scipy.optimize import linprog

    A, B, d, signs = (np.asarray(v, dtype=float) for v in (A, B, d, signs))
    l, p = A.shape
    u = B.shape[0]
    c = np.concatenate([np.zeros(p + 1), np.ones(l), mu * np.ones(p), nu * np.ones(u)])
    zl, zp, zu = np.zeros((l, p)), np.zeros((p, l)), np.zeros((u, l))
    rows = [
        np.hstack([-d[:, None] * A, d[:, None], -np.eye(l), zl, np.zeros((l, u))]),
        np.hstack([np.eye(p), np.zeros((p, 1)), zp, -np.eye(p), np.zeros((p, u))]),
        np.hstack([-np.eye(p), np.zeros((p, 1)), zp, -np.eye(p), np.zeros((p, u))]),
        np.hstack([-signs[:, None] * B, signs[:, None], zu, np.zeros((u, p)), -np.eye(u)]),
    ]
    b = np.concatenate([-np.ones(l), np.zeros(2 * p), -np.ones(u)])
    bounds = [(None, None)] * (p + 1) + [(0, None)] * (l + p + u)
    res = linprog(c, A_ub=np.vstack(rows), b_ub=b, bounds=bounds, method="highs",
                  options={"primal_feasibility_tolerance": tolerance,
                           "dual_feasibility_tolerance": tolerance})
    assert res.status == 0, res.message
    return float(res.fun), res.x[:p], float(res.x[p])


def labelings(u: int, positives=None):
    """Every labeling in {-1, +1}^u (with exactly ``positives`` +1 when given), as arrays."""
    for signs in itertools.product((-1, 1), repeat=u):
        signs = np.array(signs)
        if positives is None or int(np.sum(signs == 1)) == positives:
            yield signs


def problem3_values(instance, settings) -> dict:
    """{labeling (tuple): its LP optimum} over every labeling that meets the settings' count."""
    A, d, B = problem3_columns(instance, settings.kernel, settings.sigma)
    P = settings.positive_count(instance) if settings.balance == "count" else None
    return {tuple(s): problem3_labeling_lp(A, d, B, s, settings.mu, settings.nu)[0]
            for s in labelings(instance.u, P)}


# -- Problem 1 (S3VM-L2, docs/formulations.md#problem-1) from the primal -----------------------
class L2Reference:
    """J(y) of S3VM-L2 at full labelings, from the primal in factor form, with or without the
    mean balance (docs/formulations.md#balance): with K = G G' and an output o_i = f_i + e_i,

        J(y) = min 1/2 |c|^2 + sum_i C_i e_i^2   s.t.  f = G c (+ b),  y o (f + e) >= 1
                                                      [sum_{j in U} (f_j + e_j) = u mean(y_L)],

    one CVXPY problem with the labels as a parameter, solved by Clarabel at each labeling (the
    code under test works in output space, with Newton or active-set steps, or hands a MIQP to
    SCIP). Without the mean row the slack e_i may be taken >= 0 on the side of y_i, so this is
    the squared hinge. J is inf at a labeling that cannot meet the balance."""

    def __init__(self, instance, settings):
        import cvxpy as cp

        n = instance.n
        K = dense_kernel(instance.X, settings.kernel, settings.sigma)
        C = np.where(instance.label != 0, settings.C, settings.C_unlabeled).astype(float)
        w, V = np.linalg.eigh(K)
        G = V * np.sqrt(np.maximum(w, 0.0))
        self.y = cp.Parameter(n)
        c, e = cp.Variable(G.shape[1]), cp.Variable(n)
        f = G @ c
        if settings.bias:
            f = f + cp.Variable()
        out = f + e
        constraints = [cp.multiply(self.y, out) >= 1]
        if settings.balance == "mean":
            yL = instance.label[instance.labeled].astype(float)
            constraints.append(cp.sum(out[instance.unlabeled]) == instance.u * yL.mean())
        self.problem = cp.Problem(
            cp.Minimize(0.5 * cp.sum_squares(c) + cp.sum(cp.multiply(C, cp.square(e)))),
            constraints)
        self.instance = instance

    def __call__(self, labels_U) -> float:
        y = self.instance.label.astype(float)
        y[self.instance.unlabeled] = labels_U
        self.y.value = y
        self.problem.solve(solver="CLARABEL")
        return float(self.problem.value) if self.problem.status == "optimal" else np.inf

    def all_values(self, positives=None) -> dict:
        """{labeling (tuple): J} over every labeling (with exactly ``positives`` +1)."""
        return {tuple(s): self(s) for s in labelings(self.instance.u, positives)}


# -- a labeling's objective for every Problem (linear kernel for 1 and 2) -------------------

def j_by_lbfgs(X, y, C, bias):
    """J(y) of the squared-hinge linear SVM (Problem 1), by L-BFGS-B."""
    return svm_by_lbfgs(X, y, C, bias)[0]


def svm_by_lbfgs(X, y, C, bias):
    """(J, f) of the squared-hinge linear SVM (Problem 1) at labels ``y``, f = X w + b, by
    L-BFGS-B."""
    def fun(x):
        w, b = x[:-1], x[-1] if bias else 0.0
        slack = np.maximum(0.0, 1.0 - y * (X @ w + b))
        grad_f = -2.0 * C * slack * y
        grad_b = grad_f.sum() if bias else 0.0
        return 0.5 * w @ w + C * slack @ slack, np.r_[w + X.T @ grad_f, grad_b]
    res = minimize(fun, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    w, b = res.x[:-1], res.x[-1] if bias else 0.0
    return res.fun, X @ w + b


def d_by_qp(X, y, C):
    """D(y) = max 2 1'a - a'(K o yy')a over 0 <= a <= C, linear K (Problem 2), as a QP in the
    factor form |X'(y o a)|^2 by CVXPY and Clarabel (L-BFGS-B stopped 0.5% short of it on
    heart's unscaled features)."""
    import cvxpy as cp

    a = cp.Variable(len(y))
    problem = cp.Problem(cp.Maximize(2 * cp.sum(a) - cp.sum_squares(X.T @ cp.multiply(y, a))),
                         [a >= 0, a <= C])
    problem.solve(solver="CLARABEL")
    return float(problem.value)


def labeling_objective_reference(problem, instance, settings, labels):
    """The objective of Problem ``problem`` (1, 2 or 3) at a full labeling, linear kernel for
    Problems 1 and 2 (J by L-BFGS-B, D(y) by Clarabel), the labeling LP for Problem 3."""
    X = np.asarray(instance.X, dtype=float)
    y = instance.label.astype(float)
    y[instance.unlabeled] = labels
    C = np.where(np.isin(np.arange(instance.n), instance.labeled), settings.C,
                 settings.C_unlabeled)
    if problem == 1:
        return j_by_lbfgs(X, y, C, settings.bias)
    if problem == 2:
        return d_by_qp(X, y, C)
    A, d, B = problem3_columns(instance, settings.kernel, settings.sigma)
    return problem3_labeling_lp(A, d, B, labels, settings.mu, settings.nu)[0]
