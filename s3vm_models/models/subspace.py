"""The subspace of the subspace SDP and what is read from it (De Bie and Cristianini 2006,
section 7.2; docs/formulations.md#sdp-subspace).

Shared by the formulations ``sdp-subspace`` and ``sdp-lowrank`` and by their MOSEK Fusion models:
the basis V from the constrained spectral problem, the count balance s' M v+ = 2P - u, and the
readers of M that give labels without forming the n x n matrix V M V'.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.core.options import Option
from s3vm.data.instance import Instance
from s3vm.models.spectral import RULES, spectral_subspace
from s3vm.solvers.errors import InputError

DEFAULT_DIM = 4
DEFAULT_RULE = "nips"
GRAPHS = {"auto": "auto", "dense": "dense", "knn": "sparse"}   # option value -> spectral method


DIM = Option("dim", "int", DEFAULT_DIM, "columns d of the spectral subspace", minimum=1)
SPECTRAL_RULE = Option(
    "spectral_rule", "choice", DEFAULT_RULE, "the spectral problem of V: nips (De Bie and "
    "Cristianini 2003, section 4.1: dominant eigenvectors of the normalised affinity; their "
    "USPS experiment) or book (2006, (7.6))", choices=RULES)
GRAPH = Option(
    "graph", "choice", "auto", "the spectral step's affinity: dense rbf on all pairs, a "
    "symmetric 10-nearest-neighbour rbf graph (knn), or auto (dense up to 1000 points)",
    choices=tuple(GRAPHS))
THRESHOLD = Option(
    "threshold_quantile", "float", None, "clip each column of V at this quantile of its "
    "absolute values (2003, footnote 4; off by default)", minimum=0.0, maximum=1.0,
    open_min=True)
SPECTRAL_OPTIONS = (DIM, SPECTRAL_RULE, GRAPH, THRESHOLD)


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


def subspace_basis(instance: Instance, dim: int, rule: str = DEFAULT_RULE,
                   graph: str = "auto", threshold_quantile: Optional[float] = None,
                   **spectral_options) -> np.ndarray:
    """V (n x d, instance row order) of the constrained spectral problem on the instance.

    The affinity is the spectral step's own rbf (width: mean nearest-neighbour distance), not the
    SVM kernel. ``rule``, ``graph`` and ``threshold_quantile`` are the formulations' options
    :data:`SPECTRAL_RULE`, :data:`GRAPH` and :data:`THRESHOLD`; ``spectral_options`` go to
    :func:`s3vm.models.spectral.spectral_subspace`.
    """
    return spectral_subspace(instance.X, instance.label, dim, group=instance.group, rule=rule,
                             method=GRAPHS[graph], threshold_quantile=threshold_quantile,
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
