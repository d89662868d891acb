"""Labels certified point by point: which labels of a search's answer every equally good labeling
shares.

The search's nodes partition the labelings it searches (those that meet the balance count and
the links): every such labeling lies in exactly one *terminal* node, a node that was never
branched on, or was being branched on when the search stopped. A terminal node is one of

- cut by the count or the links: it holds no labeling of the space (nothing is recorded);
- proven infeasible (bound ``inf``; a leaf of objective inf or NaN, as the driver treats it):
  recorded as ``inf``, i.e. nothing;
- pruned on its own bound, or on its parent's when created (the sibling improved the incumbent,
  or the K-th best of a pool): its bound;
- an evaluated leaf: its objective;
- when the search stops (a limit, Ctrl-C, a stopped clock): open, with its bound; being expanded
  (its children not all stored), with its bound; the root not yet bounded: ``-inf``.

:class:`LabelRecords` keeps, for each position i, ``best_if_plus[i]``: the least value recorded
for a terminal node whose partial labeling allows +1 at i (0 or +1 there), and
``best_if_minus[i]`` likewise for -1; each record costs O(u). For the answer y* of objective J*,
``label_bounds[i] = best_if_{-y*_i}[i]`` and the label at i is *certified* when it exceeds J* by
more than a relative 1e-9 (:data:`CERTIFY_TOL`).

Why it is sound. Take a labeling y of the space with y_i = -y*_i; it lies in some terminal node
N, whose partial labeling allows -y*_i at i, so ``label_bounds[i] <= v(N)``, the value recorded
for N. A leaf's value is J(y). A bound B computed at a node holds for the node's labelings of
objective at most the threshold T of the moment (a bound that reads the incumbent, such as
bb-sdp's box drawn from it: its labelings of J <= T are >= B, those above T may lie anywhere;
plain bounds hold for every labeling, T = inf). T only ever decreases (the incumbent, or the K-th
best of a pool) and never falls below the final objective, so T >= J*. If J(y) <= J* then
J(y) <= T and J(y) >= B >= label_bounds[i] > J*, a contradiction: hence J(y) > J*, and every
labeling with J <= J* gives i the label y*_i. A gap tolerance only prunes nodes whose bounds may
lie below J*: their points stay open, never wrongly certified.

Probing (``probe`` and ``certify`` of :func:`s3vm.solvers.bnb.driver.search`). A root probe
that fixes a label prunes the root's child with the opposite label (and the labels fixed before
it): a terminal node like any other, recorded with its bound; the root then holds only the
labelings that keep the fixes, so the probes' children and the tree below the fixed root still
partition the space. A certification probe after the search bounds the (fixed) root's child
with -y*_i at i, i.e. exactly the labelings below the root with that label, under the same
threshold T >= J*: a lower bound on them as valid as the least of the tree's terminal nodes there,
so the driver keeps per position ``min(outside, max(inside, probe))``, ``outside`` the root
probes' records and ``inside`` the tree's (:meth:`LabelRecords.record` of each, the same
argument for each part).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

__all__ = ["CERTIFY_TOL", "LabelRecords", "certify"]

#: Relative margin by which a label's bound must exceed the objective to certify it.
CERTIFY_TOL = 1e-9


class LabelRecords:
    """The least value of a terminal node allowing each label at each position (module
    docstring).

    Attributes
    ----------
    best_if_plus, best_if_minus : ndarray of float, shape (u,)
        ``inf`` until a terminal node allowing that label there is recorded.
    """

    def __init__(self, u: int):
        self.best_if_plus = np.full(int(u), math.inf)
        self.best_if_minus = np.full(int(u), math.inf)

    def record(self, partial: np.ndarray, value: float) -> None:
        """A terminal node of partial labeling ``partial`` (+1/-1 fixed, 0 free) whose
        labelings are bounded below by ``value`` (their objective, for a leaf); NaN counts as
        ``-inf`` (nothing proven), ``inf`` records nothing."""
        value = float(value)
        if math.isnan(value):
            value = -math.inf
        if value == math.inf:
            return
        plus = partial >= 0
        minus = partial <= 0
        np.minimum(self.best_if_plus, value, out=self.best_if_plus, where=plus)
        np.minimum(self.best_if_minus, value, out=self.best_if_minus, where=minus)

    def nothing_proven(self) -> None:
        """Every label open: the search stopped before its root was bounded."""
        self.best_if_plus[:] = -math.inf
        self.best_if_minus[:] = -math.inf

    def certify(self, labels: np.ndarray,
                objective: float) -> tuple[np.ndarray, np.ndarray]:
        """(certified, label_bounds) of the answer ``labels`` of objective ``objective``."""
        return certify(self.best_if_plus, self.best_if_minus, labels, objective)


def certify(best_if_plus: np.ndarray, best_if_minus: np.ndarray, labels: np.ndarray,
            objective: float) -> tuple[np.ndarray, np.ndarray]:
    """(certified, label_bounds): per position, whether the least value allowing the label
    opposite to ``labels`` there exceeds ``objective`` by more than :data:`CERTIFY_TOL`
    (relative to max(1, |objective|)), and that least value."""
    labels = np.asarray(labels)
    bounds = np.where(labels == 1, best_if_minus, best_if_plus).astype(float)
    margin = CERTIFY_TOL * max(1.0, abs(float(objective)))
    return bounds > float(objective) + margin, bounds


def keep_certified(certified: Optional[np.ndarray], old_labels,
                   new_labels) -> Optional[np.ndarray]:
    """The certified labels of ``new_labels``, an answer that replaced ``old_labels`` with an
    objective no higher: a label certified for the old answer stays certified where the new one
    agrees (its bound exceeds the old objective, hence the new), the others are open."""
    if certified is None or old_labels is None or new_labels is None:
        return None
    old, new = np.asarray(old_labels), np.asarray(new_labels)
    if old.shape != new.shape or np.asarray(certified).shape != new.shape:
        return None
    return np.asarray(certified, dtype=bool) & (old == new)
