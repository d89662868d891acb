"""bb-mip's certificate: each node's LP relaxation with its dual vector (docs/models.md, "A
certificate anyone can check"; the checker is :mod:`s3vm.models.certificate_check`).

The search's node LPs run in a persistent solver session on the Pyomo model. For the
certificate each node's LP is written again from the math by the checker's own
:class:`~s3vm.models.certificate_check.Problem3LP` (the same big-M values, the node's fixed
labels, and the boxes on the variables that every optimum of a labeling of value at most the
incumbent's meets) and solved once more, by scipy's HiGHS, for its duals; the checker recomputes
the Lagrangian bound from them. That LP is the search's with more bounds, so its optimum is at
least the search's node bound, and any dual vector gives a valid bound, however it was found.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from s3vm.bounds.shor_proof import as_floats
from s3vm.models.certificate_check import FORMAT, VERSION, Problem3LP


def node_duals(lp: Problem3LP, partial: np.ndarray, V: float):
    """(duals, bound) of the node ``partial``'s LP (None when it does not solve)."""
    c, R, lb, ub, lo, hi = lp.lp(partial, V)
    eq = lb == ub
    A_ub, A_eq = R[~eq], R[eq]
    solved = linprog(c, A_ub=-A_ub, b_ub=-lb[~eq], A_eq=A_eq if eq.any() else None,
                     b_eq=lb[eq] if eq.any() else None, bounds=np.c_[lo, hi], method="highs")
    if solved.status != 0:
        return None
    duals = np.zeros(R.shape[0])
    duals[~eq] = -solved.ineqlin.marginals
    if eq.any():
        duals[eq] = solved.eqlin.marginals
    return duals, lp.dual_bound(partial, V, duals)


def lp_certificate_document(instance, settings, problem, found, abs_gap: float,
                            rel_gap: float) -> dict:
    """The certificate of bb-mip's search ``found`` on ``problem`` (an
    :class:`s3vm.bounds.lp_relaxation.LPRelaxationProblem`), JSON-ready."""
    model = problem.model
    data = {
        "X": [as_floats(row) for row in np.asarray(instance.X, dtype=float)],
        "label": [int(v) for v in instance.label],
        "group": None if instance.group is None else [int(g) for g in instance.group],
        "kernel": settings.kernel, "sigma": float(settings.sigma),
        "mu": float(settings.mu), "nu": float(settings.nu), "balance": settings.balance,
        "positives": (settings.positive_count(instance) if settings.balance == "count"
                      else None),
        "M": [float(model.big_m[j].value) for j in range(problem.u)],
    }
    incumbent = None
    nodes = found.proof
    if found.labels is not None:
        V = float(found.objective)
        primal = problem.primal(found.labels)
        incumbent = {"labels": [int(v) for v in found.labels], "value": V,
                     "w": as_floats(primal["w"]), "g": float(-primal["b"])}
        lp = Problem3LP(data)
        for node in nodes:
            if node.get("bound") is None and not node.get("bound_inf"):
                continue   # never bounded: its parent's bound stands for it
            solved = node_duals(lp, np.asarray(node["partial"]), V)
            if solved is not None:
                node["proof"] = {"kind": "lp", "duals": as_floats(solved[0]),
                                 "value": solved[1]}
    return {"format": FORMAT, "version": VERSION, "formulation": "bb-mip", "problem": data,
            "tolerance": {"abs_gap": float(abs_gap), "rel_gap": float(rel_gap)},
            "status": found.status, "incumbent": incumbent,
            "lower_bound": None if found.lower_bound is None else float(found.lower_bound),
            "nodes": nodes}
