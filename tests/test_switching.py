"""switching at scale: the primal squared-hinge SVM on features, the Nystroem path, the balanced
start without a count, and the local minima against enumeration on tiny instances."""

import itertools
import time

import numpy as np
import pytest

import s3vm
from s3vm.core.kernels import kernel_matrix, nystroem
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs, two_moons
from s3vm.models.l2_svm import FactorObjective, PrimalSolution, S3VMObjective, squared_hinge_primal
from s3vm.models.label_switching import _anneal, label_switching

from reference import l2_svm_value_factor


@pytest.mark.solver
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("bias", [True, False])
def test_primal_l2_svm_matches_cvxpy_from_any_start(seed, bias):
    rng = np.random.default_rng(seed)
    m, p = int(rng.integers(6, 40)), int(rng.integers(1, 5))
    G = rng.normal(size=(m, p))
    y = np.where(G[:, 0] + rng.normal(size=m) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    C = rng.uniform(0.1, 20.0, size=m)
    expected = l2_svm_value_factor(G, y, C, bias)
    cold = squared_hinge_primal(G, y, C, bias)
    start = PrimalSolution(0.0, rng.normal(size=p) * 3, 2.0, None, None, 0)
    warm = squared_hinge_primal(G, y, C, bias, start)
    # A warm start that carries another active set's normal matrix (updated in place).
    again = squared_hinge_primal(G, y, C * 2.0, bias, cold)
    for sol in (cold, warm):
        assert sol.value == pytest.approx(expected, rel=1e-6, abs=1e-7)
        assert np.allclose(sol.outputs, G @ sol.w + sol.b)
    assert again.value == pytest.approx(l2_svm_value_factor(G, y, C * 2.0, bias),
                                        rel=1e-6, abs=1e-7)


def enumerate_optimum(objective, positives):
    best = np.inf
    for bits in itertools.product((-1, 1), repeat=objective.u):
        labels = np.array(bits)
        if positives is None or np.sum(labels == 1) == positives:
            best = min(best, objective(labels))
    return best


def tiny_cases():
    for seed in range(3):
        moons = two_moons(1, 5, seed=seed)
        blobs = gaussian_blobs(n=12, separation=2.0, n_labeled_per_class=1, seed=seed)
        for inst, kernel in ((moons, "rbf"), (blobs, "linear")):
            for balance in ("count", "none"):
                yield seed, inst, Settings(kernel=kernel, sigma=0.5, C=10.0, C_star=5.0,
                                           balance=balance)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(tiny_cases()), ids=lambda c: f"{c[0]}-{c[2].kernel}-"
                                                                  f"{c[2].balance}")
def test_local_minimum_against_enumeration(case):
    _, inst, settings = case
    exact = S3VMObjective(inst, settings)
    positives = settings.positive_count(inst) if settings.balance == "count" else None
    best = enumerate_optimum(exact, positives)
    result = s3vm.solve(inst, "switching", settings)
    # The reported J is the labels' J, recomputed on the kernel matrix, and no better than
    # the optimum.
    assert result.objective == pytest.approx(exact(result.labels), rel=1e-8, abs=1e-9)
    assert result.objective >= best - 1e-9 * max(1.0, abs(best))
    if positives is None:
        # Never worse than the search without a count alone (the method before the balanced
        # start).
        alone = _anneal(exact, None, None, (2.0 ** -k for k in range(10, -1, -1)), None,
                        None, None)[1]
        assert result.objective <= alone + 1e-9 * max(1.0, alone)


def test_linear_kernel_runs_in_the_primal_with_the_kernel_paths_labels():
    inst = gaussian_blobs(n=60, p=3, separation=2.0, n_labeled_per_class=2, seed=4)
    for balance in ("count", "none"):
        settings = Settings(kernel="linear", C=10.0, C_star=2.0, balance=balance)
        positives = settings.positive_count(inst) if balance == "count" else None
        kernel_path = label_switching(S3VMObjective(inst, settings), positives)
        primal_path = label_switching(FactorObjective(inst, settings, inst.X, True), positives)
        np.testing.assert_array_equal(kernel_path[0], primal_path[0])
        assert primal_path[1] == pytest.approx(kernel_path[1], rel=1e-7)


