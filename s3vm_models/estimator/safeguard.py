"""The safeguard: held-out evidence, from the labeled rows alone, of whether the unlabeled rows
help.

The labeled rows are split into stratified folds (at most :data:`MAX_FOLDS`, fewer when a class
has fewer labeled rows). For each fold, the whole semi-supervised fit is run again with the
fold's labels withheld (its rows join the unlabeled rows, so they are scored as the S3VM scores
unlabeled rows, class prior estimate included), and the SVM on the other labeled rows scores
them too. The two errors are compared class by class, each class weighted by its estimated
share of the unlabeled rows (so that labels drawn per class do not decide the weights). The
transductive solution is kept unless its held-out error is strictly higher and at least
:data:`MARGIN_ROWS` more held-out rows are wrong under it alone than under the SVM alone: a
tie keeps it, since on the clusters where the S3VM helps most both sides often make no
held-out error at all with a few labels, and a one-row difference is noise.

The same held-out decision values serve Platt's calibration for ``probability=True``, as
scikit-learn's ``SVC(probability=True)`` cross-validates for its sigmoid.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

#: Folds of the safeguard (and of the calibration it shares them with).
MAX_FOLDS = 5
#: Unlabeled rows each fold's refit reads at most (a seeded sample beyond): the evidence is
#: about the method, and a fold need not pay the full fit's cost on large data.
FOLD_UNLABELED = 5000


class UnlabeledDataWarning(UserWarning):
    """The unlabeled rows were judged harmful: the model is the SVM on the labeled rows."""


@dataclass
class HeldOut:
    """Decision values of the labeled rows, each from fits that did not see its label.

    Attributes
    ----------
    folds : int
    code : ndarray of shape (l,)
        The class index of each labeled row (in the order of the labeled rows of X).
    transductive, supervised : ndarray of shape (l, 1) for two classes, (l, k) for more
        Decision values of the semi-supervised refit and of the labeled rows' SVM.
    transductive_labels : ndarray of shape (l,)
        The class index the semi-supervised refit gave each row (its transduction).
    """

    folds: int
    code: np.ndarray
    transductive: np.ndarray
    supervised: np.ndarray
    transductive_labels: np.ndarray

    @property
    def supervised_labels(self) -> np.ndarray:
        return classes_of(self.supervised)


def classes_of(decisions: np.ndarray) -> np.ndarray:
    """The class index of each row of decision values (one column: its sign; more: argmax)."""
    if decisions.shape[1] == 1:
        return (decisions[:, 0] >= 0).astype(np.intp)
    return np.argmax(decisions, axis=1)


def weighted_error(code: np.ndarray, predicted: np.ndarray, weights: np.ndarray) -> float:
    """sum_c weights[c] * (the error on the rows of class c), over the classes present."""
    total, mass = 0.0, 0.0
    for c in np.unique(code):
        rows = code == c
        total += weights[c] * float(np.mean(predicted[rows] != c))
        mass += weights[c]
    return total / mass if mass > 0 else float("nan")


#: Held-out rows the S3VM alone must get wrong, beyond those the SVM alone gets wrong, before
#: the safeguard sets the S3VM aside: a single row is noise (one of 20 labeled rows is 5
#: points of error).
MARGIN_ROWS = 2


def discordant(code: np.ndarray, transductive: np.ndarray, supervised: np.ndarray
               ) -> tuple[int, int]:
    """(rows only the S3VM gets wrong, rows only the SVM gets wrong)."""
    t_wrong, s_wrong = transductive != code, supervised != code
    return int(np.sum(t_wrong & ~s_wrong)), int(np.sum(s_wrong & ~t_wrong))


def prefers_supervised(held: "HeldOut", weights: np.ndarray) -> tuple[bool, float, float]:
    """(whether the evidence sets the S3VM aside, its held-out error, the SVM's): its
    class-weighted error is strictly higher, by at least :data:`MARGIN_ROWS` rows."""
    t = weighted_error(held.code, held.transductive_labels, weights)
    s = weighted_error(held.code, held.supervised_labels, weights)
    only_t, only_s = discordant(held.code, held.transductive_labels, held.supervised_labels)
    return t > s and only_t - only_s >= MARGIN_ROWS, t, s


def held_out(clf, X, code, supervised_fit, seed: int) -> Optional[HeldOut]:
    """The held-out decisions of ``clf``'s semi-supervised fit and of the labeled rows' SVM
    (``supervised_fit(X, code)`` returns a callable giving the (n, 1 or k) decisions); None
    when a class has a single labeled row (no fold can hold out a row of every class)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import StratifiedKFold

    labeled = np.flatnonzero(code >= 0)
    unlabeled = np.flatnonzero(code < 0)
    k = clf.classes_.size
    folds = min(MAX_FOLDS, int(np.bincount(code[labeled], minlength=k).min()))
    if folds < 2:
        return None
    if unlabeled.size > FOLD_UNLABELED:
        unlabeled = np.sort(np.random.default_rng(seed).choice(
            unlabeled, FOLD_UNLABELED, replace=False))
    rows = np.concatenate([labeled, unlabeled])
    width = 1 if k == 2 else k
    trans = np.empty((labeled.size, width))
    sup = np.empty((labeled.size, width))
    trans_labels = np.empty(labeled.size, dtype=np.intp)
    split = StratifiedKFold(folds, shuffle=True, random_state=seed)
    for train, test in split.split(labeled, code[labeled]):
        held = code[rows].copy()
        held[test] = -1  # the fold's labels withheld: unlabeled rows of this refit
        fold = clf._fold_clone()
        with warnings.catch_warnings():  # the fit itself warns; its folds need not
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", UnlabeledDataWarning)
            fold._fit_codes(X[rows], held, clf.classes_)
        X_test = X[labeled[test]]
        trans[test] = fold._decisions(X_test).reshape(test.size, -1)
        trans_labels[test] = np.searchsorted(clf.classes_, fold.transduction_[test])
        train_code = held[held >= 0]
        sup[test] = supervised_fit(X[rows][held >= 0], train_code)(X_test)
    return HeldOut(folds, code[labeled], trans, sup, trans_labels)
