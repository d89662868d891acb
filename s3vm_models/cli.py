"""The ``s3vm`` command line: parse, call the API, print. Nothing else lives here.

Exit status: 0 with a result, 2 on bad input or a missing solver (one line on stderr),
1 on an unexpected internal failure (one line; S3VM_DEBUG=1 shows the traceback), 130 after
SIGINT (Ctrl-C) and 143 after SIGTERM (128 + the signal number; a solve stopped by either prints
its best result so far first, as JSON with --json), 141 when the reader of stdout went away.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import warnings
from typing import Optional, Sequence

from ._version import __version__
from .options import Option, add_flags
from .solvers.errors import InputError, S3VMError
from .solvers.files import (atomic_output, check_not_input, check_writable,
                            remove_temporary_files)
from .solvers.stdio import own_stdout, quiet_stderr
from .solvers.supervisor import (Interrupted, abandoned_workers, set_isolation,
                                 signals_interrupt)

PROG = "s3vm"
#: The labeled share of ``s3vm dataset`` when none is given (that of the shipped instances).
DEFAULT_LABELED_FRACTION = 0.1


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2 (argparse prints the whole usage), and
    an option given twice refused (argparse would keep the last silently: ``--C 1 --C 2``)."""

    def error(self, message):
        raise InputError(message)

    def parse_known_args(self, args=None, namespace=None):
        seen: dict = {}
        for token in list(args or []):
            if token == "--":
                break
            flag = token.split("=", 1)[0]
            action = self._option_string_actions.get(flag)
            if action is None or isinstance(action, argparse._AppendAction) or \
                    isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            if action.dest in seen:
                raise InputError(f"{flag} is given twice ({seen[action.dest]} and {token}): "
                                 "give each option once")
            seen[action.dest] = token
        return super().parse_known_args(args, namespace)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _add_problem_options(p: argparse.ArgumentParser) -> None:
    from .settings import SETTING_OPTIONS

    add_flags(p, {opt: [] for opt in SETTING_OPTIONS})
    p.add_argument("--scale", choices=("standard", "minmax"),
                   help="scale features before solving (off by default)")
    p.add_argument("--unlabeled-marker", dest="unlabeled_marker", type=_number,
                   help="the label of unlabeled rows in a LIBSVM/svmlight file (default 0)")


def _add_solver_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("solver")
    g.add_argument("--solver", help="solver name (see `s3vm list`)")
    g.add_argument("--profile", help="solver profile file (TOML)")
    g.add_argument("--time-limit", dest="time_limit", type=_number,
                   help="seconds, model building included")
    g.add_argument("--quiet", "-q", action="store_true",
                   help="no progress or log lines on stderr")
    g.add_argument("--verbose", action="store_true",
                   help="the solver's own log on stderr (by default solver libraries print "
                        "nothing)")


