"""Problem 3 (S3VM-1, Bennett-Demiriz as written by Fung-Mangasarian), one Pyomo model.

Bennett and Demiriz (1998) as Fung and Mangasarian (2001) write it; docs/formulations.md#problem-3.

    min  e'y + mu e'z + sum_j (c_r[j] r_j + c_s[j] s_j)
    s.t. D(A w - e g) + y >= e          (labeled margins)
         -z <= w <= z                   (1-norm of w; absent for RLP)
         B w - e g + r >= e             (unlabeled point j on the +1 side)
        -B w + e g + s >= e             (unlabeled point j on the -1 side)
         y, z, r, s >= 0

RLP, the 1-norm SVM, the Bennett-Demiriz MIP and every LP of VS3VM are this model with parts
switched off or costs changed; the costs c_r, c_s and mu are mutable Params so that drivers change
them in place and a persistent solver re-solves from its last basis.

For the MIP a binary d_j picks the side: d_j = 1 charges r_j (label +1), d_j = 0 charges s_j,
with big-M terms  + M_j (1 - d_j)  and  + M_j d_j  relaxing the side not picked. See
:func:`big_m` for why M_j never cuts off an optimum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.sparse as sp

from s3vm.core.kernels import kernel_matrix
from s3vm.models.pyomo_tools import (
    bind_diagonal,
    hstack_blocks,
    matrix_constraint,
    tie_binaries,
    var_list,
)
from s3vm.solvers.profiles import get_profile
from s3vm.solvers.registry import get_backend

#: The named components of the models :func:`build_problem3` builds (name -> meaning, in the
#: notation of docs/formulations.md, Problem 3), what ``s3vm.build`` documents for the LP/MIP
#: family: the labeled part every model has, then the parts switched on by the 1-norm term
#: (:data:`NORM_COMPONENTS`), the unlabeled rows (:data:`SIDES_COMPONENTS`) and the binaries
#: (:data:`MIP_COMPONENTS`). Pyomo components are attributes of the model (``model.d[j]``).
COMPONENTS = {
    "F, L": "index sets: columns of A (features, or kernel columns under rbf), labeled rows",
    "w[k], g": "the classifier f(x) = x'w - g (kernel expansion coefficients under rbf)",
    "y[i]": "labeled slack: D(A w - e g) + y >= e",
    "labeled_margin[i]": "the labeled row  d_i (A_i w - g) + y_i >= 1",
    "obj": "the objective",
}
NORM_COMPONENTS = {
    "z[k]": "|w_k| at an optimum: -z <= w <= z",
    "mu": "mutable Param, the weight of e'z",
    "norm_upper[k], norm_lower[k]": "w - z <= 0 and w + z >= 0",
}
SIDES_COMPONENTS = {
    "U": "index set of the unlabeled rows",
    "r[j], s[j]": "unlabeled slacks of the +1 side (B w - e g + r >= e) and the -1 side "
                  "(-B w + e g + s >= e)",
    "cost_r[j], cost_s[j]": "mutable Params, the costs of r_j and s_j in the objective",
    "plus_side[j], minus_side[j]": "the two unlabeled rows of point j",
}
MIP_COMPONENTS = {
    "d[j]": "binary: 1 labels unlabeled point j +1 (charges r_j), 0 labels it -1 (charges s_j)",
    "big_m[j]": "mutable Param M_j of the big-M rows: B_j w - g + r_j - M_j d_j >= 1 - M_j "
                "and -B_j w + g + s_j + M_j d_j >= 1 (solve raises it where a change needs it)",
    "balance": "e'd = P (with balance='count' only)",
    "groups": "the groups' and pairs' rows on d (with groups only): d_i = d_j for rows that "
              "share a label, d_i + d_j = 1 for rows whose labels differ, d_j fixed by a "
              "labeled row of its group",
}

#: Kernel values below this are zero in Problem 3's model rows (HiGHS's ``small_matrix_value``).
TINY_KERNEL = 1e-9


@dataclass(frozen=True)
class Problem3Data:
    """The arrays of Problem 3: labeled points A with labels d, unlabeled points B.

    With an rbf kernel the columns are kernel values against every point of the instance
    (``basis``): f(x) = sum_k w_k k(x, basis_k) - g, so w holds the expansion coefficients and
    |w|_1 penalises them, Mangasarian's generalized SVM; every LP stays an LP.
    """

    A: np.ndarray
    d: np.ndarray
    B: np.ndarray
    kernel: str = "linear"
    sigma: float = 1.0
    basis: Optional[np.ndarray] = None

    @classmethod
    def from_instance(cls, instance, settings=None) -> "Problem3Data":
        if settings is None or settings.kernel == "linear":
            return cls(instance.XL, instance.yL, instance.XU)
        K = kernel_matrix(instance.X, instance.X, settings.kernel, settings.sigma)
        return cls(K[instance.labeled], instance.yL, K[instance.unlabeled], settings.kernel,
                   settings.sigma, instance.X)

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) as the models' rows carry them: kernel values below :data:`TINY_KERNEL` zero.

        An rbf kernel between far points gives values of 1e-10 (29 of two_moons's rows), which
        HiGHS drops from its matrix with a warning; written into a model they reached every other
        solver and every exported file as noise. Dropped here, every solver and file sees the
        model HiGHS solved; A and B themselves (the decision values, f) stay exact.
        """
        if self.basis is None:  # the user's features: any scale is data, not noise
            return self.A, self.B
        return (np.where(np.abs(self.A) < TINY_KERNEL, 0.0, self.A),
                np.where(np.abs(self.B) < TINY_KERNEL, 0.0, self.B))

    def features(self, X: np.ndarray) -> np.ndarray:
        """The columns of Problem 3 for new points X (X itself for the linear kernel)."""
        if self.basis is None:
            return np.asarray(X, dtype=float)
        return kernel_matrix(np.asarray(X, dtype=float), self.basis, self.kernel, self.sigma)


