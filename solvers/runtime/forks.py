"""Forking a process whose other threads run native code.

The library forks behind a solve (a solver call killed at its limit, node bounds in parallel,
:mod:`s3vm.solvers.runtime.processes`), and under the Python API it does so in the caller's
process, beside threads that may be inside OpenBLAS: solve threads that an earlier time limit
abandoned in an eigendecomposition, or the caller's own. Two hazards, both seen in the test
suite and reproduced with NumPy 2.4 / SciPy 1.17 (OpenBLAS 0.3.30-0.3.31) on Linux:

- OpenBLAS shuts its thread pool down in a fork handler. A thread that is using the pool at
  that moment, or the forking thread itself, can wait for good: a process with three threads in
  ``eigh`` of a 400 x 400 matrix hung at its first forks.
- A child inherits every lock another thread held at the fork, and one inside OpenBLAS makes the
  child's first BLAS call wait for good (even on one BLAS thread: once in about 350 forks
  beside three threads in ``eigh``).

Only a fork with no such thread is safe. So :func:`fork_when_quiet` waits, before a fork, until
the solve threads given up on (:func:`abandon`) have ended, unless the forking solve is stopped
first. Threads of the caller's own that run BLAS while a solve forks stay the caller's concern
(docs/reliability.md#forks-beside-threads).
"""

from __future__ import annotations

import threading
from typing import Callable

_abandoned: list = []  # (thread, done event) of solves given up on
_abandoned_lock = threading.Lock()


def abandon(thread: threading.Thread, done: threading.Event) -> None:
    """Note a solve thread that its caller stopped waiting for (``done`` is set when it ends)."""
    with _abandoned_lock:
        _abandoned.append((thread, done))


def abandoned_threads() -> list:
    """The (thread, done) pairs of abandoned solve threads still running."""
    with _abandoned_lock:
        _abandoned[:] = [(t, done) for t, done in _abandoned if not done.is_set()]
        return list(_abandoned)


def fork_when_quiet(stopped: Callable[[], bool], poll: float = 0.05) -> bool:
    """Wait until no abandoned solve thread (other than this one) runs; True then, False as soon
    as ``stopped()`` says the forking solve itself was stopped (it must not fork then).

    Every abandoned thread's solve was stopped, so it ends at its next clock check or when its
    native call returns; waiting for it costs the forking solve that much of its own limit."""
    me = threading.current_thread()
    while True:
        if stopped():
            return False
        waiting = [done for t, done in abandoned_threads() if t is not me]
        if not waiting:
            return True
        waiting[0].wait(poll)

