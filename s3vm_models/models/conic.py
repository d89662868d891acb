"""The pieces every SDP of Problem 2 shares (docs/formulations.md#problem-2): the built conic
model a backend solves (:class:`ConicModel`), the per-point penalties, the count balance in the
free labels, the SVM LMI of the reduced SDP (De Bie and Cristianini 2006, Proposition 7.3), and
the rounding of relaxed scores into labels that meet the groups and the count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.solvers.errors import InputError


@dataclass
class ConicModel:
    """A built conic model: the solver-facing object and the handles to read a solution from.

    ``model`` is a ``cvxpy.Problem`` or a MOSEK Fusion ``Model``; ``read`` maps a handle name to
    a function returning its value after the solve; ``parameters`` names the model's
    ``cvxpy.Parameter`` objects a setting may change without a rebuild (``"C"``: the per-point
    bounds of the SVM's dual variables).
    """

    model: Any
    read: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)


def problem2_penalties(instance: Instance, settings: Settings) -> Optional[np.ndarray]:
    """Per-point upper bounds C_i of Problem 2 (C on labeled, C* on unlabeled), None for hard
    margin."""
    if settings.hard_margin:
        return None
    C = np.full(instance.n, float(settings.C))
    C[instance.unlabeled] = settings.C_unlabeled
    if np.any(C <= 0):
        raise InputError("C and C* must be > 0 for the soft margin (or use --hard-margin)")
    return C


def balance_coefficients(instance: Instance) -> tuple[np.ndarray, float]:
    """(c, rhs) with the count balance c'g = rhs in the free representatives' labels g.

    sum_(j in U) y_j = sum_(j in U, r_j = 0) s_j + sum_(j in U, r_j > 0) s_j g_(r_j - 1); the
    first sum is fixed, so rhs = 2P - u less it.
    """
    lm = instance.label_map()
    unl = instance.unlabeled
    rep, sgn = lm.rep[unl], lm.sign[unl]
    c = np.zeros(lm.size)
    np.add.at(c, rep, sgn)
    return c[1:], float(-c[0])


def svm_lmi(K: np.ndarray, Gamma, C: Optional[np.ndarray]):
    """(t, constraint): the SVM part of every SDP of Problem 2 in CVXPY, for a label matrix
    expression Gamma,

        [[K o Gamma, 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD,   mu, nu >= 0

    (hard margin, C None: no mu). Minimising t over it gives max_a 2 1'a - a'(K o Gamma)a.
    """
    import cvxpy as cp

    n = K.shape[0]
    t = cp.Variable(name="t")
    nu = cp.Variable(n, nonneg=True, name="nu")
    if C is None:
        v, corner = 1 + nu, t
    else:
        mu = cp.Variable(n, nonneg=True, name="mu")
        v, corner = 1 - mu + nu, t - 2 * (C @ mu)
    v = cp.reshape(v, (n, 1), order="F")
    lmi = cp.bmat([[cp.multiply(K, Gamma), v], [v.T, cp.reshape(corner, (1, 1), order="F")]])
    return t, lmi >> 0


def round_scores(scores: np.ndarray, instance: Instance,
                 settings: Settings) -> tuple[np.ndarray, np.ndarray]:
    """(labels, scores): labels of the unlabeled points from relaxed scores, meeting the groups.

    Every free representative of :meth:`Instance.label_map` gets the sign of its score (the mean
    of sign_j x score_j over its rows, which are equal for a label matrix L Gamma_c L'), and its
    rows get sign_j times that; rows tied to the labeled class keep their fixed labels. With the
    count balance the representatives are taken in decreasing score and set to +1 while that
    brings the number of positives closer to P: without groups, exactly the P highest scores
    are +1; with groups P may be out of reach (groups move several labels at once) and the
    nearest count is kept.

    Parameters
    ----------
    scores : ndarray (u,)
        One score per unlabeled row, in row order; larger means +1.
    """
    scores = np.asarray(scores, dtype=float)
    unl = instance.unlabeled
    lm = instance.label_map()
    rep, sgn = lm.rep[unl], lm.sign[unl]
    free = rep > 0
    m = lm.size
    total = np.zeros(m)
    count = np.zeros(m)
    np.add.at(total, rep[free], sgn[free] * scores[free])
    np.add.at(count, rep[free], 1.0)
    rep_score = total[1:] / np.maximum(count[1:], 1.0)
    z = np.ones(m)
    if settings.balance == "count":
        P = settings.positive_count(instance)
        # The positives each free representative brings as +1 (its + rows) or as -1 (its - rows).
        plus = np.zeros(m)
        np.add.at(plus, rep[free], (sgn[free] > 0).astype(float))
        minus = count - plus
        z[1:] = -1.0
        positives = int(np.sum(sgn[~free] > 0) + minus[1:].sum())
        order = 1 + np.argsort(-rep_score, kind="stable")
        step = (plus - minus).astype(int)
        if np.all(step[1:] == 1):
            z[order[:max(P - positives, 0)]] = 1.0
        else:
            for k in order:
                if abs(positives + step[k] - P) < abs(positives - P):
                    z[k] = 1.0
                    positives += step[k]
    else:
        z[1:] = np.where(rep_score >= 0, 1.0, -1.0)
    return (sgn * z[rep]).astype(int), scores
