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

    [settings]                      # settings of every run (explicit: a formulation that does
    kernel = "rbf"                  # not read one is not given it; none may be read by no one)

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
table of defaults for that instance, like an instance file's). A seed draws the labeled rows of a
``dataset``, ``generator`` or ``sdp`` instance and reaches every formulation that has a ``seed``
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
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from .solvers.errors import InputError
from .solvers.files import read_toml

SUITE_KEYS = ("name", "description", "formulations", "seeds", "time_limit", "solver", "output",
              "settings", "grid", "set", "instances")
INSTANCE_KINDS = ("file", "dataset", "generator", "sdp")
GENERATORS = ("two_moons", "gaussian_blobs", "noisy_linear")

#: The columns of the CSV results file (and of the summary's source), in order.
COLUMNS = ("suite", "run", "instance", "formulation", "grid", "seed", "status", "objective",
           "lower_bound", "gap", "error", "auc", "seconds", "nodes", "iterations", "solver",
           "message")


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

    def load(self, seed: Optional[int]):
        """(Instance, Settings): the instance for ``seed`` and its default settings."""
        from .settings import Settings, load_instance

        defaults = Settings(**self.settings)
        if self.kind == "file":
            path = os.path.join(self.base_dir, self.target)
            instance, settings = load_instance(path if os.path.exists(path) else self.target)
            return instance, settings.updated(**self.settings) if self.settings else settings
        seed = 0 if seed is None else seed
        if self.kind == "dataset":
            from .loaders import load_dataset

            return load_dataset(self.target, seed=seed, **self.params), defaults
        if self.kind == "sdp":
            from .loaders import load_sdp_instance

            return load_sdp_instance(self.target, seed=seed, **self.params), defaults
        from . import generators

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
    from .settings import SETTINGS_TABLE

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
        from .loaders import DATASETS

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
        from .loaders import SDP_INSTANCES

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

        from . import generators

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
    from . import api
    from .registry import formulation_class

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
    grid = spec.get("grid", {})
    if not isinstance(settings, dict) or not isinstance(grid, dict):
        raise InputError(_where(path, "[settings] and [grid] must be tables"))
    settings = {k: _check_setting(path, "[settings]", k, v) for k, v in settings.items()}
    grid_values = {}
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise InputError(_where(path, f"[grid] {key} must be a non-empty list"))
        if key in settings:
            raise InputError(_where(path, f"{key} is both in [settings] and in [grid]"))
        grid_values[key] = [_check_setting(path, "[grid]", key, v) for v in values]
    own = spec.get("set", {})
    if not isinstance(own, dict) or not all(isinstance(v, dict) for v in own.values()):
        raise InputError(_where(path, "[set.NAME] tables give one formulation its own entries"))
    for entry in own:
        if entry not in names:
            raise InputError(_where(path, f"[set.{entry}]: {entry!r} is not among the "
                                          f"formulations ({', '.join(names)})"))
    instances = spec.get("instances")
    if not isinstance(instances, list) or not instances:
        raise InputError(_where(path, "a suite needs at least one [[instances]] table"))
    base_dir = os.path.dirname(os.path.abspath(path))
    specs = [_instance_spec(path, base_dir, i + 1, t) for i, t in enumerate(instances)]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise InputError(_where(path, "two instances have the same name: give each a name = "
                                      "\"...\""))
    stem = output or spec.get("output") or os.path.splitext(os.path.basename(path))[0] \
        + "-results"
    if not os.path.isabs(stem) and output is None:
        stem = os.path.join(base_dir, stem)
    suite = Suite(name=name.strip(), path=path, description=str(spec.get("description", "")),
                  runs=[], output=stem, formulations=list(names))
    suite.runs = _expand(path, specs, names, seeds, settings, grid_values, own, time_limit,
                         solver)
    return suite