def objective_at(data: Problem3Data, w: np.ndarray, g: float, mu: float, nu: float,
                 positives: Optional[int] = None, links=None) -> float:
    """The MIP objective at (w, g) with the best labeling for it (exactly ``positives`` +1s,
    keeping the groups' ``links`` when given: inf when no labeling keeps them).

    Every such value is attained by a feasible point of the MIP, so it bounds the optimum above.
    """
    fL = data.A @ w - g
    fU = data.B @ w - g
    plus, minus = np.maximum(0.0, 1.0 - fU), np.maximum(0.0, 1.0 + fU)
    if links is not None:
        labels = links.best(plus, minus, positives)
        unl = np.inf if labels is None else float(np.where(labels > 0, plus, minus).sum())
    elif positives is None:
        unl = np.minimum(plus, minus).sum()
    else:
        order = np.argsort(plus - minus, kind="stable")
        unl = plus[order[:positives]].sum() + minus[order[positives:]].sum()
    return float(np.maximum(0.0, 1.0 - data.d * fL).sum() + mu * np.abs(w).sum() + nu * unl)


def heuristic_upper_bound(data: Problem3Data, mu: float, nu: float,
                          positives: Optional[int] = None, links=None) -> float:
    """A solver-free upper bound on the MIP optimum: the best of w = 0 and scaled ridge fits.

    The ridge fit of the labels on the labeled points gives a direction; :func:`objective_at`
    along a geometric grid of scales picks the best. Deterministic and cheap (one small solve).
    """
    l, p = data.A.shape
    Ac = np.hstack([data.A, -np.ones((l, 1))])
    ridge = 1e-6 * max(1.0, float(np.abs(Ac).max())) ** 2
    if p + 1 <= l:
        sol = np.linalg.solve(Ac.T @ Ac + ridge * np.eye(p + 1), Ac.T @ data.d)
    else:  # fewer labeled points than columns: the dual form is the small system
        sol = Ac.T @ np.linalg.solve(Ac @ Ac.T + ridge * np.eye(l), data.d)
    best = min(objective_at(data, np.zeros(p), g, mu, nu, positives, links)
               for g in (-1.0, 0.0, 1.0))
    for t in np.geomspace(1e-3, 1e3, 25):
        best = min(best, objective_at(data, t * sol[:p], t * sol[p], mu, nu, positives, links))
    return best


