"""A signal whose handler runs inside a finaliser (an object's ``__del__``, run by the garbage
collector wherever the main thread is) has its exception dropped by Python ("Exception ignored
in"); the supervisor's waiting loop still sees it by the count of signals received and stops the
solve (a command once solved on after a SIGTERM, its main thread waiting with no grace begun)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from s3vm.solvers.runtime import supervisor
from s3vm.solvers.runtime.clock import INTERRUPTED, Clock


class _SignalInFinaliser:
    """Sends SIGTERM to this process from its ``__del__`` and waits there, so that the handler
    runs (and raises) inside the finaliser."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)


def _supervised_with_a_dropped_signal(isolated: bool):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    clock = Clock()
    lines = []

    def line(elapsed):
        if not lines:
            _SignalInFinaliser()  # dropped at once: its __del__ runs here
        lines.append(elapsed)
        return None

    def work():
        deadline = time.monotonic() + 20  # not stopped: the test fails below, it does not hang
        while not clock.expired() and time.monotonic() < deadline:
            time.sleep(0.01)
        return "stopped" if clock.expired() else "ran on"

    supervisor.set_isolation(isolated)
    try:
        with supervisor.signals_interrupt():
            done = supervisor.supervise(work, clock, line=line, emit=lambda text: None,
                                        interval=0.05)
    finally:
        supervisor.set_isolation(False)
    return clock, done, lines


@pytest.mark.parametrize("isolated", [False, True], ids=["thread", "process"])
def test_a_signal_dropped_in_a_finaliser_still_stops_the_solve(isolated, monkeypatch):
    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: dropped.append(
        unraisable.exc_type))
    clock, done, lines = _supervised_with_a_dropped_signal(isolated)
    assert lines, "the progress line (where the signal is sent) was never asked for"
    assert dropped == [supervisor.Interrupted]  # Python did drop it
    assert clock.stop_reason == INTERRUPTED and clock.signal == signal.SIGTERM
    assert not (done.finished and done.value == "ran on")


def test_signals_handled_before_a_block_do_not_stop_a_later_solve():
    # The count of signals received outlives a block; a solve outside any block (the Python
    # API) or in a later block is not stopped by the signals an earlier block answered.
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    with pytest.raises(supervisor.Interrupted):
        with supervisor.signals_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    for block in (False, True):
        clock = Clock(limit=0.3)
        with (supervisor.signals_interrupt() if block else _nothing()):
            done = supervisor.supervise(lambda: clock.expired() or time.sleep(0.05) or "ok",
                                        clock, line=lambda e: None, emit=lambda t: None,
                                        interval=0.05)
        assert done.finished and clock.stop_reason is None, block


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
