"""A certificate anyone can check (issue 37 item 5): bb-sdp writes its proof with
``certificate=`` (``--certificate FILE``), and ``s3vm check-certificate`` recomputes every node's
bound and the tree's coverage from the instance alone. A valid certificate holds (and states the
optimum an enumeration finds); a tampered one fails: a bound changed, a node removed, y altered,
the box, the data or the incumbent's value changed.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

import s3vm
from s3vm import cli
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance
from s3vm.solvers.errors import InputError

from reference import L2Reference

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")

KEYWORDS = dict(kernel="rbf", sigma=1.5, C=2.0, C_star=1.0, bias=False)


@pytest.fixture(scope="module")
def inst():
    base = gaussian_blobs(n=13, p=2, separation=1.0, n_labeled_per_class=2, seed=5)
    return Instance(base.X, base.label, base.truth, name="certified")


@pytest.fixture(scope="module")
def certified(inst, tmp_path_factory):
    path = tmp_path_factory.mktemp("certificate") / "proof.json"
    result = s3vm.solve(inst, "bb-sdp", balance="count", **KEYWORDS,
                        options={"certificate": str(path), "workers": 1})
    assert result.status == "optimal"
    return result, json.loads(path.read_text())


def check(document) -> "s3vm.models.certificate_check.CheckReport":
    from s3vm.models.certificate_check import check_certificate

    return check_certificate(document)


@pytest.mark.solver
@pytest.mark.slow
def test_a_valid_certificate_holds_and_states_the_enumerated_optimum(inst, certified):
    result, document = certified
    report = check(document)
    assert report.holds, report.failures
    settings = Settings(balance="count", **KEYWORDS)
    values = L2Reference(inst, settings).all_values(settings.positive_count(inst))
    best = min(values.values())
    assert report.value == pytest.approx(best, rel=1e-5)
    assert report.value == pytest.approx(result.objective)
    assert report.nodes == len(document["nodes"]) and report.nodes > 3
    kinds = {(node.get("proof") or {}).get("kind") for node in document["nodes"]}
    assert "sdp" in kinds


def _pruned_sdp(document):
    return next(node for node in document["nodes"]
                if node["status"] == "pruned" and (node.get("proof") or {}).get("kind") == "sdp")


@pytest.mark.slow
def test_a_changed_bound_fails(certified):
    document = copy.deepcopy(certified[1])
    node = _pruned_sdp(document)
    node["proof"]["value"] += 0.01 * max(1.0, abs(node["proof"]["value"]))
    report = check(document)
    assert not report.holds and any("stated" in f for f in report.failures)
    document = copy.deepcopy(certified[1])
    node = _pruned_sdp(document)
    node["bound"] += 1.0
    report = check(document)
    assert not report.holds and any("states the bound" in f for f in report.failures)


def test_a_removed_node_fails(certified):
    document = copy.deepcopy(certified[1])
    node = _pruned_sdp(document)
    document["nodes"].remove(node)
    report = check(document)
    assert not report.holds and any("children, not 2" in f for f in report.failures)
    document = copy.deepcopy(certified[1])
    branched = next(node for node in document["nodes"][1:] if node["status"] == "branched")
    document["nodes"].remove(branched)
    assert not check(document).holds


def test_an_altered_y_fails(certified):
    document = copy.deepcopy(certified[1])
    node = _pruned_sdp(document)
    node["proof"]["y"] = [0.5 * v for v in node["proof"]["y"]]
    assert not check(document).holds


def test_a_box_that_cuts_off_labelings_fails(certified):
    document = copy.deepcopy(certified[1])
    node = _pruned_sdp(document)
    proof = node["proof"]
    free = [i for i, (lo, hi) in enumerate(zip(proof["L"], proof["U"])) if lo < 0 < hi]
    proof["L"][free[0]] = 1.0   # claims the point is labeled +1
    report = check(document)
    assert not report.holds and any("box cuts off" in f for f in report.failures)


def test_changed_data_or_a_lower_incumbent_value_fails(certified):
    document = copy.deepcopy(certified[1])
    document["problem"]["X"][0][0] += 0.5
    assert not check(document).holds
    document = copy.deepcopy(certified[1])
    document["incumbent"]["value"] *= 0.99
    report = check(document)
    assert not report.holds and any("incumbent's multipliers" in f for f in report.failures)


@pytest.mark.solver
@pytest.mark.slow
def test_a_search_stopped_early_proves_nothing(inst, tmp_path):
    path = tmp_path / "stopped.json"
    s3vm.solve(inst, "bb-sdp", balance="count", **KEYWORDS,
               options={"certificate": str(path), "workers": 1, "node_limit": 3})
    report = check(json.loads(path.read_text()))
    assert not report.holds and any("open" in f for f in report.failures)


@pytest.mark.solver
@pytest.mark.slow
def test_with_pairs_and_no_balance_the_certificate_holds(inst, tmp_path):
    unl = [int(r) for r in inst.unlabeled]
    pairs = {"must": [(unl[0], unl[1])], "cannot": [(unl[2], unl[3])]}
    path = tmp_path / "pairs.json"
    result = s3vm.solve(inst, "bb-sdp", pairs=pairs, **KEYWORDS,
                        options={"certificate": str(path), "workers": 1})
    document = json.loads(path.read_text())
    report = check(document)
    assert report.holds, report.failures
    values = L2Reference(inst, Settings(**KEYWORDS)).all_values()
    kept = [v for k, v in values.items() if k[0] == k[1] and k[2] != k[3]]
    assert report.value == pytest.approx(min(kept), rel=1e-5)
    assert result.objective == pytest.approx(min(kept), rel=1e-5)
    # The groups are the checker's own: a tree that ignored them would not cover its root.
    document["problem"]["group"] = None
    assert not check(document).holds


@pytest.mark.solver
@pytest.mark.slow
def test_the_command_line_writes_and_checks_a_certificate(inst, tmp_path, capsys):
    data = tmp_path / "data.csv"
    inst.to_csv(str(data))
    path = tmp_path / "proof.json"
    code = cli.main(["solve", str(data), "-f", "bb-sdp", "--no-bias", "--kernel", "rbf",
                     "--sigma", "1.5", "--C", "2", "--C-star", "1", "--workers", "1",
                     "--certificate", str(path), "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "optimal"
    assert cli.main(["check-certificate", str(path)]) == 0
    line = capsys.readouterr().out
    assert line.startswith("certificate holds") and f"{out['objective']:.10g}" in line
    tampered = json.loads(path.read_text())
    _pruned_sdp(tampered)["proof"]["value"] += 1.0
    path.write_text(json.dumps(tampered))
    assert cli.main(["check-certificate", str(path)]) == 1
    assert capsys.readouterr().out.startswith("certificate fails")
    path.write_text("{not json")
    assert cli.main(["check-certificate", str(path)]) == 2
    err = capsys.readouterr()
    assert err.out == "" and len(err.err.strip().splitlines()) == 1
    path.write_text(json.dumps({"format": "something else"}))
    assert cli.main(["check-certificate", str(path)]) == 2


@pytest.mark.subprocess
def test_the_checker_needs_no_solver():
    code = ("import sys, json\n"
            "from s3vm.models.certificate_check import check_certificate\n"
            "roots = {m.split('.')[0] for m in sys.modules}\n"
            "print(json.dumps(sorted(roots & {'cvxpy', 'pyomo', 'sdpap', 'scs', 'highspy',"
            " 'clarabel', 'pyscipopt', 'mosek', 'sklearn'})))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout) == []


def test_a_certificate_is_refused_where_it_cannot_be_written(inst):
    with pytest.raises(InputError, match="certificate needs"):
        s3vm.solve(inst, "bb-sdp", balance="mean", bias=False,
                   options={"certificate": "x.json"})
    with pytest.raises(InputError, match="certificate or k_best"):
        s3vm.solve(inst, "bb-sdp", bias=False, options={"certificate": "x.json", "k_best": 2})


# -- bb-mip: each node's LP relaxation and its duals ------------------------------------------

@pytest.fixture(scope="module")
def certified_mip(inst, tmp_path_factory):
    path = tmp_path_factory.mktemp("mip") / "proof.json"
    result = s3vm.solve(inst, "bb-mip", kernel="rbf", sigma=1.5, mu=0.1, nu=1.0,
                        balance="count", options={"certificate": str(path)})
    assert result.status == "optimal"
    return result, json.loads(path.read_text())


@pytest.mark.solver
@pytest.mark.slow
def test_a_bb_mip_certificate_holds_and_states_the_enumerated_optimum(inst, certified_mip):
    from reference import labelings, problem3_columns, problem3_labeling_lp

    result, document = certified_mip
    report = check(document)
    assert report.holds, report.failures
    P = Settings(balance="count").positive_count(inst)
    A, d, B = problem3_columns(inst, "rbf", 1.5)
    best = min(problem3_labeling_lp(A, d, B, s, 0.1, 1.0)[0] for s in labelings(inst.u, P))
    assert report.value == pytest.approx(best, rel=1e-6, abs=1e-8)
    assert {(node.get("proof") or {}).get("kind") for node in document["nodes"]} >= {"lp"}


def _pruned_lp(document):
    return next(node for node in document["nodes"]
                if node["status"] == "pruned" and (node.get("proof") or {}).get("kind") == "lp")


@pytest.mark.slow
def test_a_tampered_bb_mip_certificate_fails(certified_mip):
    document = copy.deepcopy(certified_mip[1])
    _pruned_lp(document)["proof"]["value"] *= 1.01
    assert not check(document).holds
    document = copy.deepcopy(certified_mip[1])
    node = _pruned_lp(document)
    node["proof"]["duals"] = [0.5 * v for v in node["proof"]["duals"]]
    assert not check(document).holds
    document = copy.deepcopy(certified_mip[1])
    document["nodes"].remove(_pruned_lp(document))
    assert not check(document).holds
    document = copy.deepcopy(certified_mip[1])
    document["problem"]["M"] = [1.0] * len(document["problem"]["M"])   # too small a big-M
    report = check(document)
    assert not report.holds and any("big-M" in f for f in report.failures)
    document = copy.deepcopy(certified_mip[1])
    document["incumbent"]["w"] = [0.0] * len(document["incumbent"]["w"])
    assert not check(document).holds


@pytest.mark.solver
@pytest.mark.slow
def test_a_bb_mip_certificate_with_pairs_holds(inst, tmp_path):
    unl = [int(r) for r in inst.unlabeled]
    path = tmp_path / "pairs.json"
    s3vm.solve(inst, "bb-mip", kernel="linear", mu=0.1, nu=1.0,
               pairs={"must": [(unl[0], unl[1])], "cannot": [(unl[2], unl[3])]},
               options={"certificate": str(path)})
    report = check(json.loads(path.read_text()))
    assert report.holds, report.failures
