"""k-median clustering (Fung and Mangasarian 2001; docs/formulations.md#cvs3vm) and CVS3VM, the
clustered VS3VM for data without labels.

Expected values are computed here: 1-norm distances with numpy (|x - c| summed), medians with
np.median, the true clustering from how the data were generated, the oracle's share of points
with integer arithmetic.
"""

from __future__ import annotations

import functools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from s3vm import api, cli
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.cvs3vm import CVS3VM
from s3vm.models.kmedian import k_median, points_near_centers
from s3vm.solvers.errors import InputError
from s3vm.solvers.profiles import get_profile

# --------------------------------------------------------------------------------------------
# Data and independent computations
# --------------------------------------------------------------------------------------------

def blobs(seed: int, sizes=(40, 25, 15), p: int = 3, spread: float = 0.6, distance=20.0):
    """Well separated clusters of unequal sizes, rows shuffled: (X, true cluster of each row)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 1.0, (len(sizes), p))
    centres *= distance / np.linalg.norm(centres[:, None] - centres[None], axis=2).max()
    # push the centres apart until every pair is at least `distance` / 2 apart in the 1-norm
    while np.min([np.abs(a - b).sum() for i, a in enumerate(centres)
                  for b in centres[i + 1:]]) < distance / 2:
        centres = rng.normal(0.0, distance, (len(sizes), p))
    X = np.vstack([rng.normal(c, spread, (n, p)) for c, n in zip(centres, sizes)])
    truth = np.repeat(np.arange(len(sizes)), sizes)
    perm = rng.permutation(len(truth))
    return X[perm], truth[perm]


def l1(X, C):
    """1-norm distances |X_i - C_j|_1, from the definition."""
    return np.abs(np.asarray(X)[:, None, :] - np.asarray(C)[None, :, :]).sum(axis=2)


def same_partition(a, b) -> bool:
    """Whether two labelings of the rows are the same partition (equal up to relabeling)."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def exact_ceil(fraction: float, n: int) -> int:
    """ceil(fraction * n) for the decimal number the user typed, without rounding error."""
    return math.ceil(Fraction(str(fraction)) * n)


# --------------------------------------------------------------------------------------------
# 3. k-median
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_k_median_recovers_separated_clusters(seed):
    X, truth = blobs(seed)
    result = k_median(X, 3, seed=seed)
    assert result.centers.shape == (3, X.shape[1])
    assert result.assignment.shape == (X.shape[0],)
    assert same_partition(result.assignment, truth)
    # cost: the sum of 1-norm distances to the nearest center
    dist = l1(X, result.centers)
    assert np.array_equal(result.assignment, dist.argmin(axis=1))
    assert result.cost == pytest.approx(dist.min(axis=1).sum(), rel=1e-12)
    # the optimum of this partition: each cluster's coordinate-wise median
    best = sum(np.abs(X[truth == c] - np.median(X[truth == c], axis=0)).sum()
               for c in range(3))
    assert result.cost == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 4, 7])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_centers_are_the_medians_of_their_points(k, seed):
    """Fung and Mangasarian's rule stops when no center moves: each center is the coordinate-wise
    median of the points nearest to it (also where k does not fit the data)."""
    X, _ = blobs(seed, sizes=(30, 21, 12, 7))
    result = k_median(X, k, seed=seed)
    nearest = l1(X, result.centers).argmin(axis=1)
    assert np.array_equal(result.assignment, nearest)
    for c in range(k):
        members = X[nearest == c]
        assert members.shape[0] > 0, f"cluster {c} is empty"
        assert np.array_equal(result.centers[c], np.median(members, axis=0)), c


def uniform_points():
    """Unstructured data: k-median has many local optima, so restarts matter."""
    return np.random.default_rng(5).uniform(0.0, 1.0, (80, 2))


@pytest.mark.slow
def test_best_of_restarts_is_no_worse_than_single_runs():
    X = uniform_points()
    k = 6
    single = {s: k_median(X, k, n_init=1, seed=s).cost for s in range(8)}
    best = {s: k_median(X, k, n_init=10, seed=s).cost for s in range(8)}
    for s in range(8):
        # the first of the restarts at seed s is the single run at seed s
        assert best[s] <= single[s] + 1e-12, s
        for result in (k_median(X, k, n_init=10, seed=s),):
            assert result.cost == pytest.approx(l1(X, result.centers).min(axis=1).sum(),
                                                rel=1e-12)
    assert any(best[s] < single[s] - 1e-9 for s in range(8)), "restarts never helped"
    many = k_median(X, k, n_init=30, seed=0).cost
    assert many <= min(single.values()) + 1e-12


