"""The three problems of docs/formulations.md, named once: every formulation declares which one
it solves (:attr:`s3vm.core.formulation.Formulation.problem`), and what follows from the problem
(how a solution scores a new point, which supervised problem it is without unlabeled points)
is read from here, never from a table keyed by formulation name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One of the project's problems.

    Attributes
    ----------
    number : int
        1, 2 or 3, as in docs/formulations.md.
    name : str
        Its short name.
    objective : str
        What its objective value measures, for messages and docs.
    inductive_rule : str
        How a solution scores a new point (:mod:`s3vm.inductive`): ``"expansion"`` (the
        squared-hinge SVM's kernel expansion at the final labeling), ``"dual"`` (the
        supervised SVM dual at the rounded labeling) or ``"linear"`` (w and b of the linear
        program, Mangasarian's generalized SVM under rbf).
    supervised_formulation : str or None
        The registered formulation that solves the problem with no unlabeled point, when that
        is a formulation of its own (Problem 3 without unlabeled terms is ``svm1``); None when
        the estimator solves the supervised SVM of the problem directly.
    """

    number: int
    name: str
    objective: str
    inductive_rule: str
    supervised_formulation: str | None = None


PROBLEMS = {
    1: Problem(1, "S3VM-L2", "J(y): the squared-hinge kernel SVM with bias at labeling y",
               "expansion"),
    2: Problem(2, "TSVM-H", "D(y): the hinge-loss kernel SVM dual without bias at labeling y",
               "dual"),
    3: Problem(3, "S3VM-1", "the 1-norm objective of Bennett and Demiriz (linear programs)",
               "linear", supervised_formulation="svm1"),
}

#: The inductive rules, each with the primal key of a Result it reads.
INDUCTIVE_RULES = {"linear": "w", "expansion": "beta", "dual": "alpha"}


#: Problem number -> score(instance, settings, labels) of a labeling of the unlabeled rows,
#: registered by :mod:`s3vm.formulations.families.labeling` (core imports no model).
_LABELING_OBJECTIVES: dict = {}


def register_labeling_objective(number: int):
    """Decorator: ``fn(instance, settings, labels) -> float`` is Problem ``number``'s objective
    at a full labeling of the unlabeled rows (in row order)."""

    def register(fn):
        _LABELING_OBJECTIVES[number] = fn
        return fn

    return register


def labeling_objective(number):
    """The registered objective of Problem ``number`` at a labeling, or None."""
    return _LABELING_OBJECTIVES.get(number)
