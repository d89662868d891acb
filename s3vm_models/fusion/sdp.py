"""The reduced SDP relaxation of Problem 2 (``sdp``) as a MOSEK Fusion model.

The same problem as :meth:`s3vm_models.sdp.SDPRelaxation.build_cvxpy`, rows ordered labeled
first:

    min  t
    s.t. [[1, g'], [g, G]] PSD,   diag(G) = 1,   mu >= 0,  nu >= 0,
         [[K o Gamma, 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD,
         Gamma = [[y_L y_L', y_L g'], [g y_L', G]]

(hard margin: no mu). The variables are all scalar: g (``gamma_u``, u), the strict upper
triangle of G (``Gamma_uu``, u(u-1)/2; its diagonal is the constant 1), nu, mu, t. Both LMIs are
affine expressions of them, so the CBF file holds two PSDCONs and no PSD variable.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..conic_formulation import ConicModel
from ..data import Instance
from ..settings import Settings
from . import Lmi, fusion, levels, upper_pairs, variable


def build_sdp(K: np.ndarray, C: Optional[np.ndarray], instance: Instance, settings: Settings,
              name: str = "sdp") -> ConicModel:
    """The Fusion model of the reduced SDP relaxation.

    Parameters
    ----------
    K : ndarray (n, n)
        Kernel matrix in the instance's row order.
    C : ndarray (n,) or None
        Per-point upper bounds of the dual variables (None: hard margin).
    instance : Instance
        Gives the labeled/unlabeled rows and the labels.
    settings : Settings
        Its ``balance``: with ``count``, sum(gamma_u) = 2P - u.
    """
    mf = fusion()
    lab, unl = instance.labeled, instance.unlabeled
    l, u, n = len(lab), len(unl), instance.n
    order = np.concatenate([lab, unl])
    Kp = np.asarray(K, dtype=float)[np.ix_(order, order)]
    yl = instance.label[lab].astype(float)
    iu, ju = upper_pairs(u)

    model = mf.Model(name)
    try:
        g = variable(model, "gamma_u", u)
        Goff = variable(model, "Gamma_uu", len(iu))
        nu = variable(model, "nu", n, nonneg=True)
        mu = None if C is None else variable(model, "mu", n, nonneg=True)
        t = model.variable("t", 1, mf.Domain.unbounded())

        # [[1, g'], [g, G]] PSD, the diagonal of G fixed to 1.
        head = Lmi(u + 1)
        head.const(np.arange(u + 1), np.arange(u + 1), 1.0)
        head.term(g, np.arange(u), 0, 1 + np.arange(u), 1.0)
        head.term(Goff, np.arange(len(iu)), 1 + iu, 1 + ju, 1.0)
        head.constrain(model, "head")

        # [[K o Gamma, v], [v', corner]] PSD with v = 1 - mu + nu, corner = t - 2 C'mu.
        main = Lmi(n + 1)
        a, b = np.meshgrid(np.arange(l), np.arange(l), indexing="ij")
        main.const(a[a <= b], b[a <= b], (Kp[:l, :l] * np.outer(yl, yl))[a <= b])
        main.const(l + np.arange(u), l + np.arange(u), np.diag(Kp)[l:])
        a, j = np.meshgrid(np.arange(l), np.arange(u), indexing="ij")
        main.term(g, j, a, l + j, Kp[:l, l:] * yl[:, None])
        main.term(Goff, np.arange(len(iu)), l + iu, l + ju, Kp[l + iu, l + ju])
        main.const(np.arange(n), n, 1.0)
        main.term(nu, np.arange(n), np.arange(n), n, 1.0)
        main.term(t, 0, n, n, 1.0)
        if mu is not None:
            main.term(mu, np.arange(n), np.arange(n), n, -1.0)
            main.term(mu, np.arange(n), n, n, -2.0 * np.asarray(C, dtype=float)[order])
        main.constrain(model, "svm")

        if settings.balance == "count":
            rhs = float(2 * settings.positive_count(instance) - u)
            model.constraint("balance", mf.Expr.sum(g), mf.Domain.equalsTo(rhs))
        model.objective("relaxation", mf.ObjectiveSense.Minimize, t)
    except BaseException:
        model.dispose()
        raise

    def gamma_u():
        return levels(g, u)

    def gamma_full():
        gv = levels(g, u)
        G = np.eye(u)
        G[iu, ju] = G[ju, iu] = levels(Goff, len(iu))
        Gamma = np.block([[np.outer(yl, yl), np.outer(yl, gv)], [np.outer(gv, yl), G]])
        inv = np.empty(n, dtype=int)
        inv[order] = np.arange(n)
        return Gamma[np.ix_(inv, inv)]

    return ConicModel(model, read={"gamma_u": gamma_u, "gamma_full": gamma_full},
                      info={"lmi_sizes": [n + 1, u + 1]})