def test_k_median_is_reproducible():
    X = uniform_points()
    a, b = k_median(X, 4, seed=11), k_median(X, 4, seed=11)
    assert np.array_equal(a.centers, b.centers)
    assert np.array_equal(a.assignment, b.assignment)
    assert a.cost == b.cost and a.iterations == b.iterations


def test_one_cluster_is_the_median_of_all_points():
    X, _ = blobs(3)
    result = k_median(X, 1)
    median = np.median(X, axis=0)
    np.testing.assert_array_equal(result.centers[0], median)
    assert np.all(result.assignment == 0)
    assert result.cost == pytest.approx(np.abs(X - median).sum(), rel=1e-12)


def test_as_many_clusters_as_points_costs_nothing():
    X = uniform_points()[:12]
    result = k_median(X, X.shape[0], seed=2)
    assert result.cost == 0.0
    assert sorted(result.assignment.tolist()) == list(range(X.shape[0]))
    # every center is one of the points
    assert np.all(l1(X, result.centers).min(axis=0) == 0.0)


@pytest.mark.parametrize("k", [0, -1, 13, 100, 2.0, True, "2"])
def test_k_out_of_range_is_input_error(k):
    X = uniform_points()[:12]
    with pytest.raises(InputError):
        k_median(X, k)


def test_n_init_below_one_is_input_error():
    with pytest.raises(InputError):
        k_median(uniform_points(), 2, n_init=0)


@pytest.mark.parametrize("count", [3, 4, 9, 20, 79, 80])
def test_points_near_centers(count):
    X, _ = blobs(1, sizes=(40, 25, 15))
    n = X.shape[0]
    result = k_median(X, 3, seed=1)
    picked = points_near_centers(X, result, count)
    assert len(picked) == count == len(set(picked.tolist()))
    assert np.all((0 <= picked) & (picked < n))
    dist = l1(X, result.centers)
    sizes = np.bincount(result.assignment, minlength=3)
    got = np.bincount(result.assignment[picked], minlength=3)
    for c in range(3):
        # every cluster represented, at least its proportional share rounded down
        assert got[c] >= max(1, math.floor(count * sizes[c] / n)), (c, got, sizes)
        members = np.flatnonzero(result.assignment == c)
        chosen = np.intersect1d(members, picked)
        others = np.setdiff1d(members, picked)
        # within the cluster the chosen points are the nearest to its center
        if others.size:
            assert dist[chosen, c].max() <= dist[others, c].min(), c


# --------------------------------------------------------------------------------------------
# 4. CVS3VM
# --------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def unlabeled_blobs(n: int = 100, seed: int = 8) -> Instance:
    """Two well separated Gaussian classes in R^2, NO labels (label column all 0), truth kept."""
    rng = np.random.default_rng(seed)
    n_pos = n // 2
    truth = np.where(np.arange(n) < n_pos, 1, -1)
    X = rng.normal(0.0, 1.0, (n, 2)) + np.outer(truth, [4.0, 2.0])
    perm = rng.permutation(n)
    return Instance(X[perm], np.zeros(n), truth[perm], name="unlabeled_blobs")


def solve_cvs3vm(inst, **options):
    return CVS3VM(**options).solve(inst, Settings(mu=0.1, nu=1.0), get_profile(solver="highs"))


@pytest.mark.solver
@pytest.mark.parametrize("fraction, clusters", [(0.1, 2), (0.2, 4), (0.05, 3)])
def test_cvs3vm_on_data_without_labels(fraction, clusters):
    inst = unlabeled_blobs()
    n = inst.n
    result = solve_cvs3vm(inst, clusters=clusters, label_fraction=fraction)
    assert result.status == "feasible", result.message
    labels = np.asarray(result.labels)
    assert labels.shape == (n,) and set(np.unique(labels)) <= {-1, 1}
    oracle = np.asarray(result.info["oracle_rows"], dtype=int)
    assert len(oracle) == len(set(oracle.tolist())) == exact_ceil(fraction, n)
    # the oracle's rows carry their true labels; the others the classifier's
    assert np.array_equal(labels[oracle], inst.truth[oracle])
    rest = np.setdiff1d(np.arange(n), oracle)
    w, b = np.asarray(result.primal["w"]), float(result.primal["b"])
    scores = inst.X @ w + b
    np.testing.assert_allclose(result.decision_values, scores, rtol=1e-9, atol=1e-9)
    assert np.array_equal(labels[rest], np.where(scores[rest] >= 0, 1, -1))
    # the classifier's objective is VS3VM's on the oracle-labeled problem, from w and b
    XL, yL, XU = inst.X[oracle], inst.truth[oracle], inst.X[rest]
    fU = XU @ w + b
    concave = (np.maximum(0, 1 - yL * (XL @ w + b)).sum() + 0.1 * np.abs(w).sum()
               + np.minimum(np.maximum(0, 1 - fU), np.maximum(0, 1 + fU)).sum())
    assert result.objective == pytest.approx(concave, rel=1e-9)
    # well separated classes: CVS3VM classifies (almost) every point correctly
    assert np.mean(labels != inst.truth) <= 0.05


