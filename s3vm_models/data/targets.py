"""Targets in scikit-learn's semi-supervised convention: a marker (-1 by default) on the
unlabeled rows, any class labels (numbers or strings) on the others. The estimator and the
scorer of :mod:`s3vm.scoring` read them the same way through this module."""

from __future__ import annotations

import numbers

import numpy as np


def unlabeled_mask(y: np.ndarray, marker) -> np.ndarray:
    """Rows of ``y`` equal to ``marker`` (a string array simply has no numeric marker)."""
    if y.dtype.kind in "iufb":
        if isinstance(marker, numbers.Number):
            return y == marker
        return np.zeros(y.shape, dtype=bool)
    if y.dtype.kind in "US":
        return y == marker if isinstance(marker, str) else np.zeros(y.shape, dtype=bool)
    return np.fromiter((v == marker for v in y), dtype=bool, count=y.size)
