"""The incumbent search of ``bb-sdp``'s node loop (:mod:`s3vm.bounds.shor`): their start (the SVM
on the labeled points) and their heuristic (round relaxed outputs, solve the labeling's QP,
improve by 2-opt moves that keep the balance, then by single label flips, or swaps under the
count, with the QP re-solved: :func:`s3vm.models.output_space.flip_search`).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Optional

import numpy as np

from s3vm.models.output_space import (
    OutputSpaceData,
    flip_search,
    labeling_qp,
    labels_count,
    two_opt,
)
from s3vm.solvers.bnb.links import round_scores


class IncumbentSearch:
    """Labelings of U from relaxed (or SVM) outputs, each offered to the problem.

    Parameters
    ----------
    data : s3vm.models.output_space.OutputSpaceData
    offer : callable
        (labels_U, v, found) -> whether the labeling lowered the incumbent (the problem scores
        it exactly and keeps it in ``found`` when it is the node's best).
    stats : dict
        The problem's counters: ``heuristic_seconds`` is updated in place.
    links : s3vm.solvers.bnb.links.Links, optional
        Groups of unlabeled points: every start is rounded to keep them
        (:func:`s3vm.solvers.bnb.links.round_scores`) and valued as it is, without the 2-opt
        and flip moves, which move single points.
    """

    def __init__(self, data: OutputSpaceData, offer: Callable, stats: dict, links=None):
        self.data, self.offer, self.stats = data, offer, stats
        self.links = links
        self._searched: dict = {}     # start labeling -> (value, v) of the local search

    def initial(self, found: dict) -> None:
        """Their start: the SVM on the labeled points labels U (the P largest outputs under a
        count), then the labeling's QP and 2-opt; any feasible labeling when that fails."""
        d = self.data
        l = d.l
        Kll = d.Kp[:l, :l]
        Cl = np.linalg.inv(Kll)
        Cl = 0.25 * (Cl + Cl.T)
        _, vl = labeling_qp(Cl, d.yL)
        if vl is not None:
            f = (d.Kp[l:, :l] @ np.linalg.solve(Kll, vl))
            self.run(np.r_[vl, f], found)
        if "labels" not in found:
            # Any feasible labeling: alternating signs (both signs meet any mean in reach).
            y = np.where(np.arange(d.u) % 2 == 0, 1.0, -1.0)
            if d.positives is not None:
                y = labels_count(-np.arange(d.u, dtype=float), d.positives)
            if self.links is not None:
                y = self.links.best(np.zeros(d.u), np.zeros(d.u), d.positives)
                if y is None:
                    return  # no labeling keeps the groups with the count
            self.offer(y, None, found)

    def starts(self, x: np.ndarray) -> list:
        """Labelings of U to search from, given relaxed (or SVM) outputs x: under the count its
        P largest; else the signs, and under the mean balance also the labeling with the count
        the balance would have at |v| = 1 (the (rhs + u) / 2 largest), which lets the rounding
        reach another count than the signs'."""
        d = self.data
        xu = x[d.l:]
        if self.links is not None:
            counts = [d.positives] if d.positives is not None or d.rhs is None else \
                [None, int(round(0.5 * (d.rhs + d.u)))]
            starts = [round_scores(xu, count, self.links) for count in counts]
            return [np.asarray(y, dtype=float) for y in starts if y is not None]
        if d.positives is not None:
            return [labels_count(xu, d.positives)]
        starts = [np.where(xu >= 0, 1.0, -1.0)]
        if d.rhs is not None:
            P = int(round(0.5 * (d.rhs + d.u)))
            if 0 < P < d.u:
                starts.append(labels_count(xu, P))
        return starts

    def search_from(self, y_u: np.ndarray):
        """(value, v) of the local optimum reached from the labeling y_u of U (cached by the
        start: roundings repeat from round to round): 2-opt (their run_heuristic) then
        single flips, or swaps under the count (:func:`s3vm.models.output_space.flip_search`)."""
        d = self.data
        key = np.asarray(y_u > 0).tobytes()
        hit = self._searched.get(key)
        if hit is not None:
            return hit
        movable = np.r_[np.zeros(d.l, dtype=bool), np.ones(d.u, dtype=bool)]
        a = d.a if d.rhs is not None else None
        y = d.full(y_u)
        if self.links is not None:
            value, v = d.qp(y)
            return (value, v) if v is not None else (math.inf, None)
        if d.positives is None:
            _, v = d.qp(y)
            if v is not None:
                v = two_opt(d.Cm, v, movable, d.qp)
                y = d.full(np.where(v[d.l:] >= 0, 1.0, -1.0))
        value, v, y = flip_search(d.Cm, d.Mdiag, y, movable, a, d.rhs,
                                  keep_count=d.positives is not None)
        if len(self._searched) > 10000:
            self._searched.clear()
        self._searched[key] = (value, v)
        return value, v

    def run(self, x: np.ndarray, found: dict) -> tuple[bool, Optional[np.ndarray]]:
        """The heuristic from relaxed outputs x: a local search from each of :meth:`starts`
        (:meth:`search_from`); (whether the incumbent fell, the outputs v of the best labeling
        reached, or None)."""
        d = self.data
        t0 = time.perf_counter()
        improved, v_out, best = False, None, math.inf
        for y_u in self.starts(x):
            value, v = self.search_from(y_u)
            if v is None:
                continue
            improved |= self.offer(np.where(v[d.l:] >= 0, 1, -1), v, found)
            if value < best:
                best, v_out = value, v
        self.stats["heuristic_seconds"] += time.perf_counter() - t0
        return improved, v_out


__all__ = ["IncumbentSearch"]