@pytest.mark.solver
def test_cvs3vm_oracle_rows_are_nearest_the_centers():
    inst = unlabeled_blobs()
    result = solve_cvs3vm(inst, clusters=2, label_fraction=0.1, seed=3)
    clustering = k_median(inst.X, 2, seed=3)
    oracle = np.asarray(result.info["oracle_rows"], dtype=int)
    dist = l1(inst.X, clustering.centers)
    for c in range(2):
        members = np.flatnonzero(clustering.assignment == c)
        chosen = np.intersect1d(members, oracle)
        assert chosen.size >= 1
        assert dist[chosen, c].max() <= dist[np.setdiff1d(members, oracle), c].min()


@pytest.mark.solver
def test_cvs3vm_oracle_label_overrides_the_classifier():
    """An oracle row whose true label disagrees with its cluster: the classifier puts it with
    its cluster, the output still carries the oracle's (true) label there."""
    inst = unlabeled_blobs()
    truth = inst.truth.copy()
    positives = np.flatnonzero(truth == 1)
    median = np.median(inst.X[positives], axis=0)
    central = positives[np.abs(inst.X[positives] - median).sum(axis=1).argmin()]
    truth[central] = -1  # the most central +1 point, relabeled -1 by the oracle
    noisy = Instance(inst.X, inst.label, truth)
    result = solve_cvs3vm(noisy, clusters=2, label_fraction=0.1)
    assert central in result.info["oracle_rows"]
    assert result.decision_values[central] > 0  # the classifier disagrees with the oracle
    assert result.labels[central] == -1
    assert np.mean(np.asarray(result.labels) != inst.truth) <= 0.05


@pytest.mark.solver
@pytest.mark.parametrize("fraction, n", [(0.07, 100), (0.14, 50), (0.28, 25)])
def test_cvs3vm_oracle_count_has_no_rounding_error(fraction, n):
    """7% of 100 points is 7 points. Regression: ceil(0.07 * 100) = ceil(7.000000000000001) = 8
    in floating point, so the oracle labeled one point more than asked."""
    inst = unlabeled_blobs(n=n)
    assert fraction * n != exact_ceil(fraction, n)  # the float product is not an integer
    result = solve_cvs3vm(inst, clusters=2, label_fraction=fraction)
    assert len(result.info["oracle_rows"]) == exact_ceil(fraction, n)


@pytest.mark.parametrize("options", [{"clusters": 1000}, {"clusters": 101}, {"clusters": 0},
                                     {"label_fraction": 0}, {"label_fraction": 1.5},
                                     {"label_fraction": -0.1}, {"label_fraction": 1}])
def test_cvs3vm_bad_options_are_input_errors(options):
    inst = unlabeled_blobs()
    with pytest.raises(InputError):
        api.solve(inst, "cvs3vm", solver="highs", options=options)


def test_cvs3vm_needs_truth():
    inst = unlabeled_blobs()
    no_truth = Instance(inst.X, inst.label, None)
    with pytest.raises(InputError):
        solve_cvs3vm(no_truth)
    with pytest.raises(InputError):
        api.solve(no_truth, "cvs3vm", solver="highs")


@pytest.fixture
def unlabeled_csv(tmp_path):
    path = tmp_path / "unlabeled.csv"
    unlabeled_blobs().to_csv(str(path))
    return str(path)


@pytest.mark.parametrize("argv", [["--clusters", "1000"], ["--label-fraction", "0"],
                                  ["--label-fraction", "1.5"], ["--label-fraction", "-0.1"]])
def test_cvs3vm_cli_bad_options_exit_2_with_one_line(capsys, unlabeled_csv, argv):
    status = cli.main(["solve", unlabeled_csv, "--formulation", "cvs3vm", *argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("s3vm: error:"), err


def test_cvs3vm_cli_without_truth_exits_2(capsys, tmp_path):
    inst = unlabeled_blobs()
    path = tmp_path / "no_truth.csv"
    Instance(inst.X, inst.label, None).to_csv(str(path))
    status = cli.main(["solve", str(path), "--formulation", "cvs3vm", "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and len(err.splitlines()) == 1


@pytest.mark.solver
def test_cvs3vm_cli_on_data_without_labels(capsys, unlabeled_csv):
    status = cli.main(["solve", unlabeled_csv, "--formulation", "cvs3vm", "--clusters", "2",
                       "--label-fraction", "0.1", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    result = json.loads(out)
    inst = unlabeled_blobs()
    assert len(result["labels"]) == len(result["decision_values"]) == inst.n
    assert np.mean(np.asarray(result["labels"]) != inst.truth) <= 0.05
