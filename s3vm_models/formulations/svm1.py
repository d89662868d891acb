"""The 1-norm SVM linear program (Fung and Mangasarian 2001; docs/formulations.md#svm1):

    min e'y + mu e'z  s.t.  D(A w - e g) + y >= e,  -z <= w <= z,  y >= 0

on the labeled points only (``--mu``); the unlabeled points are classified by sign(x'w - g).
"""

from s3vm.formulations.families.pyomo import update_problem3
from s3vm.formulations.families.supervised_lp import SupervisedLinearLP
from s3vm.models.problem3 import COMPONENTS, NORM_COMPONENTS


class SVM1(SupervisedLinearLP):
    name = "svm1"
    #: peak bytes per n^2 entry (linear, rbf), measured: rbf: the kernel expansion over all points
    dense_bytes = (0, 640)
    summary = "1-norm SVM linear program on the labeled points (--mu)"
    settings_used = ("kernel", "sigma", "mu")
    in_place_settings = ("mu",)   # a mutable Param (the primal form; lp_form="dual" rebuilds)
    update_model = update_problem3
    components = {**COMPONENTS, **NORM_COMPONENTS}

    def norm_weight(self, settings):
        return settings.mu
