"""Benchmark: the wall clock of ``s3vm solve`` with ``--time-limit`` on wide data.

``make`` writes the CSV of docs/benchmarks/limits.md, "Time limits on wide data": 300 rows and
20,000 features (columns ``label``, ``truth``, ``x0`` ... ``x19999``, 4 decimals: 44 MB), 5
labeled rows per class; the classes differ in the first 10 features (means +1 and -1, unit noise everywhere)::

    .venv/bin/python benchmarks/wide_csv.py make /tmp/wide20k.csv

``run`` solves it with each formulation, one after the other, each as its own ``s3vm`` process
(the console script of this environment), and prints one line per formulation: exit status,
the result's ``seconds`` (the solve's clock), the wall clock measured around the process,
status and message::

    .venv/bin/python benchmarks/wide_csv.py run /tmp/wide20k.csv --time-limit 20 \\
        -f bd-mip bb-mip vs3vm cvs3vm sdp-subspace sdp-lowrank l2-miqp \\
        --out benchmarks/wide_csv-20k.jsonl

Each line also carries the 1-minute load (``/proc/loadavg``) before the command, the time
limit, the result's ``info["seconds_before_step"]`` and the UTC time it started. ``table``
prints the table of docs/benchmarks/limits.md ("Time limits on wide data") from such a
file; tests/test_docs.py holds the page equal to it::

    .venv/bin/python benchmarks/wide_csv.py table benchmarks/wide_csv-20k.jsonl
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


def _load() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def run(path: str, names, time_limit: float, out=None) -> None:
    """Solve ``path`` with each of ``names`` in turn and print one JSON line each (appended to
    ``out`` too when given)."""
    script = os.path.join(os.path.dirname(sys.executable), "s3vm")
    with open(path) as fh:
        columns = fh.readline().count(",") + 1
    megabytes = round(os.path.getsize(path) / 1e6, 1)
    for name in names:
        load = _load()
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        command = [script, "solve", path, "-f", name, "--time-limit", str(time_limit), "-q",
                   "--json"]
        begun = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.monotonic() - begun
        try:
            result = json.loads(done.stdout)
        except ValueError:
            result = {}
        line = json.dumps({"formulation": name, "exit": done.returncode,
                           "clock": result.get("seconds"), "wall": round(wall, 2),
                           "status": result.get("status"),
                           "labels": result.get("labels") is not None,
                           "labels_from": (result.get("info") or {}).get("labels_from"),
                           "step_started": (result.get("info") or {}).get("seconds_before_step"),
                           "time_limit": time_limit, "load": load, "started": started,
                           "columns": columns, "megabytes": megabytes,
                           "message": result.get("message"),
                           "stderr": done.stderr.strip()[-200:]})
        print(line, flush=True)
        if out is not None:
            with open(out, "a") as fh:
                fh.write(line + "\n")


def table(path: str) -> str:
    """The markdown table of the runs in the JSON lines file ``path``."""
    with open(path) as fh:
        runs = [json.loads(line) for line in fh if line.strip()]
    rows = ["| formulation | clock / wall (s) | step started at (s) | load | status, labels | "
            "message |", "|---|---|---|---|---|---|"]
    for r in runs:
        labels = ("supervised SVM's" if r.get("labels_from") == "supervised SVM"
                  else "its own" if r["labels"] else "none")
        step = "-" if r.get("step_started") is None else f"{r['step_started']:.1f}"
        rows.append(f"| {r['formulation']} | {r['clock']:.2f} / {r['wall']:.2f} | {step} | "
                    f"{r['load']:.1f} | {r['status']}, {labels} | "
                    f"{(r.get('message') or '-').split(';')[0]} |")
    return "\n".join(rows) + "\n"


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
    p.add_argument("--out", help="append the JSON lines to this file too")
    p = sub.add_parser("table", help="print the markdown table of a JSON lines file")
    p.add_argument("path")
    args = parser.parse_args()
    if args.command == "make":
        make(args.path, args.rows, args.features)
    elif args.command == "table":
        sys.stdout.write(table(args.path))
    else:
        run(args.path, args.formulations, args.time_limit, args.out)


if __name__ == "__main__":
    main()
