"""Explicit feature scaling (off by default: features are used as given,
docs/formulations.md#data-contract)."""

from __future__ import annotations

import numpy as np

from s3vm.data.instance import Instance, is_sparse
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.memory import check_array_memory

SCALINGS = ("standard", "minmax")


def scale_features(X: np.ndarray, how: str) -> np.ndarray:
    """Scale columns over all rows, labeled and unlabeled (transduction sees every row).

    ``standard``: zero mean, unit standard deviation; ``minmax``: range [0, 1].
    Constant columns are left at zero rather than divided by zero.
    """
    X = np.asarray(X, dtype=float)
    big = np.abs(X).max(axis=0, initial=0.0)
    if np.any(big > 1e150):
        # Squares of such values overflow (the standard deviation would be inf): divide each
        # column by its largest magnitude first, which changes neither scaling's result.
        X = X / np.where(big > 0, big, 1.0)
    if how == "standard":
        centre, spread = X.mean(axis=0), X.std(axis=0)
    elif how == "minmax":
        centre, spread = X.min(axis=0), X.max(axis=0) - X.min(axis=0)
    else:
        raise InputError(f"unknown scaling {how!r}: choose one of {', '.join(SCALINGS)}")
    spread = np.where(spread > 0, spread, 1.0)
    return (X - centre) / spread


def scale_sparse(X, how: str):
    """Scale the columns of a ``scipy.sparse`` X over all rows, keeping it sparse, or refuse.

    Scaling that keeps every zero at zero is a division of each column by a positive number,
    so only that is done; anything that would shift a column (and make its zeros nonzero, the
    whole matrix dense) is refused with an :class:`InputError` that says why:

    - ``"minmax"``: a column whose minimum over all rows is 0 (nonnegative features with a
      zero, as word counts and TF-IDF weights) maps onto [0, 1] by dividing by its maximum,
      which is exactly the dense minmax scaling; a constant column stays 0. A column whose
      minimum is not 0 would be shifted: refused.
    - ``"standard"``: centering makes every zero nonzero: always refused (``"minmax"`` is the
      sparse alternative; or densify the matrix yourself).

    Parameters
    ----------
    X : scipy.sparse matrix of shape (n, p)
    how : {"standard", "minmax"}

    Returns
    -------
    scipy.sparse.csr_matrix of float64
        A new matrix with the sparsity pattern of X.
    """
    import scipy.sparse as sp  # only here: dense callers of this module never import it

    if how not in SCALINGS:
        raise InputError(f"unknown scaling {how!r}: choose one of {', '.join(SCALINGS)}")
    n, p = X.shape
    if how == "standard":
        raise InputError(f"scale 'standard' centres the columns, which makes the sparse {n} x "
                         f"{p} features dense: use 'minmax' (it keeps nonnegative sparse "
                         "columns sparse) or none")
    A = sp.csr_matrix(X, dtype=float, copy=True)
    A.eliminate_zeros()
    # scipy's column minimum and maximum count the implicit zeros.
    low = np.asarray(A.min(axis=0).toarray()).ravel()
    high = np.asarray(A.max(axis=0).toarray()).ravel()
    shifted = np.flatnonzero(low != 0)
    if shifted.size:
        j = int(shifted[0])
        raise InputError(f"scale 'minmax' would shift column {j} of the sparse {n} x {p} "
                         f"features (its minimum is {low[j]:g}, not 0) and make it dense: "
                         "minmax keeps only columns of minimum 0 sparse; leave the features "
                         "unscaled")
    spread = np.where(high > 0, high, 1.0)
    A.data /= spread[A.indices]
    return A


def scale_instance(instance: Instance, how: str) -> Instance:
    """A copy of ``instance`` with scaled features (dense: both scalings shift the columns,
    so a sparse X is made dense, when that fits in memory)."""
    X = instance.X
    if is_sparse(X):
        n, p = X.shape
        check_array_memory(n, p, 24, f"--scale {how} makes the sparse features dense: it",
                           "leave sparse data unscaled (TF-IDF rows of unit length need no "
                           "scaling) for primal-tsvm")
        X = X.toarray()
    return Instance(scale_features(X, how), instance.label, instance.truth,
                    instance.group, instance.feature_names, instance.name,
                    {**instance.meta, "scale": how})
