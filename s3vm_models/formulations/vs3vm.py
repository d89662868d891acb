"""VS3VM: Fung and Mangasarian's concave S3VM solved by successive linear approximation.

Fung and Mangasarian (2001); docs/formulations.md#vs3vm.

    min  f(w, g, y, z, r, s) = e'y + mu e'z + nu e' min(r, s)   over the polyhedron of Problem 3.

The first LP charges nu/2 e'(r + s) (the supergradient at r = s with lambda = 1/2). Each next LP
charges nu r_j when r_j < s_j, nu s_j when r_j > s_j, and nu/2 each at a tie (lambda = 0.5), at
the last iterate. Only objective coefficients change, so one Pyomo model and one persistent solver
serve the whole sequence. ``--kernel rbf`` replaces w by a kernel expansion over all points, the
kernel VS3VM that Fung and Mangasarian's talk on this work lists as a future direction; the LPs
stay LPs (docs/formulations.md#problem-3-kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from s3vm.core.options import Option
from s3vm.formulations.families.pyomo import PyomoFormulation, labels_from_scores, update_problem3
from s3vm.formulations.families.supervised_lp import LP_FORM, DualFormLP
from s3vm.models.problem3 import (
    COMPONENTS,
    NORM_COMPONENTS,
    SIDES_COMPONENTS,
    Problem3Data,
    build_problem3,
    build_problem3_dual,
    solution_wg,
)
from s3vm.solvers.engines.slp import successive_lp

TIE_TOL = 1e-9  # r_j and s_j closer than this (relative) count as a tie: lambda = 0.5


@dataclass
class Iterate:
    """Numpy copies of one LP solution."""

    w: np.ndarray
    g: float
    y: np.ndarray
    z: np.ndarray
    r: np.ndarray
    s: np.ndarray


class ConcaveS3VM:
    """Problem 3's concave objective on a built model (the driver's ConcaveProblem)."""

    def __init__(self, model, mu: float, nu: float):
        self.model, self.mu, self.nu = model, mu, nu
        self.cost_r = np.full(len(model.cost_r), nu / 2.0)
        self.cost_s = np.full(len(model.cost_s), nu / 2.0)

    def read(self) -> Iterate:
        # Slacks are computed from w and g, not read from the LP: an LP may leave a slack above
        # its minimum where its cost is zero, and f counts min(r, s) at the iterate's w and g.
        w, g = solution_wg(self.model)
        data = self.model.problem_data
        fL = data.A @ w - g
        fU = data.B @ w - g
        return Iterate(w=w, g=g, y=np.maximum(0.0, 1.0 - data.d * fL), z=np.abs(w),
                       r=np.maximum(0.0, 1.0 - fU), s=np.maximum(0.0, 1.0 + fU))

    def value(self, x: Iterate) -> float:
        return float(x.y.sum() + self.mu * x.z.sum() + self.nu * np.minimum(x.r, x.s).sum())

    def supergradient(self, x: Iterate) -> tuple[np.ndarray, np.ndarray]:
        """Costs (c_r, c_s) of the supergradient of nu e' min(r, s) at x, lambda = 0.5 at ties."""
        tie = np.abs(x.r - x.s) <= TIE_TOL * np.maximum(1.0, np.abs(x.r) + np.abs(x.s))
        c_r = np.where(tie, 0.5, np.where(x.r < x.s, 1.0, 0.0)) * self.nu
        return c_r, self.nu - c_r

    def linearize(self, x: Iterate) -> None:
        c_r, c_s = self.supergradient(x)
        changed_r, changed_s = c_r != self.cost_r, c_s != self.cost_s
        # Only the changed coefficients go to the model, so the solver updates only those.
        for param, costs, changed in ((self.model.cost_r, c_r, changed_r),
                                      (self.model.cost_s, c_s, changed_s)):
            idx = np.flatnonzero(changed)
            if idx.size:
                param.store_values(dict(zip(idx.tolist(), costs[idx].tolist())))
        self.cost_r, self.cost_s = c_r, c_s

    def linear_value(self, x: Iterate) -> float:
        return float(x.y.sum() + self.mu * x.z.sum() + self.cost_r @ x.r + self.cost_s @ x.s)


