"""S3VM-L2 (Problem 1) as one declarative mixed-integer quadratic program.

Problem 1 is docs/formulations.md#problem-1, this form docs/formulations.md#l2-miqp.

With a factor K = G G' of the kernel matrix (G = X for the linear kernel, the scaled eigenvectors
of :func:`svm_dual.psd_factor` for rbf), the representer theorem puts every optimal w in the span
of the points, w = sum_i beta_i phi(x_i); writing v = G' beta gives f = G v + b and
|w|^2 = beta' K beta = |v|^2, so Problem 1 is

    min  1/2 |v|^2 + C sum_{i in L} xi_i^2 + C* sum_{j in U} xi_j^2
    s.t. y_i (G_i v + b) + xi_i >= 1                               (i in L)
         G_j v + b + xi_j >= 1 - M_j (1 - z_j)                      (j in U, label +1 when z_j = 1)
        -G_j v - b + xi_j >= 1 - M_j z_j                            (j in U, label -1 when z_j = 0)
         sum_j z_j = P   (balance ``count``),   xi >= 0,   z binary

(``--no-bias`` drops b). Under the mean balance (``--balance mean``, docs/formulations.md#balance)
the slacks become signed, xi = o - f with o the margin-clipped output: labeled rows
y_i (G_i v + b + xi_i) >= 1, the unlabeled rows as above with -xi_j on the -1 side, and
sum_j (G_j v + b + xi_j) = u x the labeled mean (without the balance this form has the same
optimum: a slack below the hinge only costs). For rbf, psd_factor drops eigenvalues below 1e-10 of
the largest, which moves J by about that relative amount. The factor form keeps the quadratic a
plain sum of squares, which is better conditioned than 1/2 beta' K beta with a nearly singular rbf
K. The model is the generic, solver-agnostic anchor that the branch-and-bound driver is measured
against; SCIP solves it through pyscipopt (:data:`s3vm.solvers.registry.DEFAULT_SOLVERS`
``["miqp"]``), and ``s3vm export`` writes it as LP or MPS (Pyomo writes the quadratic objective in
both: the LP file's ``[ ... ] / 2`` block, the MPS file's QUADOBJ section; SCIP reads both back, the
LP file after ``s3vm.formulations.l2_miqp`` repairs for SCIP).

Two forms switch the unlabeled constraints on and off (option ``form``):

``bigm``
    The rows above, with the M_j of :func:`big_m` (derivation there).
``sos1``
    No M: xi_j >= 1 - f_j - p_j and xi_j >= 1 + f_j - q_j with p, q >= 0 free, and the SOS1 sets
    {p_j, z_j} and {q_j, zbar_j}, zbar_j = 1 - z_j, so that the side picked has its slack p_j
    (or q_j) at 0. This is the complementarity form of an indicator constraint. The variable
    bounds of :func:`big_m` (on v, b and xi) are kept: they are valid without any M.

Why no ``indicator`` form: Pyomo has no indicator-constraint component that its writers or its
SCIP interface translate (pyomo.contrib.solver's SCIP interface sends Constraint and
SOSConstraint objects only; Pyomo.GDP disjunctions are turned into big-M or hull rows before any
solver sees them), so a native SCIP indicator cannot be expressed through Pyomo. The SOS1 form is
the solver-independent equivalent: SCIP (and any solver reading SOS sections of LP/MPS files)
branches on the complementarity instead of trusting an M.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

from s3vm.core.kernels import kernel_matrix
from s3vm.models.l2_svm import squared_hinge_svm
from s3vm.models.output_space import inverse_half, labeling_qp, mean_rhs
from s3vm.models.pyomo_tools import (
    bind_diagonal,
    hstack_blocks,
    matrix_constraint,
    tie_binaries,
    var_list,
)
from s3vm.models.svm_dual import psd_factor
from s3vm.solvers.bnb.links import round_scores
from s3vm.solvers.errors import InputError

FORMS = ("bigm", "sos1")

#: The named components of the model :func:`build_l2_miqp` builds (name -> meaning, in the
#: notation of docs/formulations.md, Problem 1), what ``s3vm.build`` documents for l2-miqp.
COMPONENTS = {
    "R, L, U": "index sets: columns of the factor G (K = G G'), labeled rows, unlabeled rows",
    "v[k], b": "the classifier f = G v + b (b only with bias)",
    "xi_L[i], xi_U[j]": "labeled and unlabeled slacks (squared in the objective)",
    "z[j]": "binary: 1 labels unlabeled point j +1",
    "labeled_margin[i]": "y_i (G_i v + b) + xi_i >= 1",
    "plus_side[j], minus_side[j]": "the unlabeled rows switched by z_j (big-M, or SOS1 with "
                                   "form='sos1': p[j], q[j], zbar[j], complement, plus_switch, "
                                   "minus_switch)",
    "balance, mean_balance": "e'z = P (balance='count'), the mean balance (balance='mean')",
    "groups": "the groups' and pairs' rows on z (with groups only): z_i = z_j for rows that "
              "share a label, z_i + z_j = 1 for rows whose labels differ, z_j fixed by a "
              "labeled row of its group",
    "obj": "1/2 |v|^2 + C e'xi_L^2 + C* e'xi_U^2",
}


# Relative safety margin on M and on the variable bounds: they come from the same upper bound,
# and a bound that is exactly tight would let the solver's feasibility tolerance cut off an
# optimum.
_MARGIN = 1e-6


@dataclass(frozen=True)
class L2Data:
    """The arrays of one S3VM-L2 instance in factor form.

    Attributes
    ----------
    GL, GU : ndarray
        Rows of the factor G (K = G G') for the labeled and unlabeled points.
    yL : ndarray
        Labels of the labeled points (+1/-1).
    C, C_star : float
        Penalties of labeled and unlabeled squared hinge losses.
    bias : bool
    positives : int or None
        Balance count P (exactly P unlabeled points labeled +1), None for no balance.
    mean_rhs : float or None
        The mean balance: the unlabeled outputs sum to this (u times the labeled mean), None
        without it.
    links : s3vm.solvers.bnb.links.Links or None
        The groups' ties between the unlabeled labels (rows ``groups`` on z), None without.
    """

    GL: np.ndarray
    GU: np.ndarray
    yL: np.ndarray
    C: float
    C_star: float
    bias: bool
    positives: Optional[int]
    mean_rhs: Optional[float] = None
    links: Any = None

    @classmethod
    def from_instance(cls, instance, settings) -> "L2Data":
        if settings.kernel == "linear":
            # K = X X' exactly, with as many columns as features: no eigendecomposition.
            G = np.asarray(instance.X, dtype=float)
        else:
            G = psd_factor(kernel_matrix(instance.X, None, settings.kernel, settings.sigma))
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        rhs = mean_rhs(instance.yL, instance.u) if settings.balance == "mean" else None
        return cls(G[instance.labeled], G[instance.unlabeled], instance.yL,
                   float(settings.C), float(settings.C_unlabeled), bool(settings.bias), positives,
                   rhs, instance.unlabeled_links())

    @property
    def C_all(self) -> np.ndarray:
        """Per-point penalties, labeled rows first."""
        return np.concatenate([np.full(len(self.yL), self.C), np.full(len(self.GU), self.C_star)])


def _unlabeled_loss(fU: np.ndarray, positives: Optional[int],
                    links=None) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """(sum of squared hinges, labels) of the best labeling of the unlabeled outputs fU.

    Without balance each point takes its better side; with exactly P positives the P points
    whose +1 loss gains most over their -1 loss take +1 (an exchange argument: the loss is a sum
    of per-point terms, so sorting by the difference is optimal). With ``links`` the best
    labeling that keeps them (:meth:`s3vm.solvers.bnb.links.Links.best`); (inf, None) when none
    does.
    """
    plus, minus = np.maximum(0.0, 1.0 - fU) ** 2, np.maximum(0.0, 1.0 + fU) ** 2
    if links is not None:
        labels = links.best(plus, minus, positives)
        if labels is None:
            return np.full(len(fU), np.inf), None
    elif positives is None:
        labels = np.where(plus <= minus, 1, -1)
    else:
        labels = -np.ones(len(fU), dtype=int)
        labels[np.argsort(plus - minus, kind="stable")[:positives]] = 1
    return np.where(labels > 0, plus, minus), labels


def objective_at(data: L2Data, v: np.ndarray, b: float) -> tuple[float, np.ndarray]:
    """(objective, labeling) at the point (v, b) with its best feasible labeling.

    Every such value is attained by a feasible point of the MIQP, so it bounds min_y J(y) above.
    """
    fL, fU = data.GL @ v + b, data.GU @ v + b
    unl, labels = _unlabeled_loss(fU, data.positives, data.links)
    value = 0.5 * float(v @ v) + data.C * float((np.maximum(0.0, 1.0 - data.yL * fL) ** 2).sum()) \
        + data.C_star * float(unl.sum())
    return value, labels


def heuristic_upper_bound(data: L2Data) -> tuple[float, np.ndarray]:
    """(value, labeling) of a cheap feasible point: the best of v = 0 and scaled ridge fits.

    The ridge direction fits the labels on the labeled points (dual form, l x l system); a
    geometric grid of scales picks the best multiple. Deterministic, no solver.
    """
    r = data.GL.shape[1]
    offsets = (-1.0, 0.0, 1.0) if data.bias else (0.0,)
    candidates = [objective_at(data, np.zeros(r), b) for b in offsets]
    KLL = data.GL @ data.GL.T
    ridge = 1e-3 * max(1.0, float(np.trace(KLL)) / max(1, len(data.yL)))
    direction = data.GL.T @ np.linalg.solve(KLL + ridge * np.eye(len(data.yL)), data.yL)
    for t in np.geomspace(1e-3, 1e3, 31):
        candidates.append(objective_at(data, t * direction, 0.0))
    return min(candidates, key=lambda c: c[0])


def labeling_upper_bound(data: L2Data, max_rounds: int = 20) -> float:
    """An upper bound on min_y J(y) by alternating minimisation from the heuristic point.

    Starting from the labeling of :func:`heuristic_upper_bound`, train the supervised SVM at the
    labeling (:func:`l2_svm.squared_hinge_svm` on K = G G', the model's own kernel), then
    relabel the unlabeled points optimally for its outputs under the balance; repeat until the
    labeling stays. No round can raise the value (J(y') <= the value at the old (v, b) with
    labels y' <= J(y)), so the result is the J of an attained labeling, at most the heuristic
    point's value. A small bound gives a small M (:func:`big_m`).
    """
    best, labels = heuristic_upper_bound(data)
    if labels is None:
        return best  # no labeling keeps the links: inf
    G = np.vstack([data.GL, data.GU])
    K = G @ G.T
    l = len(data.yL)
    for _ in range(max_rounds):
        solution = squared_hinge_svm(K, np.concatenate([data.yL, labels]), data.C_all,
                                     data.bias)
        best = min(best, solution.value)
        relabeled = _unlabeled_loss(solution.outputs[l:], data.positives, data.links)[1]
        if relabeled is None or np.array_equal(relabeled, labels):
            break
        labels = relabeled
    return best


def mean_balanced_count(u: int, rhs: float) -> int:
    """A count of positives whose labelings all meet the mean balance when any labeling does.

    A labeling with both signs among the unlabeled points meets sum_j o_j = rhs for every rhs
    (an output on the +1 side may grow, one on the -1 side fall, without bound), so for u >= 2
    any count in 1..u - 1 does; the one nearest (u + rhs) / 2 gives the mean of the labels that
    rhs asks of the outputs. With u = 1 the balance reads o = rhs, met by the side of rhs only
    when |rhs| >= 1.
    """
    nearest = int(round((u + rhs) / 2.0))
    if u >= 2:
        return min(max(nearest, 1), u - 1)
    return 1 if rhs > 0 else 0


def mean_upper_bound(data: L2Data, max_rounds: int = 20) -> float:
    """An upper bound on min_y J_mean(y) (the mean balance): J_mean, the output-space QP of
    :mod:`s3vm.models.output_space`, at labelings that meet the balance, the least.

    The candidates are the labelings the alternating minimisation of
    :func:`labeling_upper_bound` visits (starting from the labels by sign of the ridge fit) and,
    at each supervised solve, the labeling that gives the :func:`mean_balanced_count` largest
    outputs +1. The visited labelings alone may all have one sign (the unbalanced optimum of a
    one-sided data set), which no output can balance; the count's labeling meets the balance
    whenever any labeling does, so the result is finite unless the problem is infeasible (inf).
    Using an unbalanced bound instead would be wrong: J_mean >= J, so big-M bounds from it cut
    off every balanced optimum.
    """
    G = np.vstack([data.GL, data.GU])
    K = G @ G.T
    l, u = len(data.yL), len(data.GU)
    C = data.C_all
    Cm = inverse_half(K + np.diag(0.5 / C), data.bias)
    a = np.r_[np.zeros(l), np.ones(u)]
    positives = mean_balanced_count(u, data.mean_rhs)
    _, labels = heuristic_upper_bound(data)
    values: dict = {}   # J_mean per labeling, each QP solved once
    visited = set()

    def value(labels_U):
        key = labels_U.tobytes()
        if key not in values:
            values[key] = labeling_qp(Cm, np.concatenate([data.yL, labels_U]), a,
                                      data.mean_rhs)[0]
        return values[key]

    best = np.inf
    for _ in range(max_rounds):
        if labels is None or labels.tobytes() in visited:
            break
        visited.add(labels.tobytes())
        best = min(best, value(labels))
        solution = squared_hinge_svm(K, np.concatenate([data.yL, labels]), C, data.bias)
        outputs = solution.outputs[l:]
        counted = round_scores(outputs, positives, data.links)
        if counted is not None:
            best = min(best, value(counted))
        labels = _unlabeled_loss(outputs, None, data.links)[1]
    return best


@dataclass(frozen=True)
class BigMBounds:
    """Bounds every point of objective <= ``upper`` satisfies (see :func:`big_m`)."""

    upper: float
    v: float                  # |v_k| <= |v| <= v
    b: float                  # |b|
    xi_labeled: float
    xi_unlabeled: float       # inf when C* = 0
    M: np.ndarray             # per unlabeled point


def big_m(data: L2Data, upper: float) -> BigMBounds:
    """Big-M values and variable bounds that keep every labeling with J(y) <= ``upper``.

    Derivation. Take any point (v, b, xi, z) of objective at most U = ``upper`` (U is the value
    of a known feasible point, so the minimising labeling y* has J(y*) <= U). Then

    - 1/2 |v|^2 <= U, so |v| <= R = sqrt(2U), and every |v_k| <= R;
    - C xi_i^2 <= U, so xi_i <= E_L = sqrt(U / C) on L; likewise xi_j <= sqrt(U / C*) on U;
    - |G_j v| <= |G_j| R (Cauchy-Schwarz; |G_j|^2 = K_jj);
    - the bias: a labeled +1 point i has G_i v + b >= 1 - xi_i, so
      b >= 1 - E_L - |G_i| R, and the +1 point with the smallest |G_i| gives the best such
      bound; a labeled -1 point bounds b above the same way. Hence
      |b| <= B = max(0, E_L - 1 + R max(min_{L+} |G_i|, min_{L-} |G_i|))  (B = 0 without bias);
    - so |f_j| <= F_j = |G_j| R + B on every unlabeled point.

    With z_j = 1 the relaxed row xi_j >= 1 + f_j - M_j must not bind at xi_j = max(0, 1 - f_j);
    it does not when M_j >= 1 + f_j, so M_j = 1 + F_j suffices (z_j = 0 is symmetric).
    Under the mean balance the slack e_j is signed (|e_j| <= E_U) and enters both rows, so
    M_j = 1 + F_j + E_U (:func:`build_l2_miqp`).
    Consequently, for every labeling y with J(y) <= U, the supervised optimum of y with its hinge
    slacks is feasible in the MIQP (bounds included) with value J(y); and every feasible MIQP
    point with labeling y has value >= J(y), its slacks meeting y's hinge rows. The MIQP optimum
    is therefore min_y J(y), attained at the same labelings. The bound on b needs C > 0 (checked
    by :class:`L2MIQP`); C* = 0 leaves the unlabeled slacks unbounded, which M does not need.
    """
    U = float(upper)
    R = np.sqrt(2.0 * U)
    E_L = np.sqrt(U / data.C) if data.C > 0 else np.inf
    E_U = np.sqrt(U / data.C_star) if data.C_star > 0 else np.inf
    B = 0.0
    if data.bias:
        normsL = np.linalg.norm(data.GL, axis=1)
        reach = max(normsL[data.yL > 0].min(), normsL[data.yL < 0].min())
        B = max(0.0, E_L - 1.0 + R * reach)
    F = np.linalg.norm(data.GU, axis=1) * R + B
    if data.mean_rhs is not None:
        F = F + E_U
    grow = 1.0 + _MARGIN
    return BigMBounds(upper=U, v=R * grow, b=B * grow + _MARGIN, xi_labeled=E_L * grow,
                      xi_unlabeled=E_U * grow, M=(1.0 + F) * grow + _MARGIN)


def _finite_or_none(value: float) -> Optional[float]:
    return float(value) if np.isfinite(value) else None


def build_l2_miqp(data: L2Data, form: str = "bigm", upper: Optional[float] = None):
    """Build the Pyomo model of S3VM-L2.

    Parameters
    ----------
    data : L2Data
    form : {"bigm", "sos1"}
        How the unlabeled hinge rows are switched (module docstring).
    upper : float, optional
        An upper bound on min_y J(y) for :func:`big_m`; by default :func:`labeling_upper_bound`.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Components v, b (with bias), xi_L, xi_U, z (and p, q, zbar for sos1), objective ``obj``;
        ``l2_data`` and ``l2_bounds`` carry the arrays and the bounds used.
    """
    import pyomo.environ as pyo

    if form not in FORMS:
        raise InputError(f"unknown form {form!r}: choose one of {', '.join(FORMS)}")
    mean = data.mean_rhs is not None
    if upper is None:
        upper = mean_upper_bound(data) if mean else labeling_upper_bound(data)
        if not np.isfinite(upper):
            # No labeling meets the balance (u = 1 with |rhs| < 1) or keeps the groups: the
            # model is infeasible whatever its bounds, which only need to be finite.
            upper = labeling_upper_bound(replace(data, links=None))
    bounds = big_m(data, upper)
    GL, GU, yL = data.GL, data.GU, data.yL
    l, r = GL.shape
    u = GU.shape[0]

    m = pyo.ConcreteModel(name="l2_miqp")
    m.l2_data, m.l2_bounds, m.l2_form = data, bounds, form
    m.R = pyo.RangeSet(0, r - 1)
    m.L = pyo.RangeSet(0, l - 1)
    m.U = pyo.RangeSet(0, u - 1)
    m.v = pyo.Var(m.R, bounds=(-bounds.v, bounds.v), initialize=0.0)
    # The objective bounds each slack; giving the bound to the solver tightens its relaxations.
    # (A zero penalty leaves its slacks unbounded: None, which every writer takes.)
    # Under the mean balance the slacks are signed: xi = o - f, the output o moved off f.
    high_L, high_U = _finite_or_none(bounds.xi_labeled), _finite_or_none(bounds.xi_unlabeled)
    low_L = (None if high_L is None else -high_L) if mean else 0.0
    low_U = (None if high_U is None else -high_U) if mean else 0.0
    m.xi_L = pyo.Var(m.L, bounds=(low_L, high_L), initialize=0.0)
    m.xi_U = pyo.Var(m.U, bounds=(low_U, high_U), initialize=0.0)
    m.z = pyo.Var(m.U, within=pyo.Binary, initialize=0)
    if data.bias:
        m.b = pyo.Var(bounds=(-bounds.b, bounds.b), initialize=0.0)
        f_vars, onesL, onesU = [m.v, m.b], [(yL[:, None], 1)], [(np.ones((u, 1)), 1)]
    else:
        f_vars, onesL, onesU = [m.v], [], []

    # Labeled rows: y_i (G_i v + b) + xi_i >= 1 (mean balance: y_i (G_i v + b + xi_i) >= 1).
    labeled = hstack_blocks([(GL * yL[:, None], r)] + onesL
                            + [(sp.diags(yL) if mean else sp.eye(l), l)], l)
    m.labeled_margin = matrix_constraint(labeled, var_list(*f_vars, m.xi_L), lb=1.0)

    eye = sp.eye(u)
    plus_f = [(GU, r)] + onesU            # +f_j
    minus_f = [(-GU, r)] + [(-blk, w) for blk, w in onesU]
    xi_minus = -eye if mean else eye   # the output o = f + xi must be <= -1 on the - side
    if form == "bigm":
        M = bounds.M
        # f_j + xi_j - M_j z_j >= 1 - M_j   and   -f_j + xi_j + M_j z_j >= 1.
        plus = hstack_blocks(plus_f + [(eye, u), (sp.diags(-M), u)], u)
        minus = hstack_blocks(minus_f + [(xi_minus, u), (sp.diags(M), u)], u)
        m.plus_side = matrix_constraint(plus, var_list(*f_vars, m.xi_U, m.z), lb=1.0 - M)
        m.minus_side = matrix_constraint(minus, var_list(*f_vars, m.xi_U, m.z), lb=1.0)
        # Mutable: the rows read M_j from the Param, so that a larger M_j set here (by hand,
        # or by s3vm.build's solve for a changed model) is the model's.
        m.big_m = pyo.Param(m.U, mutable=True, within=pyo.PositiveReals,
                            initialize=dict(enumerate(M.tolist())))
        z_column = r + (1 if data.bias else 0) + u
        bind_diagonal(m.plus_side, z_column, [-m.big_m[j] for j in range(u)],
                      [1.0 - m.big_m[j] for j in range(u)])
        bind_diagonal(m.minus_side, z_column, [m.big_m[j] for j in range(u)])
    else:
        m.p = pyo.Var(m.U, within=pyo.NonNegativeReals, initialize=0.0)
        m.q = pyo.Var(m.U, within=pyo.NonNegativeReals, initialize=0.0)
        m.zbar = pyo.Var(m.U, bounds=(0.0, 1.0), initialize=1.0)
        # f_j + xi_j + p_j >= 1,  -f_j + xi_j + q_j >= 1,  z_j + zbar_j = 1.
        plus = hstack_blocks(plus_f + [(eye, u), (eye, u)], u)
        minus = hstack_blocks(minus_f + [(xi_minus, u), (eye, u)], u)
        m.plus_side = matrix_constraint(plus, var_list(*f_vars, m.xi_U, m.p), lb=1.0)
        m.minus_side = matrix_constraint(minus, var_list(*f_vars, m.xi_U, m.q), lb=1.0)
        m.complement = matrix_constraint(sp.hstack([eye, eye]), var_list(m.z, m.zbar),
                                         lb=1.0, ub=1.0)
        m.plus_switch = pyo.SOSConstraint(m.U, rule=lambda mm, j: [mm.p[j], mm.z[j]], sos=1)
        m.minus_switch = pyo.SOSConstraint(m.U, rule=lambda mm, j: [mm.q[j], mm.zbar[j]], sos=1)

    if data.positives is not None:
        m.balance = matrix_constraint(np.ones((1, u)), var_list(m.z), lb=data.positives,
                                      ub=data.positives)
    if data.links is not None:
        m.groups = tie_binaries(m.z, data.links)
    if mean:
        # sum_j o_j = sum_j (G_j v + b + xi_j) = rhs.
        row = hstack_blocks([(GU.sum(axis=0, keepdims=True), r)]
                            + ([(np.array([[float(u)]]), 1)] if data.bias else [])
                            + [(np.ones((1, u)), u)], 1)
        m.mean_balance = matrix_constraint(row, var_list(*f_vars, m.xi_U), lb=data.mean_rhs,
                                           ub=data.mean_rhs)

    m.obj = pyo.Objective(
        expr=0.5 * pyo.quicksum(m.v[k] * m.v[k] for k in m.R)
        + data.C * pyo.quicksum(m.xi_L[i] * m.xi_L[i] for i in m.L)
        + data.C_star * pyo.quicksum(m.xi_U[j] * m.xi_U[j] for j in m.U),
        sense=pyo.minimize)
    return m
