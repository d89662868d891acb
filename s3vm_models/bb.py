"""``bb``: S3VM-L2 solved exactly by branch and bound (Chapelle, Sindhwani, Keerthi; seed 000).

Problem 1 of DESIGN.md: J(y_U) = min_{w,b} 1/2 |w|^2 + C sum_L max(0, 1 - y f)^2
+ C* sum_U max(0, 1 - y f)^2 over labelings y_U (with the count balance when asked). The
project's driver (:mod:`solvers.bnb.driver`) searches the partial labelings; the bound at a node
is the seed's: the SVM trained on the labeled points and the node's fixed points only, kept
incremental down the tree (:mod:`solvers.bnb.svm_bound`); branching follows the seed's rule (7)
with the add-one-in estimate of Proposition 1, the likelier label first. A label-switching run
(:mod:`solvers.bnb.heuristics`, SVM-light's transductive mode) gives the starting incumbent.
"""

from __future__ import annotations

from typing import ClassVar, Optional

from .branch_and_bound import BranchAndBoundFormulation
from .errors import InputError

HEURISTICS = ("switching", "none")


class BranchAndBound(BranchAndBoundFormulation):
    """S3VM-L2 (kernel, bias or ``--no-bias``, C and C*, count balance or none), solved exactly.

    Parameters
    ----------
    heuristic : {"switching", "none"}
        The starting incumbent: label switching (default) or none (the search finds its own).
    node_selection, rel_gap, abs_gap, node_limit, log_every, tree_file
        As :class:`~s3vm_models.branch_and_bound.BranchAndBoundFormulation`.
    """

    name: ClassVar[str] = "bb"
    summary: ClassVar[str] = ("S3VM-L2 by branch and bound with the seed's SVM bound "
                              "(exact; --C, --C-star, --no-bias, --balance count)")
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "bias", "balance",
                                      "positives")

    def __init__(self, heuristic: str = "switching", node_selection: str = "depth",
                 rel_gap: float = 0.0, abs_gap: float = 0.0, node_limit: Optional[int] = None,
                 log_every: int = 1000, tree_file: Optional[str] = None):
        if heuristic not in HEURISTICS:
            raise InputError(f"heuristic must be one of {', '.join(HEURISTICS)}, "
                             f"got {heuristic!r}")
        self.heuristic = heuristic
        super().__init__(node_selection=node_selection, rel_gap=rel_gap, abs_gap=abs_gap,
                         node_limit=node_limit, log_every=log_every, tree_file=tree_file)

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.C <= 0 or settings.C_unlabeled <= 0:
            raise InputError("bb needs C > 0 and C* > 0 (squared-hinge penalties)")

    def labeling_problem(self, instance, settings, profile):
        """A :class:`solvers.bnb.svm_bound.SVMBoundProblem` for ``instance``."""
        from solvers.bnb.heuristics import LabelSwitching
        from solvers.bnb.svm_bound import SVMBoundProblem

        from .l2_svm import S3VMObjective

        positives = settings.positive_count(instance) if settings.balance == "count" else None
        heuristic = LabelSwitching() if self.heuristic == "switching" else None
        return SVMBoundProblem(S3VMObjective(instance, settings), positives=positives,
                               heuristic=heuristic)

    def result_primal(self, problem, labels) -> dict:
        """The SVM at the final labeling: beta (f = K beta + b, every row) and b."""
        sol = problem.objective_solution(labels)
        return {"beta": sol.beta, "b": sol.b}