def _add_formulation_options(p: argparse.ArgumentParser) -> None:
    from .registry import all_options

    add_flags(p, {option: owners for option, owners in all_options().values()})


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Semi-supervised SVMs as mathematical programs.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, required=True)

    p = sub.add_parser("solve", help="solve one formulation and print the result")
    p.add_argument("data", help="CSV data file, TOML instance file, or a shipped instance name")
    p.add_argument("--formulation", "-f", required=True)
    _add_problem_options(p)
    _add_formulation_options(p)
    _add_solver_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--primal", action="store_true", help="with --json: include the primal solution")

    p = sub.add_parser("compare", help="solve several formulations and print a table")
    p.add_argument("data")
    p.add_argument("--formulations", required=True, help="comma-separated names")
    p.add_argument("--set", dest="per_formulation", action="append", default=[],
                   metavar="NAME.KEY=VALUE",
                   help="a setting or option for one formulation only (repeatable), e.g. "
                        "--set vs3vm.balance=none")
    _add_problem_options(p)
    _add_formulation_options(p)
    _add_solver_options(p)
    p.add_argument("--json", action="store_true", help="print the list of result objects")
    p.add_argument("--plot", metavar="FILE",
                   help="also draw the decision boundaries side by side (a 2-D instance; "
                        "PNG, SVG or PDF by the extension; needs matplotlib)")

    p = sub.add_parser("export", help="write a formulation's model to a file")
    p.add_argument("data")
    p.add_argument("--formulation", "-f", required=True)
    p.add_argument("--format", dest="fmt",
                   help="mps or lp (LP/MIP formulations), cbf or ptf (SDP formulations, written "
                        "by MOSEK Fusion; no licence needed); default: the file's extension")
    p.add_argument("-o", "--output", required=True)
    _add_problem_options(p)
    _add_formulation_options(p)

    sub.add_parser("list", help="formulations and installed solvers")

    p = sub.add_parser("plot", help="draw a picture: decision boundaries, a branch-and-bound "
                                    "search, or a results file's performance profile and gaps")
    kinds = p.add_subparsers(dest="kind", parser_class=_Parser, required=True)
    for kind, text in (("boundary", "the decision boundaries of formulations on a 2-D "
                                    "instance, side by side"),
                       ("bnb", "the incumbent and lower bound of branch-and-bound searches "
                               "over time and nodes")):
        q = kinds.add_parser(kind, help=text)
        q.add_argument("data", help="data file, instance file or shipped instance name")
        q.add_argument("--formulations", "-f", required=True, help="comma-separated names")
        q.add_argument("--set", dest="per_formulation", action="append", default=[],
                       metavar="NAME.KEY=VALUE", help="a setting or option for one formulation")
        q.add_argument("-o", "--output", required=True, help="picture file (.png, .svg, .pdf)")
        _add_problem_options(q)
        _add_formulation_options(q)
        _add_solver_options(q)
    for kind, text in (("profile", "Dolan-More performance profile (time to solve) of a "
                                   "results file of s3vm bench"),
                       ("gap", "bars of the gap between objective and lower bound per "
                               "instance and formulation, from a results file")):
        q = kinds.add_parser(kind, help=text)
        q.add_argument("results", help="results file of s3vm bench (STEM.jsonl)")
        q.add_argument("-o", "--output", required=True, help="picture file (.png, .svg, .pdf)")
        q.add_argument("--title")
        if kind == "profile":
            q.add_argument("--solved", default="optimal",
                           help="comma-separated statuses that count as solved (default "
                                "optimal; add feasible to time the local methods)")

    p = sub.add_parser("select", help="choose kernel and C as SDP-S3VM does (10-fold "
                                      "cross-validation on the labeled points) and print the "
                                      "settings of their problem (C* = C l/u, mean balance)")
    p.add_argument("data", help="CSV data file, TOML instance file, or a shipped instance name")
    p.add_argument("--folds", type=int, default=10, help="cross-validation folds (default 10)")
    p.add_argument("--unlabeled-marker", dest="unlabeled_marker", type=_number,
                   help="the label that marks an unlabeled row in a LIBSVM file")
    p.add_argument("--scale", choices=("standard", "minmax"),
                   help="scale features before selecting (off by default)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-o", "--output", metavar="FILE.toml",
                   help="also write an instance file with the chosen settings")

    p = sub.add_parser("bench", help="run a benchmark suite: instances x formulations x "
                                     "settings x seeds (docs/bench.md)")
    p.add_argument("suite", help="suite file (TOML)")
    p.add_argument("-o", "--output", metavar="STEM",
                   help="results files STEM.jsonl, STEM.csv (and STEM.parquet with pyarrow); "
                        "default: the suite's output entry, else SUITE-results beside the suite")
    p.add_argument("-j", "--jobs", type=int,
                   help="local worker processes (default: one per core; 1 runs in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster (dask.distributed scheduler address, e.g. "
                        "tcp://host:8786) instead of local processes")
    p.add_argument("--retry-errors", dest="retry_errors", action="store_true",
                   help="run again the runs recorded as errors")
    p.add_argument("--list", dest="list_runs", action="store_true",
                   help="print the runs and whether each is done; run nothing")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    p = sub.add_parser("dataset", help="write a bundled data set as a semi-supervised CSV data "
                                       "file (a seeded labeled subset, the rest unlabeled)")
    p.add_argument("name", nargs="?", help="data set name (omit to list them)")
    p.add_argument("-o", "--output", help="CSV file to write")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--labeled-fraction", dest="labeled_fraction", type=_number,
                   help=f"share of each class labeled (seeded, stratified; default "
                        f"{DEFAULT_LABELED_FRACTION})")
    g.add_argument("--n-labeled", dest="n_labeled", type=int, help="number of labeled points")
    g.add_argument("--all-labeled", dest="all_labeled", action="store_true",
                   help="label every row (a supervised file)")
    p.add_argument("--seed", type=int, default=0, help="seed of the labeled draw (default 0)")
    p.add_argument("--scale", choices=("standard", "minmax"))
    return parser


def _overrides(args) -> dict:
    from .settings import SETTINGS_TABLE

    return {k: getattr(args, k) for k in SETTINGS_TABLE if getattr(args, k, None) is not None}


