"""Starting incumbents for S3VM-L2: label switching (Joachims' transductive SVM, for squared hinge).

Train on the labeled points, label the unlabeled points by their outputs (the P largest +1 under
a balance count, else by sign), then alternate: retrain with the current labels, and switch
labels while that lowers the objective at the current classifier. The weight of the unlabeled
points grows from a small fraction of C* up to C* (annealing), so that early labelings follow the
labeled points and the data's low-density regions rather than the first guess.

With w fixed, the loss of an unlabeled point labeled y at output t is max(0, 1 - y t)^2. Moving a
point from +1 to -1 changes it by h(t) = max(0, 1 + t)^2 - max(0, 1 - t)^2 = 4t (for |t| <= 1,
and increasing everywhere), so

- without a count a point whose label disagrees with the sign of its output switches alone;
- under a count a positive at output t_p and a negative at t_n swap together when t_p < t_n
  (the loss falls by h(t_n) - h(t_p) > 0). Disjoint pairs are independent, so all pairs of the
  sorted matching swap at once.

Each switch lowers the objective at fixed w and retraining lowers it further, so each stage ends.

With groups (``links``, :class:`s3vm.solvers.bnb.links.Links`) a switch moves whole groups: at the
current outputs the labeling of least unlabeled loss that keeps the groups and the count
(:meth:`~s3vm.solvers.bnb.links.Links.best`, exact) replaces the current one when it lowers the
loss, so every labeling visited keeps them and the same descent argument ends each stage.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from s3vm.models.l2_svm import S3VMObjective
from s3vm.solvers.bnb.links import round_scores

#: Fractions of C* of the annealing stages (the last is C* itself).
ANNEAL = tuple(2.0 ** -k for k in range(10, -1, -1))
SWITCH_TOL = 1e-12  # outputs this close are not worth a switch (rounding could make it cycle)


def switch(labels: np.ndarray, f: np.ndarray, positives: Optional[int], links=None) -> int:
    """Switch labels in place where the loss at outputs ``f`` falls; return how many switched
    (with ``links``, whole groups: module docstring)."""
    if links is not None:
        plus, minus = np.maximum(0.0, 1.0 - f) ** 2, np.maximum(0.0, 1.0 + f) ** 2
        best = links.best(plus, minus, positives)
        if best is None:
            return 0
        now = float(np.where(labels > 0, plus, minus).sum())
        new = float(np.where(best > 0, plus, minus).sum())
        if new >= now - SWITCH_TOL * max(1.0, now):
            return 0
        changed = int(np.sum(best != labels))
        labels[:] = best
        return changed
    if positives is None:
        wrong = np.flatnonzero(labels * f < -SWITCH_TOL)
        labels[wrong] *= -1
        return wrong.size
    pos = np.flatnonzero(labels == 1)
    neg = np.flatnonzero(labels == -1)
    pos = pos[np.argsort(f[pos], kind="stable")]  # least positive output first
    neg = neg[np.argsort(-f[neg], kind="stable")]  # most positive output first
    k = min(pos.size, neg.size)
    gain = f[neg[:k]] - f[pos[:k]] > SWITCH_TOL
    # Sorted this way the gains decrease along the matching: the first failure ends it.
    m = k if gain.all() else int(np.argmin(gain))
    labels[pos[:m]], labels[neg[:m]] = -1, 1
    return m


def label_switching(objective: S3VMObjective, positives: Optional[int], anneal=ANNEAL,
                    max_rounds: Optional[int] = None,
                    stop: Optional[Callable[[], bool]] = None,
                    on_stage: Optional[Callable[[int, np.ndarray], None]] = None,
                    balanced_start: bool = True, with_solution: bool = False,
                    links=None) -> tuple:
    """A local minimum of J by annealed label switching.

    Without a count (``positives`` None) two searches run and the lower J wins: the search
    without a count, and one under the labeled rows' class ratio continued without it. The
    first can drift into a labeling with almost every unlabeled point in one class at large n
    (two moons, 2,000 points, 5 labels a class: 24% error at J = 116 where the second reaches
    0% at J = 46); the second never returns a higher J than the first, as the minimum is kept.

    Parameters
    ----------
    objective : S3VMObjective or FactorObjective
        Anything with ``unlabeled``, ``C``, ``full_labels`` and ``train(y, C, warm)``.
    positives : int, optional
        The balance count; the labelings returned meet it.
    anneal : sequence of float
        Fractions of C* of the successive stages.
    max_rounds : int, optional
        Cap on retrainings per stage (default u + 1; each round lowers the objective, so the
        cap only guards against rounding).
    stop : callable, optional
        Asked before each retraining; True ends the search early with the labels so far (a
        time limit).
    on_stage : callable, optional
        ``on_stage(k, labels)`` before annealing stage k (0-based), with the labels so far (a
        copy), for progress reports.
    balanced_start : bool
        Without a count, also run the search under the labeled ratio (above).
    with_solution : bool
        Also return the objective's solution at the labels returned, which the search
        computed for their value (a caller needs no second solve, cold, after a time limit).
    links : s3vm.solvers.bnb.links.Links, optional
        Groups of unlabeled points: every labeling visited keeps them (module docstring). A
        start that no labeling with the count can take is skipped; with none left the labels
        are None and the value inf.

    Returns
    -------
    labels : ndarray of int, shape (u,)
    value : float
        J(labels) with the true C*.
    finished : bool
        False when ``stop`` ended the search.
    solution : object
        With ``with_solution``: ``objective.evaluate`` at ``labels``.
    """
    def answer(labels, value, finished, solution):
        return (labels, value, finished, solution) if with_solution else \
            (labels, value, finished)

    labels, value, finished, sol = _anneal(objective, positives, None, anneal, max_rounds,
                                           stop, on_stage, links)
    if positives is not None or not balanced_start or not finished:
        return answer(labels, value, finished, sol)
    count = labeled_ratio_count(objective)
    if count is None:
        return answer(labels, value, finished, sol)
    start, _, finished, _ = _anneal(objective, count, None, anneal, max_rounds, stop,
                                    on_stage, links)
    if start is None:  # the groups leave no labeling with the labeled ratio
        return answer(labels, value, finished, sol)
    if not finished:  # the time limit: the first search's local minimum, stopped
        return answer(labels, value, False, sol)
    # Released from the count at C*: switching alone, from the balanced local minimum.
    other, other_value, finished, other_sol = _anneal(objective, None, start, (1.0,),
                                                      max_rounds, stop, None, links)
    if other_value < value:
        return answer(other, other_value, finished, other_sol)
    return answer(labels, value, finished, sol)


def polish(objective, positives: Optional[int], labels: np.ndarray,
           stop: Optional[Callable[[], bool]] = None, links=None) -> tuple:
    """Label switching at the full C* from ``labels`` (another search's labeling, a start).

    Returns (labels, value, finished, solution) as :func:`label_switching` with
    ``with_solution``: a local minimum of J at least as low as J(labels) under the count
    ``positives`` (None: without a count) and the groups' ``links``."""
    return _anneal(objective, positives, np.asarray(labels), (1.0,), None, stop, None, links)


def labeled_ratio_count(objective) -> Optional[int]:
    """The number of unlabeled points in class +1 at the labeled rows' class ratio (None when
    it would put every unlabeled point in one class)."""
    y_l = objective.y[objective.labeled]
    count = int(round(objective.unlabeled.size * np.mean(y_l > 0))) if y_l.size else 0
    return count if 0 < count < objective.unlabeled.size else None


def _anneal(objective, positives, labels, anneal, max_rounds, stop, on_stage, links=None):
    """One annealed search from ``labels`` (default: the labeled rows' SVM's labeling); labels
    None and value inf when the groups leave no labeling with the count."""
    U = objective.unlabeled
    C_star = objective.C[U]
    C = objective.C.copy()
    sol = None
    if labels is None:
        C[U] = 0.0
        sol = objective.train(objective.full_labels(np.ones(U.size)), C)
        labels = round_scores(sol.outputs[U], positives, links)
        if labels is None:
            return None, np.inf, True, None
    else:
        labels = labels.copy()
    rounds = U.size + 1 if max_rounds is None else max_rounds
    finished = True
    for stage, fraction in enumerate(anneal):
        if on_stage is not None:
            on_stage(stage, labels.astype(int))
        C[U] = fraction * C_star
        for _ in range(rounds):
            if stop is not None and stop():
                finished = False
                break
            sol = objective.train(objective.full_labels(labels), C, sol)
            if not switch(labels, sol.outputs[U], positives, links):
                break
        if not finished:
            break
    # The objective's own value (J_mean under the mean balance), not the plain SVM trained above.
    final = objective.evaluate(labels, sol)
    return labels.astype(int), final.value, finished, final


class LabelSwitching:
    """The ``switching`` heuristic as a callable ``(objective, positives) -> (labels, value)``
    (labels None when the groups' ``links`` leave no labeling with the count). ``stop`` (a
    callable, None: never) ends it early with the labels so far, a labeling still (the solve's
    time limit or a signal)."""

    name = "switching"

    def __init__(self, links=None, stop: Optional[Callable[[], bool]] = None):
        self.links = links
        self.stop = stop

    def __call__(self, objective: S3VMObjective, positives: Optional[int]):
        labels, value, _ = label_switching(objective, positives, stop=self.stop,
                                           links=self.links)
        return labels, value
