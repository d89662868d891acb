"""Optimality-based probing in the branch-and-bound driver (solvers/bnb/driver.py): labels fixed
at the root (``probe="root"``) and labels certified by one bound each after the search
(``certify="probe"``), checked against an enumeration of all labelings with the exact objective:
on the generic driver (a toy problem whose bound is tight enough for probes to fix labels) and
through bb and bb-mip.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import s3vm
from s3vm.solvers.bnb import driver
from s3vm.solvers.bnb.links import Links

from test_bnb_driver import QuadProblem, enumerate_optimum, quiet
from test_certified_labels import assert_sound, blobs, enumerate_formulation

REL = 1e-9


class TightQuad(QuadProblem):
    """The toy problem of test_bnb_driver with a tight bound: the least objective over the
    node's completions (those meeting the count), less ``slack`` per free label, so that a
    probe at the root proves most labels. Children may differ from their parent's state in
    several positions (the fixed root, links)."""

    def __init__(self, *args, slack=0.05, offer=False, root_slack=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.slack, self.offer, self.root_slack = slack, offer, root_slack

    @staticmethod
    def _check_state(partial, parent_state):
        pass

    def bound(self, partial, parent_state=None):
        out = super().bound(partial, parent_state)
        free = np.flatnonzero(partial == 0)
        if not free.size:
            return out
        best, labels = np.inf, None
        for signs in itertools.product((-1, 1), repeat=free.size):
            y = partial.copy()
            y[free] = signs
            if self.positives is not None and int(np.sum(y == 1)) != self.positives:
                continue
            if self.links is not None and not self.links.consistent(y):
                continue
            if self.objective(y) < best:
                best, labels = self.objective(y), y
        out.value = max(out.value, best - self.slack * free.size
                        - (self.root_slack if free.size == self.u else 0.0))
        if self.offer and labels is not None:
            out.labels, out.labels_value = labels, best  # the node's best completion
        return out


def tight_problem(seed, u=8, positives=None, **kwargs):
    """A tight toy problem; its heuristic is a random labeling meeting the count (an incumbent
    for the root's probes), unless given."""
    rng = np.random.default_rng(seed)
    Q, c = rng.normal(size=(u, u)), rng.normal(size=u)
    if "heuristic" not in kwargs:
        start = -np.ones(u, dtype=int)
        start[rng.permutation(u)[:u // 2 if positives is None else positives]] = 1
        kwargs["heuristic"] = start
    return TightQuad(Q, c, positives, **kwargs)


def optimal_rows(Y, values, best):
    return Y[values <= best + REL * max(1.0, abs(best))]


def assert_fixes_agree(found, Y, values, best):
    """Every label the root fixed is that of every optimal labeling."""
    if found.root_fixed is None:
        return 0
    good = optimal_rows(Y, values, best)
    for i in np.flatnonzero(found.root_fixed):
        assert np.all(good[:, i] == found.root_fixed[i]), (i, found.root_fixed, good)
    return int(np.count_nonzero(found.root_fixed))


CASES = [dict(node_selection=sel, positives=P, greedy=greedy)
         for sel in ("depth", "best") for P in (None, 4) for greedy in (False, True)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_root_probing_keeps_the_optimum_and_fixes_only_optimal_labels(case):
    fixed = 0
    for seed in range(10):
        problem = tight_problem(seed, positives=case["positives"], greedy=case["greedy"])
        best, Y, values = enumerate_optimum(problem)
        found = quiet(problem, node_selection=case["node_selection"], probe="root",
                      certify="probe", keep_tree=False)
        assert found.status == "optimal"
        assert found.objective == pytest.approx(best, rel=REL, abs=REL)
        assert found.fixed_at_root == int(np.count_nonzero(found.root_fixed))
        fixed += assert_fixes_agree(found, Y, values, best)
        assert_sound(found.labels, found.objective, found.certified_labels, Y, values)
        assert found.probe_nodes > 0 and found.nodes >= found.probe_nodes
    assert fixed > 0  # not vacuous


def test_the_checks_catch_a_fix_made_without_its_bound(monkeypatch):
    # A driver that fixes every probed label whatever the probe's bound says: the checks of the
    # test above must reject it (the fix is what makes them pass).
    original = driver._Search._probe_bound

    def always_pruned(self, base, index, label, state, parent_bound, offer=True):
        child, _ = original(self, base, index, label, state, parent_bound, offer)
        return child, np.inf

    monkeypatch.setattr(driver._Search, "_probe_bound", always_pruned)
    wrong = 0
    for seed in range(10):
        # a poor heuristic labeling, so that fixing its labels loses the optimum
        problem = tight_problem(seed, heuristic=np.ones(8, dtype=int))
        best, Y, values = enumerate_optimum(problem)
        found = quiet(problem, probe="root", keep_tree=False)
        good = optimal_rows(Y, values, best)
        fixed = np.flatnonzero(found.root_fixed)
        wrong += (not found.objective <= best + REL * max(1.0, abs(best))) or \
            any(np.any(good[:, i] != found.root_fixed[i]) for i in fixed)
    assert wrong > 0


def test_a_tie_broken_by_a_probe_stays_open():
    # f(y) = y'Qy ties every labeling with its negation; the bound is exact below the root, so
    # the first probe's child (the negated optimum's side) is pruned at J* and the root fixes a
    # label that not every optimal labeling shares: a fix may break a tie, but the probe's
    # terminal node keeps every label open (without its record, every label would be
    # "proven").
    for seed in range(4):
        rng = np.random.default_rng(seed)
        problem = TightQuad(rng.normal(size=(6, 6)), np.zeros(6), slack=0.0, offer=True,
                            root_slack=1.0)
        best, Y, values = enumerate_optimum(problem)
        found = quiet(problem, probe="root", certify="probe", keep_tree=False)
        assert found.objective == pytest.approx(best, rel=REL, abs=REL)
        assert found.fixed_at_root > 0
        assert_sound(found.labels, found.objective, found.certified_labels, Y, values)
        assert not found.certified_labels.any()


@pytest.mark.parametrize("positives", [None, 4])
def test_probing_with_a_pool_of_the_k_best(positives):
    for seed in range(6):
        problem = tight_problem(seed, positives=positives)
        _, Y, values = enumerate_optimum(problem)
        found = quiet(problem, probe="root", certify="probe", k_best=3, keep_tree=False)
        order = np.sort(values)
        assert [v for _, v, _ in found.pool] == pytest.approx(list(order[:3]), rel=REL)
        assert found.pool_bound <= order[3] + REL * max(1.0, abs(order[3]))
        assert_sound(found.labels, found.objective, found.certified_labels, Y, values)
        if found.root_fixed is not None:  # fixed against the 3rd best: the 3 best keep them
            for labels, _, _ in found.pool:
                fixed = found.root_fixed != 0
                assert np.all(labels[fixed] == found.root_fixed[fixed])


def test_probing_with_a_gap_tolerance_keeps_the_bound_honest():
    for seed in range(8):
        problem = tight_problem(seed)
        best, Y, values = enumerate_optimum(problem)
        found = quiet(problem, probe="root", certify="probe", rel_gap=0.05, keep_tree=False)
        assert found.lower_bound <= best + REL * max(1.0, abs(best))
        assert found.objective - best <= 0.05 * abs(found.objective) + 1e-9
        assert_sound(found.labels, found.objective, found.certified_labels, Y, values)


def test_probing_with_links_fixes_whole_classes():
    links = Links([-1, 0, 0, 1, 1, 2, 3, 4], [1, 1, -1, 1, 1, 1, 1, 1])
    fixed = 0
    for seed in range(8):
        problem = tight_problem(seed, positives=4, offer=True)
        problem.links = links
        _, Y, values = enumerate_optimum(problem)
        keep = np.array([links.consistent(y) for y in Y])
        Y, values = Y[keep], values[keep]
        best = float(values.min())
        problem.heuristic = Y[np.argmax(values)].astype(int)  # the worst that keeps the links
        found = quiet(problem, probe="root", certify="probe", keep_tree=False)
        assert found.objective == pytest.approx(best, rel=REL, abs=REL)
        assert found.root_fixed[0] == 0  # the links fixed it, not a probe
        f = found.root_fixed
        assert (f[1] == 0) == (f[2] == 0) and (f[3] == 0) == (f[4] == 0)  # whole classes
        fixed += assert_fixes_agree(found, Y, values, best)
        assert_sound(found.labels, found.objective, found.certified_labels, Y, values)
    assert fixed > 0


@pytest.mark.parametrize("at", [1, 2, 4])
def test_an_interrupt_while_probing_certifies_soundly(at):
    for seed in range(6):
        problem = tight_problem(seed, heuristic=np.ones(8, dtype=int), interrupt_at=at)
        _, Y, values = enumerate_optimum(problem)
        found = quiet(problem, probe="root", certify="probe", keep_tree=False)
        assert found.message == "interrupted"
        assert_sound(found.labels, found.objective, found.certified_labels, Y, values)
        if at == 1:
            assert not found.certified_labels.any()


def test_the_options_are_checked():
    problem = tight_problem(0)
    for kwargs, match in [({"probe": "all"}, "probe must be one of"),
                          ({"certify": "yes"}, "certify must be one of"),
                          ({"probe_max": -1}, "probe_max")]:
        with pytest.raises(s3vm.InputError, match=match):
            quiet(problem, **kwargs)
    found = quiet(problem, probe="root", probe_max=0, keep_tree=False)
    assert found.fixed_at_root == 0


# -- bb and bb-mip, against an enumeration with the project's objective -------------------------

FORMULATIONS = [("bb", 14, dict(kernel="linear")),
                ("bb", 14, dict(kernel="rbf", sigma=1.5, balance="count")),
                ("bb-mip", 12, dict(kernel="linear")),
                ("bb-mip", 12, dict(kernel="rbf", sigma=1.5, balance="count"))]


@pytest.mark.solver
@pytest.mark.parametrize("name, n, explicit", FORMULATIONS,
                         ids=[f"{f}-{'-'.join(map(str, e.values()))}" for f, _, e in FORMULATIONS])
def test_formulations_with_probing_keep_the_enumerated_optimum(name, n, explicit):
    for seed in (0, 1, 3):
        instance = blobs(seed, n=n)
        Y, values = enumerate_formulation(instance, name, explicit)
        best = float(values.min())
        result = s3vm.solve(instance, name, options={"label_fixing": "root", "certify": "probe"},
                            **explicit)
        assert result.status == "optimal"
        assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-6)
        assert result.info["fixed_at_root"] >= 0 and result.info["probe_nodes"] >= 0
        assert_sound(result.labels, result.objective, result.certified_labels, Y, values)


@pytest.mark.solver
def test_probes_certify_what_the_tree_left_open():
    # bb-mip's root LP is exact on this instance: the tree closes at its root and certifies
    # nothing, though the optimum is unique; a probe per point proves every label.
    instance = blobs(3, n=14)
    Y, values = enumerate_formulation(instance, "bb-mip", dict(kernel="linear"))
    tree = s3vm.solve(instance, "bb-mip", options={"certify": "tree"}, kernel="linear")
    probed = s3vm.solve(instance, "bb-mip", options={"certify": "probe"}, kernel="linear")
    assert tree.nodes == 1 and not np.any(tree.certified_labels)
    assert np.array_equal(tree.labels, probed.labels)
    proven = assert_sound(probed.labels, probed.objective, probed.certified_labels, Y, values)
    assert proven > int(np.sum(tree.certified_labels)) and proven == instance.u


@pytest.mark.solver
def test_root_probing_certifies_more_than_the_tree_alone():
    # bb-mip, linear, blobs seed 2: the tree alone leaves labels open; the probes' terminal
    # nodes at the root prove them
    instance = blobs(2, n=14)
    Y, values = enumerate_formulation(instance, "bb-mip", dict(kernel="linear"))
    off = s3vm.solve(instance, "bb-mip", options={"label_fixing": "off"}, kernel="linear")
    root = s3vm.solve(instance, "bb-mip", options={"label_fixing": "root"}, kernel="linear")
    assert root.info["fixed_at_root"] > 0 and off.info["fixed_at_root"] == 0
    assert root.objective == pytest.approx(off.objective, rel=1e-9)
    before = assert_sound(off.labels, off.objective, off.certified_labels, Y, values)
    after = assert_sound(root.labels, root.objective, root.certified_labels, Y, values)
    assert after > before
