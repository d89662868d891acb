"""``s3vm select DATA``: kernel and C as SDP-S3VM chooses them (Piccialli, Schwiddessen and
Sudoso 2024), printed as the settings of their problem, optionally written as an instance file."""

from __future__ import annotations

import json
import os
import sys
import tomllib

from s3vm.cli.parser import PROG, inputs, number, read_data, seed
from s3vm.data.resources import shipped_instance
from s3vm.solvers.runtime.files import atomic_output, check_not_input, check_writable, toml_string


def add_parser(sub) -> None:
    p = sub.add_parser("select", help="choose kernel and C as SDP-S3VM does (10-fold "
                                      "cross-validation on the labeled points) and print the "
                                      "settings of their problem (C* = C l/u, mean balance)")
    p.add_argument("data", help="CSV data file, TOML instance file, or a shipped instance name")
    p.add_argument("--folds", type=int, default=10, help="cross-validation folds (default 10)")
    p.add_argument("--seed", type=seed, default=0,
                   help="shuffle the labeled points with this seed before the folds, as their "
                        "code does (default 0)")
    p.add_argument("--file-order", action="store_true",
                   help="folds over the labeled points in file order instead")
    p.add_argument("--convention", choices=("paper", "code"), default="paper",
                   help="paper: their parameters.txt, C* = C l/u; code: their code's defaults, "
                        "C* = 0.5 C l/u and the product rows (--mean-products) (default paper)")
    p.add_argument("--unlabeled-marker", dest="unlabeled_marker", type=number,
                   help="the label that marks an unlabeled row in a LIBSVM file")
    p.add_argument("--scale", choices=("standard", "minmax"),
                   help="scale features before selecting (off by default)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-o", "--output", metavar="FILE.toml",
                   help="also write an instance file with the chosen settings")


def run(args, out) -> int:
    if args.output is not None:
        check_writable(args.output)
        check_not_input(args.output, inputs(args))
    instance, _ = read_data(args)
    if args.output is not None:
        toml_string(_data_target(args))  # a name TOML cannot carry: refused before the work
    # s3vm.selection imports scipy.optimize (0.4 to 0.8 s at load 1 to 3): imported here, not
    # when the parser of every command is built.
    from s3vm.selection import select_parameters
    chosen = select_parameters(instance, folds=args.folds,
                               seed=None if args.file_order else args.seed,
                               convention=args.convention)
    if chosen.folds < args.folds:
        print(f"{PROG}: note: {chosen.folds} folds instead of {args.folds}: the smaller class "
              f"has {chosen.folds} labeled points", file=sys.stderr)
    note = chosen.edge_note()
    if note is not None:
        print(f"{PROG}: warning: {note}", file=sys.stderr)
    if args.output is not None:
        _write_selected(args, chosen)
        print(f"wrote {args.output}", file=sys.stderr)
    if args.json:
        print(json.dumps({**chosen.settings(), "options": chosen.options(),
                          "convention": chosen.convention, "seed": chosen.seed,
                          "accuracy": chosen.accuracy, "folds": chosen.folds,
                          "flags": chosen.flags()}), file=out)
    else:
        accuracy = ", ".join(f"{k} {acc:.4f} at C = {c:.6g}" for k, (acc, c)
                             in chosen.accuracy.items())
        print(f"cross-validated accuracy: {accuracy}", file=out)
        print(chosen.flags(), file=out)
    return 0


def _data_target(args) -> str:
    """The data file the written instance file names, relative to it."""
    data = args.data
    if not os.path.isfile(data):
        data = str(shipped_instance(data))
    if data.lower().endswith(".toml"):
        with open(data, "rb") as fh:
            spec = tomllib.load(fh)
        data = os.path.join(os.path.dirname(os.path.abspath(data)), spec["data"])
    return os.path.relpath(os.path.abspath(data), os.path.dirname(os.path.abspath(args.output)))


def _write_selected(args, chosen) -> None:
    """An instance file naming the same data with the selected settings (strings escaped as
    TOML's basic strings: a quote or a backslash in the path reads back as it is)."""
    target = _data_target(args)
    factor = "" if chosen.convention == "paper" else "0.5 "
    lines = [f"data = {toml_string(target)}",
             f"# SDP-S3VM's problem ({chosen.convention} convention): kernel and C by s3vm "
             f"select, C* = {factor}C l/u, mean balance"]
    if chosen.products:
        lines.append("# their code's product rows: solve with bb-sdp --mean-products")
    for key, value in chosen.settings().items():
        text = (str(value).lower() if isinstance(value, bool) else toml_string(value)
                if isinstance(value, str) else repr(float(value)))
        lines.append(f"{key} = {text}")
    with atomic_output(args.output, suffix=".toml") as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
