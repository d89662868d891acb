"""bb-sdp's proof, node by node, and the certificate file that states it (docs/models.md,
"A certificate anyone can check"; the checker is :mod:`s3vm.models.certificate_check`).

With a certificate asked for, every node the search bounds keeps the data that proves its bound
(:class:`ShorProofs`), in the coordinates of :mod:`s3vm.models.shor_relaxation` (points labeled
first, X of order n + 1):

- ``sdp``: the round whose certificate b'y + T min(0, lambda_min(Z)) was the node's bound: the
  box (L, U, lmd, umd) its rows were built from, the rows by name (kind, i, j, type, equality),
  their multipliers y and T. The checker rebuilds every row from its name and the box, checks
  that the box holds every output vector of a labeling of the node at most the incumbent's
  value, and recomputes the bound from the instance's own C~.
- ``box``: the node's box alone, when the box decided the node: it holds no such output vector
  (the bound is inf), or it forces every free label, and then ``alpha``, dual multipliers of
  that labeling's SVM, give its value from below.

A leaf (and the incumbent) keeps ``alpha``: with K' = K + diag(1/(2C)) and Y the labels, any
alpha >= 0 gives J(y) >= 1'alpha - alpha'Y K' Y alpha / 2, and the outputs v = K' Y alpha are
a point of the labeling's QP, whose value bounds J(y) from above when y o v >= 1.

Only bounds a checker can recompute with numpy alone are recorded, so the search runs with the
options that keep them so (:data:`CERTIFIED_OPTIONS`): the box from the incumbent's ellipsoid in
closed form (|v_i| <= sqrt(UB M_ii)), without the QCQP boxes, the dual tightening, the
incumbent-relative certificate and the lifted count, whose validity rests on solver output a
checker would have to re-prove.
"""

from __future__ import annotations

import json
import math
from typing import Optional

import numpy as np

from s3vm.models.certificate_check import FORMAT, VERSION
from s3vm.solvers.runtime.files import atomic_output

#: ShorOptions a certified search runs with (module docstring).
CERTIFIED_OPTIONS = {"box": False, "tighten": False, "incumbent_certificate": False,
                     "count_bound": "none", "products": False}


def as_floats(values) -> list:
    """A JSON list of floats."""
    return [float(v) for v in np.asarray(values, dtype=float).ravel()]


class ShorProofs:
    """The proof data of the nodes of one search (module docstring).

    Parameters
    ----------
    objective : S3VMObjective
        The exact J (file order), whose SVM solution gives a labeling's ``alpha``.
    """

    def __init__(self, objective):
        self.objective = objective
        self._best = None

    def begin(self) -> None:
        """A node's evaluation starts: no round kept yet."""
        self._best = None

    def round(self, value: float, cert, rows, T: float, L, U, lmd, umd) -> None:
        """One round's certificate (kept when it is the node's best so far)."""
        if not math.isfinite(value) or (self._best is not None and value <= self._best[0]):
            return
        names = [[kind, int(i), int(j), int(t), bool(eq)]
                 for kind, (i, j, t), eq in zip(rows.kind, rows.ij, rows.eq)]
        self._best = (value, {"kind": "sdp", "value": float(value), "T": float(T),
                              "L": as_floats(L), "U": as_floats(U), "lmd": as_floats(lmd),
                              "umd": as_floats(umd), "rows": names, "y": as_floats(cert.y)})

    def node(self, value: float, state, completion: Optional[np.ndarray]) -> Optional[dict]:
        """The proof of a node whose own bound is ``value`` (before the parent's is taken),
        from its final ``state`` (the box) and the labeling the box forces, if any."""
        if state is not None and (value == math.inf or completion is not None):
            proof = {"kind": "box", "L": as_floats(state.L), "U": as_floats(state.U)}
            if completion is not None and math.isfinite(value):
                proof["labels"] = [int(v) for v in completion]
                proof["alpha"] = self.alpha(completion)
            return proof
        if self._best is not None:
            return self._best[1]
        return None

    def alpha(self, labels: np.ndarray) -> list:
        """Dual multipliers of the SVM of ``labels`` (every row, file order): alpha = y o beta
        for the expansion f = K beta of the squared hinge without bias."""
        solution = self.objective.solve(np.asarray(labels, dtype=int))
        y = self.objective.full_labels(np.asarray(labels, dtype=float))
        return as_floats(np.maximum(y * np.asarray(solution.beta, dtype=float), 0.0))


def certificate_document(instance, settings, found, proofs: ShorProofs, abs_gap: float,
                         rel_gap: float) -> dict:
    """The certificate of a search that recorded its proof, JSON-ready (docs/models.md)."""
    incumbent = None
    if found.labels is not None:
        incumbent = {"labels": [int(v) for v in found.labels], "value": float(found.objective),
                     "alpha": proofs.alpha(found.labels)}
    X = np.asarray(instance.X, dtype=float)
    return {
        "format": FORMAT, "version": VERSION,
        "formulation": "bb-sdp",
        "problem": {
            "X": [as_floats(row) for row in X],
            "label": [int(v) for v in instance.label],
            "group": None if instance.group is None else [int(g) for g in instance.group],
            "kernel": settings.kernel, "sigma": float(settings.sigma),
            "C": float(settings.C), "C_star": float(settings.C_unlabeled),
            "balance": settings.balance,
            "positives": (settings.positive_count(instance) if settings.balance == "count"
                          else None),
        },
        "tolerance": {"abs_gap": float(abs_gap), "rel_gap": float(rel_gap)},
        "status": found.status,
        "incumbent": incumbent,
        "lower_bound": None if found.lower_bound is None else float(found.lower_bound),
        "nodes": found.proof,
    }


def write_certificate(path: str, document: dict) -> None:
    """Write ``document`` as JSON, whole or not at all."""
    with atomic_output(path, suffix=".json") as tmp:
        with open(tmp, "w") as handle:
            json.dump(document, handle, allow_nan=False, separators=(",", ":"))
