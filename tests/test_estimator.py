"""S3VMClassifier: a scikit-learn estimator (its checks, Pipeline, GridSearchCV), the
semi-supervised target convention, and an honest inductive rule for each family."""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from s3vm import S3VMClassifier
from s3vm.core.kernels import kernel_matrix
from s3vm.core.registry import formulation_class, formulation_names
from s3vm.data.generators import gaussian_blobs, two_moons
from s3vm.inductive import formulation_rule
from s3vm.solvers.errors import InputError

SKLEARN_16 = tuple(int(v) for v in sklearn.__version__.split(".")[:2]) >= (1, 6)

EXPECTED_FAILURES = {
    "check_classifiers_classes": (
        "the check fits targets {-1, 1}: -1 marks an unlabeled row in scikit-learn's "
        "semi-supervised convention (SelfTrainingClassifier, LabelSpreading), so those targets "
        "hold one class and fit refuses them"),
}

#: Every test fits the estimator (0.2 s or more each): left out of make test-fast.
pytestmark = pytest.mark.slow


def _sk_targets(instance, negative=0, positive=1, unlabeled=-1):
    """The instance's labels in scikit-learn's convention: two classes, -1 unlabeled."""
    out = np.full(instance.n, unlabeled, dtype=object)
    out[instance.label > 0], out[instance.label < 0] = positive, negative
    return out if isinstance(positive, str) else out.astype(int)


@pytest.fixture(scope="module")
def blobs():
    return gaussian_blobs(n=60, p=3, separation=3.0, n_labeled_per_class=3, seed=4)


if SKLEARN_16:
    from sklearn.utils.estimator_checks import parametrize_with_checks

    @parametrize_with_checks(
        [S3VMClassifier(), S3VMClassifier("vs3vm", kernel="rbf"), S3VMClassifier("sdp")],
        expected_failed_checks=lambda est: EXPECTED_FAILURES)
    def test_scikit_learn_checks(estimator, check):
        check(estimator)
else:  # pragma: no cover - the lower bound of setup.cfg
    def test_scikit_learn_checks():
        pytest.skip("expected_failed_checks needs scikit-learn >= 1.6")


def test_every_formulation_declares_its_problem_and_so_its_inductive_rule():
    # The rule follows from the declared problem (no table keyed by formulation name): every
    # registered formulation declares one of the three problems, and its rule is that problem's.
    rules = {1: "expansion", 2: "dual", 3: "linear"}
    for name in formulation_names():
        cls = formulation_class(name)
        assert cls.problem in rules, name
        assert formulation_rule(name) == rules[cls.problem], name


def test_parameters_are_stored_unchanged_and_cloned():
    clf = S3VMClassifier("bb", kernel="rbf", sigma=0.5, C=10.0, options={"node_limit": 50},
                         time_limit=3.0, unlabeled=0)
    params = clf.get_params()
    assert params["options"] == {"node_limit": 50} and params["sigma"] == 0.5
    copy = clone(clf)
    assert copy.get_params() == params
    copy.set_params(C=2.0)
    assert copy.C == 2.0 and clf.C == 10.0


@pytest.mark.parametrize("formulation,params", [
    ("switching", {}), ("switching", {"kernel": "rbf", "sigma": 1.5}),
    ("vs3vm", {"nu": 0.1}), ("vs3vm", {"kernel": "rbf", "sigma": 1.5, "nu": 0.1}),
    ("bd-mip", {"nu": 0.1}), ("bb", {"kernel": "rbf", "C": 10.0}),
])
def test_new_points_are_scored_by_the_solution_the_formulation_returned(blobs, formulation,
                                                                         params):
    y = _sk_targets(blobs)
    # The formulation's own solution, which the safeguard could replace by the labeled rows' SVM.
    clf = S3VMClassifier(formulation, safeguard=None, **params).fit(blobs.X, y)
    # On the training rows the inductive rule reproduces the formulation's own outputs.
    np.testing.assert_allclose(clf.decision_function(blobs.XU), clf.result_.decision_values,
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(clf.transduction_[blobs.labeled], y[blobs.labeled])
    np.testing.assert_array_equal(clf.transduction_[blobs.unlabeled],
                                  np.where(clf.result_.labels > 0, 1, 0))
    X_new = np.random.default_rng(0).normal(size=(7, blobs.p))
    scores = clf.decision_function(X_new)
    if clf.decision_rule_ == "expansion" and params.get("kernel") == "rbf":
        # The width used: the given sigma, or the default's median distance (sigma_).
        assert clf.sigma_ == params.get("sigma", clf.sigma_)
        K = kernel_matrix(X_new, blobs.X, "rbf", clf.sigma_)
        beta = np.asarray(clf.result_.primal["beta"])
        np.testing.assert_allclose(scores, K @ beta + clf.result_.primal["b"], atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X_new), np.where(scores >= 0, 1, 0))


