"""``s3vm solve DATA -f NAME``: solve one formulation and print the result."""

from __future__ import annotations

from s3vm import api
from s3vm.cli.output import print_solve
from s3vm.cli.parser import (
    add_formulation_options,
    add_problem_options,
    add_solver_options,
    inputs,
    overrides,
    read_data,
    started,
    typed_options,
)
from s3vm.solvers.runtime.supervisor import Interrupted, signals_deferred


def add_parser(sub) -> None:
    p = sub.add_parser("solve", help="solve one formulation and print the result")
    p.add_argument("data", help="CSV data file, TOML instance file, or a shipped instance name")
    p.add_argument("--formulation", "-f", required=True)
    add_problem_options(p)
    add_formulation_options(p)
    add_solver_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--primal", action="store_true", help="with --json: include the primal solution")


def run(args, out) -> int:
    instance, settings = read_data(args)
    try:
        result = api.solve(instance, args.formulation, settings, solver=args.solver,
                           profile=args.profile, time_limit=args.time_limit,
                           options=typed_options(args), verbose=args.verbose,
                           inputs=inputs(args), started=started(args), **overrides(args))
    except Interrupted as exc:
        if exc.result is not None:
            with signals_deferred():
                print_solve(args, out, instance, exc.result)
        raise
    # A signal while the answer is written ends the command after it (exit 130), not halfway.
    with signals_deferred():
        print_solve(args, out, instance, result)
    return 0
