"""Running a suite: each run in a worker (a local process pool, or a Dask cluster), its record
appended to the results files as it ends, a progress bar, and resuming where a suite stopped.

Local workers end with the bench process, even when it is killed (``PR_SET_PDEATHSIG``); Ctrl-C
or SIGTERM ends the runs in progress at once, and a resume runs them again.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Optional

from s3vm import api
from s3vm.bench.results import ResultsFiles
from s3vm.bench.spec import Suite
from s3vm.core.registry import formulation_class, get_formulation
from s3vm.core.settings import SETTING_KEYS, SETTINGS_TABLE
from s3vm.solvers.errors import InputError


# -- running -------------------------------------------------------------------------------
def run_task(task: dict) -> dict:
    """Run one task and return its record; never raises (a failure is a record with status
    ``error`` and the exception in ``message``)."""
    started = time.perf_counter()
    spec = task["instance"]
    record = {"run": task["key"], "instance": spec.label, "formulation": task["formulation"],
              "grid": task["grid"], "seed": task["seed"], "time_limit": task["time_limit"]}
    try:
        instance, base = spec.load(task["seed"])
        cls = formulation_class(task["formulation"])
        entries = task["own"]
        own_settings = {k: v for k, v in entries.items() if k in SETTINGS_TABLE}
        options = {k: v for k, v in entries.items() if k not in SETTINGS_TABLE}
        if task["seed"] is not None and "seed" in cls.option_table():
            options.setdefault("seed", task["seed"])
        if task.get("node_workers") and "workers" in cls.option_table():
            # runs side by side already share the cores: one process of node bounds each
            options.setdefault("workers", task["node_workers"])
        form = get_formulation(task["formulation"], **options)
        shared = cls.applicable(task["explicit"])
        effective = cls.settings_for(base, {**shared, **own_settings}, strict=False)
        # The settings the formulation reads (or fixes): the others are not part of its run.
        record["settings"] = effective.to_dict(
            list(cls.applicable(dict.fromkeys(SETTING_KEYS), fixed=True)))
        profile = api._profile(form, task["solver"], None, task["time_limit"])
        result = form.solve(instance, effective, profile)
        metrics = api.evaluate(instance, result)
    except Exception as exc:  # one failing run is a record, not the end of the suite
        text = str(exc).strip().splitlines()
        record.update({"status": "error", "solver": task["solver"],
                       "seconds": round(time.perf_counter() - started, 6),
                       "message": f"{type(exc).__name__}: {text[0] if text else ''}"})
        return record
    out = result.to_dict()
    record.update({key: out.get(key) for key in ("status", "objective", "lower_bound", "gap",
                                                 "seconds", "nodes", "iterations", "solver",
                                                 "message")})
    record.update({"error": metrics["error"], "auc": metrics["auc"],
                   "labels": out["labels"], "info": out.get("info", {}),
                   # what applied (limit, solver, profile, options): a field of the row
                   "applied": out.get("info", {}).get("applied")})
    return record


def _error_record(task: dict, exc: BaseException) -> dict:
    """The record of a run whose worker died (the pool or the cluster lost it)."""
    spec = task["instance"]
    return {"run": task["key"], "instance": spec.label, "formulation": task["formulation"],
            "grid": task["grid"], "seed": task["seed"], "time_limit": task["time_limit"],
            "status": "error",
            "solver": task["solver"], "seconds": None,
            "message": f"{type(exc).__name__}: {str(exc).strip()[:200]}"}


def execute(tasks: list, jobs: Optional[int] = None, scheduler: Optional[str] = None):
    """Yield the record of every task as it finishes: in this process (``jobs=1``), in a local
    process pool (default: one process per core), or on a Dask cluster (``scheduler``, the
    address of a dask.distributed scheduler)."""
    if not tasks:
        return
    if scheduler is not None:
        yield from _execute_dask([{**task, "node_workers": 1} for task in tasks], scheduler)
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or len(tasks) == 1:
        for task in tasks:
            yield run_task(task)
        return
    tasks = [{**task, "node_workers": 1} for task in tasks]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn: a fresh interpreter per worker (forking a process that holds BLAS or solver
    # threads can deadlock).
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context,
                             initializer=_end_with_parent, initargs=(os.getpid(),)) as pool:
        futures = {pool.submit(run_task, task): task for task in tasks}
        try:
            for future in as_completed(futures):
                try:
                    yield future.result()
                except Exception as exc:  # the worker died (killed, out of memory)
                    yield _error_record(futures[future], exc)
        finally:
            for future in futures:
                future.cancel()
            if not all(future.done() for future in futures):
                _stop_workers(pool)


def _stop_workers(pool) -> None:
    """End the runs still going when the bench stops early (Ctrl-C, SIGTERM, an error): the
    pool's shutdown would otherwise wait for each to finish, up to its time limit, and then
    drop its record anyway. A resumed suite runs them again."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def _end_with_parent(parent: int) -> None:
    """The initializer of a local worker: end this process when the bench process ends, even
    by SIGKILL, which no handler sees (a run left going would outlive its suite and compete
    with the resumed one). Linux: the kernel sends SIGKILL (PR_SET_PDEATHSIG); elsewhere a
    thread watches the parent's pid."""
    import signal

    try:
        import ctypes

        if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL) != 0:  # PR_SET_PDEATHSIG
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):
        import threading

        def watch():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, name="s3vm-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)


