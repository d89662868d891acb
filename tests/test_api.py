"""The Python API around the formulations: estimator, settings checks, profiles, kernels, Result."""

import json
import math

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from s3vm import api
from s3vm.core.kernels import kernel_matrix
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance
from s3vm.data.scaling import scale_features
from s3vm.solvers.errors import InputError, SolverUnavailableError
from s3vm.solvers.profiles import SolverProfile, get_profile, read_profile, shipped_profiles
from s3vm.solvers.registry import BACKENDS, get_backend, installed_solvers, unavailable_reason
from s3vm.solvers.results import Result


@pytest.fixture(scope="module")
def blobs():
    return gaussian_blobs(n=60, p=3, separation=3.0, n_labeled_per_class=3, seed=4)


# -- settings and options checks ---------------------------------------------------------
@pytest.mark.solver
def test_settings_not_read_by_a_formulation_are_refused(blobs):
    with pytest.raises(InputError, match="C= does not apply to rlp"):
        api.solve(blobs, "rlp", C=3.0)
    with pytest.raises(InputError, match="positives= needs balance='count'"):
        api.solve(blobs, "bd-mip", positives=3)
    with pytest.raises(InputError, match="clusters= does not apply"):
        api.solve(blobs, "svm1", options={"clusters": 3})
    # A setting read by one of the formulations compared is fine.
    rows = api.compare(blobs, ["rlp", "svm1"], mu=0.5)
    assert [r.formulation for r, _ in rows] == ["rlp", "svm1"]
    with pytest.raises(InputError, match="applies to none"):
        api.compare(blobs, ["rlp", "svm1"], options={"clusters": 3})


@pytest.mark.parametrize("field,value", [("C", -1.0), ("mu", -0.1), ("nu", float("nan")),
                                         ("sigma", 0.0), ("kernel", "poly"),
                                         ("balance", "half"), ("positives", 1.5)])
def test_settings_validate_their_values(field, value):
    with pytest.raises(InputError):
        Settings(**{field: value})


def test_positive_count_default_and_truth(blobs):
    # 3 labeled of each class: the default count is round(u / 2); "truth" counts truth_U.
    assert Settings().positive_count(blobs) == round(blobs.u * 0.5)
    assert Settings(positives="truth").positive_count(blobs) == int(np.sum(blobs.truth_U == 1))
    with pytest.raises(InputError, match="positives must lie"):
        Settings(positives=blobs.u + 1).positive_count(blobs)


# -- profiles and registry ---------------------------------------------------------------
def test_shipped_profiles_load_and_name_known_solvers():
    shipped = shipped_profiles()
    assert {"highs", "scip"} <= set(shipped)
    for name, path in shipped.items():
        assert read_profile(path).solver in BACKENDS


