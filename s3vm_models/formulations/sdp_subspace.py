"""``sdp-subspace``: the subspace approximation of the SDP relaxation.

De Bie and Cristianini (2006), section 7.2; (2003), section 3; docs/formulations.md#sdp-subspace.

The label matrix is restricted to Gamma = V M V' with V (n x d) from constrained spectral
transduction (:mod:`s3vm.models.spectral`: the 2003 paper's rule by default, the chapter's (7.6)
with ``spectral_rule="book"``) and M (d x d) PSD:

    min  t
    s.t. M PSD,   diag(V M V') <= 1,   mu >= 0,  nu >= 0,
         [[K o (V M V'), 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD

(hard margin: mu = 0 and no C term). The diagonal is an inequality: equality is in general
infeasible in a subspace, and in the full space raising a diagonal entry never hurts.

It is an approximation, not a relaxation: Gamma need not be 1 on the diagonal, its value is not a
bound on min_y D(y), and no lower bound is reported. Restricting the SDP can only raise its value,
so ``sdp`` <= ``sdp-subspace``. With d = u + 1, the dimension of range(L) less the constant
column, V spans every vector that is constant on each labeled class, the feasible sets of Gamma
coincide and the two optima are equal (De Bie and Cristianini 2006, section 7.2.2, say d = u; the
count is u + 1 because the label column of L survives the constant-column rule).

Labels (De Bie and Cristianini 2003, section 4.2): by the constant-column rule every row of V of
a labeled positive point is the same vector v+ and every labeled negative row is -v+, so all
columns of Gamma of labeled points agree up to sign. The relaxed unlabeled labels are the column
of a positive labeled point on the unlabeled rows, gamma_u = Gamma[U, i+] = V_U M v+,
thresholded. The count balance is the linear sum_{j in U} Gamma[j, i+] = 2P - u, the ``sdp``'s
e'g = 2P - u.

Groups (the ``group`` column, De Bie and Cristianini 2006, sections 7.3.1 and 7.3.2) enter
through L: every column of V is s_i times one value on the rows of a group, so Gamma = V M V'
meets them for any M, and d is at most 1 + the number of free groups (u + 1 without groups).
"""

from __future__ import annotations

from typing import ClassVar, Optional

import numpy as np

from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.families.subspace import SubspaceFamily
from s3vm.models.conic import ConicModel, svm_lmi
from s3vm.models.fusion.sdp_subspace import build_subspace
from s3vm.models.subspace import DEFAULT_DIM, balance_row, subspace_basis, subspace_readers

__all__ = ["DEFAULT_DIM", "SubspaceSDP", "subspace_basis"]

class SubspaceSDP(SubspaceFamily):
    """The subspace SDP of De Bie and Cristianini (2006), section 7.2 (an approximation: no
    lower bound).

    Parameters
    ----------
    dim : int
        d, the number of columns of V (1 <= d <= u + 1; default 4).
    spectral_rule : {"nips", "book"}
        The spectral problem of V: De Bie and Cristianini (2003), section 4.1 (default), or
        their (2006) (7.6).
    graph : {"auto", "dense", "knn"}
        The spectral step's affinity (auto: dense up to 1000 points, a 10-NN graph beyond).
    threshold_quantile : float, optional
        Clip each column of V at this quantile of its absolute values (2003, footnote 4).
    rounding : {"gamma", "eigenvector"}
        Labels from Gamma[U, i+] (De Bie and Cristianini 2003, section 4.2) or from the
        dominant eigenvector of V M V'.
    """

    name: ClassVar[str] = "sdp-subspace"
    components: ClassVar[dict] = {
        "M": "the d x d PSD matrix of the label matrix Gamma = V M V' (variable 'M')",
        "t, nu, mu": "the SVM LMI's variables (minimise t)",
        "constraints": "[the SVM LMI, diag(V M V') <= 1, the count balance]"}
    #: peak bytes per n^2 entry (linear, rbf), measured: the n x n blocks of the subspace model and
    #: its CVXPY copies
    dense_bytes: ClassVar[tuple] = (1400, 1400)
    #: and per n^2 d^2 under a CVXPY backend (``--solver scs``, ...): V M V' as an affine
    #: expression has an n x n block of coefficients for each of M's entries (at d = 40: 596 MiB
    #: at n = 60, 2.1 GiB at n = 150, a slope of 54 bytes; docs/changelog.md, peak memory)
    cvxpy_bytes_per_dim2: ClassVar[float] = 64
    summary: ClassVar[str] = "subspace approximation of the SDP relaxation (Gamma = V M V')"

    def dense_bytes_per_entry(self, settings: Settings, backend=None) -> float:
        """The n x n blocks, and under a CVXPY backend the n^2 d^2 coefficients of V M V'."""
        base = super().dense_bytes_per_entry(settings, backend)
        if getattr(backend, "model_kind", None) == "cvxpy":
            return base + self.cvxpy_bytes_per_dim2 * self.dim ** 2
        return base

    def memory_advice(self, settings: Settings, backend=None) -> str:
        if getattr(backend, "model_kind", None) == "cvxpy":
            return (f"leave out --solver (psd-barrier forms no CVXPY model), take a smaller "
                    f"--dim than {self.dim}, or use sdp-lowrank")
        return super().memory_advice(settings, backend)

    def build_cvxpy(self, instance: Instance, settings: Settings,
                    V: Optional[np.ndarray] = None) -> ConicModel:
        """The CVXPY model; ``V`` defaults to :func:`subspace_basis` (tests may pass their own)."""
        import cvxpy as cp

        C, V = self.prepare(instance, settings, V)
        K = self.kernel(instance, settings)
        n, u, d = instance.n, instance.u, self.dim
        M = cp.Variable((d, d), PSD=True, name="M")
        t, lmi = svm_lmi(K, V @ M @ V.T, C)
        constraints = [lmi, cp.sum(cp.multiply(V @ M, V), axis=1) <= 1]
        if settings.balance == "count":
            s, vp = balance_row(V, instance)
            constraints.append(s @ M @ vp == 2 * settings.positive_count(instance) - u)
        problem = cp.Problem(cp.Minimize(t), constraints)
        return ConicModel(problem, read=subspace_readers(
            V, lambda: np.asarray(M.value, dtype=float), instance),
            info={"lmi_sizes": [n + 1, d], "dim": d})

    def build_fusion(self, instance: Instance, settings: Settings) -> ConicModel:
        return build_subspace(self, instance, settings)
