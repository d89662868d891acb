"""The open nodes of the branch-and-bound search, in the order of its node selection.

Each queue holds :class:`Node` objects and answers the same four questions (push a node's two
children, pop the next node, how many are open, the smallest bound among them): ``depth`` is a
stack, ``best`` a heap on the bound, ``best-dive`` a heap whose last expanded node's first child
comes next (:data:`QUEUES`). The driver (:mod:`s3vm.solvers.bnb.driver`) decides what to push.
"""

from __future__ import annotations

import heapq
import math
from typing import Optional


class Node:
    """An open node: its partial labeling, fixed-label counts, bound and the bound's data."""

    __slots__ = ("id", "depth", "partial", "plus", "minus", "bound", "info")

    def __init__(self, node_id, depth, partial, plus, minus, bound, info):
        self.id, self.depth, self.partial = node_id, depth, partial
        self.plus, self.minus, self.bound, self.info = plus, minus, bound, info


class Job:
    """A created node waiting for its evaluation: a leaf's objective or a bound."""

    __slots__ = ("id", "depth", "partial", "plus", "minus", "parent_bound", "leaf")

    def __init__(self, node_id, depth, partial, plus, minus, parent_bound, leaf):
        self.id, self.depth, self.partial = node_id, depth, partial
        self.plus, self.minus, self.parent_bound, self.leaf = plus, minus, parent_bound, leaf


class Stack:
    """Depth-first: the first child on top."""

    def __init__(self):
        self.items: list = []

    def push(self, first, second) -> None:
        if second is not None:
            self.items.append(second)
        if first is not None:
            self.items.append(first)

    def pop(self) -> Node:
        return self.items.pop()

    def __len__(self) -> int:
        return len(self.items)

    def best_bound(self) -> float:
        return min((node.bound for node in self.items), default=math.inf)

    def nodes(self):
        return iter(self.items)


class Heap:
    """Best-first on the bound; among equal bounds the deepest node, then the oldest."""

    def __init__(self):
        self.heap: list = []

    def _add(self, node: Optional[Node]) -> None:
        if node is not None:
            heapq.heappush(self.heap, (node.bound, -node.depth, node.id, node))

    def push(self, first, second) -> None:
        self._add(first)
        self._add(second)

    def pop(self) -> Node:
        return heapq.heappop(self.heap)[3]

    def __len__(self) -> int:
        return len(self.heap)

    def best_bound(self) -> float:
        return self.heap[0][0] if self.heap else math.inf

    def nodes(self):
        return (entry[3] for entry in self.heap)


class DiveHeap(Heap):
    """Best-first with diving: the first child of the node just expanded comes next."""

    def __init__(self):
        super().__init__()
        self.dive: Optional[Node] = None

    def push(self, first, second) -> None:
        if self.dive is not None:  # a batch expands several nodes: one dive, the rest wait
            self._add(self.dive)
        self.dive = first
        self._add(second)

    def pop(self) -> Node:
        if self.dive is not None:
            node, self.dive = self.dive, None
            return node
        return super().pop()

    def __len__(self) -> int:
        return len(self.heap) + (self.dive is not None)

    def best_bound(self) -> float:
        dive = self.dive.bound if self.dive is not None else math.inf
        return min(dive, super().best_bound())

    def nodes(self):
        yield from super().nodes()
        if self.dive is not None:
            yield self.dive


#: The driver's node selections -> the queue that orders its open nodes.
QUEUES = {"depth": Stack, "best": Heap, "best-dive": DiveHeap}
