"""Bounding several nodes at once: the workers of a branch-and-bound search.

The driver (:mod:`.driver`) hands a pool the bounds of one step (the children of the next nodes
of its selection) and settles the answers in the order it submitted them; a pool only computes
them. Each bound runs on a copy of the problem as it stood when the step began, told the
incumbent of the moment (:meth:`~.problem.LabelingProblem.notify_incumbent`), so what it returns
depends on its node and that incumbent only: a search is deterministic for a given number of
workers. What a copy counted while bounding (:meth:`~.problem.LabelingProblem.worker_report`)
comes back with the bound and is added to the driver's problem.

:class:`ProcessPool` forks one child process per bound (Linux): the child shares the problem at
the fork (nothing is pickled on the way in) and is killed at the time limit or on a signal, as
:func:`s3vm.solvers.runtime.processes.call_in_child` kills a single solver call. :class:`DaskPool`
sends the bounds to a Dask cluster (a ``dask.distributed`` scheduler address, as ``s3vm bench
--scheduler`` takes), so the nodes of one search are bounded on many machines; the problem is
sent to every worker once, each bound runs on a copy of it under a clock of the time that
remains (its solver calls killed at the limit on the worker), and at the limit the driver stops
waiting and cancels what runs.

Neither knows anything of the problem beyond :class:`~.problem.LabelingProblem`.
"""

from __future__ import annotations

import copy
import os
import sys
import time
from typing import Any, Callable, Optional

from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import Clock, Stopped
from s3vm.solvers.runtime.memory import available_memory
from s3vm.solvers.runtime.processes import calls_in_children
from s3vm.solvers.runtime.stdio import captured_native_output

__all__ = ["NodePool", "ProcessPool", "DaskPool", "make_pool", "default_workers",
           "bound_task"]


def bound_task(problem, partial, state, incumbent) -> tuple:
    """One bound on a worker's copy of ``problem``: (NodeBound, the copy's report)."""
    problem.worker_begin()
    if incumbent is not None:
        labels, value, *threshold = incumbent
        problem.notify_incumbent(labels, value)
        if threshold and threshold[0] < float("inf"):
            problem.notify_threshold(threshold[0])
    node = problem.bound(partial, state)
    return node, problem.worker_report()


class NodePool:
    """Workers that compute node bounds; :meth:`bound` is one step of the search.

    Attributes
    ----------
    workers : int
        How many bounds run at once.
    """

    workers: int = 1

    def bound(self, problem, jobs: list, incumbent: Optional[tuple],
              stop: Callable[[], bool]) -> list:
        """The bounds of ``jobs`` (a list of ``(partial, parent_state)``), in their order, each
        as ``(NodeBound, report)``.

        Parameters
        ----------
        problem : LabelingProblem
        jobs : list of (ndarray, object)
        incumbent : (labels, value[, threshold]) or None
            The driver's incumbent, told to each copy of the problem first, and the value a
            labeling must beat to enter the answer (:meth:`~.problem.LabelingProblem.
            notify_threshold`).
        stop : callable
            Asked while waiting; True stops the bounds running and raises
            :class:`~s3vm.solvers.runtime.clock.Stopped`.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Release the workers."""


class ProcessPool(NodePool):
    """One forked child process per bound, at most ``workers`` a step (Linux; the driver asks
    for at most that many)."""

    def __init__(self, workers: int):
        if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
            raise InputError("parallel node bounds in processes need Linux (os.fork); use "
                             "workers=1 or a Dask scheduler")
        self.workers = int(workers)

    def bound(self, problem, jobs, incumbent, stop):
        results = []
        for k in range(0, len(jobs), self.workers):
            calls = [(_bound_task_logged, (problem, partial, state, incumbent))
                     for partial, state in jobs[k:k + self.workers]]
            answers = calls_in_children(calls, stop)
            for worker, (_, _, log) in enumerate(answers, start=1):
                _write_log(log, worker)
            results.extend((node, report) for node, report, _ in answers)
        return results


