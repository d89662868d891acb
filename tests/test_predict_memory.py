"""Prediction with a kernel expansion holds a bounded block of the kernel at a time (issue 38,
item 7), over the rows with a nonzero coefficient only."""

import numpy as np
import pytest

import s3vm.inductive as inductive
from s3vm import S3VMClassifier
from s3vm.core.kernels import kernel_matrix

#: Each test fits or solves for seconds: left out of make test-fast.
pytestmark = pytest.mark.slow


@pytest.mark.slow
def test_predictions_are_made_in_blocks_of_bounded_size(monkeypatch):
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(150, 3)) + 1.5, rng.normal(size=(150, 3)) - 1.5]
    y = np.full(300, -1)
    y[:5], y[150:155] = 1, 0
    clf = S3VMClassifier(kernel="rbf", safeguard=None).fit(X, y)
    coef = clf.dual_coef_
    assert np.all(coef != 0) and clf.X_fit_.shape[0] == coef.size <= 300
    X_new = rng.normal(size=(1000, 3)) * 2
    # The independent computation: the whole kernel at once, against every training row
    # (the zero coefficients add nothing).
    full = kernel_matrix(X_new, clf.X_fit_, "rbf", clf.sigma_) @ coef + clf.intercept_
    blocks = []
    original = inductive.kernel_matrix

    def recording(A, B, kernel, sigma):
        blocks.append(A.shape[0] * B.shape[0])
        return original(A, B, kernel, sigma)

    monkeypatch.setattr(inductive, "kernel_matrix", recording)
    monkeypatch.setattr(inductive, "PREDICT_BLOCK_ENTRIES", 5000)
    np.testing.assert_allclose(clf.decision_function(X_new), full, atol=1e-10)
    assert len(blocks) > 1 and max(blocks) <= 5000
