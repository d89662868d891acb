"""Positions of a labeling that move together: equivalence and inequivalence constraints.

A :class:`Links` says, for each position j of a labeling in {-1, +1}^u, either that its label is
fixed (``rep[j] = -1``, the label ``sign[j]``) or that it is ``sign[j] * z[rep[j]]`` for the
free label z of its class ``rep[j]``. Two positions of one class with the same sign share a label
(must-link); with opposite signs their labels differ (cannot-link). The branch-and-bound driver
fixes a whole class when it branches on one of its positions, refuses labelings that break the
links, and completes a node only where the links allow it; heuristics round scores to labelings
that keep them (:meth:`Links.best`).

Nothing here knows what a position means: the model layer turns its data's groups into a
:class:`Links` (``Instance.unlabeled_links``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.solvers.bnb.problem import labels_by_outputs

__all__ = ["Links", "round_scores"]


class Links:
    """Classes of positions whose labels are tied (module docstring).

    Parameters
    ----------
    rep : array_like of int, shape (u,)
        The class of each position (0, 1, ...), or -1 where its label is fixed.
    sign : array_like of +1/-1, shape (u,)
        The position's sign in its class (for a fixed position: its label).

    Attributes
    ----------
    u : int
    classes : list of ndarray
        The positions of each class.
    """

    def __init__(self, rep, sign):
        self.rep = np.asarray(rep, dtype=np.int64).ravel()
        self.sign = np.where(np.asarray(sign).ravel() < 0, -1, 1).astype(np.int64)
        if self.rep.shape != self.sign.shape:
            raise ValueError("rep and sign must have one entry per position")
        self.u = self.rep.size
        k = int(self.rep.max()) + 1 if self.u and self.rep.max() >= 0 else 0
        order = np.argsort(self.rep, kind="stable")
        bounds = np.searchsorted(self.rep[order], np.arange(-1, k + 1))
        self.fixed = order[bounds[0]:bounds[1]]
        self.classes = [order[bounds[c + 1]:bounds[c + 2]] for c in range(k)]

    def __repr__(self) -> str:
        tied = sum(1 for c in self.classes if c.size > 1)
        return f"Links(u={self.u}, fixed={self.fixed.size}, classes of two or more={tied})"

    def to_dict(self) -> dict:
        """JSON-ready: ``rep`` and ``sign`` as lists."""
        return {"rep": self.rep.tolist(), "sign": self.sign.tolist()}

    # -- partial labelings --------------------------------------------------------------------
    def fixed_partial(self) -> np.ndarray:
        """The partial labeling (+1/-1 fixed, 0 free) with only the fixed positions set."""
        partial = np.zeros(self.u, dtype=int)
        partial[self.fixed] = self.sign[self.fixed]
        return partial

    def fix(self, partial: np.ndarray, index: int, label: int) -> None:
        """Fix position ``index`` to ``label`` in ``partial`` (in place), with its whole class."""
        c = self.rep[index]
        if c < 0:
            partial[index] = label
            return
        members = self.classes[c]
        partial[members] = label * self.sign[index] * self.sign[members]

    def consistent(self, labels: np.ndarray) -> bool:
        """Whether the full or partial labeling ``labels`` keeps the links: fixed positions at
        their label, and in each class the set labels times their signs all equal."""
        labels = np.asarray(labels)
        if np.any((labels[self.fixed] != 0) & (labels[self.fixed] != self.sign[self.fixed])):
            return False
        free = self.rep >= 0
        z = (labels * self.sign)[free]
        rep = self.rep[free]
        set_ = z != 0
        if not set_.any():
            return True
        k = len(self.classes)
        high = np.full(k, -2)
        low = np.full(k, 2)
        np.maximum.at(high, rep[set_], z[set_])
        np.minimum.at(low, rep[set_], z[set_])
        return not np.any((high == 1) & (low == -1))

    # -- rounding -----------------------------------------------------------------------------
    def best(self, cost_plus: np.ndarray, cost_minus: np.ndarray,
             positives: Optional[int] = None) -> Optional[np.ndarray]:
        """The labeling that keeps the links (and has exactly ``positives`` +1 when given) of
        least total cost, position j costing ``cost_plus[j]`` labeled +1 and ``cost_minus[j]``
        labeled -1; None when no labeling keeps them.

        Without a count each class takes its cheaper side. With one it is a knapsack over the
        classes of two or more positions (dynamic programming on the count: each class adds the
        positives of one of its sides), the single positions taken in the order of their
        difference in cost, and the two joined at the best split of the count: O(u k) for k
        tied classes.
        """
        cost_plus = np.asarray(cost_plus, dtype=float)
        cost_minus = np.asarray(cost_minus, dtype=float)
        labels = np.zeros(self.u, dtype=int)
        labels[self.fixed] = self.sign[self.fixed]
        # z = +1: position j gets sign_j
        plus = np.where(self.sign > 0, cost_plus, cost_minus)
        minus = np.where(self.sign > 0, cost_minus, cost_plus)
        if positives is None:
            for members in self.classes:
                z = 1 if plus[members].sum() <= minus[members].sum() else -1
                labels[members] = z * self.sign[members]
            return labels
        need = int(positives) - int(np.sum(labels == 1))
        free = self.u - self.fixed.size
        if need < 0 or need > free:
            return None
        tied = [m for m in self.classes if m.size > 1]
        single = np.array([m[0] for m in self.classes if m.size == 1], dtype=np.int64)
        # the tied classes: least cost of each count of positives, and the side chosen
        dp = np.full(need + 1, np.inf)
        dp[0] = 0.0
        choices = []
        for members in tied:
            a = int(np.sum(self.sign[members] > 0))      # positives with z = +1
            b = members.size - a                          # positives with z = -1
            ca, cb = float(plus[members].sum()), float(minus[members].sum())
            take_a = _shifted(dp, a) + ca
            take_b = _shifted(dp, b) + cb
            choices.append(take_a <= take_b)
            dp = np.minimum(take_a, take_b)
        # the single positions: s of them +1, the s cheapest to move from -1 to +1
        delta = cost_plus[single] - cost_minus[single]
        order = np.argsort(delta, kind="stable")
        singles = float(cost_minus[single].sum()) + np.r_[0.0, np.cumsum(delta[order])]
        s = np.arange(need + 1)
        reach = need - s                                  # positives the tied classes give
        total = np.where(s <= single.size, singles[np.minimum(s, single.size)], np.inf) \
            + dp[reach]
        if not np.isfinite(total).any():
            return None
        s_best = int(np.argmin(total))
        labels[single] = -1
        labels[single[order[:s_best]]] = 1
        count = need - s_best
        for members, chose_a in zip(reversed(tied), reversed(choices)):
            a = int(np.sum(self.sign[members] > 0))
            z = 1 if chose_a[count] else -1
            labels[members] = z * self.sign[members]
            count -= a if z == 1 else members.size - a
        return labels


def _shifted(values: np.ndarray, by: int) -> np.ndarray:
    """``values`` moved ``by`` places up (entry t is values[t - by]), inf where none."""
    out = np.full(values.size, np.inf)
    if by < values.size:
        out[by:] = values[:values.size - by]
    return out


def round_scores(scores: np.ndarray, positives: Optional[int],
                 links: Optional[Links]) -> Optional[np.ndarray]:
    """Labels from real scores (larger meaning +1): the labeling of largest sum of
    label x score that keeps ``links`` and the count (:meth:`Links.best`); without links the
    ``positives`` largest scores +1, else the signs (0 -> +1). None when the links leave no
    labeling with the count."""
    scores = np.asarray(scores, dtype=float)
    if links is None:
        return labels_by_outputs(scores, positives)
    return links.best(-scores, scores, positives)
