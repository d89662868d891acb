"""Building blocks for large Pyomo models without Python loops over constraints.

A constraint block is given as a sparse matrix and kept in CSR form (Pyomo's MatrixConstraint,
repaired below), so that no per-row expression is built unless a consumer asks for one: a
100,000-row block builds in about a second instead of seven (docs/changelog.md).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import scipy.sparse as sp


def var_list(*components) -> list:
    """The VarData objects of the given Var components, in index order, concatenated."""
    out = []
    for comp in components:
        if comp.is_indexed():
            out.extend(comp[i] for i in comp.index_set())
        else:
            out.append(comp)
    return out


def matrix_constraint(A, x: Sequence, lb: Optional[np.ndarray] = None,
                      ub: Optional[np.ndarray] = None):
    """A Pyomo constraint block for the rows of ``lb <= A x <= ub`` (None: that side free).

    ``A`` is any scipy sparse matrix or dense array with ``len(x)`` columns. The block stores the
    CSR arrays and builds no expression until a consumer asks for one (docs/changelog.md).
    """
    A = sp.csr_matrix(A)
    A.sum_duplicates()
    m, n = A.shape
    if n != len(x):
        raise ValueError(f"{n} columns for {len(x)} variables")
    lower = [None] * m if lb is None else np.broadcast_to(lb, (m,)).astype(float).tolist()
    upper = [None] * m if ub is None else np.broadcast_to(ub, (m,)).astype(float).tolist()
    return _matrix_constraint_class()(A.data.tolist(), A.indices.tolist(), A.indptr.tolist(),
                                      lower, upper, list(x))


_CLASSES = {}


def _matrix_constraint_class():
    """Pyomo's MatrixConstraint, repaired for Pyomo 6.10.

    As shipped, (1) it inherits ``keys``/``values``/``items`` from ``collections.abc.Mapping``
    ahead of IndexedComponent's, so ``component_data_objects(sort=...)``, which every writer and
    solver interface calls, raises TypeError; (2) its rows never set ``_expr``, which the
    persistent solver interfaces read. The subclasses below restore both; rows build their
    expression on first request and cache it (persistent interfaces compare it by identity).
    """
    if not _CLASSES:
        import weakref

        from pyomo.core.base.matrix_constraint import MatrixConstraint, _MatrixConstraintData
        from pyomo.core.expr.numvalue import value
        from pyomo.core.expr.relational_expr import InequalityExpression, RangedExpression

        class MatrixRow(_MatrixConstraintData):
            __slots__ = ()

            @property
            def expr(self):
                expr = getattr(self, "_expr", None)
                if expr is None:
                    lo, body, up = self.lower, self.body, self.upper
                    if up is None:
                        expr = InequalityExpression((lo, body), False)
                    elif lo is None:
                        expr = InequalityExpression((body, up), False)
                    else:
                        expr = RangedExpression((lo, body, up), (False, False))
                    self._expr = expr
                return expr

            def to_bounded_expression(self, evaluate_bounds=False):
                if evaluate_bounds:
                    lower, upper = self.lower, self.upper
                    return (None if lower is None else value(lower), self.body,
                            None if upper is None else value(upper))
                return self.lower, self.body, self.upper

            # A bound may be an expression of mutable Params (bind_diagonal): compare its value.
            def has_lb(self):
                lower = self.lower
                return lower is not None and value(lower) != float("-inf")

            def has_ub(self):
                upper = self.upper
                return upper is not None and value(upper) != float("inf")

        class SparseMatrixConstraint(MatrixConstraint):
            def construct(self, data=None):
                if self._constructed:
                    return
                self._constructed = True
                ref = weakref.ref(self)
                self._data = tuple(MatrixRow(i, ref) for i in range(len(self._lower)))

            def keys(self, sort=None, ordered=None):
                return iter(range(len(self._data)))

            def values(self, sort=None, ordered=None):
                return iter(self._data)

            def items(self, sort=None, ordered=None):
                return zip(range(len(self._data)), self._data)

        _CLASSES["matrix"] = SparseMatrixConstraint
    return _CLASSES["matrix"]


def tie_binaries(binaries, links):
    """The rows that make binary labels keep a :class:`s3vm.solvers.bnb.links.Links` (b_j = 1
    labels position j +1): b_j = b_r for a member j of the class of its first member r on the
    same side, b_j + b_r = 1 on the opposite side, b_j = 1 or 0 for a fixed position. One
    matrix constraint (a component to assign to the model), exact for 0/1 values."""
    rows, cols, vals, rhs = [], [], [], []
    for j in links.fixed:
        rows.append(len(rhs))
        cols.append(int(j))
        vals.append(1.0)
        rhs.append(1.0 if links.sign[j] > 0 else 0.0)
    for members in links.classes:
        first = int(members[0])
        for j in members[1:]:
            same = links.sign[j] == links.sign[first]
            k = len(rhs)
            rows += [k, k]
            cols += [int(j), first]
            vals += [1.0, -1.0 if same else 1.0]
            rhs.append(0.0 if same else 1.0)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(len(rhs), links.u))
    b = np.asarray(rhs, dtype=float)
    return matrix_constraint(A, var_list(binaries), lb=b, ub=b)


def hstack_blocks(blocks: Sequence, n_rows: int):
    """Stack column blocks side by side; a block given as None is that many zero columns.

    Each entry is a (matrix or None, width) pair.
    """
    parts = []
    for block, width in blocks:
        if width == 0:
            continue
        parts.append(sp.csr_matrix((n_rows, width)) if block is None else sp.csr_matrix(block))
    return sp.hstack(parts, format="csr")


def bind_diagonal(block, first_column: int, coefficients: Sequence,
                  lower: Optional[Sequence] = None) -> None:
    """Make row j's entry in column ``first_column + j`` of a :func:`matrix_constraint` block
    the Pyomo expression ``coefficients[j]`` (and its lower bound ``lower[j]``), in place.

    The block keeps its CSR storage; only these entries become expressions (of mutable Params,
    say ``-model.big_m[j]``), which every writer and solver interface evaluates when it reads
    the row, so that changing the Param changes the row. The entry must be stored (nonzero).
    """
    data, indices, indptr = block._A_data, block._A_indices, block._A_indptr
    for j, coefficient in enumerate(coefficients):
        # Indices are sorted within a row (matrix_constraint sums duplicates), so a diagonal
        # block that comes last has its entry last: no scan of the row in the usual case.
        last = indptr[j + 1] - 1
        if last >= indptr[j] and indices[last] == first_column + j:
            position = last
        else:
            row = range(indptr[j], indptr[j + 1])
            position = next((p for p in row if indices[p] == first_column + j), None)
        if position is None:
            raise ValueError(f"row {j} stores no entry in column {first_column + j}")
        data[position] = coefficient
        if lower is not None:
            block._lower[j] = lower[j]
    for row in block._data:  # a row's cached expression was built from the old entries
        if getattr(row, "_expr", None) is not None:
            row._expr = None


def model_state(model) -> tuple:
    """A snapshot of what a user may change in a Pyomo model without editing a row in place:
    its components, which rows and objectives are active, every variable's domain, bounds and
    fixed value, and every mutable Param's value. Two equal snapshots mean the same model up to
    an expression edited in place (``constraint.set_value``)."""
    from pyomo.environ import Constraint, Objective, Param, SOSConstraint, Var, value

    names = tuple((c.name, type(c).__name__) for c in model.component_objects(descend_into=True))
    active = tuple(data.active for data in model.component_data_objects(
        (Constraint, Objective, SOSConstraint), active=None, descend_into=True))
    variables = tuple((str(var.domain), var.lb, var.ub, var.fixed,
                       var.value if var.fixed else None)
                      for var in model.component_data_objects(Var, descend_into=True))
    params = tuple(value(p) for comp in model.component_objects(Param, descend_into=True)
                   if comp.mutable for p in comp.values())
    objective = tuple(id(o.expr) for o in model.component_data_objects(Objective,
                                                                         descend_into=True))
    return names, active, variables, params, objective
