"""Platt's sigmoid per binary problem, for ``predict_proba`` (``probability=True``).

As scikit-learn's ``SVC(probability=True)`` (libsvm's internal cross-validation), the sigmoid
(Platt 2000, with the targets and Newton method of Lin, Lin and Weng 2007) is fitted on
decision values of the labeled rows that the model scoring them was not trained on: those of
the safeguard's folds (:mod:`s3vm.estimator.safeguard`), from the side the estimator kept. With
a single labeled row in a class no fold can hold every class, and the sigmoid is fitted on the
final model's own decision values of the labeled rows (optimistic: they were trained on).
"""

from __future__ import annotations

import numpy as np

from s3vm.models.platt import fit_sigmoid, sigmoid_probability


def sigmoids(scores: np.ndarray, code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of each column of ``scores`` (one for two classes, one a class for more),
    fitted against the rows' class indices ``code``."""
    binary = scores.shape[1] == 1
    pairs = [fit_sigmoid(scores[:, j], code == (1 if binary else j))
             for j in range(scores.shape[1])]
    return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])


def probabilities(f: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Class probabilities from decision values: (n, 2) from f of shape (n,), else the
    one-vs-rest sigmoids of f (n, k) normalized to sum to 1."""
    if f.ndim == 1:
        p = sigmoid_probability(f, A[0], B[0])
        return np.column_stack([1.0 - p, p])
    P = sigmoid_probability(f, A[None, :], B[None, :])
    total = P.sum(axis=1, keepdims=True)
    # All k sigmoids at 0 (to rounding): no class is preferred.
    return np.where(total > 0, P / np.where(total > 0, total, 1.0), 1.0 / P.shape[1])
