"""The branch-and-bound driver (solvers/bnb/driver.py) and its formulation glue.

Every expected optimum is computed here by enumerating all labelings, independently of the driver.
The toy problem minimises f(y) = y'Qy + c'y over y in {-1, +1}^u. At a node with fixed labels y_F
and free labels y_R,

    f(y) = [y_F'Q_FF y_F + c_F'y_F] + a'y_R + y_R'Q_RR y_R,     a = 2 Q_RF y_F + c_R,

and the bound is the exact first part plus two valid lower bounds of the rest: a'y_R >= -|a|_1,
and y_R'Q_RR y_R >= max(trace(Q_RR) - sum_{i != j} |Q_ij|, lambda_min(Q_RR) |R|) (y_R has norm^2
|R| and y_i^2 = 1). It is exact when every label is fixed, and not trivial elsewhere.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.families.branch_and_bound import BranchAndBoundFormulation
from s3vm.solvers.bnb.driver import NODE_SELECTIONS, search, validate_search_options, write_graphml
from s3vm.solvers.bnb.problem import LabelingProblem, NodeBound
from s3vm.solvers.errors import InputError
from s3vm.solvers.profiles import SolverProfile, get_profile
from s3vm.solvers.registry import get_backend, unavailable_reason
from s3vm.solvers.runtime.clock import Clock, ManualTimer

STATUSES = {"pruned", "branched", "leaf", "infeasible", "open"}


class QuadProblem(LabelingProblem):
    """min y'Qy + c'y with the bound of the module docstring.

    Parameters
    ----------
    hints : bool
        Choose the branch (largest |a_j|) and the first label (the sign that minimises a_j y_j);
        False leaves both to the driver.
    greedy : bool
        Offer the completion y_R = -sign(a) as a candidate labeling (it ignores the balance
        count, which the driver must catch).
    heuristic : ndarray, optional
        Returned by :meth:`initial_incumbent`.
    delay : float
        Seconds each bound takes (for time limits and progress): slept, or, with a ``timer``
        (a :class:`ManualTimer` the search's clock reads), added to it, so that the limit falls
        after a known number of bounds whatever the machine's load.
    timer : ManualTimer, optional
    interrupt_at : int, optional
        Raise KeyboardInterrupt in that call of :meth:`bound` (1-based).
    """

    def __init__(self, Q, c, positives=None, *, hints=True, greedy=False, heuristic=None,
                 delay=0.0, interrupt_at=None, timer=None):
        Q = np.asarray(Q, dtype=float)
        self.Q, self.c = (Q + Q.T) / 2, np.asarray(c, dtype=float)
        self.u, self.positives = len(self.c), positives
        self.hints, self.greedy, self.heuristic = hints, greedy, heuristic
        self.delay, self.interrupt_at, self.timer = delay, interrupt_at, timer
        self.calls = 0
        self.first_labels = {}  # partial labeling (bytes) -> the first label it asked for

    def objective(self, labels):
        y = np.asarray(labels, dtype=float)
        return float(y @ self.Q @ y + self.c @ y)

    def initial_incumbent(self):
        if self.heuristic is None:
            return None
        return np.asarray(self.heuristic), self.objective(self.heuristic), "toy heuristic"

    def bound(self, partial, parent_state=None):
        self.calls += 1
        if self.interrupt_at == self.calls:
            raise KeyboardInterrupt
        if self.delay and self.timer is not None:
            self.timer.advance(self.delay)
        elif self.delay:
            time.sleep(self.delay)
        self._check_state(partial, parent_state)
        fixed = partial != 0
        yF, free = partial[fixed].astype(float), np.flatnonzero(~fixed)
        value = yF @ self.Q[np.ix_(fixed, fixed)] @ yF + self.c[fixed] @ yF
        # The state is the node's labeling, so that each child can check it got its parent's.
        out = NodeBound(value=float(value), state=partial.copy())
        if free.size == 0:
            return out
        a = 2 * self.Q[np.ix_(~fixed, fixed)] @ yF + self.c[~fixed]
        QRR = self.Q[np.ix_(~fixed, ~fixed)]
        off = np.abs(QRR).sum() - np.abs(np.diag(QRR)).sum()
        quad = max(np.trace(QRR) - off, np.linalg.eigvalsh(QRR)[0] * free.size)
        out.value = float(value - np.abs(a).sum() + quad)
        if self.hints:
            j = int(np.argmax(np.abs(a)))
            out.branch_index, out.first_label = int(free[j]), (-1 if a[j] > 0 else 1)
            self.first_labels[partial.astype(int).tobytes()] = out.first_label
        if self.greedy:
            labels = partial.copy()
            labels[free] = np.where(a > 0, -1, 1)
            out.labels = labels
        return out

    @staticmethod
    def _check_state(partial, parent_state):
        if parent_state is None:
            assert not np.any(partial), "only the root has no parent state"
            return
        changed = np.flatnonzero(partial != parent_state)
        assert changed.size == 1 and parent_state[changed[0]] == 0, "not the parent's state"


def enumerate_optimum(problem, positives="problem"):
    """(min f, all labelings as rows, their values), over the labelings meeting the count."""
    P = problem.positives if positives == "problem" else positives
    Y = np.array(list(itertools.product((-1, 1), repeat=problem.u)), dtype=float)
    if P is not None:
        Y = Y[(Y == 1).sum(axis=1) == P]
    values = np.einsum("ij,jk,ik->i", Y, problem.Q, Y) + Y @ problem.c
    return (float(values.min()) if values.size else math.inf), Y, values


def random_problem(seed, u=8, **kwargs):
    rng = np.random.default_rng(seed)
    return QuadProblem(rng.normal(size=(u, u)), rng.normal(size=u), **kwargs)


def quiet(problem, **kwargs):
    """search without log output (the log has its own tests)."""
    kwargs.setdefault("log", lambda line: None)
    kwargs.setdefault("progress", lambda line: None)
    return search(problem, **kwargs)


def tol(value):
    return 1e-8 * max(1.0, abs(value))


def assert_optimal(result, problem):
    best, _, _ = enumerate_optimum(problem)
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(best, abs=tol(best))
    assert result.lower_bound == result.objective and result.gap == 0.0
    assert problem.objective(result.labels) == pytest.approx(result.objective, abs=tol(best))
    assert set(np.unique(result.labels)) <= {-1, 1} and result.labels.shape == (problem.u,)
    if problem.positives is not None:
        assert int(np.sum(result.labels == 1)) == problem.positives
    assert result.open_nodes == 0


# -- optimality ------------------------------------------------------------------------------

@pytest.mark.parametrize("selection", NODE_SELECTIONS)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("hints", [True, False])
def test_each_selection_finds_the_enumerated_optimum(selection, seed, hints):
    problem = random_problem(seed, hints=hints)
    result = quiet(problem, node_selection=selection)
    assert_optimal(result, problem)
    assert result.nodes == problem.calls + sum(
        1 for _, a in result.tree.nodes(data=True) if a["status"] == "leaf")
    assert result.incumbent_source == "leaf"
    # A node is expanded only while its bound can improve the incumbent, so at least one of its
    # children gets evaluated (the other may be settled by the count or the parent's bound).
    tree = result.tree
    for node in expansions(tree):
        assert any("order" in tree.nodes[child] for child in tree.successors(node))


def expansions(tree):
    """The branched nodes in the order they were expanded."""
    branched = [(a["expanded"], n) for n, a in tree.nodes(data=True) if a["status"] == "branched"]
    return [n for _, n in sorted(branched)]


def partial_of(tree, node, u):
    """The partial labeling of a tree node, from the branches on its path from the root."""
    partial = np.zeros(u, dtype=int)
    for step in nx.ancestors(tree, node) | {node}:
        if tree.nodes[step]["index"] is not None:
            partial[tree.nodes[step]["index"]] = tree.nodes[step]["label"]
    return partial


@pytest.mark.parametrize("selection", ["depth", "best-dive"])
@pytest.mark.parametrize("seed", range(3))
def test_depth_and_dive_expand_the_first_label_next(selection, seed):
    problem = random_problem(seed, u=10)
    tree = quiet(problem, node_selection=selection).tree
    order = expansions(tree)
    assert len(order) > 10
    followed = 0
    for node, after in zip(order, order[1:]):
        first = min(tree.successors(node))  # the child created first
        asked = problem.first_labels[partial_of(tree, node, problem.u).tobytes()]
        assert tree.nodes[first]["label"] == asked
        if tree.nodes[first]["status"] == "branched":
            assert after == first
            followed += 1
    assert followed > 0


def test_sibling_pruned_on_the_parent_bound_is_never_bounded():
    # f = y1 + y2: the root's bound -2 is exact but the root offers no labeling; its first
    # child's greedy labeling (-1, -1) attains -2, so the second child is settled by the
    # parent's bound alone.
    class ChildrenGreedy(QuadProblem):
        def bound(self, partial, parent_state=None):
            self.greedy = bool(np.any(partial))
            return super().bound(partial, parent_state)

    problem = ChildrenGreedy(np.zeros((2, 2)), [1.0, 1.0])
    result = quiet(problem)
    assert_optimal(result, problem)
    assert result.nodes == problem.calls == 2 and result.incumbent_source == "bound"
    second = result.tree.nodes[2]
    assert second["status"] == "pruned" and "order" not in second


def test_depth_first_backtracks_to_the_deepest_open_node():
    tree = quiet(random_problem(1, u=10), node_selection="depth").tree
    order = expansions(tree)
    for node, after in zip(order, order[1:]):
        # A depth-first successor is a child of some node on the path from the root to `node`.
        path = set(nx.ancestors(tree, node)) | {node}
        assert next(iter(tree.predecessors(after))) in path


def test_best_first_expands_in_order_of_bound():
    tree = quiet(random_problem(2, u=10), node_selection="best").tree
    bounds = [tree.nodes[n]["bound"] for n in expansions(tree)]
    assert len(bounds) > 10 and bounds == sorted(bounds)


@pytest.mark.parametrize("selection", NODE_SELECTIONS)
@pytest.mark.parametrize("positives", [0, 1, 3, 5, 8])
def test_balance_count_meets_the_constrained_enumeration(selection, positives):
    problem = random_problem(11, positives=positives, greedy=True)
    unconstrained, _, _ = enumerate_optimum(problem, positives=None)
    result = quiet(problem, node_selection=selection)
    assert_optimal(result, problem)
    assert result.objective >= unconstrained - tol(unconstrained)
    # Nodes past the count are settled without a bound: none is ever bounded.
    statuses = [a["status"] for _, a in result.tree.nodes(data=True)]
    assert all("order" not in a for _, a in result.tree.nodes(data=True)
               if a["status"] == "infeasible")
    assert "branched" in statuses or positives in (0, 8)


def test_count_forcing_completes_without_bounding():
    problem = random_problem(2, u=6, positives=0)
    result = quiet(problem)
    assert_optimal(result, problem)
    assert problem.calls == 0 and result.nodes == 1  # the root is the only labeling
    assert list(result.labels) == [-1] * 6


@pytest.mark.parametrize("positives", [-1, 9])
def test_unmeetable_count_is_infeasible(positives):
    problem = random_problem(0, positives=positives)
    result = quiet(problem)
    assert result.status == "infeasible" and result.labels is None and result.objective is None
    assert result.lower_bound == math.inf and problem.calls == 0


def test_infinite_bounds_are_infeasible():
    class Nowhere(QuadProblem):
        def bound(self, partial, parent_state=None):
            return NodeBound(value=math.inf)

    result = quiet(Nowhere(np.eye(4), np.ones(4)))
    assert result.status == "infeasible" and result.nodes == 1
    assert result.tree.nodes[0]["status"] == "infeasible"


def test_initial_incumbent_and_bound_labelings_are_used():
    problem = random_problem(5, heuristic=np.ones(8, dtype=int), greedy=True)
    result = quiet(problem)
    assert_optimal(result, problem)
    assert result.incumbent_source in {"toy heuristic", "bound", "leaf"}
    best, Y, values = enumerate_optimum(problem)
    # A heuristic that is already optimal stays the incumbent and prunes the root's subtree.
    argbest = Y[int(np.argmin(values))].astype(int)
    again = quiet(random_problem(5, heuristic=argbest))
    assert again.incumbent_source == "toy heuristic" and again.status == "optimal"
    assert again.objective == pytest.approx(best)


@pytest.mark.parametrize("gaps", [{}, {"abs_gap": 0.5}, {"rel_gap": 0.1}])
def test_problem_is_told_each_new_cutoff(gaps):
    """notify_cutoff gets the driver's pruning threshold (the incumbent less the gap
    tolerance), once per improvement, decreasing, the last one from the final incumbent."""
    seen = []

    class Listening(QuadProblem):
        def notify_cutoff(self, cutoff):
            seen.append(cutoff)

    base = random_problem(11)
    problem = Listening(base.Q, base.c, heuristic=np.ones(8, dtype=int))
    result = quiet(problem, **gaps)

    def cutoff(value):
        return value - max(gaps.get("abs_gap", 0.0), gaps.get("rel_gap", 0.0) * abs(value))

    assert seen and all(b < a for a, b in zip(seen, seen[1:]))
    assert seen[0] == pytest.approx(cutoff(problem.objective(np.ones(8))), abs=1e-6)
    assert seen[-1] == pytest.approx(cutoff(result.objective), abs=1e-6)


def test_heuristic_off_the_count_is_ignored():
    problem = random_problem(6, positives=3, heuristic=np.ones(8, dtype=int))
    result = quiet(problem)
    assert_optimal(result, problem)
    assert result.incumbent_source != "toy heuristic"


@pytest.mark.slow
@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_random_problems(data):
    u = data.draw(st.integers(1, 8), label="u")
    entries = st.floats(-5, 5, allow_nan=False, allow_infinity=False)
    Q = np.array(data.draw(st.lists(entries, min_size=u * u, max_size=u * u))).reshape(u, u)
    c = np.array(data.draw(st.lists(entries, min_size=u, max_size=u)))
    positives = data.draw(st.one_of(st.none(), st.integers(0, u)), label="positives")
    selection = data.draw(st.sampled_from(NODE_SELECTIONS), label="selection")
    hints = data.draw(st.booleans(), label="hints")
    problem = QuadProblem(Q, c, positives, hints=hints, greedy=data.draw(st.booleans()))
    assert_optimal(quiet(problem, node_selection=selection, keep_tree=False), problem)


# -- anytime results -------------------------------------------------------------------------

@pytest.mark.parametrize("selection", NODE_SELECTIONS)
def test_node_limit_gives_an_anytime_result(selection):
    problem = random_problem(3, u=10, greedy=True)
    best, _, _ = enumerate_optimum(problem)
    full = quiet(random_problem(3, u=10, greedy=True), node_selection=selection)
    result = quiet(problem, node_selection=selection, node_limit=5)
    assert full.nodes > 6
    assert result.status == "feasible" and result.message == "node limit"
    assert 5 <= result.nodes <= 6 and result.open_nodes > 0
    assert result.lower_bound <= best + tol(best) and best <= result.objective + tol(best)
    assert problem.objective(result.labels) == pytest.approx(result.objective)
    assert sum(a["status"] == "open" for _, a in result.tree.nodes(data=True)) \
        == result.open_nodes


def test_node_limit_before_any_labeling_is_an_error():
    result = quiet(random_problem(3, u=10), node_limit=1)
    assert result.status == "error" and "node limit" in result.message
    assert result.labels is None and result.lower_bound is not None


@pytest.mark.parametrize("selection", NODE_SELECTIONS)
def test_time_limit_gives_an_anytime_result(selection):
    # Each bound takes 2 ms of the clock's time: the limit of 0.1 s falls after 50 bounds, and
    # the search stops at the next check, before an expansion (two bounds at most past it).
    heuristic = np.ones(14, dtype=int)
    timer = ManualTimer()
    problem = random_problem(4, u=14, heuristic=heuristic, delay=0.002, timer=timer)
    best, _, _ = enumerate_optimum(problem)
    result = quiet(problem, node_selection=selection, clock=Clock(0.1, timer=timer))
    assert result.status == "time_limit" and result.open_nodes > 0
    assert 0.1 <= result.seconds <= 0.1 + 2 * 0.002 + 1e-9
    assert 50 <= problem.calls <= 52
    assert result.lower_bound <= best + tol(best) and best <= result.objective + tol(best)


def test_start_charges_earlier_work_to_the_time_limit():
    # The clock started 0.5 s before the search (the problem's building): its limit of 0.5 s
    # is spent, and the search stops after the root.
    timer = ManualTimer(100.0)
    problem = random_problem(4, u=14, heuristic=np.ones(14, dtype=int), delay=0.002,
                             timer=timer)
    result = quiet(problem, clock=Clock(0.5, start=99.5, timer=timer))
    assert result.status == "time_limit" and result.nodes == 1
    assert result.seconds == pytest.approx(0.502)


@pytest.mark.parametrize("selection", NODE_SELECTIONS)
def test_absolute_gap_tolerance_closes_with_optimal(selection):
    problem = random_problem(7, heuristic=np.ones(8, dtype=int))
    best, _, _ = enumerate_optimum(problem)
    result = quiet(problem, node_selection=selection, abs_gap=1e6)
    # The heuristic is within 1e6 of anything: the root is pruned on its bound.
    assert result.status == "optimal" and "gap tolerance" in result.message
    assert result.nodes == 1 and result.incumbent_source == "toy heuristic"
    assert result.lower_bound < best <= result.objective
    assert result.objective - result.lower_bound <= 1e6


def test_relative_gap_tolerance_closes_with_optimal():
    # All labelings cost about 10 u: a relative gap of 0.5 accepts the heuristic at the root.
    rng = np.random.default_rng(0)
    problem = QuadProblem(10 * np.eye(6), rng.normal(size=6), heuristic=np.ones(6, dtype=int))
    best, _, _ = enumerate_optimum(problem)
    result = quiet(problem, rel_gap=0.5)
    assert result.status == "optimal" and "gap tolerance" in result.message
    assert result.nodes == 1 and result.lower_bound == pytest.approx(60 - np.abs(problem.c).sum())
    assert result.lower_bound <= best + tol(best) and best < result.objective
    assert 0 < result.gap <= 0.5


@pytest.mark.parametrize("selection", NODE_SELECTIONS)
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gaps", [(0.0, 0.3), (2.0, 0.0)])
def test_gap_tolerances_bound_the_true_gap(selection, seed, gaps):
    abs_gap, rel_gap = gaps
    problem = random_problem(seed, u=9, greedy=True)
    best, _, _ = enumerate_optimum(problem)
    result = quiet(problem, node_selection=selection, abs_gap=abs_gap, rel_gap=rel_gap)
    allowed = max(abs_gap, rel_gap * abs(result.objective)) + tol(best)
    assert result.lower_bound <= best + tol(best) and best <= result.objective + tol(best)
    assert result.objective - result.lower_bound <= allowed
    assert result.gap <= allowed / max(1.0, abs(result.objective))
    assert result.status == "optimal"
    if result.lower_bound < result.objective:
        assert "gap tolerance" in result.message


def test_interrupt_returns_the_incumbent():
    problem = random_problem(8, u=10, heuristic=np.ones(10, dtype=int), interrupt_at=6)
    best, _, _ = enumerate_optimum(problem)
    result = quiet(problem)
    assert result.status == "feasible" and result.message == "interrupted"
    assert result.labels is not None and result.objective >= best - tol(best)
    assert result.lower_bound <= best + tol(best)


def test_interrupt_while_expanding_keeps_the_node_in_the_bound():
    # Interrupted in the root's first child: the root's subtree is in no open node, and the
    # bound must still count it.
    problem = random_problem(8, u=10, heuristic=np.ones(10, dtype=int), interrupt_at=2)
    root = random_problem(8, u=10).bound(np.zeros(10, dtype=int)).value
    result = quiet(problem)
    assert result.message == "interrupted" and result.open_nodes == 0
    assert result.lower_bound == pytest.approx(root) and result.lower_bound < result.objective


def test_interrupt_at_the_root_without_incumbent_is_an_error():
    result = quiet(random_problem(8, interrupt_at=1))
    assert result.status == "error" and result.message == "interrupted"
    assert result.labels is None and result.lower_bound is None


# -- log, progress, tree ---------------------------------------------------------------------

def test_log_lines_every_n_nodes_with_the_columns():
    lines = []
    result = search(random_problem(1, u=10), log_every=10, log=lines.append,
                    progress=lambda line: None)
    header = lines[1].split()
    assert header == ["nodes", "open", "incumbent", "best", "bound", "gap", "time"]
    rows, final = lines[2:-2], lines[-2:]
    assert result.nodes >= 30 and len(rows) >= result.nodes // 10 - 1
    for k, row in enumerate(rows, start=1):
        fields = row.split()
        assert len(fields) == 6 and fields[-1].endswith("s")
        assert int(fields[0]) - 10 * k in (0, 1)  # one row as each multiple of 10 is passed
    assert final[0].split()[0] == str(result.nodes) and final[0].split()[4] == "0.00%"
    assert final[1].startswith("optimal:")


@pytest.mark.slow
def test_default_log_and_progress_go_to_the_logger(caplog):
    # 5 ms a bound: the first search runs to its limit of 0.3 s, past a progress line's 0.2 s.
    timer = ManualTimer()
    problem = random_problem(4, u=14, heuristic=np.ones(14, dtype=int), delay=0.005,
                             timer=timer)
    stamps = []
    with caplog.at_level(logging.INFO, logger="s3vm.bnb"):
        search(problem, clock=Clock(0.3, timer=timer), log_every=20)
        quiet(random_problem(4, u=14, delay=0.02, timer=timer),
              clock=Clock(0.7, timer=timer), progress=lambda line: stamps.append(timer()))
    records = [r for r in caplog.records if r.name == "s3vm.bnb"]
    progress = [r for r in records if getattr(r, "progress", False)]
    assert progress and all(r.levelno == logging.INFO for r in records)
    assert any("nodes" in r.getMessage() and "best bound" in r.getMessage() for r in records)
    assert len(stamps) >= 2 and min(np.diff(stamps)) >= 0.2 - 1e-3


def test_tree_written_as_graphml_reads_back(tmp_path):
    problem = random_problem(9, positives=4)
    result = quiet(problem, node_selection="best")
    tree = result.tree
    path = tmp_path / "tree.graphml"
    write_graphml(tree, str(path))
    back = nx.read_graphml(str(path))
    assert back.number_of_nodes() == tree.number_of_nodes() > 1
    assert back.number_of_edges() == tree.number_of_nodes() - 1
    attrs = dict(back.nodes(data=True))
    assert {a["status"] for a in attrs.values()} <= STATUSES
    assert sum("order" in a for a in attrs.values()) == result.nodes
    root = attrs["0"]
    assert root["depth"] == 0 and "index" not in root and root["order"] == 1
    assert back.graph["status"] == "optimal"
    with pytest.raises(InputError, match="does not exist"):
        write_graphml(tree, str(tmp_path / "missing" / "tree.graphml"))


def test_no_tree_when_not_kept():
    assert quiet(random_problem(0), keep_tree=False).tree is None


# -- contract checks -------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    ({"node_selection": "breadth"}, "node_selection"),
    ({"abs_gap": -1}, "abs_gap"),
    ({"rel_gap": 1.0}, "rel_gap"),
    ({"rel_gap": True}, "rel_gap"),
    ({"time_limit": 0}, "time limit must be > 0"),
    ({"time_limit": -3}, "time limit must be > 0"),
    ({"node_limit": 0}, "node_limit"),
    ({"node_limit": 2.5}, "node_limit"),
    ({"log_every": 1.5}, "log_every"),
])
def test_invalid_options_are_input_errors(kwargs, match):
    with pytest.raises(InputError, match=match):
        validate_search_options(**kwargs)
    with pytest.raises(InputError, match=match):
        quiet(random_problem(0), **kwargs)


def test_a_problem_breaking_the_contract_is_a_value_error():
    class FixedBranch(QuadProblem):
        def bound(self, partial, parent_state=None):
            out = super().bound(partial, parent_state)
            out.branch_index = 0
            return out

    with pytest.raises(ValueError, match="fixed"):
        quiet(FixedBranch(np.eye(3), [1.0, -1.0, 0.5]))

    class BadLabels(QuadProblem):
        def bound(self, partial, parent_state=None):
            out = super().bound(partial, parent_state)
            out.labels = np.zeros(self.u)
            return out

    with pytest.raises(ValueError, match=r"\+1/-1"):
        quiet(BadLabels(np.eye(3), [1.0, -1.0, 0.5]))


# -- the formulation glue --------------------------------------------------------------------

class ToyBB(BranchAndBoundFormulation):
    """A bb formulation whose labeling problem is the toy one, sized by the instance."""

    name = "toy-bb"
    summary = "toy"

    def labeling_problem(self, instance, settings, backend, profile, clock=None):
        P = settings.positive_count(instance) if settings.balance == "count" else None
        problem = random_problem(0, u=instance.u, positives=P)
        problem.decision_values = lambda labels: np.asarray(labels, dtype=float) / 2
        return problem


@pytest.fixture(scope="module")
def toy_instance():
    rng = np.random.default_rng(0)
    label = np.array([1, -1] + [0] * 7)
    return Instance(X=rng.normal(size=(9, 2)), label=label)


def test_formulation_solves_and_reports(toy_instance, tmp_path):
    tree_file = tmp_path / "t.graphml"
    form = ToyBB(node_selection="best-dive", tree_file=str(tree_file))
    result = form.solve(toy_instance, Settings(), get_profile(None, None, "svm"))
    problem = random_problem(0, u=7)
    best, _, _ = enumerate_optimum(problem)
    assert (result.formulation, result.solver, result.status) == ("toy-bb", "builtin", "optimal")
    assert result.objective == pytest.approx(best) and result.lower_bound == result.objective
    assert np.array_equal(result.decision_values, result.labels / 2)
    assert result.info["options"]["node_selection"] == "best-dive"
    assert result.info["open_nodes"] == 0
    assert result.nodes > 0 and result.seconds >= result.info["search_seconds"]
    assert nx.read_graphml(str(tree_file)).graph["formulation"] == "toy-bb"
    counted = form.solve(toy_instance, Settings(balance="count", positives=2), SolverProfile())
    assert int(np.sum(counted.labels == 1)) == 2 and counted.to_dict()["status"] == "optimal"


@pytest.mark.parametrize("kwargs, match", [
    ({"node_selection": "bfs"}, "node_selection= must be one of"),
    ({"rel_gap": -0.1}, "rel_gap="),
    ({"abs_gap": "x"}, "abs_gap="),
    ({"node_limit": 0}, "node_limit="),
    ({"log_every": -5}, "log_every="),
    ({"tree_file": "/no/such/dir/t.graphml"}, "does not exist"),
])
def test_formulation_options_are_checked_at_construction(kwargs, match):
    with pytest.raises(InputError, match=match):
        ToyBB(**kwargs)


def test_formulation_time_limit_and_solver_checks(toy_instance):
    form = ToyBB()
    with pytest.raises(InputError, match="time limit must be > 0"):
        form.solve(toy_instance, Settings(), SimpleNamespace(solver=None, time_limit=0))
    with pytest.raises(InputError, match="takes no external solver"):
        form.solve(toy_instance, Settings(), SolverProfile(solver="highs"))
    result = form.solve(toy_instance, Settings(), SolverProfile(solver="builtin", time_limit=5))
    assert result.status == "optimal"


@pytest.mark.solver
def test_builtin_solver_is_registered():
    assert unavailable_reason("builtin") is None
    backend = get_backend(None, "svm")
    assert backend.name == "builtin"
    outcome = backend.solve(random_problem(1), SolverProfile(time_limit=5))
    best, _, _ = enumerate_optimum(random_problem(1))
    assert outcome.status == "optimal" and outcome.objective == pytest.approx(best)
    with pytest.raises(InputError, match="does not solve"):
        get_backend("builtin", "lp")


def test_log_every_zero_writes_no_log_lines():
    lines = []
    result = search(random_problem(1, u=10), log_every=0, log=lines.append,
                    progress=lambda row: None)
    assert result.status == "optimal" and lines == []
