"""A CVXPY problem written as a Conic Benchmark Format (CBF, version 3) file.

The route is CVXPY's own conic form of the problem, the data it hands SCS
(``problem.get_problem_data(cvxpy.SCS)``): minimise c'x + d subject to b - A x in K, where K is
a product of the zero cone, the nonnegative orthant, second-order cones and PSD cones, the PSD
parts in SCS's scaled lower-triangular vectorisation (column by column, off-diagonal entries
times sqrt 2). Each part becomes a CBF constraint on the affine rows -A x + b: ``L=``, ``L+``
and ``Q`` rows in ``CON``, each PSD part a ``PSDCON`` whose matrix entries (unscaled) are the
rows' coefficients in ``HCOORD`` and constants in ``DCOORD``. The variables are CVXPY's
flattened ones, free (``F``). So the file is the problem CVXPY solves, after its
canonicalisation: its optimum is the problem's (a Maximize problem is written as OBJSENSE MAX
of the same objective). Problems with cones outside these four (exponential, power) or with a
quadratic objective are refused.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from s3vm.solvers.errors import InputError


def write_cvxpy_cbf(problem, path: str) -> None:
    """Write ``problem`` (a ``cvxpy.Problem``) to ``path`` as CBF (see the module)."""
    import cvxpy as cp

    data, _, _ = problem.get_problem_data(cp.SCS)
    dims = data["dims"]
    if dims.exp or dims.p3d or getattr(dims, "pnd", None) or data.get("P") is not None:
        raise InputError("only problems over the zero, nonnegative, second-order and PSD cones "
                         "are written as CBF")
    # SCS's arrays (its PSD vectorisation); the objective's constant from the cone program
    d = float(np.asarray(data["param_prob"].apply_parameters()[1]).ravel()[0])
    A = sp.csr_matrix(data["A"])
    c = np.asarray(data["c"], dtype=float).ravel()
    b = np.asarray(data["b"], dtype=float).ravel()
    sign = 1.0
    if isinstance(problem.objective, cp.Maximize):
        sign = -1.0  # CVXPY minimised -f: write max f
    G = sp.csr_matrix(-A)  # the rows G x + b lie in K
    n = c.size
    linear = dims.zero + dims.nonneg + sum(dims.soc)
    cones = ([("L=", dims.zero)] if dims.zero else []) \
        + ([("L+", dims.nonneg)] if dims.nonneg else []) + [("Q", k) for k in dims.soc]
    lines = ["VER", "3", "", "OBJSENSE", "MAX" if sign < 0 else "MIN", "",
             "VAR", f"{n} 1", f"F {n}", ""]
    psd = list(dims.psd)
    if psd:
        lines += ["PSDCON", str(len(psd))] + [str(k) for k in psd] + [""]
    if linear:
        lines += ["CON", f"{linear} {len(cones)}"] + [f"{name} {k}" for name, k in cones] + [""]
    objective = [(j, sign * c[j]) for j in np.flatnonzero(c)]
    if objective:
        lines += ["OBJACOORD", str(len(objective))]
        lines += [f"{j} {float(v)!r}" for j, v in objective] + [""]
    if d:
        lines += ["OBJBCOORD", repr(sign * float(d)), ""]
    top = G[:linear].tocoo()
    keep = top.data != 0
    if keep.any():
        lines += ["ACOORD", str(int(keep.sum()))]
        lines += [f"{i} {j} {float(v)!r}"
                  for i, j, v in zip(top.row[keep], top.col[keep], top.data[keep])] + [""]
    constants = [(i, b[i]) for i in np.flatnonzero(b[:linear])]
    if constants:
        lines += ["BCOORD", str(len(constants))]
        lines += [f"{i} {float(v)!r}" for i, v in constants] + [""]
    if psd:
        h, dd = _psd_entries(G[linear:], b[linear:], psd)
        if h:
            lines += ["HCOORD", str(len(h))] + h + [""]
        if dd:
            lines += ["DCOORD", str(len(dd))] + dd + [""]
    with open(path, "w", encoding="ascii") as fh:
        fh.write("\n".join(lines) + "\n")


def _psd_entries(G, b, sizes) -> tuple[list, list]:
    """HCOORD and DCOORD lines of the PSD parts: row k of a part is entry (i, j), i >= j, of
    its matrix in SCS's column-major lower triangle, scaled by sqrt 2 off the diagonal."""
    h, dd = [], []
    start = 0
    G = sp.csr_matrix(G)
    for con, size in enumerate(sizes):
        rows, cols = [], []
        for j in range(size):
            for i in range(j, size):
                rows.append(i)
                cols.append(j)
        rows, cols = np.array(rows), np.array(cols)
        scale = np.where(rows == cols, 1.0, np.sqrt(2.0))
        part = G[start:start + rows.size].tocoo()
        for k, var, value in zip(part.row, part.col, part.data):
            if value != 0:
                h.append(f"{con} {var} {rows[k]} {cols[k]} {float(value / scale[k])!r}")
        for k in np.flatnonzero(b[start:start + rows.size]):
            dd.append(f"{con} {rows[k]} {cols[k]} {float(b[start + k] / scale[k])!r}")
        start += rows.size
    return h, dd
