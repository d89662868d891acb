"""Benchmark: the wall clock of ``s3vm solve`` with ``--time-limit`` on wide data.

``make`` writes the CSV of docs/benchmarks.md, section "Wide data": 300 rows and 20,000 features
(columns ``label``, ``truth``, ``x0`` ... ``x19999``, 4 decimals: 44 MB), 5 labeled rows per
class; the classes differ in the first 10 features (means +1 and -1, unit noise everywhere)::

    .venv/bin/python benchmarks/wide_csv.py make /tmp/wide20k.csv

``run`` solves it with each formulation, one after the other, each as its own ``s3vm`` process
(the console script of this environment), and prints one line per formulation: exit status,
the result's ``seconds`` (the solve's clock), the wall clock measured around the process,
status and message::

    .venv/bin/python benchmarks/wide_csv.py run /tmp/wide20k.csv --time-limit 20 \\
        -f bd-mip bb-mip vs3vm cvs3vm sdp-subspace sdp-lowrank l2-miqp
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROWS, FEATURES, INFORMATIVE, LABELED_PER_CLASS = 300, 20_000, 10, 5


def make(path: str, rows: int = ROWS, features: int = FEATURES, seed: int = 0) -> None:
    """Write the wide CSV to ``path``."""
    rng = np.random.default_rng(seed)
    truth = np.where(np.arange(rows) % 2 == 0, 1, -1)
    x = rng.standard_normal((rows, features))
    x[:, :INFORMATIVE] += truth[:, None]
    label = np.zeros(rows, dtype=int)
    for cls in (1, -1):
        label[np.flatnonzero(truth == cls)[:LABELED_PER_CLASS]] = cls
    header = ",".join(["label", "truth"] + [f"x{j}" for j in range(features)])
    with open(path, "w") as fh:
        fh.write(header + "\n")
        for i in range(rows):
            fh.write(f"{label[i]},{truth[i]}," + ",".join(f"{v:.4f}" for v in x[i]) + "\n")


def run(path: str, names, time_limit: float) -> None:
    """Solve ``path`` with each of ``names`` in turn and print one JSON line each."""
    script = os.path.join(os.path.dirname(sys.executable), "s3vm")
    for name in names:
        command = [script, "solve", path, "-f", name, "--time-limit", str(time_limit), "-q",
                   "--json"]
        begun = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.monotonic() - begun
        try:
            result = json.loads(done.stdout)
        except ValueError:
            result = {}
        print(json.dumps({"formulation": name, "exit": done.returncode,
                          "clock": result.get("seconds"), "wall": round(wall, 2),
                          "status": result.get("status"),
                          "labels": result.get("labels") is not None,
                          "message": result.get("message"),
                          "stderr": done.stderr.strip()[-200:]}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make", help="write the wide CSV")
    p.add_argument("path")
    p.add_argument("--rows", type=int, default=ROWS)
    p.add_argument("--features", type=int, default=FEATURES)
    p = sub.add_parser("run", help="solve it with each formulation, one at a time")
    p.add_argument("path")
    p.add_argument("--time-limit", type=float, default=20.0)
    p.add_argument("-f", "--formulations", nargs="+", required=True)
    args = parser.parse_args()
    if args.command == "make":
        make(args.path, args.rows, args.features)
    else:
        run(args.path, args.formulations, args.time_limit)


if __name__ == "__main__":
    main()
