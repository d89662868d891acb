"""``s3vm plot boundary|bnb|profile|gap``: pictures of solves or of a results file."""

from __future__ import annotations

import sys

from s3vm import api, plots
from s3vm.bench.results import read_records
from s3vm.cli.output import table
from s3vm.cli.parser import (
    Parser,
    add_formulation_options,
    add_per_formulation,
    add_problem_options,
    add_solver_options,
    inputs,
    overrides,
    per_formulation,
    read_data,
    started,
    typed_options,
)
from s3vm.solvers.errors import InputError
from s3vm.solvers.results import STATUSES
from s3vm.solvers.runtime.files import check_not_input


def add_parser(sub) -> None:
    p = sub.add_parser("plot", help="draw a picture: decision boundaries, a branch-and-bound "
                                    "search, or a results file's performance profile and gaps")
    kinds = p.add_subparsers(dest="kind", parser_class=Parser, required=True)
    for kind, text in (("boundary", "the decision boundaries of formulations on a 2-D "
                                    "instance, side by side"),
                       ("bnb", "the incumbent and lower bound of branch-and-bound searches "
                               "over time and nodes")):
        q = kinds.add_parser(kind, help=text)
        q.add_argument("data", help="data file, instance file or shipped instance name")
        q.add_argument("--formulations", "-f", required=True, help="comma-separated names")
        add_per_formulation(q)
        q.add_argument("-o", "--output", required=True, help="picture file (.png, .svg, .pdf)")
        add_problem_options(q)
        add_formulation_options(q)
        add_solver_options(q)
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


def run(args, out) -> int:
    plots.check_output(args.output)
    # The picture may not be written over what it is drawn from.
    check_not_input(args.output, [args.results] if args.kind in ("profile", "gap")
                    else inputs(args))
    if args.kind in ("profile", "gap"):
        figure = _from_results(args)
    else:
        instance, settings = read_data(args)
        names = [n.strip() for n in args.formulations.split(",") if n.strip()]
        if args.kind == "boundary" and instance.p != 2:
            raise InputError(f"a boundary picture needs 2 features, {instance.name} has "
                             f"{instance.p}")
        rows = api.compare(instance, names, settings, solver=args.solver, profile=args.profile,
                           time_limit=args.time_limit, options=typed_options(args),
                           per_formulation=per_formulation(args.per_formulation),
                           verbose=args.verbose, started=started(args), **overrides(args))
        results = [r for r, _ in rows]
        figure = (plots.boundaries(instance, results) if args.kind == "boundary"
                  else plots.search_trace(results))
        print(table(rows, instance), file=out)
    plots.save(figure, args.output)
    if not getattr(args, "quiet", False):
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _from_results(args):
    """The performance profile or the gap bars of a results file (the flags checked before
    the file is read)."""
    solved = _solved(args.solved) if args.kind == "profile" else None
    records = read_records(args.results)
    if args.kind == "gap":
        return plots.gap_bars(records, args.title)
    return plots.performance_profile(records, solved, args.title)


def _solved(text: str) -> tuple:
    """The statuses of ``--solved``: at least one, each a status of a result."""
    solved = tuple(s.strip() for s in text.split(",") if s.strip())
    if not solved:
        raise InputError(f"--solved {text!r} names no status: give one or more of "
                         f"{', '.join(STATUSES)}, separated by commas")
    bad = [s for s in solved if s not in STATUSES]
    if bad:
        raise InputError(f"--solved: unknown status {bad[0]!r} (statuses: "
                         f"{', '.join(STATUSES)})")
    return solved
