"""VS3VM: Fung and Mangasarian's concave S3VM solved by successive linear approximation (seed 004).

    min  f(w, g, y, z, r, s) = e'y + mu e'z + nu e' min(r, s)   over the polyhedron of Problem 3.

The first LP charges nu/2 e'(r + s) (the supergradient at r = s with lambda = 1/2). Each next LP
charges nu r_j when r_j < s_j, nu s_j when r_j > s_j, and nu/2 each at a tie (lambda = 0.5), at
the last iterate. Only objective coefficients change, so one Pyomo model and one persistent solver
serve the whole sequence. ``--kernel rbf`` replaces w by a kernel expansion over all points, the
kernel VS3VM that the seed lists as future work; the LPs stay LPs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Stopwatch
from .solvers.errors import InputError
from .linear_svm import DualFormLP
from .problem3 import Problem3Data, build_problem3, build_problem3_dual, solution_wg
from .pyomo_formulation import PyomoFormulation, labels_from_scores

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
        Cap on the number of LPs (the seed reports 5 to 7).
    tol : float
        Relative tolerance of the stopping condition.
    lp_form : {"auto", "dual", "primal"}
        Which form of each LP the solver gets (see :class:`DualFormLP`); in the dual form the
        supergradient's costs are bounds of the dual variables.
    warm_start : bool
        Re-solve each LP from the last basis (default); False solves each from scratch.
    """

    name: ClassVar[str] = "vs3vm"
    summary: ClassVar[str] = "concave S3VM by successive LPs with supergradients (Fung-Mangasarian)"
    problem_class: ClassVar[str] = "lp"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "mu", "nu", "balance")

    def __init__(self, max_lps: int = 50, tol: float = 1e-9, lp_form: str = "auto",
                 warm_start: bool = True):
        super().__init__(lp_form)
        self.warm_start = bool(warm_start)
        if isinstance(max_lps, bool) or not isinstance(max_lps, int) or max_lps < 1:
            raise InputError(f"max_lps must be a positive integer, got {max_lps}")
        self.max_lps, self.tol = max_lps, tol

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.balance != "none":
            raise InputError("vs3vm has no balance constraint: use --balance none "
                             "(bd-mip takes --balance count)")

    def build(self, instance, settings):
        return build_problem3(Problem3Data.from_instance(instance, settings), mu=settings.mu,
                              unlabeled="lp", nu=settings.nu)

    def model_to_solve(self, instance, settings, backend):
        if not self.use_dual(backend):
            return self.build(instance, settings)
        return build_problem3_dual(Problem3Data.from_instance(instance, settings),
                                   mu=settings.mu, unlabeled="lp", nu=settings.nu)

    def solve(self, instance, settings, profile):
        from .solvers.registry import get_backend
        from .solvers.slp import successive_lp

        self.check(instance, settings)
        # The backend import (Pyomo and the solver library, ~1 s) stays outside the clock, so
        # that the first of several formulations compared is not charged for it.
        backend = get_backend(profile.solver, self.problem_class)
        import pyomo.environ  # noqa: F401  (same reason)

        clock = Stopwatch()
        model = self.model_to_solve(instance, settings, backend)
        problem = ConcaveS3VM(model, settings.mu, settings.nu)
        trace = successive_lp(problem, self.session(backend, model, profile),
                              max_lps=self.max_lps, tol=self.tol, time_limit=profile.time_limit)
        return self.result_from_trace(trace, model, backend, clock)

    def session(self, backend, model, profile):
        session = backend.session(model, profile)
        session.warm = self.warm_start
        return session

    def result_from_trace(self, trace, model, backend, clock):
        from .solvers.results import Result

        result = Result(formulation=self.name, solver=backend.name, status=trace.status,
                        iterations=trace.n_lps, message=trace.stop or trace.message)
        x = trace.x
        if x is not None:
            data = model.problem_data
            scores = data.B @ x.w - x.g
            result.objective = trace.objective
            result.decision_values = scores
            result.labels = labels_from_scores(scores)
            result.primal = {"w": x.w, "b": -x.g, "y": x.y, "z": x.z, "r": x.r, "s": x.s}
        result.info = {"objectives": trace.objectives, "lp_iterations": trace.lp_iterations,
                       "lp_seconds": trace.lp_seconds, "stop": trace.stop}
        result.seconds = clock.seconds
        return result
