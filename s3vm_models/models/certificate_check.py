"""A checker of bb-sdp's and bb-mip's certificates of optimality (docs/models.md, "A certificate
anyone can check"), with numpy and scipy alone: no solver, and none of the search's code.

A certificate (:mod:`s3vm.bounds.shor_proof` and :mod:`s3vm.bounds.lp_proof` write them) holds
the instance, the incumbent labeling with its value V (and what attains it: bb-sdp's dual
multipliers, bb-mip's classifier w, g), and every node of the search tree: its partial
labeling, fate and the data that bounds it. The checker recomputes everything from the instance
(for bb-mip, :class:`Problem3LP` writes each node's LP from the math and the bound is the
Lagrangian one of its stated duals):

1. **The incumbent.** Its labeling meets the balance count and the groups, and the outputs
   v = K' Y alpha of its multipliers, scaled to meet y o v >= 1, have v'Cm v <= V (within the
   numerical tolerance): V is attained.
2. **The tree covers every labeling.** The root fixes exactly the labels the groups tie to
   labeled rows; each branched node has two children that fix one free position, with its whole
   group, to +1 and -1 (and the labels the count then forces): every labeling of the unlabeled
   rows that meets the count and the groups lies in exactly one leaf of the tree.
3. **Every leaf is closed.** A pruned node's bound, recomputed from its data, is at least
   V - tolerance; a leaf's labeling is the incumbent, or its value, bounded from below by its
   multipliers (1'alpha - alpha'Y K' Y alpha / 2), is; an infeasible node breaks the count or
   the groups, or its box holds no labeling.

A node's bound is recomputed from its proof (a child inherits its parent's bound when higher):

- ``sdp``: the box (L, U, lmd, umd) must hold the outputs of every labeling of the node whose
  value is at most V: |v_i| <= r_i = sqrt(V M_ii) (v'Cm v <= V, M = Cm^-1 = 2 K'), y_i v_i >= 1
  for a fixed label and |v_i| >= 1 for a free one. Every row is rebuilt from its name and the box
  (the constant X_00 = 1, x_i >= L_i, -x_i >= -U_i, V_ii >= lmd_i, -V_ii >= -umd_i, and the RLT
  products of two box sides), T must bound 1 + sum_i v_i^2, and the bound is
  b'y + T min(0, lambda_min(C~ - sum_k y_k A_k)) with y clipped at 0 on the inequality rows;
  it must agree with the value the certificate states.
- ``box``: the same box conditions decide the node alone: some point has no admissible output
  (no labeling of the node is at most V), or every free label is forced, and that labeling's
  multipliers bound its value.
- a leaf's ``alpha``: its value from below, as above.

Exit statuses of ``s3vm check-certificate``: 0 when the proof holds, 1 when it does not (the
reasons listed), 2 for a file that is not a certificate.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

FORMAT = "s3vm-certificate"
VERSION = 1
#: Relative slack of the numerical comparisons (bounds, values, the incumbent's value).
NUMERICAL = 1e-6
#: Relative slack of the box and trace conditions (the search widens its box by 1e-9).
BOX_SLACK = 1e-9
EIG_SAFETY = 64 * np.finfo(float).eps
ROW_KINDS = ("one", "xL", "xU", "dL", "dU", "cut")

__all__ = ["CertificateError", "CheckReport", "check_certificate", "Problem3LP", "FORMAT",
           "VERSION"]


class CertificateError(ValueError):
    """The input is not a certificate this checker reads (one line)."""


@dataclass
class CheckReport:
    """What the check found.

    Attributes
    ----------
    holds : bool
    value : float or None
        The incumbent's value V.
    tolerance : float
        Every labeling is proven to have a value at least ``value - tolerance``.
    nodes : int
    failures : list of str
        Why the proof does not hold (empty when it does).
    """

    holds: bool
    value: Optional[float]
    tolerance: float
    nodes: int
    failures: list = field(default_factory=list)

    def lines(self, limit: int = 10) -> list:
        if self.holds:
            return [f"certificate holds: every labeling has objective >= {self.value:.10g} - "
                    f"{self.tolerance:.3g}; the incumbent attains {self.value:.10g} "
                    f"({self.nodes} nodes checked)"]
        head = f"certificate fails: {len(self.failures)} problem(s)"
        more = len(self.failures) - limit
        return [head, *("  " + f for f in self.failures[:limit])] + \
            ([f"  ... and {more} more"] if more > 0 else [])


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise CertificateError(message)


def _array(value, name: str, shape=None, kind=float) -> np.ndarray:
    try:
        out = np.asarray(value, dtype=kind)
    except (TypeError, ValueError):
        raise CertificateError(f"{name} must be an array of numbers") from None
    _need(shape is None or out.shape == shape, f"{name} has shape {out.shape}, not {shape}")
    _need(kind is not float or bool(np.all(np.isfinite(out))), f"{name} holds non-finite values")
    return out


class _Labelings:
    """The data, the labels, the count and the groups of a certificate's problem: which
    labelings of the unlabeled rows there are."""

    def __init__(self, problem: dict):
        _need(isinstance(problem, dict), "problem must be an object")
        X = _array(problem.get("X"), "problem.X")
        _need(X.ndim == 2 and X.shape[0] >= 2, "problem.X must be a matrix of two rows or more")
        n = X.shape[0]
        label = _array(problem.get("label"), "problem.label", (n,), int)
        _need(bool(np.all(np.isin(label, (-1, 0, 1)))), "problem.label holds values other "
                                                        "than -1, 0, 1")
        self.X, self.label = X, label
        self.lab, self.unl = np.flatnonzero(label != 0), np.flatnonzero(label == 0)
        self.n, self.l, self.u = n, self.lab.size, self.unl.size
        _need(self.u >= 1 and self.l >= 1, "the problem needs labeled and unlabeled rows")
        balance = problem.get("balance")
        _need(balance in ("none", "count"), "problem.balance must be none or count")
        P = problem.get("positives")
        if balance == "count":
            _need(isinstance(P, int) and 0 <= P <= self.u, "problem.positives must be an "
                                                           "integer in 0..u")
        self.P = P if balance == "count" else None
        self._groups(problem.get("group"))

    def kernel(self, problem: dict) -> np.ndarray:
        """The n x n kernel matrix the problem names (linear, or rbf with its sigma)."""
        kernel, X = problem.get("kernel"), self.X
        _need(kernel in ("linear", "rbf"), "problem.kernel must be linear or rbf")
        if kernel == "linear":
            return X @ X.T
        sigma = float(problem.get("sigma", 0))
        _need(sigma > 0, "problem.sigma must be > 0")
        sq = np.sum(X * X, axis=1)
        return np.exp(-np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)
                      / (2 * sigma ** 2))

    def _groups(self, group) -> None:
        """The unlabeled positions' ties: ``fixed`` {position: label} and ``tie`` {position:
        (class key, side)} from the signed group ids (docs/data.md)."""
        self.fixed, self.tie = {}, {}
        if group is None:
            return
        g = _array(group, "problem.group", (self.n,), np.int64)
        anchor = {}
        for row in self.lab:
            if g[row] != 0:
                z = int(self.label[row]) * (1 if g[row] > 0 else -1)
                _need(anchor.setdefault(abs(int(g[row])), z) == z,
                      "problem.group contradicts the labels")
        for k, row in enumerate(self.unl):
            if g[row] == 0:
                continue
            key, side = abs(int(g[row])), (1 if g[row] > 0 else -1)
            if key in anchor:
                self.fixed[k] = anchor[key] * side
            else:
                self.tie[k] = (key, side)

    # -- labelings ----------------------------------------------------------------------------
    def root_partial(self) -> np.ndarray:
        partial = np.zeros(self.u, dtype=int)
        for k, label in self.fixed.items():
            partial[k] = label
        return partial

    def keeps_groups(self, partial: np.ndarray) -> bool:
        """Whether the (partial) labeling keeps the groups."""
        if any(partial[k] not in (0, label) for k, label in self.fixed.items()):
            return False
        seen = {}
        for k, (key, side) in self.tie.items():
            if partial[k] != 0 and seen.setdefault(key, partial[k] * side) != partial[k] * side:
                return False
        return True

    def group_of(self, k: int) -> list:
        """[(position, side)] of the group of free position k (itself alone if ungrouped)."""
        if k not in self.tie:
            return [(k, 1)]
        key = self.tie[k][0]
        return [(j, side) for j, (other, side) in self.tie.items() if other == key]

    def meets_count(self, labels: np.ndarray) -> bool:
        return self.P is None or int(np.sum(labels == 1)) == self.P

    def count_allows(self, partial: np.ndarray) -> bool:
        if self.P is None:
            return True
        return int(np.sum(partial == 1)) <= self.P and int(np.sum(partial == -1)) <= self.u - self.P


class _L2Problem(_Labelings):
    """bb-sdp's problem: S3VM-L2 without bias, in output space (module docstring)."""

    def __init__(self, problem: dict):
        super().__init__(problem)
        C, C_star = float(problem.get("C", 0)), float(problem.get("C_star", 0))
        _need(C > 0 and C_star > 0, "problem.C and problem.C_star must be > 0")
        K = self.kernel(problem)
        Cvec = np.where(self.label != 0, C, C_star)
        self.Kp = K + np.diag(0.5 / Cvec)                     # K' in file order
        order = np.r_[self.lab, self.unl]
        Kp_int = self.Kp[np.ix_(order, order)]
        inverse = np.linalg.inv(Kp_int)
        self.Cm = 0.25 * (inverse + inverse.T)               # 1/2 K'^-1, points labeled first
        self.Mdiag = 2.0 * np.diag(Kp_int)
        N = self.n + 1
        self.Ct = np.zeros((N, N))
        self.Ct[1:, 1:] = self.Cm

    def _parts(self, labels_U, alpha):
        y = self.label.astype(float).copy()
        y[self.unl] = labels_U
        a = np.maximum(_array(alpha, "alpha", (self.n,)), 0.0)
        q = y * a
        return y, a, q, self.Kp @ q

    def lower_value(self, labels_U, alpha) -> float:
        """1'alpha - alpha'Y K' Y alpha / 2 <= J(labels): weak duality of the labeling's QP."""
        _, a, q, Kq = self._parts(labels_U, alpha)
        return float(a.sum() - 0.5 * q @ Kq)

    def upper_value(self, labels_U, alpha) -> float:
        """v'Cm v at v = K' Y alpha scaled to meet y o v >= 1: >= J(labels) (inf if it
        cannot be scaled)."""
        y, _, q, v = self._parts(labels_U, alpha)
        margin = float(np.min(y * v))
        if margin <= 0:
            return math.inf
        return float(0.5 * q @ v) / min(1.0, margin) ** 2

    def admissible(self, partial: np.ndarray, value: float):
        """Per point (labeled first): the hull [lo, hi] of the outputs a labeling of ``partial``
        of value <= ``value`` may take, and their largest square; None when some point has
        none (no such labeling)."""
        r = np.sqrt(max(value, 0.0) * self.Mdiag)
        fixed = np.r_[self.label[self.lab], partial].astype(int)
        if np.any(r < 1.0):
            return None
        lo = np.where(fixed > 0, 1.0, -r)
        hi = np.where(fixed < 0, -1.0, r)
        return lo, hi, r * r


