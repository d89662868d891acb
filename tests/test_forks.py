"""Forks beside threads in BLAS (docs/reliability.md#forks-beside-threads): a fork waits until
the solve threads given up on earlier have ended, unless the forking solve is stopped first."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from s3vm.solvers.runtime import forks, processes, supervisor
from s3vm.solvers.runtime.clock import TIME_LIMIT, Clock, ManualTimer, Stopped


@pytest.fixture
def nothing_abandoned():
    assert forks.abandoned_threads() == []
    yield
    with forks._abandoned_lock:
        forks._abandoned.clear()


def _abandoned_thread() -> threading.Event:
    """A thread noted as abandoned that runs until the returned event is set."""
    release = threading.Event()
    done = threading.Event()

    def run():
        release.wait(60)
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    forks.abandon(thread, done)
    return release


def test_the_supervisor_notes_the_thread_it_abandons(nothing_abandoned):
    release, started, returned = threading.Event(), threading.Event(), threading.Event()
    timer = ManualTimer()
    clock = Clock(limit=1.0, timer=timer)

    def time_passes():  # once the work runs, a second every 20 ms: the limit, then the grace
        started.wait(30)
        while not returned.wait(0.02):
            timer.advance(1.0)

    def work():
        started.set()
        release.wait(30)

    threading.Thread(target=time_passes, daemon=True).start()
    try:
        done = supervisor.supervise(work, clock)
    finally:
        returned.set()
    assert not done.finished and clock.stop_reason == TIME_LIMIT
    assert len(forks.abandoned_threads()) == 1 and supervisor.abandoned_workers() == 1
    release.set()
    deadline = time.monotonic() + 30
    while forks.abandoned_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert forks.abandoned_threads() == [] and supervisor.abandoned_workers() == 0


def test_a_call_in_a_child_waits_for_an_abandoned_thread(nothing_abandoned):
    release = _abandoned_thread()
    answered = []
    caller = threading.Thread(target=lambda: answered.append(
        processes.call_in_child(os.getpid)), daemon=True)
    caller.start()
    caller.join(0.5)
    assert answered == [], "the call forked beside a running abandoned thread"
    release.set()
    caller.join(30)
    assert len(answered) == 1 and answered[0] != os.getpid()


def test_parallel_calls_start_once_the_abandoned_thread_ended(nothing_abandoned):
    release = _abandoned_thread()
    threading.Timer(0.3, release.set).start()
    start = time.monotonic()
    values = processes.calls_in_children([(sum, ([1, 2],)), (max, ([1, 5],))],
                                         stop=lambda: False)
    assert values == [3, 5]
    assert time.monotonic() - start >= 0.25


def test_a_stopped_solve_does_not_fork_while_it_waits(nothing_abandoned, monkeypatch):
    release = _abandoned_thread()

    def no_fork():
        raise AssertionError("forked")

    monkeypatch.setattr(processes.os, "fork", no_fork)
    clock = Clock()
    threading.Timer(0.2, clock.stop, args=(TIME_LIMIT,)).start()
    try:
        with pytest.raises(processes.ChildCallStopped):
            processes.call_in_child(sum, [1, 2], clock=clock)
        with pytest.raises(Stopped):
            processes.calls_in_children([(sum, ([1, 2],))], stop=clock.expired)
        assert not processes.supervise_in_child(
            lambda: 1, clock, supervisor._Waiter(clock, None, None, 5.0)).finished
    finally:
        release.set()


def test_the_forking_thread_does_not_wait_for_itself(nothing_abandoned):
    # An abandoned solve whose clock is not stopped (a test's, a caller's own loop) that forks:
    # the wait leaves the forking thread itself out.
    done = threading.Event()
    forks.abandon(threading.current_thread(), done)
    try:
        assert processes.call_in_child(os.getpid) != os.getpid()
    finally:
        done.set()


@pytest.mark.slow
@pytest.mark.subprocess
def test_forks_beside_abandoned_threads_in_eigh_do_not_hang():
    # Three abandoned threads in eigh (NumPy's and SciPy's OpenBLAS, two BLAS threads each)
    # beside forked calls that run eigh themselves: forking while they ran hung this process
    # at its first forks on the 2-core machine.
    script = textwrap.dedent("""
        import threading
        import numpy as np, scipy.linalg as sl
        from threadpoolctl import threadpool_limits
        from s3vm.solvers.runtime.forks import abandon
        from s3vm.solvers.runtime.processes import call_in_child, calls_in_children

        a = np.random.default_rng(0).random((400, 400)); a = a + a.T
        stop = threading.Event()

        def busy(f, done):
            while not stop.is_set():
                f(a)
            done.set()

        with threadpool_limits(limits=2, user_api="blas"):
            for f in (np.linalg.eigh, sl.eigh, np.linalg.eigh):
                done = threading.Event()
                thread = threading.Thread(target=busy, args=(f, done), daemon=True)
                thread.start()
                abandon(thread, done)
            threading.Timer(1.0, stop.set).start()
            for _ in range(10):
                call_in_child(sl.eigh, a)
                calls_in_children([(np.linalg.eigh, (a,)), (sl.eigh, (a,))], lambda: False)
        print("forked 30 times")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "forked 30 times" in done.stdout, done.stderr[-2000:]
