"""One clock per solve, passed explicitly (issue 36 item 1), and read on a timer that a test
moves by hand (:class:`~s3vm.solvers.runtime.clock.ManualTimer`): every expectation here is the
arithmetic of the times the test sets, whatever the load of the machine."""

from __future__ import annotations

import pytest

from s3vm import api
from s3vm.core.registry import formulation_class, get_formulation
from s3vm.solvers.profiles import SolverProfile, get_profile
from s3vm.solvers.runtime.clock import (
    MIN_CALL_SECONDS,
    TIME_LIMIT,
    Clock,
    ManualTimer,
    Stopped,
    call_clock,
    time_left,
)


def test_a_clock_on_a_manual_timer_reads_only_what_the_test_moved():
    timer = ManualTimer(50.0)
    clock = Clock(10.0, start=48.0, timer=timer)  # began 2 s before it was made
    assert clock.seconds == 2.0 and clock.remaining() == 8.0 and clock.deadline == 58.0
    timer.advance(7.5)
    assert clock.remaining() == pytest.approx(0.5) and not clock.expired()
    clock.checkpoint()  # still inside the limit: nothing raised
    timer.advance(0.5)
    assert clock.expired() and clock.remaining() == MIN_CALL_SECONDS
    with pytest.raises(Stopped):
        clock.checkpoint()
    assert clock.stop_reason == TIME_LIMIT


def test_time_excluded_from_the_clock_is_not_charged():
    timer = ManualTimer()
    clock = Clock(5.0, timer=timer)
    timer.advance(1.0)
    with clock.excluding():  # an import no clock can cut short
        timer.advance(30.0)
    timer.advance(1.0)
    assert clock.seconds == 2.0 and clock.remaining() == 3.0


def test_a_backend_called_on_its_own_counts_the_profile_limit_from_the_call():
    timer = ManualTimer(100.0)
    solve_clock = Clock(60.0, start=90.0, timer=timer)
    assert call_clock(solve_clock, 600.0) is solve_clock  # a solve's clock wins
    own = call_clock(None, 600.0)
    assert own.limit == 600.0 and own.seconds < 1.0
    assert call_clock(None, None).remaining() is None
    # the solver's option: the clock's time left, or the profile's limit exactly
    assert time_left(solve_clock, 600.0) == 50.0
    assert time_left(None, 12.0) == 12.0 and time_left(None, None) is None


def test_a_highs_call_gets_the_time_its_clock_has_left():
    # HiGHS holds its option against the Highs object's total run time: the option is that
    # run time plus the 7 s the clock has left, not the profile's 600 s.
    from pyomo.environ import ConcreteModel, Constraint, Objective, Var, maximize

    from s3vm.solvers.backends.pyomo.highs import HighsBackend

    m = ConcreteModel()
    m.x = Var(bounds=(0, 4))
    m.y = Var(bounds=(0, 4))
    m.c = Constraint(expr=m.x + 2 * m.y <= 6)
    m.o = Objective(expr=m.x + m.y, sense=maximize)
    timer = ManualTimer()
    clock = Clock(10.0, timer=timer)
    timer.advance(3.0)
    session = HighsBackend().session(m, SolverProfile(time_limit=600.0), clock)
    before = session.h.getRunTime()
    outcome = session.resolve()
    after = session.h.getRunTime()
    assert outcome.status == "optimal" and outcome.objective == pytest.approx(5.0)
    limit = session.h.getOptionValue("time_limit")[1]
    assert before + 7.0 - 1e-9 <= limit <= after + 7.0 + 1e-9


def test_the_step_gets_the_one_clock_and_the_profile_as_given(monkeypatch):
    # The pipeline hands its clock to the step and leaves the profile alone: its time_limit
    # stays the user's whole limit (no profile rewritten to "what is left" below it).
    cls = formulation_class("rlp")
    run = cls.run
    seen = []

    def recording(self, instance, settings, backend, profile, clock, result):
        seen.append((profile, clock, clock.seconds))
        return run(self, instance, settings, backend, profile, clock, result)

    monkeypatch.setattr(cls, "run", recording)
    timer = ManualTimer()
    clock = Clock(30.0, timer=timer)
    instance, settings = api.load("blobs_small")
    form = get_formulation("rlp")
    profile = get_profile(None, None, form.problem_class).updated(time_limit=30.0)
    result = form.solve(instance, form.settings_for(settings, {}), profile, clock=clock)
    assert result.status == "optimal"
    [(given, step_clock, at_step)] = seen
    assert given is profile and given.time_limit == 30.0
    assert step_clock is clock and at_step == 0.0
    assert result.seconds == 0.0  # the timer never moved: nothing else was charged
