"""Run a solve in a worker thread while the calling thread keeps the time limit, answers signals
and prints progress.

Solver libraries spend minutes in C (a simplex, an interior-point method, an eigendecomposition),
where Python runs no signal handler and checks no clock. So :func:`supervise` runs the solve in a
daemon thread and waits in the calling thread, which stays responsive:

- at the time limit it stops the solve's :class:`~s3vm.solvers.runtime.clock.Clock` (loops see
  :meth:`Clock.expired`, model builds :func:`~s3vm.solvers.runtime.clock.checkpoint`, running solver
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
child process, which reports its progress through a pipe and is stopped through another, and is
killed at the end of its grace period whatever it is doing. A child killed by the system (out of
memory) ends the solve with an error instead of the whole program.

:func:`signals_interrupt` makes SIGTERM raise :class:`Interrupted` like SIGINT, for a program's
main function.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from s3vm.solvers.errors import S3VMError
from s3vm.solvers.runtime.clock import (Clock, INTERRUPTED, Stopped, TIME_LIMIT, cancellable,
                                        current)

#: Seconds between two progress lines of a long solve.
PROGRESS_SECONDS = 5.0
#: Seconds a worker gets to return after a signal before it is abandoned.
INTERRUPT_GRACE = 2.0
#: The same when the solve has published a complete incumbent (labels, objective and decision
#: values) on its clock: that is the answer already, and a solver that checks its interrupt
#: seldom (HiGHS in a MIP's root, seconds) must not hold it back.
INTERRUPT_GRACE_WITH_INCUMBENT = 0.4


def interrupt_grace(clock: Clock) -> float:
    """Seconds a worker stopped by a signal gets to return (see the two constants)."""
    snap = clock.snapshot()
    complete = all(snap.get(key) is not None for key in ("labels", "objective",
                                                         "decision_values"))
    return INTERRUPT_GRACE_WITH_INCUMBENT if complete else INTERRUPT_GRACE


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


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:  # pragma: no cover - not a known signal
        return f"signal {signum}"


def signal_of(exc: BaseException) -> int:
    """The signal an interrupt exception stands for (a bare KeyboardInterrupt is SIGINT)."""
    return getattr(exc, "signum", signal.SIGINT)


#: The signal the last :func:`signals_interrupt` block received, if any.
_received: list = [None]


def received_signal() -> Optional[int]:
    """The signal (SIGINT, SIGTERM) the current or last :func:`signals_interrupt` block received,
    or None. A library that catches the :class:`Interrupted` it raised and raises an error of its
    own instead (Pyomo's writers wrap it in a ``DeveloperError``) still stopped on that signal."""
    return _received[0]


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """While the block runs in the main thread, SIGINT and SIGTERM raise :class:`Interrupted`
    (with the signal's number) instead of ending the process; the previous handlers come back
    afterwards. Outside the main thread it does nothing (Python delivers signals there only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        _received[0] = signum
        raise Interrupted(signum)

    _received[0] = None
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


_abandoned: list = []
_isolate = False
_in_solve_process = False  # True in the child process of an isolated solve


def set_isolation(on: bool = True) -> None:
    """Run each supervised solve in a forked child process (where ``os.fork`` exists and the
    platform is Linux; elsewhere in a thread). For a program's main: a library call should not
    fork behind its caller's back."""
    global _isolate
    _isolate = bool(on) and hasattr(os, "fork") and sys.platform.startswith("linux")


def in_solve_process() -> bool:
    """Whether this is the child process of an isolated solve (killed, whatever it is doing,
    at the end of its grace period), where a step need not guard a call that holds the GIL."""
    return _in_solve_process


def native_threads() -> int:
    """The thread count to ask of a solver library that keeps a thread pool of its own
    (Clarabel's ``max_threads``): 1 in a forked child, 0 (the library's choice) elsewhere.

    A pool that the library started in the parent before the fork is copied into the child
    without its threads, so work handed to it there waits forever: Clarabel 0.11 hung in every
    child of a parallel branch and bound once the parent had solved one labeling QP of 150
    points. On one thread the library stays off its pool.
    """
    return 1 if _in_solve_process else 0


def abandoned_workers() -> int:
    """How many abandoned solve threads are still running (a program may then exit at once)."""
    _abandoned[:] = [w for w in _abandoned if not w.done.is_set()]
    return len(_abandoned)


@dataclass
class Supervised:
    """The end of a supervised solve: ``finished`` when the work returned (``value`` is what it
    returned); otherwise it was abandoned or killed and only the clock's snapshot counts."""

    finished: bool
    value: Any = None


class _Waiter:
    """The supervising loop both modes share: limit, grace, signals, progress lines."""

    def __init__(self, clock: Clock, line, emit, interval: float):
        self.clock, self.line, self.emit, self.interval = clock, line, emit, interval
        self.give_up: Optional[float] = None
        self.next_line = clock.start + interval

    def timeout(self) -> float:
        """Seconds to wait for the worker before the next check."""
        clock = self.clock
        wake = self.next_line
        if clock.stop_reason is None:
            wake = min(wake, clock.deadline)
        elif self.give_up is not None:
            wake = min(wake, self.give_up)
        return max(0.0, min(wake - time.perf_counter(), 0.25))

    def check(self, stop: Callable[[str, Optional[int]], None]) -> bool:
        """Enforce the limit (``stop(reason, signal)`` asks the worker to stop) and print
        progress; False once the worker's grace period is over."""
        clock = self.clock
        now = time.perf_counter()
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
        if clock.interrupted:
            return False
        signum = signal_of(exc)
        clock.stop(INTERRUPTED, signum)
        stop(INTERRUPTED, signum)
        self.give_up = time.perf_counter() + interrupt_grace(clock)
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
            with self.clock.active():
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
        The solve; it runs with ``clock`` as the current clock of its thread. An exception it
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
        return _supervise_process(work, clock, _Waiter(clock, line, emit, interval))
    waiter = _Waiter(clock, line, emit, interval)
    worker = _Worker(work, clock)
    worker.start()
    nothing = lambda reason, signum: None  # noqa: E731 - the clock's stop reaches the thread
    while True:
        try:
            if worker.done.wait(waiter.timeout()):
                break
            if not waiter.check(nothing):
                _abandoned.append(worker)
                return Supervised(False)
        except KeyboardInterrupt as exc:
            if not waiter.interrupted(exc, nothing):
                _abandoned.append(worker)
                return Supervised(False)  # a second signal: stop waiting
    if worker.error is not None:
        raise worker.error
    return Supervised(True, worker.value)


# -- a solve in a child process --------------------------------------------------------------
REPORT_SECONDS = 0.25  # the child sends its clock's progress at most this often


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies (no orphaned solve)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # pragma: no cover - not Linux
        pass


def _child(work, clock: Clock, up: int, down: int) -> None:
    """The child's side: run ``work``, stream progress, obey stop requests; never returns."""
    from multiprocessing.connection import Connection

    global _in_solve_process
    _in_solve_process = True
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what a signal does
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _die_with_parent()
        conn = Connection(up, readable=False)
        lock = threading.Lock()

        def send(message) -> None:
            with lock:
                conn.send(message)

        def state() -> dict:
            return {"progress": clock.snapshot(), "last_line": clock.last_line,
                    "stop_reason": clock.stop_reason, "signal": clock.signal}

        def listen() -> None:
            while True:
                try:
                    data = os.read(down, 64)
                except OSError:
                    data = b""
                if not data:  # the parent is gone
                    os._exit(3)
                for request in data.decode("ascii", "replace").split(";"):
                    if request == "T":
                        clock.stop(TIME_LIMIT)
                    elif request.startswith("I"):
                        clock.stop(INTERRUPTED, int(request[1:] or signal.SIGINT))

        def report() -> None:
            sent = None
            while True:
                time.sleep(REPORT_SECONDS)
                now = state()
                if now != sent:
                    try:
                        send(("state", now))
                    except (OSError, ValueError):
                        return
                    sent = now

        threading.Thread(target=listen, daemon=True).start()
        threading.Thread(target=report, daemon=True).start()
        try:
            with clock.active():
                message = ("done", work())
        except BaseException as exc:
            message = ("error", exc)
        try:
            send(("state", state()))
            send(message)
        except Exception as exc:  # an unpicklable result or exception: say what it was
            send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    except BaseException:
        code = 1
    finally:
        _end_child(code)


def _supervise_process(work, clock: Clock, waiter: _Waiter) -> Supervised:
    from multiprocessing.connection import Connection

    for stream in (sys.stdout, sys.stderr):  # nothing buffered may be written twice
        stream.flush()
    up_r, up_w = os.pipe()
    down_r, down_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (its coverage is not collected)
        os.close(up_r)
        os.close(down_w)
        _child(work, clock, up_w, down_r)
    os.close(up_w)
    os.close(down_r)
    conn = Connection(up_r, writable=False)
    outcome: Optional[tuple] = None
    died = False

    def stop(reason: str, signum: Optional[int]) -> None:
        request = "T;" if reason == TIME_LIMIT else f"I{signum or signal.SIGINT};"
        try:
            os.write(down_w, request.encode("ascii"))
        except OSError:
            pass

    def receive() -> Optional[tuple]:
        kind, payload = conn.recv()
        if kind == "state":
            clock.report(**payload["progress"])
            clock.last_line = max(clock.last_line, payload["last_line"])
            if payload["stop_reason"] is not None:
                reason, signum = payload["stop_reason"], payload["signal"]
                if clock.stop_reason is None or (signum is not None and clock.signal is None):
                    clock.stop(INTERRUPTED if signum is not None else reason, signum)
            return None
        return kind, payload

    try:
        while outcome is None:
            try:
                if conn.poll(waiter.timeout()):
                    outcome = receive()
                    continue
                if not waiter.check(stop):
                    break
            except EOFError:
                died = True
                break  # the child died without a word
            except KeyboardInterrupt as exc:
                if not waiter.interrupted(exc, stop):
                    break
    finally:
        conn.close()
        os.close(down_w)
        if outcome is None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            # A killed process with gigabytes mapped takes seconds to tear down: it is reaped
            # in the background unless it is gone already (then its status tells why).
            status = _reap(pid, wait=died)
            if status is None:
                threading.Thread(target=_reap, args=(pid,), daemon=True).start()
                status = 0
        elif _reap(pid, wait=False) is None:
            # Its answer is here; its exit (os._exit of a process with a large model mapped,
            # half a second at 20,000 columns) is not waited for.
            threading.Thread(target=_reap, args=(pid,), daemon=True).start()
    if outcome is None:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL \
                and not clock.stopped:
            raise SolveProcessDied("the solve was killed by the system (SIGKILL), most likely for "
                              "lack of memory: choose a formulation without n x n matrices "
                              "(sdp-lowrank, the linear kernel) or fewer points")
        if not clock.stopped:
            raise SolveProcessDied(f"the solve process ended unexpectedly ({_status_text(status)}; "
                              "an abort is most often an allocation that failed): choose a "
                              "formulation without n x n matrices (sdp-lowrank, the linear "
                              "kernel) or fewer points")
        return Supervised(False)
    kind, payload = outcome
    if kind == "error":
        raise payload
    return Supervised(True, payload)


class SolveProcessDied(S3VMError):
    """The process of a solve died (killed for lack of memory, most likely)."""


def _reap(pid: int, wait: bool = True) -> Optional[int]:
    """The exit status of child ``pid`` once it ended (None when ``wait`` is False and it has
    not ended yet)."""
    while True:
        try:
            done, status = os.waitpid(pid, 0 if wait else os.WNOHANG)
            return status if done else None
        except InterruptedError:  # pragma: no cover - PEP 475 retries; a handler may raise
            continue
        except KeyboardInterrupt:  # a signal while reaping a killed child: reap it anyway
            continue
        except ChildProcessError:
            return 0


def _end_child(code: int) -> None:
    """End a forked child at once, its output flushed: ``os._exit``, so that nothing of the
    parent's (atexit handlers, a pool's threads) runs in it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


def _status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal_name(os.WTERMSIG(status))}"
    return f"exit status {os.WEXITSTATUS(status)}"


# -- one call in a child process -------------------------------------------------------------
class ChildCallStopped(Exception):
    """A call in a child process was stopped (the clock's limit, a signal) or its process died
    before it answered."""


def call_in_child(fn: Callable[..., Any], *args) -> Any:
    """``fn(*args)`` in a forked child process; its return value must pickle.

    For a library call that holds the GIL and has no limit of its own (SDPA): the calling
    thread waits on a pipe, so the supervisor keeps running, and the child is killed when the
    current clock is stopped (its time limit, a signal) or expires. The arguments need no
    pickling (the child shares them at the fork). An exception in the child comes back as a
    RuntimeError with its type and message.

    Raises
    ------
    ChildCallStopped
        The child was stopped or died before answering.
    """
    from multiprocessing.connection import Connection

    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            _die_with_parent()
            os.close(read_end)
            conn = Connection(write_end, readable=False)
            try:
                message = ("ok", fn(*args))
            except BaseException as exc:
                message = ("error", f"{type(exc).__name__}: {exc}")
            conn.send(message)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    conn = Connection(read_end, writable=False)
    state = {"killed": False, "answered": False}

    def kill() -> None:
        if not state["answered"]:
            state["killed"] = True
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    try:
        with cancellable(kill):
            clock = current()
            while not conn.poll(0.1):
                if clock is not None and clock.expired():
                    kill()
                    break
            try:
                kind, payload = conn.recv()
                state["answered"] = True
            except (EOFError, OSError):
                raise ChildCallStopped("stopped (time limit or signal)" if state["killed"]
                                   else "its process died before it answered") from None
    finally:
        conn.close()
        if not state["answered"]:
            kill()
            threading.Thread(target=_reap, args=(pid,), daemon=True).start()
        else:
            _reap(pid)
    if kind == "error":
        raise RuntimeError(payload)
    return payload


# -- several calls in child processes at once ------------------------------------------------
def calls_in_children(calls: list, stop: Callable[[], bool], poll: float = 0.1) -> list:
    """Each ``fn(*args)`` of ``calls`` (a list of ``(fn, args)``) in its own forked child
    process, all at once; their return values, in the order of ``calls``.

    The parallel form of :func:`call_in_child`, for independent steps that each take seconds
    (the node bounds of a branch and bound): every child shares the caller's state at the fork
    (nothing is pickled on the way in; return values must pickle), counts as the process of an
    isolated solve (:func:`in_solve_process`: it runs its solver calls directly, since it is
    killed whatever it is doing), and ignores SIGINT and SIGTERM, which the caller decides on.

    Parameters
    ----------
    calls : list of (callable, tuple)
    stop : callable
        Asked every ``poll`` seconds while the children run: True kills them all (a time limit,
        a stopped clock) and raises :class:`~s3vm.solvers.runtime.clock.Stopped`.
    poll : float

    Raises
    ------
    Stopped
        ``stop()`` said so before every child answered; the children are killed.
    KeyboardInterrupt
        A signal while waiting (re-raised after the children are killed).
    Exception
        The first exception a child raised, in the order of ``calls`` (the exception itself
        when it pickles, else a RuntimeError with its type and message).
    ChildCallStopped
        A child died before it answered (killed by the system, most likely for memory).
    """
    from multiprocessing.connection import Connection, wait

    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    children = []  # (pid, connection)
    answers: dict = {}
    try:
        for fn, args in calls:
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                os.close(read_end)
                _answer_in_child(fn, args, write_end)
            os.close(write_end)
            children.append((pid, Connection(read_end, writable=False)))
        waiting = {conn: k for k, (_, conn) in enumerate(children)}
        while waiting:
            for conn in wait(list(waiting), timeout=poll):
                k = waiting.pop(conn)
                try:
                    answers[k] = conn.recv()
                except (EOFError, OSError):
                    answers[k] = ("died", None)
            if waiting and stop():
                raise Stopped("stopped while the children ran")
    finally:
        for k, (pid, conn) in enumerate(children):
            conn.close()
            if k in answers and answers[k][0] != "died":
                _reap(pid)
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            threading.Thread(target=_reap, args=(pid,), daemon=True).start()
    values = []
    for k in range(len(calls)):
        kind, payload = answers[k]
        if kind == "died":
            raise ChildCallStopped("a child process died before it answered (killed by the system, "
                               "most likely for lack of memory)")
        if kind == "error":
            raise payload
        values.append(payload)
    return values


def _answer_in_child(fn, args, write_end: int) -> None:  # pragma: no cover - the child
    """The child's side of :func:`calls_in_children`: answer ``fn(*args)`` and exit."""
    from multiprocessing.connection import Connection

    global _in_solve_process
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _die_with_parent()
        _in_solve_process = True
        conn = Connection(write_end, readable=False)
        try:
            message = ("ok", fn(*args))
        except BaseException as exc:
            message = ("error", exc)
        try:
            conn.send(message)
        except Exception:  # an exception or a value that does not pickle: say what it was
            exc = message[1] if message[0] == "error" else None
            text = (f"{type(exc).__name__}: {exc}" if exc is not None
                    else "the child's answer does not pickle")
            conn.send(("error", RuntimeError(text)))
    except BaseException:
        code = 1
    finally:
        _end_child(code)
