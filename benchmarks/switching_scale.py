"""Label switching at scale: ``switching`` (the estimator's fast path) on two moons of growing
size, rbf kernel, through :func:`s3vm.solve`.

Each size n: ``two_moons(5, n // 2 - 5, seed)`` (5 labeled points a moon), rbf sigma = 0.5,
C = C* = 10, the count balance at the labeled ratio (past 1,000 points every retraining runs in the
primal of a 500-landmark Nystroem factor, so nothing n x n is formed). One line of JSON per run
(the result's clock, the wall and CPU seconds, the error on the unlabeled points, J, the load at
its start), after a header line with the date, commit and machine. Run by hand from the
repository root (not part of the test suite); ``benchmarks/pages.py`` prints the table of
docs/benchmarks/scale.md from the file::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/switching_scale.py \\
        --sizes 1000 2000 5000 10000 20000 --seeds 0 1 2 > benchmarks/switching_scale.jsonl
"""

from __future__ import annotations

import argparse
import json
import time

from s3vm.api import evaluate, solve
from s3vm.data.generators import two_moons

import benchmd

SETTING = dict(kernel="rbf", sigma=0.5, C=10.0, C_star=10.0, balance="count")


def run(n: int, seed: int) -> dict:
    instance = two_moons(5, n // 2 - 5, seed=seed)
    load = benchmd.load()
    start, cpu = time.perf_counter(), benchmd.cpu_seconds()
    result = solve(instance, "switching", **SETTING)
    return {"part": "switching", "n": n, "seed": seed, "status": result.status,
            "objective": result.objective, "seconds": result.seconds,
            "wall": time.perf_counter() - start, "cpu": benchmd.cpu_seconds() - cpu,
            "error": evaluate(instance, result)["error"], "load": load}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000, 20000])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)
    print(json.dumps(benchmd.run_header(setting=SETTING)), flush=True)
    for n in args.sizes:
        for seed in args.seeds:
            print(json.dumps(run(n, seed)), flush=True)


if __name__ == "__main__":
    main()
