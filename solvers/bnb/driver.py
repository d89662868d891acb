"""The branch-and-bound search over partial labelings: tree, incumbent, node selection, limits, log.

The driver knows nothing of SVMs: a :class:`~s3vm.solvers.bnb.problem.LabelingProblem` bounds nodes
and evaluates full labelings; the driver decides which node to expand, prunes, keeps the best
labeling, enforces the balance count and reports.

Nodes are bounded when they are created (both children of a node right after each other, from the
parent's state), so every open node carries its own bound: best-first selection orders on it, a
child can be pruned before it is ever stored, and the reported lower bound is the minimum of the
open nodes' own bounds. A child's bound is raised to its parent's when lower (both are valid).

The lower bound reported is the minimum over the open nodes, the incumbent, and every node pruned
on its bound. The last term makes the bound honest after a gap tolerance closed the tree: a node
pruned only because it could not improve the incumbent by more than the tolerance still bounds the
optimum from below by its own bound, not by the incumbent.

Every labeling of the space lies in exactly one *terminal* node: one cut by the balance count or
the links, pruned on its bound (or its parent's), proven infeasible, an evaluated leaf, or, when
the search stops, open or being expanded. The driver keeps, per free position i, the least value
of a terminal node that allows label +1 at i and of one that allows -1:
what certifies the answer's labels point by point (:attr:`SearchResult.certified_labels`,
:mod:`.certified`, which states the argument).

Three generic hooks serve the problems that need them: the problem's ``links``
(:mod:`.links`: labels tied by groups) make a branch fix a whole class and keep only labelings
that honour them; ``k_best`` keeps a pool of the K best labelings (:mod:`.kbest`), pruning
against the K-th; ``record_proof`` keeps every node's partial labeling, fate and the problem's
proof data (:class:`.tree.ProofRecorder`) for a certificate that a checker can verify.
"""

from __future__ import annotations

import logging
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from s3vm.solvers.backends.base import Backend, Outcome
from s3vm.solvers.bnb.certified import LabelRecords, certify as certify_labels
from s3vm.solvers.bnb.kbest import LabelingPool
from s3vm.solvers.bnb.probing import RootProbing
from s3vm.solvers.bnb.problem import LabelingProblem
from s3vm.solvers.bnb.queues import QUEUES, Job, Node
from s3vm.solvers.bnb.search_log import (
    TRACE_SECONDS,
    SearchLog,
    _format_row,
    _gap,
    _num,
)
from s3vm.solvers.bnb.tree import NoTree, ProofRecorder, TreeRecorder, write_graphml
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import call_clock, stopped_inside

__all__ = ["NODE_SELECTIONS", "PROBES", "CERTIFY", "SearchResult", "search",
           "validate_search_options", "write_graphml", "BuiltinBackend"]

LOGGER = logging.getLogger("s3vm.bnb")
NODE_SELECTIONS = ("depth", "best", "best-dive")
PROBES = ("off", "root")  # optimality-based label fixing at the root
CERTIFY = ("tree", "probe")  # how the labels of the answer are certified
NUMERICAL_TOL = 1e-9  # relative: bounds this close to the incumbent cannot improve it


