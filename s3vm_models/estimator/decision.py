"""The safe default's decision (:mod:`s3vm.estimator.safeguard`), the report of what the
unlabeled rows did, and the calibration that shares the safeguard's folds."""

from __future__ import annotations

import warnings

import numpy as np

from s3vm.estimator import binary, calibration
from s3vm.estimator.safeguard import UnlabeledDataWarning, classes_of, held_out, prefers_supervised
from s3vm.estimator.supervised import labeled_models, stacked


def decide(clf, X, code) -> None:
    """The safeguard's decision and the calibration, from one set of held-out folds."""
    k = clf.classes_.size
    labeled = code >= 0
    models = labeled_models(X[labeled], code[labeled], k, clf.kernel_, float(clf.supervised_C))
    supervised = stacked(models)
    unlabeled = np.flatnonzero(~labeled)
    weights = np.where(np.isfinite(clf.class_prior_), clf.class_prior_, 1.0 / k)
    held = None
    if unlabeled.size and (clf.safeguard == "cv" or clf.probability):
        held = held_out(clf, X, code, lambda Xl, cl: stacked(labeled_models(
            Xl, cl, k, clf.kernel_, float(clf.supervised_C))), clf.seed)
    sup_labels = classes_of(supervised(X[unlabeled])) if unlabeled.size else unlabeled
    own = np.searchsorted(clf.classes_, clf.transduction_[unlabeled])
    decision = {"folds": None, "transductive_error": None, "supervised_error": None}
    if not unlabeled.size:
        clf.safeguard_, why = "transductive", "no unlabeled row: the supervised problem"
    elif clf.safeguard is None:
        clf.safeguard_, why = "transductive", "safeguard=None"
    elif held is None:
        clf.safeguard_, why = "transductive", ("a class has one labeled row: no "
                                                "cross-validation; the S3VM is kept")
    else:
        worse, t, s = prefers_supervised(held, weights)
        decision.update(folds=held.folds, transductive_error=float(t),
                        supervised_error=float(s))
        if worse:
            clf.safeguard_ = "supervised"
            why = (f"held-out error {t:.4f} with the unlabeled rows against {s:.4f} "
                   f"without, over {held.folds} folds of the labeled rows")
            adopt_supervised(clf, models, code, X, sup_labels)
            warnings.warn(f"the unlabeled rows did not help: {why}; the model is the SVM "
                          "on the labeled rows (safeguard_='supervised'). Pass "
                          "safeguard=None to keep the S3VM", UnlabeledDataWarning,
                          stacklevel=3)
        else:
            clf.safeguard_ = "transductive"
            why = (f"held-out error {t:.4f} with the unlabeled rows, {s:.4f} without, "
                   f"over {held.folds} folds of the labeled rows")
    decision.update(decision=clf.safeguard_, why=why)
    clf.report_ = report(clf, decision, int(np.sum(sup_labels != own)))
    if clf.probability:
        calibrate(clf, X, code, held)


def adopt_supervised(clf, models, code, X, labels) -> None:
    """The labeled rows' SVM becomes the model: its decision function, and its labels of
    the unlabeled rows in ``transduction_``."""
    owners = clf.estimators_ if "estimators_" in clf.__dict__ else [clf]
    for est, model in zip(owners, models):
        binary.adopt(est, model)
    if "estimators_" in clf.__dict__:
        clf.intercept_ = np.array([est.intercept_ for est in clf.estimators_])
        clf.__dict__.pop("coef_", None)
        if all("coef_" in est.__dict__ for est in clf.estimators_):
            clf.coef_ = np.vstack([est.coef_ for est in clf.estimators_])
        clf.decision_rule_ = clf.estimators_[0].decision_rule_
    transduction = clf.transduction_.copy()
    transduction[code < 0] = clf.classes_[labels]
    clf.transduction_ = transduction
    clf.certified_labels_ = None  # the certificate was of the S3VM's labels


def report(clf, decision: dict, changed: int) -> dict:
    owners = clf.estimators_ if "estimators_" in clf.__dict__ else [clf]
    priors = [est.prior_.to_dict() if est.prior_ is not None else None for est in owners]
    counts = [est.result_.info.get("settings", {}).get("positives") for est in owners]
    return {"kernel": {"kernel": clf.kernel_, "why": clf._kernel_why},
            "class_prior": priors[0] if len(owners) == 1 else priors,
            "positives": counts[0] if len(owners) == 1 else counts,
            "objective": [est.result_.objective for est in owners] if len(owners) > 1
            else clf.result_.objective,
            "safeguard": decision, "changed": changed}


def calibrate(clf, X, code, held) -> None:
    labeled = np.flatnonzero(code >= 0)
    if held is not None:
        scores = held.supervised if clf.safeguard_ == "supervised" else held.transductive
        clf.probability_cv_ = held.folds
    else:
        scores = clf._decisions(X[labeled]).reshape(labeled.size, -1)
        clf.probability_cv_ = None
    clf.probA_, clf.probB_ = calibration.sigmoids(scores, code[labeled])