def big_m(data: Problem3Data, mu: float, nu: float, upper: Optional[float] = None) -> np.ndarray:
    """Per-point big-M values that bound |B_j w - g| + 1 at every optimum of the MIP.

    Derivation (docs/formulations.md). Let U be the objective of any feasible point: the point
    w = 0, g = 0, y = e with r_j or s_j = 1 gives U = l + nu u, and ``upper`` (e.g.
    :func:`heuristic_upper_bound`) may be smaller. Any optimum has mu |w|_1 <= U, so
    |w|_1 <= W = U / mu, and y_i <= U. A +1 labeled point i gives
    g <= y_i - 1 + A_i w <= U - 1 + |A_i|_inf W, a -1 labeled point the same bound on -g, so
    |g| <= G = U - 1 + W * max(min over +1 points, min over -1 points of |A_i|_inf). Hence
    |B_j w - g| <= |B_j|_inf W + G, and the relaxed side's constraint of point j is slack at
    s_j = 0 (or r_j = 0) whenever M_j >= 1 + |B_j|_inf W + G.
    """
    l, u = data.A.shape[0], data.B.shape[0]
    U = l + nu * u if upper is None else min(l + nu * u, upper)
    return big_m_from_upper(data, mu, U)


def big_m_from_upper(data: Problem3Data, mu: float, upper: float) -> np.ndarray:
    """The M_j of :func:`big_m` from ``upper`` alone: the objective of a feasible point of the
    model as it is (a changed model's own point, where l + nu u may no longer be feasible).

    The derivation of :func:`big_m` uses only that the objective is e'y + mu e'z plus
    nonnegative costs times r, s >= 0, and the labeled margins; a side constraint (on d, w, g,
    r, s, ...) leaves both, so any optimum of the changed model has |w|_1 <= upper / mu too.
    """
    if mu <= 0:
        raise ValueError("big-M needs mu > 0 (the 1-norm of w must be penalised)")
    U = max(float(upper), 0.0)
    W = U / mu
    row_inf = np.abs(data.A).max(axis=1)
    g_pos = row_inf[data.d > 0].min()
    g_neg = row_inf[data.d < 0].min()
    G = max(U - 1.0, 0.0) + W * max(g_pos, g_neg)
    return 1.0 + np.abs(data.B).max(axis=1) * W + G + 1e-6 * (1.0 + G)


def _best_labels(data: Problem3Data, w: np.ndarray, g: float,
                 positives: Optional[int], links=None) -> Optional[np.ndarray]:
    """The labeling :func:`objective_at` charges at (w, g): each point on its cheaper side, or
    the ``positives`` points that gain most from +1 (with ``links``, the best that keeps
    them; None when none does)."""
    fU = data.B @ w - g
    if links is not None:
        return links.best(np.maximum(0.0, 1.0 - fU), np.maximum(0.0, 1.0 + fU), positives)
    gain = np.maximum(0.0, 1.0 - fU) - np.maximum(0.0, 1.0 + fU)
    if positives is None:
        return np.where(gain <= 0, 1, -1)
    labels = -np.ones(fU.size, dtype=int)
    labels[np.argsort(gain, kind="stable")[:positives]] = 1
    return labels


