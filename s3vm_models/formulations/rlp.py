"""RLP, the robust linear program of Bennett and Mangasarian (1992) as Fung and Mangasarian
(2001) state it (docs/formulations.md#rlp):

    min e'y  s.t.  D(A w - e g) + y >= e,  y >= 0

on the labeled points only; the unlabeled points are classified by sign(x'w - g).
"""

from s3vm.formulations.families.supervised_lp import SupervisedLinearLP
from s3vm.models.problem3 import COMPONENTS


class RLP(SupervisedLinearLP):
    name = "rlp"
    # Without unlabeled points the estimator keeps the robust LP rather than the 1-norm SVM.
    supervised_formulation = "rlp"
    #: peak bytes per n^2 entry (linear, rbf), measured: rbf: the kernel expansion over all points
    dense_bytes = (0, 640)
    summary = "robust linear program (Bennett-Mangasarian) on the labeled points"
    settings_used = ("kernel", "sigma")
    components = COMPONENTS

    def norm_weight(self, settings):
        return None
