"""Input validation at the estimator's boundary, once per call, as scikit-learn's own."""

from __future__ import annotations

import numbers
import warnings

import numpy as np


def validate_data(estimator, X, y=None, reset=True):
    """scikit-learn's input validation (n_features_in_, feature_names_in_), across versions."""
    # Sparse X stays sparse, as CSR (the primal solver's row slices), never densified here.
    kwargs = dict(dtype=np.float64, ensure_all_finite=True, accept_sparse="csr")
    try:
        from sklearn.utils.validation import validate_data as sk_validate
    except ImportError:  # scikit-learn < 1.6
        kwargs.pop("ensure_all_finite")
        kwargs["force_all_finite"] = True
        if y is None:
            return estimator._validate_data(X, reset=reset, **kwargs)
        return estimator._validate_data(X, y, reset=reset, y_numeric=False, **kwargs)
    if y is None:
        return sk_validate(estimator, X, reset=reset, **kwargs)
    return sk_validate(estimator, X, y, reset=reset, **kwargs)


def check_convention(y: np.ndarray, marker) -> None:
    """Warn when numeric targets look like s3vm's file convention (+1/-1 labels, 0 unlabeled)
    read with scikit-learn's marker -1.

    Targets in {-1, 0, +1} are valid in both conventions; read with ``unlabeled=-1`` they are
    the classes 0 and 1 with the -1 rows unlabeled. Semi-supervised data has more unlabeled
    rows than rows of one class, so when the rows of 0 outnumber the rows marked -1 the targets
    are more likely s3vm's, whose -1 class would then be trained on as unlabeled.
    """
    if y.dtype.kind not in "iuf" or not isinstance(marker, numbers.Number) or marker != -1:
        return
    values, counts = np.unique(y, return_counts=True)
    if values.size != 3 or not np.array_equal(values, [-1, 0, 1]):
        return
    count = dict(zip(values.tolist(), counts.tolist()))
    if count[0] > count[-1]:
        warnings.warn(
            f"the targets look like s3vm's convention (+1/-1 labels, 0 unlabeled): {count[0]} "
            f"rows are 0 and {count[-1]} are -1; with unlabeled=-1 (scikit-learn's convention) "
            "the -1 rows are fitted as unlabeled and 0 is a class. Pass unlabeled=0 if 0 marks "
            "the unlabeled rows", UserWarning, stacklevel=4)