def lp_upper_bound(data: Problem3Data, mu: float, nu: float, positives: Optional[int] = None,
                   rounds: int = 10, links=None) -> float:
    """An upper bound on the MIP optimum: the least LP value of the labelings that alternating
    minimisation visits, at most :func:`heuristic_upper_bound`.

    Start from the 1-norm SVM on the labeled points (the :class:`LabelingLP` with every
    unlabeled point left out), label the unlabeled points best for its (w, g), solve that
    labeling's LP, relabel, until the labeling repeats (no step raises the value). Each value
    is attained by a labeling, so it bounds the optimum above, and big-M values from it
    (:func:`big_m`) shrink with it: M grows like the bound over mu, and the solver's integrality
    tolerance times M is how far a nearly integral binary may relax a row. The LPs go to HiGHS;
    when one does not solve, the heuristic's bound stands.
    """
    best = heuristic_upper_bound(data, mu, nu, positives, links)
    if links is not None:
        # w = 0, g = 0 with every slack 1 is feasible for any labeling: a labeling that keeps
        # the links has at most this value, if one exists (else the model is infeasible)
        best = min(best, data.A.shape[0] + nu * data.B.shape[0])
    if mu <= 0 or not data.B.shape[0]:
        return best

    lp = LabelingLP(data, mu, nu, get_backend(None, "lp"), get_profile(problem_class="lp"))
    labels = np.zeros(data.B.shape[0], dtype=int)
    seen = set()
    for _ in range(rounds):
        outcome = lp.solve(labels)
        if outcome.status != "optimal" or outcome.objective is None:
            break
        if labels.all():
            best = min(best, float(outcome.objective))
        w, g = solution_wg(lp.model)
        labels = _best_labels(data, w, g, positives, links)
        if labels is None or labels.tobytes() in seen:
            break
        seen.add(labels.tobytes())
    return best


