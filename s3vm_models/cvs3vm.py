"""CVS3VM (seed 004): k-median clustering picks the points an oracle labels, then VS3VM.

The points nearest the k cluster centers, a fraction ``label_fraction`` of the data, are labeled by
the oracle (the ``truth`` column: the only place a formulation reads it), and VS3VM runs with them
as the labeled set and everything else unlabeled. Labels already in the file are kept. This works
on data with no label at all.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from .base import Stopwatch
from .solvers.errors import InputError
from .kmedian import k_median, points_near_centers
from .vs3vm import VS3VM


class CVS3VM(VS3VM):
    """Clustered VS3VM.

    Parameters
    ----------
    clusters : int
        k of k-median (default 2, the seed's two-class example).
    label_fraction : float
        Share of all points given to the oracle, in (0, 1] (default 0.10, as in the seed).
    seed : int
        Seed of the k-median restarts.
    max_lps, tol
        As for :class:`VS3VM`.
    """

    name: ClassVar[str] = "cvs3vm"
    summary: ClassVar[str] = ("k-median picks points for an oracle (truth) to label, then vs3vm "
                              "(--clusters, --label-fraction)")
    needs_labels: ClassVar[bool] = False

    def __init__(self, clusters: int = 2, label_fraction: float = 0.10, seed: int = 0,
                 max_lps: int = 50, tol: float = 1e-9, lp_form: str = "auto",
                 warm_start: bool = True):
        super().__init__(max_lps=max_lps, tol=tol, lp_form=lp_form, warm_start=warm_start)
        if isinstance(label_fraction, bool) or not isinstance(label_fraction, (int, float)) \
                or not 0 < label_fraction <= 1:
            raise InputError(f"label fraction must lie in (0, 1], got {label_fraction}")
        if isinstance(clusters, bool) or not isinstance(clusters, (int, np.integer)) \
                or clusters < 1:
            raise InputError(f"clusters must be a positive integer, got {clusters}")
        self.clusters, self.label_fraction, self.seed = int(clusters), float(label_fraction), seed

    def check(self, instance, settings):
        instance.require_truth("cvs3vm (the oracle)")
        if self.clusters > instance.n:
            raise InputError(f"clusters ({self.clusters}) exceeds the number of points "
                             f"({instance.n})")
        if self.clusters > self.oracle_count(instance):
            raise InputError(f"clusters ({self.clusters}) exceeds the points the oracle labels "
                             f"({self.oracle_count(instance)}): each cluster needs one; raise "
                             "--label-fraction or lower --clusters")
        super().check(instance, settings)

    def oracle_count(self, instance) -> int:
        """ceil(label_fraction * n), at least 1 (rounded first: 0.07 * 100 is 7.000000000000001)."""
        return max(1, math.ceil(round(self.label_fraction * instance.n, 9)))

    def oracle_rows(self, instance) -> np.ndarray:
        """Rows the oracle labels: nearest the k-median centers, a label_fraction of all rows."""
        clustering = k_median(instance.X, self.clusters, seed=self.seed)
        # Rounded before the ceiling: 0.07 * 100 is 7.000000000000001 in floating point, and
        # 7% of 100 points is 7 points, not 8.
        count = self.oracle_count(instance)
        return points_near_centers(instance.X, clustering, count)

    def with_oracle_labels(self, instance):
        """The instance with the oracle's labels added, and the rows the oracle labeled."""
        rows = self.oracle_rows(instance)
        label = np.array(instance.label, dtype=np.int8)
        fresh = rows[label[rows] == 0]
        label[fresh] = instance.truth[fresh]
        labeled = instance.with_labels(label)
        if not (np.any(label == 1) and np.any(label == -1)):
            raise InputError("the oracle's points are all of one class: raise --clusters or "
                             "--label-fraction so that both classes are labeled")
        if labeled.u == 0:
            raise InputError("the oracle labeled every point: lower --label-fraction")
        return labeled, fresh

    def solve(self, instance, settings, profile):
        from .solvers.registry import get_backend
        from .solvers.slp import successive_lp

        from .vs3vm import ConcaveS3VM

        self.check(instance, settings)
        backend = get_backend(profile.solver, self.problem_class)
        import pyomo.environ  # noqa: F401  (import outside the clock, as in VS3VM)

        clock = Stopwatch()
        labeled, oracle = self.with_oracle_labels(instance)
        model = self.model_to_solve(labeled, settings, backend)
        problem = ConcaveS3VM(model, settings.mu, settings.nu)
        trace = successive_lp(problem, self.session(backend, model, profile),
                              max_lps=self.max_lps, tol=self.tol, time_limit=profile.time_limit)
        result = self.result_from_trace(trace, model, backend, clock)
        if trace.x is not None:
            # Report on every row unlabeled in the file (the contract), oracle rows included.
            data = model.problem_data
            scores = data.features(instance.XU) @ trace.x.w - trace.x.g
            labels = np.where(scores >= 0, 1, -1)
            in_file_unlabeled = np.searchsorted(instance.unlabeled, oracle)
            labels[in_file_unlabeled] = instance.truth[oracle]
            result.decision_values, result.labels = scores, labels
        result.info["oracle_rows"] = oracle.tolist()
        result.seconds = clock.seconds
        return result
