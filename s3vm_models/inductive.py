"""The inductive rule of each formulation: how its solution scores a new point.

The rule follows from the problem a formulation declares (:mod:`s3vm.core.problems`; its
``problem`` attribute), so a new formulation needs no entry here:

``linear``
    The LP/MIP family (rlp, svm1, bd-mip, vs3vm, bb-mip, cvs3vm; Problem 3): f(x) = w'x + b with
    the linear kernel, f(x) = sum_k w_k k(x, x_k) + b (Mangasarian's generalized SVM) with rbf.
``expansion``
    The S3VM-L2 family (switching, bb, l2-miqp, bb-sdp; Problem 1): the squared-hinge SVM at the
    final labeling, f(x) = sum_i beta_i k(x_i, x) + b over the training rows (b = 0 without bias).
``dual``
    The SDP family (sdp, sdp-subspace, sdp-lowrank; Problem 2): the supervised SVM without bias
    at the rounded labeling y, whose dual solution a gives f(x) = sum_i a_i y_i k(x_i, x).

Used by :class:`s3vm.S3VMClassifier` and by the pictures of ``s3vm plot``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from s3vm.core.kernels import kernel_matrix
from s3vm.core.problems import INDUCTIVE_RULES
from s3vm.core.registry import formulation_class
from s3vm.data.instance import is_sparse
from s3vm.solvers.errors import InputError


@dataclass(frozen=True)
class Predictor:
    """f(x) = x'coef + intercept (linear kernel) or k(x, basis) dual_coef + intercept."""

    rule: str
    kernel: str
    sigma: float
    intercept: float
    coef: Optional[np.ndarray] = None
    dual_coef: Optional[np.ndarray] = None
    basis: Optional[np.ndarray] = None

    def __call__(self, X) -> np.ndarray:
        if not is_sparse(X):  # a scipy.sparse X is scored by sparse products
            X = np.asarray(X, dtype=float)
        if self.coef is not None:
            return X @ self.coef + self.intercept
        return blocked_expansion(X, self.basis, self.kernel, self.sigma, self.dual_coef,
                                 self.intercept)


def formulation_rule(name: str) -> Optional[str]:
    """The inductive rule of the formulation registered as ``name``, from the problem it
    declares (:meth:`s3vm.core.formulation.Formulation.inductive_rule`); None for a name not
    registered or a formulation without a rule."""
    try:
        return formulation_class(name).inductive_rule()
    except InputError:
        return None


def predictor(result, instance, rule: Optional[str] = None) -> Predictor:
    """The decision function of ``result`` (solved on ``instance``) on new points.

    Raises
    ------
    InputError
        When the formulation has no inductive rule or the result holds no solution.
    """
    rule = rule or formulation_rule(result.formulation)
    if rule is None:
        raise InputError(f"formulation {result.formulation!r} has no inductive rule: it labels "
                         "the training rows but cannot score new points")
    primal = result.primal or {}
    key = INDUCTIVE_RULES[rule]
    if primal.get(key) is None:
        raise InputError(f"formulation {result.formulation!r} returned no solution to predict "
                         f"with (status {result.status}"
                         f"{': ' + result.message if result.message else ''})")
    settings = result.info.get("settings", {})
    kernel, sigma = settings.get("kernel", "linear"), float(settings.get("sigma", 1.0))
    coef = np.asarray(primal[key], dtype=float)
    if rule == "dual":
        y = instance.label.astype(float)
        if instance.u:
            y[instance.unlabeled] = result.labels
        coef, intercept = coef * y, 0.0
    else:
        intercept = float(primal.get("b") or 0.0)
    if kernel == "linear":
        # The LP family's w is in feature space already; an expansion folds into w = X'c.
        return Predictor(rule, kernel, sigma, intercept,
                         coef=coef if rule == "linear" else instance.X.T @ coef)
    # Rows with a zero coefficient add nothing to f: the basis keeps the others only (the
    # support vectors of the expansion), so that prediction costs what the solution holds.
    keep = np.flatnonzero(coef != 0)
    basis = instance.X[keep]
    basis = basis.copy() if is_sparse(basis) else np.array(basis)
    return Predictor(rule, kernel, sigma, intercept, dual_coef=coef[keep], basis=basis)


#: Kernel entries one block of a prediction holds at most (4e6 float64: 32 MB): the rows of X
#: are scored a block at a time, so that memory is bounded whatever the number of new rows.
PREDICT_BLOCK_ENTRIES = 4_000_000


def blocked_expansion(X, basis, kernel: str, sigma: float, dual_coef: np.ndarray,
                      intercept: float) -> np.ndarray:
    """f(x) = k(x, basis) dual_coef + intercept for every row of X, a block of rows at a
    time (at most :data:`PREDICT_BLOCK_ENTRIES` kernel entries held at once)."""
    n = X.shape[0]
    if basis.shape[0] == 0:
        return np.full(n, float(intercept))
    step = max(1, PREDICT_BLOCK_ENTRIES // basis.shape[0])
    out = np.empty(n)
    for start in range(0, n, step):
        block = X[start:start + step]
        out[start:start + step] = kernel_matrix(block, basis, kernel, sigma) @ dual_coef
    return out + intercept