def build_problem3(data: Problem3Data, *, mu: Optional[float], unlabeled: Optional[str] = None,
                   nu: float = 1.0, positives: Optional[int] = None,
                   M: Optional[np.ndarray] = None, links=None):
    """Build the Pyomo model of Problem 3.

    Parameters
    ----------
    data : Problem3Data
    mu : float or None
        Weight of the 1-norm of w; None drops z and the 1-norm constraints (RLP).
    unlabeled : {None, "lp", "mip"}
        None drops the unlabeled points (RLP, 1-norm SVM); "lp" keeps r and s with mutable costs
        nu/2 each (the VS3VM starting LP); "mip" adds the Bennett-Demiriz binaries, costs nu.
    nu : float
    positives : int, optional
        MIP only: exactly this many unlabeled points labeled +1.
    M : ndarray, optional
        MIP only: big-M per unlabeled point; by default :func:`big_m` with the upper bound of
        :func:`lp_upper_bound` (over the labelings that keep ``links``).
    links : s3vm.solvers.bnb.links.Links, optional
        MIP only: the groups' ties between the unlabeled points' labels, as linear rows on d
        (``groups``: d_i = d_j on a must-link, d_i + d_j = 1 on a cannot-link, d_j fixed by a
        labeled row).

    Returns
    -------
    pyomo.environ.ConcreteModel
        Components w, g, y (and z, r, s, d), params mu, cost_r, cost_s, objective ``obj``.
    """
    import pyomo.environ as pyo

    (A, B), dlab = data.rows(), data.d
    l, p = A.shape
    u = B.shape[0] if unlabeled else 0
    m = pyo.ConcreteModel(name="problem3")
    m.problem_data = data  # a plain attribute: drivers and fill() need the arrays
    m.F = pyo.RangeSet(0, p - 1)
    m.L = pyo.RangeSet(0, l - 1)
    m.w = pyo.Var(m.F, initialize=0.0)
    m.g = pyo.Var(initialize=0.0)
    m.y = pyo.Var(m.L, within=pyo.NonNegativeReals, initialize=0.0)

    # Labeled margins: rows [d_i A_i, -d_i, e_i] . (w, g, y) >= 1.
    labeled = hstack_blocks([(A * dlab[:, None], p), (-dlab[:, None], 1), (sp.eye(l), l)], l)
    m.labeled_margin = matrix_constraint(labeled, var_list(m.w, m.g, m.y), lb=1.0)

    objective_terms = [pyo.quicksum(m.y[i] for i in m.L)]
    if mu is not None:
        m.z = pyo.Var(m.F, within=pyo.NonNegativeReals, initialize=0.0)
        m.mu = pyo.Param(mutable=True, initialize=float(mu), within=pyo.NonNegativeReals)
        eye = sp.eye(p)
        # w - z <= 0 and w + z >= 0 together say |w_k| <= z_k.
        m.norm_upper = matrix_constraint(sp.hstack([eye, -eye]), var_list(m.w, m.z), ub=0.0)
        m.norm_lower = matrix_constraint(sp.hstack([eye, eye]), var_list(m.w, m.z), lb=0.0)
        objective_terms.append(m.mu * pyo.quicksum(m.z[k] for k in m.F))

    if unlabeled:
        m.U = pyo.RangeSet(0, u - 1)
        m.r = pyo.Var(m.U, within=pyo.NonNegativeReals, initialize=0.0)
        m.s = pyo.Var(m.U, within=pyo.NonNegativeReals, initialize=0.0)
        cost = nu if unlabeled == "mip" else nu / 2.0
        m.cost_r = pyo.Param(m.U, mutable=True, initialize=cost)
        m.cost_s = pyo.Param(m.U, mutable=True, initialize=cost)
        ones = np.ones((u, 1))
        eye = sp.eye(u)
        if unlabeled == "mip":
            if M is None:
                mu_ = mu if mu is not None else 0.0
                M = big_m(data, mu_, nu, lp_upper_bound(data, mu_, nu, positives, links=links))
            M = np.broadcast_to(np.asarray(M, dtype=float), (u,))
            m.d = pyo.Var(m.U, within=pyo.Binary, initialize=0)
            # Mutable: the rows read M_j from the Param (bind_diagonal), so that a larger M_j
            # set here (by hand, or by s3vm.build's solve for a changed model) is the model's.
            m.big_m = pyo.Param(m.U, mutable=True, within=pyo.PositiveReals,
                                initialize=dict(enumerate(M.tolist())))
            # B w - g + r - M d >= 1 - M  and  -B w + g + s + M d >= 1.
            plus = hstack_blocks([(B, p), (-ones, 1), (eye, u), (sp.diags(-M), u)], u)
            minus = hstack_blocks([(-B, p), (ones, 1), (eye, u), (sp.diags(M), u)], u)
            m.plus_side = matrix_constraint(plus, var_list(m.w, m.g, m.r, m.d), lb=1.0 - M)
            m.minus_side = matrix_constraint(minus, var_list(m.w, m.g, m.s, m.d), lb=1.0)
            d_column = p + 1 + u
            bind_diagonal(m.plus_side, d_column, [-m.big_m[j] for j in range(u)],
                          [1.0 - m.big_m[j] for j in range(u)])
            bind_diagonal(m.minus_side, d_column, [m.big_m[j] for j in range(u)])
            if positives is not None:
                m.balance = pyo.Constraint(expr=pyo.quicksum(m.d[j] for j in m.U) == positives)
            if links is not None:
                m.groups = tie_binaries(m.d, links)
        else:
            plus = hstack_blocks([(B, p), (-ones, 1), (eye, u)], u)
            minus = hstack_blocks([(-B, p), (ones, 1), (eye, u)], u)
            m.plus_side = matrix_constraint(plus, var_list(m.w, m.g, m.r), lb=1.0)
            m.minus_side = matrix_constraint(minus, var_list(m.w, m.g, m.s), lb=1.0)
        objective_terms.append(pyo.sum_product(m.cost_r, m.r))
        objective_terms.append(pyo.sum_product(m.cost_s, m.s))

    m.obj = pyo.Objective(expr=sum(objective_terms), sense=pyo.minimize)
    return m


def update_costs(model, mu: float, nu: float) -> bool:
    """Set mu and nu in a model of :func:`build_problem3` (its mutable Params ``mu``, ``cost_r``
    and ``cost_s``: nu in the MIP, nu / 2 in the successive LPs' first one); False when the
    model holds one of them as a constant (the dual form, a model without the term)."""
    import pyomo.environ as pyo

    mu_param = getattr(model, "mu", None)
    if not isinstance(mu_param, pyo.Param) and mu is not None:
        return False
    if isinstance(mu_param, pyo.Param):
        model.mu = float(mu)
    if hasattr(model, "cost_r"):
        cost = float(nu) if hasattr(model, "d") else float(nu) / 2.0
        for j in model.U:
            model.cost_r[j] = cost
            model.cost_s[j] = cost
    return True