class Problem3LP(_Labelings):
    """bb-mip's problem: the Bennett-Demiriz MIP (Problem 3 of docs/formulations.md), its node
    LP relaxations written from the math, and their Lagrangian bounds.

    Variables (w, g, y, z, r, s, d): f = B w - g on the unlabeled rows (w over the features,
    or over the kernel columns of every point under rbf), labeled slacks y, |w| <= z, the
    slacks r, s of the two sides of each unlabeled point, d_j = 1 labelling it +1. Rows:
    d_i (A_i w - g) + y_i >= 1, w + z >= 0, -w + z >= 0, B_j w - g + r_j - M_j d_j >= 1 - M_j,
    -B_j w + g + s_j + M_j d_j >= 1, e'd = P (count), and the groups' rows on d. A node fixes
    d where its labels are set. For a bound that holds for every labeling of value at most V,
    each variable is boxed by what an optimum of such a labeling meets: |w|_1 <= W = V / mu,
    |g| <= G = max(V - 1, 0) + W max(min over +1 rows, min over -1 rows of |A_i|_inf) (the
    labeled rows), z <= W, y_i <= 1 + |A_i|_inf W + G, r_j, s_j <= 1 + |B_j|_inf W + G; and
    the big-M rows hold at such an optimum only when M_j >= 1 + |B_j|_inf W + G.
    """

    def __init__(self, problem: dict):
        super().__init__(problem)
        self.mu, self.nu = float(problem.get("mu", 0)), float(problem.get("nu", -1))
        _need(self.mu > 0 and self.nu >= 0, "problem.mu must be > 0 and problem.nu >= 0")
        K = self.kernel(problem)
        cols = self.X if problem.get("kernel") == "linear" else K
        self.A, self.B = cols[self.lab], cols[self.unl]
        self.d = self.label[self.lab].astype(float)
        self.M = _array(problem.get("M"), "problem.M", (self.u,))
        self.p = cols.shape[1]

    def limits(self, V: float):
        """(W, G, y's bounds, r's and s's bounds) for the labelings of value at most V."""
        W = max(V, 0.0) / self.mu
        row_inf = np.abs(self.A).max(axis=1)
        G = max(V - 1.0, 0.0) + W * max(row_inf[self.d > 0].min(), row_inf[self.d < 0].min())
        return W, G, 1.0 + row_inf * W + G, 1.0 + np.abs(self.B).max(axis=1) * W + G

    def value(self, labels_U, w, g) -> float:
        """The MIP's objective at (w, g) with the unlabeled rows labeled ``labels_U``."""
        w = _array(w, "w", (self.p,))
        loss_l = np.maximum(0.0, 1.0 - self.d * (self.A @ w - g)).sum()
        loss_u = np.maximum(0.0, 1.0 - np.asarray(labels_U) * (self.B @ w - g)).sum()
        return float(loss_l + self.mu * np.abs(w).sum() + self.nu * loss_u)

    def lp(self, partial: np.ndarray, V: float):
        """(c, R, lb, ub, lo, hi) of the node's LP: min c'x, lb <= R x <= ub, lo <= x <= hi
        (rows >= lb, or = where lb = ub), in the order of the class docstring."""
        import scipy.sparse as sp

        l, p, u = self.l, self.p, self.u
        W, G, ylim, rlim = self.limits(V)
        I_l, I_p, I_u = sp.eye(l), sp.eye(p), sp.eye(u)
        Z = lambda rows, cols: sp.csr_matrix((rows, cols))   # noqa: E731
        one_u = np.ones((u, 1))
        blocks = [
            [sp.csr_matrix(self.A * self.d[:, None]), -self.d[:, None], I_l, Z(l, p), Z(l, u),
             Z(l, u), Z(l, u)],
            [I_p, Z(p, 1), Z(p, l), I_p, Z(p, u), Z(p, u), Z(p, u)],
            [-I_p, Z(p, 1), Z(p, l), I_p, Z(p, u), Z(p, u), Z(p, u)],
            [sp.csr_matrix(self.B), -one_u, Z(u, l), Z(u, p), I_u, Z(u, u), -sp.diags(self.M)],
            [sp.csr_matrix(-self.B), one_u, Z(u, l), Z(u, p), Z(u, u), I_u, sp.diags(self.M)],
        ]
        lb = [np.ones(l), np.zeros(p), np.zeros(p), 1.0 - self.M, np.ones(u)]
        eq_rows, eq_rhs = [], []
        if self.P is not None:
            eq_rows.append(np.ones(u))
            eq_rhs.append(float(self.P))
        for members in self._tied_classes():
            (first, side0), rest = members[0], members[1:]
            for j, side in rest:
                row = np.zeros(u)
                row[first] = 1.0
                row[j] = -1.0 if side == side0 else 1.0
                eq_rows.append(row)
                eq_rhs.append(0.0 if side == side0 else 1.0)
        R = sp.bmat(blocks, format="csr")
        ge = R.shape[0]
        if eq_rows:
            left = sp.csr_matrix((len(eq_rows), R.shape[1] - u))
            R = sp.vstack([R, sp.hstack([left, sp.csr_matrix(np.array(eq_rows))])], format="csr")
        lb = np.concatenate(lb + [np.asarray(eq_rhs, dtype=float)])
        ub = np.concatenate([np.full(ge, np.inf), np.asarray(eq_rhs, dtype=float)])
        c = np.concatenate([np.zeros(p + 1), np.ones(l), self.mu * np.ones(p),
                            self.nu * np.ones(2 * u), np.zeros(u)])
        d_lo = np.where(partial > 0, 1.0, 0.0)
        d_hi = np.where(partial < 0, 0.0, 1.0)
        lo = np.concatenate([-W * np.ones(p), [-G], np.zeros(l + p + 2 * u), d_lo])
        hi = np.concatenate([W * np.ones(p), [G], ylim, W * np.ones(p), rlim, rlim, d_hi])
        return c, R, lb, ub, lo, hi

    def _tied_classes(self) -> list:
        classes: dict = {}
        for k in sorted(self.tie):
            key, side = self.tie[k]
            classes.setdefault(key, []).append((k, side))
        return [classes[key] for key in sorted(classes)]

    def dual_bound(self, partial: np.ndarray, V: float, duals) -> float:
        """min over the node's box of c'x - y'(R x - lb): a lower bound on its LP whatever the
        multipliers (clipped at 0 on the >= rows)."""
        c, R, lb, ub, lo, hi = self.lp(partial, V)
        y = _array(duals, "duals", (R.shape[0],))
        y = np.where(lb == ub, y, np.maximum(y, 0.0))
        rc = c - R.T @ y
        return float(y @ lb + np.minimum(rc * lo, rc * hi).sum())

    def big_m_holds(self, V: float) -> bool:
        _, _, _, rlim = self.limits(V)
        return bool(np.all(self.M >= rlim * (1.0 - BOX_SLACK)))


