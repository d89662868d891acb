"""bb (exact S3VM-L2 by branch and bound): the L2 SVM against CVXPY, bb against enumeration."""

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from s3vm.bounds.svm import SVMBoundProblem
from s3vm.core.kernels import kernel_matrix
from s3vm.core.registry import get_formulation
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs, two_moons
from s3vm.data.instance import Instance
from s3vm.models.l2_svm import S3VMObjective, squared_hinge_svm
from s3vm.models.label_switching import LabelSwitching
from s3vm.solvers.bnb.driver import search

from reference import l2_svm_value


@pytest.mark.solver
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("bias", [True, False])
def test_l2_svm_matches_cvxpy(seed, bias):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(4, 25))
    X = rng.normal(size=(m, 2)) + np.where(rng.random(m) < 0.5, 1.5, -1.5)[:, None]
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    C = rng.uniform(0.1, 20.0, size=m)
    K = kernel_matrix(X, kernel="rbf" if seed % 2 else "linear", sigma=0.8)
    sol = squared_hinge_svm(K, y, C, bias)
    assert sol.value == pytest.approx(l2_svm_value(K, y, C, bias), rel=1e-6, abs=1e-7)
    # The reported outputs are those of the reported expansion.
    assert np.allclose(sol.outputs, K @ sol.beta + sol.b)
    if not bias:
        assert sol.b == 0.0


def enumerate_optimum(objective, positives):
    best, best_labels = np.inf, None
    for bits in itertools.product((-1, 1), repeat=objective.u):
        labels = np.array(bits)
        if positives is not None and np.sum(labels == 1) != positives:
            continue
        value = objective(labels)
        if value < best:
            best, best_labels = value, labels
    return best, best_labels


def small_instances():
    cases = []
    for seed in range(2):
        moons = two_moons(1, 5, seed=seed)
        blobs = gaussian_blobs(n=12, separation=2.0, n_labeled_per_class=1, seed=seed)
        for inst, kernel in ((moons, "rbf"), (blobs, "linear"), (blobs, "rbf")):
            for bias in (True, False):
                for balance in ("count", "none"):
                    positives = "truth" if balance == "count" else None
                    cases.append((inst, Settings(kernel=kernel, sigma=0.5, C=10.0, C_star=5.0,
                                                 bias=bias, balance=balance, positives=positives)))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("case", small_instances())
def test_bb_matches_enumeration(case):
    instance, settings = case
    objective = S3VMObjective(instance, settings)
    positives = settings.positive_count(instance) if settings.balance == "count" else None
    best, _ = enumerate_optimum(objective, positives)
    problem = SVMBoundProblem(objective, positives, LabelSwitching())
    root = problem.bound(np.zeros(objective.u, dtype=int))
    assert root.value <= best + 1e-9
    result = search(problem, keep_tree=False, log=lambda s: None, progress=lambda s: None)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(best, rel=1e-7, abs=1e-9)
    assert objective(result.labels) == pytest.approx(best, rel=1e-7, abs=1e-9)
    assert result.lower_bound <= best + 1e-7
    if positives is not None:
        assert np.sum(result.labels == 1) == positives


def check_node_bounds(objective, positives, rng, trials=20):
    """Each node bound (incremental from a random parent) is at most every completion's J."""
    problem = SVMBoundProblem(objective, positives)
    u = objective.u
    for _ in range(trials):
        order = rng.permutation(u)
        depth = int(rng.integers(1, u))
        partial = np.zeros(u, dtype=int)
        state = problem.bound(partial).state
        for j in order[:depth]:
            partial = partial.copy()
            partial[j] = rng.choice([-1, 1])
            info = problem.bound(partial, state)
            state = info.state if info.state is not None else state
            fresh = problem.bound(partial)  # no parent: solved from scratch
            assert info.value == pytest.approx(fresh.value, rel=1e-8, abs=1e-10)
        free = np.flatnonzero(partial == 0)
        for bits in itertools.product((-1, 1), repeat=free.size):
            labels = partial.copy()
            labels[free] = bits
            assert info.value <= objective(labels) + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("bias", [True, False])
def test_node_bounds_are_lower_bounds(bias):
    instance = two_moons(1, 4, seed=3)
    objective = S3VMObjective(instance, Settings(kernel="rbf", sigma=0.5, C=10.0, bias=bias))
    check_node_bounds(objective, None, np.random.default_rng(0))


@pytest.mark.slow
@hsettings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), u=st.integers(2, 7), bias=st.booleans(),
       kernel=st.sampled_from(["linear", "rbf"]), count=st.booleans())
def test_bb_random_instances(seed, u, bias, kernel, count):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(u + 2, 2))
    label = np.zeros(u + 2, dtype=int)
    label[:2] = [1, -1]
    instance = Instance(X, label)
    settings = Settings(kernel=kernel, sigma=1.0, C=float(rng.uniform(0.5, 10)),
                        C_star=float(rng.uniform(0.5, 10)), bias=bias)
    objective = S3VMObjective(instance, settings)
    positives = int(rng.integers(0, u + 1)) if count else None
    best, _ = enumerate_optimum(objective, positives)
    problem = SVMBoundProblem(objective, positives, LabelSwitching())
    result = search(problem, keep_tree=False, log=lambda s: None, progress=lambda s: None)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(best, rel=1e-7, abs=1e-9)


@pytest.mark.subprocess
@pytest.mark.slow
def test_cli_json(tmp_path):
    instance = two_moons(1, 4, seed=1)
    path = tmp_path / "moons.csv"
    instance.to_csv(str(path))
    out = subprocess.run([sys.executable, "-m", "s3vm.cli", "solve", str(path),
                          "--formulation", "bb", "--kernel", "rbf", "--sigma", "0.5",
                          "--C", "10", "--balance", "count", "--positives", "truth", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "optimal"
    assert data["formulation"] == "bb"
    assert data["nodes"] >= 1
    assert len(data["labels"]) == instance.u == len(data["decision_values"])
    objective = S3VMObjective(instance, Settings(kernel="rbf", sigma=0.5, C=10.0))
    best, _ = enumerate_optimum(objective, int(np.sum(instance.truth_U == 1)))
    assert data["objective"] == pytest.approx(best, rel=1e-6)


def test_bad_heuristic_is_an_input_error():
    from s3vm.solvers.errors import InputError

    with pytest.raises(InputError):
        get_formulation("bb", heuristic="bogus")