#: HiGHS options of :class:`LabelingLP`: feasibility tolerances well below the smallest costs
#: the settings admit (mu, nu >= 1e-9 times the unit cost of a labeled slack).
HIGHS_TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


class LabelingLP:
    """The LP of Problem 3 at one labeling, without big-M, re-solved for labeling after labeling.

    The model is :func:`build_problem3` with ``unlabeled="lp"``: both sides' rows of every
    unlabeled point, with mutable costs. Labeling point j +1 charges nu to r_j and nothing to
    s_j, so s_j absorbs the other side's row at no cost (and the same the other way round); a
    point left at 0 costs nothing on either side and drops out, which is the LP of the labeled
    points and the fixed ones only. Its optimum at a full labeling is the MIP objective of that
    labeling exactly, with no M in any row: the MIP's integrality tolerance, which lets a binary
    of 1e-7 relax a row by 1e-7 M, has nothing to act on, so this is the value a result reports
    for its labels. Only costs change between solves, so a persistent session re-solves from the
    last basis.

    Parameters
    ----------
    data : Problem3Data
    mu, nu : float
    backend : s3vm.solvers.backends.base.Backend
        An LP backend.
    profile : s3vm.solvers.profiles.SolverProfile
    """

    def __init__(self, data: Problem3Data, mu: float, nu: float, backend, profile, clock=None):
        self.model = build_problem3(data, mu=mu, unlabeled="lp", nu=nu)
        self.nu = float(nu)
        if backend.name == "highs":
            # HiGHS's default tolerances (1e-7) are absolute: with mu = 1e-9 the costs of the
            # 1-norm lie below them and a warm re-solve stops up to 20 % above the optimum,
            # where a 1e-10 tolerance agrees with a cold solve to 1e-14.
            profile = profile.updated(options={**HIGHS_TIGHT, **profile.options})
        self.session = backend.session(self.model, profile, clock)

    def solve(self, labels: np.ndarray):
        """Solve at ``labels`` (+1, -1, or 0 for a point left out); the session's Outcome, with
        w and g loaded into :attr:`model` when it has a solution."""
        labels = np.asarray(labels)
        cost_r, cost_s = self.model.cost_r, self.model.cost_s
        for j, label in enumerate(labels.tolist()):
            cost_r[j] = self.nu if label > 0 else 0.0
            cost_s[j] = self.nu if label < 0 else 0.0
        return self.session.resolve()


def labeling_value(data: Problem3Data, labels: np.ndarray, mu: float, nu: float,
                   backend=None, profile=None, clock=None):
    """(objective, w, g) of Problem 3 at one full labeling by :class:`LabelingLP` (HiGHS by
    default), under the solve's ``clock`` (None: no limit); objective is None when the LP does
    not solve to optimality."""
    if backend is None:
        backend, profile = get_backend(None, "lp"), get_profile(problem_class="lp")
    lp = LabelingLP(data, mu, nu, backend, profile, clock)
    outcome = lp.solve(labels)
    if outcome.status != "optimal" or outcome.objective is None:
        return None, None, None
    w, g = solution_wg(lp.model)
    return float(outcome.objective), w, g


#: The tolerance of ``optimal`` for the Bennett-Demiriz MIP (docs/reliability.md): the exact
#: objective of the returned labels less the proven bound is at most this times
#: max(1, |objective|), the gap of docs/formulations.md#reported.
OPTIMALITY_GAP = 1e-6


def objective_of_point(data: Problem3Data, labels: np.ndarray, w: np.ndarray, g: float,
                       mu: float, nu: float) -> float:
    """Problem 3's objective at the point (w, g) and a full labeling (+1/-1 per unlabeled row),
    each slack at its least: the value the point itself has, from the exact arrays A and B
    (the model's rows drop kernel values below :data:`TINY_KERNEL`)."""
    fL, fU = data.A @ w - g, data.B @ w - g
    return float(np.maximum(0.0, 1.0 - data.d * fL).sum() + mu * np.abs(w).sum()
                 + nu * np.maximum(0.0, 1.0 - np.asarray(labels) * fU).sum())


