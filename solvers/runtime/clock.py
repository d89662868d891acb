"""A wall clock with an optional limit, shared by a solve and every step inside it, and the
solve's controls: a stop request, the solver calls to cancel on it, and a progress snapshot.

One clock starts when a solve starts, before its model is built, so that the time limit covers
data preparation, model building and every solver call. The pipeline builds it and hands it on
explicitly: to the formulation's step, to the bound problems when they are built, to the
branch-and-bound driver, and to every backend call (``backend.solve(model, profile, clock)``),
which turns the time left (:meth:`Clock.remaining`) into its solver's own option at the call.
There is no clock of the running thread to look up: a step that has no clock passed to it has
no limit.

The time it reads is its ``timer``'s (``time.perf_counter`` by default): a test passes a timer it
moves by hand (:class:`ManualTimer`), so that the limit falls exactly where the test puts it,
whatever the machine's load.

The same object carries what a supervisor (:mod:`s3vm.solvers.runtime.supervisor`) needs to stop a
solve that runs in another thread: :meth:`Clock.stop` records why (the time limit, a signal) and
calls the cancel functions that solver calls registered with :meth:`Clock.cancellable` (HiGHS's
``cancelSolve``, SCIP's ``interruptSolve``, killing a solver process); loops ask
:meth:`Clock.expired` between steps, and :meth:`Clock.checkpoint` raises :class:`Stopped` inside
long model builds. A pure-Python step with no place for a checkpoint (Pyomo compiling a model, an
ARPACK iteration in SciPy) runs inside :meth:`Clock.abortable`: a stop raises :class:`Stopped`
in its thread at the next Python instruction. Steps publish their best solution so far with
:meth:`Clock.report`, so that a solve stopped in the middle of a step that cannot be cut short
still returns it.
"""

from __future__ import annotations

import ctypes
import math
import os
import signal
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

#: The time handed to a solver call when the limit is used up: solvers reject a limit of 0 (or
#: read it as none), and a call this short returns at once with its time-limit status.
MIN_CALL_SECONDS = 1e-9

#: Why a solve was stopped (:attr:`Clock.stop_reason`).
TIME_LIMIT = "time limit"
INTERRUPTED = "interrupted"

class Stopped(Exception):
    """Raised by :meth:`Clock.checkpoint` when the solve's clock was stopped (a time limit, a
    signal): the step gives up, and the solve returns what it reported so far."""


def stopped_inside(exc: BaseException) -> bool:
    """Whether ``exc`` is a :class:`Stopped` or was raised while one was handled.

    The stop of an abortable region is raised wherever the step is, inside a library too, and
    some turn every exception into one of their own: ``inspect.getfullargspec``, which Pyomo
    calls while it builds a model, raises ``TypeError('unsupported callable')`` from it (cvs3vm
    stopped in its LP build answered that error instead of its labels, twice in 45 runs under
    load). Such an error keeps the Stopped as its cause or context."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Stopped):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _raise_in(thread_id: int, exc_type: Optional[type]) -> None:
    """Raise ``exc_type`` in thread ``thread_id`` at its next Python instruction (None takes
    back one not yet raised): CPython's ``PyThreadState_SetAsyncExc``."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), None if exc_type is None else ctypes.py_object(exc_type))


