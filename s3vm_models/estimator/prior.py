"""The class prior of the unlabeled rows, estimated from the data rather than copied from the
labeled rows.

The count balance of an S3VM (Joachims 1999) fixes how many unlabeled rows fall in each class.
The classic choice, the labeled rows' class ratio, is only as good as the way the labels were
drawn: labels drawn per class (the usual way people label) carry no ratio at all, and a few
labels drawn at random carry a noisy one (one standard deviation of a 20-row binomial is about
11 points), which the balance then imposes on every unlabeled row.

The estimate here combines four estimators of the positive share among the unlabeled rows,
each reading the SVM trained on the labeled rows (:func:`~s3vm.estimator.supervised.labeled_svm`)
or the unlabeled rows' neighbourhoods, and keeps their median; their spread is its uncertainty:

``count``
    classify and count: the share of unlabeled rows the SVM puts on the positive side;
``probability``
    the mean of the SVM's Platt-calibrated probabilities (Platt 2000; the sigmoid fitted on
    held-out decision values of the labeled rows);
``em``
    the EM prior adjustment of Saerens, Latinne and Decaestecker (2002, eq. 2.8-2.9): the
    calibrated posteriors, which carry the labeled rows' ratio, are reweighted towards a new
    prior until that prior is the mean of the reweighted posteriors;
``spreading``
    the share of unlabeled rows label spreading (Zhou et al. 2004; scikit-learn's
    ``LabelSpreading`` on a 10-nearest-neighbour graph) gives the positive class: the
    clusters' view, which does not read the SVM at all.

The labeled ratio is used instead when the median is within :data:`KEEP_RATIO` of it (no
evidence against it), when a class has a single labeled row (no
held-out calibration is possible), or when the user asks for it (``class_prior="labeled"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from s3vm.data.instance import is_sparse
from s3vm.estimator.supervised import labeled_svm
from s3vm.models.platt import fit_sigmoid, sigmoid_probability

#: The unlabeled rows label spreading reads at most (a seeded sample beyond): its graph is
#: built once over them and the labeled rows.
SPREADING_ROWS = 5000
#: The neighbours of label spreading's graph and its clamping (scikit-learn's defaults: 7, 0.2).
NEIGHBOURS = 10
ALPHA = 0.2
#: The labeled ratio stands unless the estimate moves it by more than this: the estimators are
#: biased towards the SVM's errors by a few points (two moons, 5 labels a class: 0.44-0.48 where
#: the truth and the labeled ratio are 0.5), and a count a few points off costs as many points
#: of error. (Not the estimators' spread as well: one degenerate estimator, EM at 0 or 1 from a
#: sigmoid fitted on 10 rows, makes it cover any ratio.)
KEEP_RATIO = 0.05
ESTIMATORS = ("count", "probability", "em", "spreading")
#: Folds of the held-out decision values the sigmoid is fitted on (fewer with fewer rows).
CALIBRATION_FOLDS = 10


@dataclass
class ClassPrior:
    """The positive class's share among the unlabeled rows, and how it was obtained.

    Attributes
    ----------
    share : float
        The share used (of the +1 class, ``classes_[1]`` for two classes).
    source : str
        ``"estimated"`` (the median of ``estimates``), ``"labeled ratio"`` (with ``why``),
        or ``"given"``.
    estimates : dict
        Each estimator's value, by name (empty unless estimated).
    why : str
        Why the source was chosen, in words.
    """

    share: float
    source: str
    estimates: dict = field(default_factory=dict)
    why: str = ""

    @property
    def spread(self) -> float:
        """Half the range of the four estimates (0 without): the share's uncertainty."""
        values = [v for k, v in self.estimates.items() if k in ESTIMATORS]
        if not values:
            return 0.0
        return 0.5 * (max(values) - min(values))

    def to_dict(self) -> dict:
        return {"share": self.share, "source": self.source, "why": self.why,
                "estimates": dict(self.estimates), "spread": self.spread}


