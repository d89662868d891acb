"""The HiGHS session follows what drivers change between solves: parameter-valued costs and
bounds, fixing and unfixing; and it reports iterations of either LP algorithm."""

import pyomo.environ as pyo
import pytest

from s3vm.solvers.backends.pyomo.highs import HighsBackend
from s3vm.solvers.profiles import SolverProfile

pytestmark = pytest.mark.solver


def small_lp():
    m = pyo.ConcreteModel()
    m.p = pyo.Param(mutable=True, initialize=3.0)
    m.c = pyo.Param(mutable=True, initialize=2.0)
    m.x = pyo.Var(bounds=(0, None))
    m.x.setub(m.p)
    m.y = pyo.Var(bounds=(0, 10))
    m.z = pyo.Var(within=pyo.NonNegativeReals)
    m.z.setub(m.p)
    m.row = pyo.Constraint(expr=m.x + m.y + m.z <= 12)
    m.o = pyo.Objective(expr=-m.x - m.c * m.y + m.z)
    return m


def test_session_follows_parameters_fixing_and_unfixing():
    m = small_lp()
    s = HighsBackend().session(m, SolverProfile())
    # Each expected value is worked out by hand from the LP above.
    assert s.resolve().objective == pytest.approx(-22.0)    # y = 10, x = 2 (row: x + y <= 12)
    m.p.set_value(1.0)                                       # x <= 1
    assert s.resolve().objective == pytest.approx(-21.0)    # y = 10, x = 1
    m.p.set_value(5.0)
    m.c.set_value(0.5)                                       # now x is worth more than y
    assert s.resolve().objective == pytest.approx(-8.5)     # x = 5, y = 7
    m.y.fix(1.0)
    assert s.resolve().objective == pytest.approx(-5.5)     # x = 5, y = 1
    m.y.unfix()
    assert s.resolve().objective == pytest.approx(-8.5)
    assert m.z.value == pytest.approx(0.0)                   # the domain's lower bound holds


def test_session_matches_a_fresh_solve_after_changes():
    m = small_lp()
    s = HighsBackend().session(m, SolverProfile())
    s.resolve()
    m.p.set_value(4.0)
    m.c.set_value(1.5)
    warm = s.resolve().objective
    cold = HighsBackend().solve(m, SolverProfile()).objective
    assert warm == pytest.approx(cold)


def test_iterations_are_reported_for_interior_point_too():
    m = small_lp()
    outcome = HighsBackend().solve(m, SolverProfile(options={"solver": "ipm",
                                                             "run_crossover": "off",
                                                             "presolve": "off"}))
    assert outcome.status == "optimal" and outcome.iterations > 0


def dense_lp(n: int = 150, seed: int = 0):
    """max c'x subject to A x <= 1, 0 <= x <= 10 with random positive A and c: simplex needs
    many iterations, so that an interrupt callback fires before the optimum."""
    import numpy as np

    rng = np.random.default_rng(seed)
    A, c = rng.random((n, n)), rng.random(n)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, bounds=(0, 10))
    m.row = pyo.Constraint(m.I, rule=lambda m, i: sum(A[i, j] * m.x[j] for j in m.I) <= 1)
    m.o = pyo.Objective(expr=sum(c[j] * m.x[j] for j in m.I), sense=pyo.maximize)
    return m, A, c


@pytest.mark.slow
def test_a_session_stopped_by_a_signal_solves_its_last_step_afterwards():
    # HiGHS keeps an interrupted run's flag in its callback input (and highspy's cancelSolve
    # flag is reset only by its threaded solve): every later run of the session was
    # interrupted at once, so a stopped search lost the decision values of its incumbent.
    import signal

    import numpy as np
    from scipy.optimize import linprog

    from s3vm.solvers.runtime.clock import INTERRUPTED, Clock

    m, A, c = dense_lp()
    clock = Clock()
    s = HighsBackend().session(m, SolverProfile(), clock)
    clock.stop(INTERRUPTED, signal.SIGINT)
    assert s.resolve().status != "optimal"
    with clock.finishing(60.0):
        outcome = s.resolve()
    assert outcome.status == "optimal", outcome.message
    reference = linprog(-c, A_ub=A, b_ub=np.ones(len(c)), bounds=(0, 10), method="highs")
    assert outcome.objective == pytest.approx(-reference.fun, rel=1e-7)