class VS3VM(DualFormLP, PyomoFormulation):
    """Successive linear approximation of the concave S3VM (``--mu``, ``--nu``, ``--kernel``).

    Parameters
    ----------
    max_lps : int
        Cap on the number of LPs (Fung and Mangasarian report 5 to 7).
    tol : float
        Relative tolerance of the stopping condition.
    lp_form : {"auto", "dual", "primal"}
        Which form of each LP the solver gets (see :class:`DualFormLP`); in the dual form the
        supergradient's costs are bounds of the dual variables.
    warm_start : bool
        Re-solve each LP from the last basis (default); False solves each from scratch.
    """

    problem: ClassVar[int] = 3

    name: ClassVar[str] = "vs3vm"
    local: ClassVar[bool] = True
    #: peak bytes per n^2 entry (linear, rbf), measured: rbf: the kernel expansion over all points
    dense_bytes: ClassVar[tuple] = (0, 640)
    summary: ClassVar[str] = "concave S3VM by successive LPs with supergradients (Fung-Mangasarian)"
    problem_class: ClassVar[str] = "lp"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "mu", "nu")
    #: mutable Params of the primal form (lp_form="dual" rebuilds)
    in_place_settings: ClassVar[tuple] = ("mu", "nu")
    update_model = update_problem3
    settings_fixed: ClassVar[dict] = {
        "balance": ("none", "vs3vm has no balance constraint (bd-mip, bb-mip and bb take "
                            "--balance count)")}
    options: ClassVar[tuple] = (
        Option("max_lps", "int", 50, "cap on the number of LPs", minimum=1),
        Option("tol", "float", 1e-9, "relative tolerance of the stopping condition",
               minimum=0.0, cli=False),
        LP_FORM,
        Option("warm_start", "bool", True, "re-solve each LP from the last basis", cli=False),
    )
    #: The model is its first LP; its costs change from one LP to the next.
    components: ClassVar[dict] = {
        **COMPONENTS, **NORM_COMPONENTS, **SIDES_COMPONENTS,
        "cost_r[j], cost_s[j]": "mutable Params, nu/2 each: the first LP of the successive "
                                "linear approximation"}

    def build(self, instance, settings):
        return build_problem3(Problem3Data.from_instance(instance, settings), mu=settings.mu,
                              unlabeled="lp", nu=settings.nu)

    def model_to_solve(self, instance, settings, backend):
        if not self.use_dual(backend):
            return self.build(instance, settings)
        return build_problem3_dual(Problem3Data.from_instance(instance, settings),
                                   mu=settings.mu, unlabeled="lp", nu=settings.nu)

    def run(self, instance, settings, backend, profile, clock, result):
        clock.report(phase="building the LP")
        with clock.abortable():  # Pyomo's construction has no place for a checkpoint
            model = self.model_to_solve(instance, settings, backend)
        clock.checkpoint()
        problem = ConcaveS3VM(model, settings.mu, settings.nu)
        clock.report(phase=f"setting up the LP ({backend.name})")
        session = backend.session(model, profile, clock)
        session.warm = self.warm_start
        data = model.problem_data

        def on_iterate(x, f, k):
            scores = data.B @ x.w - x.g
            clock.report(phase=f"successive LPs, LP {k}", iterations=k, objective=f,
                         decision_values=scores, labels=labels_from_scores(scores))

        clock.report(phase="successive LPs, LP 1")
        trace = successive_lp(problem, session, max_lps=self.max_lps, tol=self.tol, clock=clock,
                              on_iterate=on_iterate)
        self.fill_from_trace(result, trace, model)
        return model

    def fill_from_trace(self, result, trace, model) -> None:
        """Status, objective, labels and the last iterate of a successive-LP run."""
        result.status, result.iterations = trace.status, trace.n_lps
        result.message = trace.stop or trace.message
        x = trace.x
        if x is not None:
            data = model.problem_data
            scores = data.B @ x.w - x.g
            result.objective = trace.objective
            result.decision_values = scores
            result.labels = labels_from_scores(scores)
            result.primal = {"w": x.w, "b": -x.g, "y": x.y, "z": x.z, "r": x.r, "s": x.s}
        result.info.update({"objectives": trace.objectives, "lp_iterations": trace.lp_iterations,
                            "lp_seconds": trace.lp_seconds, "stop": trace.stop})
