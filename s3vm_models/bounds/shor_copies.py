"""What the copies of ``bb-sdp``'s node problem in a pool's workers (:mod:`s3vm.solvers.bnb.pool`)
exchange with the driver's: the incumbent (or a pool's threshold) told before each bound, and the
counters and node log of the bound sent back (a mixin of :class:`s3vm.bounds.shor.ShorBoundProblem`,
which holds ``stats``, ``log``, ``UB``, ``k_best`` and the value cache ``_values``)."""

from __future__ import annotations

import numpy as np


class PoolCopies:
    """The driver's side of the problem's copies (module docstring)."""

    _COUNTERS = ("sdp", "sdp_seconds", "sdp_cpu", "box_seconds", "heuristic_seconds", "cuts",
                 "rounds", "sdp_failures", "sdp_escalations", "upper_rows_shown",
                 "products_dropped")

    def notify_incumbent(self, labels: np.ndarray, value: float) -> None:
        """The driver's incumbent (found by another worker): its value is the UB of the box
        and of the heuristic's comparisons here too."""
        self._values.setdefault(np.asarray(labels).astype(np.int8).tobytes(), float(value))
        if self.k_best == 1:
            self.UB = min(self.UB, float(value))

    def notify_threshold(self, value: float) -> None:
        """With a pool (``k_best`` > 1) UB is the K-th best value the driver holds."""
        if self.k_best > 1:
            self.UB = min(self.UB, float(value))

    def worker_begin(self) -> None:
        for key in self._COUNTERS:
            self.stats[key] = type(self.stats[key])(0)
        self.log = []

    def worker_report(self) -> dict:
        return {"stats": {key: self.stats[key] for key in self._COUNTERS}, "log": self.log}

    def merge_worker_report(self, report: dict) -> None:
        for key, value in report["stats"].items():
            self.stats[key] += value
        self.log.extend(report["log"])
