"""Labels certified point by point (solvers/bnb/certified.py): a label the search marks proven is
the label of that point in every labeling as good as the answer, checked against an enumeration
of all labelings with the project's own objective (the one the search's leaves take), on the
generic driver (the toy problem of test_bnb_driver: count, links, pools of workers, K best,
limits and interrupts) and through bb, bb-mip and bb-sdp; and the outputs: Result, the JSON
answer (top level, file order), the estimator's ``certified_labels_`` and the picture.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import s3vm
from s3vm import cli
from s3vm.core.registry import get_formulation
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance
from s3vm.solvers.bnb.certified import certify, keep_certified
from s3vm.solvers.bnb.links import Links
from s3vm.solvers.bnb.problem import LabelingProblem, NodeBound

from reference import labelings
from test_bnb_driver import QuadProblem, enumerate_optimum, quiet, random_problem

REL = 1e-9


def assert_sound(labels, objective, certified, Y, values):
    """Every labeling of Y with value <= objective (+ REL relative) gives each certified point
    the answer's label; returns how many points were certified."""
    certified = np.asarray(certified, dtype=bool)
    assert certified.shape == (len(labels),)
    good = Y[np.asarray(values) <= objective + REL * max(1.0, abs(objective))]
    assert good.size, "the answer itself is among the labelings"
    for i in np.flatnonzero(certified):
        assert np.all(good[:, i] == labels[i]), (i, labels, good)
    return int(certified.sum())


def uniquely_forced(labels, objective, Y, values):
    """Positions whose label every labeling within REL of the answer shares."""
    good = Y[np.asarray(values) <= objective + REL * max(1.0, abs(objective))]
    return np.all(good == np.asarray(labels), axis=0)


# -- the driver, on the toy problem --------------------------------------------------------------

class LinkedQuad(QuadProblem):
    """The toy problem with links: a branch fixes a whole class, so a child may differ from its
    parent in more than one position."""

    @staticmethod
    def _check_state(partial, parent_state):
        pass


