"""Probing in the search (:func:`s3vm.solvers.bnb.driver.search`'s ``probe`` and ``certify``):
label fixing at the root (one bound per free point of the root's child with the opposite of the
incumbent's label; where it cannot beat the incumbent the label is fixed for the whole search),
the labels certified by one more bound each after the search, and the records of the nodes a
stopped search leaves (:mod:`s3vm.solvers.bnb.certified` gives the argument). The driver's
search class holds the state these methods read: ``problem``, ``records``, ``tree``, the
incumbent and the clock."""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from s3vm.solvers.bnb.certified import certify as certify_labels
from s3vm.solvers.bnb.queues import Job, Node
from s3vm.solvers.runtime.clock import Stopped


class RootProbing:
    """The probing part of the driver's search (a mixin: module docstring)."""

    def _evaluate_root(self, partial: np.ndarray) -> Optional[Node]:
        """:meth:`_evaluate` of the root, keeping its partial labeling, bound and state for the
        probes (also when the root is settled at once)."""
        job = self._create(None, partial, int(np.sum(partial == 1)), int(np.sum(partial == -1)),
                           None, None)
        if job is None:
            return None
        if job.leaf:
            self._leaf(job.id, job.partial)
            return None
        info = self.problem.bound(job.partial, None)
        node = self._settle(job, info)
        value = float(info.value)
        self.root_partial, self.root_state = job.partial, info.state
        self.root_bound = -math.inf if math.isnan(value) else value
        return node

    # -- probing ---------------------------------------------------------------------------
    def _probe_bound(self, base: np.ndarray, index: int, label: int, state: Any,
                     parent_bound: float, offer: bool = True) -> tuple[np.ndarray, float]:
        """(partial, value) of the child of ``base`` with ``label`` at ``index`` (its class with
        links), bounded from ``state``: ``inf`` when the count or the links leave it no
        labeling, a leaf's objective when the count completes it, else its bound (raised to
        ``parent_bound``). Labelings found are offered as incumbents when ``offer``."""
        child = base.copy()
        if self.links is None:
            child[index] = label
        else:
            self.links.fix(child, index, label)
        plus, minus = int(np.sum(child == 1)), int(np.sum(child == -1))
        if self.P is not None and (plus > self.P or minus > self.u - self.P):
            return child, math.inf
        free = self.u - plus - minus
        if free and self.P is not None and (plus == self.P or minus == self.u - self.P):
            child[child == 0] = -1 if plus == self.P else 1
            free = 0
            if self.links is not None and not self.links.consistent(child):
                return child, math.inf
        self.nodes += 1
        self.probe_nodes += 1
        if not free:
            value = float(self.problem.objective(child))
            if math.isnan(value) or value == math.inf:
                return child, math.inf
            if offer:
                self._offer(child, value, "leaf")
            return child, value
        info = self.problem.bound(child, state)
        value = float(info.value)
        value = max(-math.inf if math.isnan(value) else value, parent_bound)
        if offer and info.labels is not None:
            self._offer(info.labels, info.labels_value, "bound")
        return child, value

    def _probe_root(self, root: Node) -> Optional[Node]:
        """Fix at the root the labels whose opposite child cannot improve the incumbent (see
        ``probe`` in :func:`search`); the root with its labels fixed, bounded again (None when
        settled)."""
        if self.labels is None or not math.isfinite(self.cutoff):
            return root
        state, partial = self.root_state, root.partial.copy()
        # While probing, the root's (shrinking) subtree is in no open node: a stop counts it.
        self.expanding, self.in_expansion = root.bound, [root]
        fixed = tried = 0
        for i in range(self.u):
            if partial[i] != 0:
                continue
            if (self.probe_max is not None and tried >= self.probe_max) or self.clock.stopped \
                    or self.clock.expired() or root.bound >= self.cutoff or \
                    (self.node_limit is not None and self.nodes >= self.node_limit):
                break
            tried += 1
            label = int(self.labels[i])
            child, value = self._probe_bound(partial, i, -label, state, root.bound)
            if value < self.cutoff or self.labels[i] != label:
                # it may improve the incumbent; or it held the new incumbent, which the fix
                # would leave out of the tree (valid, but no longer the incumbent's label)
                continue
            # A terminal node, pruned as the tree would prune it: every labeling that can
            # still enter the answer has ``label`` at i.
            if value != math.inf:
                self.floor = min(self.floor, value)
                self.outside.record(child, value)
            partial = partial.copy()
            if self.links is None:
                partial[i] = label
            else:
                self.links.fix(partial, i, label)
            fixed += 1
            root.partial = partial
            root.plus, root.minus = int(np.sum(partial == 1)), int(np.sum(partial == -1))
            if self.P is not None and (root.plus >= self.P or root.minus >= self.u - self.P):
                break  # the count settles the rest
        self.fixed_at_root = fixed
        self.root_fixed = np.where(partial != self.root_partial, partial, 0)
        if not fixed:
            return root
        self.root_partial = partial
        self.tree.set(root.id, partial=partial, fixed_at_root=fixed)
        job = self._create_fixed_root(root, partial)
        if job is None:
            return None
        if job.leaf:
            self._leaf(job.id, job.partial)
            return None
        node = self._settle(job, self.problem.bound(job.partial, state))
        if node is not None:
            self.root_partial, self.root_bound = node.partial, node.bound
            self.root_state = node.info.state
        return node

    def _create_fixed_root(self, root: Node, partial: np.ndarray) -> Optional[Job]:
        """The job that bounds the root again with its fixed labels (None: the count leaves it
        no labeling), completed when the count forces the rest."""
        plus, minus = int(np.sum(partial == 1)), int(np.sum(partial == -1))
        if self.P is not None and (plus > self.P or minus > self.u - self.P):
            self.tree.set(root.id, status="infeasible")
            return None
        if root.bound >= self.cutoff:
            self._prune(root.id, root.bound, partial)
            return None
        partial, free, completes = self._forced_by_count(root.id, partial, plus, minus)
        self.root_partial = partial
        if not completes:
            return None
        return Job(root.id, 0, partial, plus, minus, root.bound, leaf=not free)

    def _label_values(self, probed_plus=None, probed_minus=None):
        """(best_if_plus, best_if_minus) over the whole space: the root's probes' terminal
        nodes, and below the (fixed) root the tree's terminal nodes, raised by the bounds of
        the probes after the search (each bounds the same labelings)."""
        inside_plus, inside_minus = self.records.best_if_plus, self.records.best_if_minus
        if probed_plus is not None:
            inside_plus = np.maximum(inside_plus, probed_plus)
            inside_minus = np.maximum(inside_minus, probed_minus)
        return (np.minimum(self.outside.best_if_plus, inside_plus),
                np.minimum(self.outside.best_if_minus, inside_minus))

    def _certify_by_probes(self, objective: float):
        """(probed_plus, probed_minus): for each position the tree left open, the bound of the
        (fixed) root's child with the opposite of the answer's label (``-inf`` elsewhere), while
        the clock allows."""
        probed_plus = np.full(self.u, -math.inf)
        probed_minus = np.full(self.u, -math.inf)
        if self.root_partial is None or self.stop == "interrupted":
            return probed_plus, probed_minus
        certified, _ = certify_labels(*self._label_values(), self.labels, objective)
        base, state = self.root_partial, self.root_state
        self._phase("certifying labels")
        try:
            for i in np.flatnonzero(~certified):
                if base[i] != 0:
                    continue  # the root fixed it: below the root no labeling flips it
                if self.clock.stopped or self.clock.expired():
                    break
                label = -int(self.labels[i])
                _, value = self._probe_bound(base, int(i), label, state, self.root_bound,
                                             offer=False)
                (probed_plus if label == 1 else probed_minus)[i] = value
        except (KeyboardInterrupt, Stopped):
            pass  # what was probed holds
        return probed_plus, probed_minus

    def _record_unfinished(self, frontier) -> None:
        """The terminal nodes of a stopped search (:mod:`.certified`): the open nodes and those
        being expanded, with their bounds; before the root was bounded, nothing is proven."""
        if self.expanding == -math.inf:
            self.records.nothing_proven()
            return
        for node in frontier.nodes():
            self.records.record(node.partial, node.bound)
        if self.expanding != math.inf:
            for node in self.in_expansion:
                self.records.record(node.partial, node.bound)

