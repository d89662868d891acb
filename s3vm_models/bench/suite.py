"""Benchmark suites: a grid of instances x formulations x settings x seeds in one TOML file,
run in parallel, each run's result appended to a results file as it finishes.

The format (docs/bench.md is the reference)::

    name = "moons-study"            # required: the results file belongs to this suite
    description = "..."             # optional
    formulations = ["switching", "bb", "vs3vm"]
    seeds = [0, 1, 2]               # default [0]
    time_limit = 30                 # seconds per run (default none); [formulations.X] may differ
    solver = "highs"                # optional: every formulation's solver
    output = "moons-results"        # optional: results stem, relative to the suite file

    [settings]                      # defaults of every run (a formulation that does not read
    kernel = "rbf"                  # one is not given it; none may be read by no one); an
                                    # instance's own settings win over them
    [override]                      # settings that win over an instance's own
    bias = true

    [grid]                          # settings varied over their cartesian product
    C = [1.0, 10.0]

    [set.vs3vm]                     # one formulation's own settings, options, solver and
    balance = "none"                # time_limit (as compare's --set vs3vm.balance=none)

    [[instances]]                   # one table per instance, of one kind:
    file = "two_moons"              #   an instance or data file (relative to the suite), or a
                                    #   shipped instance's name
    [[instances]]
    dataset = "heart"               #   a bundled data set with a seeded labeled draw
    labeled_fraction = 0.1          #   (or n_labeled), scale = "standard" optional
    [[instances]]
    generator = "two_moons"         #   a seeded generator: two_moons, gaussian_blobs,
    n_unlabeled_per_class = 40      #   noisy_linear, with its keyword arguments
    [[instances]]
    sdp = "art100"                  #   an SDP-S3VM benchmark instance (labeled_fraction 0.3)

Every instance table may carry ``name`` (its label in the results) and ``settings`` (an inline
table of that instance's own settings, like an instance file's). A run's settings, from the
weakest: the formulation's defaults, ``[settings]``, the instance's own (its table's and its
instance file's), ``[override]``, the grid point, ``[set.NAME]``. A seed draws the labeled rows
of a ``dataset``, ``generator`` or ``sdp`` instance and reaches every formulation that has a ``seed``
option; a run that no seed changes is run once (its seed is recorded as null).

Everything is checked before the first run (the same option tables and messages as ``s3vm
compare``); nothing is written for a suite with an error.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.files import read_toml

SUITE_KEYS = ("name", "description", "formulations", "seeds", "time_limit", "solver", "output",
              "settings", "override", "grid", "set", "instances")
INSTANCE_KINDS = ("file", "dataset", "generator", "sdp")
GENERATORS = ("two_moons", "gaussian_blobs", "noisy_linear")

#: The settings a run solved with, one column each (empty where the formulation reads none).
SETTING_COLUMNS = ("kernel", "sigma", "C", "C_star", "bias", "hard_margin", "balance",
                   "positives", "mu", "nu")
#: The columns of the CSV results file (and of the summary's source), in order.
COLUMNS = ("suite", "run", "instance", "formulation", "grid", "seed") + SETTING_COLUMNS + (
    "time_limit", "status", "objective", "lower_bound", "gap", "error", "auc", "seconds",
    "nodes", "iterations", "solver", "message")
NUMERIC_COLUMNS = ("seed", "sigma", "C", "C_star", "mu", "nu", "time_limit", "objective",
                   "lower_bound", "gap", "error", "auc", "seconds", "nodes", "iterations")


# -- the suite file ----------------------------------------------------------------------------
@dataclass(frozen=True)
class InstanceSpec:
    """How to make one instance of a suite (loaded again in each worker, never shipped)."""

    kind: str
    target: str
    params: dict
    label: str
    settings: dict
    base_dir: str

    @property
    def draws(self) -> bool:
        """Whether a seed changes the instance (a labeled draw or generated points)."""
        return self.kind in ("dataset", "generator", "sdp")

    def _file(self) -> str:
        path = os.path.join(self.base_dir, self.target)
        return path if os.path.exists(path) else self.target

    def input_files(self) -> list:
        """The files this instance is read from (none for a data set or a generator)."""
        from s3vm.core.settings import instance_files

        return instance_files(self._file()) if self.kind == "file" else []

    def own_settings(self) -> set:
        """The settings this instance gives itself: its ``settings`` table, and for an instance
        file the settings the file writes (a data file gives none)."""
        keys = set(self.settings)
        files = self.input_files()
        if files and files[0].lower().endswith(".toml") and os.path.isfile(files[0]):
            from s3vm.core.settings import SETTING_KEYS

            keys |= set(read_toml(files[0])) & set(SETTING_KEYS)
        return keys

    def load(self, seed: Optional[int]):
        """(Instance, Settings): the instance for ``seed`` and its default settings."""
        from s3vm.core.settings import Settings, load_instance

        defaults = Settings(**self.settings)
        if self.kind == "file":
            instance, settings = load_instance(self._file())
            return instance, settings.updated(**self.settings) if self.settings else settings
        seed = 0 if seed is None else seed
        if self.kind == "dataset":
            from s3vm.data.loaders import load_dataset

            return load_dataset(self.target, seed=seed, **self.params), defaults
        if self.kind == "sdp":
            from s3vm.data.loaders import load_sdp_instance

            return load_sdp_instance(self.target, seed=seed, **self.params), defaults
        from s3vm.data import generators

        return getattr(generators, self.target)(seed=seed, **self.params), defaults


@dataclass(frozen=True)
class Run:
    """One run of a suite: an instance (with its seed) and one formulation at one grid point."""

    instance: InstanceSpec
    formulation: str
    grid: dict
    seed: Optional[int]
    explicit: dict        # settings shared by the suite and the grid point
    own: dict             # the formulation's own entries (settings, options, solver, time_limit)
    solver: Optional[str]
    time_limit: Optional[float]

    @property
    def key(self) -> str:
        """A stable identity: what the run is, so that a resumed suite skips it."""
        spec = {"instance": [self.instance.kind, self.instance.target, self.instance.params,
                             self.instance.settings],
                "formulation": self.formulation, "grid": self.grid, "seed": self.seed,
                "explicit": self.explicit, "own": self.own, "solver": self.solver,
                "time_limit": self.time_limit}
        digest = hashlib.sha1(json.dumps(spec, sort_keys=True, default=str).encode())
        grid = ",".join(f"{k}={v}" for k, v in self.grid.items())
        seed = "" if self.seed is None else f" seed={self.seed}"
        return (f"{self.instance.label}/{self.formulation}{'[' + grid + ']' if grid else ''}"
                f"{seed}#{digest.hexdigest()[:10]}")

    def task(self) -> dict:
        """What a worker needs (plain data: picklable for a process pool or Dask)."""
        return {"instance": self.instance, "formulation": self.formulation, "grid": self.grid,
                "seed": self.seed, "explicit": self.explicit, "own": self.own,
                "solver": self.solver, "time_limit": self.time_limit, "key": self.key}


@dataclass
class Suite:
    name: str
    path: str
    description: str
    runs: list
    output: str
    formulations: list = field(default_factory=list)


def _where(path: str, what: str) -> str:
    return f"{path}: {what}"


def _check_setting(path: str, where: str, key: str, value):
    from s3vm.core.settings import SETTINGS_TABLE

    if key not in SETTINGS_TABLE:
        raise InputError(_where(path, f"unknown setting {key!r} in {where}: choose one of "
                                      f"{', '.join(SETTINGS_TABLE)}"))
    try:
        return SETTINGS_TABLE[key].validate(value)
    except InputError as exc:
        raise InputError(_where(path, f"{where}: {exc}")) from None


def _number(path, key, value, minimum=0.0):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value <= minimum:
        raise InputError(_where(path, f"{key} must be a number > {minimum:g}, got {value!r}"))
    return float(value)


def _instance_spec(path: str, base_dir: str, number: int, table: dict) -> InstanceSpec:
    where = f"instance {number}"
    if not isinstance(table, dict):
        raise InputError(_where(path, f"{where}: expected a table ([[instances]])"))
    kinds = [k for k in INSTANCE_KINDS if k in table]
    if len(kinds) != 1:
        raise InputError(_where(path, f"{where}: give exactly one of {', '.join(INSTANCE_KINDS)}"
                                      f" (got {', '.join(kinds) or 'none'})"))
    kind = kinds[0]
    target = table[kind]
    if not isinstance(target, str) or not target:
        raise InputError(_where(path, f"{where}: {kind} must be a name, got {target!r}"))
    settings = table.get("settings", {})
    if not isinstance(settings, dict):
        raise InputError(_where(path, f"{where}: settings must be a table"))
    settings = {k: _check_setting(path, f"{where} settings", k, v) for k, v in settings.items()}
    params = {k: v for k, v in table.items() if k not in (kind, "name", "settings")}
    label = table.get("name") or target
    if kind == "file":
        if params:
            raise InputError(_where(path, f"{where}: a file takes only name and settings, not "
                                          f"{', '.join(sorted(params))}"))
    elif kind == "dataset":
        from s3vm.data.loaders import DATASETS

        if target not in DATASETS:
            raise InputError(_where(path, f"{where}: unknown data set {target!r}: choose one of "
                                          f"{', '.join(DATASETS)}"))
        unknown = set(params) - {"labeled_fraction", "n_labeled", "scale", "missing"}
        if unknown:
            raise InputError(_where(path, f"{where}: unknown entries {', '.join(sorted(unknown))}"
                                          " (a dataset takes labeled_fraction or n_labeled, "
                                          "scale, missing)"))
        if "labeled_fraction" not in params and "n_labeled" not in params:
            raise InputError(_where(path, f"{where}: give labeled_fraction or n_labeled (a "
                                          "suite's data set is semi-supervised)"))
    elif kind == "sdp":
        from s3vm.data.loaders import SDP_INSTANCES

        if target not in SDP_INSTANCES:
            raise InputError(_where(path, f"{where}: unknown SDP-S3VM instance {target!r}: "
                                          f"choose one of {', '.join(SDP_INSTANCES)}"))
        unknown = set(params) - {"labeled_fraction", "scale", "rounding"}
        if unknown:
            raise InputError(_where(path, f"{where}: unknown entries {', '.join(sorted(unknown))}"))
    else:
        if target not in GENERATORS:
            raise InputError(_where(path, f"{where}: unknown generator {target!r}: choose one of "
                                          f"{', '.join(GENERATORS)}"))
        import inspect

        from s3vm.data import generators

        accepted = set(inspect.signature(getattr(generators, target)).parameters) - {"seed"}
        unknown = set(params) - accepted
        if unknown:
            raise InputError(_where(path, f"{where}: {target} takes no "
                                          f"{', '.join(sorted(unknown))} (it takes "
                                          f"{', '.join(sorted(accepted))})"))
    return InstanceSpec(kind, target, params, str(label), settings, base_dir)


def read_suite(path: str, output: Optional[str] = None) -> Suite:
    """Read and check a suite file; every run is expanded and checked (as ``s3vm compare``
    checks its input) before anything runs.

    Raises
    ------
    InputError
        A message naming the file and the entry at fault.
    """
    from s3vm import api
    from s3vm.core.registry import formulation_class

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(f"suite file not found: {path}")
    spec = read_toml(path)
    unknown = set(spec) - set(SUITE_KEYS)
    if unknown:
        raise InputError(_where(path, f"unknown entries {', '.join(sorted(unknown))} (a suite "
                                      f"has {', '.join(SUITE_KEYS)})"))
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(_where(path, "a suite needs a name (name = \"...\"): its results "
                                      "file belongs to it"))
    names = spec.get("formulations")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise InputError(_where(path, "formulations must be a non-empty list of names"))
    for entry in names:
        try:
            formulation_class(entry)
        except InputError as exc:
            raise InputError(_where(path, str(exc))) from None
    if len(set(names)) != len(names):
        raise InputError(_where(path, f"a formulation is named twice: {', '.join(names)}"))
    seeds = spec.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise InputError(_where(path, f"seeds must be a non-empty list of integers >= 0, got "
                                      f"{seeds!r}"))
    if len(set(seeds)) != len(seeds):
        raise InputError(_where(path, "a seed is listed twice"))
    time_limit = _number(path, "time_limit", spec.get("time_limit"))
    solver = spec.get("solver")
    if solver is not None and not isinstance(solver, str):
        raise InputError(_where(path, f"solver must be a name, got {solver!r}"))
    settings = spec.get("settings", {})
    override = spec.get("override", {})
    grid = spec.get("grid", {})
    if not all(isinstance(t, dict) for t in (settings, override, grid)):
        raise InputError(_where(path, "[settings], [override] and [grid] must be tables"))
    settings = {k: _check_setting(path, "[settings]", k, v) for k, v in settings.items()}
    override = {k: _check_setting(path, "[override]", k, v) for k, v in override.items()}
    twice = set(settings) & set(override)
    if twice:
        raise InputError(_where(path, f"{', '.join(sorted(twice))} both in [settings] and in "
                                      "[override]"))
    grid_values = {}
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise InputError(_where(path, f"[grid] {key} must be a non-empty list"))
        for table, entries in (("settings", settings), ("override", override)):
            if key in entries:
                raise InputError(_where(path, f"{key} is both in [{table}] and in [grid]"))
        grid_values[key] = [_check_setting(path, "[grid]", key, v) for v in values]
    own = spec.get("set", {})
    if not isinstance(own, dict) or not all(isinstance(v, dict) for v in own.values()):
        raise InputError(_where(path, "[set.NAME] tables give one formulation its own entries"))
    for entry, entries in own.items():
        if entry not in names:
            raise InputError(_where(path, f"[set.{entry}]: {entry!r} is not among the "
                                          f"formulations ({', '.join(names)})"))
        _check_run_entries(path, f"[set.{entry}]", entries)
    instances = spec.get("instances")
    if not isinstance(instances, list) or not instances:
        raise InputError(_where(path, "a suite needs at least one [[instances]] table"))
    base_dir = os.path.dirname(os.path.abspath(path))
    specs = [_instance_spec(path, base_dir, i + 1, t) for i, t in enumerate(instances)]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise InputError(_where(path, "two instances have the same name: give each a name = "
                                      "\"...\""))
    written = spec.get("output")
    if written is not None and (not isinstance(written, str) or not written.strip()):
        raise InputError(_where(path, f"output must be a file stem (text), got {written!r}"))
    stem = output or written or os.path.splitext(os.path.basename(path))[0] + "-results"
    if not os.path.isabs(stem) and output is None:
        stem = os.path.join(base_dir, stem)
    inputs = [path] + [f for s in specs for f in s.input_files()]
    _check_not_inputs(stem, inputs)
    _check_option_files(path, own, inputs + list(ResultsFiles(stem, "").paths))
    suite = Suite(name=name.strip(), path=path, description=str(spec.get("description", "")),
                  runs=[], output=stem, formulations=list(names))
    suite.runs = _expand(path, specs, names, seeds, settings, override, grid_values, own,
                         time_limit, solver)
    return suite


def _check_run_entries(path: str, where: str, entries: dict) -> None:
    """A formulation's own ``solver`` and ``time_limit`` have the types of the suite's."""
    solver = entries.get("solver")
    if solver is not None and (not isinstance(solver, str) or not solver.strip()):
        raise InputError(_where(path, f"{where}: solver must be a name, got {solver!r}"))
    _number(path, f"{where} time_limit", entries.get("time_limit"))


def _check_not_inputs(stem: str, inputs: list) -> None:
    """The results files (``STEM.jsonl``, ``.csv``, ``.parquet``) may not be the suite file or
    a file an instance is read from: a suite never writes over its own input."""
    from s3vm.solvers.runtime.files import check_not_input

    for path in ResultsFiles(stem, "").paths:
        check_not_input(path, inputs)


def _check_option_files(path: str, own: dict, taken: list) -> None:
    """A file a formulation writes (``tree_file``) may not be an input or a results file."""
    from s3vm.core.registry import formulation_class
    from s3vm.solvers.runtime.files import check_not_input

    for name, entries in own.items():
        table = formulation_class(name).option_table()
        for key, value in entries.items():
            if key in table and table[key].kind == "file" and isinstance(value, str):
                try:
                    check_not_input(value, taken)
                except InputError as exc:
                    raise InputError(_where(path, f"[set.{name}] {key}: {exc}")) from None


def _expand(path, specs, names, seeds, settings, override, grid_values, own, time_limit,
            solver) -> list:
    """Every run of the suite, each checked as ``s3vm compare`` checks its input.

    The settings of a run, from the weakest: the formulation's defaults, the suite's
    ``[settings]``, the instance's own settings (its ``settings`` table, its instance file's),
    then the suite's ``[override]``, the grid point and the formulation's ``[set.NAME]``.
    """
    from s3vm import api
    from s3vm.core.registry import formulation_class

    grid_points = [dict(zip(grid_values, combo))
                   for combo in itertools.product(*grid_values.values())] or [{}]
    runs = []
    for inst in specs:
        # A suite default that the instance sets itself is not the instance's setting.
        mine = inst.own_settings()
        shared = {k: v for k, v in settings.items() if k not in mine}
        shared.update(override)
        for seed in seeds if inst.draws else seeds[:1]:
            try:
                instance, base = inst.load(seed)
            except InputError as exc:
                raise InputError(_where(path, f"instance {inst.label!r}: {exc}")) from None
            for point in grid_points:
                try:
                    api.prepare_comparison(instance, names, base, per_formulation=own,
                                           **shared, **point)
                except InputError as exc:
                    at = "" if not point else " at " + ", ".join(f"{k}={v}"
                                                                 for k, v in point.items())
                    raise InputError(_where(path, f"instance {inst.label!r}{at}: {exc}")) \
                        from None
        seen = set()
        for point in grid_points:
            for name in names:
                cls = formulation_class(name)
                entries = dict(own.get(name, {}))
                run_solver = entries.pop("solver", None) or solver
                run_limit = entries.pop("time_limit", None) or time_limit
                seeded = "seed" in cls.option_table() and "seed" not in entries
                # A grid setting the formulation does not read does not change its run.
                used = {k: v for k, v in point.items() if k in cls.settings_used}
                for seed in seeds if (inst.draws or seeded) else [None]:
                    run = Run(inst, name, used, seed, {**shared, **used}, entries, run_solver,
                              run_limit)
                    if run.key not in seen:
                        seen.add(run.key)
                        runs.append(run)
    return runs


# -- running -------------------------------------------------------------------------------
def run_task(task: dict) -> dict:
    """Run one task and return its record; never raises (a failure is a record with status
    ``error`` and the exception in ``message``)."""
    started = time.perf_counter()
    spec = task["instance"]
    record = {"run": task["key"], "instance": spec.label, "formulation": task["formulation"],
              "grid": task["grid"], "seed": task["seed"], "time_limit": task["time_limit"]}
    try:
        from s3vm import api
        from s3vm.core.registry import formulation_class, get_formulation
        from s3vm.core.settings import SETTINGS_TABLE

        instance, base = spec.load(task["seed"])
        cls = formulation_class(task["formulation"])
        entries = task["own"]
        own_settings = {k: v for k, v in entries.items() if k in SETTINGS_TABLE}
        options = {k: v for k, v in entries.items() if k not in SETTINGS_TABLE}
        if task["seed"] is not None and "seed" in cls.option_table():
            options.setdefault("seed", task["seed"])
        form = get_formulation(task["formulation"], **options)
        shared = {k: v for k, v in task["explicit"].items() if k in cls.settings_used}
        effective = cls.settings_for(base, {**shared, **own_settings}, strict=False)
        # The settings the formulation reads (or fixes): the others are not part of its run.
        record["settings"] = effective.to_dict(
            [k for k in SETTING_COLUMNS if k in cls.settings_used or k in cls.settings_fixed])
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
                   "labels": out["labels"], "info": out.get("info", {})})
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
        yield from _execute_dask(tasks, scheduler)
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or len(tasks) == 1:
        for task in tasks:
            yield run_task(task)
        return
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


# -- the results files ---------------------------------------------------------------------
#: The fields every record holds, with their types: a line without them is not a record.
REQUIRED_FIELDS = {"suite": str, "run": str, "instance": str, "formulation": str, "status": str}
#: The types of the fields a record may hold (or hold as null), read by the summary and plots.
OPTIONAL_FIELDS = {"grid": dict, "settings": dict, "seed": int,
                   **{k: (int, float) for k in ("objective", "lower_bound", "gap", "error",
                                                 "auc", "seconds", "nodes", "iterations",
                                                 "time_limit")}}


class ResultsFiles:
    """``STEM.jsonl`` (every record, appended as runs finish: the file a suite resumes from),
    ``STEM.csv`` (the scalar columns, appended alike) and ``STEM.parquet`` (written at the end
    when pyarrow is installed).

    One process at a time writes them: :meth:`locked` holds an exclusive ``flock`` on
    ``STEM.jsonl`` while the suite runs, and a second ``s3vm bench`` on the same files is
    refused at once (it would run the same runs again) instead of waiting for the first.
    """

    def __init__(self, stem: str, suite: str):
        self.stem, self.suite = stem, suite
        self.jsonl, self.csv, self.parquet = stem + ".jsonl", stem + ".csv", stem + ".parquet"
        self._fd: Optional[int] = None

    @property
    def paths(self) -> tuple:
        return self.jsonl, self.csv, self.parquet

    def check(self) -> None:
        """InputError unless the files can be written and ``STEM.csv`` is not someone else's."""
        from s3vm.solvers.runtime.files import check_writable

        for path in self.paths:
            check_writable(path)
        if not os.path.exists(self.jsonl) and os.path.exists(self.csv):
            raise InputError(f"{self.csv} exists without {os.path.basename(self.jsonl)}: not "
                             f"the results of suite {self.suite!r}; give another --output")

    def read(self) -> list:
        """The records already there, read without writing (a last line cut short, by a stop
        or by a writer now at work, is left out); InputError for another suite's file or a
        file that is not a results file."""
        self.check()
        if not os.path.exists(self.jsonl):
            return []
        return read_records(self.jsonl, suite=self.suite)

    @contextmanager
    def locked(self):
        """Hold the results files for this process; yields the records already there.

        A last line cut short by a crash is repaired first (cut off, or completed with its
        newline when it is a whole record), so that the next append starts a line of its own.
        A block that ends in an exception before anything was recorded in files it created
        (an unreachable cluster) leaves no file behind.
        """
        self.check()
        fresh = not os.path.exists(self.jsonl)
        fd = self._open_locked()
        try:
            _repair_last_line(fd)
            records = read_records(self.jsonl, suite=self.suite)
            self._fd = fd
            if records or os.path.exists(self.csv):
                self._rewrite_csv(records)  # a CSV cut short, or of an older layout, made whole
            yield records
        except BaseException:
            if fresh and os.fstat(fd).st_size == 0:
                for path in (self.jsonl, self.csv):  # before the lock goes: no one has them
                    if os.path.exists(path):
                        os.unlink(path)
            raise
        finally:
            self._fd = None
            os.close(fd)  # releases the lock

    def _open_locked(self) -> int:
        """A descriptor of ``STEM.jsonl`` (created if need be) under an exclusive flock (no
        lock where the system has no flock)."""
        try:
            fd = os.open(self.jsonl, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
        except OSError as exc:
            raise InputError(f"cannot write {self.jsonl}: {exc.strerror or exc}") from None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The holder may have removed the file before letting go: then this lock is on a
            # file no one else will see, and the suite must start again from the path.
            if os.fstat(fd).st_ino != os.stat(self.jsonl).st_ino:
                raise BlockingIOError
        except (BlockingIOError, FileNotFoundError):
            os.close(fd)
            raise InputError(f"{self.jsonl} is being written by another s3vm bench (it holds "
                             "the file's lock): wait for it to end, or give another --output") \
                from None
        return fd

    def append(self, record: dict) -> None:
        """Append one record: one write of one whole line to each file, on disk (fsync) before
        the next run is recorded, so that a crash loses at most the line being written."""
        if self._fd is None:
            raise RuntimeError("ResultsFiles.append outside ResultsFiles.locked")
        line = json.dumps(record, default=_json_default) + "\n"
        _write_all(self._fd, line.encode("utf-8"))
        os.fsync(self._fd)
        row = _csv_text([csv_row(record)])
        fd = os.open(self.csv, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        try:
            if os.fstat(fd).st_size == 0:
                row = _csv_text([COLUMNS]) + row
            _write_all(fd, row.encode("utf-8"))
        finally:
            os.close(fd)

    def _rewrite_csv(self, records: list) -> None:
        from s3vm.solvers.runtime.files import atomic_output

        with atomic_output(self.csv, suffix=".csv") as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(_csv_text([COLUMNS] + [csv_row(r) for r in records]))

    def finish(self, records: list) -> list:
        """Rewrite the CSV whole from the records (and the Parquet file when pyarrow is
        installed); the names of the files written."""
        from s3vm.solvers.runtime.files import atomic_output

        self._rewrite_csv(records)
        written = [self.jsonl, self.csv]
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            return written
        frame = records_frame(records)
        with atomic_output(self.parquet, suffix=".parquet") as tmp:
            frame.to_parquet(tmp, index=False)
        written.append(self.parquet)
        return written


def _write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a write to a file may be partial)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _csv_text(rows) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(rows)
    return buffer.getvalue()


def _repair_last_line(fd: int) -> None:
    """Cut off a last line that a crash left unfinished (no newline, not a whole record), or
    end a whole last record with its newline; in place, the lock stays on the same file."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    data = os.pread(fd, size, 0)
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    record, why = _parse_line(data[cut:])
    if record is not None and not why:
        _write_all(fd, b"\n")
    else:
        os.ftruncate(fd, cut)
    os.fsync(fd)


def _json_default(value):
    import numpy as np

    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def csv_row(record: dict) -> list:
    settings = record.get("settings") or {}
    row = []
    for column in COLUMNS:
        value = settings.get(column) if column in SETTING_COLUMNS else record.get(column)
        if column == "grid":
            value = json.dumps(value or {}, sort_keys=True)
        row.append("" if value is None else value)
    return row


def _parse_line(line: bytes):
    """(record, None) for a line that holds a whole record; (record, why) for a JSON object of
    a suite's run that lacks another field; (None, why) for anything else."""
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, "not JSON"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    for key, kind in REQUIRED_FIELDS.items():
        if key not in record:
            why = f"no {key!r} field"
        elif not isinstance(record[key], kind):
            why = f"its {key!r} is {record[key]!r}"
        else:
            continue
        return (record if key not in ("suite", "run") else None), why
    for key, kind in OPTIONAL_FIELDS.items():
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
            return record, f"its {key!r} is {value!r}"
    return record, None


def read_records(path: str, suite: Optional[str] = None) -> list:
    """The records of a JSON-lines results file, checked to belong to ``suite`` when given.

    A last line without its newline that is not a whole record was cut short (a run stopped
    while writing it, or one being written now): it is left out. Any other line that is not a
    record (not JSON, or without one of the fields of :data:`REQUIRED_FIELDS`) is an
    InputError naming it.
    """
    if not os.path.isfile(path):
        raise InputError(f"results file not found: {path}")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record, why = _parse_line(line)
        if record is None or why:
            if number == len(lines) and line.lstrip().startswith(b"{"):
                break  # unfinished: the last line, with no newline after it
        if record is not None and suite is not None and record["suite"] != suite:
            raise InputError(f"{path} holds the results of suite {record['suite']!r}, not of "
                             f"{suite!r}: give another --output")
        if why:
            raise InputError(f"{path}: line {number} is not a record of an s3vm results file "
                             f"({why})")
        records.append(record)
    return records


def records_frame(records: list):
    """A pandas DataFrame of the records' scalar columns (grid as JSON text): the numeric
    columns as numbers, ``bias`` and ``hard_margin`` as booleans, every other column as text
    (so that a value of an unexpected type cannot make a column of mixed types)."""
    import pandas as pd

    rows = [dict(zip(COLUMNS, csv_row(r))) for r in records]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in COLUMNS:
        values = frame[column].replace("", None)
        if column in NUMERIC_COLUMNS:
            frame[column] = pd.to_numeric(values, errors="coerce")
        elif column in ("bias", "hard_margin"):
            frame[column] = values.map(lambda v: None if v is None else bool(v)).astype("boolean")
        else:
            frame[column] = values.map(lambda v: None if v is None else str(v))
    return frame


# -- the summary -------------------------------------------------------------------------
def summary(records: list) -> str:
    """One line per instance x formulation x grid point, over its seeds: runs, statuses, and
    the means of objective, gap, error, ROC AUC, seconds and nodes."""
    from tabulate import tabulate

    groups: dict = {}
    for r in records:
        grid = ", ".join(f"{k}={v}" for k, v in (r.get("grid") or {}).items())
        groups.setdefault((r["instance"], r["formulation"], grid), []).append(r)

    def mean(rows, key, spec):
        values = [r[key] for r in rows if r.get(key) is not None]
        return format(sum(values) / len(values), spec) if values else "-"

    body = []
    for (instance, formulation, grid), rows in groups.items():
        counts: dict = {}
        for r in rows:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        status = " ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        body.append([instance, formulation, grid or "-", len(rows), status,
                     mean(rows, "objective", ".6g"), mean(rows, "gap", ".2%"),
                     mean(rows, "error", ".2%"), mean(rows, "auc", ".4f"),
                     mean(rows, "seconds", ".2f"), mean(rows, "nodes", ".0f")])
    header = ["instance", "formulation", "grid", "runs", "status", "objective", "gap", "error",
              "ROC AUC", "seconds", "nodes"]
    return tabulate(body, headers=header, disable_numparse=True)


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
