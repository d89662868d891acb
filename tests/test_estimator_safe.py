"""The safe default of S3VMClassifier (issue 34): an estimated class prior, a safeguard against
the labeled rows' SVM, the kernel by the data's form, and the report of what the unlabeled rows
did. Each check is against an independent computation or a property a wrong fit would break."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.svm import SVC

from s3vm import S3VMClassifier, UnlabeledDataWarning
from s3vm.estimator.prior import em_prior
from s3vm.solvers.errors import InputError

#: Every test fits the estimator (0.2 s or more each): left out of make test-fast.
pytestmark = pytest.mark.slow


def _blobs(n_pos, n_neg, per_class, seed, separation=3.0, p=2):
    """Two Gaussian classes, ``per_class`` labels drawn in each; the rest -1."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n_pos, p)) + separation / 2,
                   rng.normal(size=(n_neg, p)) - separation / 2])
    truth = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)]
    y = np.full(truth.size, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(truth == c), per_class, replace=False)] = c
    return X, y, truth


def test_em_prior_is_the_maximum_likelihood_mixture_weight():
    # Posteriors of two unit Gaussians at +-1 under a 1:1 training prior; the unlabeled rows
    # drawn 1:3. EM's fixed point is the weight maximizing sum log(pi f1 + (1 - pi) f0),
    # found here by a scalar search over the likelihood itself.
    rng = np.random.default_rng(0)
    x = np.r_[rng.normal(1.0, 1.0, 500), rng.normal(-1.0, 1.0, 1500)]
    f1, f0 = np.exp(-0.5 * (x - 1) ** 2), np.exp(-0.5 * (x + 1) ** 2)
    posterior = f1 / (f1 + f0)
    best = minimize_scalar(lambda pi: -np.sum(np.log(pi * f1 + (1 - pi) * f0)),
                           bounds=(1e-6, 1 - 1e-6), method="bounded",
                           options={"xatol": 1e-10}).x
    assert em_prior(posterior, 0.5) == pytest.approx(best, abs=1e-5)
    assert abs(best - 0.25) < 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_one_to_three_set_gets_its_prior_and_does_not_lose_to_svc(seed):
    # Labels drawn 10 a class carry a 1:1 ratio; the unlabeled rows are 1:3. Tolerance: the
    # prior within 0.1 of the truth; the error at most 1.5 points above SVC's on the same rows
    # (scikit-learn's SVC() on the labeled rows alone): the count comes from an
    # estimate a few rows off the truth (seed 1: 0.268 for 0.241), and each row the count
    # forces to the wrong side is an error.
    X, y, truth = _blobs(150, 450, 10, seed)
    clf = S3VMClassifier().fit(X, y)
    unlabeled = y == -1
    share = np.mean(truth[unlabeled])
    assert abs(clf.class_prior_[1] - share) <= 0.1, clf.report_["class_prior"]
    assert clf.report_["class_prior"]["source"] == "estimated"
    svc = SVC().fit(X[~unlabeled], y[~unlabeled])
    ours = np.mean(clf.transduction_[unlabeled] != truth[unlabeled])
    theirs = np.mean(svc.predict(X[unlabeled]) != truth[unlabeled])
    assert ours <= theirs + 0.015, (ours, theirs, clf.report_)
    # The labeled ratio (1:1) imposed on the 1:3 rows costs many errors: what the estimate
    # avoids.
    copied = S3VMClassifier(class_prior="labeled", safeguard=None).fit(X, y)
    assert np.mean(copied.transduction_[unlabeled] != truth[unlabeled]) > ours + 0.1


def _misleading(seed=2, n=1000, p=50, per_class=10):
    """Labels that do not follow the clusters (the SSL book's g241d, built small): two clusters
    4 apart along the first axis, each holding both classes, whose means differ by 3 along a
    random direction. The low-density separator (between the clusters) is the wrong one."""
    rng = np.random.default_rng(seed)
    side = rng.integers(0, 2, n) * 2 - 1
    truth = rng.integers(0, 2, n)
    direction = rng.normal(size=p)
    direction /= np.linalg.norm(direction)
    X = rng.normal(size=(n, p))
    X[:, 0] += 4.0 * side
    X += np.outer((2 * truth - 1) * 1.5, direction)
    y = np.full(n, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(truth == c), per_class, replace=False)] = c
    return X, y, truth


