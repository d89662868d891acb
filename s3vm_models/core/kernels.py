"""Kernel matrices with the project's conventions (docs/formulations.md#kernels).

``linear``: k(x, z) = x.z ; ``rbf``: k(x, z) = exp(-|x - z|^2 / (2 sigma^2)), so sigma is a width,
not scikit-learn's gamma (gamma = 1 / (2 sigma^2)).
"""

from __future__ import annotations

import math
import sys
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


def _sparse(A) -> bool:
    # A sparse matrix exists only once scipy.sparse is imported: dense callers never import it.
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(A)


def _row_norms_squared(A) -> np.ndarray:
    if _sparse(A):
        return np.asarray(A.multiply(A).sum(axis=1)).ravel()
    return (A * A).sum(axis=1)


def _cross(X, Z) -> np.ndarray:
    """X Z' as a dense array: X and Z may each be dense or ``scipy.sparse`` (whose product is
    computed sparse, and only the len(X) x len(Z) result made dense)."""
    out = X @ Z.T
    return out.toarray() if _sparse(out) else np.asarray(out)


def squared_distances(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """|X_i - Z_j|^2 for all pairs, through one matrix product (clipped at 0 against rounding).
    X and Z may be ``scipy.sparse``: the result is dense, of len(X) x len(Z)."""
    sq = _row_norms_squared(X)[:, None] + _row_norms_squared(Z)[None, :] - 2.0 * _cross(X, Z)
    return np.maximum(sq, 0.0, out=sq)


def kernel_matrix(X: np.ndarray, Z: Optional[np.ndarray] = None, kernel: str = "linear",
                  sigma: float = 1.0) -> np.ndarray:
    """K[i, j] = k(X[i], Z[j]) (Z defaults to X), dense; X and Z may be ``scipy.sparse``."""
    Z = X if Z is None else Z
    if kernel == "linear":
        return _cross(X, Z)
    if kernel == "rbf":
        return np.exp(-rbf_gamma(sigma) * squared_distances(X, Z))
    raise InputError(f"unknown kernel {kernel!r}: choose linear or rbf")


def nystroem(X: np.ndarray, sigma: float, rank: int, seed: int = 0, tol: float = 1e-10
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rbf kernel's Nystroem factor (Williams and Seeger 2001): K ~ G G' with
    G = K[:, landmarks] V.

    X may be ``scipy.sparse`` (a CSR matrix): K[:, landmarks] is then formed from sparse
    products, and G is dense (n x r').

    Landmarks are a seeded uniform sample of ``rank`` rows (all rows when rank >= n). With
    K_mm = U S U', V = U S^(-1/2) over the eigenvalues above ``tol`` times the largest.

    Returns
    -------
    G : ndarray of shape (n, r')
    landmarks : ndarray of int, shape (m,)
    V : ndarray of shape (m, r')
    """
    if not _sparse(X):  # a sparse X stays sparse: only its landmark rows' products are formed
        X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if rank >= n:
        landmarks = np.arange(n)
    else:
        landmarks = np.sort(np.random.default_rng(seed).choice(n, size=rank, replace=False))
    Knm = kernel_matrix(X, X[landmarks], "rbf", sigma)
    Kmm = Knm[landmarks]
    s, U = np.linalg.eigh((Kmm + Kmm.T) / 2.0)
    keep = s > tol * max(float(s.max(initial=0.0)), 1e-300)
    V = U[:, keep] / np.sqrt(s[keep])
    return Knm @ V, landmarks, V