def em_prior(posterior: np.ndarray, trained: float, tol: float = 1e-8,
             max_iter: int = 1000) -> float:
    """The EM prior adjustment of Saerens, Latinne and Decaestecker (2002).

    Parameters
    ----------
    posterior : ndarray of shape (u,)
        P(+1 | x) of each unlabeled row, calibrated under the training prior ``trained``.
    trained : float
        The positive share of the rows the posteriors were calibrated on, in (0, 1).

    Returns
    -------
    float
        The positive share pi of the unlabeled rows: the fixed point of
        pi = mean_i pi p_i / trained / (pi p_i / trained + (1 - pi) (1 - p_i) / (1 - trained)).
    """
    p = np.clip(np.asarray(posterior, dtype=float), 1e-12, 1.0 - 1e-12)
    prior = float(np.mean(p))
    for _ in range(max_iter):
        plus = prior / trained * p
        minus = (1.0 - prior) / (1.0 - trained) * (1.0 - p)
        new = float(np.mean(plus / (plus + minus)))
        if abs(new - prior) < tol:
            return new
        prior = new
    return prior


def held_out_decisions(X, y: np.ndarray, kernel: str, C: float, seed: int) -> np.ndarray:
    """Decision values of the labeled rows, each from an SVM not trained on it (stratified
    folds, at most :data:`CALIBRATION_FOLDS`)."""
    from sklearn.model_selection import StratifiedKFold

    folds = min(CALIBRATION_FOLDS, int(min(np.sum(y > 0), np.sum(y < 0))))
    scores = np.empty(y.size)
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(
            np.zeros(y.size), y):
        scores[test] = labeled_svm(X[train], y[train], kernel, C)(X[test])
    return scores


def spreading_share(X_labeled, y: np.ndarray, X_unlabeled, seed: int) -> float:
    """The positive share label spreading gives the unlabeled rows (at most
    :data:`SPREADING_ROWS` of them, a seeded sample beyond)."""
    import scipy.sparse as sp
    from sklearn.semi_supervised import LabelSpreading

    u = X_unlabeled.shape[0]
    if u > SPREADING_ROWS:
        rows = np.sort(np.random.default_rng(seed).choice(u, SPREADING_ROWS, replace=False))
        X_unlabeled = X_unlabeled[rows]
    if is_sparse(X_labeled):  # plain CSR blocks: scipy's vstack reads its list as an array
        X = sp.vstack([sp.csr_matrix(X_labeled), sp.csr_matrix(X_unlabeled)], format="csr")
    else:
        X = np.vstack([X_labeled, X_unlabeled])
    target = np.concatenate([(y > 0).astype(int), np.full(X_unlabeled.shape[0], -1)])
    neighbours = min(NEIGHBOURS, X.shape[0] - 1)
    model = LabelSpreading(kernel="knn", n_neighbors=neighbours, alpha=ALPHA, max_iter=100)
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():  # an unconverged spreading still gives a share
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, target)
    return float(np.mean(model.transduction_[y.size:] == 1))


def estimate_prior(X_labeled, y: np.ndarray, X_unlabeled, kernel: str, C: float,
                   seed: int = 0) -> ClassPrior:
    """The positive share among the unlabeled rows (see the module's notes).

    Parameters
    ----------
    X_labeled : array or sparse matrix of shape (l, p)
    y : ndarray of shape (l,)
        +1/-1.
    X_unlabeled : array or sparse matrix of shape (u, p), u >= 1
    kernel, C
        The supervised SVM's (:func:`~s3vm.estimator.supervised.labeled_svm`).
    seed : int
        Seeds the calibration folds and the spreading sample.
    """
    trained = float(np.mean(y > 0))
    smallest = int(min(np.sum(y > 0), np.sum(y < 0)))
    if smallest < 2:
        return ClassPrior(trained, "labeled ratio",
                          why="a class has one labeled row: no held-out calibration")
    A, B = fit_sigmoid(held_out_decisions(X_labeled, y, kernel, C, seed), y > 0)
    f = labeled_svm(X_labeled, y, kernel, C)(X_unlabeled)
    posterior = sigmoid_probability(f, A, B)
    estimates = {"count": float(np.mean(f >= 0)),
                 "probability": float(np.mean(posterior)),
                 "em": em_prior(posterior, trained),
                 "spreading": spreading_share(X_labeled, y, X_unlabeled, seed)}
    share = float(np.median(list(estimates.values())))
    prior = ClassPrior(share, "estimated", estimates,
                       why="the median of four estimators (class_prior='auto')")
    if abs(share - trained) <= KEEP_RATIO:
        return ClassPrior(trained, "labeled ratio", estimates,
                          why=f"the estimate {share:.3f} is within {KEEP_RATIO} of the labeled "
                              "ratio: no evidence against it")
    return prior
