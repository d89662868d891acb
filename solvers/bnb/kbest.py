"""The K best labelings of a branch-and-bound search (a solution pool, as MIP solvers keep one).

With a pool of K the driver prunes a node when its bound reaches the K-th best value found
(less the gap tolerance) instead of the best: a node is discarded only when none of its
labelings can enter the pool. When the tree closes, every labeling left out of the pool lies in
a pruned node, whose bound it cannot beat, or was found and let go at a value no better than the
K-th; the least of those bounds and values (:attr:`LabelingPool.dropped` joined with the pruned
nodes' bounds by the driver) is a proven lower bound on every labeling not returned.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LabelingPool"]


class LabelingPool:
    """The ``size`` best distinct labelings offered so far.

    Attributes
    ----------
    size : int
    dropped : float
        The least value of a labeling offered and not kept (inf when none was let go).
    """

    def __init__(self, size: int):
        self.size = int(size)
        self._entries: dict = {}   # labels as int8 bytes -> (value, labels, source)
        self.dropped = math.inf

    def __len__(self) -> int:
        return len(self._entries)

    def offer(self, labels: np.ndarray, value: float, source: str) -> bool:
        """Keep ``labels`` of objective ``value`` when it is among the ``size`` best distinct
        labelings so far; whether the pool changed. A labeling already kept, or of no finite
        value, changes nothing."""
        if not math.isfinite(value):
            return False
        key = np.asarray(labels, dtype=np.int8).tobytes()
        if key in self._entries:
            return False
        self._entries[key] = (float(value), np.asarray(labels, dtype=int).copy(), source)
        if len(self._entries) <= self.size:
            return True
        worst = max(self._entries, key=lambda k: (self._entries[k][0], k))
        self.dropped = min(self.dropped, self._entries.pop(worst)[0])
        return worst != key

    @property
    def threshold(self) -> float:
        """The K-th best value once the pool is full (a labeling must beat it to enter), else
        inf."""
        if len(self._entries) < self.size:
            return math.inf
        return max(value for value, _, _ in self._entries.values())

    def best_first(self) -> list:
        """[(labels, value, source)], the best first (ties in the order of the labels)."""
        entries = sorted(self._entries.items(), key=lambda item: (item[1][0], item[0]))
        return [(labels, value, source) for _, (value, labels, source) in entries]
