"""Groups everywhere (issue 37 item 3): must-link and cannot-link pairs (``pairs=``) and the
``group`` column honoured by bd-mip, bb-mip, l2-miqp, bb and bb-sdp exactly, and by switching by
construction, each checked against an enumeration of the labelings that meet the pairs.

The pairs are chosen against the unconstrained optimum (enumerated first): a cannot-link pair of
rows it labels alike, a must-link pair of rows it labels differently, and a cannot-link to a
labeled row that it labels alike; so a solver that ignored them would return the unconstrained
optimum, which breaks them, with a lower value than the constrained one. The meeting of the
pairs is checked here from the pairs themselves, not from the package's group code.
"""

from __future__ import annotations

import numpy as np
import pytest

import s3vm
from s3vm import cli
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance
from s3vm.solvers.bnb.links import Links
from s3vm.solvers.errors import InputError

from reference import L2Reference, labelings, problem3_columns, problem3_labeling_lp

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


@pytest.fixture(scope="module")
def inst():
    """n = 11, u = 7 (labeled rows first: rows 0-3)."""
    base = gaussian_blobs(n=11, p=2, separation=1.2, n_labeled_per_class=2, seed=3)
    order = np.r_[base.labeled, base.unlabeled]
    return Instance(base.X[order], base.label[order], base.truth[order], name="pairs")


def meets(pairs, label, labels_U) -> bool:
    """Whether the full labeling (labels fixed, labels_U on the unlabeled rows) meets the
    pairs, read from their definition."""
    y = label.astype(int).copy()
    y[label == 0] = labels_U
    return all(y[i] == y[j] for i, j in pairs.get("must", ())) and \
        all(y[i] != y[j] for i, j in pairs.get("cannot", ()))


def binding_pairs(inst, values):
    """Pairs that the unconstrained optimum of ``values`` ({labeling: value}) breaks."""
    best = np.array(min(values, key=values.get))
    unl = inst.unlabeled
    same = [(a, b) for a in range(len(unl)) for b in range(a + 1, len(unl))
            if best[a] == best[b]]
    differ = [(a, b) for a in range(len(unl)) for b in range(a + 1, len(unl))
              if best[a] != best[b]]
    a, b = same[0]
    c, d = differ[-1]
    e = [k for k in range(len(unl)) if k not in (a, b, c, d)][0]
    alike = int(inst.labeled[inst.label[inst.labeled] == best[e]][0])
    return {"cannot": [(int(unl[a]), int(unl[b])), (int(unl[e]), alike)],
            "must": [(int(unl[c]), int(unl[d]))]}


def constrained_optimum(values, pairs, label):
    kept = {k: v for k, v in values.items() if meets(pairs, label, np.array(k))}
    best = min(kept, key=kept.get)
    return np.array(best), kept[best], min(values.values())


# -- Problem 1: bb, bb-sdp, l2-miqp, switching ------------------------------------------------

@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("balance", ["none", "count"])
def test_problem1_formulations_meet_the_pairs_at_the_enumerated_optimum(inst, balance):
    settings = Settings(kernel="linear", C=1.0, C_star=0.5, bias=False, balance=balance)
    P = settings.positive_count(inst) if balance == "count" else None
    reference = L2Reference(inst, settings)
    values = reference.all_values(P)
    pairs = binding_pairs(inst, values)
    labels, value, free = constrained_optimum(values, pairs, inst.label)
    assert value > free + 1e-6  # the pairs bind: ignoring them would answer less
    keywords = dict(kernel="linear", C=1.0, C_star=0.5, bias=False, balance=balance)
    for name, options in (("bb", {}), ("bb-sdp", {"workers": 1}), ("l2-miqp", {})):
        result = s3vm.solve(inst, name, pairs=pairs, options=options, **keywords)
        assert result.status == "optimal", (name, result.message)
        assert meets(pairs, inst.label, result.labels), name
        assert result.objective == pytest.approx(value, rel=1e-5, abs=1e-6), name
        assert np.array_equal(result.labels, labels), name
    local = s3vm.solve(inst, "switching", pairs=pairs, **keywords)
    assert meets(pairs, inst.label, local.labels)
    assert local.objective == pytest.approx(reference(local.labels), rel=1e-5, abs=1e-6)
    assert local.objective >= value - 1e-6


@pytest.mark.solver
@pytest.mark.slow
def test_bb_with_bias_and_the_group_column(inst):
    # The same constraints given as the signed group column instead of pairs.
    settings = Settings(kernel="rbf", sigma=1.5, C=2.0, C_star=1.0, bias=True)
    values = L2Reference(inst, settings).all_values()
    pairs = binding_pairs(inst, values)
    labels, value, _ = constrained_optimum(values, pairs, inst.label)
    group = np.zeros(inst.n, dtype=int)
    (a, b), (e, alike) = pairs["cannot"]
    (c, d), = pairs["must"]
    group[[a, b]] = [1, -1]
    group[[e, alike]] = [2, -2]
    group[[c, d]] = [3, 3]
    grouped = Instance(inst.X, inst.label, inst.truth, group)
    result = s3vm.solve(grouped, "bb", kernel="rbf", sigma=1.5, C=2.0, C_star=1.0)
    assert result.status == "optimal"
    assert np.array_equal(result.labels, labels)
    assert result.objective == pytest.approx(value, rel=1e-5, abs=1e-6)


# -- Problem 3: bd-mip, bb-mip ----------------------------------------------------------------