def _formulation_options(args) -> dict:
    from .registry import all_options

    return {k: getattr(args, k) for k in all_options() if getattr(args, k, None) is not None}


#: ``--set NAME.solver=S`` and ``--set NAME.time_limit=T``: how one formulation of a comparison
#: is run.
RUN_OPTIONS = {"solver": Option("solver", "choice", None, choices=("any",)),
               "time_limit": Option("time_limit", "float", None, minimum=0.0, open_min=True)}


def _per_formulation(entries) -> dict:
    """``--set NAME.KEY=VALUE`` entries as {name: {key: value}}, each value parsed by its table."""
    from .registry import formulation_options
    from .settings import SETTINGS_TABLE

    out: dict = {}
    for entry in entries:
        target, sep, text = entry.partition("=")
        name, dot, key = target.partition(".")
        if not (sep and dot and name and key):
            raise InputError(f"--set {entry!r}: expected NAME.KEY=VALUE, e.g. vs3vm.balance=none")
        key = key.replace("-", "_")
        option = SETTINGS_TABLE.get(key) or formulation_options(name).get(key) \
            or RUN_OPTIONS.get(key)
        if option is None:
            raise InputError(f"--set {entry!r}: {key!r} is neither a setting nor an option of "
                             f"{name}")
        try:
            value = option.parse(text)
        except argparse.ArgumentTypeError as exc:
            raise InputError(f"--set {entry!r}: {exc}") from None
        if key in out.setdefault(name, {}):
            raise InputError(f"--set gives {name}.{key} twice")
        out[name][key] = value
    return out


def _data(args):
    """The instance (scaled when asked) and the file's settings."""
    from .settings import load_instance

    instance, settings = load_instance(args.data, unlabeled=args.unlabeled_marker)
    if args.scale:
        from .scaling import scale_instance

        instance = scale_instance(instance, args.scale)
    return instance, settings


def _started(args) -> Optional[float]:
    """When the command began (``time.perf_counter()``): its time limit counts from there, so
    that reading the data, scaling it and checking the input count too."""
    return getattr(args, "started", None)


def _cmd_solve(args, out) -> int:
    from . import api

    instance, settings = _data(args)
    try:
        result = api.solve(instance, args.formulation, settings, solver=args.solver,
                           profile=args.profile, time_limit=args.time_limit,
                           options=_formulation_options(args), verbose=args.verbose,
                           inputs=_inputs(args), started=_started(args), **_overrides(args))
    except Interrupted as exc:
        if exc.result is not None:
            _print_solve(args, out, instance, exc.result)
        raise
    _print_solve(args, out, instance, result)
    return 0


def _print_solve(args, out, instance, result) -> None:
    from . import api

    if args.json:
        print(json.dumps(result.to_dict(primal=args.primal)), file=out)
    else:
        print(_summary(result, api.evaluate(instance, result)), file=out)


def _cmd_compare(args, out) -> int:
    from . import api

    if args.plot:
        from .plots import check_output

        check_output(args.plot)  # before any solve
        check_not_input(args.plot, _inputs(args))
    instance, settings = _data(args)
    names = [n.strip() for n in args.formulations.split(",") if n.strip()]
    try:
        rows = api.compare(instance, names, settings, solver=args.solver, profile=args.profile,
                           time_limit=args.time_limit, options=_formulation_options(args),
                           per_formulation=_per_formulation(args.per_formulation),
                           verbose=args.verbose, inputs=_inputs(args), started=_started(args),
                           **_overrides(args))
    except Interrupted as exc:
        if exc.results:
            _print_compare(args, out, instance, exc.results)
        raise
    if args.plot:
        from .plots import boundaries, save

        save(boundaries(instance, [r for r, _ in rows]), args.plot)
        if not args.quiet:
            print(f"wrote {args.plot}", file=sys.stderr)
    _print_compare(args, out, instance, rows)
    return 0


def _print_compare(args, out, instance, rows) -> None:
    if args.json:
        print(json.dumps([dict(r.to_dict(), **m) for r, m in rows]), file=out)
    else:
        print(_table(rows, instance), file=out)


def _inputs(args) -> list:
    """The files a command reads (the data, the CSV an instance file names, the profile): no
    output may overwrite them."""
    from .settings import instance_files

    files = instance_files(args.data)
    if getattr(args, "profile", None):
        files.append(args.profile)
    return files


