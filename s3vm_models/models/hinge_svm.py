"""The S3VM objective with the hinge loss of SVMlight's TSVM (Joachims 1999), for label switching.

For a full labeling y the inner problem is the standard (L1) SVM

    s(y) = min_{beta, b}  1/2 beta'K beta + sum_i C_i max(0, 1 - y_i f_i),   f = K beta + b,

with C_i = C on labeled and C* on unlabeled rows: Joachims' transductive SVM (his OP 2 with
C*_- = C*_+), where :mod:`s3vm.models.label_switching` has the squared hinge of Problem 1. It is
solved by libsvm's SMO (scikit-learn's ``SVC(kernel="precomputed")``, the per-row penalties as
``sample_weight``, rows of penalty 0 left out) to libsvm's tolerance, not exactly: s(y) is
that of libsvm's solution.

The label-switching rule holds unchanged: moving a row of output t from +1 to -1 changes its
loss by h(t) = max(0, 1 + t) - max(0, 1 - t), increasing in t, so a pair swaps when the
positive's output is below the negative's (Joachims' condition, section 4.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from s3vm.models.l2_svm import LabelingObjective

TOL = 1e-3  # libsvm's stopping tolerance (SVMlight's -e 0.001 in Joachims' runs)


@dataclass
class HingeSolution:
    """An SVM solution: f = K beta + b on the rows, and its objective value."""

    value: float
    beta: np.ndarray
    b: float
    outputs: np.ndarray


class HingeObjective(LabelingObjective):
    """J_hinge(y_U): the hinge-loss SVM objective at a labeling of the unlabeled rows.

    Parameters
    ----------
    instance : Instance
    settings : Settings
        kernel, sigma, C, C*, bias (without bias, b is fixed at 0 by a constant column
        removed: libsvm always fits b, so ``bias=False`` is refused by the formulation).
    K : ndarray, optional
        The kernel matrix, when the caller has it.
    """

    def train(self, y: np.ndarray, C: np.ndarray, warm=None) -> HingeSolution:
        """The hinge SVM with labels ``y`` and penalties ``C`` (0: the row takes no part)."""
        from sklearn.svm import SVC

        rows = np.flatnonzero(C > 0)
        svm = SVC(kernel="precomputed", C=1.0, tol=TOL, cache_size=500)
        svm.fit(self.K[np.ix_(rows, rows)], y[rows], sample_weight=C[rows])
        beta = np.zeros(y.size)
        beta[rows[svm.support_]] = svm.dual_coef_[0]
        if svm.classes_[0] > 0:  # libsvm's first class is +1: its decision sign is flipped
            beta, b = -beta, -float(svm.intercept_[0])
        else:
            b = float(svm.intercept_[0])
        outputs = self.K @ beta + b
        value = 0.5 * float(beta @ self.K @ beta) + float(
            C @ np.maximum(0.0, 1.0 - y * outputs))
        return HingeSolution(value, beta, b, outputs)

    def evaluate(self, labels_U: np.ndarray, warm=None) -> HingeSolution:
        """The solution at ``labels_U`` with the full penalties."""
        return self.train(self.full_labels(np.asarray(labels_U)), self.C, warm)

    def __call__(self, labels_U: np.ndarray) -> float:
        return self.evaluate(labels_U).value
