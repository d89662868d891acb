"""The ``s3vm`` command line: parse, call the API, print. Nothing else lives here.

Exit status: 0 with a result, 2 on bad input or a missing solver (one line on stderr),
1 on an unexpected internal failure (one line; S3VM_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Optional, Sequence

from .solvers.errors import InputError, S3VMError
from .solvers.files import atomic_output, check_writable

PROG = "s3vm"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2 (argparse prints the whole usage)."""

    def error(self, message):
        raise InputError(message)


def _positives(text: str):
    if text == "truth":
        return "truth"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'truth', got {text!r}") from None


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _add_problem_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("problem (overrides an instance file's settings)")
    g.add_argument("--kernel", choices=("linear", "rbf"))
    g.add_argument("--sigma", type=_number, help="rbf width: k(x,z) = exp(-|x-z|^2/(2 sigma^2))")
    g.add_argument("--C", dest="C", type=_number, help="penalty of labeled losses")
    g.add_argument("--C-star", dest="C_star", type=_number, help="penalty of unlabeled losses")
    g.add_argument("--no-bias", dest="bias", action="store_const", const=False,
                   help="decision function without offset b")
    g.add_argument("--hard-margin", dest="hard_margin", action="store_const", const=True)
    g.add_argument("--balance", choices=("count", "none"))
    g.add_argument("--positives", type=_positives,
                   help="balance count P of unlabeled +1 points, or 'truth'")
    g.add_argument("--mu", type=_number, help="weight of |w|_1 (LP/MIP family)")
    g.add_argument("--nu", type=_number, help="weight of unlabeled losses (LP/MIP family)")
    g.add_argument("--scale", choices=("standard", "minmax"),
                   help="scale features before solving (off by default)")


def _add_solver_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("solver")
    g.add_argument("--solver", help="solver name (see `s3vm list`)")
    g.add_argument("--profile", help="solver profile file (TOML)")
    g.add_argument("--time-limit", dest="time_limit", type=_number, help="seconds")
    g.add_argument("--quiet", "-q", action="store_true",
                   help="no progress or log lines on stderr")


def _add_formulation_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("formulation options (where the formulation takes them)")
    g.add_argument("--max-lps", dest="max_lps", type=int, help="vs3vm/cvs3vm: cap on LPs")
    g.add_argument("--clusters", type=int, help="cvs3vm: k of k-median (default 2)")
    g.add_argument("--label-fraction", dest="label_fraction", type=_number,
                   help="cvs3vm: share of points the oracle labels, in (0, 1] (default 0.10)")
    g.add_argument("--seed", type=int,
                   help="seed of randomised steps (k-median restarts, Nystroem landmarks)")
    g.add_argument("--lp-form", dest="lp_form", choices=("auto", "dual", "primal"),
                   help="LP family: solve the LP dual (auto: when the solver gives duals)")
    g.add_argument("--rounding", choices=("gamma", "eigenvector"),
                   help="SDP family: labels from a column of Gamma or its dominant eigenvector")
    g.add_argument("--dim", type=int,
                   help="sdp-subspace/sdp-lowrank: columns d of the spectral subspace (default 4)")
    g.add_argument("--rank", type=int,
                   help="sdp-lowrank, rbf kernel: Nystroem landmarks r (default 100, at most n)")
    g.add_argument("--form", choices=("bigm", "sos1"),
                   help="l2-miqp: how the unlabeled losses switch with the labels")
    b = p.add_argument_group("branch and bound (bb, bb-mip, bb-sdp)")
    b.add_argument("--node-selection", dest="node_selection",
                   choices=("depth", "best", "best-dive"),
                   help="depth-first (default, as in the seed), best-first, or best-bound with "
                        "diving")
    b.add_argument("--gap", dest="rel_gap", type=_number,
                   help="stop when the relative gap is at most this (default 0: prove optimality)")
    b.add_argument("--abs-gap", dest="abs_gap", type=_number,
                   help="stop when objective - bound is at most this (default 0)")
    b.add_argument("--node-limit", dest="node_limit", type=int, help="stop after this many nodes")
    b.add_argument("--log-every", dest="log_every", type=int,
                   help="a log line every N nodes on stderr (default 1000; 0: none)")
    b.add_argument("--tree", dest="tree_file", help="write the explored tree as GraphML")
    b.add_argument("--heuristic", choices=("switching", "none"),
                   help="bb: starting incumbent from label switching (default) or none")


