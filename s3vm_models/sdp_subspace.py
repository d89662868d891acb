"""``sdp-subspace``: the subspace approximation of the SDP relaxation.

De Bie and Cristianini (2006), section 7.2; (2003), section 3; docs/formulations.md#sdp-subspace.

The label matrix is restricted to Gamma = V M V' with V (n x d) from the constrained spectral
problem (7.6) (:mod:`s3vm.spectral`) and M (d x d) PSD:

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

from .conic_formulation import (ROUNDING, ConicFormulation, ConicModel, problem2_penalties,
                                round_scores, svm_lmi)
from .data import Instance
from .settings import Settings
from .subspace import (DEFAULT_DIM, DIM, balance_row, check_dim_fits, subspace_basis,
                       subspace_readers, subspace_scores)

__all__ = ["DEFAULT_DIM", "SubspaceFamily", "SubspaceSDP", "subspace_basis"]


class SubspaceFamily(ConicFormulation):
    """What ``sdp-subspace`` and ``sdp-lowrank`` share: the option ``dim``, its checks, and labels
    read from M and V (``read["M"]``, ``read["V"]``) without an n x n matrix."""

    is_relaxation: ClassVar[bool] = False

    options: ClassVar[tuple] = (DIM, ROUNDING)

    def check(self, instance: Instance, settings: Settings) -> None:
        super().check(instance, settings)
        check_dim_fits(self.dim, instance)

    def infeasible_advice(self, instance: Instance, settings: Settings) -> str:
        advice = super().infeasible_advice(instance, settings)
        return (f"{advice}; the spectral subspace of dimension d = {self.dim} may miss what the "
                f"full relaxation reaches: raise --dim (at most "
                f"{instance.label_map().size}) or use sdp")

    def prepare(self, instance: Instance, settings: Settings,
                V: Optional[np.ndarray] = None) -> tuple[Optional[np.ndarray], np.ndarray]:
        """What every builder of the family starts with: the checks, then (C, V) with C the
        penalties of Problem 2 (None: hard margin) and V defaulting to :func:`subspace_basis`."""
        self.check(instance, settings)
        C = problem2_penalties(instance, settings)
        V = subspace_basis(instance, self.dim) if V is None else np.asarray(V, dtype=float)
        return C, V

    def labels_from(self, built: ConicModel, instance: Instance,
                    settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        if "M" not in built.read or "V" not in built.read:
            return super().labels_from(built, instance, settings)
        scores = subspace_scores(built.read["V"](), built.read["M"](), instance, self.rounding)
        return round_scores(scores, instance, settings)


class SubspaceSDP(SubspaceFamily):
    """The subspace SDP of De Bie and Cristianini (2006), section 7.2 (an approximation: no
    lower bound).

    Parameters
    ----------
    dim : int
        d, the number of columns of V (1 <= d <= u + 1; default 4).
    rounding : {"gamma", "eigenvector"}
        Labels from Gamma[U, i+] (De Bie and Cristianini 2003, section 4.2) or from the
        dominant eigenvector of V M V'.
    """

    name: ClassVar[str] = "sdp-subspace"
    #: peak bytes per n^2 entry (linear, rbf), measured: the n x n blocks of the subspace model and its CVXPY copies
    dense_bytes: ClassVar[tuple] = (1400, 1400)
    summary: ClassVar[str] = "subspace approximation of the SDP relaxation (Gamma = V M V')"

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
        from .fusion.sdp_subspace import build_subspace

        return build_subspace(self, instance, settings)