def _cmd_export(args, out) -> int:
    from . import api

    check_writable(args.output)  # before loading data: fail fast on a bad path
    check_not_input(args.output, _inputs(args))
    instance, settings = _data(args)
    fmt = api.export(instance, args.formulation, args.output, args.fmt, settings,
                     options=_formulation_options(args), inputs=_inputs(args),
                     **_overrides(args))
    print(f"wrote {args.output} ({fmt})", file=sys.stderr)
    return 0


def _cmd_list(args, out) -> int:
    from .registry import FORMULATIONS, formulation_class
    from .solvers.registry import BACKENDS, unavailable_reason

    print("formulations:", file=out)
    for name in FORMULATIONS:
        cls = formulation_class(name)
        print(f"  {name:<14} {cls.problem_class:<4} {cls.summary}", file=out)
    print("solvers:", file=out)
    for name, classes in BACKENDS.items():
        states = {}
        for cls in classes:
            reason = unavailable_reason(name, cls)
            states.setdefault("installed" if reason is None else f"unavailable: {reason}",
                              []).append(cls)
        for state, which in states.items():
            print(f"  {name:<14} {','.join(which):<14} {state}", file=out)
    return 0


def _fmt(value, spec=".6g"):
    return "-" if value is None else format(value, spec)


def _summary(result, metrics) -> str:
    lines = [f"formulation  {result.formulation}", f"solver       {result.solver}",
             f"status       {result.status}", f"objective    {_fmt(result.objective)}",
             f"lower bound  {_fmt(result.lower_bound)}", f"gap          {_fmt(result.gap, '.2%')}",
             f"seconds      {result.seconds:.3f}"]
    if result.iterations is not None:
        lines.append(f"iterations   {result.iterations}")
    if result.nodes is not None:
        lines.append(f"nodes        {result.nodes}")
    if metrics["error"] is not None:
        lines.append(f"error        {metrics['error']:.2%}")
    if metrics["auc"] is not None:
        lines.append(f"ROC AUC      {metrics['auc']:.4f}")
    if result.message:
        lines.append(f"message      {result.message}")
    return "\n".join(lines)


def _table(rows, instance) -> str:
    from tabulate import tabulate

    header = ["formulation", "solver", "status", "objective", "lower bound", "gap", "error",
              "ROC AUC", "seconds"]
    body = [[r.formulation, r.solver, r.status, _fmt(r.objective), _fmt(r.lower_bound),
             _fmt(r.gap, ".2%"), _fmt(m["error"], ".2%"), _fmt(m["auc"], ".4f"),
             f"{r.seconds:.3f}"] for r, m in rows]
    title = f"{instance.name}: n = {instance.n}, labeled = {instance.l}, unlabeled = {instance.u}"
    lines = [title, tabulate(body, headers=header, disable_numparse=True)]
    for r, m in rows:
        if r.status == "optimal" and r.labels is not None:
            lines.append(_proved(r, m))
    return "\n".join(lines)


def _proved(result, metrics, width: int = 72) -> str:
    """Two or more lines naming a labeling proved optimal: who, its value, and the labels."""
    error = "" if metrics["error"] is None else f", error {metrics['error']:.2%}"
    signs = "".join("+" if v > 0 else "-" for v in result.labels)
    head = (f"proved optimal by {result.formulation}: objective {_fmt(result.objective)} = "
            f"lower bound{error}; labels of the unlabeled rows (file order):")
    body = ["  " + signs[i:i + width] for i in range(0, len(signs), width)]
    return "\n".join([head, *body])


def _cmd_dataset(args, out) -> int:
    from .loaders import DATASETS, load_dataset

    if args.name is None:
        for name, text in DATASETS.items():
            print(f"  {name:<14} {text}", file=out)
        return 0
    if not args.output:
        raise InputError("give -o FILE to write the data set")
    check_writable(args.output)
    fraction = args.labeled_fraction
    if fraction is None and args.n_labeled is None and not args.all_labeled:
        fraction = DEFAULT_LABELED_FRACTION
    instance = load_dataset(args.name, labeled_fraction=fraction, n_labeled=args.n_labeled,
                            seed=args.seed, scale=args.scale)
    with atomic_output(args.output, suffix=".csv") as tmp:
        instance.to_csv(tmp)
    if args.all_labeled:
        how = "every row labeled"
    elif args.n_labeled is not None:
        how = f"{args.n_labeled} labeled rows drawn with seed {args.seed}"
    else:
        how = f"labeled fraction {fraction:g} of each class, seed {args.seed}"
    print(f"wrote {args.output}: n = {instance.n}, p = {instance.p}, labeled = {instance.l}, "
          f"unlabeled = {instance.u} ({how})", file=sys.stderr)
    return 0


