"""``sdp-subspace``: the subspace approximation of the SDP relaxation (seed 003, 7.2; seed 001, 3).

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
coincide and the two optima are equal (seed 003 says d = u; the count is u + 1 because the label
column of L survives the constant-column rule).

Labels (seed 001, section 4.2): by the constant-column rule every row of V of a labeled positive
point is the same vector v+ and every labeled negative row is -v+, so all columns of Gamma of
labeled points agree up to sign. The relaxed unlabeled labels are the column of a positive labeled
point on the unlabeled rows, gamma_u = Gamma[U, i+] = V_U M v+, thresholded. The count balance is
the linear sum_{j in U} Gamma[j, i+] = 2P - u, the ``sdp``'s e'g = 2P - u.

Groups (the ``group`` column, seed 003, 7.3.1 and 7.3.2) enter through L: every column of V is
s_i times one value on the rows of a group, so Gamma = V M V' meets them for any M, and d is at
most 1 + the number of free groups (u + 1 without groups).
"""

from __future__ import annotations

from typing import ClassVar, Optional

import numpy as np

from .conic_formulation import (ROUNDING, ConicFormulation, ConicModel, problem2_penalties,
                                round_scores, svm_lmi)
from .data import Instance
from .options import Option
from .solvers.errors import InputError
from .settings import Settings
from .spectral import spectral_subspace

DEFAULT_DIM = 4


DIM = Option("dim", "int", DEFAULT_DIM, "columns d of the spectral subspace", minimum=1)


def check_dim_fits(dim: int, instance: Instance) -> None:
    """InputError when d exceeds the dimension of the label-constrained subspace: u + 1, or
    1 + the number of free groups when groups tie points together."""
    free = instance.label_map().size - 1
    if dim > free + 1:
        why = (f"with u = {instance.u} unlabeled points" if free == instance.u else
               f"with {free} free groups (the group column ties the {instance.u} unlabeled "
               "points together)")
        raise InputError(f"d larger than u + 1: dim = {dim}, but {why} the label-constrained "
                         f"subspace has dimension {free + 1}")


def subspace_basis(instance: Instance, dim: int, **spectral_options) -> np.ndarray:
    """V (n x d, instance row order) of the constrained spectral problem on the instance.

    The affinity is the spectral step's own rbf (width: mean nearest-neighbour distance), not the
    SVM kernel; ``spectral_options`` go to :func:`s3vm.spectral.spectral_subspace`.
    """
    return spectral_subspace(instance.X, instance.label, dim, group=instance.group,
                             **spectral_options)


def positive_anchor(instance: Instance) -> int:
    """Row index i+ of the first labeled positive point: gamma_u is Gamma[U, i+]."""
    return int(np.flatnonzero(instance.label == 1)[0])


def balance_row(V: np.ndarray, instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(s, v+) with s = V_U' 1 and v+ = V[i+]: the count balance is s' M v+ = 2P - u."""
    return V[instance.unlabeled].sum(axis=0), V[positive_anchor(instance)]


def subspace_readers(V: np.ndarray, m_value, instance: Instance) -> dict:
    """The readers of a subspace model from a reader of M: ``gamma_u`` (Gamma[U, i+]),
    ``gamma_full`` (V M V', small problems only), ``M`` and ``V``."""
    ip, unl = positive_anchor(instance), instance.unlabeled
    return {"gamma_u": lambda: V[unl] @ m_value() @ V[ip],
            "gamma_full": lambda: V @ m_value() @ V.T,
            "M": m_value,
            "V": lambda: V}


def psd_part(M: np.ndarray) -> np.ndarray:
    """The nearest PSD matrix (eigenvalues clipped at 0) of the symmetric part of M."""
    M = (np.asarray(M, dtype=float) + np.asarray(M, dtype=float).T) / 2.0
    w, Q = np.linalg.eigh(M)
    return (Q * np.maximum(w, 0.0)) @ Q.T


def subspace_scores(V: np.ndarray, M: np.ndarray, instance: Instance,
                    rounding: str = "gamma") -> np.ndarray:
    """Scores of the unlabeled points from Gamma = V M V', without forming Gamma.

    ``gamma``: Gamma[U, i+] = V_U M v+. ``eigenvector``: the dominant eigenvector of Gamma (the
    top left singular vector of V M^(1/2)), signed to agree with the labeled points.
    """
    M = psd_part(M)
    if rounding == "gamma":
        return V[instance.unlabeled] @ (M @ V[positive_anchor(instance)])
    w, Q = np.linalg.eigh(M)
    F = V @ (Q * np.sqrt(np.maximum(w, 0.0)))
    left, _, _ = np.linalg.svd(F, full_matrices=False)
    top = left[:, 0]
    lab = instance.labeled
    if top[lab] @ instance.label[lab] < 0:
        top = -top
    return top[instance.unlabeled]


class SubspaceFamily(ConicFormulation):
    """What ``sdp-subspace`` and ``sdp-lowrank`` share: the option ``dim``, its checks, and labels
    read from M and V (``read["M"]``, ``read["V"]``) without an n x n matrix."""

    is_relaxation: ClassVar[bool] = False

    options: ClassVar[tuple] = (DIM, ROUNDING)

    def check(self, instance: Instance, settings: Settings) -> None:
        super().check(instance, settings)
        check_dim_fits(self.dim, instance)

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
    """The subspace SDP of seed 003, 7.2 (an approximation: no lower bound).

    Parameters
    ----------
    dim : int
        d, the number of columns of V (1 <= d <= u + 1; default 4).
    rounding : {"gamma", "eigenvector"}
        Labels from Gamma[U, i+] (seed 001, 4.2) or from the dominant eigenvector of V M V'.
    """

    name: ClassVar[str] = "sdp-subspace"
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
