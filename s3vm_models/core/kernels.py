"""Kernel matrices with the project's conventions (docs/formulations.md#kernels).

``linear``: k(x, z) = x.z ; ``rbf``: k(x, z) = exp(-|x - z|^2 / (2 sigma^2)), so sigma is a width,
not scikit-learn's gamma (gamma = 1 / (2 sigma^2)).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from s3vm.solvers.errors import InputError


def rbf_gamma(sigma: float) -> float:
    """scikit-learn's gamma for width sigma (InputError when 1 / (2 sigma^2) is not a finite
    positive number: sigma so small that its square is 0 in floating point)."""
    square = 2.0 * float(sigma) * float(sigma)
    if not (square > 0 and math.isfinite(1.0 / square)):
        raise InputError(f"--sigma {sigma:g} is too small for the rbf kernel: 1/(2 sigma^2) "
                         "overflows; choose sigma > 1e-150 (a width near the distances "
                         "between points)")
    return 1.0 / square


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
