"""``bb-mip``: the Bennett-Demiriz MIP (Bennett and Demiriz 1998; Problem 3 of
docs/formulations.md#bd-mip) solved by the project's own branch-and-bound driver
(docs/formulations.md#bb-mip), each node bounded by the LP relaxation of the same Pyomo model that
``bd-mip`` hands to a MIP solver.

    min  e'y + mu e'z + nu e'(r + s)
    s.t. D(A w - e g) + y >= e,  -z <= w <= z,
         B w - e g + r + M (e - d) >= e,   -B w + e g + s + M d >= e,
         y, z, r, s >= 0,  d in {0, 1}^u  (optionally e'd = P)

d_j = 1 labels unlabeled point j as +1. A node fixes some d_j (label +1: d_j = 1, label -1:
d_j = 0); its bound is the LP with the other d_j in [0, 1], re-solved from the last basis by a
persistent LP session (:mod:`s3vm.bounds.lp_relaxation`). The optimum equals the MIP optimum of
``bd-mip`` on the same model; the search, its options and its log are those of ``bb``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from s3vm.bounds.lp_proof import lp_certificate_document
from s3vm.bounds.lp_relaxation import LPRelaxationProblem
from s3vm.bounds.shor_proof import write_certificate
from s3vm.core.formulation import GivenModel
from s3vm.core.options import Option
from s3vm.core.registry import get_formulation
from s3vm.formulations.families.branch_and_bound import BNB_GROUP, BranchAndBoundFormulation
from s3vm.formulations.families.pyomo import update_problem3
from s3vm.models.problem3 import (
    COMPONENTS,
    MIP_COMPONENTS,
    NORM_COMPONENTS,
    SIDES_COMPONENTS,
    Problem3Data,
    build_problem3,
)
from s3vm.solvers.errors import InputError


class BranchAndBoundMIP(BranchAndBoundFormulation):
    """The Bennett-Demiriz MIP by branch and bound on its LP relaxation.

    Takes the options of :class:`BranchAndBoundFormulation`; the LP solver is ``--solver``
    (any solver of the ``lp`` class, HiGHS by default; a persistent session where the backend
    has one).

    Parameters
    ----------
    certificate : str, optional
        Write the search's proof there (JSON: each node's LP with its dual vector,
        :mod:`s3vm.bounds.lp_proof`), for ``s3vm check-certificate``.
    """

    problem: ClassVar[int] = 3

    name: ClassVar[str] = "bb-mip"
    #: peak bytes per n^2 entry (linear, rbf), measured: rbf (685-717 between n = 700
    #: and 1,500, docs/changelog.md): the kernel expansion over all points in every LP
    dense_bytes: ClassVar[tuple] = (0, 800)
    summary: ClassVar[str] = ("Bennett-Demiriz MIP by branch and bound on its LP relaxation "
                              "(--mu, --nu, --balance count)")
    problem_class: ClassVar[str] = "lp"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "mu", "nu", "balance", "positives")
    #: Its declarative model is the MIP its nodes relax: bd-mip's.
    modelers: ClassVar[tuple] = ("pyomo",)
    derived_constants = True  # big-M from an objective bound (docs/models.md)
    uses_groups = True  # rows on d in every node's LP; the search branches on whole groups
    in_place_settings: ClassVar[tuple] = ("mu", "nu")   # its declarative model is bd-mip's MIP
    update_model = update_problem3
    components: ClassVar[dict] = {**COMPONENTS, **NORM_COMPONENTS, **SIDES_COMPONENTS,
                                  **MIP_COMPONENTS}
    options: ClassVar[tuple] = BranchAndBoundFormulation.options + (
        Option("certificate", "file", None, "write the proof of optimality (JSON) for s3vm "
               "check-certificate (bb-mip: each node's LP duals)", group=BNB_GROUP),
    )

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.mu <= 0:
            raise InputError("bb-mip needs mu > 0: the big-M bound derives from the 1-norm "
                             "penalty")
        if self.k_best > 1 and self.certificate is not None:
            raise InputError("bb-mip writes a certificate of the best labeling: give "
                             "certificate or k_best, not both")

    def labeling_problem(self, instance, settings, backend, profile, clock=None):
        """A :class:`s3vm.bounds.lp_relaxation.LPRelaxationProblem` on the model of ``bd-mip``."""

        positives = settings.positive_count(instance) if settings.balance == "count" else None
        return LPRelaxationProblem(self._mip(instance, settings), backend, profile, positives,
                                   links=instance.unlabeled_links(), clock=clock)

    def _mip(self, instance, settings):
        """The Bennett-Demiriz MIP of ``bd-mip``, which the nodes relax."""
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        return build_problem3(Problem3Data.from_instance(instance, settings), mu=settings.mu,
                              unlabeled="mip", nu=settings.nu, positives=positives,
                              links=instance.unlabeled_links())

    def declarative_model(self, instance, settings, modeler):
        return self._mip(instance, settings)

    def solving_given(self, given: GivenModel):
        """bd-mip's step on the given MIP, by a MIP solver (this driver would relax the user's
        model in place), reported under this name."""
        runner = get_formulation("bd-mip").solving_given(given)
        type(runner).name = self.name  # a class made for this call alone
        return runner

    def qualify(self, problem, result) -> None:
        """A search where some labeling's LP failed even cold (a kernel too close to singular
        for mu) answers ``feasible``, never ``optimal``, with the reason; its bound is dropped
        when a labeling had to be skipped (:meth:`LPRelaxationProblem.qualify`)."""
        bound_stands, note = problem.qualify()
        if not note:
            return
        if result.status == "optimal":
            result.status = "feasible"
        if not bound_stands and result.lower_bound is not None:
            result.info["dropped_lower_bound"] = result.lower_bound
            result.lower_bound = None
        if not bound_stands and result.certified_labels is not None:
            # a skipped labeling may lie anywhere: no label is proven
            result.certified_labels = np.zeros(len(result.certified_labels), dtype=bool)
        result.message = f"{result.message}; {note}" if result.message else note

    def write_certificate(self, instance, settings, problem, found) -> None:
        """Each node's LP again with its duals (:mod:`s3vm.bounds.lp_proof`), as a file."""
        write_certificate(self.certificate, lp_certificate_document(
            instance, settings, problem, found, self.abs_gap, self.rel_gap))

    def result_primal(self, problem, labels) -> dict:
        """w, b and the labeled slacks y of the MIP's solution at the final labeling."""
        return problem.primal(labels)