def _expand(path, specs, names, seeds, settings, grid_values, own, time_limit, solver) -> list:
    """Every run of the suite, each checked as ``s3vm compare`` checks its input."""
    from . import api
    from .registry import formulation_class

    grid_points = [dict(zip(grid_values, combo))
                   for combo in itertools.product(*grid_values.values())] or [{}]
    runs = []
    for inst in specs:
        for seed in seeds if inst.draws else seeds[:1]:
            try:
                instance, base = inst.load(seed)
            except InputError as exc:
                raise InputError(_where(path, f"instance {inst.label!r}: {exc}")) from None
            for point in grid_points:
                try:
                    api.prepare_comparison(instance, names, base, per_formulation=own,
                                           **settings, **point)
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
                    run = Run(inst, name, used, seed, {**settings, **used}, entries, run_solver,
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
              "grid": task["grid"], "seed": task["seed"]}
    try:
        from . import api
        from .registry import formulation_class, get_formulation
        from .settings import SETTINGS_TABLE

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
        shared = {k: v for k, v in task["explicit"].items() if k in cls.settings_used}
        effective = cls.settings_for(base, {**shared, **own_settings}, strict=False)
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
            "grid": task["grid"], "seed": task["seed"], "status": "error",
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
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
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
class ResultsFiles:
    """``STEM.jsonl`` (every record, appended as runs finish: the file a suite resumes from),
    ``STEM.csv`` (the scalar columns, appended alike) and ``STEM.parquet`` (written at the end
    when pyarrow is installed)."""

    def __init__(self, stem: str, suite: str):
        self.stem, self.suite = stem, suite
        self.jsonl, self.csv, self.parquet = stem + ".jsonl", stem + ".csv", stem + ".parquet"

    def read(self) -> list:
        """The records already there; InputError for another suite's file or a file that is
        not a results file. A last line cut short (a run stopped while writing) is dropped."""
        from .solvers.files import check_writable

        check_writable(self.jsonl)
        if not os.path.exists(self.jsonl):
            if os.path.exists(self.csv):
                raise InputError(f"{self.csv} exists without {os.path.basename(self.jsonl)}: not "
                                 f"the results of suite {self.suite!r}; give another --output")
            return []
        return read_records(self.jsonl, suite=self.suite, repair=True)

    def append(self, record: dict) -> None:
        import csv

        line = json.dumps(record, default=_json_default)
        with open(self.jsonl, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        new = not os.path.exists(self.csv)
        with open(self.csv, "a", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            if new:
                writer.writerow(COLUMNS)
            writer.writerow(csv_row(record))

    def finish(self, records: list) -> list:
        """Rewrite the CSV whole from the records (and the Parquet file when pyarrow is
        installed); the names of the files written."""
        import csv

        from .solvers.files import atomic_output

        with atomic_output(self.csv, suffix=".csv") as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                writer = csv.writer(fh, lineterminator="\n")
                writer.writerow(COLUMNS)
                for record in records:
                    writer.writerow(csv_row(record))
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
    row = []
    for column in COLUMNS:
        value = record.get(column)
        if column == "grid":
            value = json.dumps(value or {}, sort_keys=True)
        row.append("" if value is None else value)
    return row


def read_records(path: str, suite: Optional[str] = None, repair: bool = False) -> list:
    """The records of a JSON-lines results file, checked to belong to ``suite`` when given.

    ``repair``: drop a last line cut short by a stop (the file is rewritten without it).
    """
    if not os.path.isfile(path):
        raise InputError(f"results file not found: {path}")
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    records, good = [], []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or "run" not in record or "suite" not in record:
                raise ValueError
        except ValueError:
            if repair and number == len(lines) and records:
                break  # an unfinished last line: written while the suite was stopped
            raise InputError(f"{path}: line {number} is not a record of an s3vm results file")
        if suite is not None and record["suite"] != suite:
            raise InputError(f"{path} holds the results of suite {record['suite']!r}, not of "
                             f"{suite!r}: give another --output")
        records.append(record)
        good.append(line)
    if repair and len(good) != sum(1 for line in lines if line.strip()):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in good))
    return records


def records_frame(records: list):
    """A pandas DataFrame of the records' scalar columns (grid as JSON text)."""
    import pandas as pd

    rows = [dict(zip(COLUMNS, csv_row(r))) for r in records]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in ("objective", "lower_bound", "gap", "error", "auc", "seconds", "nodes",
                   "iterations", "seed"):
        frame[column] = pd.to_numeric(frame[column].replace("", None), errors="coerce")
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
    every run of the suite (earlier ones included), in suite order."""
    files = ResultsFiles(suite.output, suite.name)
    previous = {r["run"]: r for r in files.read()}
    keys = [run.key for run in suite.runs]
    todo = [run.task() for run in suite.runs
            if run.key not in previous or (retry_errors and previous[run.key]["status"] == "error")]
    if progress is not None:
        progress.total, progress.done = len(keys), len(keys) - len(todo)
    for record in execute(todo, jobs, scheduler):
        record["suite"] = suite.name
        record = {"suite": suite.name, **record}
        files.append(record)
        previous[record["run"]] = record
        if progress is not None:
            progress.update(record)
    records = [previous[key] for key in keys if key in previous]
    with open(files.jsonl, encoding="utf-8") as fh:
        everything = [json.loads(line) for line in fh if line.strip()]
    files.finish(everything)
    return records
