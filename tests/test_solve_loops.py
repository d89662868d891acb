"""A long-lived process survives its solves: a loop of SCIP MIQP solves through the Python API
(each in a fresh supervisor thread) ran into SCIP's limit of 64 threads for its expression
interpreter and died of a segmentation fault at the 64th solve (docs/reliability.md, "Long-lived
processes"); SCIP's solves now run on a few kept threads (:mod:`s3vm.solvers.runtime.threads`)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from s3vm.solvers.runtime.threads import ReusedThreads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Solves in the loop: past SCIP's 64 thread numbers three times over.
LOOP_SOLVES = 200

LOOP = r"""
import sys
import numpy as np
import s3vm
rng = np.random.default_rng(0)
X = np.vstack([rng.normal(-1, 1, (10, 2)), rng.normal(1, 1, (10, 2))])
y = np.zeros(20)
y[[0, 1, 2]] = -1
y[[10, 11, 12]] = 1
for i in range(int(sys.argv[1])):
    result = s3vm.solve((X, y), "l2-miqp")
    print(i, result.status, result.objective, flush=True)
"""


@pytest.mark.solver
@pytest.mark.subprocess
@pytest.mark.slow
def test_a_loop_of_scip_miqp_solves_in_one_process_survives():
    pytest.importorskip("pyscipopt")
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", LOOP, str(LOOP_SOLVES)],
                          capture_output=True, text=True, timeout=1800, cwd=ROOT)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, (len(lines), done.stderr[-2000:])
    assert len(lines) == LOOP_SOLVES
    # Every solve the same problem: the same optimum each time.
    answers = {(line.split()[1], round(float(line.split()[2]), 6)) for line in lines}
    assert len(answers) == 1 and next(iter(answers))[0] == "optimal", answers


def test_calls_from_many_fresh_threads_run_on_the_kept_threads():
    lane = ReusedThreads("test-lane", 3)
    seen = set()

    def call():
        seen.add(threading.get_ident())
        return threading.get_ident()

    for _ in range(40):
        box = []
        caller = threading.Thread(target=lambda: box.append(lane.call(call)))
        caller.start()
        caller.join()
        assert box and box[0] != caller.ident
    assert len(seen) == 1 and lane.threads() == 1  # one call at a time: one thread


@pytest.mark.slow
def test_calls_at_once_take_at_most_size_threads_and_wait_for_one():
    lane = ReusedThreads("test-lane", 2)
    release = threading.Event()
    running, seen, lock = [0], set(), threading.Lock()
    most = [0]

    def call():
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            seen.add(threading.get_ident())
        release.wait(5)
        with lock:
            running[0] -= 1

    callers = [threading.Thread(target=lane.call, args=(call,)) for _ in range(6)]
    for caller in callers:
        caller.start()
    threading.Timer(0.3, release.set).start()
    for caller in callers:
        caller.join(10)
    assert most[0] == 2 and len(seen) == 2 and lane.threads() == 2


def test_a_calls_exception_is_raised_in_its_caller_and_the_thread_is_kept():
    lane = ReusedThreads("test-lane", 1)
    with pytest.raises(ZeroDivisionError):
        lane.call(lambda: 1 / 0)
    assert lane.call(lambda: 7) == 7 and lane.threads() == 1


@pytest.mark.slow
@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers run in the main thread only")
def test_a_signal_while_waiting_interrupts_the_call_and_is_raised():
    import signal

    class Signalled(Exception):
        pass

    def handler(signum, frame):
        raise Signalled

    lane = ReusedThreads("test-lane", 1)
    stop, interrupted = threading.Event(), []
    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        with pytest.raises(Signalled):
            lane.call(lambda: stop.wait(10),
                      on_interrupt=lambda: (interrupted.append(1), stop.set()))
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert interrupted == [1]
    assert lane.call(lambda: "next") == "next"  # the thread went back to the idle ones


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_starts_its_own_threads():
    lane = ReusedThreads("test-lane", 1)
    assert lane.call(lambda: 1) == 1
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            ok = lane.threads() == 0 and lane.call(lambda: 2) == 2 and lane.threads() == 1
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 2) == b"ok" and status == 0
