"""More than two classes: one binary S3VM a class, that class against the others, as
scikit-learn's ``LinearSVC``; each with its own class prior of its class."""

from __future__ import annotations

import numpy as np

from s3vm.estimator.binary import fit_binary


def fit_one_vs_rest(clf, X, code: np.ndarray, cls, rule) -> None:
    """Fit ``clf.estimators_`` (one a class, that class +1, the others -1) and gather their
    attributes on ``clf``. An unlabeled row takes the class of the largest decision value."""
    clf.estimators_ = []
    for k in range(clf.classes_.size):
        est = clf._fold_clone()
        est.classes_ = np.array([0, 1])
        est.kernel_, est._kernel_why = clf.kernel_, clf._kernel_why
        est.sigma_ = clf.sigma_
        est.one_vs_rest_ = True
        fit_binary(est, X, np.where(code < 0, 0, np.where(code == k, 1, -1)), cls, rule)
        clf.estimators_.append(est)
    first = clf.estimators_[0]
    clf.ignored_params_ = first.ignored_params_
    clf.sigma_ = first.sigma_
    clf.decision_rule_ = first.decision_rule_
    clf.result_ = first.result_
    clf.prior_ = None
    clf.class_prior_ = np.array([est.prior_.share if est.prior_ is not None else np.nan
                                 for est in clf.estimators_])
    clf.intercept_ = np.array([est.intercept_ for est in clf.estimators_])
    for attr in ("coef_", "dual_coef_", "X_fit_"):
        clf.__dict__.pop(attr, None)
    if all("coef_" in est.__dict__ for est in clf.estimators_):
        clf.coef_ = np.vstack([est.coef_ for est in clf.estimators_])
    transduction = code.copy()
    unlabeled = code < 0
    if unlabeled.any():
        transduction[unlabeled] = np.argmax(clf._decisions(X[unlabeled]), axis=1)
    clf.transduction_ = clf.classes_[transduction]
