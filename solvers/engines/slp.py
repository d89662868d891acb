"""The successive linear programming driver: minimise a concave function over a polyhedron.

Each step replaces the concave objective f by its linearisation at the current iterate x_i
(a supergradient), solves that LP, and moves to its solution x_{i+1}. Since f lies below each of
its supporting planes, f(x_{i+1}) <= f(x_i) + g_i'(x_{i+1} - x_i) <= f(x_i): the sequence never
increases f. It stops when the LP can no longer decrease the linearisation,
g_i'(x_{i+1} - x_i) = 0 (Mangasarian's necessary optimality condition), within a tolerance.

The driver knows nothing of S3VMs: a :class:`ConcaveProblem` supplies f, its linearisation and a
way to read and restore iterates; a backend session re-solves the same model after each cost
change, so a persistent solver starts from the last basis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol

from s3vm.solvers.runtime.clock import Clock


class ConcaveProblem(Protocol):
    def read(self) -> Any:
        """The current iterate, read from the solved model (an opaque snapshot)."""

    def value(self, x) -> float:
        """The concave objective f at iterate x."""

    def linearize(self, x) -> None:
        """Set the model's objective to the linearisation of f at x (costs only)."""

    def linear_value(self, x) -> float:
        """The model's current (linear) objective evaluated at iterate x."""


@dataclass
class SLPTrace:
    """What the driver did: the objective of every iterate, LP statistics, why it stopped."""

    x: Any = None
    objective: Optional[float] = None
    objectives: list = field(default_factory=list)
    lp_iterations: list = field(default_factory=list)
    lp_seconds: list = field(default_factory=list)
    stop: str = ""
    status: str = "feasible"
    message: str = ""

    @property
    def n_lps(self) -> int:
        return len(self.lp_seconds)


def successive_lp(problem: ConcaveProblem, session, *, max_lps: int = 50, tol: float = 1e-9,
                  clock: Optional[Clock] = None,
                  on_iterate: Optional[Callable[[Any, float, int], None]] = None) -> SLPTrace:
    """Run the successive linear approximation from the LP the model currently holds.

    Parameters
    ----------
    problem : ConcaveProblem
    session : s3vm.solvers.backends.base.Session
        Solves the model in place; its ``resolve()`` returns an Outcome.
    max_lps : int
        Cap on the number of LPs, the starting LP included.
    tol : float
        The condition g'(x_{i+1} - x_i) = 0 is taken to hold when the decrease of the linearised
        objective is at most ``tol * max(1, |f(x_i)|)``.
    clock : Clock, optional
        The solve's clock; its limit (and a stop request) is checked between LPs (default: no
        limit).
    on_iterate : callable, optional
        ``on_iterate(x, f(x), k)`` after each LP k (1-based) whose iterate is kept as the best
        so far, for progress reports.

    Returns
    -------
    SLPTrace
        ``x`` is the last iterate: the one that satisfied the stopping condition, or the newest
        at a cap (the sequence is nonincreasing, so also the best).
    """
    trace = SLPTrace()
    clock = Clock() if clock is None else clock

    def solve() -> bool:
        outcome = session.resolve()
        trace.lp_seconds.append(outcome.seconds)
        trace.lp_iterations.append(outcome.iterations)
        if outcome.status != "optimal":
            # A time limit or infeasibility is reported as such; anything else is an error.
            trace.status = outcome.status if outcome.status in ("infeasible", "time_limit") \
                else "error"
            trace.message = f"LP {trace.n_lps}: {outcome.status} ({outcome.message})"
            return False
        return True

    if not solve():
        return trace
    x = problem.read()
    f = problem.value(x)
    trace.objectives.append(f)
    if not math.isfinite(f):
        trace.status, trace.message = "error", "the LP solution gave a non-finite objective"
        return trace
    if on_iterate is not None:
        on_iterate(x, f, trace.n_lps)
    while True:
        if trace.n_lps >= max_lps:
            trace.stop = f"LP cap ({max_lps}) reached"
            break
        if clock.expired():
            trace.stop, trace.status = "time limit reached", "time_limit"
            break
        problem.linearize(x)
        before = problem.linear_value(x)
        if not solve():
            break
        x_next = problem.read()
        f_next = problem.value(x_next)
        trace.objectives.append(f_next)
        if not math.isfinite(f_next):
            trace.status = "error"
            trace.message = f"LP {trace.n_lps}: the solution gave a non-finite objective"
            break
        decrease = before - problem.linear_value(x_next)
        scale = tol * max(1.0, abs(f))
        if decrease <= scale and f_next >= f - scale:
            # x minimises its own linearisation: the necessary optimality condition of Fung and
            # Mangasarian (2001) holds at x (docs/formulations.md#vs3vm).
            trace.stop = "necessary optimality condition"
            break
        x, f = x_next, f_next
        if on_iterate is not None:
            on_iterate(x, f, trace.n_lps)
    trace.x, trace.objective = x, f
    return trace