def _rows(names, L, U, lmd, umd, N: int):
    """(row, p, q, coef), b and the equality mask of the named rows, rebuilt from the box."""
    rows, p, q, c, b, eq = [], [], [], [], [], []
    for k, name in enumerate(names):
        _need(isinstance(name, list) and len(name) == 5, "a row name is [kind, i, j, t, eq]")
        kind, i, j, t, equality = name
        _need(kind in ROW_KINDS, f"row kind {kind!r} is not one this checker reads")
        i, j, t = int(i), int(j), int(t)
        if kind != "one":
            _need(0 <= i < N - 1, f"row {k} names point {i}")
        terms, rhs = [], 0.0
        if kind == "one":
            terms, rhs = [(0, 0, 1.0)], 1.0
        elif kind == "xL":
            terms, rhs = [(0, 1 + i, 1.0)], L[i]
        elif kind == "xU":
            terms, rhs = [(0, 1 + i, -1.0)], -U[i]
        elif kind == "dL":
            terms, rhs = [(1 + i, 1 + i, 1.0)], lmd[i]
        elif kind == "dU":
            terms, rhs = [(1 + i, 1 + i, -1.0)], -umd[i]
        else:
            _need(0 <= j < N - 1 and t in (1, 2, 3, 4), f"row {k} is no RLT row")
            ai = (U[i], L[i], L[i], U[i])[t - 1]
            aj = (U[j], L[j], U[j], L[j])[t - 1]
            sign = 1.0 if t <= 2 else -1.0
            terms = [(1 + i, 1 + j, sign), (0, 1 + j, -sign * ai), (0, 1 + i, -sign * aj)]
            rhs = -sign * ai * aj
        for pp, qq, cc in terms:
            rows.append(k)
            p.append(pp)
            q.append(qq)
            c.append(cc)
        b.append(rhs)
        eq.append(kind == "one")
        _need(bool(equality) == (kind == "one"),
              f"row {k}: a {kind} row is {'an equality' if kind == 'one' else 'an inequality'}")
    return (np.array(rows), np.array(p), np.array(q), np.array(c)), np.array(b), np.array(eq)