def _cmd_bench(args, out) -> int:
    from .suite import Progress, ResultsFiles, read_suite, run_suite, summary

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs must be >= 1, got {args.jobs}")
    if args.jobs is not None and args.scheduler:
        raise InputError("--jobs and --scheduler exclude each other (the cluster has its workers)")
    suite = read_suite(args.suite, args.output)
    if args.list_runs:
        done = {r["run"]: r["status"] for r in ResultsFiles(suite.output, suite.name).read()}
        for run in suite.runs:
            print(f"{done.get(run.key, 'todo'):<10} {run.key}", file=out)
        return 0
    progress = Progress(len(suite.runs), quiet=args.quiet)
    records = run_suite(suite, jobs=args.jobs, scheduler=args.scheduler,
                        retry_errors=args.retry_errors, progress=progress)
    title = f"suite {suite.name}: {len(records)} runs"
    print(title, file=out)
    print(summary(records), file=out)
    if not args.quiet:
        print(f"results in {suite.output}.jsonl and .csv", file=sys.stderr)
    return 0


def _cmd_plot(args, out) -> int:
    from . import plots

    plots.check_output(args.output)
    if args.kind in ("profile", "gap"):
        from .suite import read_records

        records = read_records(args.results)
        if args.kind == "profile":
            solved = tuple(s.strip() for s in args.solved.split(",") if s.strip())
            from .solvers.results import STATUSES

            bad = [s for s in solved if s not in STATUSES]
            if bad:
                raise InputError(f"--solved: unknown status {bad[0]!r} (statuses: "
                                 f"{', '.join(STATUSES)})")
            figure = plots.performance_profile(records, solved, args.title)
        else:
            figure = plots.gap_bars(records, args.title)
    else:
        from . import api

        instance, settings = _data(args)
        names = [n.strip() for n in args.formulations.split(",") if n.strip()]
        if args.kind == "boundary" and instance.p != 2:
            raise InputError(f"a boundary picture needs 2 features, {instance.name} has "
                             f"{instance.p}")
        rows = api.compare(instance, names, settings, solver=args.solver, profile=args.profile,
                           time_limit=args.time_limit, options=_formulation_options(args),
                           per_formulation=_per_formulation(args.per_formulation),
                           verbose=args.verbose, started=_started(args), **_overrides(args))
        results = [r for r, _ in rows]
        figure = (plots.boundaries(instance, results) if args.kind == "boundary"
                  else plots.search_trace(results))
        print(_table(rows, instance), file=out)
    plots.save(figure, args.output)
    if not getattr(args, "quiet", False):
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _cmd_select(args, out) -> int:
    from .selection import select_parameters

    if args.output is not None:
        check_writable(args.output)
    instance, _ = _data(args)
    chosen = select_parameters(instance, folds=args.folds)
    if args.output is not None:
        _write_selected(args, chosen)
    if args.json:
        print(json.dumps({**chosen.settings(), "accuracy": chosen.accuracy,
                          "flags": chosen.flags()}), file=out)
    else:
        accuracy = ", ".join(f"{k} {acc:.4f} at C = {c:.6g}" for k, (acc, c)
                             in chosen.accuracy.items())
        print(f"cross-validated accuracy: {accuracy}", file=out)
        print(chosen.flags(), file=out)
    return 0


def _write_selected(args, chosen) -> None:
    """An instance file naming the same data with the selected settings."""
    from .resources import shipped_instance

    data = args.data
    if not os.path.isfile(data):
        data = str(shipped_instance(data))
    if data.lower().endswith(".toml"):
        import tomllib

        with open(data, "rb") as fh:
            spec = tomllib.load(fh)
        data = os.path.join(os.path.dirname(os.path.abspath(data)), spec["data"])
    target = os.path.relpath(os.path.abspath(data), os.path.dirname(os.path.abspath(args.output)))
    lines = [f'data = "{target}"',
             "# SDP-S3VM's problem: kernel and C by s3vm select, C* = C l/u, mean balance"]
    for key, value in chosen.settings().items():
        text = (str(value).lower() if isinstance(value, bool) else f'"{value}"'
                if isinstance(value, str) else repr(float(value)))
        lines.append(f"{key} = {text}")
    with atomic_output(args.output, suffix=".toml") as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")


