"""Benchmark: how many solves in a row one Python process survives, per formulation.

A notebook, a grid search over ``S3VMClassifier`` or a study calls ``s3vm.solve`` in a loop in
one process; each call runs its solve in a fresh thread (the supervisor's worker). ``run``
starts one child process per formulation that solves ``blobs_small`` (or ``--data``) ``--count``
times in a row through the Python API and prints a line after each; the parent counts the
solves that answered before the child ended, and keeps how it ended (its exit status or the
signal that killed it, the last line it wrote on stderr), the statuses it answered and its
peak resident memory after the first and the last solve (a leak shows as a growth). One JSON line
per formulation and solver::

    .venv/bin/python benchmarks/solve_loop.py run --count 1000 --out benchmarks/solve_loop.jsonl
    .venv/bin/python benchmarks/solve_loop.py run l2-miqp --count 1000 --label e49d125 \\
        --out benchmarks/solve_loop.jsonl      # at that commit: the crash this measured

``run`` with no names takes every formulation of the registry (each on its default solver) and
bd-mip and bb-mip on SCIP. Each line carries the commit (``git rev-parse --short HEAD``, with
``+`` when the package's files differ from it), the label, the 1-minute load before and after,
the UTC time and the seconds the loop took.

``table`` prints the table of docs/reliability.md (section "Long-lived processes") from such a
file, a row per line (the solver "default" is the formulation's own, the code the commit)::

    .venv/bin/python benchmarks/solve_loop.py table benchmarks/solve_loop.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The child: ``count`` solves of one formulation, a line after each (index, status, resident
#: kilobytes at its peak so far), flushed at once so that a crash loses none.
CHILD = r"""
import resource, sys
import s3vm
data, name, solver, count = sys.argv[1], sys.argv[2], sys.argv[3] or None, int(sys.argv[4])
for i in range(count):
    result = s3vm.solve(data, name, solver=solver)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(i, result.status, rss, flush=True)
"""

#: Beside the registry's names on their default solvers: the MIP formulations on SCIP.
EXTRA = (("bd-mip", "scip"), ("bb-mip", "scip"))


def _load() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def _commit() -> str:
    def git(*args) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)

    head = git("rev-parse", "--short", "HEAD").stdout.strip() or "unknown"
    changed = git("diff", "--name-only", "HEAD", "--", "solvers", "s3vm_models").stdout.strip()
    return head + ("+" if changed else "")


def one(name: str, solver: str, count: int, data: str, label: str) -> dict:
    """``count`` solves of ``name`` in one child process; what it survived."""
    load, start = _load(), time.perf_counter()
    child = subprocess.Popen([sys.executable, "-X", "faulthandler", "-c", CHILD, data, name,
                              solver or "", str(count)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=ROOT)
    statuses: collections.Counter = collections.Counter()
    rss = []
    for line in child.stdout:
        _, status, kb = line.split()
        statuses[status] += 1
        rss.append(int(kb))
    err = child.stderr.read()
    code = child.wait()
    lines = [line for line in err.splitlines() if line.strip()]
    fatal = next((line for line in lines if line.startswith("Fatal Python error")), None)
    return {"formulation": name, "solver": solver or "default", "data": data, "count": count,
            "survived": sum(statuses.values()), "exit": code,
            "ended_by": fatal or (lines[-1][:200] if code and lines else None),
            "statuses": dict(statuses),
            "peak_mb_first": round(rss[0] / 1024, 1) if rss else None,
            "peak_mb_last": round(rss[-1] / 1024, 1) if rss else None,
            "seconds": round(time.perf_counter() - start, 1), "load": load,
            "load_after": _load(), "commit": _commit(), "label": label,
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def run(args) -> None:
    if args.names:
        pairs = [(name, args.solver) for name in args.names]
    else:
        from s3vm.core.registry import formulation_names

        pairs = [(name, None) for name in formulation_names()] + list(EXTRA)
    for name, solver in pairs:
        row = one(name, solver, args.count, args.data, args.label)
        with open(args.out, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        print(f"{name} ({row['solver']}): {row['survived']} of {row['count']} in "
              f"{row['seconds']} s, exit {row['exit']}", file=sys.stderr, flush=True)


def rows(path: str) -> list:
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def table(args) -> None:
    print("| formulation | solver | code | solves survived | ended | statuses | "
          "peak memory after the first, last solve | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows(args.path):
        ended = "all answered" if row["exit"] == 0 else (
            "segmentation fault" if row["exit"] == -11 else f"exit {row['exit']}")
        statuses = ", ".join(f"{k} {v:,}" for k, v in sorted(row["statuses"].items()))
        memory = "-" if row["peak_mb_first"] is None else \
            f"{row['peak_mb_first']:.0f} MB, {row['peak_mb_last']:.0f} MB"
        print(f"| {row['formulation']} | {row['solver']} | {row['commit']} | "
              f"{row['survived']:,} of {row['count']:,} | {ended} | {statuses or '-'} | "
              f"{memory} | {row['seconds']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="solve each formulation COUNT times in one process")
    r.add_argument("names", nargs="*", help="formulations (default: all, and the SCIP MIPs)")
    r.add_argument("--solver", default=None, help="with names: the solver of each")
    r.add_argument("--count", type=int, default=1000)
    r.add_argument("--data", default="blobs_small")
    r.add_argument("--label", default="after")
    r.add_argument("--out", required=True)
    r.set_defaults(func=run)
    t = sub.add_parser("table", help="the docs' table from a results file")
    t.add_argument("path")
    t.set_defaults(func=table)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
