"""Each problem's objective at one labeling of the unlabeled rows, registered with
:func:`s3vm.core.problems.register_labeling_objective`: what the labels of a stopped solve that
had none of its own (the supervised SVM's, :func:`s3vm.core.pipeline.supervised_labels`) are scored
by, so that those labels carry the formulation's own objective.

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

#: The last J made here: (instance, settings, objective).
_LAST: list = [None]


def shared_objective(instance, settings):
    """:func:`s3vm_objective` of ``instance`` under ``settings``, made once for both the
    fallback's score (before a timed step) and the step of a Problem 1 formulation: its kernel
    factor is the costly part (an eigendecomposition: 1.3-1.9 s at heart's 297 rows on a
    loaded machine, which l2-miqp paid twice inside a 3 s limit)."""
    last = _LAST[0]
    if last is not None and last[0] is instance and last[1] == settings:
        return last[2]
    objective = s3vm_objective(instance, settings)
    _LAST[0] = (instance, settings, objective)
    return objective


@register_labeling_objective(1)
def s3vm_l2_objective(instance, settings, labels: np.ndarray) -> float:
    """J(y) of S3VM-L2 under the settings (kernel, C, C*, bias, balance)."""
    return float(shared_objective(instance, settings).solve(np.asarray(labels)).value)


@register_labeling_objective(3)
def bennett_demiriz_objective(instance, settings, labels: np.ndarray):
    """Problem 3 at the labeling (None when its LP does not solve)."""
    value, _, _ = labeling_value(Problem3Data.from_instance(instance, settings),
                                 np.asarray(labels), settings.mu, settings.nu)
    return value