@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("balance", ["none", "count"])
def test_problem3_formulations_meet_the_pairs_at_the_enumerated_optimum(inst, balance):
    settings = Settings(kernel="linear", mu=0.1, nu=1.0, balance=balance)
    P = settings.positive_count(inst) if balance == "count" else None
    A, d, B = problem3_columns(inst, "linear", 1.0)
    values = {tuple(s): problem3_labeling_lp(A, d, B, s, 0.1, 1.0)[0]
              for s in labelings(inst.u, P)}
    pairs = binding_pairs(inst, values)
    labels, value, free = constrained_optimum(values, pairs, inst.label)
    assert value > free + 1e-6
    for name in ("bd-mip", "bb-mip"):
        result = s3vm.solve(inst, name, pairs=pairs, kernel="linear", mu=0.1, nu=1.0,
                            balance=balance)
        assert result.status == "optimal", (name, result.message)
        assert meets(pairs, inst.label, result.labels), name
        assert result.objective == pytest.approx(value, rel=1e-6, abs=1e-7), name


@pytest.mark.solver
@pytest.mark.slow
def test_the_mip_models_carry_the_pairs_as_rows(inst):
    import pyomo.environ as pyo

    pairs = {"must": [(4, 5)], "cannot": [(5, 6), (7, 0)]}
    for name, binary in (("bd-mip", "d"), ("l2-miqp", "z")):
        built = s3vm.build(inst, name, pairs=pairs)
        assert "groups" in built.components
        result = built.solve()
        z = getattr(built.model, binary)
        values = {j: round(pyo.value(z[j])) for j in z}
        assert values[0] == values[1] and values[1] != values[2], name   # rows 4, 5, 6
        assert values[3] == (0 if inst.label[0] > 0 else 1)   # row 7 differs from row 0
        assert meets(pairs, inst.label, result.labels), name


# -- refusals and bad input ---------------------------------------------------------------------

def test_a_formulation_that_cannot_honour_pairs_refuses_them_in_one_line(inst, capsys,
                                                                         tmp_path):
    with pytest.raises(InputError, match="does not take groups.*bb-sdp"):
        s3vm.solve(inst, "vs3vm", pairs={"must": [(4, 5)]})
    grouped = inst.with_pairs({"must": [(4, 5)]})
    path = tmp_path / "grouped.csv"
    grouped.to_csv(str(path))
    code = cli.main(["solve", str(path), "-f", "rlp", "--json"])
    err = capsys.readouterr()
    assert code == 2 and err.out == ""
    assert len(err.err.strip().splitlines()) == 1 and "does not take groups" in err.err


@pytest.mark.parametrize("pairs, message", [
    ({"must": [(4, 5), (5, 6)], "cannot": [(4, 6)]}, "contradict"),
    ({"must": ["plus", "minus"]}, "contradictory group"),   # two rows labeled differently
    ({"must": [(4, 40)]}, "beyond the data's 11 rows"),
    ({"must": [(4, 4)]}, "with itself"),
    ({"same": [(4, 5)]}, "keys are 'must'"),
    ({"must": [(4, 5.5)]}, "integers"),
    ([(4, 5)], "must be a dict"),
])
def test_bad_pairs_are_one_line_input_errors(inst, pairs, message):
    if pairs == {"must": ["plus", "minus"]}:
        lab = inst.labeled
        pairs = {"must": [(int(lab[inst.label[lab] > 0][0]), int(lab[inst.label[lab] < 0][0]))]}
    with pytest.raises(InputError, match=message):
        s3vm.solve(inst, "bb", pairs=pairs)


def test_groups_and_count_without_a_labeling_are_infeasible(inst):
    # Seven unlabeled rows all tied together, four of them on one side: no count but 3 or 4.
    unl = [int(r) for r in inst.unlabeled]
    pairs = {"must": [(unl[0], r) for r in unl[1:4]],
             "cannot": [(unl[0], r) for r in unl[4:]]}
    for name in ("bb", "switching"):
        result = s3vm.solve(inst, name, pairs=pairs, balance="count", positives=1)
        assert result.status == "infeasible", name


# -- the links themselves ----------------------------------------------------------------------

@pytest.mark.slow
def test_links_best_is_the_cheapest_labeling_that_keeps_them_by_enumeration():
    rng = np.random.default_rng(0)
    for _ in range(200):
        u = int(rng.integers(1, 8))
        rep = rng.integers(-1, 3, size=u)
        classes = sorted(set(rep[rep >= 0].tolist()))
        rep = np.array([classes.index(r) if r >= 0 else -1 for r in rep])
        sign = rng.choice([-1, 1], size=u)
        links = Links(rep, sign)
        plus, minus = rng.normal(size=u), rng.normal(size=u)
        P = None if rng.random() < 0.3 else int(rng.integers(0, u + 1))
        best = None
        for y in labelings(u, P):
            fixed_ok = all(y[j] == sign[j] for j in range(u) if rep[j] < 0)
            tied_ok = all(y[i] * sign[i] == y[j] * sign[j] for i in range(u) for j in range(u)
                          if rep[i] >= 0 and rep[i] == rep[j])
            if fixed_ok and tied_ok:
                cost = float(np.where(y > 0, plus, minus).sum())
                best = cost if best is None else min(best, cost)
        got = links.best(plus, minus, P)
        if best is None:
            assert got is None
        else:
            assert links.consistent(got) and (P is None or int(np.sum(got == 1)) == P)
            assert float(np.where(got > 0, plus, minus).sum()) == pytest.approx(best)
