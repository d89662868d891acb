"""``s3vm export DATA -f NAME -o FILE``: write a formulation's model to a file."""

from __future__ import annotations

import sys
import warnings

from s3vm import api
from s3vm.cli.parser import (
    add_formulation_options,
    add_problem_options,
    inputs,
    overrides,
    read_data,
    typed_options,
)
from s3vm.solvers.errors import InexactFileWarning
from s3vm.solvers.runtime.files import check_not_input, check_writable


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="write a formulation's model to a file")
    p.add_argument("data")
    p.add_argument("--formulation", "-f", required=True)
    p.add_argument("--format", dest="fmt",
                   help="mps or lp (LP/MIP formulations), cbf or ptf (SDP formulations, written "
                        "by MOSEK Fusion; no licence needed); default: the file's extension")
    p.add_argument("-o", "--output", required=True)
    add_problem_options(p)
    add_formulation_options(p)


def run(args, out) -> int:
    check_writable(args.output)  # before loading data: fail fast on a bad path
    check_not_input(args.output, inputs(args))
    instance, settings = read_data(args)
    with warnings.catch_warnings(record=True) as caught:
        # The command line shows Python warnings with --verbose only; this one is about the
        # file just written, and is its own line.
        warnings.simplefilter("always", InexactFileWarning)
        fmt = api.export(instance, args.formulation, args.output, args.fmt, settings,
                         options=typed_options(args), inputs=inputs(args), **overrides(args))
    print(f"wrote {args.output} ({fmt})", file=sys.stderr)
    for warning in caught:
        if issubclass(warning.category, InexactFileWarning):
            print(f"s3vm: warning: {warning.message}", file=sys.stderr)
    return 0
