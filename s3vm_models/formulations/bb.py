"""bb: exact S3VM-L2 by branch and bound (Chapelle, Sindhwani and Keerthi 2006, NIPS 19).

The bound at a node is the squared-hinge SVM on the node's labeled set (their section 4), kept
incremental (:mod:`s3vm.bounds.svm`); the branching rule is their (7) with the add-one-in estimate
of their Proposition 1, eq. (8); the starting incumbent comes from annealed label switching
(:mod:`s3vm.models.label_switching`). The objective is J of Problem 1
(docs/formulations.md#problem-1; the method: docs/formulations.md#bb).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import ClassVar

from s3vm.bounds.svm import SVMBoundProblem
from s3vm.core.options import Option
from s3vm.formulations.families.branch_and_bound import BNB_GROUP, BranchAndBoundFormulation
from s3vm.models.label_switching import LabelSwitching
from s3vm.models.output_space import s3vm_objective
from s3vm.solvers.errors import InputError

HEURISTICS = ("switching", "none")


class BranchAndBound(BranchAndBoundFormulation):
    """S3VM-L2 solved exactly with the SVM bound of Chapelle, Sindhwani and Keerthi (2006).

    Parameters
    ----------
    heuristic : {"switching", "none"}
        The starting incumbent: annealed label switching, or none (the search finds its own).
    node_selection, rel_gap, abs_gap, node_limit, log_every, tree_file
        See :class:`BranchAndBoundFormulation`.
    """

    problem: ClassVar[int] = 1

    name: ClassVar[str] = "bb"
    no_model: ClassVar[str] = "a branch and bound over labelings with SVM bounds computed in numpy"
    #: peak bytes per n^2 entry (linear, rbf): K (8); the factors the open nodes keep, capped
    #: at 8 (s3vm.bounds.svm.FACTOR_BYTES_PER_ENTRY); the node being bounded, its parent's
    #: and the last node's factors (up to 24); the open nodes' vectors f, y and partial
    #: labels, about 32 n each and at most n of them depth-first (32); a node's n x a products
    #: (up to 24). The search's own peak measured 75-80 at n = 150 and 300 (rbf, tracemalloc);
    #: best-first keeps more open nodes than n, which the node limit bounds, not n^2.
    dense_bytes: ClassVar[tuple] = (96, 96)
    summary: ClassVar[str] = "exact S3VM-L2 by branch and bound with SVM bounds (Chapelle et al.)"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "bias", "balance",
                                      "positives")
    balances: ClassVar[tuple] = ("none", "count", "mean")
    #: Groups: the search fixes a whole group at a branch (its SVM bound stays valid)
    uses_groups: ClassVar[bool] = True

    options: ClassVar[tuple] = (
        Option("heuristic", "choice", "switching", "starting incumbent from label switching, or "
               "none", choices=HEURISTICS, group=BNB_GROUP),
    ) + BranchAndBoundFormulation.options

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.C <= 0 or settings.C_unlabeled <= 0:
            raise InputError("bb needs C > 0 and C* > 0")

    def labeling_problem(self, instance, settings, backend, profile, clock=None):
        # The SVM bounds are a few Newton steps each: the driver's check between nodes holds
        # the limit; only the starting heuristic stops with the clock.
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        links = instance.unlabeled_links()
        stop = None if clock is None else clock.expired
        heuristic = LabelSwitching(links, stop) if self.heuristic == "switching" else None
        return SVMBoundProblem(s3vm_objective(instance, settings), positives, heuristic, links)

    def result_primal(self, problem, labels) -> dict:
        """The SVM at the final labeling: beta (f = K beta + b, every row) and b."""
        sol = problem.objective_solution(labels)
        return {"beta": sol.beta, "b": sol.b}

    def result_info(self, problem) -> dict:
        """The starting heuristic's labels and objective, to compare with the proved optimum."""
        if problem.heuristic_result is None:
            return {}
        labels, value = problem.heuristic_result
        return {"heuristic": {"name": problem.heuristic.name, "objective": float(value),
                              "labels": [int(v) for v in labels]}}

    @contextmanager
    def environment(self):
        # The node systems are ~100 x 100: BLAS threads only contend (a loaded 2-core machine
        # ran triangular solves 100 times slower with them).
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            yield
