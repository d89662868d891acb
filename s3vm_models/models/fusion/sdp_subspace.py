"""The subspace SDP (``sdp-subspace``) as a MOSEK Fusion model.

The same problem as :meth:`s3vm.formulations.sdp_subspace.SubspaceSDP.build_cvxpy`:

    min  t
    s.t. M PSD,   diag(V M V') <= 1,   mu >= 0,  nu >= 0,
         [[K o (V M V'), 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD
         (count balance: s' M v+ = 2P - u)

M is NOT a Fusion PSD matrix variable: it is the vector ``M`` of its d(d+1)/2 upper-triangle
entries (scalar variables), and "M PSD" is an LMI of size d on them. So M enters the main LMI as
scalars and the CBF file holds two PSDCONs and no PSDVAR (see :mod:`s3vm.models.fusion`).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.models.conic import ConicModel
from s3vm.models.fusion import Lmi, fusion, levels, svm_border, variable
from s3vm.models.subspace import balance_row, subspace_readers


def sym_coefficients(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Coefficients of the entries m_ab (a <= b, ``np.triu_indices(d)`` order) of a symmetric M in
    p' M q, row by row for the rows p of P and q of Q: p_a q_b + p_b q_a (a < b), p_a q_a."""
    d = P.shape[1]
    ia, ja = np.triu_indices(d)
    c = P[:, ia] * Q[:, ja] + P[:, ja] * Q[:, ia]
    c[:, ia == ja] /= 2.0
    return c


def sym_matrix(values: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d x d matrix of its upper-triangle entries (``np.triu_indices(d)`` order)."""
    ia, ja = np.triu_indices(d)
    M = np.zeros((d, d))
    M[ia, ja] = values
    M[ja, ia] = values
    return M


def build_subspace(form, instance: Instance, settings: Settings,
                   V: Optional[np.ndarray] = None, name: str = "sdp_subspace") -> ConicModel:
    """The Fusion model of ``form`` (a :class:`~s3vm.formulations.sdp_subspace.SubspaceSDP`);
    ``V`` defaults to the spectral subspace, as in its CVXPY builder."""

    mf = fusion()
    C, V = form.prepare(instance, settings, V)
    K = form.kernel(instance, settings)
    n, u, d = instance.n, instance.u, form.dim
    q = d * (d + 1) // 2
    ia, ja = np.triu_indices(d)
    iv, jv = np.triu_indices(n)

    model = mf.Model(name)
    try:
        m = variable(model, "M", q)
        nu = variable(model, "nu", n, nonneg=True)
        mu = None if C is None else variable(model, "mu", n, nonneg=True)
        t = model.variable("t", 1, mf.Domain.unbounded())

        psd = Lmi(d)
        psd.term(m, np.arange(q), ia, ja, 1.0)
        psd.constrain(model, "M_psd")

        diag = sym_coefficients(V, V)                      # row i: diag(V M V')_i
        model.constraint("diag", mf.Expr.mul(mf.Matrix.dense(diag), m), mf.Domain.lessThan(1.0))

        main = Lmi(n + 1)
        main.term(m, np.arange(q), iv[:, None], jv[:, None],
                  K[iv, jv][:, None] * sym_coefficients(V[iv], V[jv]))
        svm_border(main, n, nu, mu, t, C)
        main.constrain(model, "svm")

        if settings.balance == "count":
            s, vp = balance_row(V, instance)
            row = sym_coefficients(s[None, :], vp[None, :])
            rhs = float(2 * settings.positive_count(instance) - u)
            model.constraint("balance", mf.Expr.mul(mf.Matrix.dense(row), m),
                             mf.Domain.equalsTo(rhs))
        model.objective("approximation", mf.ObjectiveSense.Minimize, t)
    except BaseException:
        model.dispose()
        raise

    return ConicModel(model, read=subspace_readers(V, lambda: sym_matrix(levels(m, q), d),
                                                   instance),
                      info={"lmi_sizes": [n + 1, d], "dim": d})