def exact_result_check(result, value: Optional[float], model_objective: Optional[float],
                       bound: Optional[float], point: Optional[float] = None,
                       singular_for_mu: Optional[float] = None) -> tuple:
    """(objective, lower bound) of a Bennett-Demiriz result whose objective is ``value``, the
    exact LP value of its labels (:func:`labeling_value`), and the status that goes with them.

    The solver's ``model_objective`` and ``bound`` come from the big-M model under its
    tolerances. Status ``optimal`` stays only when ``bound`` is within :data:`OPTIMALITY_GAP` of
    ``value``; otherwise the solver's optimum rested on a point that relaxes some big-M row by
    its tolerances (or its bound is off), and the result says so: ``feasible``, with the exact
    objective and the solver's numbers in ``info``.

    ``point`` is the objective of the point the result returns (:func:`objective_of_point`).
    Where the labeling's LP was not solved (``value`` None) the result returns the MIP's own
    point, and its objective is that point's, not the MIP's value, which rests on rows the
    solver's tolerances relaxed (0.078 against the point's 9.97 on blobs_small, rbf sigma 2e4,
    mu 1e-9). ``singular_for_mu`` says that LP failed (the time limit did not skip it): the
    mark of a kernel too close to singular for that mu (the LP's w grows to 1e8), which
    ``info["singular_kernel"]`` and the message then say.
    """
    result.info["mip_objective"] = model_objective
    result.info["solver_bound"] = bound
    if value is None:
        # (at a time limit the clock may leave no time for it: the limit's message stays)
        note = "the LP of the returned labels did not solve"
        if singular_for_mu is not None:
            note += f" (the kernel is too close to singular for mu = {singular_for_mu:g})"
            result.info["singular_kernel"] = True
        note += (": the objective is the solver's, under its tolerances" if point is None
                 else ": the objective is the MIP's point's, at these labels")
        result.info["objective_note"] = note
        if result.status == "optimal":
            result.status = "feasible"
            result.message = note
        elif singular_for_mu is not None:
            result.message = f"{result.message}; {note}" if result.message else note
        return (model_objective if point is None else point), bound
    if result.status == "optimal" and (
            bound is None or value - bound > OPTIMALITY_GAP * max(1.0, abs(value))):
        result.status = "feasible"
        result.message = (
            f"inaccurate: the solver's optimum {model_objective:.6g} is below {value:.6g}, the "
            f"exact objective of its labels, by more than the gap tolerance; its integrality "
            f"and feasibility tolerances acting on the big-M values (up to "
            f"{float(np.max(result.info.get('max_M', 0.0))):.3g}) relaxed some rows: mu or nu "
            f"is at an extreme scale (docs/reliability.md, the tolerance policy)")
    return value, bound


