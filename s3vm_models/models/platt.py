"""Platt scaling: the probability P(y = 1 | f) = 1 / (1 + exp(A f + B)) of a decision value f.

Platt (2000), "Probabilistic outputs for support vector machines and comparisons to regularized
likelihood methods", with the regularized targets and the Newton method with backtracking of
Lin, Lin and Weng (2007), "A note on Platt's probabilistic outputs for support vector machines",
Machine Learning 68, Algorithm 1: the targets t = (N+ + 1) / (N+ + 2) for a positive and
1 / (N- + 2) for a negative, so that a separable sample does not send A to minus infinity. This
is libsvm's ``sigmoid_train``, which scikit-learn's ``SVC(probability=True)`` runs on decision
values from an internal cross-validation.
"""

from __future__ import annotations

import numpy as np

MAX_ITER = 100
MIN_STEP = 1e-10
SIGMA = 1e-12  # the Hessian's ridge (Lin, Lin and Weng 2007)
EPS = 1e-5     # the stopping test on the gradient


def _loss(f, t, A, B):
    """The cross-entropy of the targets t at the sigmoid (A, B), in its stable form."""
    z = A * f + B
    # -t log p - (1 - t) log(1 - p) with p = 1 / (1 + exp(z)) is t z + log(1 + exp(-z)) for
    # z >= 0 and (t - 1) z + log(1 + exp(z)) otherwise: one formula, log1p of a small number.
    return float(np.sum(np.where(z >= 0, t * z + np.log1p(np.exp(-np.abs(z))),
                                 (t - 1.0) * z + np.log1p(np.exp(-np.abs(z))))))


def fit_sigmoid(f: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(A, B) of the sigmoid fitted to decision values ``f`` with labels ``y`` (True for the
    positive class).

    Parameters
    ----------
    f : ndarray of shape (m,)
        Decision values (larger means positive).
    y : ndarray of shape (m,) of bool

    Returns
    -------
    A, B : float
        P(positive | f) = 1 / (1 + exp(A f + B)); A < 0 when larger f means more positive.
    """
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = _loss(f, t, A, B)
    for _ in range(MAX_ITER):
        z = A * f + B
        p = np.where(z >= 0, np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))),
                     1.0 / (1.0 + np.exp(-np.abs(z))))   # 1 / (1 + exp(z)), stable
        q = 1.0 - p
        d1, d2 = t - p, p * q
        g1, g2 = float(f @ d1), float(d1.sum())
        if abs(g1) < EPS and abs(g2) < EPS:
            break
        h11, h22, h21 = float(f * f @ d2) + SIGMA, float(d2.sum()) + SIGMA, float(f @ d2)
        det = h11 * h22 - h21 * h21
        dA, dB = -(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= MIN_STEP:
            newA, newB = A + step * dA, B + step * dB
            new_value = _loss(f, t, newA, newB)
            if new_value < value + 1e-4 * step * gd:
                A, B, value = newA, newB, new_value
                break
            step /= 2.0
        else:
            break  # no descent along the Newton direction: at the optimum to rounding
    return float(A), float(B)


def sigmoid_probability(f: np.ndarray, A: float, B: float) -> np.ndarray:
    """P(positive | f) = 1 / (1 + exp(A f + B)), without overflow."""
    z = A * np.asarray(f, dtype=float) + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))
