"""The HiGHS session follows what drivers change between solves: parameter-valued costs and
bounds, fixing and unfixing; and it reports iterations of either LP algorithm."""

import pyomo.environ as pyo
import pytest

from s3vm.solvers.backends.pyomo.highs import HighsBackend
from s3vm.solvers.profiles import SolverProfile


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
