"""Scoring semi-supervised targets: any scikit-learn scorer, on the labeled rows only.

A cross-validation over semi-supervised targets (scikit-learn's convention: -1 on the unlabeled
rows) hands every test fold's rows to the scorer, the unlabeled ones with their marker. Accuracy
(:meth:`s3vm.S3VMClassifier.score`) leaves them out itself, but a scorer named by a string
(``scoring="roc_auc"``) sees -1 as a third class and returns NaN for every candidate.
:func:`labeled_scorer` wraps the scorer so that it scores the labeled rows of the fold::

    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    import s3vm

    search = GridSearchCV(s3vm.S3VMClassifier(), {"C": [1.0, 10.0]},
                          scoring=s3vm.labeled_scorer("roc_auc"), cv=StratifiedKFold(3))
    search.fit(X, y)            # y: the class labels, -1 on the unlabeled rows

Stratified folds over such targets put labeled rows of every class in every fold (the marker is
one more stratum). The rows of a test fold stay out of that fold's fit altogether, as in any
cross-validation: the fit is transductive on its training fold's unlabeled rows only.
"""

from __future__ import annotations

import numpy as np

from s3vm.data.targets import unlabeled_mask


class LabeledScorer:
    """A scorer ``(estimator, X, y) -> float`` that applies ``scorer`` to the rows of ``y``
    not equal to ``unlabeled`` (see :func:`labeled_scorer`)."""

    def __init__(self, scorer, unlabeled=-1, name=None):
        self.scorer = scorer
        self.unlabeled = unlabeled
        self.name = name

    def __call__(self, estimator, X, y, sample_weight=None, **kwargs):
        from sklearn.utils import _safe_indexing

        y = np.asarray(y)
        keep = np.flatnonzero(~unlabeled_mask(y, self.unlabeled))
        if keep.size == 0:
            raise ValueError("no labeled row to score: every target of the fold is the "
                             f"unlabeled marker {self.unlabeled!r}")
        if sample_weight is not None:
            kwargs["sample_weight"] = np.asarray(sample_weight)[keep]
        return self.scorer(estimator, _safe_indexing(X, keep), y[keep], **kwargs)

    def __repr__(self):
        return f"labeled_scorer({self.name or self.scorer!r}, unlabeled={self.unlabeled!r})"


def labeled_scorer(scoring, unlabeled=-1) -> LabeledScorer:
    """A scorer that scores on the labeled rows only, for ``GridSearchCV(scoring=...)``,
    ``cross_val_score`` and the like.

    Parameters
    ----------
    scoring : str or callable
        A scorer name of :func:`sklearn.metrics.get_scorer_names` (``"roc_auc"``,
        ``"balanced_accuracy"``, ...) or a scorer ``(estimator, X, y) -> float``. ``roc_auc``
        reads :meth:`~s3vm.S3VMClassifier.decision_function`; the multi-class ``roc_auc_ovr``
        reads ``predict_proba`` (``S3VMClassifier(probability=True)``).
    unlabeled : int, float or str, default -1
        The target value of an unlabeled row (the estimator's ``unlabeled``).

    Returns
    -------
    LabeledScorer

    Raises
    ------
    ValueError
        At scoring time, when a test fold holds no labeled row.

    Examples
    --------
    >>> import s3vm
    >>> s3vm.labeled_scorer("roc_auc")
    labeled_scorer('roc_auc', unlabeled=-1)
    """
    from sklearn.metrics import get_scorer

    if isinstance(scoring, str):
        return LabeledScorer(get_scorer(scoring), unlabeled, name=scoring)
    if not callable(scoring):
        raise ValueError(f"scoring must be a scorer name or a callable, got {scoring!r}")
    return LabeledScorer(scoring, unlabeled)
