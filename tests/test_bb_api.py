"""``bb`` through the API and the command line: every node selection, limits, bad input.

Expected values are computed here, independently of the search:

- J at a full labeling is the project's exact Newton solver (``S3VMObjective``), itself checked
  against CVXPY in tests/test_bb.py, evaluated on every feasible labeling (enumeration);
  ``cvxpy_J`` (the definition, solved by Clarabel) checks the optimum once more;
- the optimum of ``bb`` must equal that enumerated minimum, with a labeling that attains it;
- on two instances it is also checked against the MIQP ``l2-miqp`` solved by SCIP.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from s3vm import api, cli
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs, noisy_linear, two_moons
from s3vm.models.l2_svm import S3VMObjective
from s3vm.solvers.errors import InputError

from reference import l2_objective

RTOL = 1e-6


def feasible_labelings(u, positives):
    S = np.array(list(itertools.product((-1, 1), repeat=u)), dtype=int)
    if positives is not None:
        S = S[(S == 1).sum(axis=1) == positives]
    return S


def enumerated(instance, settings):
    """(minimum of J over the feasible labelings, all values, the labelings)."""
    J = S3VMObjective(instance, settings)
    P = settings.positive_count(instance) if settings.balance == "count" else None
    S = feasible_labelings(instance.u, P)
    values = np.array([J(s) for s in S])
    return values.min(), values, S


CASES = {
    "moons-rbf-count": (lambda: two_moons(1, 5, noise=0.1, seed=1),
                        dict(kernel="rbf", sigma=0.5, C=10.0, C_star=10.0, balance="count",
                             positives="truth")),
    "moons-rbf-nobias": (lambda: two_moons(1, 5, noise=0.1, seed=2),
                         dict(kernel="rbf", sigma=0.5, C=10.0, C_star=10.0, bias=False,
                              balance="count", positives="truth")),
    "blobs-linear-none": (lambda: gaussian_blobs(n=14, p=2, separation=1.0,
                                                 n_labeled_per_class=2, seed=4),
                          dict(kernel="linear", C=1.0, C_star=0.5, balance="none")),
    "noisy-linear-count": (lambda: noisy_linear(per_class=2, u=10, p=3, noise=1.5, seed=5),
                           dict(kernel="linear", C=2.0, C_star=1.0, balance="count")),
    "noisy-rbf-nobias-none": (lambda: noisy_linear(per_class=2, u=9, p=2, noise=1.0, seed=6),
                              dict(kernel="rbf", sigma=1.5, C=5.0, C_star=1.0, bias=False,
                                   balance="none")),
    "moons-rbf-u12": (lambda: two_moons(1, 6, noise=0.15, seed=7),
                      dict(kernel="rbf", sigma=0.5, C=10.0, C_star=10.0, balance="count",
                           positives="truth")),
}


def case(name):
    build, kw = CASES[name]
    inst = build()
    assert inst.u <= 12
    return inst, Settings(**kw)


@pytest.mark.slow
@pytest.mark.solver
@pytest.mark.parametrize("node_selection", ["depth", "best", "best-dive"])
@pytest.mark.parametrize("name", list(CASES))
def test_optimum_equals_enumeration(name, node_selection):
    inst, settings = case(name)
    best, values, S = enumerated(inst, settings)
    result = api.solve(inst, "bb", settings, options={"node_selection": node_selection,
                                                      "log_every": 0})
    assert result.status == "optimal"
    assert result.objective == pytest.approx(best, rel=RTOL, abs=1e-9)
    assert result.lower_bound <= best * (1 + RTOL) + 1e-9
    # The labeling returned attains the optimum (and meets the balance count).
    hit = np.flatnonzero((S == result.labels).all(axis=1))
    assert hit.size == 1 and values[hit[0]] == pytest.approx(best, rel=RTOL, abs=1e-9)
    assert result.nodes >= 1
    assert l2_objective(inst, settings, result.labels) == pytest.approx(best, rel=1e-5, abs=1e-7)


@pytest.mark.solver
@pytest.mark.slow
def test_agrees_with_the_miqp_solved_by_scip():
    pytest.importorskip("pyscipopt")
    inst, settings = case("moons-rbf-u12")
    bb = api.solve(inst, "bb", settings, options={"log_every": 0})
    miqp = api.solve(inst, "l2-miqp", settings)
    assert bb.status == miqp.status == "optimal"
    assert bb.objective == pytest.approx(miqp.objective, rel=1e-5)


@pytest.mark.slow
def test_node_limit_gives_an_anytime_result():
    inst, settings = case("moons-rbf-u12")
    best, _, _ = enumerated(inst, settings)
    result = api.solve(inst, "bb", settings, options={"node_limit": 3, "log_every": 0,
                                                      "heuristic": "switching"})
    assert result.status in ("feasible", "optimal")
    assert result.lower_bound <= best * (1 + RTOL) + 1e-9 \
        <= result.objective * (1 + 2 * RTOL) + 2e-9


@pytest.mark.parametrize("formulation", ["bb", "bb-mip", "bb-sdp"])
def test_unmeetable_count_is_infeasible_with_exit_0(capsys, tmp_path, formulation):
    # More positives than unlabeled points: a well-formed problem without a solution. (A
    # negative count is not a count at all: bad input, exit 2, tested with the fuzz campaign.)
    inst, _ = case("moons-rbf-count")
    data = tmp_path / "m.csv"
    inst.to_csv(str(data))
    P = inst.u + 1
    no_bias = ["--no-bias"] if formulation == "bb-sdp" else []
    status = cli.main(["solve", str(data), "-f", formulation, "--balance", "count",
                       "--positives", str(P), "--json", "-q"] + no_bias)
    out, _ = capsys.readouterr()
    doc = json.loads(out)
    assert status == 0 and doc["status"] == "infeasible" and doc["labels"] is None


def test_cli_json_contract_and_tree(capsys, tmp_path):
    import networkx as nx

    inst, _ = case("moons-rbf-count")
    data, tree = tmp_path / "m.csv", tmp_path / "tree.graphml"
    inst.to_csv(str(data))
    status = cli.main(["solve", str(data), "-f", "bb", "--kernel", "rbf", "--sigma", "0.5",
                       "--C", "10", "--C-star", "10", "--balance", "count", "--positives",
                       "truth", "--tree", str(tree), "--json", "-q"])
    out, err = capsys.readouterr()
    assert status == 0 and err == ""
    doc = json.loads(out)
    assert doc["status"] == "optimal" and doc["solver"] == "builtin"
    assert len(doc["labels"]) == inst.u and len(doc["decision_values"]) == inst.u
    assert doc["nodes"] >= 1 and doc["lower_bound"] <= doc["objective"] + 1e-9
    assert nx.read_graphml(str(tree)).number_of_nodes() >= 1


@pytest.mark.parametrize("argv, words", [
    (["--time-limit", "0"], "time_limit"),   # the key's name in the keys table
    (["--time-limit", "-1"], "time_limit"),
    (["--heuristic", "greedy"], "heuristic"),
    (["--node-selection", "random"], "node-selection"),
    (["--solver", "highs"], "highs"),
    (["--mu", "0.1"], "mu"),
])
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, argv, words):
    inst, _ = case("moons-rbf-count")
    data, tree = tmp_path / "m.csv", tmp_path / "t.graphml"
    inst.to_csv(str(data))
    status = cli.main(["solve", str(data), "-f", "bb", "--tree", str(tree), "--json"] + argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err
    assert not tree.exists()


def test_heuristic_option_is_validated():
    with pytest.raises(InputError, match="heuristic"):
        api.solve(case("moons-rbf-count")[0], "bb", options={"heuristic": "x"})


@pytest.mark.slow
def test_result_reports_the_heuristic_labeling_and_its_objective():
    inst, settings = case("moons-rbf-count")
    best, values, S = enumerated(inst, settings)
    result = api.solve(inst, "bb", settings, options={"log_every": 0})
    start = result.info["heuristic"]
    assert start["name"] == "switching"
    hit = np.flatnonzero((S == np.array(start["labels"])).all(axis=1))
    assert hit.size == 1 and start["objective"] == pytest.approx(values[hit[0]], rel=1e-7)
    assert start["objective"] >= best * (1 - 1e-9)
    none = api.solve(inst, "bb", settings, options={"log_every": 0, "heuristic": "none"})
    assert "heuristic" not in none.info and none.objective == pytest.approx(best, rel=RTOL)


@pytest.mark.slow
@pytest.mark.solver
@pytest.mark.parametrize("formulation", ["bb", "bb-sdp"])
def test_a_search_closed_by_its_gap_tolerance_is_optimal_with_its_gap(formulation):
    # As a MIP solver reports it: optimal within the tolerance, the proven gap beside it.
    inst, settings = case("noisy-rbf-nobias-none")
    best, _, _ = enumerated(inst, settings)
    result = api.solve(inst, formulation, settings, options={"rel_gap": 0.5, "log_every": 0})
    assert result.status == "optimal" and "gap tolerance" in result.message
    assert 0 < result.gap <= 0.5
    assert result.lower_bound <= best * (1 + RTOL) + 1e-9 <= result.objective * (1 + RTOL) + 1e-9
