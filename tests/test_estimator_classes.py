"""S3VMClassifier beyond two classes (one-vs-rest), its calibrated probabilities (Platt
scaling on the labeled rows) and a grid search scored by roc_auc on the labeled rows."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import s3vm
from s3vm import S3VMClassifier
from s3vm.data.generators import gaussian_blobs
from s3vm.models.platt import fit_sigmoid, sigmoid_probability

#: Every test fits the estimator (0.2 s or more each): left out of make test-fast.
pytestmark = pytest.mark.slow


def _three_blobs(n_per_class=40, labeled=4, seed=0):
    """Three Gaussian blobs in the plane, ``labeled`` rows a class labeled 'a', 'b', 'c'."""
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [4.0, 0.0], [2.0, 3.5]])
    X = np.vstack([c + rng.normal(size=(n_per_class, 2)) for c in centers])
    truth = np.repeat(np.array(["a", "b", "c"]), n_per_class)
    y = np.full(truth.size, -1, dtype=object)
    for k in range(3):
        rows = np.arange(k * n_per_class, k * n_per_class + labeled)
        y[rows] = truth[rows]
    return X, y, truth


def test_three_string_classes_one_vs_rest():
    X, y, truth = _three_blobs()
    clf = S3VMClassifier(kernel="rbf", sigma=1.5, C=10.0, balance="count",
                         safeguard=None).fit(X, y)
    assert clf.classes_.tolist() == ["a", "b", "c"]
    f = clf.decision_function(X)
    assert f.shape == (X.shape[0], 3) and len(clf.estimators_) == 3 and clf.sigma_ == 1.5
    # Each column is the binary problem of its class against the others, fitted alone.
    for k, name in enumerate(clf.classes_):
        alone = np.where(y == -1, 0, np.where(y == name, 1, -1))
        single = S3VMClassifier(kernel="rbf", sigma=1.5, C=10.0, balance="count",
                                class_prior="labeled", safeguard=None,
                                unlabeled=0).fit(X, alone)
        np.testing.assert_allclose(f[:, k], single.decision_function(X), atol=1e-8)
        # ... with its own class's labeled ratio as its count (4 of 12 labeled rows)
        assert np.sum(clf.estimators_[k].result_.labels > 0) == round((X.shape[0] - 12) / 3)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(f, axis=1)])
    labeled = y != -1
    np.testing.assert_array_equal(clf.transduction_[labeled], y[labeled])
    # The blobs overlap (the Bayes error is a few percent).
    assert np.mean(clf.transduction_ != truth) < 0.1
    assert clf.score(X, truth) > 0.9


def test_two_classes_keep_one_decision_column(blobs2):
    X, y = blobs2
    clf = S3VMClassifier().fit(X, y)
    assert clf.decision_function(X).shape == (X.shape[0],)
    assert "estimators_" not in clf.__dict__


@pytest.fixture(scope="module")
def blobs2():
    data = gaussian_blobs(n=80, p=2, separation=2.0, n_labeled_per_class=10, seed=3)
    y = np.where(data.label > 0, 1, np.where(data.label < 0, 0, -1))
    return data.X, y


def test_digits_every_class_predicted_and_no_worse_than_svc_on_the_labeled_rows():
    # Issue 26: ten classes, five labeled a class. 600 rows keep the test quick (the exact
    # kernel path); docs/benchmarks/practitioner.md runs all 1,797.
    from sklearn.datasets import load_digits
    from sklearn.svm import SVC

    X, truth = load_digits(return_X_y=True)
    X, truth = X[:600] / 16.0, truth[:600]
    y = np.full(truth.size, -1)
    for k in range(10):
        y[np.flatnonzero(truth == k)[:5]] = k
    U = y == -1
    sigma = np.sqrt(X.shape[1] * X.var() / 2)   # gamma="scale"
    clf = S3VMClassifier(kernel="rbf", sigma=sigma, C=10.0, balance="count").fit(X, y)
    assert set(clf.predict(X[U]).tolist()) == set(range(10))
    svc = SVC(kernel="rbf", gamma="scale", C=10.0).fit(X[~U], y[~U])
    s3vm_error = np.mean(clf.predict(X[U]) != truth[U])
    svc_error = np.mean(svc.predict(X[U]) != truth[U])
    assert s3vm_error <= svc_error, (s3vm_error, svc_error)


def test_platt_sigmoid_matches_scikit_learns_own_fit():
    # An independent fit of the same problem (scikit-learn's CalibratedClassifierCV sigmoid:
    # the same targets, minimized by L-BFGS).
    from sklearn.calibration import _sigmoid_calibration

    rng = np.random.default_rng(1)
    y = rng.random(200) < 0.4
    f = np.where(y, 1.0, -1.0) + rng.normal(scale=1.2, size=200)
    A, B = fit_sigmoid(f, y)
    a, b = _sigmoid_calibration(f, y.astype(int))
    assert A == pytest.approx(a, abs=2e-3) and B == pytest.approx(b, abs=2e-3)
    p = sigmoid_probability(f, A, B)
    np.testing.assert_allclose(p, 1.0 / (1.0 + np.exp(A * f + B)))
    assert A < 0  # larger f, more positive


def test_predict_proba_is_calibrated_on_held_out_labeled_rows(blobs2):
    X, y = blobs2
    plain = S3VMClassifier(kernel="rbf", sigma=1.0, C=10.0)
    assert not hasattr(plain, "predict_proba")   # as SVC: only with probability=True
    clf = S3VMClassifier(kernel="rbf", sigma=1.0, C=10.0, probability=True,
                         safeguard=None).fit(X, y)
    assert clf.probability_cv_ == 5 and clf.safeguard_ == "transductive"
    P = clf.predict_proba(X)
    assert P.shape == (X.shape[0], 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # The sigmoid is the one fitted to the folds' held-out decision values: refit them here.
    # Each fold refits the S3VM with the fold's labels withheld, on the labeled rows first
    # and the unlabeled rows after (the safeguard's row order), without a safeguard of its own.
    labeled = np.flatnonzero(y != -1)
    rows = np.concatenate([labeled, np.flatnonzero(y == -1)])
    held = np.empty(labeled.size)
    split = StratifiedKFold(5, shuffle=True, random_state=0)
    for train, test in split.split(labeled, y[labeled]):
        fold_y = y[rows].copy()
        fold_y[test] = -1
        fold = S3VMClassifier(kernel="rbf", sigma=1.0, C=10.0, safeguard=None).fit(
            X[rows], fold_y)
        held[test] = fold.decision_function(X[labeled[test]])
    A, B = fit_sigmoid(held, y[labeled] == 1)
    np.testing.assert_allclose(P[:, 1], sigmoid_probability(clf.decision_function(X), A, B))
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(P))


def test_predict_proba_with_three_classes_sums_to_one():
    X, y, truth = _three_blobs(labeled=3)
    clf = S3VMClassifier(kernel="rbf", sigma=1.5, C=10.0, balance="count",
                         probability=True).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (X.shape[0], 3) and clf.probA_.shape == (3,)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(clf.classes_[np.argmax(P, axis=1)] == truth) > 0.9
    # One labeled row of a class: no fold holds it, the in-sample sigmoid stands in.
    y1 = y.copy()
    y1[[1, 2]] = -1
    one = S3VMClassifier(kernel="rbf", sigma=1.5, C=10.0, probability=True).fit(X, y1)
    assert one.probability_cv_ is None and np.allclose(one.predict_proba(X).sum(axis=1), 1.0)


def test_roc_auc_grid_search_scores_the_labeled_rows():
    data = gaussian_blobs(n=90, p=2, separation=2.5, n_labeled_per_class=15, seed=2)
    y = np.where(data.label > 0, 1, np.where(data.label < 0, 0, -1))
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = {"C": [0.1, 10.0]}
    # The -1 rows reach a plain "roc_auc" scorer: a third class, every score NaN.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = GridSearchCV(S3VMClassifier(kernel="rbf"), grid, cv=cv,
                             scoring="roc_auc").fit(data.X, y)
    assert np.all(np.isnan(plain.cv_results_["mean_test_score"]))
    search = GridSearchCV(S3VMClassifier(kernel="rbf"), grid, cv=cv, error_score="raise",
                          scoring=s3vm.labeled_scorer("roc_auc")).fit(data.X, y)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores > 0.8)
    # Each fold's score is roc_auc of the decision values of that fold's labeled rows.
    from sklearn.metrics import roc_auc_score

    best = search.best_estimator_
    keep = y != -1
    assert s3vm.labeled_scorer("roc_auc")(best, data.X, y) == pytest.approx(
        roc_auc_score(y[keep], best.decision_function(data.X[keep])))
    with pytest.raises(ValueError, match="no labeled row"):
        s3vm.labeled_scorer("roc_auc")(best, data.X[:3], np.full(3, -1))
