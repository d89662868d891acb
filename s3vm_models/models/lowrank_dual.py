"""The low-rank dual of the SDP relaxations of Problem 2, and its certified value
(docs/formulations.md#low-rank-dual).

With K = G G' (G n x r) and the label matrix restricted to Gamma = V M V' (V n x d, M PSD,
diag(V M V') <= 1), min over M of max over a of 2 1'a - a'(K o V M V')a equals

    max_{a, lam, eta}  2 1'a - 1'lam - eta rhs
    s.t.  0 <= a <= C  (hard margin: a >= 0),  lam >= 0,
          [[V' diag(lam) V + eta B, W(a)'], [W(a), I_r]]  PSD,     W(a) = G' diag(a) V,

(eta and B only with the count balance s'M v+ = rhs, B = (v+ s' + s v+')/2). M is the dual
matrix of the top-left block. Two relaxations are this one model:

- ``sdp`` (the full relaxation of De Bie and Cristianini 2006, Propositions 7.3/7.4) is the case
  V = L, the label map of the instance (one entry +-1 per row: every row's label is a signed
  copy of a representative's), so M is the representatives' label matrix Gamma_c; d = 1 + the
  number of free representatives and the LMI has size d + r instead of n + 1, with 2n scalar
  variables instead of d(d + 1)/2: interior-point solvers work with a Schur complement of the
  number of scalar variables, so this form is the fast one.
- ``sdp-subspace``/``sdp-lowrank`` is the case V = the spectral basis (d small).

A certified value: for any a in the box, any lam >= 0 and any eta, let
S = V' diag(lam) V + eta B - W(a)'W(a) (the Schur complement of the LMI). If S is not PSD, adding
delta = max(0, -lambda_min(S)) / lambda_min(V'V) to every lam makes it PSD, since V'V >= lambda_min
I. Then (a, lam + delta, eta) is feasible, and its objective is a lower bound on the relaxation's
optimum (weak duality: the inner maximum over M is at most 1'lam + eta rhs). So
:func:`certified_value` turns any solver output, however inexact, into a proven lower bound.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import scipy.sparse as sp

from s3vm.models.conic import ConicModel

#: The named components of the CVXPY problem :func:`lowrank_dual_model` builds (name -> meaning),
#: what ``s3vm.build`` documents for sdp and sdp-lowrank (CVXPY variables by name in
#: ``problem.var_dict``).
COMPONENTS = {
    "a": "SVM dual variables, 0 <= a <= C (CVXPY variable 'a')",
    "lam": "multipliers of diag(V M V') <= 1 (variable 'lam')",
    "eta": "multiplier of the count balance (variable 'eta', balance='count' only)",
    "constraints[-1]": "the LMI [[V' diag(lam) V + eta B, W(a)'], [W(a), I]] >> 0; its dual "
                       "matrix's top-left block is M, the relaxed label matrix on V",
    "objective": "minimise -(2 1'a - 1'lam - eta rhs): the relaxation's value, negated",
}

# Relative margin for the rounding of a computed smallest eigenvalue (times the matrix's norm).
EIG_SAFETY = 64 * np.finfo(float).eps


def lowrank_operators(G: np.ndarray, V) -> tuple:
    """(B_W, B_V): vec(G' diag(a) V) = B_W a (r d x n) and vec(V' diag(lam) V) = B_V lam (d d x n).

    vec stacks columns (Fortran order); column i of B_W is vec(g_i v_i') = v_i kron g_i. ``V``
    may be a scipy.sparse matrix with one nonzero per row (a label map): then both operators are
    sparse, with r and 1 entries per column.
    """
    n, r = G.shape
    d = V.shape[1]
    if sp.issparse(V):
        V = V.tocsr()
        if not np.all(np.diff(V.indptr) == 1):
            raise ValueError("a sparse V must have exactly one nonzero per row")
        col, val = V.indices, V.data
        rows = (col[:, None] * r + np.arange(r)[None, :]).ravel()
        cols = np.repeat(np.arange(n), r)
        BW = sp.csr_matrix(((val[:, None] * G).ravel(), (rows, cols)), shape=(r * d, n))
        BV = sp.csr_matrix((val * val, (col * d + col, np.arange(n))), shape=(d * d, n))
        return BW, BV
    BW = (V[:, :, None] * G[:, None, :]).reshape(n, d * r).T
    BV = (V[:, :, None] * V[:, None, :]).reshape(n, d * d).T
    return np.ascontiguousarray(BW), np.ascontiguousarray(BV)


def balance_matrix(balance: Optional[tuple], d: int) -> Optional[np.ndarray]:
    """B = (v+ s' + s v+')/2 of the count balance (s, v+, rhs), None without a balance."""
    if balance is None:
        return None
    s, vp, _ = balance
    return (np.outer(vp, s) + np.outer(s, vp)) / 2.0


def lowrank_dual_model(G: np.ndarray, V, C: Optional[np.ndarray],
                       balance: Optional[tuple] = None, beta: float = 1.0) -> ConicModel:
    """The CVXPY model of the low-rank dual on the rows of G and V (all points, or a working set).

    Parameters
    ----------
    G : ndarray (m, r)
        Kernel factor rows.
    V : ndarray (m, d) or scipy.sparse matrix with one nonzero per row
        Subspace rows (the label map L for the full relaxation).
    C : ndarray (m,) or None
        Upper bounds of a (None: hard margin).
    balance : (s, v+, rhs), optional
        The count balance s'M v+ = rhs (for a working set, s is still over all unlabeled points).
    beta : float
        Scale of the LMI by the congruence diag(I_d, beta I_r):
        [[top, beta W'], [beta W, beta^2 I_r]] PSD, the same constraint, better scaled for SCS.
        The dual matrix's top-left block (M) is unchanged by it.

    Returns
    -------
    ConicModel
        ``model`` minimises the negative of 2 1'a - 1'lam (- eta rhs); ``read`` has ``M``, ``a``,
        ``lam``, ``eta`` and ``certified`` (:func:`certified_value` at the solver's point);
        ``info`` has ``lmi_sizes``, ``dim``, ``rank`` and ``objective_sign`` (-1);
        ``parameters`` {"C": the cp.Parameter of the bounds of a} (none for the hard margin):
        a new C re-solves the compiled problem (CVXPY's DPP; ``s3vm.Built.update``).
    """
    import cvxpy as cp

    m, r = G.shape
    d = V.shape[1]
    BW, BV = lowrank_operators(G, V)
    a = cp.Variable(m, nonneg=True, name="a")
    lam = cp.Variable(m, nonneg=True, name="lam")
    W = cp.reshape(BW @ a, (r, d), order="F")
    top = cp.reshape(BV @ lam, (d, d), order="F")
    value = 2 * cp.sum(a) - cp.sum(lam)
    C_param = None if C is None else cp.Parameter(m, nonneg=True, name="C",
                                                  value=np.asarray(C, dtype=float))
    constraints = [] if C is None else [a <= C_param]
    B = balance_matrix(balance, d)
    eta = None
    if balance is not None:
        eta = cp.Variable(name="eta")
        top = top + eta * B
        value = value - eta * balance[2]
    lmi = cp.bmat([[top, beta * W.T], [beta * W, beta * beta * np.eye(r)]]) >> 0
    constraints.append(lmi)
    problem = cp.Problem(cp.Minimize(-value), constraints)

    def m_value():
        Z = np.asarray(lmi.dual_value, dtype=float)[:d, :d]
        return (Z + Z.T) / 2.0

    def eta_value():
        return 0.0 if eta is None else float(eta.value)

    def certified():
        return certified_value(G, V, np.asarray(a.value, dtype=float),
                               np.asarray(lam.value, dtype=float), eta_value(),
                               None if C_param is None else C_param.value, balance)

    return ConicModel(problem, read={
        "M": m_value,
        "a": lambda: np.asarray(a.value, dtype=float),
        "lam": lambda: np.asarray(lam.value, dtype=float),
        "eta": eta_value,
        "certified": certified,
    }, info={"lmi_sizes": [d + r], "dim": d, "rank": r, "objective_sign": -1},
        parameters={} if C_param is None else {"C": C_param})


def certified_value(G: np.ndarray, V, a: np.ndarray, lam: np.ndarray, eta: float,
                    C: Optional[np.ndarray], balance: Optional[tuple] = None) -> float:
    """The objective of a feasible point of the low-rank dual built from (a, lam, eta): a proven
    lower bound on the relaxation's optimum whatever the accuracy of (a, lam, eta).

    ``a`` is clipped into its box and ``lam`` at 0; every lam is then raised by the amount that
    makes the Schur complement PSD (see the module notes). Returns -inf for non-finite input.
    """
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(lam)) and np.isfinite(eta)):
        return -np.inf
    a = np.maximum(a, 0.0)
    if C is not None:
        a = np.minimum(a, C)
    lam = np.maximum(lam, 0.0)
    if sp.issparse(V):
        V = V.tocsr()
        W = np.asarray((V.T @ (a[:, None] * G)).T)  # G' diag(a) V without a dense V
        top = (V.T @ sp.diags(lam) @ V).toarray()
        gram = (V.T @ V).toarray()
    else:
        V = np.asarray(V, dtype=float)
        W = G.T @ (a[:, None] * V)
        top = V.T @ (lam[:, None] * V)
        gram = V.T @ V
    S = top - W.T @ W
    rhs = 0.0
    if balance is not None:
        S = S + eta * balance_matrix(balance, V.shape[1])
        rhs = balance[2]
    S = (S + S.T) / 2.0
    low = float(np.linalg.eigvalsh(S)[0])
    low -= EIG_SAFETY * max(1.0, float(np.linalg.norm(S)))
    shift = 0.0
    if low < 0:
        gram_low = float(np.linalg.eigvalsh((gram + gram.T) / 2.0)[0])
        if gram_low <= 0:
            return -np.inf
        shift = -low / gram_low * (1.0 + 1e-12)
    return float(2.0 * a.sum() - (lam + shift).sum() - eta * rhs)
