"""The K best labelings (issue 37 item 4): ``k_best`` of bb, bb-mip and bb-sdp returns the K best
labelings, best first, and ``pool_bound``, a proven bound on every other labeling; each checked
against an enumeration of all labelings (J by CVXPY from the primal, Problem 3's LP by linprog).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import s3vm
from s3vm import cli
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance
from s3vm.solvers.errors import InputError

from reference import L2Reference, labelings, problem3_columns, problem3_labeling_lp

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


@pytest.fixture(scope="module")
def inst():
    """n = 11, u = 7."""
    base = gaussian_blobs(n=11, p=2, separation=1.0, n_labeled_per_class=2, seed=5)
    return Instance(base.X, base.label, base.truth, name="kbest")


def check_pool(result, values, K, rel=1e-5):
    """The pool is the K best of ``values`` ({labeling: value}), best first, and pool_bound
    bounds every other labeling from below without falling below the K-th."""
    ranked = sorted(values.items(), key=lambda item: item[1])
    assert len(result.pool) == min(K, len(ranked))
    for entry, (labels, value) in zip(result.pool, ranked):
        assert entry["objective"] == pytest.approx(value, rel=rel, abs=1e-6)
        assert values[tuple(int(v) for v in entry["labels"])] == pytest.approx(
            entry["objective"], rel=rel, abs=1e-6)
    objectives = [entry["objective"] for entry in result.pool]
    assert objectives == sorted(objectives)
    assert len({tuple(entry["labels"]) for entry in result.pool}) == len(result.pool)
    rest = [value for labels, value in ranked[K:]]
    if rest:
        assert result.pool_bound <= min(rest) + 1e-6 * max(1.0, min(rest))
        assert result.pool_bound >= objectives[-1] - 1e-6 * max(1.0, objectives[-1])
    else:
        assert result.pool_bound == np.inf
    assert result.objective == pytest.approx(objectives[0], rel=rel, abs=1e-6)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("node_selection", ["depth", "best"])
def test_bb_returns_the_k_best_labelings_of_the_enumeration(inst, node_selection):
    settings = Settings(kernel="rbf", sigma=1.5, C=2.0, C_star=1.0)
    values = L2Reference(inst, settings).all_values()
    result = s3vm.solve(inst, "bb", kernel="rbf", sigma=1.5, C=2.0, C_star=1.0,
                        options={"k_best": 6, "node_selection": node_selection})
    assert result.status == "optimal"
    check_pool(result, values, 6)


@pytest.mark.solver
@pytest.mark.slow
def test_bb_pool_with_count_and_pairs(inst):
    settings = Settings(kernel="linear", C=1.0, C_star=1.0, balance="count")
    P = settings.positive_count(inst)
    unl = inst.unlabeled
    pairs = {"must": [(int(unl[0]), int(unl[1]))], "cannot": [(int(unl[2]), int(unl[3]))]}
    reference = L2Reference(inst, settings)
    values = {k: v for k, v in reference.all_values(P).items()
              if k[0] == k[1] and k[2] != k[3]}
    result = s3vm.solve(inst, "bb", pairs=pairs, kernel="linear", C=1.0, C_star=1.0,
                        balance="count", options={"k_best": 4})
    check_pool(result, values, 4)


@pytest.mark.solver
@pytest.mark.slow
def test_bb_mip_returns_the_k_best_labelings_of_the_enumeration(inst):
    A, d, B = problem3_columns(inst, "linear", 1.0)
    values = {tuple(s): problem3_labeling_lp(A, d, B, s, 0.1, 1.0)[0]
              for s in labelings(inst.u)}
    result = s3vm.solve(inst, "bb-mip", kernel="linear", mu=0.1, nu=1.0,
                        options={"k_best": 5})
    assert result.status == "optimal"
    check_pool(result, values, 5, rel=1e-6)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_bb_sdp_returns_the_k_best_labelings_of_the_enumeration(inst, workers):
    settings = Settings(kernel="rbf", sigma=1.5, C=2.0, C_star=1.0, bias=False,
                        balance="count")
    P = settings.positive_count(inst)
    values = L2Reference(inst, settings).all_values(P)
    result = s3vm.solve(inst, "bb-sdp", kernel="rbf", sigma=1.5, C=2.0, C_star=1.0,
                        bias=False, balance="count", options={"k_best": 4, "workers": workers})
    assert result.status == "optimal"
    check_pool(result, values, 4)


@pytest.mark.solver
@pytest.mark.slow
def test_a_pool_larger_than_the_labelings_holds_them_all(inst):
    settings = Settings(kernel="linear", C=1.0, C_star=1.0, balance="count")
    P = settings.positive_count(inst)
    values = L2Reference(inst, settings).all_values(P)   # 35 labelings of 7 with 3 or 4 +1
    result = s3vm.solve(inst, "bb", kernel="linear", balance="count",
                        options={"k_best": len(values) + 5})
    check_pool(result, values, len(values) + 5)
    assert result.to_dict()["pool_exhaustive"] is True
    assert result.to_dict()["pool_bound"] is None


@pytest.mark.slow
def test_the_command_line_prints_the_pool(inst, tmp_path, capsys):
    path = tmp_path / "kbest.csv"
    inst.to_csv(str(path))
    code = cli.main(["solve", str(path), "-f", "bb", "--k-best", "3", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert len(out["pool"]) == 3 and out["pool"][0]["labels"] == out["labels"]
    assert out["pool"][0]["objective"] == pytest.approx(out["objective"])
    assert out["pool_bound"] >= out["pool"][-1]["objective"] - 1e-9
    assert out["pool_exhaustive"] is False
    code = cli.main(["solve", str(path), "-f", "bb", "--k-best", "0", "--json"])
    err = capsys.readouterr()
    assert code == 2 and err.out == "" and len(err.err.strip().splitlines()) == 1


def test_without_k_best_there_is_no_pool(inst):
    result = s3vm.solve(inst, "bb", kernel="linear")
    assert result.pool is None and "pool" not in result.to_dict()


def test_bb_sdp_refuses_a_pool_under_the_mean_balance(inst):
    with pytest.raises(InputError, match="k_best needs"):
        s3vm.solve(inst, "bb-sdp", bias=False, balance="mean", options={"k_best": 2})


@pytest.mark.solver
@pytest.mark.slow
def test_bb_sdp_bounds_hold_for_the_pool_not_only_the_best():
    # With a pool a node's bound (and the box it comes from) must hold for every labeling
    # below the K-th best value, not only below the best: the child that excludes the best
    # labeling but holds the second is bounded by at most the second's value, after the root
    # (whose heuristics find the best) was bounded. On these well separated blobs the box of
    # the best value alone holds no labeling of that child (its bound is inf).
    from s3vm.core.registry import get_formulation

    base = gaussian_blobs(n=11, p=2, separation=2.0, n_labeled_per_class=2, seed=0)
    inst = Instance(base.X, base.label, base.truth)
    settings = Settings(kernel="rbf", sigma=1.5, C=2.0, C_star=1.0, bias=False,
                        balance="count")
    values = L2Reference(inst, settings).all_values(settings.positive_count(inst))
    first, second, *_ = sorted(values, key=values.get)
    j = next(k for k in range(inst.u) if first[k] != second[k])
    form = get_formulation("bb-sdp", k_best=4)
    problem = form.build(inst, settings)
    problem.notify_threshold(sorted(values.values())[3])
    root = problem.bound(np.zeros(inst.u, dtype=int))
    child = np.zeros(inst.u, dtype=int)
    child[j] = second[j]
    bound = problem.bound(child, root.state).value
    assert bound <= values[second] + 1e-6 * max(1.0, values[second])
