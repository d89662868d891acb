"""The output-space Shor relaxation of ``bb-sdp`` (:mod:`s3vm.models.shor_relaxation`) as a MOSEK
Fusion model.

The same rows as the node SDP the search solves: X of order N is held by its upper triangle as
scalar variables ``X`` (N(N+1)/2, row by row, the diagonal included), the matrix assembled from
them is put in the PSD cone (one PSDCON in a CBF file, no PSD variable: the rule of
:mod:`s3vm.models.fusion`), every row of the :class:`~s3vm.models.shor_relaxation.RowList` is a
linear constraint (``equalities`` and ``inequalities``, in the list's order), and the objective is
<C~, X>.
"""

from __future__ import annotations

import numpy as np

from s3vm.models.conic import ConicModel
from s3vm.models.fusion import Lmi, fusion, levels


def build_shor(rows, Ct: np.ndarray, name: str = "bb_sdp_root") -> ConicModel:
    """The Fusion model of ``rows`` (a :class:`s3vm.models.shor_relaxation.RowList`) with
    objective <C~, X>."""
    import scipy.sparse as sp

    mf = fusion()
    N = rows.N
    iu, ju = np.triu_indices(N)
    npairs = iu.size
    index = np.full((N, N), -1, dtype=np.int64)
    index[iu, ju] = np.arange(npairs)
    index[ju, iu] = np.arange(npairs)
    k, p, q, c = rows.entries()
    A = sp.csr_matrix((c, (k, index[p, q])), shape=(len(rows), npairs))
    A.sum_duplicates()
    b = np.asarray(rows.b, dtype=float)
    eq = np.asarray(rows.eq, dtype=bool)
    weight = np.where(iu == ju, 1.0, 2.0) * np.asarray(Ct, dtype=float)[iu, ju]

    model = mf.Model(name)
    try:
        X = model.variable("X", npairs, mf.Domain.unbounded())
        lmi = Lmi(N)
        lmi.term(X, np.arange(npairs), iu, ju, 1.0)
        lmi.constrain(model, "psd")

        def add(name, mask, domain):
            sub = A[np.flatnonzero(mask)].tocoo()
            if sub.shape[0] == 0:
                return
            M = mf.Matrix.sparse(sub.shape[0], npairs, sub.row.astype(np.int32).tolist(),
                                 sub.col.astype(np.int32).tolist(), sub.data.tolist())
            model.constraint(name, mf.Expr.mul(M, X), domain(b[mask].tolist()))

        add("equalities", eq, mf.Domain.equalsTo)
        add("inequalities", ~eq, mf.Domain.greaterThan)
        model.objective("relaxation", mf.ObjectiveSense.Minimize,
                        mf.Expr.dot(weight.tolist(), X))
    except BaseException:
        model.dispose()
        raise

    def matrix():
        values = levels(X, npairs)
        out = np.zeros((N, N))
        out[iu, ju] = values
        out[ju, iu] = values
        return out

    return ConicModel(model, read={"X": matrix}, info={"order": N, "rows": len(rows)})
