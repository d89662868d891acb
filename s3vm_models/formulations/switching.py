"""``switching``: S3VM-L2 by annealed label switching, the local method the exact solvers start from.

The transductive SVM of Joachims (1999) for the squared hinge (Problem 1,
docs/formulations.md#problem-1): train on the labeled points, label the unlabeled points by their
outputs, then alternate retraining and switching labels while that lowers the objective, with
the weight of the unlabeled points annealed up to C* (:mod:`s3vm.models.label_switching`). It returns a
local minimum of J with no bound: status ``feasible``. ``bb`` starts from the same labeling and
proves or improves it.
"""

from __future__ import annotations

from typing import ClassVar

from s3vm.core.formulation import Formulation
from s3vm.models.l2_svm import S3VMObjective
from s3vm.models.label_switching import ANNEAL, label_switching
from s3vm.solvers.errors import InputError


class LabelSwitchingS3VM(Formulation):
    """A local minimum of S3VM-L2 (kernel, bias or not, C and C*, count balance or none)."""
    problem: ClassVar[int] = 1

    name: ClassVar[str] = "switching"
    #: peak bytes per n^2 entry (linear, rbf), measured: K and the active sets' factors
    dense_bytes: ClassVar[tuple] = (48, 48)
    summary: ClassVar[str] = ("S3VM-L2 by annealed label switching (Joachims' TSVM, squared "
                              "hinge): a local minimum, no bound")
    problem_class: ClassVar[str] = "svm"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "bias", "balance",
                                      "positives")

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.C <= 0 or settings.C_unlabeled <= 0:
            raise InputError("switching needs C > 0 and C* > 0")

    def build(self, instance, settings):
        """The objective J of the instance (the model a local search evaluates)."""
        return S3VMObjective(instance, settings)

    def run(self, instance, settings, backend, profile, clock, result):
        objective = self.build(instance, settings)
        positives = settings.positive_count(instance) if settings.balance == "count" else None

        def on_stage(stage, labels):
            clock.report(phase=f"label switching, stage {stage + 1} of {len(ANNEAL)}",
                         labels=labels)

        labels, value, finished = label_switching(objective, positives, stop=clock.expired,
                                                  on_stage=on_stage)
        solution = objective.solve(labels)
        result.status = "feasible" if finished else "time_limit"
        result.message = "" if finished else "time limit reached during label switching"
        result.objective = value
        result.labels = labels
        result.decision_values = solution.outputs[instance.unlabeled]
        result.primal = {"beta": solution.beta, "b": solution.b}
