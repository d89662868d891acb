"""The exact values of ``bb-sdp``'s labelings: each labeling's J (computed once, cached), the
classifier at a labeling, and the labelings a heuristic offers (:class:`s3vm.bounds.shor.
ShorBoundProblem` holds the state these methods read: ``links``, ``_values``, ``_objective``,
``UB``, ``vbest``, ``k_best``, ``positives``, ``proofs``, ``data``)."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np


class LabelingValues:
    """The values' part of :class:`s3vm.bounds.shor.ShorBoundProblem` (a mixin: module
    docstring)."""

    # -- values ------------------------------------------------------------------------------------
    def objective(self, labels: np.ndarray) -> float:
        labels = np.asarray(labels)
        if self.links is not None and not self.links.consistent(labels):
            return math.inf  # no labeling of the problem: a box that forces it holds none
        key = labels.astype(np.int8).tobytes()
        value = self._values.get(key)
        if value is None:
            value = float(self._objective(labels))
            self._values[key] = value
        if value < self.UB and self.k_best == 1:
            self.UB = value
        return value

    def leaf_proof(self, labels: np.ndarray) -> Optional[dict]:
        """A leaf's ``alpha`` (:meth:`s3vm.bounds.shor_proof.ShorProofs.alpha`) when recording."""
        return None if self.proofs is None else {"alpha": self.proofs.alpha(labels)}

    def decision_values(self, labels: np.ndarray) -> Optional[np.ndarray]:
        """f on the unlabeled rows at ``labels`` (the exact objective's classifier)."""
        solve = getattr(self._objective, "solve", None)
        if solve is None:
            return None
        return np.asarray(solve(np.asarray(labels)).outputs)[self.data.unl].copy()

    def incumbent_outputs(self, labels: np.ndarray) -> Optional[np.ndarray]:
        """The new incumbent's decision values (one solve of the exact objective at it): the
        driver publishes them with it, so that a search stopped in a root SDP that cannot be
        cut short answers them."""
        return self.decision_values(labels)

    def _offer(self, labels_U: np.ndarray, v: Optional[np.ndarray], found: dict) -> bool:
        """A labeling found by a heuristic: its exact value; kept for the driver when better."""
        labels = np.where(np.asarray(labels_U) > 0, 1, -1).astype(int)
        if self.positives is not None and int(np.sum(labels == 1)) != self.positives:
            return False
        before = self.UB
        value = self.objective(labels)
        if value < found.get("value", math.inf):
            found.update(labels=labels, value=value)
        if value < before:
            self.vbest = None if v is None else np.asarray(v, dtype=float).copy()
            return True
        return False