def _bound_task_logged(problem, partial, state, incumbent) -> tuple:
    """:func:`bound_task` in a worker process, with what its solver wrote to stdout and stderr
    (a log under ``verbose``) caught and returned: (NodeBound, report, log text)."""
    with captured_native_output() as caught:
        node, report = bound_task(problem, partial, state, incumbent)
    return node, report, caught.text


def _write_log(text: str, worker: int) -> None:
    """A worker's log, each line prefixed with the worker, written at once: the logs of the
    workers of a step follow one another instead of interleaving line by line."""
    if not text:
        return
    prefix = f"[worker {worker}] "
    block = "".join(prefix + line for line in text.splitlines(keepends=True))
    if not block.endswith("\n"):
        block += "\n"
    sys.stderr.write(block)
    sys.stderr.flush()


class DaskPool(NodePool):
    """Bounds on a Dask cluster: ``scheduler`` is the address of a ``dask.distributed``
    scheduler (or a ``distributed.Client``, used as it is and not closed).

    Raises
    ------
    InputError
        dask.distributed is not installed, or the scheduler cannot be reached.
    """

    POLL = 0.05

    def __init__(self, scheduler, workers: Optional[int] = None):
        try:
            from distributed import Client
        except ImportError:
            raise InputError("a Dask scheduler needs dask.distributed: pip install "
                             "'s3vm[dask]'") from None
        if isinstance(scheduler, Client):
            self.client, self._own = scheduler, False
        else:
            try:
                self.client, self._own = Client(scheduler, timeout="5s"), True
            except (OSError, TimeoutError, ValueError) as exc:
                text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise InputError(f"cannot reach the Dask scheduler at {scheduler}: "
                                 f"{text}") from None
        threads = sum(self.client.nthreads().values()) or 1
        self.workers = int(workers) if workers else threads
        self._problem = None
        self._sent = None

    def _scattered(self, problem):
        """The problem on every worker, sent once (pickled without its clock, which stays
        here: :meth:`~.problem.LabelingProblem.__getstate__`)."""
        if self._problem is not problem:
            self._sent = self.client.scatter(problem, broadcast=True, hash=False)
            self._problem = problem
        return self._sent

    def bound(self, problem, jobs, incumbent, stop):
        sent = self._scattered(problem)
        clock = problem.clock
        remaining = None if clock is None else clock.remaining()
        futures = [self.client.submit(_dask_bound, sent, partial, state, incumbent, remaining,
                                      pure=False) for partial, state in jobs]
        try:
            while not all(future.done() for future in futures):
                if stop():
                    raise Stopped("stopped while the cluster bounded the nodes")
                time.sleep(self.POLL)
            return self.client.gather(futures)
        except BaseException:
            self.client.cancel(futures)
            raise

    def close(self) -> None:
        if self._own:
            self.client.close()


def _dask_bound(problem, partial, state, incumbent, remaining) -> tuple:
    """A bound on a Dask worker: a copy of the shared problem (tasks of one worker share it),
    under a clock of the time that remained when it was sent."""
    problem = copy.deepcopy(problem)
    problem.run_on(Clock(remaining))
    return bound_task(problem, partial, state, incumbent)


def default_workers(bytes_per_worker: float = 0.0) -> int:
    """All the cores this process may use, fewer when ``bytes_per_worker`` times them would not
    fit in the memory available (:func:`s3vm.solvers.runtime.memory.available_memory`); at least
    1."""

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    workers = max(1, cores)
    free = available_memory() if bytes_per_worker > 0 else None
    if free is not None:
        workers = min(workers, max(1, int(free // bytes_per_worker)))
    return workers


def make_pool(workers: Optional[int] = None, scheduler: Any = None,
              bytes_per_worker: float = 0.0) -> Optional[NodePool]:
    """The pool of a search: a :class:`DaskPool` for a scheduler, else a :class:`ProcessPool`
    of ``workers`` processes (None: :func:`default_workers`); None when that is one worker (the
    driver then bounds every node itself, in order)."""
    if scheduler is not None:
        return DaskPool(scheduler, workers)
    if workers is None:
        if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
            return None  # no processes to fork: the driver bounds the nodes itself
        workers = default_workers(bytes_per_worker)
    if workers <= 1:
        return None
    return ProcessPool(workers)