@dataclass
class SearchResult:
    """What a search found and proved.

    Attributes
    ----------
    status : {"optimal", "feasible", "time_limit", "infeasible", "error"}
        ``optimal`` when the tree closed: the lower bound equals the objective, or a gap
        tolerance closed it and the bound is within the tolerance (:attr:`gap` says how far,
        :attr:`message` says so), as HiGHS, SCIP and Gurobi report a MIP closed within its gap;
        ``feasible`` at the node limit or when interrupted with a labeling; ``time_limit`` at
        the time limit; ``infeasible`` when the tree closed without a labeling; ``error`` when
        stopped (node limit, Ctrl-C) before any.
    labels : ndarray of int, shape (u,), optional
        The best labeling found (+1/-1); it meets the balance count.
    objective : float, optional
        Its objective.
    lower_bound : float, optional
        A proven lower bound on the optimum (``inf`` when proven infeasible; None when nothing
        was proven, e.g. interrupted while bounding the root).
    nodes : int
        Nodes evaluated: calls of :meth:`LabelingProblem.bound` and of
        :meth:`LabelingProblem.objective` on leaves.
    open_nodes : int
        Nodes left unexplored (0 when the tree closed).
    seconds : float
        Wall-clock time since ``start``.
    incumbent_source : str, optional
        Where the best labeling came from: the name of the problem's initial heuristic,
        ``"bound"`` (a labeling a node's bound produced) or ``"leaf"``.
    message : str
        Why the search stopped, when not because the tree closed at zero gap (``"closed within
        the gap tolerance, gap 0.00028"`` when a tolerance closed it).
    tree : networkx.DiGraph, optional
        The explored tree (see :mod:`s3vm.solvers.bnb.tree`), when kept.
    trace : dict
        The search over time: lists ``seconds``, ``nodes``, ``incumbent`` and ``bound`` (None
        where none yet), a point at every new incumbent and at most every 0.02 s (thinned to at
        most 500 points), the last at the end; what ``s3vm plot bnb`` draws.
    pool : list of (labels, value, source), optional
        With ``k_best``: the K best distinct labelings found, the best first.
    pool_bound : float, optional
        With ``k_best``: a proven lower bound on the objective of every labeling not in
        :attr:`pool` (the least bound of the open and pruned nodes and value of the labelings
        let go; ``inf`` when the tree closed with no other labeling left; None when nothing was
        proven).
    proof : list of dict, optional
        With ``record_proof``: every node (:meth:`.tree.ProofRecorder.record`).
    certified_labels : ndarray of bool, shape (u,), optional
        Per position, whether the answer's label there is *proven*: every labeling (that meets
        the count and the links) giving the position the opposite label has an objective
        strictly above :attr:`objective` (so every labeling as good as the answer shares that
        label); False: *open*. Also at a time or node limit (open nodes counted by their
        bounds). None without a labeling. Why it is sound: :mod:`s3vm.solvers.bnb.certified`.
    label_bounds : ndarray of float, shape (u,), optional
        Per position, a proven lower bound on the objective of every labeling that gives it
        the opposite of the answer's label (``inf``: none is feasible); a label is certified
        when its bound exceeds :attr:`objective` by more than a relative 1e-9. None without a
        labeling.
    fixed_at_root : int
        With ``probe="root"``: how many positions (with their groups, one per probe) the root
        fixed to the incumbent's label because the child with the opposite label could not
        improve on the incumbent (its bound reached the prune cutoff).
    root_fixed : ndarray of int, shape (u,), optional
        With ``probe="root"``: the labels the probes fixed at the root (+1/-1; 0 where none).
    probe_nodes : int
        Bounds computed by probing (at the root and after the search), counted in
        :attr:`nodes` too.
    """

    status: str
    labels: Optional[np.ndarray] = None
    objective: Optional[float] = None
    lower_bound: Optional[float] = None
    nodes: int = 0
    open_nodes: int = 0
    seconds: float = 0.0
    incumbent_source: Optional[str] = None
    message: str = ""
    tree: Any = None
    trace: dict = field(default_factory=dict)
    pool: Optional[list] = None
    pool_bound: Optional[float] = None
    proof: Optional[list] = None
    certified_labels: Optional[np.ndarray] = None
    label_bounds: Optional[np.ndarray] = None
    fixed_at_root: int = 0
    root_fixed: Optional[np.ndarray] = None
    probe_nodes: int = 0

    @property
    def gap(self) -> Optional[float]:
        """Relative gap (objective - lower_bound) / max(1, |objective|), as :attr:`Result.gap`."""
        return _gap(self.objective, self.lower_bound)


def _discard(line: str) -> None:
    """The log of a search asked for no log lines."""