def test_profile_file_and_overrides(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('solver = "highs"\ntime_limit = 5\n[options]\npresolve = "off"\n')
    profile = get_profile(profile_path=str(path))
    assert (profile.solver, profile.time_limit, profile.options) == \
        ("highs", 5, {"presolve": "off"})
    # Another solver than the profile's would run with options meant for HiGHS: refused.
    with pytest.raises(InputError, match="two solvers"):
        get_profile("scip", str(path))
    assert get_profile("highs", str(path)) == profile
    assert profile.updated(time_limit=9).time_limit == 9
    with pytest.raises(InputError):
        SolverProfile(time_limit=0)
    with pytest.raises(InputError):
        SolverProfile(threads=0)


@pytest.mark.solver
def test_highs_rejects_an_unknown_option(blobs):
    from s3vm.formulations.svm1 import SVM1

    with pytest.raises(InputError, match="HiGHS rejected"):
        SVM1().solve(blobs, Settings(), SolverProfile(options={"no_such_option": 1}))


def test_registry_reports_missing_solvers():
    assert "highs" in installed_solvers("lp") and "highs" in installed_solvers("mip")
    assert "scs" in installed_solvers("sdp") and "highs" not in installed_solvers("sdp")
    for name, classes in BACKENDS.items():
        for cls in classes:
            if unavailable_reason(name, cls) is not None:
                with pytest.raises(SolverUnavailableError, match="installed solvers"):
                    get_backend(name, cls)
    with pytest.raises(InputError, match="unknown solver"):
        get_backend("nope", "lp")
    with pytest.raises(InputError, match="does not solve SDP"):
        get_backend("highs", "sdp")
    # No name: the class's default.
    assert get_backend(None, "lp").name == "highs" and get_backend(None, "sdp").name == "scs"


# -- kernels and scaling -----------------------------------------------------------------
def test_kernels_match_scikit_learn_with_sigma_convention():
    rng = np.random.default_rng(3)
    X, Z = rng.normal(size=(9, 4)), rng.normal(size=(5, 4))
    np.testing.assert_allclose(kernel_matrix(X, Z, "rbf", 1.7),
                               rbf_kernel(X, Z, gamma=1 / (2 * 1.7 ** 2)), atol=1e-14)
    np.testing.assert_allclose(kernel_matrix(X, Z, "linear"), X @ Z.T)


def test_scaling_is_explicit_and_handles_constant_columns():
    X = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 4.0], [5.0, 5.0, 9.0]])
    S = scale_features(X, "standard")
    np.testing.assert_allclose(S[:, 0], (X[:, 0] - 3) / np.std(X[:, 0]))
    np.testing.assert_array_equal(S[:, 1], 0.0)
    M = scale_features(X, "minmax")
    np.testing.assert_allclose(M.min(axis=0)[[0, 2]], 0.0)
    np.testing.assert_allclose(M.max(axis=0)[[0, 2]], 1.0)


# -- Result ------------------------------------------------------------------------------
def test_result_gap_and_json():
    r = Result("x", "highs", "feasible", objective=10.0, lower_bound=8.0,
               labels=np.array([1, -1]), decision_values=np.array([0.5, -math.inf]))
    assert r.gap == pytest.approx(0.2)
    d = json.loads(r.to_json())
    assert d["labels"] == [1, -1] and d["decision_values"] == [0.5, None]
    assert Result("x", "s", "optimal", objective=0.5, lower_bound=0.5).gap == 0.0
    assert Result("x", "s", "error").gap is None
    with pytest.raises(ValueError):
        Result("x", "s", "solved")


def test_instance_views_keep_file_order():
    X = np.arange(12.0).reshape(6, 2)
    inst = Instance(X, [0, 1, 0, -1, 0, 0], truth=[1, 1, -1, -1, 1, -1])
    np.testing.assert_array_equal(inst.unlabeled, [0, 2, 4, 5])
    np.testing.assert_array_equal(inst.XU, X[[0, 2, 4, 5]])
    np.testing.assert_array_equal(inst.truth_U, [1, -1, 1, -1])
    assert (inst.l, inst.u) == (2, 4)


@pytest.mark.solver
@pytest.mark.parametrize("formulation", ["rlp", "svm1", "vs3vm"])
def test_an_all_zero_feature_gets_weight_zero_in_the_dual_form(formulation):
    # Regression: the empty dual row of an all-zero column used to give w_k = NaN.
    data = gaussian_blobs(n=40, p=3, separation=3.0, n_labeled_per_class=4, seed=2)
    X = np.column_stack([data.X[:, 0], np.zeros(data.n), data.X[:, 1:]])
    inst = Instance(X, data.label, truth=data.truth)
    dual = api.solve(inst, formulation, options={"lp_form": "dual"})
    primal = api.solve(inst, formulation, options={"lp_form": "primal"})
    assert np.all(np.isfinite(dual.primal["w"])) and dual.primal["w"][1] == 0.0
    assert dual.objective == pytest.approx(primal.objective, rel=1e-7, abs=1e-9)
