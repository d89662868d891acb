"""What the branch-and-bound driver needs from a problem (pybnb's shape, for labelings).

A node is a partial labeling of the u unlabeled points: a vector ``partial`` of length u with
+1/-1 where the label is fixed and 0 where it is free. The driver owns the tree, the incumbent,
node selection, limits, the balance count and the log; a :class:`LabelingProblem` owns the
mathematics: a lower bound at a node, the objective of a full labeling, which point to branch on
and which label to try first.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np


@dataclass
class NodeBound:
    """What a problem says of one node.

    Attributes
    ----------
    value : float
        A lower bound on the objective of every full labeling that completes the node
        (``inf`` when no completion is feasible).
    state : object, optional
        Data the node's children start from (a factorisation, a warm start); the driver passes
        the parent's state to :meth:`LabelingProblem.bound` of each child and drops it when the
        node's children are all created.
    labels : ndarray of shape (u,), optional
        A full labeling found while bounding (a candidate incumbent), with ``labels_value``
        its objective.
    labels_value : float, optional
    branch_index : int, optional
        The free unlabeled position to branch on; None lets the driver take the first free one.
    first_label : {+1, -1}
        The label of the child to explore first (the most likely one).
    proof : object, optional
        The data that proves ``value`` (JSON-ready), when the problem was asked to record its
        proofs: the driver keeps it with the node for a certificate, without reading it.
    """

    value: float
    state: Any = None
    labels: Optional[np.ndarray] = None
    labels_value: Optional[float] = None
    branch_index: Optional[int] = None
    first_label: int = 1
    proof: Any = None


class LabelingProblem(ABC):
    """A minimisation over labelings y_U in {-1, +1}^u that the driver can branch on.

    Attributes
    ----------
    u : int
        The number of unlabeled points.
    positives : int or None
        The balance count (exactly P unlabeled points labeled +1), None for no balance
        constraint. The driver prunes nodes that can no longer meet it; a problem may also use it
        in its bound.
    clock : s3vm.solvers.runtime.clock.Clock or None
        The clock of the solve, given to the problem when it is built: a problem whose bound
        computations are long may cut them short when it expires (the driver checks the time
        only between nodes), and its solver calls get the time it has left.
    links : s3vm.solvers.bnb.links.Links or None
        Positions whose labels are tied (fixed, or equal or opposite to others'): the driver
        branches on a whole class at once and takes only labelings that keep them. None: none.
    """

    u: int
    positives: Optional[int] = None
    clock: Any = None
    links: Any = None

    @abstractmethod
    def bound(self, partial: np.ndarray, parent_state: Any = None) -> NodeBound:
        """A lower bound at the node ``partial`` (read-only; +1/-1 fixed, 0 free).

        ``parent_state`` is the parent's :attr:`NodeBound.state` (None at the root). When every
        label is fixed the bound should equal :meth:`objective` of that labeling.
        """

    @abstractmethod
    def objective(self, labels: np.ndarray) -> float:
        """The objective of a full labeling (+1/-1, length u)."""

    def notify_cutoff(self, cutoff: float) -> None:
        """The driver's pruning threshold changed: a node whose bound reaches ``cutoff`` is
        pruned. A problem may use it to decide how much effort a bound deserves; by default it
        is ignored."""

    def notify_threshold(self, value: float) -> None:
        """Labelings of objective ``value`` or more can no longer enter the search's answer:
        the incumbent's value, or with a pool of the K best labelings the K-th best's. A bound
        that holds only for the labelings below the answer's threshold (a box drawn from the
        incumbent) must follow this value, not the best value it saw. By default ignored."""

    def leaf_proof(self, labels: np.ndarray) -> Any:
        """The data that proves :meth:`objective` of ``labels`` from below (JSON-ready), for a
        certificate; None by default (no proof recorded)."""
        return None

    def notify_incumbent(self, labels: np.ndarray, value: float) -> None:
        """The driver's incumbent changed to ``labels`` of objective ``value`` (whoever found
        it). A copy of the problem in a worker of a pool (:mod:`s3vm.solvers.bnb.pool`) learns
        the incumbent so before each bound. By default it is ignored."""

    def incumbent_outputs(self, labels: np.ndarray) -> Optional[np.ndarray]:
        """The decision values of a new incumbent ``labels``, when they come cheaply (one solve at
        a fixed labeling, or the solution of the one just solved), else None (by default).

        The driver publishes them on the solve's clock with the incumbent, in its own process,
        whichever worker found it: a search stopped where its worker cannot finish (a node
        bound in C at a time limit or a signal) still answers them. :meth:`decision_values` is
        asked at the end anyway."""
        return None

    def __getstate__(self) -> dict:
        """The problem as it is sent to a worker in another process (pickled: a Dask cluster),
        without the solve's clock, which stays in the driver's process (it holds locks); the
        worker gives its copy a clock of its own (:meth:`run_on`)."""
        state = dict(self.__dict__)
        if "clock" in state:
            state["clock"] = None
        return state

    def run_on(self, clock) -> None:
        """Run this copy's bounds on ``clock`` (None: none) from now on: for a copy sent to a
        worker in another process, where the solve's clock (which stays in the driver's
        process) cannot go; the worker gives it a clock of the time left. A problem gets the
        solve's clock when it is built."""
        self.clock = clock

    def worker_begin(self) -> None:
        """A copy of the problem in a worker is about to bound one node: start afresh what
        :meth:`worker_report` returns (counters, a log). By default nothing."""

    def worker_report(self) -> Any:
        """What this copy learnt while bounding the node since :meth:`worker_begin`
        (statistics, a log; it must pickle), for :meth:`merge_worker_report` in the driver's
        process. By default None."""
        return None

    def merge_worker_report(self, report: Any) -> None:
        """Add a worker's :meth:`worker_report` to this problem's own (in the driver's
        process, in the order the nodes were submitted). By default nothing."""

    def initial_incumbent(self) -> Optional[tuple[np.ndarray, float, str]]:
        """A starting labeling, its objective and the name of the heuristic, or None."""
        return None

    def decision_values(self, labels: np.ndarray) -> Optional[np.ndarray]:
        """Scores of the unlabeled points (larger meaning +1) for the final labeling, or None."""
        return None


def labels_by_outputs(f: np.ndarray, positives: Optional[int]) -> np.ndarray:
    """+1 for the ``positives`` largest outputs (ties by position), else by sign (0 -> +1)."""
    if positives is None:
        return np.where(f >= 0, 1, -1).astype(int)
    labels = -np.ones(f.size, dtype=int)
    labels[np.argsort(-f, kind="stable")[:positives]] = 1
    return labels