def test_nystroem_expansion_reproduces_the_factor_outputs():
    inst = two_moons(3, 300, seed=2)
    G, landmarks, V = nystroem(inst.X, 0.5, 80, seed=1)
    settings = Settings(kernel="rbf", sigma=0.5, C=10.0, balance="count")
    objective = FactorObjective(inst, settings, G, False, landmarks, V)
    sol = objective.solve(np.where(inst.truth[inst.unlabeled] > 0, 1, -1))
    beta = objective.beta(sol)
    # f = K beta + b with the exact kernel columns of the landmarks: what predict computes.
    K = kernel_matrix(inst.X, inst.X[landmarks], "rbf", 0.5)
    np.testing.assert_allclose(K @ beta[landmarks] + sol.b, sol.outputs, atol=1e-8)
    assert np.count_nonzero(beta) <= landmarks.size


@pytest.mark.wallclock
@pytest.mark.slow
@pytest.mark.parametrize("balance", ["count", "none"])
def test_two_moons_2000_points_accurate_in_seconds(balance):
    # 5 labels a moon: 35 s to 47 s on a loaded 2-core machine before (dense Cholesky factors
    # under contending BLAS threads), and 24% error without a count.
    inst = two_moons(5, 995, seed=0)
    clf = s3vm.S3VMClassifier("switching", kernel="rbf", sigma=0.5, C=10.0, balance=balance,
                              unlabeled=0)
    start = time.perf_counter()
    clf.fit(inst.X, inst.label)
    seconds = time.perf_counter() - start
    error = np.mean(clf.transduction_[inst.unlabeled] != inst.truth[inst.unlabeled])
    assert error < 0.03
    assert np.mean(clf.predict(inst.X[inst.unlabeled]) != inst.truth[inst.unlabeled]) < 0.03
    assert seconds < 25.0


@pytest.mark.wallclock
@pytest.mark.slow
def test_ten_thousand_points_in_seconds():
    inst = two_moons(5, 4995, seed=1)
    start = time.perf_counter()
    result = s3vm.solve(inst, "switching", kernel="rbf", sigma=0.5, C=10.0, C_star=10.0,
                        balance="count")
    seconds = time.perf_counter() - start
    assert result.status == "feasible"
    assert np.mean(result.labels != inst.truth[inst.unlabeled]) < 0.03
    assert "Nystroem" in result.info["kernel"]
    assert seconds < 40.0


@pytest.mark.solver
def test_the_search_returns_the_svm_at_its_labels():
    # switching trained the labels' SVM a second time, cold, after the search: seconds past a
    # time limit at 15,000 points. The search's own last training is that SVM.
    inst = two_moons(4, 25, seed=5)
    settings = Settings(kernel="linear", C=3.0)
    objective = FactorObjective(inst, settings, inst.X, True)
    labels, value, finished, solution = label_switching(objective, None, with_solution=True)
    assert finished
    y = objective.full_labels(labels)
    reference = l2_svm_value_factor(inst.X, y, objective.C, settings.bias)
    assert value == pytest.approx(reference, rel=1e-6, abs=1e-8)
    # Its outputs are its own (w, b), whose objective is the optimum at the labels.
    f = inst.X @ solution.w + solution.b
    np.testing.assert_allclose(solution.outputs, f, atol=1e-9)
    J = 0.5 * solution.w @ solution.w + np.sum(objective.C * np.maximum(0, 1 - y * f) ** 2)
    assert J == pytest.approx(reference, rel=1e-6, abs=1e-8)


def test_switching_does_not_begin_a_round_that_would_end_past_the_limit():
    from s3vm.formulations.switching import LabelSwitchingS3VM
    from s3vm.solvers.runtime.clock import Clock, ManualTimer

    timer = ManualTimer(100.0)
    clock = Clock(3.0, timer=timer)
    stop = LabelSwitchingS3VM._stop_in_time(clock)
    answers = []
    for step in (0.5, 0.5, 0.8, 0.8):  # rounds of 0.5 s, then 0.8 s
        answers.append(stop())
        timer.advance(step)
    # at 0, 0.5 and 1.0 s a round fits; at 1.8 s (1.2 s left) a round of 0.8 s still fits; at
    # 2.6 s (0.4 s left) it would end at 3.4 s
    assert answers == [False, False, False, False]
    assert stop() is True
