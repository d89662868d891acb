"""The supervised classifier the solve pipeline falls back on, and the one SDP-S3VM's parameter
selection cross-validates: the squared-hinge (L2) kernel SVM without bias on the labeled rows,
solved exactly (Piccialli, Schwiddessen and Sudoso 2024 select kernel and C with it).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import nnls


def l2svm_no_bias(K: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """beta with f(x) = sum_j beta_j k(x, x_j): the squared-hinge SVM without bias, exactly.

    Its dual max_{a >= 0} 1'a - 1/2 a'(Y K' Y)a, K' = K + I / (2C), is the nonnegative
    least-squares problem min_{a >= 0} |R a - t|^2 with R'R = Y K' Y and R't = 1 (Lawson and
    Hanson's NNLS is finite); beta = y o a."""
    y = np.asarray(y, dtype=float)
    Kp = K + (0.5 / C) * np.eye(y.size)
    R = np.linalg.cholesky(Kp * np.outer(y, y)).T
    t = np.linalg.solve(R.T, np.ones(y.size))
    a, _ = nnls(R, t, maxiter=50 * y.size)
    return y * a
