"""The suite file of ``s3vm bench``: a grid of instances x formulations x settings x seeds in one
TOML file, read, checked and expanded into runs (run by :mod:`s3vm.bench.execution`, recorded by
:mod:`s3vm.bench.results`).

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
of a ``dataset``, ``generator`` or ``sdp`` instance and reaches every formulation that has a
``seed`` option; a run that no seed changes is run once (its seed is recorded as null).

Everything is checked before the first run (the same option tables and messages as ``s3vm
compare``); nothing is written for a suite with an error.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import dataclass, field
from typing import Optional

from s3vm import api
from s3vm.bench.results import ResultsFiles
from s3vm.core.registry import formulation_class
from s3vm.core.settings import SETTING_KEYS, SETTINGS_TABLE, Settings, instance_files, load_instance
from s3vm.data import generators
from s3vm.data.loaders import DATASETS, SDP_INSTANCES, load_dataset, load_sdp_instance
from s3vm.solvers.errors import InputError
from s3vm.solvers.registry import backend_class
from s3vm.solvers.runtime.files import check_not_input, read_toml
from s3vm.solvers.runtime.keys import Key, table as key_table

#: Every entry of a suite file, with its type and range (checked by :func:`read_suite` through
#: these keys, before anything else; what an entry's value may name, a formulation, a solver
#: that takes every formulation's problems, is checked after).
SUITE = key_table(
    Key("name", "name", "the suite's name: its results file belongs to it", example="study"),
    Key("description", "text", "what the suite is for", example="moons, three methods"),
    Key("formulations", "list", "formulation names", example=["rlp"], item="name"),
    Key("seeds", "list", "seeds of the labeled draws and randomised steps (default [0])",
        example=[0, 1], item="integer", minimum=0),
    Key("time_limit", "number", "seconds per run (default none)", example=30, minimum=0.0,
        open_min=True),
    Key("solver", "name", "every formulation's solver (one that takes each formulation's "
        "problems)", example="highs"),
    Key("output", "name", "the results files' stem, relative to the suite file (a file name, "
        "not a folder)", example="study-results", what="a file stem (sub/results, not a folder)"),
    Key("settings", "table", "settings of every run", example={"kernel": "linear"}),
    Key("override", "table", "settings that win over an instance's own",
        example={"kernel": "linear"}),
    Key("grid", "table", "settings varied over their cartesian product",
        example={"kernel": ["linear", "rbf"]}),
    Key("set", "table", "[set.NAME]: one formulation's own entries",
        example={"rlp": {"kernel": "rbf"}}),
    Key("instances", "tables", "[[instances]]: one table per instance",
        example=[{"file": "blobs_small"}]),
)
SUITE_KEYS = tuple(SUITE)
INSTANCE_KINDS = ("file", "dataset", "generator", "sdp")
GENERATORS = ("two_moons", "gaussian_blobs", "noisy_linear")

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

        return instance_files(self._file()) if self.kind == "file" else []

    def own_settings(self) -> set:
        """The settings this instance gives itself: its ``settings`` table, and for an instance
        file the settings the file writes (a data file gives none)."""
        keys = set(self.settings)
        files = self.input_files()
        if files and files[0].lower().endswith(".toml") and os.path.isfile(files[0]):
            keys |= set(read_toml(files[0])) & set(SETTING_KEYS)
        return keys

    def load(self, seed: Optional[int]):
        """(Instance, Settings): the instance for ``seed`` and its default settings."""

        defaults = Settings(**self.settings)
        if self.kind == "file":
            instance, settings = load_instance(self._file())
            return instance, settings.updated(**self.settings) if self.settings else settings
        seed = 0 if seed is None else seed
        if self.kind == "dataset":
            return load_dataset(self.target, seed=seed, **self.params), defaults
        if self.kind == "sdp":
            return load_sdp_instance(self.target, seed=seed, **self.params), defaults

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
    if key not in SETTINGS_TABLE:
        raise InputError(_where(path, f"unknown setting {key!r} in {where}: choose one of "
                                      f"{', '.join(SETTINGS_TABLE)}"))
    try:
        return SETTINGS_TABLE[key].validate(value)
    except InputError as exc:
        raise InputError(_where(path, f"{where}: {exc}")) from None


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
    label = target
    if "name" in table:  # the run's label in every results file: text, never a number's str
        label = SUITE["name"].check(table["name"], f"{path}: {where}: ")
    if kind == "file":
        if params:
            raise InputError(_where(path, f"{where}: a file takes only name and settings, not "
                                          f"{', '.join(sorted(params))}"))
    elif kind == "dataset":
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

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(f"suite file not found: {path}")
    spec = read_toml(path)
    unknown = set(spec) - set(SUITE_KEYS)
    if unknown:
        raise InputError(_where(path, f"unknown entries {', '.join(sorted(unknown))} (a suite "
                                      f"has {', '.join(SUITE_KEYS)})"))
    if "name" not in spec:
        raise InputError(_where(path, "a suite needs a name (name = \"...\"): its results "
                                      "file belongs to it"))
    for required in ("formulations", "instances"):
        if required not in spec:
            raise InputError(_where(path, f"a suite needs {required}"))
    spec = {k: SUITE[k].check(v, f"{path}: ") for k, v in spec.items()}
    name, names = spec["name"], spec["formulations"]
    for entry in names:
        try:
            formulation_class(entry)
        except InputError as exc:
            raise InputError(_where(path, str(exc))) from None
    if len(set(names)) != len(names):
        raise InputError(_where(path, f"a formulation is named twice: {', '.join(names)}"))
    seeds = spec.get("seeds", [0])
    if len(set(seeds)) != len(seeds):
        raise InputError(_where(path, "a seed is listed twice"))
    time_limit = spec.get("time_limit")
    solver = spec.get("solver")
    settings = spec.get("settings", {})
    override = spec.get("override", {})
    grid = spec.get("grid", {})
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
    if not all(isinstance(v, dict) for v in own.values()):
        raise InputError(_where(path, "[set.NAME] tables give one formulation its own entries"))
    for entry, entries in own.items():
        if entry not in names:
            raise InputError(_where(path, f"[set.{entry}]: {entry!r} is not among the "
                                          f"formulations ({', '.join(names)})"))
        _check_run_entries(path, f"[set.{entry}]", entries, entry, solver)
    if solver is not None:
        _check_solver(path, "solver", solver, [n for n in names
                                                if "solver" not in own.get(n, {})])
    instances = spec["instances"]
    base_dir = os.path.dirname(os.path.abspath(path))
    specs = [_instance_spec(path, base_dir, i + 1, t) for i, t in enumerate(instances)]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise InputError(_where(path, "two instances have the same name: give each a name = "
                                      "\"...\""))
    written = spec.get("output")
    if written is not None and (written.endswith(("/", os.sep)) or
                                os.path.basename(written) in (".", "..")):
        # "sub/" would write the hidden files sub/.jsonl, sub/.csv and sub/.parquet.
        raise InputError(_where(path, f"output must be {SUITE['output'].what}, got "
                                      f"{written!r}"))
    stem = output or written or os.path.splitext(os.path.basename(path))[0] + "-results"
    if not os.path.isabs(stem) and output is None:
        stem = os.path.join(base_dir, stem)
    inputs = [path] + [f for s in specs for f in s.input_files()]
    _check_not_inputs(stem, inputs)
    _check_option_files(path, own, inputs + list(ResultsFiles(stem, "").paths))
    suite = Suite(name=name, path=path, description=spec.get("description", ""),
                  runs=[], output=stem, formulations=list(names))
    suite.runs = _expand(path, specs, names, seeds, settings, override, grid_values, own,
                         time_limit, solver)
    return suite


def _check_run_entries(path: str, where: str, entries: dict, name: str,
                       solver: Optional[str]) -> None:
    """A formulation's own ``solver`` and ``time_limit`` are checked by the suite's keys; its
    solver, or else the suite's, must take the formulation's problems."""
    if "profile" in entries:
        # compare's --set NAME.profile has no counterpart in a suite yet (its runs carry a
        # solver name only): refused here, not by every run.
        raise InputError(_where(path, f"{where}: a suite takes a solver per formulation, "
                                      "not a profile"))
    for key in ("solver", "time_limit"):
        if key in entries:
            SUITE[key].check(entries[key], f"{path}: {where} ")
    if "solver" in entries:
        _check_solver(path, f"{where} solver", entries["solver"], [name])


def _check_solver(path: str, where: str, solver: str, names: list) -> None:
    """``solver`` must be a known solver that takes the problems of every formulation of
    ``names`` (else every run would end as an error record)."""
    for entry in names:
        try:
            backend_class(solver, formulation_class(entry).problem_class)
        except InputError as exc:
            prefix = "" if where == "solver" else f"{where}: "  # the message names the solver
            raise InputError(_where(path, f"{prefix}{exc} (formulation {entry})")) from None


def _check_not_inputs(stem: str, inputs: list) -> None:
    """The results files (``STEM.jsonl``, ``.csv``, ``.parquet``) may not be the suite file or
    a file an instance is read from: a suite never writes over its own input."""

    for path in ResultsFiles(stem, "").paths:
        check_not_input(path, inputs)


def _check_option_files(path: str, own: dict, taken: list) -> None:
    """A file a formulation writes (``tree_file``) may not be an input or a results file."""

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
                used = cls.applicable(point)
                for seed in seeds if (inst.draws or seeded) else [None]:
                    run = Run(inst, name, used, seed, {**shared, **used}, entries, run_solver,
                              run_limit)
                    if run.key not in seen:
                        seen.add(run.key)
                        runs.append(run)
    return runs


