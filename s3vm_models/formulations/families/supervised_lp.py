"""What RLP and the 1-norm SVM share: a supervised LP on the labeled points of Problem 3,
used to score the unlabeled points."""

from __future__ import annotations

from typing import Optional

from s3vm.core.options import Option
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.families.pyomo import PyomoFormulation, labels_from_scores
from s3vm.models.problem3 import (
    Problem3Data,
    build_problem3,
    build_problem3_dual,
    primal_values,
    unlabeled_scores,
)
from s3vm.solvers.errors import InputError

LP_FORM = Option("lp_form", "choice", "auto", "solve the LP dual (auto: when the solver gives "
                 "duals) or the primal", choices=("auto", "dual", "primal"))


class DualFormLP:
    """Mixin of the Problem 3 LPs: solved in the LP dual form by default.

    ``lp_form="dual"`` hands the solver :func:`build_problem3_dual` (p + 1 rows);
    ``"primal"`` the model of :meth:`build`, which is also what ``s3vm export`` writes; ``"auto"``
    (default) the dual when the solver returns row duals (w and g are read from them), else
    the primal. Both have the same optimum (strong duality), up to sign.
    """

    options = (LP_FORM,)

    def use_dual(self, backend) -> bool:
        if self.lp_form == "dual" and not backend.provides_duals:
            raise InputError(f"solver {backend.name!r} returns no duals: use --lp-form primal")
        return self.lp_form == "dual" or (self.lp_form == "auto" and backend.provides_duals)

    def objective_bounds(self, model, outcome):
        if getattr(model, "dual_form", False):
            value = None if outcome.objective is None else 0.0 - outcome.objective
            return value, value if outcome.status == "optimal" else None
        return outcome.objective, outcome.bound


class SupervisedLinearLP(DualFormLP, PyomoFormulation):
    """A linear classifier from an LP on the labeled points; unlabeled points are only scored."""

    problem = 3

    problem_class = "lp"
    needs_unlabeled = False

    def labeling_objective(self, instance, settings, labels):
        # The LP has no term of the unlabeled points: no labeling changes its objective, which
        # only the LP itself gives (what the stopped solve did not finish).
        return None

    def model_to_solve(self, instance, settings, backend):
        if not self.use_dual(backend):
            return self.build(instance, settings)
        return build_problem3_dual(Problem3Data.from_instance(instance, settings),
                                   mu=self.norm_weight(settings))

    def norm_weight(self, settings: Settings) -> Optional[float]:
        """mu of the 1-norm term, or None for no 1-norm term."""
        raise NotImplementedError

    def build(self, instance: Instance, settings: Settings):
        return build_problem3(Problem3Data.from_instance(instance, settings),
                              mu=self.norm_weight(settings))

    def fill(self, result, model, instance, settings):
        primal = primal_values(model)
        scores = unlabeled_scores(model)
        result.primal = primal
        result.decision_values = scores
        result.labels = labels_from_scores(scores)
