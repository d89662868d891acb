"""The part the SDP formulations share: build the model kind the backend takes, solve, and turn a
relaxation into labels with the bound interval of De Bie and Cristianini (2006), section 7.1.4
(docs/formulations.md#sdp-bounds)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Optional

import numpy as np

from s3vm.core.formulation import Formulation, GivenModel
from s3vm.core.kernels import kernel_matrix
from s3vm.core.options import Option
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.models.conic import ConicModel, problem2_penalties, round_scores
from s3vm.models.svm_dual import svm_dual_value
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import Clock
from s3vm.solvers.runtime.files import atomic_output

ROUNDINGS = ("gamma", "eigenvector")
ROUNDING = Option("rounding", "choice", "gamma", "labels from a column of Gamma or its dominant "
                  "eigenvector", choices=ROUNDINGS)


class ConicFormulation(Formulation):
    """An SDP relaxation of Problem 2 whose rounded labels are scored by the supervised D(y).

    Subclasses give :meth:`build_cvxpy` (and :meth:`build_fusion` for MOSEK Fusion) returning a
    :class:`ConicModel` with a ``gamma_u`` reader (the relaxed unlabeled labels) and a
    ``gamma_full`` reader (the whole relaxed label matrix, for eigenvector rounding).
    """

    problem: ClassVar[int] = 2

    problem_class: ClassVar[str] = "sdp"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "hard_margin",
                                      "balance", "positives")
    is_relaxation: ClassVar[bool] = True
    uses_groups: ClassVar[bool] = True
    # Written from the MOSEK Fusion model (no licence needed to build or write it).
    export_formats: ClassVar[tuple] = ("cbf", "ptf")

    options: ClassVar[tuple] = (ROUNDING,)
    modelers: ClassVar[tuple] = ("cvxpy", "fusion")
    #: C and C* are a cp.Parameter of the low-rank dual's models (sdp's dual form,
    #: sdp-lowrank): a new value re-solves the compiled problem
    in_place_settings: ClassVar[tuple] = ("C", "C_star")

    def update_model(self, model, conic, instance, old, new) -> bool:
        """C and C* into the model's ``C`` parameter (the bounds of a), where it has one."""
        param = None if conic is None else conic.parameters.get("C")
        if param is None or new.hard_margin or \
                not old.differences(new) <= set(self.in_place_settings):
            return False
        param.value = problem2_penalties(instance, new)
        return True

    def kernel(self, instance: Instance, settings: Settings) -> np.ndarray:
        return kernel_matrix(instance.X, None, settings.kernel, settings.sigma)

    def build(self, instance: Instance, settings: Settings, kind: str = "cvxpy") -> ConicModel:
        if kind == "cvxpy":
            return self.build_cvxpy(instance, settings)
        if kind == "fusion":
            return self.build_fusion(instance, settings)
        if kind == "psd-oracle":
            raise InputError(f"solver psd-barrier does not solve formulation {self.name!r}: it "
                             "takes the subspace SDPs (sdp-subspace, sdp-lowrank) only; choose "
                             "a conic solver (scs, clarabel, ...)")
        raise InputError(f"formulation {self.name!r} has no {kind} model")

    def build_cvxpy(self, instance: Instance, settings: Settings) -> ConicModel:
        raise NotImplementedError

    def declarative_model(self, instance: Instance, settings: Settings,
                          modeler: str) -> ConicModel:
        """The model of ``modeler`` in its :class:`ConicModel` (the readers of the labels)."""
        return self.build(instance, settings, modeler)

    def solving_given(self, given: GivenModel) -> "ConicFormulation":
        """This formulation with :meth:`run_model` solving ``given.model`` once."""

        class Given(type(self)):
            run_model = given_step(given)

        return Given(**self.option_values())

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

    def round_fallback(self, scores: np.ndarray, instance: Instance,
                       settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        """As the relaxation's own scores are rounded: groups and the balance count met."""
        return round_scores(scores, instance, settings)

    def labels_from(self, built: ConicModel, instance: Instance,
                    settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        """(labels, scores) of the unlabeled points from a solved relaxation (see
        :func:`round_scores`)."""
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
        return round_scores(scores, instance, settings)

    def run_model(self, instance: Instance, settings: Settings, backend, profile,
                  clock: Clock) -> tuple[ConicModel, Any, dict]:
        """Build the model the backend takes and solve it: (built, outcome, extra info).

        The hook for formulations that solve in more than one step (a working set) or read the
        solver's status differently.
        """
        with clock.abortable():  # CVXPY's and Fusion's model building check no clock
            built = self.build(instance, settings, backend.model_kind)
        clock.checkpoint()
        clock.report(phase=f"solving the SDP ({backend.name})")
        return built, backend.solve(built.model, profile, clock), {}

    def supervised_value(self, instance: Instance, settings: Settings, y: np.ndarray
                         ) -> tuple[float, Optional[np.ndarray], Optional[str]]:
        """(D(y), the maximising a, a note on how D was computed or None): the score of a
        rounded labeling, the upper end of the interval of De Bie and Cristianini (2006),
        section 7.1.4."""
        value, alpha = svm_dual_value(self.kernel(instance, settings), y,
                                      problem2_penalties(instance, settings))
        return value, alpha, None

    def labeling_objective(self, instance, settings, labels):
        """D(y) at the labeling (:meth:`supervised_value`), the score of rounded labels."""
        y = instance.label.astype(float)
        y[instance.unlabeled] = labels
        return self.supervised_value(instance, settings, y)[0]

    def run(self, instance, settings, backend, profile, clock, result):
        clock.report(phase=f"building and solving the SDP ({backend.name})")
        built, outcome, extra = self.run_model(instance, settings, backend, profile, clock)
        result.status, result.iterations, result.message = (outcome.status, outcome.iterations,
                                                            outcome.message)
        result.info.update({**built.info, **extra})
        if outcome.status == "infeasible":
            result.message = f"{outcome.message}: {self.infeasible_advice(instance, settings)}"
        elif outcome.status == "error" and not clock.stopped:
            others = [name for name in ("sdpa", "clarabel", "scs") if name != backend.name]
            result.message = (f"{outcome.message} (the SDP solver failed: try another one, "
                              f"--solver {' or '.join(others)}, or moderate --C/--C-star)")
        if not outcome.has_solution:
            return
        # A model written as the minimum of the negative (a dual) says so in its info.
        sign = built.info.get("objective_sign", 1)
        relaxed = None if outcome.objective is None else sign * outcome.objective
        labels, scores = self.labels_from(built, instance, settings)
        clock.report(phase="scoring the rounded labels", labels=labels, decision_values=scores)
        bound = None
        if self.is_relaxation:
            certify = built.read.get("certified")
            if certify is not None:
                # A feasible dual point's value: proven whatever the solver's accuracy.
                bound = certify()
                result.info["certified_bound"] = bound if np.isfinite(bound) else None
                bound = bound if np.isfinite(bound) else None
            elif outcome.status == "optimal":
                bound = relaxed  # the solver's word (a model without a dual certificate)
            clock.report(lower_bound=bound)
        y = instance.label.astype(float)
        y[instance.unlabeled] = labels
        value, alpha, note = self.supervised_value(instance, settings, y)
        result.labels, result.decision_values = labels, scores
        result.objective = value
        result.primal = {"alpha": alpha, "relaxation_value": relaxed}
        result.info["relaxation_value"] = relaxed
        if note:
            result.info["objective_note"] = note
        result.lower_bound = bound
        if value is None or not np.isfinite(value):
            # The rounded labels have no finite, computable score D(y): no solution to report,
            # only the relaxation's bound.
            result.status = "error"
            result.labels = result.decision_values = result.objective = None
            result.primal = {"relaxation_value": relaxed}
            result.message = ("the rounded labels cannot be separated with --hard-margin "
                              "(D(y) is infinite): drop --hard-margin or use another kernel"
                              if value is not None and not np.isnan(value) else
                              "the supervised SVM at the rounded labels did not solve: lower "
                              "--C/--C-star or scale the features (--scale standard)")
            return
        if outcome.status in ("optimal", "feasible"):
            gap = result.gap
            # Both ends of the interval of section 7.1.4 meet: the rounded labels are optimal.
            # Both ends are certified (the bound by a feasible dual point, D(y) by a feasible
            # primal point), so an inaccurate solve can reach "optimal" only by this proof.
            result.status = "optimal" if gap is not None and gap <= 1e-6 else "feasible"
            if result.status == "optimal" and outcome.status != "optimal":
                result.message = (f"{outcome.message}: the solver was inaccurate, but the "
                                  "certified bound and objective meet")
        else:
            result.status = outcome.status

    def infeasible_advice(self, instance: Instance, settings: Settings) -> str:
        """What to change when the relaxation has no feasible point."""
        if settings.hard_margin:
            return ("with --hard-margin the points cannot be separated in this relaxation: drop "
                    "--hard-margin (the soft margin, --C) or use another kernel")
        if settings.balance == "count":
            P = settings.positive_count(instance)
            return (f"no label matrix meets the balance count P = {P} of {instance.u} unlabeled "
                    "points with the constraints of this model (groups, the subspace): choose "
                    "another --positives, or --balance none")
        return "the model has no feasible point: check the groups of the data"


def given_step(given: GivenModel):
    """A :meth:`ConicFormulation.run_model` that solves ``given.model`` with one solver call, no
    working set or fallback, read through the readers of the holder it was built in."""

    def run_model(self, instance, settings, backend, profile, clock):
        if backend.model_kind != given.modeler:
            raise InputError(f"solver {backend.name!r} does not take a {given.modeler} model: "
                             f"{given.solvers}")
        clock.checkpoint()
        clock.report(phase=f"solving the SDP ({backend.name})")
        conic = dataclasses.replace(given.conic, model=given.model)
        return conic, backend.solve(given.model, profile, clock), {}

    return run_model
