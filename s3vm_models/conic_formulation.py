"""The part the SDP formulations share: build the model kind the backend takes, solve, and turn a
relaxation into labels with the bound interval of seed 003, section 7.1.4."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import numpy as np

from .base import Formulation, Stopwatch
from .data import Instance
from .errors import InputError
from .files import atomic_output
from .kernels import kernel_matrix
from .settings import Settings
from .svm_dual import svm_dual_value

ROUNDINGS = ("gamma", "eigenvector")


@dataclass
class ConicModel:
    """A built conic model: the solver-facing object and the handles to read a solution from.

    ``model`` is a ``cvxpy.Problem`` or a MOSEK Fusion ``Model``; ``read`` maps a handle name to
    a function returning its value after the solve.
    """

    model: Any
    read: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)


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


class ConicFormulation(Formulation):
    """An SDP relaxation of Problem 2 whose rounded labels are scored by the supervised D(y).

    Subclasses give :meth:`build_cvxpy` (and :meth:`build_fusion` for MOSEK Fusion) returning a
    :class:`ConicModel` with a ``gamma_u`` reader (the relaxed unlabeled labels) and a
    ``gamma_full`` reader (the whole relaxed label matrix, for eigenvector rounding).
    """

    problem_class: ClassVar[str] = "sdp"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "hard_margin",
                                      "balance", "positives")
    is_relaxation: ClassVar[bool] = True
    # Written from the MOSEK Fusion model (no licence needed to build or write it).
    export_formats: ClassVar[tuple] = ("cbf", "ptf")

    def __init__(self, rounding: str = "gamma"):
        if rounding not in ROUNDINGS:
            raise InputError(f"rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
        self.rounding = rounding

    def kernel(self, instance: Instance, settings: Settings) -> np.ndarray:
        return kernel_matrix(instance.X, None, settings.kernel, settings.sigma)

    def build(self, instance: Instance, settings: Settings, kind: str = "cvxpy") -> ConicModel:
        if kind == "cvxpy":
            return self.build_cvxpy(instance, settings)
        if kind == "fusion":
            return self.build_fusion(instance, settings)
        raise InputError(f"formulation {self.name!r} has no {kind} model")

    def build_cvxpy(self, instance: Instance, settings: Settings) -> ConicModel:
        raise NotImplementedError

    def build_fusion(self, instance: Instance, settings: Settings) -> ConicModel:
        raise InputError(f"formulation {self.name!r} has no MOSEK Fusion model yet")

    def _export_model(self, instance: Instance, settings: Settings) -> ConicModel:
        return self.build(instance, settings, "fusion")

    def _write(self, built: ConicModel, path: str, fmt: str) -> None:
        # MOSEK picks the writer from the file's extension, so the temporary file carries it.
        try:
            with atomic_output(path, suffix="." + fmt) as tmp:
                built.model.writeTask(tmp)
        finally:
            built.model.dispose()

    def labels_from(self, built: ConicModel, instance: Instance,
                    settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        """(labels, scores) of the unlabeled points from a solved relaxation.

        With the count balance the P highest scores are labeled +1, so the labels meet it.
        """
        if self.rounding == "gamma":
            scores = np.asarray(built.read["gamma_u"](), dtype=float)
        else:
            # The dominant eigenvector of the label matrix, signed to agree with the labels.
            vals, vecs = np.linalg.eigh(built.read["gamma_full"]())
            v = vecs[:, -1]
            lab = instance.labeled
            if v[lab] @ instance.label[lab] < 0:
                v = -v
            scores = v[instance.unlabeled]
        if settings.balance == "count":
            P = settings.positive_count(instance)
            labels = -np.ones(len(scores), dtype=int)
            labels[np.argsort(-scores, kind="stable")[:P]] = 1
            return labels, scores
        return np.where(scores >= 0, 1, -1), scores

    def solve(self, instance: Instance, settings: Settings, profile):
        from solvers.registry import get_backend
        from solvers.results import Result

        self.check(instance, settings)
        backend = get_backend(profile.solver, self.problem_class)
        clock = Stopwatch()
        built = self.build(instance, settings, backend.model_kind)
        outcome = backend.solve(built.model, profile)
        result = Result(formulation=self.name, solver=backend.name, status=outcome.status,
                        iterations=outcome.iterations, message=outcome.message,
                        info=dict(built.info))
        if not outcome.has_solution:
            result.seconds = clock.seconds
            return result
        labels, scores = self.labels_from(built, instance, settings)
        K = self.kernel(instance, settings)
        y = instance.label.astype(float)
        y[instance.unlabeled] = labels
        value, alpha = svm_dual_value(K, y, problem2_penalties(instance, settings))
        result.labels, result.decision_values = labels, scores
        result.objective = value
        result.primal = {"alpha": alpha, "relaxation_value": outcome.objective}
        result.info["relaxation_value"] = outcome.objective
        if self.is_relaxation and outcome.status == "optimal":
            result.lower_bound = outcome.objective
            gap = result.gap
            # Both ends of the interval of section 7.1.4 meet: the rounded labels are optimal.
            result.status = "optimal" if gap is not None and gap <= 1e-6 else "feasible"
        else:
            result.status = "feasible" if outcome.status == "optimal" else outcome.status
        result.seconds = clock.seconds
        return result