def validate_search_options(node_selection: str = "depth", abs_gap: float = 0.0,
                            rel_gap: float = 0.0, time_limit: Optional[float] = None,
                            node_limit: Optional[int] = None,
                            log_every: Optional[int] = 1000, k_best: int = 1,
                            probe: str = "off", certify: str = "tree",
                            probe_max: Optional[int] = None) -> None:
    """Raise :class:`InputError` (one line) unless the options of :func:`search` are valid."""
    if probe not in PROBES:
        raise InputError(f"probe must be one of {', '.join(PROBES)}, got {probe!r}")
    if certify not in CERTIFY:
        raise InputError(f"certify must be one of {', '.join(CERTIFY)}, got {certify!r}")
    if probe_max is not None and (not _is_int(probe_max) or probe_max < 0):
        raise InputError(f"probe_max must be an integer >= 0, got {probe_max!r}")
    if not _is_int(k_best) or k_best < 1:
        raise InputError(f"k_best must be a positive integer, got {k_best!r}")
    if node_selection not in NODE_SELECTIONS:
        raise InputError(f"node_selection must be one of {', '.join(NODE_SELECTIONS)}, "
                         f"got {node_selection!r}")
    if not _is_real(abs_gap) or abs_gap < 0:
        raise InputError(f"abs_gap must be a number >= 0, got {abs_gap!r}")
    if not _is_real(rel_gap) or not 0 <= rel_gap < 1:
        raise InputError(f"rel_gap must lie in [0, 1), got {rel_gap!r}")
    if time_limit is not None and (not _is_real(time_limit) or time_limit <= 0):
        raise InputError(f"time limit must be > 0, got {time_limit!r}")
    if node_limit is not None and (not _is_int(node_limit) or node_limit < 1):
        raise InputError(f"node_limit must be a positive integer, got {node_limit!r}")
    if log_every is not None and (not _is_int(log_every) or log_every < 0):
        raise InputError(f"log_every must be an integer >= 0 (0: no log lines), got {log_every!r}")


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) \
        and math.isfinite(value)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def search(problem: LabelingProblem, *, node_selection: str = "depth", abs_gap: float = 0.0,
           rel_gap: float = 0.0, time_limit: Optional[float] = None,
           node_limit: Optional[int] = None, log_every: Optional[int] = 1000,
           log: Optional[Callable[[str], Any]] = None,
           progress: Optional[Callable[[str], Any]] = None, keep_tree: bool = True,
           clock=None, pool=None, k_best: int = 1,
           record_proof: bool = False, initial: Optional[np.ndarray] = None,
           probe: str = "off", certify: str = "tree",
           probe_max: Optional[int] = None) -> SearchResult:
    """Minimise ``problem`` over the labelings that meet its balance count, by branch and bound.

    Parameters
    ----------
    problem : LabelingProblem
    node_selection : {"depth", "best", "best-dive"}
        ``depth``: depth-first, the child with the node's ``first_label`` first (Chapelle,
        Sindhwani and Keerthi 2006, section 3.2).
        ``best``: the open node of least bound first (ties: the deepest). ``best-dive``: follow
        the first child down until it is pruned or a leaf, then jump to the open node of least
        bound.
    abs_gap, rel_gap : float
        A node is pruned when its bound is at least
        ``incumbent - max(abs_gap, rel_gap * |incumbent|)`` (less a relative 1e-9 for rounding).
    time_limit : float, optional
        Seconds from the call, for a search run on its own (no ``clock``): the search then runs
        on a clock of that limit. Checked before each node is expanded (a bound computation in
        progress is not cut short). With a ``clock``, the clock's limit holds instead; giving
        both is an :class:`InputError`.
    node_limit : int, optional
        Stop before the next expansion once this many nodes were evaluated (an expansion
        evaluates up to two, so the count may pass the limit by one).
    log_every : int, optional
        A log line every this many nodes (and at least every 5 s); None: only every 5 s; 0: no
        log lines at all (the progress display is separate).
    log : callable, optional
        Takes each log line (header, rows, final lines); default: ``logging.getLogger(
        "s3vm.bnb").info``.
    progress : callable, optional
        Takes a status row at most every 0.2 s; default: the same logger at INFO with
        ``extra={"progress": True}``, which the command line renders in place on a terminal.
    keep_tree : bool
        Record the explored tree as a networkx DiGraph in :attr:`SearchResult.tree`.
    clock : s3vm.solvers.runtime.clock.Clock, optional
        The solve's clock, which started before the problem was built (its building is charged
        to the limit): its limit is checked before each expansion, ``seconds`` counts from its
        start, a stop request (a signal, a supervisor's time limit) ends the search before the
        next expansion like Ctrl-C, and the incumbent, the bound and the node count are
        published with :meth:`~s3vm.solvers.runtime.clock.Clock.report` as they change.
    pool : s3vm.solvers.bnb.pool.NodePool, optional
        Bound the nodes on this pool of workers (:mod:`s3vm.solvers.bnb.pool`: forked
        processes, a Dask cluster): each step expands the next ``max(1, workers // 2)`` nodes of
        the selection and bounds all their children at once, with the incumbent of the moment;
        the results are settled in that order, so a search is deterministic for a given number
        of workers (and, with one node a step, the same nodes as without a pool whenever no
        child's labeling improves the incumbent for its sibling). The root is bounded in this
        process. At a time limit or a stop request the bounds running are killed. None (the
        default): every bound in this process, one after the other.
    k_best : int
        Keep the K best distinct labelings (:attr:`SearchResult.pool`, :mod:`.kbest`): a node
        is pruned when its bound reaches the K-th best value (less the gap tolerance), and
        :attr:`SearchResult.pool_bound` bounds every labeling left out. 1 (default): the best.
    record_proof : bool
        Keep every node's partial labeling, fate and proof data (:attr:`SearchResult.proof`);
        the problem supplies the data (:attr:`.problem.NodeBound.proof`,
        :meth:`.problem.LabelingProblem.leaf_proof`).
    initial : ndarray of +1/-1, optional
        A starting labeling (a warm start), offered before the problem's own heuristic: the
        incumbent from the start, ``incumbent_source`` "start" while nothing beats it. One that
        breaks the count or the links is no candidate.
    probe : {"off", "root"}
        ``root``: optimality-based label fixing once the root is bounded and an incumbent y*
        is known. For each free position i in turn (a whole class with links; at most
        ``probe_max``, while the clock and the node limit allow), the child of the root with
        the label -y*_i at i (and the labels fixed so far) is bounded from the root's state;
        when its bound reaches the prune cutoff (the incumbent, or the K-th best of a pool, less
        the gap tolerance), no labeling there can enter the answer: it is a terminal node,
        pruned as the tree would prune it, and the root fixes y*_i at i for the whole search
        (the count forced as for any node). The root, with its labels fixed, is then bounded
        once more. The fixes hold as the incumbent improves (the cutoff only falls). Skipped
        with ``record_proof`` (a certificate's coverage names only branches).
        :attr:`SearchResult.fixed_at_root` counts the fixes.
    certify : {"tree", "probe"}
        ``tree``: the certified labels come from the terminal nodes of the tree
        (:mod:`.certified`). ``probe``: after the search, each position the tree left open
        gets one more bound, of the root's child with the opposite of the answer's label
        there (while the clock allows; none after an interrupt), and is proven when that bound
        exceeds the objective (the same margin).
    probe_max : int, optional
        At most this many root probes (None: every free position).

    Returns
    -------
    SearchResult
        Also when stopped by a limit or by Ctrl-C (KeyboardInterrupt raised inside the search,
        e.g. in ``problem.bound``): then with the best labeling so far and message
        ``"interrupted"``.

    Raises
    ------
    InputError
        Invalid options.
    ValueError
        The problem broke its contract: a labeling of the wrong shape or values, a branch on a
        fixed position, a first label other than +1/-1.
    """
    validate_search_options(node_selection, abs_gap, rel_gap, time_limit, node_limit, log_every,
                            k_best, probe, certify, probe_max)
    if clock is not None and time_limit is not None:
        raise InputError("give the search a clock or a time limit, not both (the clock's "
                         "limit holds)")
    frontier = QUEUES[node_selection]()
    run = _Search(problem, abs_gap=float(abs_gap), rel_gap=float(rel_gap),
                  node_limit=node_limit, log_every=log_every,
                  log=log if log is not None else LOGGER.info,
                  progress=progress if progress is not None else _log_progress,
                  keep_tree=keep_tree, clock=call_clock(clock, time_limit),
                  publish=clock is not None, pool=pool,
                  k_best=k_best, record_proof=record_proof, initial=initial,
                  probe=probe, certify=certify, probe_max=probe_max)
    result = run.execute(frontier)
    if result.tree is not None:
        result.tree.graph.update(node_selection=node_selection, status=result.status,
                                 objective=result.objective, lower_bound=result.lower_bound,
                                 nodes=result.nodes, fixed_at_root=result.fixed_at_root)
    return result


