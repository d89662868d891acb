"""Lower bounds for the Bennett-Demiriz MIP (docs/formulations.md#bd-mip) from its LP relaxation.

The MIP of :func:`s3vm.models.problem3.build_problem3` (``unlabeled="mip"``) is

    min  e'y + mu e'z + nu e'(r + s)
    s.t. D(A w - e g) + y >= e,   -z <= w <= z,
         B w - e g + r + M (e - d) >= e,   -B w + e g + s + M d >= e,
         y, z, r, s >= 0,   d in {0, 1}^u   (optionally e'd = P),

where d_j = 1 labels unlabeled point j as +1 (charges r_j) and d_j = 0 labels it -1 (charges s_j).
A node of the branch-and-bound tree is a partial labeling y_U in {-1, 0, +1}^u; its bound is the
LP relaxation of the same model with

    d_j = 1 where y_j = +1,   d_j = 0 where y_j = -1,   0 <= d_j <= 1 where y_j = 0.

Every completion of the node is a feasible point of this LP, so its optimum is a lower bound on
the MIP over the node's subtree. When the LP's free d_j come out integral, the LP solution is
feasible for the MIP at that labeling and attains the bound: the labeling is optimal in the
subtree and is returned as a candidate incumbent, valued by its own LP. A labeling's value
(:meth:`LPRelaxationProblem.objective`, the leaves and the incumbents) is the LP of that labeling
without big-M (:class:`s3vm.models.problem3.LabelingLP`), a second session on a model of its own:
the relaxation's "integral" d_j are integral only up to the LP's tolerance, and d_j = 1e-7 relaxes a
row by 1e-7 M_j, which with M_j = 1e7 (mu = 1e-6) frees the point; a value read off such a
solution lay below every labeling's, became the incumbent and pruned the optimum.

The model is relaxed once (the binaries' domain becomes [0, 1]) and solved through a persistent
session (:class:`s3vm.solvers.backends.pyomo.highs.HighsSession` by default): moving from one node
to the next fixes and frees only the d_j that differ, so HiGHS re-solves by dual simplex from the
last basis.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from s3vm.models.problem3 import LabelingLP, primal_values, unlabeled_scores
from s3vm.solvers.bnb.links import round_scores
from s3vm.solvers.bnb.problem import LabelingProblem, NodeBound
from s3vm.solvers.runtime.clock import Stopped

INTEGRALITY_TOL = 1e-6  # a relaxed d_j this close to 0 or 1 counts as integral
#: HiGHS's own feasibility tolerances, for the retry of a labeling LP that failed at tight ones
HIGHS_DEFAULT_TOLERANCES = {"primal_feasibility_tolerance": 1e-7,
                            "dual_feasibility_tolerance": 1e-7}


def relax_binaries(model) -> None:
    """Give the side binaries ``d`` of a Problem 3 MIP model the domain [0, 1], in place.

    The model stays the same object (its constraints, big-M values and costs are untouched), so
    the relaxation solved at every node is the LP relaxation of exactly that MIP.
    """
    import pyomo.environ as pyo

    for var in model.d.values():
        var.domain = pyo.UnitInterval


class LPRelaxationProblem(LabelingProblem):
    """The Bennett-Demiriz MIP as a :class:`LabelingProblem`, bounded by its LP relaxation.

    Parameters
    ----------
    model : pyomo.environ.ConcreteModel
        A Problem 3 model built with ``unlabeled="mip"`` (with its ``balance`` constraint when
        ``positives`` is given). Its binaries are relaxed here (:func:`relax_binaries`).
    backend : s3vm.solvers.backends.base.Backend
        An LP backend; its :meth:`session` solves every node's LP.
    profile : s3vm.solvers.profiles.SolverProfile
        Options of the LP solves.
    positives : int, optional
        The balance count (exactly P unlabeled points labeled +1), as in the model.
    links : s3vm.solvers.bnb.links.Links, optional
        The groups, as the model's ``groups`` rows state them: the driver branches on whole
        groups, and the starting labeling keeps them.
    clock : s3vm.solvers.runtime.clock.Clock, optional
        The solve's: every LP gets the time it has left, and a stop ends the search.

    Attributes
    ----------
    lp_solves : int
        Number of LPs solved so far.
    lp_iterations : int
        Simplex (and interior point) iterations over all of them.
    """

    def __init__(self, model, backend, profile, positives: Optional[int] = None, links=None,
                 clock=None):
        import pyomo.environ as pyo

        relax_binaries(model)
        self.model = model
        self.u = len(model.U)
        self.positives = positives
        self.links = links
        self.clock = clock
        self.session = backend.session(model, profile, clock)
        self.profile = profile
        self._loose_lp = None  # the labeling LP at default tolerances, made on first need
        #: (mu, nu) of the labelings' LPs
        self.labeling_lp_costs = (pyo.value(model.mu), pyo.value(model.cost_r[0]))
        self.labeling_lp = LabelingLP(model.problem_data, *self.labeling_lp_costs, backend,
                                      profile, clock)
        # The fixing the model holds now (+1: d = 1, -1: d = 0, 0: free), so that a node changes
        # only the binaries that differ from the last node solved.
        self._fixed = np.zeros(self.u, dtype=int)
        self._d = [model.d[j] for j in range(self.u)]
        self.lp_solves = 0
        self.lp_iterations = 0
        # Labelings whose own LP failed even cold (their keys, int8 bytes): valued by the big-M
        # LP (unverified) or skipped, and the first failure's message (see qualify()).
        self._failing: set = set()
        self.unverified: set = set()
        self.skipped: set = set()
        self.failures: dict = {}
        # The labeling whose big-M LP solution the model holds (None: a node's relaxation).
        self._mip_labels: Optional[np.ndarray] = None

    # -- the session ----------------------------------------------------------------------
    def _apply(self, partial: np.ndarray) -> None:
        partial = np.asarray(partial, dtype=int)
        for j in np.flatnonzero(partial != self._fixed):
            if partial[j] == 0:
                self._d[j].unfix()
            else:
                self._d[j].fix(1.0 if partial[j] > 0 else 0.0)
        self._fixed = partial.copy()

    def _solve(self, partial: np.ndarray):
        self._mip_labels = None  # the model's solution is now this node's
        self._apply(partial)
        outcome = self.session.resolve()
        self.lp_solves += 1
        self.lp_iterations += outcome.iterations or 0
        return outcome

    def relaxed_sides(self) -> np.ndarray:
        """The d values of the last LP solved (fixed ones included)."""
        return np.array([v.value for v in self._d], dtype=float)

    # -- LabelingProblem ------------------------------------------------------------------
    def bound(self, partial: np.ndarray, parent_state: Any = None) -> NodeBound:
        """The LP relaxation at the node; ``state`` is the bound itself.

        A child's LP is a restriction of its parent's, so when an LP stops without an optimum
        (time limit, numerical trouble) the parent's bound, passed as ``parent_state``, is still
        valid for the child and is returned instead.
        """
        outcome = self._solve(partial)
        if outcome.status == "infeasible":
            return NodeBound(value=float("inf"))
        free = np.flatnonzero(np.asarray(partial) == 0)
        if outcome.status != "optimal" or outcome.objective is None:
            inherited = -np.inf if parent_state is None else float(parent_state)
            return NodeBound(value=inherited, state=inherited,
                             branch_index=int(free[0]) if free.size else None)
        lp_value = float(outcome.objective)
        # LP tolerances must not make a child look better than its parent.
        value = lp_value if parent_state is None else max(lp_value, float(parent_state))
        d = self.relaxed_sides()
        node = NodeBound(value=value, state=value)
        if not free.size:
            labels = np.asarray(partial, dtype=int).copy()
            node.labels, node.labels_value = labels, self.objective(labels)
            return node
        fractionality = np.minimum(d[free], 1.0 - d[free])
        if fractionality.max() <= INTEGRALITY_TOL:
            labels = np.asarray(partial, dtype=int).copy()
            labels[free] = np.where(d[free] > 0.5, 1, -1)
            node.labels, node.labels_value = labels, self.objective(labels)
        # Most fractional binary: the LP is least sure of it, and both children move the bound.
        j = int(free[np.argmax(fractionality)])
        node.branch_index = j
        node.first_label = 1 if d[j] >= 0.5 else -1
        return node

    def _solve_labeling(self, labels: np.ndarray):
        outcome = self.labeling_lp.solve(labels)
        self.lp_solves += 1
        self.lp_iterations += outcome.iterations or 0
        # The labeling whose LP solution the labeling model now holds (None: none).
        self._solved_labels = np.array(labels, dtype=int) if outcome.status == "optimal" \
            else None
        return outcome

    def incumbent_outputs(self, labels: np.ndarray) -> Optional[np.ndarray]:
        """The new incumbent's decision values when its labeling's LP is the one last solved
        (the usual case: the driver values a labeling just before taking it), else None."""
        if self._mip_labels is not None and np.array_equal(self._mip_labels, labels):
            return unlabeled_scores(self.model)
        solved = getattr(self, "_solved_labels", None)
        if solved is None or not np.array_equal(solved, labels):
            return None
        return unlabeled_scores(self.labeling_lp.model)

    def objective(self, labels: np.ndarray) -> float:
        """The MIP objective at a full labeling: the labeling's own LP, without big-M."""
        if np.asarray(labels, dtype=np.int8).tobytes() in self._failing:
            # its LP failed before: straight to the big-M LP (the decision values ask again)
            return self._big_m_value(labels, self.failures.get("message", ""))
        outcome = self._solve_labeling(labels)
        if outcome.status == "infeasible":
            return float("inf")
        if outcome.status == "time_limit":
            # The solve's time is up in the middle of a leaf: the search stops here.
            raise Stopped("time limit")
        if outcome.status != "optimal" and self.clock is not None and self.clock.stopped:
            # An LP cancelled by a signal (HiGHS: "Interrupted by user"): the search stops
            # here too, with its incumbent, rather than failing.
            raise Stopped(self.clock.stop_reason)
        if outcome.status != "optimal":
            outcome = self._solve_labeling_again(labels, outcome)
        if outcome.status == "infeasible":
            return float("inf")
        if outcome.status != "optimal":
            return self._big_m_value(labels, outcome.message)
        return float(outcome.objective)

    def _big_m_value(self, labels: np.ndarray, failure: str) -> float:
        """The value of a labeling whose own LP failed even cold at default tolerances (a kernel
        too close to singular for a tiny mu): the big-M model's LP with every d_j fixed, the
        MIP's value at that labeling; NaN (the leaf skipped: the driver takes it for no
        candidate) when that fails too. Either is counted (:attr:`unverified`,
        :attr:`skipped`): the search then cannot claim its optimum (:meth:`qualify`)."""
        key = np.asarray(labels, dtype=np.int8).tobytes()
        self._failing.add(key)
        outcome = self._solve(np.asarray(labels, dtype=int))
        if outcome.status == "time_limit" or (outcome.status != "optimal" and self.clock
                                              is not None and self.clock.stopped):
            raise Stopped("time limit" if self.clock is None or self.clock.stop_reason is None
                          else self.clock.stop_reason)
        self.failures.setdefault("message", failure)
        if outcome.status == "infeasible":
            return float("inf")
        if outcome.status != "optimal" or outcome.objective is None:
            self.skipped.add(key)
            return float("nan")
        self.unverified.add(key)
        self._mip_labels = np.array(labels, dtype=int)
        return float(outcome.objective)

    def qualify(self) -> tuple[bool, str]:
        """(whether the lower bound stands, a note) after a search where some labelings' LPs
        failed (:meth:`_big_m_value`); (True, "") when none did.

        A labeling valued by the big-M LP keeps the bound (the relaxations never read a
        leaf's value) but not the word "optimal": its value is the big-M model's, not its own
        LP's. A skipped labeling may lie below the bound, which is then dropped."""
        if not (self.unverified or self.skipped):
            return True, ""
        mu = self.labeling_lp_costs[0]
        parts = []
        if self.unverified:
            parts.append(f"{len(self.unverified)} valued by the big-M LP instead")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped (the big-M LP failed too), so no "
                         "bound is proven")
        note = (f"the LP of {len(self.unverified) + len(self.skipped)} labeling(s) did not "
                f"solve ({self.failures.get('message')}) even cold at the solver's default "
                f"tolerances: {', '.join(parts)}; the kernel is too close to singular for mu = "
                f"{mu:g}: raise --mu, or change --sigma or the scaling")
        return not self.skipped, note

    def _solve_labeling_again(self, labels: np.ndarray, failed):
        """The labeling's LP solved once more, cold, at HiGHS's default tolerances: the
        session's tight ones (1e-10, :data:`s3vm.models.problem3.HIGHS_TIGHT`, for costs of
        mu = 1e-9) made HiGHS call the LP of a near-singular rbf kernel unbounded (two moons,
        sigma 10, mu 1e-9), an LP whose objective is at least 0; at 1e-7 every HiGHS method
        solves it. ``failed`` is returned where there is no such retry (another solver)."""
        if self.labeling_lp.session.backend.name != "highs":
            return failed
        if self._loose_lp is None:
            profile = self.profile.updated(options={**HIGHS_DEFAULT_TOLERANCES,
                                                    **self.profile.options})
            self._loose_lp = LabelingLP(self.model.problem_data, *self.labeling_lp_costs,
                                        self.labeling_lp.session.backend, profile, self.clock)
            self._loose_lp.session.warm = False
        outcome = self._loose_lp.solve(labels)
        self.lp_solves += 1
        self.lp_iterations += outcome.iterations or 0
        if outcome.status == "optimal":
            # its solution stands for the labeling (decision values and primal read it)
            self.labeling_lp, self._loose_lp = self._loose_lp, self.labeling_lp
            self._solved_labels = np.array(labels, dtype=int)
        return outcome

    def initial_incumbent(self):
        """The root LP's scores B w - g rounded to a labeling (the count respected), and its
        objective: one LP for the root and one for the labeling."""

        root = self._solve(np.zeros(self.u, dtype=int))
        if root.status != "optimal":
            return None
        labels = round_scores(unlabeled_scores(self.model), self.positives, self.links)
        if labels is None:
            return None
        value = self.objective(labels)
        if not np.isfinite(value):
            return None
        return labels, value, "lp-rounding"

    def decision_values(self, labels: np.ndarray) -> np.ndarray:
        """f(x_j) = B_j w - g of the LP at the labeling (the MIP's solution there)."""

        self.objective(labels)
        return unlabeled_scores(self._solution_model(labels))

    def primal(self, labels: np.ndarray) -> dict:
        """w, b and the labeled slacks of the MIP's solution at ``labels``."""

        self.objective(labels)
        return primal_values(self._solution_model(labels))

    def _solution_model(self, labels: np.ndarray):
        """The model holding the solution at ``labels`` just valued: the big-M model where the
        labeling's own LP failed (:meth:`_big_m_value`), else the labeling LP's."""
        if self._mip_labels is not None and np.array_equal(self._mip_labels, labels):
            return self.model
        return self.labeling_lp.model
