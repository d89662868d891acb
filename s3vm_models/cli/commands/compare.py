"""``s3vm compare DATA --formulations A,B,...``: solve several formulations, print a table."""

from __future__ import annotations

import sys

from s3vm import api, plots
from s3vm.cli.output import print_compare
from s3vm.cli.parser import (
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
from s3vm.solvers.errors import S3VMError
from s3vm.solvers.runtime.files import check_not_input
from s3vm.solvers.runtime.supervisor import Interrupted


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="solve several formulations and print a table")
    p.add_argument("data")
    p.add_argument("--formulations", required=True, help="comma-separated names")
    add_per_formulation(p)
    add_problem_options(p)
    add_formulation_options(p)
    add_solver_options(p)
    p.add_argument("--json", action="store_true", help="print the list of result objects")
    p.add_argument("--plot", metavar="FILE",
                   help="also draw the decision boundaries side by side (a 2-D instance; "
                        "PNG, SVG or PDF by the extension; needs matplotlib)")


def run(args, out) -> int:
    if args.plot:
        plots.check_output(args.plot)  # before any solve
        check_not_input(args.plot, inputs(args))
    instance, settings = read_data(args)
    names = [n.strip() for n in args.formulations.split(",") if n.strip()]
    try:
        rows = api.compare(instance, names, settings, solver=args.solver, profile=args.profile,
                           time_limit=args.time_limit, options=typed_options(args),
                           per_formulation=per_formulation(args.per_formulation),
                           verbose=args.verbose, inputs=inputs(args), started=started(args),
                           **overrides(args))
    except (Interrupted, S3VMError) as exc:
        # What finished is printed before the error line (or the interruption's): a failure
        # after some formulations were solved does not lose them.
        if getattr(exc, "results", None):
            print_compare(args, out, instance, exc.results)
        raise
    if args.plot:
        plots.save(plots.boundaries(instance, [r for r, _ in rows]), args.plot)
        if not args.quiet:
            print(f"wrote {args.plot}", file=sys.stderr)
    print_compare(args, out, instance, rows)
    return 0