def test_the_sdp_family_predicts_with_the_svm_at_its_rounded_labels(blobs):
    clf = S3VMClassifier("sdp", kernel="linear", C=1.0, balance="none").fit(blobs.X,
                                                                 _sk_targets(blobs))
    assert clf.decision_rule_ == "dual" and clf.intercept_ == 0.0
    y = blobs.label.astype(float)
    y[blobs.unlabeled] = clf.result_.labels
    alpha = np.asarray(clf.result_.primal["alpha"])
    np.testing.assert_allclose(clf.decision_function(blobs.X), blobs.X @ (blobs.X.T @ (alpha * y)),
                               atol=1e-9)
    # The supervised SVM at the rounded labels agrees with them almost everywhere.
    agree = np.mean(np.where(clf.decision_function(blobs.XU) >= 0, 1, -1) == clf.result_.labels)
    assert agree >= 0.9


def test_minus_one_marks_unlabeled_rows_and_any_two_labels_are_classes(blobs):
    y = _sk_targets(blobs, negative="benign", positive="malignant", unlabeled=-1)
    clf = S3VMClassifier().fit(blobs.X, y)
    assert list(clf.classes_) == ["benign", "malignant"]
    assert clf.result_.info["instance"] == "fit" and len(clf.result_.labels) == blobs.u
    assert set(clf.predict(blobs.X)) <= {"benign", "malignant"}
    # The s3vm CSV convention (+1/-1, 0 unlabeled) with unlabeled=0: the same problem.
    same = S3VMClassifier(unlabeled=0).fit(blobs.X, blobs.label)
    np.testing.assert_array_equal(same.result_.labels, clf.result_.labels)
    # With 5 as the marker, -1, 0 and 1 are three classes: one-vs-rest.
    three = S3VMClassifier(unlabeled=5).fit(blobs.X, blobs.label)
    assert three.classes_.tolist() == [-1, 0, 1]
    assert three.decision_function(blobs.X).shape == (blobs.n, 3)
    # One class is refused.
    with pytest.raises(ValueError, match="at least 2 classes"):
        S3VMClassifier().fit(blobs.X, np.where(blobs.label > 0, 1, -1))


def test_a_semi_supervised_fit_beats_the_labeled_rows_alone():
    data = two_moons(n_per_class_labeled=1, n_unlabeled_per_class=40, noise=0.1, seed=0)
    y = _sk_targets(data)
    truth = np.where(data.truth > 0, 1, 0)
    s3vm = S3VMClassifier("bb", kernel="rbf", sigma=0.5, C=10.0, balance="count").fit(data.X, y)
    supervised = S3VMClassifier(kernel="rbf", sigma=0.5, C=10.0).fit(data.X[data.labeled],
                                                                   y[data.labeled])
    assert s3vm.score(data.X, truth) >= 0.95
    assert s3vm.score(data.X, truth) > supervised.score(data.X, truth)


def test_pipeline_and_grid_search_score_without_nan():
    data = gaussian_blobs(n=90, p=2, separation=3.0, n_labeled_per_class=15, seed=2)
    y = _sk_targets(data)
    model = make_pipeline(StandardScaler(), S3VMClassifier(kernel="rbf"))
    search = GridSearchCV(model, {"s3vmclassifier__C": [0.1, 10.0]},
                          cv=StratifiedKFold(3, shuffle=True, random_state=0), error_score="raise")
    search.fit(data.X, y)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores > 0.7)
    assert search.best_params_["s3vmclassifier__C"] in (0.1, 10.0)
    # score leaves the unlabeled rows out: it is the accuracy on the labeled ones.
    fitted = search.best_estimator_
    labeled = y != -1
    assert fitted.score(data.X, y) == pytest.approx(
        np.mean(fitted.predict(data.X[labeled]) == y[labeled]))


