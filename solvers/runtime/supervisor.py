"""Run a solve in a worker thread while the calling thread keeps the time limit, answers signals
and prints progress.

Solver libraries spend minutes in C (a simplex, an interior-point method, an eigendecomposition),
where Python runs no signal handler and checks no clock. So :func:`supervise` runs the solve in a
daemon thread and waits in the calling thread, which stays responsive:

- at the time limit it stops the solve's :class:`~s3vm.solvers.runtime.clock.Clock` (loops see
  :meth:`Clock.expired`, model builds :meth:`Clock.checkpoint`, running solver
  calls their cancel function), then gives the worker a grace period to return what it has;
- on SIGINT or SIGTERM (raised in the calling thread as :class:`KeyboardInterrupt` or
  :class:`Interrupted`) it does the same, and a second signal stops waiting at once;
- every few seconds it prints a progress line (elapsed time, incumbent, bound) from what the
  solve published with :meth:`Clock.report`, unless the solve printed one of its own.

A worker that does not return within its grace period (a step that cannot be cut short) is
abandoned: :func:`supervise` reports it and the caller builds its answer from the clock's
snapshot. The daemon thread finishes in the background and its results are discarded; a
command-line program exits at once anyway.

A thread cannot be watched while another holds the GIL, and some libraries do for seconds
(``scipy.linalg.eigh``, CVXPY's canonicalisation in C++). So a program can ask for isolation
(:func:`set_isolation`, which the command line does on Linux): the solve then runs in a forked
child process (:mod:`s3vm.solvers.runtime.processes`), which reports its progress through a pipe
and is stopped through another, and is killed at the end of its grace period whatever it is
doing. A child killed by the system (out of memory) ends the solve with an error instead of the
whole program.

:func:`signals_interrupt` makes SIGTERM raise :class:`Interrupted` like SIGINT, for a program's
main function.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

from s3vm.solvers.runtime.clock import INTERRUPTED, TIME_LIMIT, Clock, signal_name
from s3vm.solvers.runtime.forks import abandon, abandoned_threads
from s3vm.solvers.runtime.processes import Supervised, supervise_in_child

#: Seconds between two progress lines of a long solve.
PROGRESS_SECONDS = 5.0
#: Seconds a worker gets to return after a signal before it is abandoned.
INTERRUPT_GRACE = 2.0
#: The same when a complete answer is at hand (labels, objective and decision values): the
#: solve's incumbent on its clock, or, before the solve reported labels, the answer its caller
#: held there before the step (:meth:`Clock.hold`). That is the answer already, and a step that
#: checks its interrupt seldom (HiGHS in a MIP's root, an SDP solver, a model build in C) must
#: not hold it back.
INTERRUPT_GRACE_WITH_INCUMBENT = 0.4


def interrupt_grace(clock: Clock) -> float:
    """Seconds a worker stopped by a signal gets to return (see the two constants)."""
    return INTERRUPT_GRACE_WITH_INCUMBENT if clock.answer_at_hand() else INTERRUPT_GRACE


def time_limit_grace(limit: float) -> float:
    """Seconds a worker gets to return after its time limit: 2.5% of the limit plus a quarter
    of a second, half of the tolerance of 5% + 0.5 s that the limit promises; the other half is
    for what the caller does with a stopped solve's result (the supervised fallback's labels,
    the checks)."""
    return 0.025 * limit + 0.25


class Interrupted(KeyboardInterrupt):
    """A solve stopped by a signal, SIGINT (Ctrl-C) or SIGTERM.

    Attributes
    ----------
    signum : int
    result : object, optional
        What the solve had when stopped (a :class:`~s3vm.solvers.results.Result`), when the
        solve got that far.
    results : list
        The completed results of a sequence of solves (a comparison) before this one.
    """

    def __init__(self, signum: int = signal.SIGINT, result=None, results=None):
        super().__init__(signal_name(signum))
        self.signum = int(signum)
        self.result = result
        self.results = list(results or [])

    @property
    def name(self) -> str:
        return signal_name(self.signum)

    @property
    def exit_status(self) -> int:
        """128 + the signal number, what a shell reports for a program a signal ended."""
        return 128 + self.signum


def signal_of(exc: BaseException) -> int:
    """The signal an interrupt exception stands for (a bare KeyboardInterrupt is SIGINT)."""
    return getattr(exc, "signum", signal.SIGINT)


#: The signal the last :func:`signals_interrupt` block received, if any, and how many signals
#: such blocks received in this process.
_received: list = [None]
_received_count: list = [0]
#: [signals_interrupt blocks running, signals_received() when the outermost one began]
_interrupting: list = [0, 0]


def received_signal() -> Optional[int]:
    """The signal (SIGINT, SIGTERM) the current or last :func:`signals_interrupt` block received,
    or None. A library that catches the :class:`Interrupted` it raised and raises an error of its
    own instead (Pyomo's writers wrap it in a ``DeveloperError``) still stopped on that signal."""
    return _received[0]


def signals_received() -> int:
    """How many signals :func:`signals_interrupt` blocks received in this process so far: a
    step that a library may have turned a signal's exception into an error of its own compares
    the count before and after it (the signal is then :func:`received_signal`)."""
    return _received_count[0]


@contextmanager
def _signals_handled(on_signal: Callable[[int], None]) -> Iterator[None]:
    """SIGINT and SIGTERM counted (:func:`signals_received`) and handed to ``on_signal`` while
    the block runs in the main thread, the previous handlers back afterwards (outside the main
    thread nothing is installed: Python delivers signals there only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        _received[0] = signum
        _received_count[0] += 1
        on_signal(signum)

    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """While the block runs in the main thread, SIGINT and SIGTERM raise :class:`Interrupted`
    (with the signal's number) instead of ending the process; the previous handlers come back
    afterwards. Outside the main thread it does nothing (Python delivers signals there only)."""
    main = threading.current_thread() is threading.main_thread()
    if main:
        _received[0] = None
        if _interrupting[0] == 0:
            _interrupting[1] = _received_count[0]
        _interrupting[0] += 1

    def interrupt(signum):
        raise Interrupted(signum)

    try:
        with _signals_handled(interrupt):
            yield
    finally:
        if main:
            _interrupting[0] -= 1


def _dropped_signals_since(seen: int) -> bool:
    """Whether a :func:`signals_interrupt` block runs and received a signal after ``seen``
    (a :func:`signals_received` count) that nothing acted on.

    Python runs a signal's handler in the main thread wherever that thread is, a finaliser
    included (an object's ``__del__`` or a weakref callback the garbage collector runs); an
    exception raised there is printed as "Exception ignored in" and dropped. The handler counted
    the signal first, so a waiting loop that compares the count still sees it."""
    return _interrupting[0] > 0 and _received_count[0] > max(seen, _interrupting[1])


@contextmanager
def signals_deferred() -> Iterator[None]:
    """While the block runs in the main thread, SIGINT and SIGTERM are noted, not raised; the
    previous handlers come back afterwards and the first signal noted is raised then as
    :class:`Interrupted`. For work that must not be cut in half: an answer the solve already
    has, completed and written whole (a signal there left no output at all). Outside the main
    thread it does nothing."""
    noted: list = []
    with _signals_handled(noted.append):
        yield
    if noted:
        raise Interrupted(noted[0])


@contextmanager
def signals_noted(noted: list, raise_after: Optional[int] = None) -> Iterator[Callable[[], None]]:
    """While the block runs in the main thread, SIGINT and SIGTERM are appended to ``noted``
    (and counted), not raised: for a program's start, before it can answer a signal (its
    arguments not read yet), which then delivers them itself, and for short work that a
    signal must not cut in half (an answer being computed). ``raise_after``: once ``noted``
    holds that many, the next signal is raised (:class:`Interrupted`): a second Ctrl-C stops
    the work. Yields a function that ends the noting early (the previous handlers back at
    once), so that the program can hand over to its interrupting handlers at the exact point
    it is ready. Outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return

    def handler(signum, frame):
        _received[0] = signum
        _received_count[0] += 1
        if raise_after is not None and len(noted) >= raise_after:
            raise Interrupted(signum)
        noted.append(signum)

    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGINT,
                                                                       signal.SIGTERM)}
    released: list = []

    def release() -> None:
        if not released:
            released.append(True)
            for signum, old in previous.items():
                signal.signal(signum, old)

    try:
        yield release
    finally:
        release()


