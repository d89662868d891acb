"""Kernel matrices with the project's conventions (docs/formulations.md#kernels).

``linear``: k(x, z) = x.z ; ``rbf``: k(x, z) = exp(-|x - z|^2 / (2 sigma^2)), so sigma is a width,
not scikit-learn's gamma (gamma = 1 / (2 sigma^2)).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .solvers.errors import InputError


def rbf_gamma(sigma: float) -> float:
    """scikit-learn's gamma for width sigma."""
    return 1.0 / (2.0 * sigma * sigma)


def squared_distances(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """|X_i - Z_j|^2 for all pairs, through one matrix product (clipped at 0 against rounding)."""
    sq = (X * X).sum(axis=1)[:, None] + (Z * Z).sum(axis=1)[None, :] - 2.0 * (X @ Z.T)
    return np.maximum(sq, 0.0, out=sq)


def kernel_matrix(X: np.ndarray, Z: Optional[np.ndarray] = None, kernel: str = "linear",
                  sigma: float = 1.0) -> np.ndarray:
    """K[i, j] = k(X[i], Z[j]) (Z defaults to X)."""
    Z = X if Z is None else Z
    if kernel == "linear":
        return X @ Z.T
    if kernel == "rbf":
        return np.exp(-rbf_gamma(sigma) * squared_distances(X, Z))
    raise InputError(f"unknown kernel {kernel!r}: choose linear or rbf")