FORMULATION_OPTIONS = ("max_lps", "clusters", "label_fraction", "seed", "lp_form", "rounding",
                       "dim", "rank", "form", "node_selection", "rel_gap", "abs_gap",
                       "node_limit", "log_every", "tree_file", "heuristic")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Semi-supervised SVMs as mathematical programs.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, required=True)

    p = sub.add_parser("solve", help="solve one formulation and print the result")
    p.add_argument("data", help="CSV data file or TOML instance file")
    p.add_argument("--formulation", "-f", required=True)
    _add_problem_options(p)
    _add_formulation_options(p)
    _add_solver_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--primal", action="store_true", help="with --json: include the primal solution")

    p = sub.add_parser("compare", help="solve several formulations and print a table")
    p.add_argument("data")
    p.add_argument("--formulations", required=True, help="comma-separated names")
    _add_problem_options(p)
    _add_formulation_options(p)
    _add_solver_options(p)
    p.add_argument("--json", action="store_true", help="print the list of result objects")

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

    p = sub.add_parser("dataset", help="write a bundled data set as a CSV data file")
    p.add_argument("name", nargs="?", help="data set name (omit to list them)")
    p.add_argument("-o", "--output", help="CSV file to write")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--labeled-fraction", dest="labeled_fraction", type=_number,
                   help="share of each class labeled (seeded, stratified)")
    g.add_argument("--n-labeled", dest="n_labeled", type=int, help="number of labeled points")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scale", choices=("standard", "minmax"))
    return parser


def _overrides(args) -> dict:
    keys = ("kernel", "sigma", "C", "C_star", "bias", "hard_margin", "balance", "positives",
            "mu", "nu")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def _formulation_options(args) -> dict:
    return {k: getattr(args, k) for k in FORMULATION_OPTIONS if getattr(args, k, None) is not None}


def _data(args):
    """The instance (scaled when asked) and the file's settings."""
    from .settings import load_instance

    instance, settings = load_instance(args.data)
    if args.scale:
        from .scaling import scale_instance

        instance = scale_instance(instance, args.scale)
    return instance, settings


def _cmd_solve(args) -> int:
    from . import api

    instance, settings = _data(args)
    result = api.solve(instance, args.formulation, settings, solver=args.solver,
                       profile=args.profile, time_limit=args.time_limit,
                       options=_formulation_options(args), **_overrides(args))
    if args.json:
        print(json.dumps(result.to_dict(primal=args.primal)))
    else:
        print(_summary(result, api.evaluate(instance, result)))
    return 0


def _cmd_compare(args) -> int:
    from . import api

    instance, settings = _data(args)
    names = [n.strip() for n in args.formulations.split(",") if n.strip()]
    rows = api.compare(instance, names, settings, solver=args.solver, profile=args.profile,
                       time_limit=args.time_limit, options=_formulation_options(args),
                       **_overrides(args))
    if args.json:
        print(json.dumps([dict(r.to_dict(), **m) for r, m in rows]))
    else:
        print(_table(rows, instance))
    return 0


def _cmd_export(args) -> int:
    from . import api

    check_writable(args.output)  # before loading data: fail fast on a bad path
    instance, settings = _data(args)
    fmt = api.export(instance, args.formulation, args.output, args.fmt, settings,
                     options=_formulation_options(args), **_overrides(args))
    print(f"wrote {args.output} ({fmt})", file=sys.stderr)
    return 0


def _cmd_list(args) -> int:
    from .solvers.registry import BACKENDS, unavailable_reason

    from .registry import FORMULATIONS, get_formulation

    print("formulations:")
    for name in FORMULATIONS:
        form = get_formulation(name)
        print(f"  {name:<14} {form.problem_class:<4} {form.summary}")
    print("solvers:")
    for name, classes in BACKENDS.items():
        states = {}
        for cls in classes:
            reason = unavailable_reason(name, cls)
            states.setdefault("installed" if reason is None else f"unavailable: {reason}",
                              []).append(cls)
        for state, which in states.items():
            print(f"  {name:<14} {','.join(which):<14} {state}")
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
    return title + "\n" + tabulate(body, headers=header, disable_numparse=True)


def _cmd_dataset(args) -> int:
    from .loaders import DATASETS, load_dataset

    if args.name is None:
        for name, text in DATASETS.items():
            print(f"  {name:<14} {text}")
        return 0
    if not args.output:
        raise InputError("give -o FILE to write the data set")
    check_writable(args.output)
    instance = load_dataset(args.name, labeled_fraction=args.labeled_fraction,
                            n_labeled=args.n_labeled, seed=args.seed, scale=args.scale)
    with atomic_output(args.output, suffix=".csv") as tmp:
        instance.to_csv(tmp)
    print(f"wrote {args.output}: n = {instance.n}, p = {instance.p}, labeled = {instance.l}",
          file=sys.stderr)
    return 0


COMMANDS = {"solve": _cmd_solve, "compare": _cmd_compare, "export": _cmd_export,
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``s3vm`` console script; returns the exit status."""
    handler = None
    try:
        args = build_parser().parse_args(argv)
        handler = _configure_logging(args)
        status = COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
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
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not the user's fault: one line unless debugging
        if os.environ.get("S3VM_DEBUG"):
            raise
        print(f"{PROG}: internal error: {type(exc).__name__}: {exc}".splitlines()[0],
              file=sys.stderr)
        return 1
    finally:
        if handler is not None:
            logging.getLogger("s3vm").removeHandler(handler)
            handler.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