COMMANDS = {"solve": _cmd_solve, "select": _cmd_select, "bench": _cmd_bench, "plot": _cmd_plot, "compare": _cmd_compare, "export": _cmd_export,
            "list": _cmd_list, "dataset": _cmd_dataset}


class _StderrLog(logging.Handler):
    """Drivers' log lines on stderr, as a MIP solver prints them.

    Records marked ``progress`` are a status line redrawn in place on a terminal and dropped
    elsewhere, so a log file or a pipe gets only the periodic lines.
    """

    def __init__(self, stream):
        super().__init__(logging.INFO)
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.redrawn = False

    def emit(self, record):
        try:
            text = record.getMessage()
            if getattr(record, "progress", False):
                if self.tty:
                    self.stream.write("\r\033[K" + text)
                    self.stream.flush()
                    self.redrawn = True
                return
            if self.redrawn:
                self.stream.write("\r\033[K")
                self.redrawn = False
            self.stream.write(text + "\n")
            self.stream.flush()
        except Exception:  # a log line must never end a solve
            self.handleError(record)

    def close(self):
        if self.redrawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
        super().close()


def _configure_logging(args):
    """Route the package's log lines to stderr unless --quiet; returns the handler to remove."""
    if getattr(args, "quiet", True):
        return None
    handler = _StderrLog(sys.stderr)
    logger = logging.getLogger("s3vm")
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    return handler


#: Whether the last command solved under a time limit (:func:`console_main` then exits at
#: once; not ``bench``, whose worker processes are ended at the interpreter's exit).
_TIMED = [False]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``s3vm`` console script; returns the exit status.

    Standard output carries only the command's output: while a command runs, whatever else
    reaches file descriptor 1 (solver libraries print from C) goes to the null device, or to
    stderr with ``--verbose``. Python warnings (numpy's, the solvers') are shown with
    ``--verbose`` only: a message of ours is one line. SIGTERM, like Ctrl-C, stops a solve, which
    prints its best result so far; the status is then 128 + the signal number.
    """
    handler = None
    try:
        with signals_interrupt(), warnings.catch_warnings():
            try:
                args = build_parser().parse_args(argv)
            except SystemExit as exc:  # --help and --version print and stop: a success
                return int(exc.code or 0)
            # The time limit counts from here, reading the data included; not building the
            # parser, which imports the formulations' libraries (as a solver library's import,
            # once per process, seconds on a loaded machine, beyond any clock's reach).
            args.started = time.perf_counter()
            _TIMED[0] = (args.command in ("solve", "compare", "plot")
                         and getattr(args, "time_limit", None) is not None)
            if not getattr(args, "verbose", False):
                warnings.simplefilter("ignore")
            handler = _configure_logging(args)
            quiet = getattr(args, "quiet", False) and not getattr(args, "verbose", False)
            with own_stdout(native_to_stderr=getattr(args, "verbose", False)) as out, \
                    quiet_stderr(quiet):
                try:
                    status = COMMANDS[args.command](args, out)
                finally:
                    out.flush()  # a closed pipe shows here, not at interpreter exit
            return status
    except BrokenPipeError:
        # The reader of stdout went away (`s3vm ... | head`): stop quietly, as `cat` would.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141  # 128 + SIGPIPE, what the shell reports for a tool killed by the pipe
    except S3VMError as exc:
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(f"{PROG}: interrupted by {exc.name}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted by SIGINT", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not the user's fault: one line unless debugging
        if os.environ.get("S3VM_DEBUG"):
            raise
        print(f"{PROG}: internal error: {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
        return 1
    finally:
        if handler is not None:
            logging.getLogger("s3vm").removeHandler(handler)
            handler.close()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def console_main() -> None:
    """The console script: :func:`main` with each solve in a child process, then exit. When a
    solve step that could not be cut short was left running in a thread (a time limit or a
    signal), the process ends at once, after its output is flushed and no temporary file is
    left, instead of waiting for the step; so does a command run with a time limit, whose
    caller waits on the wall clock (tearing down the solver libraries' modules at exit took
    4.3 s on a machine at load 15, against 0.35 s for ``os._exit``)."""
    # Each solve in a child process (Linux): a library that holds the GIL for seconds cannot
    # make the time limit or a signal wait, and running out of memory ends the solve, not the
    # program. S3VM_ISOLATE=0 keeps solves in a thread of this process.
    set_isolation(os.environ.get("S3VM_ISOLATE", "1") != "0")
    status = main()
    if abandoned_workers() or _TIMED[0]:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        remove_temporary_files()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    console_main()