CASES = [dict(node_selection=sel, positives=P, node_limit=limit)
         for sel in ("depth", "best", "best-dive") for P in (None, 4)
         for limit in (None, 3, 12)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_driver_certifies_only_labels_every_as_good_labeling_shares(case):
    proven = forced = 0
    for seed in range(12):
        problem = random_problem(seed, u=8, positives=case["positives"], greedy=seed % 2 == 0)
        found = quiet(problem, node_selection=case["node_selection"],
                      node_limit=case["node_limit"], keep_tree=False)
        if found.labels is None:
            continue
        _, Y, values = enumerate_optimum(problem)
        proven += assert_sound(found.labels, found.objective, found.certified_labels, Y, values)
        forced += int(uniquely_forced(found.labels, found.objective, Y, values).sum())
        bounds = found.label_bounds
        assert np.all(bounds[found.certified_labels] > found.objective)
        # the bound of each position is one: no labeling with the opposite label lies below it
        for i in range(problem.u):
            other = values[Y[:, i] != found.labels[i]]
            if other.size:
                assert bounds[i] <= other.min() + 1e-9 * max(1.0, abs(other.min()))
            else:
                assert bounds[i] == np.inf
    if case["node_limit"] != 3:
        assert proven > 0  # not vacuous (3 nodes prove little)
    if case["node_limit"] is None:
        assert proven >= forced // 2  # a closed tree certifies most forced labels


@pytest.mark.parametrize("stop", ["interrupt-root", "interrupt-later", "k-best", "gap",
                                  "links"])
def test_driver_certificate_on_every_path(stop):
    proven = 0
    for seed in range(24):
        kwargs, links = {}, None
        if stop == "interrupt-root":
            problem = random_problem(seed, u=8, heuristic=np.ones(8, dtype=int), interrupt_at=1)
        elif stop == "interrupt-later":
            # greedy: incumbents from the bounds, so an interrupt finds one better than the
            # heuristic's, with the node being expanded (its subtree in no open node) below it
            problem = random_problem(seed, u=8, heuristic=np.ones(8, dtype=int),
                                     interrupt_at=3 + seed, greedy=True)
        elif stop == "links":
            rng = np.random.default_rng(seed)
            problem = LinkedQuad(rng.normal(size=(8, 8)), rng.normal(size=8), positives=4)
            links = Links([-1, 0, 0, 1, 1, 2, 3, 4], [1, 1, -1, 1, 1, 1, 1, 1])
            problem.links = links
        else:
            problem = random_problem(seed, u=8)
            kwargs = {"k_best": 3} if stop == "k-best" else {"rel_gap": 0.05}
        found = quiet(problem, keep_tree=False, **kwargs)
        if found.labels is None:
            continue
        _, Y, values = enumerate_optimum(problem)
        if links is not None:
            keep = np.array([links.consistent(y) for y in Y])
            Y, values = Y[keep], values[keep]
        proven += assert_sound(found.labels, found.objective, found.certified_labels, Y, values)
        if stop == "interrupt-root":
            assert not found.certified_labels.any()  # nothing proven before the root's bound
        if links is not None:
            assert found.certified_labels[0]  # fixed by the links: no labeling flips it
    if stop in ("k-best", "gap", "links"):
        assert proven > 0


@pytest.mark.slow
def test_driver_certificate_with_a_pool_of_workers():
    from s3vm.solvers.bnb.pool import ProcessPool

    pool, proven = ProcessPool(4), 0
    try:
        # a batch bounds the children of several nodes with one incumbent: a child is then
        # pruned at its creation on its parent's bound when another node's child improved it
        for seed, limit in [(seed, None) for seed in range(8)] + [(8, 6), (9, 6)]:
            problem = random_problem(seed, u=8, positives=4, greedy=True)
            found = quiet(problem, node_selection="best", pool=pool, node_limit=limit,
                          keep_tree=False)
            if found.labels is None:  # stopped before a labeling met the count
                continue
            _, Y, values = enumerate_optimum(problem)
            proven += assert_sound(found.labels, found.objective, found.certified_labels, Y,
                                   values)
    finally:
        pool.close()
    assert proven > 0


def test_a_tie_leaves_its_points_open():
    # f(y) = f(-y) (no linear term): every labeling ties with its negation, so no label is forced.
    rng = np.random.default_rng(0)
    problem = QuadProblem(rng.normal(size=(6, 6)), np.zeros(6))
    found = quiet(problem, keep_tree=False)
    assert found.status == "optimal"
    assert not found.certified_labels.any()


class ExactTie(LabelingProblem):
    """min y'Qy, which ties every labeling with its negation, bounded exactly (all completions);
    a node below the root offers its best completion. So the root's first child finds the
    optimum at the root's bound, and the second child is pruned when it is created, on the
    root's bound: it holds the negated optimum, with the opposite label at the branch."""

    def __init__(self, seed, u=5):
        Q = np.random.default_rng(seed).normal(size=(u, u))
        self.Q, self.u, self.positives = Q + Q.T, u, None

    def objective(self, labels):
        y = np.asarray(labels, dtype=float)
        return float(y @ self.Q @ y)

    def bound(self, partial, parent_state=None):
        free = np.flatnonzero(partial == 0)
        best, labels = np.inf, None
        for signs in labelings(free.size):
            y = partial.copy()
            y[free] = signs
            if self.objective(y) < best:
                best, labels = self.objective(y), y
        out = NodeBound(value=best)
        if np.any(partial != 0):
            out.labels, out.labels_value = labels, best
        return out


def test_a_child_pruned_when_created_is_counted():
    for seed in range(3):
        problem = ExactTie(seed)
        found = quiet(problem, keep_tree=True)
        statuses = [found.tree.nodes[k]["status"] for k in (1, 2)]
        assert statuses == ["pruned", "pruned"] and "order" not in found.tree.nodes[2]
        _, Y, values = enumerate_optimum(SimpleNamespace(u=problem.u, positives=None,
                                                         Q=problem.Q, c=np.zeros(problem.u)))
        assert_sound(found.labels, found.objective, found.certified_labels, Y, values)
        assert not found.certified_labels.any()


def test_certify_and_keep_certified():
    plus, minus = np.array([1.0, 5.0, np.inf]), np.array([5.0, 2.0 + 1e-12, 0.0])
    certified, bounds = certify(plus, minus, np.array([1, 1, -1]), 2.0)
    assert bounds.tolist() == [5.0, 2.0 + 1e-12, np.inf]
    assert certified.tolist() == [True, False, True]  # the middle one lies within 1e-9
    kept = keep_certified(certified, np.array([1, 1, -1]), np.array([1, -1, 1]))
    assert kept.tolist() == [True, False, False]
    assert keep_certified(None, [1], [1]) is None


# -- the formulations, against an enumeration with the project's objective ----------------------

def blobs(seed, n=14, per_class=2):
    base = gaussian_blobs(n=n, p=2, separation=1.0, n_labeled_per_class=per_class, seed=seed)
    return Instance(base.X, base.label, base.truth, name=f"blobs{seed}")


def symmetric():
    """Labeled points mirrored across x0 = 0 with opposite labels, unlabeled points on the axis
    (open: a labeling and its negation, mirrored, tie) and in mirrored pairs far out (forced),
    interleaved in the file: [open, forced, open, forced, open, forced, forced]."""
    rows = [((-2, 0), -1), ((0, 0.5), 0), ((-3, 0.5), 0), ((2, 0), 1), ((0, 2), 0),
            ((3, 0.5), 0), ((-2, 1), -1), ((0, -1), 0), ((3, -1), 0), ((2, 1), 1),
            ((-3, -1), 0)]
    X = np.array([r[0] for r in rows], dtype=float)
    return Instance(X, np.array([r[1] for r in rows]), name="symmetric")


SYMMETRIC_OPEN = [True, False, True, False, True, False, False]


def enumerate_formulation(instance, name, explicit):
    """(Y, values) of every labeling meeting the count, valued by the formulation's objective."""
    form = get_formulation(name)
    settings = form.settings_for(Settings(), explicit, strict=False)
    P = settings.positive_count(instance) if settings.balance == "count" else None
    Y = np.array(list(labelings(instance.u, P)))
    values = np.array([form.labeling_objective(instance, settings, y) for y in Y], dtype=float)
    return Y, np.where(np.isnan(values), np.inf, values)


def solve_and_check(instance, name, options=None, **explicit):
    result = s3vm.solve(instance, name, options=options or {}, **explicit)
    assert result.labels is not None
    Y, values = enumerate_formulation(instance, name, explicit)
    proven = assert_sound(result.labels, result.objective, result.certified_labels, Y, values)
    return result, proven


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("explicit", [dict(kernel="linear"), dict(kernel="rbf", sigma=1.5),
                                      dict(kernel="linear", balance="count"),
                                      dict(kernel="rbf", sigma=1.5, balance="count")],
                         ids=["linear", "rbf", "linear-count", "rbf-count"])
def test_bb_certified_labels_are_sound(explicit):
    proven = 0
    for seed in (0, 1, 2):
        result, count = solve_and_check(blobs(seed), "bb", **explicit)
        assert result.status == "optimal"
        proven += count
    assert proven > 0


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("explicit", [dict(kernel="linear"),
                                      dict(kernel="rbf", sigma=1.5, balance="count")],
                         ids=["linear", "rbf-count"])
def test_bb_mip_certified_labels_are_sound(explicit):
    proven = 0
    for seed in (0, 3):
        result, count = solve_and_check(blobs(seed, n=12), "bb-mip", **explicit)
        proven += count
    assert proven > 0


@pytest.mark.solver
@pytest.mark.slow
def test_bb_sdp_certified_labels_are_sound():
    result, proven = solve_and_check(blobs(3), "bb-sdp", kernel="rbf", sigma=1.5,
                                     balance="count")
    assert result.status == "optimal" and proven > 0


@pytest.mark.solver
@pytest.mark.parametrize("name", ["bb", "bb-mip"])
def test_a_symmetric_instance_leaves_the_axis_open(name):
    instance = symmetric()
    result, _ = solve_and_check(instance, name, kernel="linear")
    certified = np.asarray(result.certified_labels)
    assert not certified[SYMMETRIC_OPEN].any()
    if name == "bb":
        assert certified[~np.array(SYMMETRIC_OPEN)].all()


@pytest.mark.solver
@pytest.mark.parametrize("limit", [2, 5])
def test_a_search_stopped_at_a_node_limit_certifies_soundly(limit):
    proven = stopped = 0
    for seed in (0, 1, 2, 4):
        result, count = solve_and_check(blobs(seed), "bb", options={
            "node_limit": limit, "node_selection": "best"}, kernel="rbf", sigma=1.5)
        assert result.status in ("feasible", "optimal")
        stopped += result.status == "feasible"
        proven += count
    assert stopped and proven > 0


# -- the outputs ---------------------------------------------------------------------------------

def write_symmetric_csv(path):
    instance = symmetric()
    with open(path, "w") as fh:
        fh.write("x1,x2,label\n")
        for x, label in zip(instance.X, instance.label):
            fh.write(f"{x[0]},{x[1]},{int(label)}\n")
    return str(path)


@pytest.mark.solver
def test_json_answer_has_certified_labels_at_top_level_in_file_order(tmp_path, capsys):
    path = write_symmetric_csv(tmp_path / "symmetric.csv")
    status = cli.main(["solve", path, "-f", "bb", "--kernel", "linear", "--json"])
    out = capsys.readouterr().out
    assert status == 0
    answer = json.loads(out)
    assert answer["certified_labels"] == [not v for v in SYMMETRIC_OPEN]
    assert "certified_labels" not in answer.get("info", {})
    status = cli.main(["solve", path, "-f", "svm1", "--json"])
    assert status == 0 and "certified_labels" not in json.loads(capsys.readouterr().out)
    status = cli.main(["solve", path, "-f", "bb", "--kernel", "linear"])
    assert status == 0
    assert "certified    4 of 7 labels" in capsys.readouterr().out


@pytest.mark.solver
def test_estimator_certified_labels_follow_the_unlabeled_rows_of_X():
    instance = symmetric()
    y = np.full(instance.n, -1)  # classes 0 and 1, -1 unlabeled
    y[instance.label == 1], y[instance.label == -1] = 1, 0
    clf = s3vm.S3VMClassifier("bb", kernel="linear", balance="none",
                              safeguard=None).fit(instance.X, y)
    certified = clf.certified_labels_
    assert certified.dtype == bool and certified.shape == (instance.u,)
    assert certified.tolist() == clf.result_.certified_labels.tolist()
    assert not certified[SYMMETRIC_OPEN].any() and certified.any()
    local = s3vm.S3VMClassifier("switching", kernel="linear", safeguard=None).fit(instance.X, y)
    assert local.certified_labels_ is None


def test_the_fallbacks_labels_keep_only_the_agreeing_certificates():
    from s3vm.core.answers import prefer_held
    from s3vm.solvers.results import Result
    from s3vm.solvers.runtime.clock import Clock

    instance = symmetric()
    result = Result("bb", "builtin", "time_limit", objective=2.0,
                    labels=np.array([1, 1, -1, 1, 1, 1, -1]))
    result.certified_labels = np.array([True, True, False, True, False, False, True])
    scores = np.array([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0])  # the fallback's labels
    prefer_held(get_formulation("bb"), result, instance, Settings(), Clock(None), scores, (1.0,))
    assert result.labels.tolist() == [1, -1, -1, 1, 1, 1, -1] and result.objective == 1.0
    assert result.certified_labels.tolist() == [True, False, False, True, False, False, True]
    assert result.to_dict()["certified_labels"] == result.certified_labels.tolist()
