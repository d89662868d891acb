"""``s3vm dataset NAME -o FILE``: a bundled data set as a semi-supervised CSV data file."""

from __future__ import annotations

import sys

from s3vm.cli.parser import number, seed
from s3vm.data.loaders import DATASETS, load_dataset
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.files import atomic_output, check_writable

#: The labeled share of ``s3vm dataset`` when none is given (that of the shipped instances).
DEFAULT_LABELED_FRACTION = 0.1


def add_parser(sub) -> None:
    p = sub.add_parser("dataset", help="write a bundled data set as a semi-supervised CSV data "
                                       "file (a seeded labeled subset, the rest unlabeled)")
    p.add_argument("name", nargs="?", help="data set name (omit to list them)")
    p.add_argument("-o", "--output", help="CSV file to write")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--labeled-fraction", dest="labeled_fraction", type=number,
                   help=f"share of each class labeled (seeded, stratified; default "
                        f"{DEFAULT_LABELED_FRACTION})")
    g.add_argument("--n-labeled", dest="n_labeled", type=int, help="number of labeled points")
    g.add_argument("--all-labeled", dest="all_labeled", action="store_true",
                   help="label every row (a supervised file)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the labeled draw (default 0)")
    p.add_argument("--scale", choices=("standard", "minmax"))


def run(args, out) -> int:
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
