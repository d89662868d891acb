"""The part every Pyomo-modelled formulation shares: solve through a backend, export, Result."""

from __future__ import annotations

import numpy as np

from .base import Formulation, Stopwatch
from .data import Instance
from .solvers.files import atomic_output
from .settings import Settings


def labels_from_scores(scores: np.ndarray) -> np.ndarray:
    """+1 where the score is >= 0, else -1 (ties go to +1, a fixed and documented rule)."""
    return np.where(np.asarray(scores) >= 0, 1, -1).astype(int)


class PyomoFormulation(Formulation):
    """A formulation whose model is one Pyomo ConcreteModel solved by one backend call."""

    export_formats = ("mps", "lp")

    def solve(self, instance: Instance, settings: Settings, profile):
        from .solvers.registry import get_backend
        from .solvers.results import Result

        self.check(instance, settings)
        # The backend import (Pyomo and the solver library, ~1 s) stays outside the clock, so
        # that the first of several formulations compared is not charged for it.
        backend = get_backend(profile.solver, self.problem_class)
        import pyomo.environ  # noqa: F401  (same reason)

        clock = Stopwatch()
        model = self.model_to_solve(instance, settings, backend)
        outcome = backend.solve(model, profile)
        result = Result(formulation=self.name, solver=backend.name, status=outcome.status,
                        iterations=outcome.iterations, nodes=outcome.nodes,
                        message=outcome.message)
        if outcome.has_solution:
            self.fill(result, model, instance, settings)
            result.objective, result.lower_bound = self.objective_bounds(model, outcome)
        elif outcome.status == "infeasible":
            result.lower_bound = None
        result.seconds = clock.seconds
        return result

    def model_to_solve(self, instance: Instance, settings: Settings, backend):
        """The model handed to ``backend``: :meth:`build` unless a formulation solves an
        equivalent form (the LP dual) faster."""
        return self.build(instance, settings)

    def objective_bounds(self, model, outcome):
        """(objective, lower bound) of the formulation from the solver's numbers."""
        return outcome.objective, outcome.bound

    def fill(self, result, model, instance: Instance, settings: Settings) -> None:
        """Put labels, decision values and the primal solution of a solved model into result."""
        raise NotImplementedError

    def _write(self, model, path: str, fmt: str) -> None:
        # The temporary file carries the format's extension; Pyomo picks the writer from it
        # (naming format="lp" explicitly makes Pyomo warn that .lp "may not match").
        with atomic_output(path, suffix="." + fmt) as tmp:
            model.write(tmp, io_options={"symbolic_solver_labels": True})