def test_dataframes_are_taken_with_their_column_names(blobs):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(blobs.X, columns=["a", "b", "c"])
    clf = S3VMClassifier().fit(frame, pd.Series(_sk_targets(blobs)))
    assert list(clf.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_allclose(clf.decision_function(frame), clf.decision_function(blobs.X))


def test_bad_input_is_refused_clearly(blobs):
    y = _sk_targets(blobs)
    with pytest.raises(ValueError, match="[Cc]omplex"):
        S3VMClassifier().fit(blobs.X + 1j, y)
    with pytest.raises(InputError, match="unknown formulation|nope"):
        S3VMClassifier("nope").fit(blobs.X, y)
    with pytest.raises(InputError, match="needs --balance count|balance"):
        S3VMClassifier("switching", balance="none", positives=3).fit(blobs.X, y)
    with pytest.raises(InputError, match="sigma= must be > 0"):
        S3VMClassifier(kernel="rbf", sigma=-1.0).fit(blobs.X, y)
    with pytest.raises(ValueError, match="no labeled row"):
        S3VMClassifier().fit(blobs.X, np.full(blobs.n, -1))
    clf = S3VMClassifier().fit(blobs.X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(blobs.X[:, :2])
    # A file's defaults do not bind: bb-sdp solves without bias whatever the default says.
    small = gaussian_blobs(n=14, p=2, separation=4.0, n_labeled_per_class=2, seed=0)
    assert S3VMClassifier("bb-sdp").fit(small.X, _sk_targets(small)).intercept_ == 0.0


def test_targets_in_s3vm_convention_with_the_default_marker_warn(blobs):
    # s3vm's files mark unlabeled rows 0 and the classes +1/-1; read with the default marker -1
    # the -1 class was fitted as unlabeled and 0 became a class, without a word.
    y = blobs.label.astype(int)
    assert set(y.tolist()) == {-1, 0, 1}
    with pytest.warns(UserWarning, match="unlabeled=0"):
        S3VMClassifier().fit(blobs.X, y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        clf = S3VMClassifier(unlabeled=0).fit(blobs.X, y)
        assert clf.classes_.tolist() == [-1, 1]
        # scikit-learn's convention: classes 0/1, the many unlabeled rows -1
        S3VMClassifier().fit(blobs.X, _sk_targets(blobs))


def test_a_fit_its_time_limit_stops_warns_and_still_predicts():
    # bb on 300 unlabeled rows is far from proven in 1 s: its best labeling, with
    # scikit-learn's ConvergenceWarning (the fit gave no sign that it was cut short).
    from sklearn.exceptions import ConvergenceWarning

    moons = two_moons(5, 300, seed=2)
    with pytest.warns(ConvergenceWarning, match="time limit"):
        clf = S3VMClassifier("bb", kernel="rbf", sigma=0.5, C=10.0, time_limit=1.0).fit(
            moons.X, _sk_targets(moons))
    assert clf.result_.status == "time_limit"
    assert clf.predict(moons.XU).shape == (moons.u,)


@pytest.mark.parametrize("formulation", ["sdp", "sdp-lowrank"])
def test_a_relaxation_stopped_before_any_iterate_warns_instead_of_raising(formulation):
    # A stopped sdp raised InputError (bad input) and sdp-lowrank's fit raised at its limit:
    # the fit is the labeled rows' supervised problem then, said by a ConvergenceWarning.
    from sklearn.exceptions import ConvergenceWarning

    moons = two_moons(5, 700, seed=2)
    y = _sk_targets(moons)
    with pytest.warns(ConvergenceWarning, match="time limit") as caught:
        clf = S3VMClassifier(formulation, kernel="rbf", sigma=0.5, time_limit=0.5).fit(moons.X, y)
    assert clf.result_.status == "time_limit"
    # The warning says what the model is (issue 25: it said "(no unlabeled row: ...)" on data
    # with 1,400 unlabeled rows).
    message = " ".join(str(w.message) for w in caught if w.category is ConvergenceWarning)
    assert "no unlabeled row" not in message
    if "estimator_fallback" in clf.result_.info:
        assert "labeled rows alone" in message and "Increase time_limit" in message
    assert clf.transduction_.shape == (moons.n,)
    labeled = y != -1
    assert np.array_equal(clf.transduction_[labeled], y[labeled])
    assert set(clf.predict(moons.X).tolist()) <= {0, 1}


def test_one_parameter_set_serves_every_formulation(blobs):
    # A setting the formulation does not read is left out and named, not refused: C is not
    # vs3vm's, mu and nu are not switching's. The seed is read by every fit (the safeguard's
    # folds), so it is never ignored.
    y = _sk_targets(blobs)
    clf = S3VMClassifier("vs3vm", C=5.0, seed=3).fit(blobs.X, y)
    assert clf.ignored_params_ == ("C",)
    assert clf.result_.info["settings"].get("C") is None
    plain = S3VMClassifier("vs3vm", seed=3).fit(blobs.X, y)
    np.testing.assert_array_equal(clf.transduction_, plain.transduction_)
    switching = S3VMClassifier("switching", C=5.0, mu=0.5, nu=2.0).fit(blobs.X, y)
    assert switching.ignored_params_ == ("mu", "nu")
    assert switching.result_.info["settings"]["C"] == 5.0
    # A parameter left at the estimator's default is not named, read or not (balance).
    assert S3VMClassifier("vs3vm").fit(blobs.X, y).ignored_params_ == ()
    # bb-sdp fixes bias=False: given so, it is the formulation's own value, not ignored.
    small = gaussian_blobs(n=14, p=2, separation=4.0, n_labeled_per_class=2, seed=0)
    ys = _sk_targets(small)
    assert S3VMClassifier("bb-sdp", bias=False).fit(small.X, ys).ignored_params_ == ()


def test_grid_search_over_formulations(blobs):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    # Semi-supervised targets; stratified folds keep labeled rows of both classes in each
    # training fold, and score counts the labeled rows of the test fold.
    data = gaussian_blobs(n=60, p=3, separation=3.0, n_labeled_per_class=9, seed=4)
    search = GridSearchCV(S3VMClassifier(C=10.0, mu=0.5),
                          {"formulation": ["switching", "vs3vm", "bd-mip"]},
                          cv=StratifiedKFold(3), error_score="raise")
    search.fit(data.X, _sk_targets(data))
    assert len(search.cv_results_["mean_test_score"]) == 3
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_estimator_.formulation in ("switching", "vs3vm", "bd-mip")
