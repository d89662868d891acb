"""The reduced SDP relaxation of Problem 2 (``sdp``) as a MOSEK Fusion model.

The same problem as :meth:`s3vm.formulations.sdp.SDPRelaxation.build_cvxpy`, with the same groups
(Gamma = L Gamma_c L', :class:`s3vm.data.instance.LabelMap`):

    min  t
    s.t. [[1, g'], [g, G]] PSD,   diag(G) = 1,   mu >= 0,  nu >= 0,
         [[K o (L Gamma_c L'), 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD

(hard margin: no mu). The variables are all scalar: g (``gamma_u``, one per free
representative, m), the strict upper triangle of G (``Gamma_uu``, m(m-1)/2; its diagonal is the
constant 1), nu, mu, t. Entry (i, j) of K o Gamma is K_ij s_i s_j times a constant 1 (i and j
share a representative), g (one of them is tied to the labeled class) or an entry of G. Both LMIs
are affine expressions of the scalars, so the CBF file holds two PSDCONs and no PSD variable.
Without groups m = u.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.models.conic import ConicModel, balance_coefficients
from s3vm.models.fusion import Lmi, fusion, levels, svm_border, upper_pairs, variable


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
        Gives the labels and the groups (its :meth:`~s3vm.data.instance.Instance.label_map`).
    settings : Settings
        Its ``balance``: with ``count``, sum_(j in U) y_j = 2P - u as a row in g.
    """

    mf = fusion()
    n = instance.n
    lm = instance.label_map()
    m = lm.size - 1
    K = np.asarray(K, dtype=float)
    im, jm = upper_pairs(m)

    # Classify every entry i <= j of K o Gamma by the representatives of i and j.
    iv, jv = np.triu_indices(n)
    a, b = lm.rep[iv], lm.rep[jv]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    coef = K[iv, jv] * lm.sign[iv] * lm.sign[jv]
    fixed = lo == hi                                   # Gamma_c's diagonal: 1
    on_g = (lo == 0) & (hi > 0)                        # Gamma_c[0, k] = g[k - 1]
    on_G = (lo > 0) & ~fixed                          # Gamma_c[lo, hi], off the diagonal
    # Position of (lo - 1, hi - 1) in the strict upper triangle of G, row by row.
    p, q = lo[on_G] - 1, hi[on_G] - 1
    pair = p * m - p * (p + 1) // 2 + (q - p - 1)

    model = mf.Model(name)
    try:
        g = variable(model, "gamma_u", m)
        Goff = variable(model, "Gamma_uu", len(im))
        nu = variable(model, "nu", n, nonneg=True)
        mu = None if C is None else variable(model, "mu", n, nonneg=True)
        t = model.variable("t", 1, mf.Domain.unbounded())

        # [[1, g'], [g, G]] PSD, the diagonal of G fixed to 1.
        if m:
            head = Lmi(m + 1)
            head.const(np.arange(m + 1), np.arange(m + 1), 1.0)
            head.term(g, np.arange(m), 0, 1 + np.arange(m), 1.0)
            head.term(Goff, np.arange(len(im)), 1 + im, 1 + jm, 1.0)
            head.constrain(model, "head")

        # [[K o Gamma, v], [v', corner]] PSD with v = 1 - mu + nu, corner = t - 2 C'mu.
        main = Lmi(n + 1)
        main.const(iv[fixed], jv[fixed], coef[fixed])
        main.term(g, hi[on_g] - 1, iv[on_g], jv[on_g], coef[on_g])
        main.term(Goff, pair, iv[on_G], jv[on_G], coef[on_G])
        svm_border(main, n, nu, mu, t, C)
        main.constrain(model, "svm")

        if settings.balance == "count":
            c, shift = balance_coefficients(instance)
            rhs = float(2 * settings.positive_count(instance) - instance.u + shift)
            # With no free representative the balance is 0 = rhs: kept, so that the model
            # is infeasible exactly when the CVXPY model is.
            lhs = mf.Expr.dot(c.tolist(), g) if m else mf.Expr.mul(0.0, t)
            model.constraint("balance", lhs, mf.Domain.equalsTo(rhs))
        model.objective("relaxation", mf.ObjectiveSense.Minimize, t)
    except BaseException:
        model.dispose()
        raise

    unl = instance.unlabeled
    rep_u, sign_u = lm.rep[unl], lm.sign[unl]
    L = lm.matrix()

    def head_value():
        gv = levels(g, m)
        Gc = np.eye(m + 1)
        Gc[0, 1:] = Gc[1:, 0] = gv
        Gc[1 + im, 1 + jm] = Gc[1 + jm, 1 + im] = levels(Goff, len(im))
        return Gc

    def gamma_u():
        return sign_u * np.concatenate([[1.0], levels(g, m)])[rep_u]

    def gamma_full():
        return np.asarray(L @ np.asarray(L @ head_value()).T)   # L Gamma_c L', Gamma_c symmetric

    return ConicModel(model, read={"gamma_u": gamma_u, "gamma_full": gamma_full},
                      info={"lmi_sizes": [n + 1, m + 1]})
