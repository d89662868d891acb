"""Each problem's objective at one labeling of the unlabeled rows, registered with
:func:`s3vm.core.problems.register_labeling_objective`: what the labels of a stopped solve that
had none of its own (the supervised SVM's, :meth:`Formulation._supervised_labels`) are scored by,
so that those labels carry the formulation's own objective.

- Problem 1 (S3VM-L2): J(y), the squared-hinge SVM at the labeling
  (:func:`s3vm.models.output_space.s3vm_objective`, the mean balance's J under ``balance mean``);
- Problem 3 (S3VM-1): the Bennett-Demiriz objective at the labeling, its LP without big-M
  (:func:`s3vm.models.problem3.labeling_value`).

Problem 2 (D(y)) is scored by the conic family's own :meth:`supervised_value` (the subspace
SDPs reach the kernel through columns).
"""

from __future__ import annotations

import numpy as np

from s3vm.core.problems import register_labeling_objective
from s3vm.models.output_space import s3vm_objective
from s3vm.models.problem3 import Problem3Data, labeling_value


@register_labeling_objective(1)
def s3vm_l2_objective(instance, settings, labels: np.ndarray) -> float:
    """J(y) of S3VM-L2 under the settings (kernel, C, C*, bias, balance)."""
    return float(s3vm_objective(instance, settings).solve(np.asarray(labels)).value)


@register_labeling_objective(3)
def bennett_demiriz_objective(instance, settings, labels: np.ndarray):
    """Problem 3 at the labeling (None when its LP does not solve)."""
    value, _, _ = labeling_value(Problem3Data.from_instance(instance, settings),
                                 np.asarray(labels), settings.mu, settings.nu)
    return value
