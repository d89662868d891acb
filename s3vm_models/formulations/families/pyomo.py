"""The part every Pyomo-modelled formulation shares: solve through a backend, export, Result."""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.core.formulation import Formulation, GivenModel
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.families.kept_exact import kept_exact
from s3vm.models.derived_constants import inexact_file_note
from s3vm.models.problem3 import update_costs
from s3vm.solvers.runtime.clock import Clock
from s3vm.solvers.runtime.files import atomic_output


def labels_from_scores(scores: np.ndarray) -> np.ndarray:
    """+1 where the score is >= 0, else -1 (ties go to +1, a fixed and documented rule)."""
    return np.where(np.asarray(scores) >= 0, 1, -1).astype(int)


def update_problem3(form, model, conic, instance: Instance, old: Settings,
                    new: Settings) -> bool:
    """:meth:`Formulation.update_model` of the models of Problem 3 (svm1, vs3vm, bd-mip,
    bb-mip): mu and nu into their mutable Params (:func:`s3vm.models.problem3.update_costs`);
    a bd-mip or bb-mip model then counts as changed, so that ``Built.solve`` checks its big-M
    against the new costs (docs/models.md)."""
    if not old.differences(new) <= set(form.in_place_settings):
        return False
    return update_costs(model, new.mu if "mu" in form.settings_used else None, new.nu)


class PyomoFormulation(Formulation):
    """A formulation whose model is one Pyomo ConcreteModel solved by one backend call."""

    export_formats = ("mps", "lp")
    modelers = ("pyomo",)

    def backend(self, profile):
        backend = super().backend(profile)
        # Pyomo's import (~1 s) goes with the solver library's: outside the clock, so that the
        # first of several formulations compared is not charged for it, but where the program
        # charges imports (the command line).
        import pyomo.environ  # noqa: F401
        return backend

    def run(self, instance, settings, backend, profile, clock, result):
        clock.report(phase="building the model")
        with clock.abortable():  # Pyomo's construction has no place for a checkpoint
            model = self.model_to_solve(instance, settings, backend)
        clock.checkpoint()
        clock.report(phase=f"solving ({backend.name})")
        hooked = self._hook_incumbents(model, instance, settings, clock)
        try:
            outcome = backend.solve(model, profile, clock)
        finally:
            if hooked:
                del model.incumbent_hook  # the caller's model (s3vm.build) keeps no closure
        result.status, result.iterations, result.nodes = (outcome.status, outcome.iterations,
                                                          outcome.nodes)
        result.message = outcome.message
        if outcome.has_solution:
            self.fill_on_clock(result, model, instance, settings, clock)
            result.objective, result.lower_bound = self.objective_bounds(model, outcome)
        elif outcome.status == "infeasible":
            result.lower_bound = None

    def incumbent(self, model, instance: Instance, settings: Settings) -> Optional[dict]:
        """The labels (``labels``) and decision values (``decision_values``) of the incumbent
        the solver has loaded into ``model``'s variables, or None; a formulation with a
        labeling in its model says how to read it. Published on the solve's clock at every
        incumbent, they are the answer of a solve stopped where its solver cannot be reached
        (docs/reliability.md)."""
        return None

    def _hook_incumbents(self, model, instance: Instance, settings: Settings,
                         clock) -> bool:
        """Give ``model`` the ``incumbent_hook`` a backend calls at every incumbent (MIP
        solvers: HiGHS, SCIP), when this formulation reads incumbents (:meth:`incumbent`)."""
        if type(self).incumbent is PyomoFormulation.incumbent or \
                hasattr(model, "incumbent_hook"):
            return False

        def hook() -> None:
            try:
                fields = self.incumbent(model, instance, settings)
            except Exception:  # noqa: BLE001 - a progress report must not fail the solver
                return
            if fields:
                clock.report(**fields)

        model.incumbent_hook = hook
        return True

    def model_to_solve(self, instance: Instance, settings: Settings, backend):
        """The model handed to ``backend``: :meth:`build` unless a formulation solves an
        equivalent form (the LP dual) faster."""
        return self.build(instance, settings)

    def solving_given(self, given: GivenModel) -> "PyomoFormulation":
        """This formulation with :meth:`model_to_solve` handing over ``given.model``."""
        model = given.model

        class Given(type(self)):
            def model_to_solve(self, instance, settings, backend):
                return model

        if given.baseline is not None:  # a model with bound-derived constants: kept exact
            return kept_exact(Given, given)(**self.option_values())
        return Given(**self.option_values())

    def objective_bounds(self, model, outcome):
        """(objective, lower bound) of the formulation from the solver's numbers."""
        return outcome.objective, outcome.bound

    def fill(self, result, model, instance: Instance, settings: Settings) -> None:
        """Put labels, decision values and the primal solution of a solved model into result."""
        raise NotImplementedError

    def fill_on_clock(self, result, model, instance: Instance, settings: Settings,
                      clock: Clock) -> None:
        """:meth:`fill` under the solve's ``clock``: a formulation that computes more than the
        model holds (an LP at the labels) overrides this to spare it past the limit."""
        self.fill(result, model, instance, settings)

    def inexact_file_note(self, model) -> Optional[str]:
        return inexact_file_note(model)

    def _write(self, model, path: str, fmt: str) -> None:
        # The temporary file carries the format's extension; Pyomo picks the writer from it
        # (naming format="lp" explicitly makes Pyomo warn that .lp "may not match").
        with atomic_output(path, suffix="." + fmt) as tmp:
            model.write(tmp, io_options={"symbolic_solver_labels": True})