def _log_progress(line: str) -> None:
    LOGGER.info(line, extra={"progress": True})


class _Search(SearchLog, RootProbing):
    """One run of the search; :meth:`execute` is the loop."""

    def __init__(self, problem, *, abs_gap, rel_gap, node_limit, log_every, log,
                 progress, keep_tree, clock, publish=True, pool=None, k_best=1,
                 record_proof=False, initial=None, probe="off", certify="tree",
                 probe_max=None):
        self.problem = problem
        # Root probing would fix labels that no branch of a certificate's tree names.
        self.probe = "off" if record_proof else probe
        self.certify, self.probe_max = certify, probe_max
        self.fixed_at_root = self.probe_nodes = 0
        self.root_fixed: Optional[np.ndarray] = None
        # The (fixed) root's partial labeling, bound and state, kept for the probes after the
        # search; the terminal nodes of the root's probes (outside the fixed root).
        self.root_partial: Optional[np.ndarray] = None
        self.root_bound = -math.inf
        self.root_state: Any = None
        self.pool = pool
        self.batch_nodes = 1 if pool is None else max(1, pool.workers // 2)
        self.u = int(problem.u)
        self.P = None if problem.positives is None else int(problem.positives)
        self.abs_gap, self.rel_gap = abs_gap, rel_gap
        self.node_limit, self.log_every = node_limit, log_every
        self.log, self.progress = log, progress
        self.tree = TreeRecorder() if keep_tree else NoTree()
        if record_proof:
            self.tree = ProofRecorder(self.tree)
        self.links = problem.links
        self.kept = LabelingPool(k_best) if k_best > 1 else None
        self.initial = initial  # a start labeling (a warm start)
        self.threshold = math.inf  # the value a labeling must beat to enter the answer
        self.clock = clock
        self.start = start = clock.start
        # Whether the incumbent's decision values go on the clock (a solve's, which a
        # supervisor reads): a search run on its own spares computing them.
        self.publish = publish
        self.incumbent = math.inf
        self.cutoff = math.inf
        self.labels: Optional[np.ndarray] = None
        self.source: Optional[str] = None
        self.floor = math.inf  # least bound of the nodes pruned on their bound
        # The bound of the node being expanded: its subtree is in no open node until its
        # children are stored, so an interrupt must count it. Before the root exists nothing
        # is proven.
        self.expanding = -math.inf
        self.in_expansion: list = []  # the nodes whose bound self.expanding is
        # Per position, the least value of a terminal node allowing each label there
        # (:mod:`.certified`): every node settled without children is recorded.
        self.records = LabelRecords(self.u)
        self.outside = LabelRecords(self.u)
        self.nodes = 0
        self.created = 0
        self.expansions = 0
        self.stop: Optional[str] = None
        self.next_log = log_every if log_every else math.inf
        if log_every == 0:
            self.log = _discard
        self.last_log = self.last_progress = self.last_report = start
        self.trace = {"seconds": [], "nodes": [], "incumbent": [], "bound": []}
        self.trace_seconds, self.trace_last, self.trace_incumbent = TRACE_SECONDS, -math.inf, None

    # -- incumbent and pruning ------------------------------------------------------------
    def _cutoff(self, value: float) -> float:
        slack = max(self.abs_gap, self.rel_gap * abs(value))
        return value - slack - NUMERICAL_TOL * max(1.0, abs(value))

    def _offer(self, labels, value: Optional[float], source: str) -> None:
        """Make ``labels`` the incumbent when it meets the count and beats the incumbent."""
        labels = np.asarray(labels)
        if labels.shape != (self.u,) or not np.all((labels == 1) | (labels == -1)):
            raise ValueError(f"{source}: a labeling must be a vector of +1/-1 of length {self.u}")
        if self.P is not None and int(np.count_nonzero(labels == 1)) != self.P:
            return  # a heuristic may ignore the balance; such a labeling is no candidate
        if self.links is not None and not self.links.consistent(labels):
            return  # nor one that breaks the links
        value = float(self.problem.objective(labels)) if value is None else float(value)
        # False for NaN, and for the incumbent found again (valued a rounding lower)
        if value < self.incumbent and not np.array_equal(labels, self.labels):
            self.incumbent = value
            self.labels, self.source = labels.astype(int), source
            if self.publish:
                # Labels, objective and decision values together: a search stopped where its
                # worker cannot return (a node bound in C) answers the incumbent from the clock.
                self.clock.report(objective=value, labels=self.labels.copy(),
                                  decision_values=self.problem.incumbent_outputs(self.labels))
            self.problem.notify_incumbent(self.labels, value)
            if self.kept is None:
                self._lower_threshold(value)
        if self.kept is not None and self.kept.offer(labels, value, source):
            self._lower_threshold(self.kept.threshold)

    def _lower_threshold(self, value: float) -> None:
        """A labeling must beat ``value`` to enter the answer: prune against it."""
        if value < self.threshold:
            self.threshold, self.cutoff = value, self._cutoff(value)
            self.problem.notify_threshold(value)
            self.problem.notify_cutoff(self.cutoff)

    def _prune(self, node_id: int, bound: float, partial: np.ndarray) -> None:
        self.floor = min(self.floor, bound)
        self.records.record(partial, bound)
        self.tree.set(node_id, status="pruned")

    # -- node evaluation -------------------------------------------------------------------
    def _evaluate(self, parent: Optional[Node], state: Any, partial: np.ndarray, plus: int,
                  minus: int, index: Optional[int], label: Optional[int]) -> Optional[Node]:
        """Create a child of ``parent`` (None: the root) from the parent's bound ``state``;
        return it when it stays open, None when it is settled."""
        job = self._create(parent, partial, plus, minus, index, label)
        if job is None:
            return None
        if job.leaf:
            self._leaf(job.id, job.partial)
            return None
        return self._settle(job, self.problem.bound(job.partial, state))

    def _create(self, parent: Optional[Node], partial: np.ndarray, plus: int, minus: int,
                index: Optional[int], label: Optional[int]) -> Optional[Job]:
        """Number a new node and settle what needs no bound (the count, the parent's bound);
        else the job that evaluates it: a leaf's objective or a bound."""
        node_id, self.created = self.created, self.created + 1
        depth = 0 if parent is None else parent.depth + 1
        self.tree.add(node_id, None if parent is None else parent.id, depth, index, label)
        self.tree.set(node_id, partial=partial)  # kept by a proof only
        if self.P is not None and (plus > self.P or minus > self.u - self.P):
            self.tree.set(node_id, status="infeasible")
            return None
        parent_bound = -math.inf if parent is None else parent.bound
        if parent_bound >= self.cutoff:
            # The sibling just improved the incumbent past the parent's bound.
            self._prune(node_id, parent_bound, partial)
            return None
        partial, free, completes = self._forced_by_count(node_id, partial, plus, minus)
        if not completes:
            return None
        return Job(node_id, depth, partial, plus, minus, parent_bound, leaf=not free)

    def _forced_by_count(self, node_id: int, partial: np.ndarray, plus: int,
                         minus: int) -> tuple[np.ndarray, int, bool]:
        """(partial, free, completes): a count met on one side gives the free the other."""
        free = self.u - plus - minus
        if free and self.P is not None and (plus == self.P or minus == self.u - self.P):
            partial = partial.copy()
            partial[partial == 0] = -1 if plus == self.P else 1
            free = 0
            self.tree.set(node_id, partial=partial)
            if self.links is not None and not self.links.consistent(partial):
                # the count forces labels the links forbid: no labeling completes the node
                self.tree.set(node_id, status="infeasible")
                return partial, free, False
        return partial, free, True

    def _settle(self, job: Job, info) -> Optional[Node]:
        """The node of ``job`` with its bound ``info``: open, or settled (None)."""
        node_id = job.id
        self.nodes += 1
        value = float(info.value)
        value = max(-math.inf if math.isnan(value) else value, job.parent_bound)
        if info.labels is not None:
            self._offer(info.labels, info.labels_value, "bound")
        self.tree.set(node_id, bound=value, order=self.nodes, proof=info.proof)
        if value == math.inf:
            self.tree.set(node_id, status="infeasible")
            return None
        if value >= self.cutoff:
            self._prune(node_id, value, job.partial)
            return None
        return Node(node_id, job.depth, job.partial, job.plus, job.minus, value, info)

    def _leaf(self, node_id: int, labels: np.ndarray) -> None:
        value = float(self.problem.objective(labels))
        self.nodes += 1
        settled = math.isnan(value) or value == math.inf
        self.records.record(labels, math.inf if settled else value)
        self.tree.set(node_id, bound=value, order=self.nodes,
                      status="infeasible" if settled else "leaf",
                      proof=self.problem.leaf_proof(labels))
        if not settled:
            self._offer(labels, value, "leaf")

    def _branching(self, node: Node) -> tuple[int, int]:
        """The position ``node`` branches on and its first label, checked."""
        info, partial = node.info, node.partial
        index = info.branch_index
        if index is None:
            index = int(np.flatnonzero(partial == 0)[0])
        elif partial[index] != 0:
            raise ValueError(f"the problem branches on position {index}, which is fixed")
        first = info.first_label
        if first not in (1, -1):
            raise ValueError(f"first_label must be +1 or -1, got {first!r}")
        self.expansions += 1
        self.tree.set(node.id, status="branched", expanded=self.expansions)
        return int(index), int(first)

    def _children(self, node: Node, index: int, first: int):
        """(partial, plus, minus, label) of the two children of ``node``, first label first
        (with links, the child fixes the whole class of ``index``)."""
        for label in (first, -first):
            child = node.partial.copy()
            if self.links is None:
                child[index] = label
            else:
                self.links.fix(child, index, label)
            yield child, int(np.sum(child == 1)), int(np.sum(child == -1)), label

    def _expand(self, node: Node) -> tuple[Optional[Node], Optional[Node]]:
        """Bound both children of ``node``; return them (None where settled), first label first."""
        index, first = self._branching(node)
        state = node.info.state
        node.info = None  # the state lives only until both children are bounded
        children = [self._evaluate(node, state, child, plus, minus, index, label)
                    for child, plus, minus, label in self._children(node, index, first)]
        return children[0], children[1]

    def _expand_batch(self, batch: list) -> list:
        """Bound the children of every node of ``batch`` at once on the pool; return the pairs
        of children (None where settled), in the batch's order.

        Deterministic for a given pool size: the children are created in the batch's order,
        their bounds all computed with the incumbent of the moment (the pool's copies of the
        problem learn it with :meth:`LabelingProblem.notify_incumbent`), and the results
        settled in the order they were submitted, as one process would settle them.
        """
        jobs, bounds = [], []
        for node in batch:
            index, first = self._branching(node)
            state = node.info.state
            node.info = None
            for child, plus, minus, label in self._children(node, index, first):
                job = self._create(node, child, plus, minus, index, label)
                jobs.append(job)
                if job is not None and not job.leaf:
                    bounds.append((job.partial, state))
        incumbent = None if self.labels is None else (self.labels.copy(), self.incumbent,
                                                      self.threshold)
        answers = iter(self.pool.bound(self.problem, bounds, incumbent, self._pool_stop))
        children = []
        for job in jobs:
            if job is None:
                children.append(None)
            elif job.leaf:
                self._leaf(job.id, job.partial)
                children.append(None)
            else:
                info, report = next(answers)
                self.problem.merge_worker_report(report)
                children.append(self._settle(job, info))
        return [(children[k], children[k + 1]) for k in range(0, len(children), 2)]

    def _pool_stop(self) -> bool:
        """Whether the bounds running on the pool must be stopped (the time limit, a stopped
        clock); the driver's usual limit checks, asked while it waits."""
        return self.clock.expired()

    # -- the loop --------------------------------------------------------------------------
    def execute(self, frontier) -> SearchResult:
        try:
            # The starting heuristic first: a bad input it finds (one error line) comes before
            # any log line.
            self._initial_incumbent()
            self.log(f"branch and bound: {self.u} unlabeled, "
                     f"{'no balance count' if self.P is None else f'{self.P} positive'}")
            self.log(_HEADER)
            self._phase("bounding the root node")  # an SDP bound's root takes seconds
            partial = np.zeros(self.u, dtype=int) if self.links is None \
                else self.links.fixed_partial()
            root = self._evaluate_root(partial)
            if root is not None and self.probe == "root":
                self._phase("probing the root")
                root = self._probe_root(root)
            frontier.push(root, None)
            self._phase("branch and bound")
            self.expanding, self.in_expansion = math.inf, []
            while len(frontier):
                now = self.clock.now()
                if self._limit_reached():
                    break
                self._report(frontier, now)
                if self.pool is not None:
                    self._step_batch(frontier)
                    continue
                node = frontier.pop()
                if node.bound >= self.cutoff:
                    self._prune(node.id, node.bound, node.partial)
                    continue
                self.expanding, self.in_expansion = node.bound, [node]
                frontier.push(*self._expand(node))
                self.expanding, self.in_expansion = math.inf, []
        except KeyboardInterrupt:
            self.stop = "interrupted"
        except Exception as exc:  # a step the clock stopped (or a library's error made of it)
            if not stopped_inside(exc):
                raise
            self.stop = "interrupted" if self.clock.interrupted else "time limit"
        return self._finish(frontier)


    def _step_batch(self, frontier) -> None:
        """Expand the next nodes of ``frontier`` at once on the pool (up to half as many nodes
        as the pool has workers: two children each)."""
        batch = []
        while len(frontier) and len(batch) < self.batch_nodes:
            node = frontier.pop()
            if node.bound >= self.cutoff:
                self._prune(node.id, node.bound, node.partial)
            else:
                batch.append(node)
        if not batch:
            return
        self.expanding, self.in_expansion = min(node.bound for node in batch), batch
        for pair in self._expand_batch(batch):
            frontier.push(*pair)
        self.expanding, self.in_expansion = math.inf, []

    def _phase(self, phase: str) -> None:
        """Tell the clock (and so the progress lines) what runs now."""
        self.clock.report(phase=phase, nodes=self.nodes)

    def _initial_incumbent(self) -> None:
        if self.initial is not None:
            self._offer(self.initial, None, "start")
        start = self.problem.initial_incumbent()
        if start is not None:
            labels, value, name = start
            self._offer(labels, value, str(name))

    def _limit_reached(self) -> bool:
        if self.clock.stopped:
            self.stop = "interrupted" if self.clock.interrupted else "time limit"
        elif self.clock.expired():
            self.stop = "time limit"
        elif self.node_limit is not None and self.nodes >= self.node_limit:
            self.stop = "node limit"
        return self.stop is not None

    def _lower_bound(self, frontier) -> float:
        floor = self.floor
        if floor >= self._cutoff_numerical():
            floor = self.incumbent  # pruned only within rounding of the incumbent
        return min(frontier.best_bound(), floor, self.incumbent, self.expanding)

    def _cutoff_numerical(self) -> float:
        if not math.isfinite(self.incumbent):
            return self.incumbent
        return self.incumbent - NUMERICAL_TOL * max(1.0, abs(self.incumbent))


    def _finish(self, frontier) -> SearchResult:
        bound = self._lower_bound(frontier)
        objective = None if self.labels is None else self.incumbent
        status, message = self._status(objective, bound)
        for node in frontier.nodes():
            self.tree.set(node.id, bound=node.bound)  # open nodes keep status "open"
        self._record_unfinished(frontier)
        probed = (None, None)
        if self.certify == "probe" and self.labels is not None:
            probed = self._certify_by_probes(objective)
        now = self.clock.now()
        self._trace(frontier, now, bound)
        result = SearchResult(status=status, labels=self.labels, objective=objective,
                              lower_bound=None if bound == -math.inf else bound,
                              nodes=self.nodes, open_nodes=len(frontier),
                              seconds=now - self.start, incumbent_source=self.source,
                              message=message, tree=self.tree.graph, trace=self.trace,
                              fixed_at_root=self.fixed_at_root, root_fixed=self.root_fixed)
        if self.kept is not None:
            rest = min(frontier.best_bound(), self.floor, self.kept.dropped, self.expanding)
            result.pool = self.kept.best_first()
            result.pool_bound = None if rest == -math.inf else rest
        if self.labels is not None:
            result.certified_labels, result.label_bounds = certify_labels(
                *self._label_values(*probed), self.labels, objective)
        result.probe_nodes = self.probe_nodes
        if isinstance(self.tree, ProofRecorder):
            result.proof = self.tree.record()
        self.log(_format_row(self.nodes, len(frontier), self.incumbent, bound, now - self.start))
        self.log(_summary(result))
        return result


    def _status(self, objective: Optional[float], bound: float) -> tuple[str, str]:
        found = objective is not None
        if self.stop == "interrupted":
            return ("feasible" if found else "error"), "interrupted"
        if self.stop == "time limit":
            return "time_limit", "time limit reached"
        if self.stop == "node limit":
            return (("feasible", "node limit") if found
                    else ("error", "node limit, before any labeling was found"))
        if not found:
            what = "meets the balance count" if self.P is not None else "has a finite objective"
            return "infeasible", f"no labeling {what}"
        if bound < objective:
            # The tree closed with nodes pruned within the tolerance: optimal within it, as
            # a MIP solver reports it, the gap beside it.
            return "optimal", f"closed within the gap tolerance, gap {_gap(objective, bound):.3g}"
        return "optimal", ""


_HEADER = f"{'nodes':>10} {'open':>9} {'incumbent':>14} {'best bound':>14} {'gap':>9} {'time':>9}"


def _summary(result: SearchResult) -> str:
    text = (f"{result.status}: objective {_num(result.objective)}, "
            f"bound {_num(result.lower_bound)}, {result.nodes} "
            f"node{'' if result.nodes == 1 else 's'}, "
            f"{result.open_nodes} open, {result.seconds:.2f} s")
    if result.incumbent_source is not None:
        text += f", incumbent from {result.incumbent_source}"
    return text + (f" ({result.message})" if result.message else "")


class BuiltinBackend(Backend):
    """``--solver builtin``: this driver, for formulations whose bounds need no other solver.

    The ``svm`` problem class (the ``bb`` formulation, its SVM bounds computed in numpy) has this
    one solver; the model it takes is a :class:`LabelingProblem`, and :meth:`solve` searches it
    on the solve's clock (the profile's time limit from the call when called on its own) with
    the profile's relative gap. No solution is loaded anywhere: formulations call
    :func:`search` themselves for the labeling.
    """

    name = "builtin"
    provides_duals = False
    model_kind = "labeling"
    option_types: dict = {}  # the search's knobs are the formulation's options, not the profile's

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        return None

    def solve(self, model: LabelingProblem, profile, clock=None) -> Outcome:
        # On its own (no solve's clock), the search counts the profile's limit from the call.
        result = search(model, clock=clock,
                        time_limit=profile.time_limit if clock is None else None,
                        rel_gap=profile.mip_rel_gap or 0.0, keep_tree=False)
        return Outcome(status=result.status, objective=result.objective,
                       bound=result.lower_bound, nodes=result.nodes, seconds=result.seconds,
                       message=result.message, has_solution=result.labels is not None)
