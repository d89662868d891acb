"""The kernel and the rbf width the estimator fits with, resolved on X.

``kernel="auto"`` follows the data's form, as text classifiers and ``LinearSVC`` do: sparse or
very wide input (at least as many features as rows) gets the linear kernel, which there is both
the faster and, on the usual such data, the better model; other input gets the rbf kernel.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from s3vm.data.instance import is_sparse
from s3vm.solvers.errors import InputError

#: Rows the median distance is taken over (a fixed sample beyond): 1,000 rows, 499,500 pairs
MEDIAN_ROWS = 1000

KERNELS = ("auto", "linear", "rbf")


def scale_sigma(X) -> float:
    """scikit-learn's ``gamma="scale"`` as a width: gamma = 1 / (p Var X), over every entry of
    X (1 when that variance is 0), and sigma = sqrt(1 / (2 gamma))."""
    if is_sparse(X):  # the variance over every entry, zeros included, without densifying
        count = X.shape[0] * X.shape[1]
        mean = float(X.sum()) / count
        var = max(float(X.multiply(X).sum()) / count - mean * mean, 0.0)
    else:
        var = float(X.var())
    gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return float(np.sqrt(0.5 / gamma))


def median_sigma(X) -> float:
    """The median distance between distinct rows (Schölkopf and Smola's heuristic; over
    :data:`MEDIAN_ROWS` rows drawn with seed 0 beyond that many); 1 when it is 0."""
    if X.shape[0] > MEDIAN_ROWS:
        X = X[np.sort(np.random.default_rng(0).choice(X.shape[0], MEDIAN_ROWS, replace=False))]
    if is_sparse(X):
        # The Gram matrix of the (at most MEDIAN_ROWS) sampled rows is small and dense; X
        # itself is never densified.
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        gram = sp.csr_array(X @ X.T).toarray()
    else:
        sq = np.einsum("ij,ij->i", X, X)
        gram = X @ X.T
    D = sq[:, None] + sq[None, :] - 2.0 * gram
    d = np.sqrt(np.maximum(D[np.triu_indices_from(D, k=1)], 0.0))
    value = float(np.median(d)) if d.size else 0.0
    return value if value > 0 else 1.0


#: The data-driven widths ``sigma`` may name.
SIGMA_RULES = {"scale": scale_sigma, "median": median_sigma}


def resolve_kernel(kernel, X) -> tuple[str, str]:
    """(the kernel to fit with, why): ``kernel`` itself, or for ``"auto"`` linear on sparse
    or wide X (p >= n) and rbf otherwise."""
    if kernel not in KERNELS:
        raise InputError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if kernel != "auto":
        return kernel, "given"
    if is_sparse(X):
        return "linear", "auto: sparse input"
    if X.shape[1] >= X.shape[0]:
        return "linear", f"auto: {X.shape[1]} features for {X.shape[0]} rows"
    return "rbf", f"auto: dense input with {X.shape[1]} features for {X.shape[0]} rows"


def resolve_sigma(sigma, kernel: str, X, default: float) -> float:
    """The rbf width: ``sigma``, or resolved on X for ``"scale"`` and ``"median"`` (under the
    rbf kernel only: the linear kernel reads no width, and gets ``default``)."""
    if isinstance(sigma, str):
        if sigma not in SIGMA_RULES:
            raise InputError(f"sigma must be a positive number, 'scale' or 'median', got "
                             f"{sigma!r}")
        return SIGMA_RULES[sigma](X) if kernel == "rbf" else default
    return sigma
