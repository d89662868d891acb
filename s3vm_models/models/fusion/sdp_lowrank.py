"""The low-rank dual of the subspace SDP (``sdp-lowrank``) as a MOSEK Fusion model.

The same problem as :meth:`s3vm.formulations.sdp_lowrank.LowRankSDP.build_cvxpy`, written as the
minimum of the negative (``info["objective_sign"] = -1``):

    min  1'lam - 2 1'a  (+ eta (2P - u) with the count balance)
    s.t. 0 <= a <= C (hard margin: a >= 0),  lam >= 0,
         [[V' diag(lam) V + eta B, W(a)'], [W(a), I_r]] PSD,   W(a) = G' diag(a) V

with B = (v+ s' + s v+')/2. All variables (a, lam, eta) are scalars in one LMI of size d + r.
M is the dual matrix of the LMI's top-left block; MOSEK's dual of a PSD constraint of a
minimisation is PSD, as CVXPY's is.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.models.conic import ConicModel
from s3vm.models.fusion import Lmi, fusion, levels, variable
from s3vm.models.subspace import balance_row, subspace_readers


def build_lowrank(form, instance: Instance, settings: Settings, V: Optional[np.ndarray] = None,
                  G: Optional[np.ndarray] = None, name: str = "sdp_lowrank") -> ConicModel:
    """The Fusion model of ``form`` (a :class:`~s3vm.formulations.sdp_lowrank.LowRankSDP`); ``V``
    and ``G`` default to the spectral subspace and ``form.factor``, as in its CVXPY builder."""

    mf = fusion()
    C, V = form.prepare(instance, settings, V)
    n, u, d = instance.n, instance.u, form.dim
    if G is None:
        G, _ = form.factor(instance, settings)
    G = np.asarray(G, dtype=float)
    r = G.shape[1]
    ia, ja = np.triu_indices(d)

    model = mf.Model(name)
    try:
        a = variable(model, "a", n, nonneg=True)
        lam = variable(model, "lam", n, nonneg=True)
        if C is not None:
            model.constraint("a_max", a, mf.Domain.lessThan(np.asarray(C, dtype=float).tolist()))

        lmi = Lmi(d + r)
        # top-left: (V' diag(lam) V)_pq = sum_i lam_i V_ip V_iq
        i = np.arange(n)[:, None]
        lmi.term(lam, i, ia[None, :], ja[None, :], V[:, ia] * V[:, ja])
        # bottom-left: W_kp = sum_i a_i G_ik V_ip at (d + k, p)
        k, p = np.meshgrid(np.arange(r), np.arange(d), indexing="ij")
        lmi.term(a, np.arange(n)[:, None, None], d + k[None], p[None],
                 G[:, :, None] * V[:, None, :])
        lmi.const(d + np.arange(r), d + np.arange(r), 1.0)
        objective = mf.Expr.sub(mf.Expr.sum(lam), mf.Expr.mul(2.0, mf.Expr.sum(a)))
        if settings.balance == "count":
            s, vp = balance_row(V, instance)
            B = (np.outer(vp, s) + np.outer(s, vp)) / 2.0
            eta = model.variable("eta", 1, mf.Domain.unbounded())
            lmi.term(eta, 0, ia, ja, B[ia, ja])
            rhs = float(2 * settings.positive_count(instance) - u)
            objective = mf.Expr.add(objective, mf.Expr.mul(rhs, eta))
        con = lmi.constrain(model, "lmi")
        model.objective("negated_value", mf.ObjectiveSense.Minimize, objective)
    except BaseException:
        model.dispose()
        raise

    def m_value():
        Z = np.asarray(con.dual(), dtype=float).reshape(d + r, d + r)[:d, :d]
        return (Z + Z.T) / 2.0

    read = subspace_readers(V, m_value, instance)
    read["a"] = lambda: levels(a, n)
    return ConicModel(model, read=read,
                      info={"lmi_sizes": [d + r], "dim": d, "rank": r, "objective_sign": -1})
