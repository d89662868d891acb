"""Solves and single calls in forked child processes: the isolation half of the supervisor.

:func:`supervise_in_child` runs a supervised solve in a child process (the mode
:func:`~s3vm.solvers.runtime.supervisor.set_isolation` asks for), which reports its progress
through a pipe and is stopped through another, and is killed at the end of its grace period
whatever it is doing; a child killed by the system (out of memory) ends the solve with
:class:`SolveProcessDied` instead of the whole program. :func:`call_in_child` and
:func:`calls_in_children` run one library call, or several at once, in children that are killed
when the clock they are given stops (a library that holds the GIL and has no limit of its own,
SDPA).

The thread half, the waiting loop both modes share and the signals are in
:mod:`s3vm.solvers.runtime.supervisor`, which calls this module.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Optional

from s3vm.solvers.errors import S3VMError
from s3vm.solvers.runtime.clock import (
    INTERRUPTED,
    TIME_LIMIT,
    Clock,
    Stopped,
    signal_name,
)
from s3vm.solvers.runtime.forks import fork_when_quiet

_in_solve_process = False  # True in the child process of an isolated solve


@dataclass
class Supervised:
    """The end of a supervised solve: ``finished`` when the work returned (``value`` is what it
    returned); otherwise it was abandoned or killed and only the clock's snapshot counts."""

    finished: bool
    value: Any = None


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


REPORT_SECONDS = 0.25  # the child sends its clock's progress at most this often


def same_state(now: dict, before: Optional[dict]) -> bool:
    """Whether a child's state (its clock's progress and stop) is the one it sent before.

    ``now != before`` compared the arrays the progress holds (labels, decision values) element
    by element, and the truth value of that comparison raised: the first new incumbent's labels
    (SCIP's, every MIP solve with progress on) ended the reporting thread with a traceback on
    stderr, and the parent's progress lines stayed at the state sent before. A value is the same
    when it is the same object, a dict of the same values, or an equal number, string or array.
    """
    if before is None or now.keys() != before.keys():
        return False
    for key, value in now.items():
        old = before[key]
        if value is old:
            continue
        if isinstance(value, dict) and isinstance(old, dict):
            if not same_state(value, old):
                return False
        elif isinstance(value, (int, float, str)) and type(value) is type(old):
            if value != old:
                return False
        else:
            # Arrays, or any other value a step reported: numpy is loaded wherever a solve
            # reports one (this module itself is imported by the command line's start).
            import numpy as np

            try:
                if not (np.shape(value) == np.shape(old) and np.array_equal(value, old)):
                    return False
            except Exception:  # values that do not compare: sent again
                return False
    return True


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
                if not same_state(now, sent):
                    try:
                        send(("state", now))
                    except (OSError, ValueError):
                        return
                    sent = now

        threading.Thread(target=listen, daemon=True).start()
        threading.Thread(target=report, daemon=True).start()
        try:
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


def supervise_in_child(work, clock: Clock, waiter) -> Supervised:
    """:func:`~s3vm.solvers.runtime.supervisor.supervise` in a forked child process: ``waiter``
    (the supervisor's loop) keeps the limit, the signals and the progress lines here."""
    from multiprocessing.connection import Connection

    if not fork_when_quiet(lambda: clock.stopped):
        return Supervised(False)
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
        kind, payload = _whole_message(conn, noted)
        if kind == "state":
            clock.report(**payload["progress"])
            clock.last_line = max(clock.last_line, payload["last_line"])
            if payload["stop_reason"] is not None:
                reason, signum = payload["stop_reason"], payload["signal"]
                if clock.stop_reason is None or (signum is not None and clock.signal is None):
                    clock.stop(INTERRUPTED if signum is not None else reason, signum)
            return None
        return kind, payload

    noted: list = []  # signals that came while a message was read (see _whole_message)
    try:
        while outcome is None:
            try:
                if conn.poll(waiter.timeout()):
                    outcome = receive()
                    if noted and not waiter.interrupted(_Noted(noted.pop(0)), stop):
                        break
                    if outcome is not None:
                        continue
                # After a message too: a child that reports often must not keep the limit,
                # the grace period or a dropped signal from being seen.
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


class _Noted(KeyboardInterrupt):
    """A signal noted while a message was read, handed to the waiter as if raised."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _whole_message(conn, noted: list):
    """``conn.recv()`` with SIGINT and SIGTERM appended to ``noted`` instead of raised while the
    message is read (main thread): a signal's exception between a message's length and its
    body leaves the pipe in the middle of a message, and every later read takes a body's bytes
    for a length and waits for more than the child will ever send (the likely cause of a
    command that ignored its signal and solved on, seen once in about 60 signals at 2 to 4 s
    on bd-mip)."""
    if threading.current_thread() is not threading.main_thread():
        return conn.recv()
    previous = {}

    def note(signum, frame):
        noted.append(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, note)
    try:
        return conn.recv()
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


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


def call_in_child(fn: Callable[..., Any], *args, clock: Optional[Clock] = None) -> Any:
    """``fn(*args)`` in a forked child process; its return value must pickle.

    For a library call that holds the GIL and has no limit of its own (SDPA): the calling
    thread waits on a pipe, so the supervisor keeps running, and the child is killed when
    ``clock`` (the solve's; None: none) is stopped (its time limit, a signal) or expires. The
    arguments need no pickling (the child shares them at the fork). An exception in the child
    comes back as a RuntimeError with its type and message. The fork waits until solve
    threads given up on earlier have ended (:func:`~s3vm.solvers.runtime.forks.fork_when_quiet`).

    Raises
    ------
    ChildCallStopped
        The child was stopped or died before answering.
    """
    from multiprocessing.connection import Connection

    if not fork_when_quiet(lambda: clock is not None and clock.expired()):
        raise ChildCallStopped("stopped (time limit or signal)")
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
        with (clock.cancellable(kill) if clock is not None else nullcontext()):
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
    The forks wait until solve threads given up on earlier have ended
    (:func:`~s3vm.solvers.runtime.forks.fork_when_quiet`).

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

    if not fork_when_quiet(stop, poll):
        raise Stopped("stopped before the children were started")
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
