"""The supervised value D(y) of Problem 2 at a full labeling (docs/formulations.md#problem-2):

    D(y) = max_{0 <= a <= C} 2 1'a - a'(K o yy')a          (no upper bound: hard margin)

D(y) is twice the optimum of the soft-margin SVM without bias, 1/2 |w|^2 + C sum xi. At the labels
rounded from an SDP relaxation it is an upper bound on min_y D(y); the relaxation's optimum is a
lower bound (De Bie and Cristianini 2006, section 7.1.4; docs/formulations.md#sdp-bounds).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.solvers.runtime.processes import native_threads


def psd_factor(K: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """G with G G' = K (eigenvectors scaled by the square roots of the positive eigenvalues)."""
    vals, vecs = np.linalg.eigh((K + K.T) / 2.0)
    keep = vals > tol * max(1.0, float(vals.max(initial=0.0)))
    return vecs[:, keep] * np.sqrt(vals[keep])


def svm_dual_value(K: np.ndarray, y: np.ndarray, C: Optional[np.ndarray]
                   ) -> tuple[Optional[float], Optional[np.ndarray]]:
    """(D(y), the maximising a), solved with Clarabel through CVXPY; D(y) certified from above
    (see :func:`svm_dual_value_factor`).

    ``C`` is the per-point upper bound on a, or None for the hard margin. A hard-margin problem
    whose labeling cannot be separated returns (inf, None); a solve that fails (None, None).
    """
    return svm_dual_value_factor(psd_factor(K), y, C)


def svm_dual_value_factor(G: np.ndarray, y: np.ndarray, C: Optional[np.ndarray]
                          ) -> tuple[Optional[float], Optional[np.ndarray]]:
    """D(y) on the kernel G G' (see :func:`s3vm.models.svm_dual.svm_dual_value`), from the factor
    (no n x n matrix): max 2 1'a - |G' (y o a)|^2 over 0 <= a (<= C), with Clarabel.

    The value returned is certified from above (:func:`dual_upper_value`): the value of the
    SVM's primal at w = G'(y o a), never below D(y) whatever the solver's accuracy, and equal to
    it at an exact a. When the soft-margin solve fails (a huge C), the hard-margin solve is tried:
    its a is the soft-margin optimum when it stays below C. (None, None) when neither gives a
    value.
    """
    y = np.asarray(y, dtype=float)
    value, a = _solve_dual(G, y, C)
    if C is not None and (value is None or not np.isfinite(value)):
        # A box-constrained dual is never unbounded: the solver failed on the scale of C.
        hard, a_hard = _solve_dual(G, y, None)
        if hard is not None and a_hard is not None and np.all(a_hard <= C):
            value, a = hard, a_hard
    if value is None or a is None:
        return value, a
    if not np.isfinite(value):
        return value, a
    upper = dual_upper_value(G, y, a, C)
    return (upper if np.isfinite(upper) else value), a


def _solve_dual(G, y, C):
    """(value, a) of the dual by Clarabel; (inf, None) when unbounded, (None, None) on failure."""
    import cvxpy as cp

    a = cp.Variable(len(y), nonneg=True)
    objective = cp.Maximize(2 * cp.sum(a) - cp.sum_squares(G.T @ cp.multiply(y, a)))
    constraints = [] if C is None else [a <= np.broadcast_to(C, y.shape)]
    problem = cp.Problem(objective, constraints)
    try:
        problem.solve(solver="CLARABEL", max_threads=native_threads())
    except cp.error.SolverError:
        return None, None
    if problem.status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        return float("inf"), None
    if problem.value is None or a.value is None or not np.isfinite(problem.value):
        return None, None
    return float(problem.value), np.asarray(a.value, dtype=float)


def dual_upper_value(G: np.ndarray, y: np.ndarray, a: np.ndarray,
                     C: Optional[np.ndarray]) -> float:
    """An upper bound on D(y) on the kernel G G' from any a: the SVM primal's value at
    w = G'(y o a) (weak duality).

    Soft margin: D(y) <= |w|^2 + 2 sum_i C_i max(0, 1 - y_i g_i'w) for every w (for a in the
    box, 2 sum C_i xi_i >= 2 sum a_i (1 - y_i g_i'w), and |w|^2 - 2 w'G'(y o a) >= -|G'(y o a)|^2).
    Hard margin (C None): D(y) <= |w|^2 / m^2 with m = min_i y_i g_i'w, since w / m is feasible;
    inf when m <= 0. A larger kernel than G G' (the eigenvalues a factor drops) only lowers
    D(y), so the bound holds for it too.
    """
    a = np.maximum(np.asarray(a, dtype=float), 0.0)
    if C is not None:
        a = np.minimum(a, np.broadcast_to(C, a.shape))
    w = G.T @ (y * a)
    margins = y * (G @ w)
    ww = float(w @ w)
    if C is None:
        m = float(margins.min(initial=np.inf))
        return ww / (m * m) if m > 0 and np.isfinite(m) else float("inf")
    C = np.broadcast_to(np.asarray(C, dtype=float), a.shape)
    return float(ww + 2.0 * np.sum(C * np.maximum(0.0, 1.0 - margins)))
