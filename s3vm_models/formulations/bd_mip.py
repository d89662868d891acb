"""The Bennett-Demiriz S3VM as a mixed-integer program (Bennett and Demiriz 1998, as Fung and
Mangasarian 2001 write it; Problem 3 of docs/formulations.md#bd-mip):

    min  e'y + mu e'z + nu e'(r + s)
    s.t. D(A w - e g) + y >= e,  -z <= w <= z,
         B w - e g + r + M (e - d) >= e,   -B w + e g + s + M d >= e,
         y, z, r, s >= 0,  d binary  (optionally e'd = P)

d_j = 1 labels unlabeled point j as +1. Its optimum is the minimum over labelings of the LP that
keeps only the chosen side's constraint; M comes from :func:`problem3.big_m`.
"""

from __future__ import annotations

import numpy as np

from s3vm.solvers.errors import InputError
from s3vm.models.problem3 import Problem3Data, build_problem3, primal_values, unlabeled_scores
from s3vm.formulations.families.pyomo import PyomoFormulation


class BennettDemirizMIP(PyomoFormulation):
    problem = 3
    name = "bd-mip"
    #: peak bytes per n^2 entry (linear, rbf), measured: rbf: the kernel expansion over all points
    dense_bytes = (0, 640)
    summary = "Bennett-Demiriz S3VM mixed-integer program (--mu, --nu, --balance count)"
    problem_class = "mip"
    settings_used = ("kernel", "sigma", "mu", "nu", "balance", "positives")

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.mu <= 0:
            raise InputError("bd-mip needs mu > 0: the big-M bound derives from the 1-norm penalty")

    def build(self, instance, settings):
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        return build_problem3(Problem3Data.from_instance(instance, settings), mu=settings.mu,
                              unlabeled="mip", nu=settings.nu, positives=positives)

    def fill(self, result, model, instance, settings):
        primal = primal_values(model)
        result.primal = primal
        result.decision_values = unlabeled_scores(model)
        result.labels = np.where(primal["d"] > 0.5, 1, -1).astype(int)