def _execute_dask(tasks: list, scheduler: str):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise InputError("--scheduler needs dask.distributed: pip install 's3vm[dask]'") \
            from None
    try:
        client = Client(scheduler, timeout="5s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"cannot reach the Dask scheduler at {scheduler}: "
                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
            from None
    try:
        futures = {client.submit(run_task, task, pure=False, key=f"s3vm-{i}-{task['key']}"):
                   task for i, task in enumerate(tasks)}
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:
                yield _error_record(futures[future], exc)
    finally:
        client.close()


class Progress:
    """A progress bar on stderr: redrawn in place on a terminal, one line per run elsewhere."""

    def __init__(self, total: int, done: int = 0, stream=None, quiet: bool = False):
        self.total, self.done, self.quiet = total, done, quiet
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()

    def update(self, record: dict) -> None:
        self.done += 1
        if self.quiet:
            return
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (width - filled)
        seconds = record.get("seconds")
        took = "" if seconds is None else f" {seconds:.2f} s"
        text = (f"[{bar}] {self.done}/{self.total} {record['run'].split('#')[0]}: "
                f"{record['status']}{took}")
        if self.tty:
            self.stream.write("\r\033[K" + text)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def run_suite(suite: Suite, jobs: Optional[int] = None, scheduler: Optional[str] = None,
              retry_errors: bool = False, progress: Optional[Progress] = None) -> list:
    """Run the runs of ``suite`` that its results file does not hold yet; returns the records of
    every run of the suite (earlier ones included), in suite order.

    The results files are locked for the whole run (:meth:`ResultsFiles.locked`): a second
    process on the same files is an InputError.
    """
    files = ResultsFiles(suite.output, suite.name)
    with files.locked() as earlier:
        previous = {r["run"]: r for r in earlier}
        keys = [run.key for run in suite.runs]
        todo = [run.task() for run in suite.runs
                if run.key not in previous
                or (retry_errors and previous[run.key]["status"] == "error")]
        if progress is not None:
            progress.total, progress.done = len(keys), len(keys) - len(todo)
        everything = list(earlier)
        for record in execute(todo, jobs, scheduler):
            record = {"suite": suite.name, **record}
            files.append(record)
            everything.append(record)
            previous[record["run"]] = record
            if progress is not None:
                progress.update(record)
        files.finish(everything)
    return [previous[key] for key in keys if key in previous]