def test_labels_that_ignore_the_clusters_get_the_supervised_model_and_a_warning():
    X, y, truth = _misleading()
    with pytest.warns(UnlabeledDataWarning, match="did not help"):
        clf = S3VMClassifier().fit(X, y)
    assert clf.safeguard_ == "supervised"
    guard = clf.report_["safeguard"]
    assert guard["transductive_error"] > guard["supervised_error"]
    # The model is the labeled rows' SVM, scikit-learn's SVC() with its defaults: its
    # predictions, recomputed here by scikit-learn.
    labeled = y != -1
    svc = SVC().fit(X[labeled], y[labeled])
    np.testing.assert_array_equal(clf.predict(X), svc.predict(X))
    np.testing.assert_array_equal(clf.transduction_[~labeled], svc.predict(X[~labeled]))
    # The S3VM alone follows the clusters, and is far worse here.
    alone = S3VMClassifier(safeguard=None).fit(X, y)
    assert np.mean(alone.transduction_ != truth) > np.mean(clf.transduction_ != truth) + 0.1


def test_two_moons_keep_the_transductive_solution():
    from sklearn.datasets import make_moons

    X, truth = make_moons(400, noise=0.08, random_state=2)
    y = np.full(truth.size, -1)
    rng = np.random.default_rng(2)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(truth == c), 5, replace=False)] = c
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnlabeledDataWarning)
        clf = S3VMClassifier(sigma=0.5).fit(X, y)
    assert clf.safeguard_ == "transductive"
    unlabeled = y == -1
    svc = SVC(gamma=2.0).fit(X[~unlabeled], y[~unlabeled])
    assert np.mean(clf.transduction_[unlabeled] != truth[unlabeled]) < \
        np.mean(svc.predict(X[unlabeled]) != truth[unlabeled])


def test_the_report_counts_the_rows_the_unlabeled_data_changed():
    X, y, truth = _blobs(100, 100, 4, seed=5, separation=2.0)
    clf = S3VMClassifier(safeguard=None).fit(X, y)
    labeled = y != -1
    svc = SVC().fit(X[labeled], y[labeled])
    changed = int(np.sum(svc.predict(X[~labeled]) != clf.transduction_[~labeled]))
    assert clf.report_["changed"] == changed
    assert clf.report_["positives"] == clf.result_.info["settings"]["positives"]
    assert clf.report_["positives"] == round(clf.class_prior_[1] * np.sum(~labeled))
    assert clf.report_["objective"] == clf.result_.objective
    assert clf.report_["kernel"]["kernel"] == clf.kernel_ == "rbf"


def test_sparse_and_wide_input_get_the_linear_primal_path():
    rng = np.random.default_rng(3)
    X = sp.random(300, 400, density=0.05, random_state=3, format="csr")
    w = rng.normal(size=400)
    truth = (X @ w > 0).astype(int)
    y = np.full(300, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(truth == c), 10, replace=False)] = c
    clf = S3VMClassifier().fit(X, y)
    assert clf.kernel_ == "linear" and clf.report_["kernel"]["why"] == "auto: sparse input"
    assert clf.result_.formulation == "primal-tsvm"
    assert clf.report_["safeguard"]["folds"] == 5
    dense = S3VMClassifier(safeguard=None).fit(X.toarray()[:, :350][:300], y)
    assert dense.kernel_ == "linear"   # 350 features for 300 rows: wide


def test_one_labeled_row_in_a_class_keeps_the_labeled_ratio_and_the_s3vm():
    X, y, _ = _blobs(50, 50, 1, seed=0)
    clf = S3VMClassifier().fit(X, y)
    assert clf.report_["class_prior"]["source"] == "labeled ratio"
    assert clf.safeguard_ == "transductive" and clf.report_["safeguard"]["folds"] is None


def test_multiclass_and_probabilities_run_the_same_safeguard():
    X = np.r_[_blobs(60, 60, 4, 0)[0], _blobs(60, 0, 0, 1)[0] + [6.0, -6.0]]
    truth = np.r_[np.ones(60, int), np.zeros(60, int), np.full(60, 2)]
    y = np.full(truth.size, -1)
    for c in range(3):
        y[np.flatnonzero(truth == c)[:4]] = c
    clf = S3VMClassifier(probability=True).fit(X, y)
    assert clf.report_["safeguard"]["folds"] == 4 and clf.probability_cv_ == 4
    assert clf.safeguard_ in ("transductive", "supervised")
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize("params", [{"class_prior": "truth"}, {"class_prior": 1.5},
                                    {"class_prior": True}, {"safeguard": "always"},
                                    {"kernel": "poly"}])
def test_bad_safe_default_parameters_are_refused(params):
    X, y, _ = _blobs(20, 20, 3, seed=0)
    with pytest.raises(InputError):
        S3VMClassifier(**params).fit(X, y)
