"""What ``bb-sdp``'s node problem does for its children: the cheap certificate of the parent's
multipliers (a child bounded without an SDP), probing, strong branching, the labels a box fixes
and the node statistics (:mod:`s3vm.bounds.shor` gives the method; its class holds the state
these methods read: ``data``, ``sdp``, ``options``, ``stats``, ``log``, ``UB``)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from s3vm.bounds.shor_branching import (
    branch_candidates,
    first_free,
)
from s3vm.models.output_space import BOX_TOL, project_box

TOL_D = 1e-4   # dual activity: cut removal (their TOL_D)


@dataclass
class DualSeed:
    """A round's multipliers, for the cheap certificate of a child or a probe: ``y`` by the
    rows' keys (:func:`row_keys`), the round's RLT ``cuts`` and the points ``free`` in it (whose
    rows V_ii >= lmd_i and lifted products a child keeps, :meth:`NodeSDP.rows`)."""

    y: dict
    cuts: np.ndarray
    free: np.ndarray
    box: Optional[tuple] = None      # the round's (L, U): the box its RLT rows multiply
    scale: float = 1.0               # a typical multiplier of a sign row (the search's steps)


def row_keys(rows) -> list:
    """A key per row of ``rows`` that names the same row in any other node's rows: (kind, (i,
    j, t), k) with k counting the rows of equal kind and names (the lifted products of one
    point come in a fixed order)."""
    seen: dict = {}
    keys = []
    for kind, ij in zip(rows.kind, rows.ij):
        base = (kind, tuple(int(v) for v in ij))
        k = seen.get(base, 0)
        seen[base] = k + 1
        keys.append((base[0], base[1], k))
    return keys


class ChildBounds:
    """The children's part of :class:`s3vm.bounds.shor.ShorBoundProblem` (a mixin: module
    docstring)."""

    def node_statistics(self) -> dict:
        """From the node log (which the pool's copies send back, unlike counters kept on the
        copy): ``child_seconds_median`` (the nodes other than the root), ``fixed`` (labels the
        boxes fixed, summed over nodes) and ``fixed_max`` (the most at one node)."""
        children = [entry.seconds for entry in self.log if not entry.root]
        fixed = [entry.fixed for entry in self.log]
        return {"child_seconds_median": float(np.median(children)) if children else None,
                "fixed": int(sum(fixed)), "fixed_max": int(max(fixed, default=0))}

    def _fixed(self, partial, L, U) -> int:
        """The free points of ``partial`` whose label the box (L, U) fixes."""
        Lu, Uu = L[self.data.l:], U[self.data.l:]
        return int(np.sum((partial == 0) & ((Lu > 0) | (Uu < 0))))

    def _first_open(self, partial, L, U):
        """The first free point whose box leaves both signs (else the first free point), +1
        first."""
        Lu, Uu = L[self.data.l:], U[self.data.l:]
        open_ = np.flatnonzero((partial == 0) & (Lu < 0) & (Uu > 0))
        return (int(open_[0]), 1) if open_.size else first_free(partial)

    # -- the cheap certificate -----------------------------------------------------------------
    def _cheap(self, seed: DualSeed, L, U, lmd=None, umd=None) -> float:
        """The certificate of ``seed``'s multipliers at the box (L, U) (module docstring,
        "Children"): the rows rebuilt at the box (every row of the seed's round is valid there:
        the RLT products of the box's sides, V_ii >= lmd_i for points whose sign the box fixed),
        each with the seed's multiplier of the same row (0 for a row the round did not have);
        then b'y + T min(0, lambda_min(Z)) or the incumbent-relative bound. inf for an empty
        box."""
        t0 = time.perf_counter()
        d = self.data
        L, U = project_box(L, U)
        if np.any(L > U + BOX_TOL):
            return math.inf
        if lmd is None:
            lmd = np.ones(d.n)
        box = np.maximum(L ** 2, U ** 2)
        umd = box if umd is None else np.minimum(umd, box)
        T = 1.0 + float(np.sum(umd)) + (d.u if self._lifted else 0.0)
        # The RLT rows as the round had them (the products of its box's sides hold on the
        # smaller box; re-instantiated with the new box, the same multipliers lose much more
        # than they gain), and a multiplier searched for the rows that fix a sign the round
        # left free (the branching row x_i >= 1 or -x_i >= 1): a few eigenvalues.
        rows = self.sdp.rows(L, U, lmd, umd, seed.cuts, None, keep_free=seed.free,
                             cut_box=seed.box)
        keys = row_keys(rows)
        y = np.array([seed.y.get(k, 0.0) for k in keys])
        new = np.array([k[0] in ("xL", "xU") and k not in seed.y for k in keys])
        direction = new.astype(float) if new.any() else None
        steps = seed.scale * 2.0 ** np.arange(-2, 3, 2)
        value = self.sdp.certify(rows, y, T, self.UB, direction, steps)
        self.stats["cheap_seconds"] += time.perf_counter() - t0
        return value

    def _seed(self, last) -> DualSeed:
        """The :class:`DualSeed` of a round ``last`` = (X, certificate, rows, L, U)."""
        _, cert, rows, _, _ = last
        keys = row_keys(rows)
        kinds = np.asarray(rows.kind)
        free = np.zeros(self.data.n, dtype=bool)
        for k in np.flatnonzero(np.isin(kinds, ("dL", "yv"))):
            free[rows.ij[k][0]] = True
        cut_rows = np.flatnonzero(kinds == "cut")
        cuts = np.array([rows.ij[k] for k in cut_rows], dtype=np.int64).reshape(-1, 3)
        y = {key: float(v) for key, v in zip(keys, cert.y) if v != 0.0}
        signs = [abs(float(v)) for key, v in zip(keys, cert.y) if key[0] in ("dL", "xL", "xU")
                 and v > TOL_D]
        scale = float(np.median(signs)) if signs else 1.0
        return DualSeed(y, cuts, free, (last[3].copy(), last[4].copy()), scale)

    def _side(self, L, U, i: int, label: int):
        """The box (L, U) with point i on the side ``label``."""
        L, U = L.copy(), U.copy()
        if label > 0:
            L[i] = max(L[i], 1.0)
        else:
            U[i] = min(U[i], -1.0)
        return L, U

    def _probe(self, partial, last, seed, L, U, lmd, umd):
        """Optimality-based probing (module docstring, "Labels fixed"): for the ``probe`` free
        points of largest |x_i|, the cheap certificate of the round's multipliers with the
        point's box on the side opposite to x_i; one that reaches the prune threshold fixes
        the point on its side of x_i (its box) for the node's subtree. Returns (L, U, closed):
        ``closed`` the least bound of a point's two sides when both reach the threshold (the
        node is closed; its bound), else None."""
        d = self.data
        X = last[0]
        x = X[0, 1:d.n + 1]
        Lu, Uu = L[d.l:], U[d.l:]
        open_ = np.flatnonzero((partial == 0) & (Lu < 0) & (Uu > 0))
        if open_.size == 0:
            return L, U, None
        order = open_[np.argsort(-np.abs(x[d.l + open_]), kind="stable")]
        for k in order[:self.options.probe]:
            i = d.l + int(k)
            other = -1 if x[i] >= 0 else 1
            self.stats["probes"] += 1
            value = self._cheap(seed, *self._side(L, U, i, other), lmd, umd)
            if value >= self._prune_at():
                kept = self._side(L, U, i, -other)
                if np.any(kept[0] > kept[1] + BOX_TOL):
                    return L, U, value
                L, U = kept
                self.stats["probe_fixed"] += 1
        return L, U, None

    def _strong_branch(self, partial, last, seed, L, U, lmd, umd, vbest):
        """``branching = "strong"``: of the ``strong_candidates`` first points of rule 2, the
        one whose worse child has the largest cheap bound; its first child is the one of the
        lower cheap bound. Returns ((position, first label), that worse bound)."""
        d = self.data
        ranked = branch_candidates(d, "rank", partial, last, L, U, vbest,
                                   self.options.strong_candidates)
        best, choice = -math.inf, None
        for pos, first in ranked:
            i = d.l + pos
            plus = self._cheap(seed, *self._side(L, U, i, 1), lmd, umd)
            minus = self._cheap(seed, *self._side(L, U, i, -1), lmd, umd)
            self.stats["strong_evaluations"] += 2
            worse = min(plus, minus)
            if choice is None or worse > best:
                label = first if plus == minus else (1 if plus < minus else -1)
                best, choice = worse, (pos, label)
        if choice is None:
            return self._first_open(partial, L, U), -math.inf
        return choice, best