class _Checker:
    def __init__(self, document: dict):
        _need(isinstance(document, dict) and document.get("format") == FORMAT,
              f"not an {FORMAT} file")
        _need(document.get("version") == VERSION, f"certificate version "
                                                  f"{document.get('version')!r}, this checker "
                                                  f"reads {VERSION}")
        self.formulation = document.get("formulation")
        _need(self.formulation in ("bb-sdp", "bb-mip"), f"a certificate of "
                                                        f"{self.formulation!r}: this checker "
                                                        "reads bb-sdp's and bb-mip's")
        problem = document.get("problem")
        self.inst = _L2Problem(problem) if self.formulation == "bb-sdp" else Problem3LP(problem)
        tol = document.get("tolerance") or {}
        self.abs_gap = float(tol.get("abs_gap", 0.0))
        self.rel_gap = float(tol.get("rel_gap", 0.0))
        self.nodes = document.get("nodes")
        _need(isinstance(self.nodes, list) and self.nodes, "nodes must be a non-empty list")
        self.incumbent = document.get("incumbent")
        self.failures: list = []

    def fail(self, message: str) -> None:
        self.failures.append(message)

    # -- 1. the incumbent -----------------------------------------------------------------------
    def check_incumbent(self) -> Optional[float]:
        inc = self.incumbent
        if not isinstance(inc, dict):
            self.fail("no incumbent: nothing is proven optimal")
            return None
        labels = _array(inc.get("labels"), "incumbent.labels", (self.inst.u,), int)
        value = float(inc.get("value"))
        _need(math.isfinite(value), "incumbent.value must be finite")
        self.incumbent_labels = labels
        if not np.all(np.abs(labels) == 1):
            self.fail("the incumbent's labels are not all +1/-1")
        if not self.inst.meets_count(labels):
            self.fail("the incumbent breaks the balance count")
        if not self.inst.keeps_groups(labels):
            self.fail("the incumbent breaks the groups")
        if self.formulation == "bb-sdp":
            upper = self.inst.upper_value(labels, inc.get("alpha"))
            what = "multipliers"
        else:
            upper = self.inst.value(labels, inc.get("w"), float(inc.get("g")))
            what = "classifier (w, g)"
            if not self.inst.big_m_holds(value):
                self.fail("the big-M values M_j are below 1 + |B_j|_inf W + G: the MIP may cut "
                          "off labelings of value at most V")
        if upper > value + NUMERICAL * max(1.0, abs(value)):
            self.fail(f"the incumbent's {what} give a value of {upper:.10g}, above the "
                      f"stated {value:.10g}")
        return value

    # -- 2 and 3. the tree ------------------------------------------------------------------------
    def check_tree(self, V: float, tau: float) -> None:
        inst = self.inst
        by_id, children = {}, {}
        for node in self.nodes:
            _need(isinstance(node, dict) and isinstance(node.get("id"), int),
                  "every node needs an integer id")
            _need(node["id"] not in by_id, f"node {node['id']} appears twice")
            by_id[node["id"]] = node
        roots = [node for node in self.nodes if node.get("parent") is None]
        _need(len(roots) == 1, "the tree needs exactly one root")
        for node in self.nodes:
            parent = node.get("parent")
            if parent is not None and parent not in by_id:
                self.fail(f"node {node['id']}'s parent {parent} is missing")
            elif parent is not None:
                children.setdefault(parent, []).append(node)
        root = roots[0]
        if not np.array_equal(self._partial(root), inst.root_partial()):
            self.fail("the root fixes other labels than the groups tie to labeled rows")
        stack = [(root, -math.inf)]
        while stack:
            node, inherited = stack.pop()
            partial = self._partial(node)
            own = self.prove(node, partial, V)
            proven = max(own, inherited)
            claimed = node.get("bound")
            claimed = math.inf if node.get("bound_inf") else claimed
            nid = node["id"]
            if claimed is not None and claimed > proven + NUMERICAL * max(1.0, abs(claimed)):
                self.fail(f"node {nid} states the bound {claimed:.10g}, its data prove "
                          f"{proven:.10g}")
            status = node.get("status")
            kids = children.get(nid, [])
            if status == "branched":
                if self.check_children(node, partial, kids):
                    stack.extend((kid, proven) for kid in kids)
                continue
            if kids:
                self.fail(f"node {nid} is {status} but has children")
            if status == "open":
                self.fail(f"node {nid} is open: the search did not close the tree")
            elif status == "infeasible":
                if proven < math.inf and inst.count_allows(partial) \
                        and inst.keeps_groups(partial):
                    self.fail(f"node {nid} is called infeasible without a proof")
            elif status == "leaf":
                labels = partial
                if not (np.all(labels != 0) and inst.meets_count(labels)
                        and inst.keeps_groups(labels)):
                    continue   # no labeling of the problem
                if np.array_equal(labels, self.incumbent_labels):
                    continue
                if proven < V - tau:
                    self.fail(f"leaf {nid}: its value is proven only >= {proven:.10g}, below "
                              f"the incumbent's {V:.10g} - {tau:.3g}")
            elif status == "pruned":
                if proven < V - tau:
                    self.fail(f"node {nid} is pruned at a proven bound of {proven:.10g}, below "
                              f"the incumbent's {V:.10g} - {tau:.3g}")
            else:
                self.fail(f"node {nid} has the status {status!r}")

    def _partial(self, node) -> np.ndarray:
        partial = _array(node.get("partial"), f"node {node.get('id')}'s partial",
                         (self.inst.u,), int)
        _need(bool(np.all(np.isin(partial, (-1, 0, 1)))), f"node {node['id']}'s partial holds "
                                                          "values other than -1, 0, 1")
        return partial

    def check_children(self, node, partial, kids) -> bool:
        """Whether the two children of ``node`` split its labelings (module docstring, 2)."""
        inst, nid = self.inst, node["id"]
        if len(kids) != 2:
            self.fail(f"node {nid} is branched with {len(kids)} children, not 2")
            return False
        index = {kid.get("index") for kid in kids}
        labels = sorted(kid.get("label") for kid in kids)
        if len(index) != 1 or labels != [-1, 1]:
            self.fail(f"the children of node {nid} do not fix one position to +1 and -1")
            return False
        k = index.pop()
        if not isinstance(k, int) or not 0 <= k < inst.u or partial[k] != 0:
            self.fail(f"node {nid} branches on position {k}, which is not free")
            return False
        ok = True
        members = inst.group_of(k)
        side_k = dict(members)[k]
        for kid in kids:
            expected = partial.copy()
            for j, side in members:
                expected[j] = kid["label"] * side * side_k
            forced = expected.copy()
            if inst.P is not None and inst.count_allows(expected):
                plus, minus = int(np.sum(expected == 1)), int(np.sum(expected == -1))
                if plus == inst.P:
                    forced[forced == 0] = -1
                elif minus == inst.u - inst.P:
                    forced[forced == 0] = 1
            got = self._partial(kid)
            if not (np.array_equal(got, forced) or np.array_equal(got, expected)
                    and not inst.count_allows(expected)):
                self.fail(f"node {kid['id']} fixes other labels than its branch (and the count) "
                          "fix")
                ok = False
        return ok

    # -- node bounds ------------------------------------------------------------------------------
    def prove(self, node, partial, V: float) -> float:
        """The bound the node's own data prove (-inf without any), inf when they prove that no
        labeling of the node has a value at most V."""
        proof = node.get("proof")
        if proof is None:
            return -math.inf
        _need(isinstance(proof, dict), f"node {node['id']}'s proof must be an object")
        kind = proof.get("kind")
        if kind == "lp" and self.formulation == "bb-mip":
            bound = self.inst.dual_bound(partial, V, proof.get("duals"))
            stated = float(proof.get("value"))
            if abs(bound - stated) > NUMERICAL * max(1.0, abs(stated)):
                self.fail(f"node {node['id']}: its LP duals give the bound {bound:.10g}, not "
                          f"the stated {stated:.10g}")
            return bound
        if self.formulation != "bb-sdp":
            raise CertificateError(f"node {node['id']}: a {kind!r} proof in a certificate of "
                                   f"{self.formulation}")
        if kind is None:   # a leaf: its multipliers
            if not np.all(partial != 0):
                self.fail(f"node {node['id']} has a leaf's proof but free labels")
                return -math.inf
            return self.inst.lower_value(partial, proof.get("alpha"))
        if kind not in ("sdp", "box"):
            raise CertificateError(f"node {node['id']}: proof kind {kind!r} is not one this "
                                   "checker reads")
        L = _array(proof.get("L"), f"node {node['id']}'s L", (self.inst.n,))
        U = _array(proof.get("U"), f"node {node['id']}'s U", (self.inst.n,))
        box = self.inst.admissible(partial, V)
        if box is None:
            return math.inf
        lo, hi, square = box
        slack = BOX_SLACK * np.maximum(1.0, np.abs(np.r_[L, U]))
        if np.any(L > lo + slack[:self.inst.n]) or np.any(U < hi - slack[self.inst.n:]):
            self.fail(f"node {node['id']}'s box cuts off outputs of labelings of value <= V")
            return -math.inf
        if kind == "box":
            return self._forced(node, partial, lo, hi, proof, V)
        return self._sdp(node, proof, L, U, np.minimum(np.maximum(L * L, U * U), square))

    def _forced(self, node, partial, lo, hi, proof, V: float) -> float:
        free = np.flatnonzero(partial == 0)
        lo_u, hi_u = lo[self.inst.l:], hi[self.inst.l:]
        if np.any((lo_u[free] < 0) & (hi_u[free] > 0)):
            self.fail(f"node {node['id']}'s box neither empties nor decides the node")
            return -math.inf
        labels = partial.copy()
        labels[free] = np.where(lo_u[free] > 0, 1, -1)
        if not (self.inst.meets_count(labels) and self.inst.keeps_groups(labels)):
            return math.inf
        if proof.get("alpha") is None:
            self.fail(f"node {node['id']}'s box forces a labeling without its multipliers")
            return -math.inf
        value = self.inst.lower_value(labels, proof["alpha"])
        return math.inf if value > V else value

    def _sdp(self, node, proof, L, U, square) -> float:
        inst, nid = self.inst, node["id"]
        N = inst.n + 1
        lmd = _array(proof.get("lmd"), f"node {nid}'s lmd", (inst.n,))
        umd = _array(proof.get("umd"), f"node {nid}'s umd", (inst.n,))
        names = proof.get("rows")
        _need(isinstance(names, list), f"node {nid}'s rows must be a list")
        y = _array(proof.get("y"), f"node {nid}'s y", (len(names),))
        T = float(proof.get("T"))
        (k, p, q, c), b, eq = _rows(names, L, U, lmd, umd, N)
        kinds = [name[0] for name in names]
        used = {kind: np.array([name[1] for name in names if name[0] == kind], dtype=int)
                for kind in ("dL", "dU")}
        slack = BOX_SLACK * np.maximum(1.0, square)
        if np.any(lmd[used["dL"]] > 1.0 + BOX_SLACK) or \
                np.any(umd[used["dU"]] < (square - slack)[used["dU"]]):
            self.fail(f"node {nid}: a row on V_ii does not hold for every output")
            return -math.inf
        if T < (1.0 + square.sum()) * (1.0 - BOX_SLACK):
            self.fail(f"node {nid}: T = {T:.10g} does not bound the trace "
                      f"{1.0 + square.sum():.10g}")
            return -math.inf
        _need("one" in kinds, f"node {nid}'s rows lack X_00 = 1")
        y = np.where(eq, y, np.maximum(y, 0.0))
        Z = inst.Ct.copy()
        w = y[k] * c
        off = p != q
        np.add.at(Z, (p[~off], q[~off]), -w[~off])
        np.add.at(Z, (p[off], q[off]), -0.5 * w[off])
        np.add.at(Z, (q[off], p[off]), -0.5 * w[off])
        Z = 0.5 * (Z + Z.T)
        lmin = float(np.linalg.eigvalsh(Z)[0]) - EIG_SAFETY * float(np.linalg.norm(Z))
        bound = float(b @ y) + T * min(0.0, lmin)
        stated = float(proof.get("value"))
        if abs(bound - stated) > NUMERICAL * max(1.0, abs(stated)):
            self.fail(f"node {nid}: its SDP data give the bound {bound:.10g}, not the stated "
                      f"{stated:.10g}")
        return bound


def check_certificate(source) -> CheckReport:
    """Check a certificate (a path, or the parsed JSON document).

    Raises
    ------
    CertificateError
        The input is not a certificate (unreadable, another format, malformed).
    """
    if isinstance(source, dict):
        document = source
    else:
        try:
            with open(source) as handle:
                document = json.load(handle)
        except OSError as exc:
            raise CertificateError(f"cannot read {source}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise CertificateError(f"{source} is not JSON: {exc}") from None
    try:
        checker = _Checker(document)
        V = checker.check_incumbent()
        if V is None:
            return CheckReport(False, None, 0.0, len(checker.nodes), checker.failures)
        tau = max(checker.abs_gap, checker.rel_gap * abs(V)) + NUMERICAL * max(1.0, abs(V))
        checker.check_tree(V, tau)
    except (TypeError, KeyError, AttributeError) as exc:
        raise CertificateError(f"malformed certificate: {type(exc).__name__}: {exc}") from None
    return CheckReport(not checker.failures, V, tau, len(checker.nodes), checker.failures)
