"""Branching and dual box tightening of ``bb-sdp``'s node loop (:mod:`s3vm.bounds.shor`), from
a round's solution and certificate (Piccialli, Schwiddessen and Sudoso 2024).

Branching: their rule 2 ranks the free points on the margin of the rounded solution whose
V_ii >= 1 row is active by ten criteria and takes the smallest sum of ranks; else (or with
``branching = "fractional"``, their rule 0) the most fractional free point; the child on the side
of the relaxed output first.

Tightening: reduced-cost fixing with the round's certificate; an active row with multiplier d
bounds its slack by (UB - bound) / d for every labeling better than UB.
"""

from __future__ import annotations

import math

import numpy as np

from s3vm.models.output_space import BOX_TOL, OutputSpaceData, labels_count
from s3vm.models.shor_relaxation import RowList

TOL_P = 1e-5   # primal activity of a row (their TOL_P)
TOL_D = 1e-4   # dual activity of a row (their TOL_D)


def dual_tightening(rows: RowList, y, X, L, U, lmd, umd, diff):
    """Their dual box tightening, with a round's certificate (diff = UB - bound): an active
    row with multiplier d bounds its slack by diff / d for every labeling better than UB;
    returns the new (L, U, lmd, umd)."""
    if not (diff > 0 and math.isfinite(diff)):
        return L, U, lmd, umd
    L, U, lmd, umd = L.copy(), U.copy(), lmd.copy(), umd.copy()
    kinds = np.asarray(rows.kind)
    for k in np.flatnonzero(np.isin(kinds, ("xL", "xU", "dL", "dU"))):
        dk = y[k]
        if dk <= TOL_D:
            continue
        i = rows.ij[k][0]
        p = i + 1
        kind = kinds[k]
        if kind == "xL" and X[0, p] <= L[i] + TOL_P:
            U[i] = min(U[i], L[i] + diff / dk + BOX_TOL)
        elif kind == "xU" and X[0, p] >= U[i] - TOL_P:
            L[i] = max(L[i], U[i] - diff / dk - BOX_TOL)
        elif kind == "dL" and X[p, p] <= lmd[i] + TOL_P:
            umd[i] = min(umd[i], lmd[i] + diff / dk + BOX_TOL)
            s = math.sqrt(lmd[i] + diff / dk)
            L[i] = max(L[i], -s - BOX_TOL)
            U[i] = min(U[i], s + BOX_TOL)
        elif kind == "dU" and X[p, p] >= umd[i] - TOL_P:
            lmd[i] = max(lmd[i], umd[i] - diff / dk - BOX_TOL)
            if umd[i] - diff / dk >= 1.0:
                if L[i] > -math.sqrt(umd[i] - diff / dk + BOX_TOL):
                    L[i] = max(L[i], 1.0)
                if U[i] < math.sqrt(umd[i] - diff / dk - BOX_TOL):
                    U[i] = min(U[i], -1.0)
    return L, U, lmd, umd



def first_free(partial):
    """The first free point, label +1 first (None when every point is labeled)."""
    free = np.flatnonzero(partial == 0)
    return (int(free[0]), 1) if free.size else None

def branch_point(data: OutputSpaceData, rule: str, partial, last, L, U, vbest):
    """Their rule 2 (module docstring; ``rule`` "rank") over the free unlabeled points, or the
    most fractional ("fractional"); ``last`` is the node's last round (X, certificate, rows,
    L, U). Only points whose box (L, U) leaves both signs are candidates: a point whose label
    the box fixes is never branched on. Returns (position in U, first label)."""
    return branch_candidates(data, rule, partial, last, L, U, vbest, 1)[0]


def branch_candidates(data: OutputSpaceData, rule: str, partial, last, L, U, vbest,
                      top: int) -> list:
    """The ``top`` first points of :func:`branch_point`'s rule, best first, as (position in
    U, first label) (at least one)."""
    d = data
    X, cert, rows, _, _ = last
    n = d.n
    x = X[0, 1:n + 1]
    V = X[1:n + 1, 1:n + 1]
    free_u = np.flatnonzero((partial == 0) & (L[d.l:] < 0) & (U[d.l:] > 0))
    if free_u.size == 0:
        return [first_free(partial)]
    free = d.l + free_u
    kinds = np.asarray(rows.kind)
    dual_lm = np.zeros(n)
    rlt_sum = np.zeros(n)
    for k in np.flatnonzero(kinds == "dL"):
        dual_lm[rows.ij[k][0]] = cert.y[k]
    for k in np.flatnonzero(kinds == "cut"):
        i, j, _ = rows.ij[k]
        rlt_sum[i] += abs(cert.y[k])
        rlt_sum[j] += abs(cert.y[k])

    def pick(i):
        return int(i - d.l), (1 if x[i] >= 0 else -1)

    if rule == "fractional":
        return [pick(i) for i in free[np.argsort(np.abs(x[free]), kind="stable")[:top]]]
    if d.positives is not None:
        _, best = d.qp(d.full(labels_count(x[d.l:], d.positives)))
    else:
        _, best = d.qp(d.full(np.where(x[d.l:] >= 0, 1.0, -1.0)))
    cand = np.array([i for i in free if abs(dual_lm[i]) > TOL_D and best is not None
                     and abs(abs(best[i]) - 1.0) < 1e-4], dtype=int)
    if cand.size == 0:
        with_dual = free[dual_lm[free] > 1e-5]
        pool = with_dual if with_dual.size else free
        return [pick(i) for i in pool[np.argsort(np.abs(x[pool]), kind="stable")[:top]]]
    vb = vbest if vbest is not None else np.zeros(n)
    Cm, Z = d.Cm, cert.Z
    E = np.outer(x, x) - V
    crit = [
        (np.abs(x[cand]), False),
        (np.abs(x[cand] - vb[cand]), True),
        (rlt_sum[cand], True),
        (np.abs(Z[cand + 1, :]).sum(axis=1), True),
        (np.abs(Cm[cand]).sum(axis=1), True),
        (np.abs((Cm[cand] * E[cand]).sum(axis=1)), True),
        (np.abs(E[cand].sum(axis=1)), True),
        (np.abs(Cm[cand] * E[cand]).sum(axis=1), True),
        (np.abs(E[cand]).sum(axis=1), True),
        (np.abs((Cm[cand] * (np.outer(vb, vb)[cand] - V[cand])).sum(axis=1)), True),
    ]
    score = np.zeros(cand.size)
    for vals, desc in crit:
        order = np.argsort(-vals if desc else vals, kind="stable")
        pos = np.empty(cand.size)
        pos[order] = np.arange(1, cand.size + 1)
        score += pos
    return [pick(i) for i in cand[np.argsort(score, kind="stable")[:top]]]



__all__ = ["dual_tightening", "branch_point", "branch_candidates", "first_free", "TOL_D", "TOL_P"]
