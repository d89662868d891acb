"""The supervised value D(y) of Problem 2 at a full labeling (docs/formulations.md#problem-2):

    D(y) = max_{0 <= a <= C} 2 1'a - a'(K o yy')a          (no upper bound: hard margin)

D(y) is twice the optimum of the soft-margin SVM without bias, 1/2 |w|^2 + C sum xi. At the labels
rounded from an SDP relaxation it is an upper bound on min_y D(y); the relaxation's optimum is a
lower bound (De Bie and Cristianini 2006, section 7.1.4; docs/formulations.md#sdp-bounds).
"""

from __future__ import annotations

from typing import Optional

import numpy as np


def psd_factor(K: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """G with G G' = K (eigenvectors scaled by the square roots of the positive eigenvalues)."""
    vals, vecs = np.linalg.eigh((K + K.T) / 2.0)
    keep = vals > tol * max(1.0, float(vals.max(initial=0.0)))
    return vecs[:, keep] * np.sqrt(vals[keep])


def svm_dual_value(K: np.ndarray, y: np.ndarray, C: Optional[np.ndarray]) -> tuple[float, np.ndarray]:
    """(D(y), the maximising a), solved with Clarabel through CVXPY.

    ``C`` is the per-point upper bound on a, or None for the hard margin. A hard-margin problem
    whose labeling cannot be separated returns (inf, None).
    """
    return svm_dual_value_factor(psd_factor(K), y, C)


def svm_dual_value_factor(G: np.ndarray, y: np.ndarray, C: Optional[np.ndarray]
                          ) -> tuple[float, Optional[np.ndarray]]:
    """D(y) on the kernel G G' (see :func:`s3vm.svm_dual.svm_dual_value`), from the factor
    (no n x n matrix): max 2 1'a - |G' (y o a)|^2 over 0 <= a (<= C), with Clarabel."""
    import cvxpy as cp

    y = np.asarray(y, dtype=float)
    a = cp.Variable(len(y), nonneg=True)
    objective = cp.Maximize(2 * cp.sum(a) - cp.sum_squares(G.T @ cp.multiply(y, a)))
    constraints = [] if C is None else [a <= np.broadcast_to(C, y.shape)]
    problem = cp.Problem(objective, constraints)
    problem.solve(solver="CLARABEL")
    if problem.status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        return float("inf"), None
    if problem.value is None:
        raise RuntimeError(f"the supervised SVM dual did not solve ({problem.status})")
    return float(problem.value), np.asarray(a.value, dtype=float)
