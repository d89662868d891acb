"""Low-rank kernel factors K ~ G G' (docs/formulations.md#low-rank-dual): the Nystroem factor of
the rbf kernel, the features of the linear kernel, the congruence scaling that makes the low-rank
dual well conditioned for SCS, and the KKT violations that drive its working set.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.core.kernels import nystroem
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.models.svm_dual import svm_dual_value_factor
from s3vm.solvers.errors import InputError

DEFAULT_RANK = 100          # Nystroem landmarks when no rank is given


FACTOR_TOL = 1e-10         # relative eigenvalue cut of the Nystroem core


def nystroem_factor(X: np.ndarray, sigma: float, rank: int, seed: int = 0,
                    tol: float = FACTOR_TOL) -> np.ndarray:
    """G (n x r') with G G' the Nystroem approximation of the rbf kernel on ``rank`` landmarks.

    Landmarks are a seeded uniform sample of the rows (all rows when rank = n: then G G' = K up to
    the eigenvalues of K below ``tol`` times the largest). G = K_nm U S^(-1/2) with K_mm = U S U'
    restricted to eigenvalues above the cut, so r' <= rank (:func:`s3vm.core.kernels.nystroem`,
    which ``switching`` shares).
    """
    return nystroem(X, sigma, rank, seed=seed, tol=tol)[0]


def kernel_factor(instance: Instance, settings: Settings, rank: Optional[int] = None,
                  seed: int = 0) -> tuple[np.ndarray, bool]:
    """(G, exact): a factor with G G' = K (exact) or its Nystroem approximation.

    Linear kernel: G = X (its thin SVD U S when p > n), exact. rbf: :func:`nystroem_factor` with
    ``rank`` landmarks (default min(100, n)), exact when rank = n.
    """
    n = instance.n
    rank = min(DEFAULT_RANK, n) if rank is None else int(rank)
    if rank > n:
        raise InputError(f"rank larger than n: rank = {rank}, n = {n}")
    if settings.kernel == "linear":
        X = np.asarray(instance.X, dtype=float)
        if X.shape[1] > n:
            U, s, _ = np.linalg.svd(X, full_matrices=False)
            return U * s, True
        return X, True
    if settings.kernel == "rbf":
        return nystroem_factor(instance.X, settings.sigma, rank, seed), rank >= n
    raise InputError(f"unknown kernel {settings.kernel!r}: choose linear or rbf")


def dual_scale(G: np.ndarray, instance: Instance, C: Optional[np.ndarray]) -> float:
    """beta for :func:`lowrank_dual_model`: sqrt of a rough estimate of the optimum.

    The estimate is D on the labeled points alone (kernel G G'), times n / l. First-order solvers
    (SCS) converge in a few hundred iterations when beta^2 is within a factor 10 of the optimum
    and may stall at beta = 1 (measured on blobs and moons, linear and rbf, n = 400 to 20,000).
    """
    lab = instance.labeled
    value, _ = svm_dual_value_factor(G[lab], instance.label[lab].astype(float),
                                     None if C is None else C[lab])
    estimate = value * instance.n / max(len(lab), 1)
    return float(np.sqrt(estimate)) if np.isfinite(estimate) and estimate > 1.0 else 1.0


def kkt_violations(G: np.ndarray, V: np.ndarray, a: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Per point, how far (a = 0, lam = 0) is from optimal in the full low-rank dual, given the
    solution (a, M) of a restricted one: max(1 - margin_i, v_i'M v_i - 1), with the margin
    g_i' W(a) M v_i. Points with a violation <= 0 need not join the working set."""
    W = G.T @ (a[:, None] * V)
    margin = np.einsum("ij,ij->i", G @ (W @ M), V)
    diag = np.einsum("ij,ij->i", V @ M, V)
    return np.maximum(1.0 - margin, diag - 1.0)
