"""MOSEK Fusion builders of the SDP formulations (Problem 2).

Fusion models can be built and written (``Model.writeTask`` to ``.cbf``/``.ptf``) without a
MOSEK licence; only ``Model.solve`` needs one. So ``s3vm export --format cbf|ptf`` works
wherever the ``mosek`` package is installed, and the ``mosek-fusion`` backend solves them where a
licence is.

Modelling rule: every linear matrix inequality is an affine expression of SCALAR variables in
``Domain.inPSDCone`` (a CBF ``PSDCON`` with ``HCOORD``/``DCOORD`` entries). No PSD matrix
variable appears inside a second LMI: MOSEK writes that case to CBF in a form other readers
misread. :class:`Lmi` collects the entries of one such matrix and adds the constraint.
"""

from __future__ import annotations

import numpy as np

from s3vm.solvers.errors import SolverUnavailableError


def fusion():
    """The ``mosek.fusion`` module, or a one-line error saying how to install it."""
    try:
        import mosek.fusion as mf
    except ImportError as exc:
        raise SolverUnavailableError(
            f"MOSEK Fusion models need the mosek package ({exc}; pip install s3vm[mosek])"
        ) from None
    return mf


def upper_pairs(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of the strict upper triangle of an m x m matrix, row by row: the order of
    a vector variable holding the off-diagonal entries of a symmetric matrix."""
    return np.triu_indices(m, k=1)


class Lmi:
    """An m x m symmetric affine matrix  D + sum_k x_k H_k  of scalar Fusion variables.

    ``const(i, j, value)`` adds to D, ``term(var, idx, i, j, coef)`` adds ``coef * var[idx]``
    at (i, j); both mirror (i, j) to (j, i) when i != j. Arrays broadcast. ``constrain`` adds
    the matrix to the model in ``Domain.inPSDCone(m)``.
    """

    def __init__(self, size: int):
        self.size = size
        self._const: list = []           # (rows, cols, values)
        self._terms: dict = {}           # id(var) -> (var, [(entry, index, coef)])

    @staticmethod
    def _mirror(i, j, index, value):
        """Broadcast to flat arrays and add the mirror image (j, i) of every off-diagonal entry."""
        i, j, index, value = (a.ravel() for a in np.broadcast_arrays(
            np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64),
            np.asarray(index, dtype=np.int64), np.asarray(value, dtype=float)))
        off = i != j
        keep = np.concatenate([value, value[off]]) != 0
        return tuple(np.concatenate([a, b[off]])[keep]
                     for a, b in ((i, j), (j, i), (index, index), (value, value)))

    def const(self, i, j, value) -> None:
        rows, cols, _, vals = self._mirror(i, j, 0, value)
        self._const.append((rows, cols, vals))

    def term(self, var, idx, i, j, coef) -> None:
        if var is None:
            return
        rows, cols, index, coefs = self._mirror(i, j, idx, coef)
        self._terms.setdefault(id(var), (var, []))[1].append(
            (rows * self.size + cols, index, coefs))

    def expression(self):
        """The m x m Fusion expression (coefficients of repeated entries add up)."""
        import scipy.sparse as sp

        mf = fusion()
        m = self.size

        def coo(rows, cols, vals, shape):
            A = sp.coo_matrix((vals, (rows, cols)), shape=shape)
            A.sum_duplicates()
            A.eliminate_zeros()
            return A.row.astype(np.int32).tolist(), A.col.astype(np.int32).tolist(), A.data.tolist()

        parts = []
        for var, pieces in self._terms.values():
            entry, index, coef = (np.concatenate([p[k] for p in pieces]) for k in range(3))
            rows, cols, vals = coo(entry, index, coef, (m * m, int(var.getSize())))
            if vals:
                A = mf.Matrix.sparse(m * m, int(var.getSize()), rows, cols, vals)
                parts.append(mf.Expr.mul(A, var))
        const = [np.concatenate([c[k] for c in self._const]) if self._const
                 else np.zeros(0) for k in range(3)]
        rows, cols, vals = coo(const[0].astype(np.int64), const[1].astype(np.int64), const[2],
                               (m, m))
        D = mf.Expr.constTerm(mf.Matrix.sparse(m, m, rows, cols, vals))
        if not parts:
            return D
        return mf.Expr.add(mf.Expr.reshape(mf.Expr.add(parts), m, m), D)

    def constrain(self, model, name: str):
        mf = fusion()
        return model.constraint(name, self.expression(), mf.Domain.inPSDCone(self.size))


def svm_border(lmi: Lmi, n: int, nu, mu, t, C) -> None:
    """The last row and column of the SVM's LMI [[K o Gamma, v], [v', corner]] (size n + 1):
    v = 1 - mu + nu and corner = t - 2 C'mu (hard margin: ``mu`` None, v = 1 + nu, corner t)."""
    lmi.const(np.arange(n), n, 1.0)
    lmi.term(nu, np.arange(n), np.arange(n), n, 1.0)
    lmi.term(t, 0, n, n, 1.0)
    if mu is not None:
        lmi.term(mu, np.arange(n), np.arange(n), n, -1.0)
        lmi.term(mu, np.arange(n), n, n, -2.0 * np.asarray(C, dtype=float))


def variable(model, name: str, size: int, nonneg: bool = False):
    """A vector of ``size`` scalar variables (free, or >= 0), None when size is 0."""
    if size == 0:
        return None
    mf = fusion()
    domain = mf.Domain.greaterThan(0.0) if nonneg else mf.Domain.unbounded()
    return model.variable(name, size, domain)


def levels(var, size: int) -> np.ndarray:
    """The solution values of a variable from :func:`variable` (zeros when it has size 0)."""
    if var is None:
        return np.zeros(size)
    return np.asarray(var.level(), dtype=float)