_isolate = False


def set_isolation(on: bool = True) -> None:
    """Run each supervised solve in a forked child process (where ``os.fork`` exists and the
    platform is Linux; elsewhere in a thread). For a program's main: a library call should not
    fork behind its caller's back."""
    global _isolate
    _isolate = bool(on) and hasattr(os, "fork") and sys.platform.startswith("linux")


def abandoned_workers() -> int:
    """How many abandoned solve threads are still running (a program may then exit at once)."""
    return len(abandoned_threads())


class _Waiter:
    """The supervising loop both modes share: limit, grace, signals, progress lines."""

    def __init__(self, clock: Clock, line, emit, interval: float):
        self.clock, self.line, self.emit, self.interval = clock, line, emit, interval
        self.give_up: Optional[float] = None
        self.next_line = clock.start + interval
        self.signals_seen = signals_received()
        if _interrupting[0] > 0:
            # one dropped before this solve began (reading the data) is seen too
            self.signals_seen = _interrupting[1]

    def timeout(self) -> float:
        """Seconds to wait for the worker before the next check (at most a quarter of a
        second of the wall clock)."""
        # The limit, the grace period and the progress lines are all on the clock's time:
        # under a test's timer (ManualTimer) a worker gets its grace until the test moves the
        # time on, whatever the load of the machine.
        clock = self.clock
        wake = self.next_line
        if clock.stop_reason is None:
            wake = min(wake, clock.deadline)
        elif self.give_up is not None:
            wake = min(wake, self.give_up)
        return max(0.0, min(wake - clock.now(), 0.25))

    def check(self, stop: Callable[[str, Optional[int]], None]) -> bool:
        """Enforce the limit (``stop(reason, signal)`` asks the worker to stop) and print
        progress; False once the worker's grace period is over."""
        clock = self.clock
        if _dropped_signals_since(self.signals_seen) \
                and not self.interrupted(Interrupted(received_signal()), stop):
            return False
        now = clock.now()
        if clock.stop_reason is None and now >= clock.deadline:
            clock.stop(TIME_LIMIT)
            stop(TIME_LIMIT, None)
            self.give_up = now + time_limit_grace(clock.limit)
        elif clock.stop_reason is not None and self.give_up is None:
            # The solve stopped itself (a solver that caught the signal, the limit seen first
            # inside): give it the usual time to return.
            self.give_up = now + (interrupt_grace(clock) if clock.interrupted
                                  else time_limit_grace(clock.limit or 0.0))
        if self.give_up is not None and now >= self.give_up:
            return False
        if now >= self.next_line:
            if self.emit is not None and self.line is not None \
                    and now - clock.last_line >= self.interval:
                text = self.line(now - clock.start)
                if text:
                    self.emit(text)
                    clock.last_line = now
            self.next_line = max(now, clock.last_line) + self.interval
        return True

    def interrupted(self, exc: BaseException, stop) -> bool:
        """A signal in the supervising thread: stop the solve; False on a second signal."""
        clock = self.clock
        self.signals_seen = signals_received()
        if clock.interrupted:
            return False
        signum = signal_of(exc)
        clock.stop(INTERRUPTED, signum)
        stop(INTERRUPTED, signum)
        self.give_up = clock.now() + interrupt_grace(clock)
        return True


