"""∇S3VM: gradient descent on the smoothed S3VM objective, with its unlabeled weight continued
from small to full (Chapelle and Zien 2005, "Semi-supervised classification by low density
separation", AISTATS, section 3; the continuation of C* as in their ∇TSVM and in Chapelle, Chi
and Zien 2006, "A continuation method for semi-supervised SVMs", ICML).

In the primal of features G with K = G G' (the kernel's square root on the exact path, as
Chapelle and Zien map the points by kernel PCA; the Nystroem factor or X itself otherwise),
f = G w + b and

    J_s(w) = 1/2 |w|^2 + sum_L C_i max(0, 1 - y_i f_i)^2 + sum_U C*_i exp(-s f_i^2),   s = 3,

their eq. (4) with the squared hinge on the labeled rows (so that J_s is differentiable) and
the Gaussian exp(-3 t^2) in place of the unlabeled hinge max(0, 1 - |t|)^2. Their balance,
the mean output of the unlabeled rows fixed at a target (2 P / u - 1 for a count P), is met
exactly by eliminating b: b = target - mean_U (G w). Each stage minimizes J_s by L-BFGS from
the previous stage's w with C* multiplied by the next fraction of ``anneal`` (up to 1): the
early stages follow the labeled rows, the later ones push the boundary out of dense regions.

The labeling returned (the ``positives`` largest outputs, or their signs) is a start for the
label-switching search on the squared-hinge objective J of Problem 1, which picks among its
starts by J (:mod:`s3vm.models.label_switching`).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from scipy.optimize import minimize

#: The width of the unlabeled loss exp(-s t^2) (Chapelle and Zien 2005)
SHARPNESS = 3.0
#: Fractions of C* of the continuation's stages (10^-3 to 1 by factors of about 2, their ∇TSVM)
ANNEAL = tuple(np.geomspace(1e-3, 1.0, 11))
MAX_ITER = 200


def kernel_root(K: np.ndarray, floor: float = 1e-10) -> np.ndarray:
    """G with G G' = K (eigenvectors scaled by the roots of the eigenvalues above ``floor``
    times the largest; the rest dropped, which keeps K to that relative accuracy)."""
    values, vectors = np.linalg.eigh(K)
    keep = values > floor * max(float(values[-1]), 0.0)
    return vectors[:, keep] * np.sqrt(values[keep])


def smoothed_outputs(G: np.ndarray, y: np.ndarray, labeled: np.ndarray, unlabeled: np.ndarray,
                     C: np.ndarray, target_mean: float, bias: bool = True,
                     anneal=ANNEAL) -> np.ndarray:
    """The outputs f = G w + b of every row at the end of the continuation (module notes).

    Parameters
    ----------
    G : ndarray of shape (n, r)
        Features of every row (K = G G').
    y : ndarray of shape (n,)
        +1/-1 on the labeled rows (others ignored).
    labeled, unlabeled : ndarray of int
    C : ndarray of shape (n,)
        C on the labeled rows, C* on the unlabeled ones.
    target_mean : float
        The mean output of the unlabeled rows (in (-1, 1)).
    bias : bool
        Without bias, b = 0 and the balance is left free.
    anneal : sequence of float
        Fractions of C* of the stages.

    Returns
    -------
    ndarray of shape (n,)
    """
    G_L, G_U = G[labeled], G[unlabeled]
    y_L = y[labeled].astype(float)
    C_L, C_U = C[labeled], C[unlabeled]
    g_mean = G_U.mean(axis=0) if bias else np.zeros(G.shape[1])
    b0 = float(target_mean) if bias else 0.0

    def value(w, fraction):
        b = b0 - g_mean @ w
        f_L, f_U = G_L @ w + b, G_U @ w + b
        slack = np.maximum(0.0, 1.0 - y_L * f_L)
        e = np.exp(-SHARPNESS * f_U * f_U)
        cu = fraction * C_U
        obj = 0.5 * w @ w + C_L @ (slack * slack) + cu @ e
        d_L = -2.0 * C_L * slack * y_L            # dJ/df on the labeled rows
        d_U = -2.0 * SHARPNESS * cu * f_U * e     # dJ/df on the unlabeled rows
        # f = G_rows w + b0 - g_mean w: d/dw = G_rows' d - g_mean sum(d)
        grad = w + G_L.T @ d_L + G_U.T @ d_U - g_mean * (d_L.sum() + d_U.sum())
        return obj, grad

    w = np.zeros(G.shape[1])
    for fraction in anneal:
        w = minimize(value, w, args=(float(fraction),), jac=True, method="L-BFGS-B",
                     options={"maxiter": MAX_ITER}).x
    return G @ w + (b0 - g_mean @ w)


def balance_target(positives: Optional[int], y_labeled: np.ndarray, u: int) -> float:
    """The unlabeled rows' mean output: 2 P / u - 1 under a count P, else the labeled rows'
    mean label (Chapelle and Zien's balance)."""
    if positives is not None:
        return 2.0 * positives / u - 1.0
    return float(np.mean(y_labeled)) if y_labeled.size else 0.0