class ManualTimer:
    """A timer that moves only when told (:meth:`advance`), for a :class:`Clock` under test:
    the limit falls where the test puts it, whatever the load of the machine.

    Parameters
    ----------
    now : float
        Its first reading.
    """

    def __init__(self, now: float = 0.0):
        self.now = float(now)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the time on by ``seconds``."""
        self.now += float(seconds)


class Clock:
    """Seconds since creation, against an optional limit.

    Parameters
    ----------
    limit : float, optional
        Seconds; None for no limit.
    start : float, optional
        The timer's value the clock counts from, when earlier than now (the moment the data
        began to be read); default now.
    timer : callable, optional
        What the clock reads the time from: ``time.perf_counter`` by default; a test's
        :class:`ManualTimer` makes every reading of the clock (the limit, the remaining time,
        the supervisor's wait) deterministic.
    """

    def __init__(self, limit: Optional[float] = None, start: Optional[float] = None,
                 timer: Callable[[], float] = time.perf_counter):
        self.timer = timer
        now = timer()
        self.start = now if start is None else min(float(start), now)
        self.limit = None if limit is None else float(limit)
        self.stop_reason: Optional[str] = None
        self.signal: Optional[int] = None
        self._lock = threading.Lock()
        self._cancels: list = []
        self._progress: dict = {}
        self.last_line = self.start
        # perf_counter() until which a last step after the stop may run (see finishing()).
        self._finishing_until: Optional[float] = None
        # Threads inside abortable() (their ids), to raise Stopped in on a stop.
        self._abortable: set = set()
        # The answer at hand before the step (see hold()), apart from what the step reports.
        self._held: dict = {}

    def now(self) -> float:
        """The timer's reading (``time.perf_counter()`` unless a test gave another timer)."""
        return self.timer()

    @property
    def seconds(self) -> float:
        return self.timer() - self.start

    def remaining(self) -> Optional[float]:
        """Seconds left (at least :data:`MIN_CALL_SECONDS`), None without a limit.

        After :meth:`stop`, :data:`MIN_CALL_SECONDS`: a solver call made then returns at once.
        """
        if self._finishing_until is not None:
            return max(self._finishing_until - self.timer(), MIN_CALL_SECONDS)
        if self.stop_reason is not None:
            return MIN_CALL_SECONDS
        if self.limit is None:
            return None
        return max(self.limit - self.seconds, MIN_CALL_SECONDS)

    def expired(self) -> bool:
        """Whether the limit is reached or the solve was stopped."""
        return self.stop_reason is not None or (self.limit is not None
                                                and self.seconds >= self.limit)

    def checkpoint(self) -> None:
        """Raise :class:`Stopped` when the solve was stopped or its time is up (stopping the
        clock at its limit first). Long model builds call it between their parts."""
        if self.expired():
            if self.stop_reason is None:
                self.stop(TIME_LIMIT)
            raise Stopped(self.stop_reason)

    @property
    def deadline(self) -> float:
        """The timer's value at which the limit runs out (inf without one)."""
        return math.inf if self.limit is None else self.start + self.limit

    @contextmanager
    def excluding(self) -> Iterator[None]:
        """Time spent inside is not charged to the limit: the clock's start moves on by it.
        For a step no clock can cut short that a caller does not wait on (importing a solver
        library, once per process), before anything else ran on the clock."""
        began = self.timer()
        try:
            yield
        finally:
            self.start += self.timer() - began

    # -- stopping --------------------------------------------------------------------------
    def stop(self, reason: str = INTERRUPTED, signal: Optional[int] = None) -> None:
        """Ask the solve to stop: record why (the first reason wins) and cancel the solver calls
        in progress. Safe to call from any thread, more than once."""
        with self._lock:
            if self.stop_reason is None:
                self.stop_reason, self.signal = reason, signal
            elif reason == INTERRUPTED and self.signal is None:
                # A signal after the time limit still decides the exit status.
                self.signal = signal
            # The limit reached during a last step (finishing()) leaves it its own short budget:
            # the search had already ended at the limit, and the supervisor's stop often comes
            # a moment later (a child process hears it through a pipe). A signal still cancels.
            finishing = self._finishing_until is not None and reason != INTERRUPTED
            cancels = [] if finishing else list(self._cancels)
            if not finishing:
                # Once per region: the exception may land late, even in the region's exit.
                me = threading.get_ident()
                for thread_id in self._abortable:
                    if thread_id != me:  # a step that stops itself raises on its own
                        _raise_in(thread_id, Stopped)
                self._abortable.clear()
        for cancel in cancels:
            try:
                cancel()
            except Exception:  # a solver that already finished: nothing to cancel
                pass

    @property
    def stopped(self) -> bool:
        return self.stop_reason is not None

    @property
    def interrupted(self) -> bool:
        """Whether a signal (SIGINT, SIGTERM) stopped the solve."""
        return self.signal is not None

    @contextmanager
    def cancellable(self, cancel: Callable[[], object]) -> Iterator[None]:
        """Register ``cancel`` (a solver's own stop request) for the duration of a solver call;
        it is called at once if the solve is already stopped."""
        with self._lock:
            self._cancels.append(cancel)
            stopped = self.stop_reason is not None and self._finishing_until is None
        try:
            if stopped:
                cancel()
            yield
        finally:
            with self._lock:
                self._cancels.remove(cancel)

    @contextmanager
    def abortable(self) -> Iterator[None]:
        """A step of this thread that a stop (the time limit, a signal) aborts at once:
        :class:`Stopped` is raised in it at its next Python instruction, wherever that is.

        For pure-Python work with no place for a :func:`checkpoint`, whose state is dropped
        when it stops (a model being built or compiled for a solver). Not around a solver
        call: an exception raised in its Python callbacks would unwind through the solver's C
        code; those have :meth:`cancellable`. Work inside one long C call (a dense
        eigendecomposition) is aborted only when the call returns. Regions do not nest: an
        inner one is part of the outer. A region begun after the stop runs to its end.
        """
        me = threading.get_ident()
        with self._lock:
            # A step begun after the stop is one its caller still wants (the decision values
            # of the incumbent): it is not aborted.
            registered = me not in self._abortable and self.stop_reason is None
            if registered:
                self._abortable.add(me)
        if not registered:
            yield
            return
        try:
            yield
        finally:
            with self._lock:
                if me in self._abortable:
                    self._abortable.discard(me)
                else:  # stopped during the region: take back a Stopped not raised yet
                    _raise_in(me, None)

    @contextmanager
    def finishing(self, seconds: float) -> Iterator["Clock"]:
        """A last short step after the solve stopped or ran out of time, such as the decision
        values of the best labeling found (one LP at a fixed labeling): its solver calls get up
        to ``seconds`` from now, and are not cancelled at once for a stop that came before.

        A signal that comes during the step still cancels its solver calls; the time limit
        reached then does not (the step's calls are held to ``seconds`` instead). The step
        must fit in the supervisor's grace period after the limit or the signal
        (:mod:`s3vm.solvers.runtime.supervisor`), or the worker is abandoned without its result.
        """
        self._finishing_until = self.timer() + max(float(seconds), 0.0)
        try:
            yield self
        finally:
            self._finishing_until = None

    # -- progress --------------------------------------------------------------------------
    def report(self, **fields) -> None:
        """Publish the best solution so far and where the solve is: ``objective``,
        ``lower_bound`` (proven values only), ``labels``, ``decision_values``, ``iterations``,
        ``nodes``, ``phase`` (a few words), ``primal``; None values are kept (an objective
        unknown so far)."""
        with self._lock:
            self._progress.update(fields)

    def snapshot(self) -> dict:
        """A copy of what :meth:`report` published."""
        with self._lock:
            return dict(self._progress)

    def hold(self, **fields) -> None:
        """Publish an answer computed before the step began (``labels``, ``decision_values``,
        ``objective``): what a solve stopped before the step reported a labeling of its own
        answers, so that a supervisor need not wait for a step that cannot be cut short.

        Kept apart from :meth:`report`: a step reports its incumbent piece by piece (labels
        first, their objective once scored), and a held objective beside a step's labels would
        be the value of other labels. The step's first labels replace the held answer
        (:meth:`answer_at_hand`); the held one stays readable (:meth:`held`)."""
        with self._lock:
            self._held = dict(fields)

    def held(self) -> dict:
        """A copy of what :meth:`hold` published."""
        with self._lock:
            return dict(self._held)

    def answer_at_hand(self, keys=("labels", "objective", "decision_values")) -> bool:
        """Whether a complete answer (every one of ``keys`` known) is published: the step's
        incumbent once it reported labels, else the answer held before the step."""
        with self._lock:
            source = self._progress if self._progress.get("labels") is not None \
                else self._held
            return all(source.get(key) is not None for key in keys)

    def logged(self) -> None:
        """A step printed a progress line of its own (the branch-and-bound log): the supervisor's
        line waits."""
        self.last_line = self.timer()


def call_clock(clock: Optional[Clock], limit: Optional[float] = None) -> Clock:
    """The clock of one backend call: the solve's ``clock``, or, for a backend called on its
    own (no solve around it), a clock that starts now with ``limit`` seconds (a profile's
    ``time_limit``, read only there)."""
    return Clock(limit) if clock is None else clock


def time_left(clock: Optional[Clock], limit: Optional[float] = None) -> Optional[float]:
    """The time limit of one backend call, for the solver's own option: what the solve's
    ``clock`` has left, or, for a backend called on its own, ``limit`` (a profile's
    ``time_limit``) as it is; None for no limit."""
    return limit if clock is None else clock.remaining()


# -- a program's clock ---------------------------------------------------------------------------
_charge_imports = [False]


def charge_imports(on: bool = True) -> None:
    """Charge importing the solver library to the clock of a solve that counts from an earlier
    start (its ``started``). For a program's main whose caller waits on the wall clock (the
    command line): a limit then covers the whole command. By default the clock skips that
    import (a Python session pays it once, and the first of several formulations compared is
    not charged for it)."""
    _charge_imports[0] = bool(on)


def imports_charged() -> bool:
    """Whether importing the solver library is on the solve's clock (:func:`charge_imports`)."""
    return _charge_imports[0]


def process_start() -> Optional[float]:
    """The ``time.perf_counter()`` value at which this process started (Linux: its start time
    in ``/proc/self/stat`` against ``CLOCK_BOOTTIME``, both since boot), so that a command's
    clock covers starting Python and importing the package; None elsewhere. The start time is
    counted in clock ticks (10 ms) and rounded down, so the age may read up to a tick long:
    an error charged to the limit, never granted beyond it."""
    try:
        with open("/proc/self/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22, starttime; the fields after ")" begin at field 3
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    now = time.perf_counter()
    return now - age if 0.0 <= age else now


def signal_name(signum: int) -> str:
    """The name of signal ``signum`` (SIGINT, SIGTERM) for messages."""
    try:
        return signal.Signals(signum).name
    except ValueError:  # pragma: no cover - not a known signal
        return f"signal {signum}"
