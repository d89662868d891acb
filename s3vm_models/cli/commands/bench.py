"""``s3vm bench SUITE.toml``: run a benchmark suite (docs/bench.md)."""

from __future__ import annotations

import sys

from s3vm.bench.execution import Progress, run_suite
from s3vm.bench.results import ResultsFiles, summary
from s3vm.bench.spec import read_suite
from s3vm.solvers.errors import InputError


def add_parser(sub) -> None:
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


def run(args, out) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs must be >= 1, got {args.jobs}")
    if args.jobs is not None and args.scheduler:
        raise InputError("--jobs and --scheduler exclude each other (the cluster has its workers)")
    suite = read_suite(args.suite, args.output)
    if args.list_runs:
        done = {r["run"]: r["status"] for r in ResultsFiles(suite.output, suite.name).read()}
        for item in suite.runs:
            print(f"{done.get(item.key, 'todo'):<10} {item.key}", file=out)
        return 0
    progress = Progress(len(suite.runs), quiet=args.quiet)
    records = run_suite(suite, jobs=args.jobs, scheduler=args.scheduler,
                        retry_errors=args.retry_errors, progress=progress)
    print(f"suite {suite.name}: {len(records)} runs", file=out)
    print(summary(records), file=out)
    if not args.quiet:
        print(f"results in {suite.output}.jsonl and .csv", file=sys.stderr)
    return 0
