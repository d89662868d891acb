"""Library calls run on a few threads kept for the life of the process.

Some solver libraries keep state per thread that they never give back. SCIP's expression
interpreter (CppAD, behind every nonlinear solve: SCIP's NLP heuristics call Ipopt through it)
numbers each thread that evaluates an expression, once and for good, in tables with room for 64
threads (``CPPAD_MAX_NUM_THREADS`` in SCIP's ``src/nlpi/exprinterpret_cppad.cpp``, whose
``thread_num`` assigns a new number to every thread it has not seen and never frees one); the
65th thread writes past those tables. The Python API runs each solve in a fresh thread (the
supervisor's worker), so ``s3vm.solve(..., "l2-miqp")`` in a loop died of a segmentation fault in
SCIP's solve after 63 calls: a notebook, a grid search or a study lost everything it held.

:class:`ReusedThreads` runs such calls on threads it keeps: a call takes an idle thread or
starts one, at most ``size`` at once, so the library meets at most ``size`` threads (plus the
callers' own for what they do outside these calls) whatever the number of solves.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Optional


class _Call:
    """One call handed to a kept thread, and its outcome."""

    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn
        self.value: Any = None
        self.error: Optional[BaseException] = None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self.value = self.fn()
        except BaseException as exc:  # handed to the caller
            self.error = exc
        finally:
            self.fn = None  # the call's objects (a solver's model) go with its caller
            self.done.set()


class ReusedThreads:
    """Calls run on at most ``size`` daemon threads that are kept and reused.

    Parameters
    ----------
    name : str
        The threads' name (what a debugger shows).
    size : int
        The most threads at once; a call that finds them all busy (calls of abandoned solves
        still running) waits for one.
    """

    def __init__(self, name: str, size: int):
        self.name, self.size = name, int(size)
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._ready = threading.Condition()
        self._idle: list = []     # the kept threads' inboxes, each waiting for a call
        self._threads = 0         # kept threads alive

    def threads(self) -> int:
        """How many threads this keeps now (idle or running a call)."""
        return self._threads if self._pid == os.getpid() else 0

    def call(self, fn: Callable[[], Any],
             on_interrupt: Optional[Callable[[], object]] = None) -> Any:
        """``fn()`` on a kept thread; its value, or its exception raised here.

        An exception while this thread waits (KeyboardInterrupt in the main thread, an
        exception a clock raises into its thread) calls ``on_interrupt()`` (a solver's interrupt)
        and is raised at once; the call runs on to its end on its thread, which then goes back
        to the idle ones.
        """
        if self._pid != os.getpid():
            # A forked child: its parent's threads were not copied, and a lock one of them held
            # at the fork would be held for good here.
            self._reset()
        call = _Call(fn)
        self._inbox().append(call)
        try:
            call.done.wait()
        except BaseException:
            if on_interrupt is not None:
                on_interrupt()
            raise
        if call.error is not None:
            raise call.error
        return call.value

    def _inbox(self) -> "_Inbox":
        """An idle thread's inbox, or a new thread's."""
        with self._ready:
            while not self._idle and self._threads >= self.size:
                self._ready.wait()
            if self._idle:
                return self._idle.pop()
            self._threads += 1
        inbox = _Inbox()
        threading.Thread(target=self._serve, args=(inbox,), name=self.name, daemon=True).start()
        return inbox

    def _serve(self, inbox: "_Inbox") -> None:
        while True:  # a kept thread ends with the process
            inbox.next().run()
            with self._ready:
                self._idle.append(inbox)
                self._ready.notify()


class _Inbox:
    """Where one kept thread waits for its next call."""

    def __init__(self):
        self._calls: list = []
        self._arrived = threading.Condition()

    def append(self, call: _Call) -> None:
        with self._arrived:
            self._calls.append(call)
            self._arrived.notify()

    def next(self) -> _Call:
        with self._arrived:
            while not self._calls:
                self._arrived.wait()
            return self._calls.pop(0)
