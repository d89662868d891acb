"""Pieces of the tests' independent computations, written apart from the package's code."""

from __future__ import annotations

import numpy as np


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
    import cvxpy as cp

    vals, vecs = np.linalg.eigh(K)
    keep = vals > 1e-10 * vals.max()
    G = vecs[:, keep] * np.sqrt(vals[keep])
    w = cp.Variable(G.shape[1])
    b = cp.Variable() if bias else 0.0
    f = G @ w + b
    loss = cp.sum(cp.multiply(C, cp.square(cp.pos(1 - cp.multiply(y, f)))))
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + loss))
    problem.solve(solver="CLARABEL")
    return problem.value


def l2_objective(instance, settings, labels_U) -> float:
    """J(y_U) of Problem 1 from its definition: the squared-hinge SVM of :func:`l2_svm_value` on
    the instance's kernel (:func:`dense_kernel`) with ``labels_U`` on the unlabeled rows, C on
    labeled and C* on unlabeled rows."""
    K = dense_kernel(instance.X, settings.kernel, settings.sigma)
    y = instance.label.astype(float)
    y[instance.unlabeled] = labels_U
    C = np.where(instance.label != 0, settings.C, settings.C_unlabeled)
    return float(l2_svm_value(K, y, C, bool(settings.bias)))