def build_problem3_dual(data: Problem3Data, *, mu: Optional[float],
                        unlabeled: Optional[str] = None, nu: float = 1.0):
    """Build the LP dual of Problem 3's LP (``unlabeled`` None or "lp"), as a Pyomo model.

    With multipliers a >= 0 (labeled margins), b >= 0 and c >= 0 (the two unlabeled sides),
    eliminating the multipliers of -z <= w <= z:

        min  -(e'a + e'b + e'c)
        s.t. -mu <= A'D a + B'(b - c) <= mu      (one row per column of A: ``norm_rows``)
             d'a + e'b - e'c = 0                 (``bias_row``)
             0 <= a <= 1,  0 <= b <= c_r,  0 <= c <= c_s

    (for RLP, mu = None, the first block is = 0). It has p + 1 rows against the primal's
    l + 2u + 2p, so its simplex bases are tiny: at 100,000 points it solves an order of
    magnitude faster. The primal costs c_r, c_s are the mutable upper bounds of b and c, so
    VS3VM's steps change bounds here. w and g are the duals of the rows:
    w = -dual(norm_rows), g = dual(bias_row) (:func:`solution_wg`). Its optimum is minus the
    primal optimum.
    """
    import pyomo.environ as pyo

    (A, B), dlab = data.rows(), data.d
    l, p = A.shape
    u = B.shape[0] if unlabeled else 0
    m = pyo.ConcreteModel(name="problem3_dual")
    m.problem_data = data
    m.dual_form = True
    m.F = pyo.RangeSet(0, p - 1)
    m.L = pyo.RangeSet(0, l - 1)
    m.a = pyo.Var(m.L, bounds=(0.0, 1.0), initialize=0.0)
    blocks = [(sp.csr_matrix((A * dlab[:, None]).T), l)]
    bias = [dlab]
    cols = [m.a]
    if unlabeled:
        m.U = pyo.RangeSet(0, u - 1)
        cost = nu / 2.0
        m.cost_r = pyo.Param(m.U, mutable=True, initialize=cost)
        m.cost_s = pyo.Param(m.U, mutable=True, initialize=cost)
        m.b = pyo.Var(m.U, within=pyo.NonNegativeReals, initialize=0.0)
        m.c = pyo.Var(m.U, within=pyo.NonNegativeReals, initialize=0.0)
        for j in m.U:  # the bounds are the mutable costs: a change here is a bound change
            m.b[j].setub(m.cost_r[j])
            m.c[j].setub(m.cost_s[j])
        blocks += [(sp.csr_matrix(B.T), u), (sp.csr_matrix(-B.T), u)]
        bias += [np.ones(u), -np.ones(u)]
        cols += [m.b, m.c]
    x = var_list(*cols)
    norm = hstack_blocks(blocks, p)
    bound = 0.0 if mu is None else float(mu)
    m.norm_rows = matrix_constraint(norm, x, lb=-bound, ub=bound)
    # A feature that is zero on every point gives an empty row, which the solver never sees:
    # its w_k is 0 at every optimum (penalised, or without effect for RLP).
    m.empty_norm_rows = frozenset(np.flatnonzero(np.diff(norm.indptr) == 0).tolist())
    m.bias_row = matrix_constraint(np.concatenate(bias)[None, :], x, lb=0.0, ub=0.0)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    objective = [pyo.quicksum(m.a[i] for i in m.L)]
    if unlabeled:
        objective += [pyo.quicksum(m.b[j] for j in m.U), pyo.quicksum(m.c[j] for j in m.U)]
    m.obj = pyo.Objective(expr=-sum(objective), sense=pyo.minimize)
    return m


def solution_wg(model) -> tuple[np.ndarray, float]:
    """(w, g) of a solved Problem 3 model, primal or dual form."""
    if getattr(model, "dual_form", False):
        duals = model.dual
        empty = model.empty_norm_rows
        w = -np.array([duals.get(model.norm_rows[k], 0.0 if k in empty else np.nan)
                       for k in model.F], dtype=float)
        return w + 0.0, float(duals.get(model.bias_row[0], np.nan))
    w = np.array([model.w[k].value for k in model.F], dtype=float)
    return w, float(model.g.value)


def unlabeled_scores(model) -> np.ndarray:
    """f(x_j) = B_j w - g for the unlabeled points of a solved model (larger means +1)."""
    w, g = solution_wg(model)
    return model.problem_data.B @ w - g


def primal_values(model) -> dict:
    """w, b = -g and the labeled slacks y of a solved model (either form) as numpy arrays.

    Slacks are recomputed from w and g (their least feasible values), which is what the
    objective charges wherever the cost is positive.
    """
    w, g = solution_wg(model)
    data = model.problem_data
    out = {"w": w, "b": -g, "y": np.maximum(0.0, 1.0 - data.d * (data.A @ w - g))}
    if hasattr(model, "d") and not getattr(model, "dual_form", False):
        out["d"] = np.rint(np.array([model.d[j].value for j in model.U], dtype=float))
    return out