class _Worker(threading.Thread):
    def __init__(self, work: Callable[[], Any], clock: Clock):
        super().__init__(name="s3vm-solve", daemon=True)
        self.work, self.clock = work, clock
        self.error: Optional[BaseException] = None
        self.value: Any = None
        # Waited on instead of Thread.join: in Python 3.11 a join interrupted by a signal's
        # exception can mark a running thread as stopped (the bpo-45274 fix, undone later).
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self.value = self.work()
        except BaseException as exc:  # handed to the supervising thread
            self.error = exc
        finally:
            self.done.set()


def supervise(work: Callable[[], Any], clock: Clock,
              line: Optional[Callable[[float], Optional[str]]] = None,
              emit: Optional[Callable[[str], None]] = None,
              interval: float = PROGRESS_SECONDS) -> Supervised:
    """Run ``work()`` under ``clock`` in a worker thread (or a child process, see
    :func:`set_isolation`) and wait for it in this thread.

    Parameters
    ----------
    work : callable
        The solve, which holds ``clock`` itself (passed to it, not looked up). An exception it
        raises is raised here; what it returns is :attr:`Supervised.value`.
    clock : Clock
        Its limit is kept here (see the module notes); a signal stops it with reason
        ``interrupted`` and the signal's number.
    line : callable, optional
        ``line(elapsed)`` gives a progress line (or None for none now).
    emit : callable, optional
        Takes each progress line (the log); None prints none.
    interval : float
        Seconds between progress lines.
    """
    if _isolate:
        return supervise_in_child(work, clock, _Waiter(clock, line, emit, interval))
    waiter = _Waiter(clock, line, emit, interval)
    worker = _Worker(work, clock)
    worker.start()
    nothing = lambda reason, signum: None  # noqa: E731 - the clock's stop reaches the thread
    while True:
        try:
            if worker.done.wait(waiter.timeout()):
                break
            if not waiter.check(nothing):
                abandon(worker, worker.done)
                return Supervised(False)
        except KeyboardInterrupt as exc:
            if not waiter.interrupted(exc, nothing):
                abandon(worker, worker.done)
                return Supervised(False)  # a second signal: stop waiting
    if worker.error is not None:
        raise worker.error
    return Supervised(True, worker.value)


