"""``bb-sdp``: S3VM-L2 without bias (Problem 1 with ``--no-bias``, docs/formulations.md#no-bias)
solved by the project's branch-and-bound driver, each node bounded by the SDP relaxation of
Problem 2 on K' = K + diag(1 / (2 C_i)) with the node's labels in the labeled block.

For a full labeling, J(y) = D(y) / 2 with D the hard-margin dual on K' (the squared hinge is a hard
margin on K'); the relaxation replaces yy' by a PSD matrix with unit diagonal, so half its optimum
bounds J from below over the node's subtree. The bound actually used is certified by weak duality
from the solver's output, so that an inexact SDP solve can weaken it but never make it exceed the
optimum (:mod:`s3vm.sdp_bound`). Full labelings are scored exactly by the squared-hinge SVM
of :mod:`s3vm.l2_svm`. ``bb --no-bias`` solves the same problem with the SVM bound of
Chapelle, Sindhwani and Keerthi (2006, section 4); both reach the same optimum
(docs/formulations.md#bb-sdp).
"""

from __future__ import annotations

from typing import ClassVar

from .branch_and_bound import BranchAndBoundFormulation
from .solvers.errors import InputError


class BranchAndBoundSDP(BranchAndBoundFormulation):
    """S3VM-L2 without bias by branch and bound on the SDP relaxation (needs ``--no-bias``).

    Takes the options of :class:`BranchAndBoundFormulation`; the SDP solver is ``--solver`` (any
    solver of the ``sdp`` class; SCS by default, Clarabel for tighter bounds and fewer nodes).
    """

    name: ClassVar[str] = "bb-sdp"
    summary: ClassVar[str] = ("S3VM-L2 without bias by branch and bound on the SDP relaxation "
                              "(--no-bias, --C, --C-star, --balance count)")
    problem_class: ClassVar[str] = "sdp"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "balance", "positives")
    settings_fixed: ClassVar[dict] = {
        "bias": (False, "bb-sdp solves S3VM-L2 without bias (bb takes both)")}

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.C <= 0 or settings.C_unlabeled <= 0:
            raise InputError("bb-sdp needs C > 0 and C* > 0 (the squared hinge on K + "
                             "diag(1/(2C)))")

    def labeling_problem(self, instance, settings, backend, profile):
        """A :class:`s3vm.sdp_bound.SDPRelaxationProblem` for ``instance``."""
        from .sdp_bound import SDPRelaxationProblem

        return SDPRelaxationProblem.from_instance(instance, settings, backend, profile)

    def result_primal(self, problem, labels) -> dict:
        """The SVM at the final labeling: expansion coefficients beta (f = K beta) and b = 0."""
        return problem.primal(labels)

    def result_info(self, problem) -> dict:
        """SDP solves (all, and those redone at the profile's accuracy) and the solver's time."""
        return {"sdp_solves": problem.sdp_solves, "tight_solves": problem.tight_solves,
                "sdp_seconds": problem.sdp_seconds}
