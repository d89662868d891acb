"""CVS3VM: k-median clustering picks the points an oracle labels, then VS3VM.

Fung and Mangasarian (2001), CVS3VM for unlabeled data; docs/formulations.md#cvs3vm.

The points nearest the k cluster centers, a fraction ``label_fraction`` of the data, are labeled by
the oracle (the ``truth`` column: the only place a formulation reads it), and VS3VM runs with them
as the labeled set and everything else unlabeled. Labels already in the file are kept. This works
on data with no label at all.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from s3vm.core.options import SEED, Option
from s3vm.formulations.vs3vm import VS3VM
from s3vm.models.kmedian import k_median, points_near_centers
from s3vm.solvers.errors import InputError


class CVS3VM(VS3VM):
    """Clustered VS3VM.

    Parameters
    ----------
    clusters : int
        k of k-median (default 2, the two-class example of Fung and Mangasarian).
    label_fraction : float
        Share of all points given to the oracle, in (0, 1] (default 0.10, as Fung and
        Mangasarian).
    seed : int
        Seed of the k-median restarts.
    max_lps, tol, lp_form, warm_start
        As for :class:`VS3VM`.
    """

    name: ClassVar[str] = "cvs3vm"
    local: ClassVar[bool] = True
    modelers: ClassVar[tuple] = ()
    no_model: ClassVar[str] = "a clustering step followed by one MIP per cluster"
    components: ClassVar[dict] = {}
    #: peak bytes per n^2 entry (linear, rbf), measured: rbf: the kernel expansion over all points
    dense_bytes: ClassVar[tuple] = (0, 640)
    summary: ClassVar[str] = ("k-median picks points for an oracle (truth) to label, then vs3vm "
                              "(--clusters, --label-fraction)")
    needs_labels: ClassVar[bool] = False
    options: ClassVar[tuple] = (
        Option("clusters", "int", 2, "k of k-median", minimum=1),
        Option("label_fraction", "float", 0.10, "share of points the oracle labels",
               minimum=0.0, maximum=1.0, open_min=True),
        SEED,
    ) + VS3VM.options

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

    def run(self, instance, settings, backend, profile, clock, result):
        labeled, oracle = self.with_oracle_labels(instance)
        model = super().run(labeled, settings, backend, profile, clock, result)
        if result.primal.get("w") is not None:
            # Report on every row unlabeled in the file (the contract), oracle rows included.
            w, b = result.primal["w"], result.primal["b"]
            scores = model.problem_data.features(instance.XU) @ w + b
            labels = np.where(scores >= 0, 1, -1)
            in_file_unlabeled = np.searchsorted(instance.unlabeled, oracle)
            labels[in_file_unlabeled] = instance.truth[oracle]
            result.decision_values, result.labels = scores, labels
        result.info["oracle_rows"] = oracle.tolist()
