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
