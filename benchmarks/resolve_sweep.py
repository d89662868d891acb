"""Benchmark: a sweep over C on heart, re-solving one built model (``Built.update(C=...)``, the
``cp.Parameter`` of sdp's low-rank dual: CVXPY re-solves its compiled problem) against building
the model afresh for every C (``s3vm.build(..., C=c).solve()``); docs/models.md, "Change and
re-solve".

``run`` interleaves the two, C by C (the fresh build first), so that both see the same load,
and writes one line per solve: the mode, C, the seconds (the re-solve's first line includes its
one build; each fresh line its own build), the relaxation's value, the certified bound, the
objective and the labels' digest, the solver, the 1-minute load before the solve and the UTC
time::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/resolve_sweep.py \\
        run --out benchmarks/resolve_sweep.jsonl

``table`` prints the table of docs/models.md from such a file::

    .venv/bin/python benchmarks/resolve_sweep.py table benchmarks/resolve_sweep.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

C_VALUES = tuple(float(c) for c in np.geomspace(0.1, 10.0, 10))


def _load() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def _row(mode: str, C: float, seconds: float, result, load: float, data: str,
         formulation: str) -> dict:
    labels = np.asarray(result.labels, dtype=np.int8)
    return {"data": data, "formulation": formulation, "mode": mode, "C": C,
            "seconds": round(seconds, 4), "solver": result.solver, "status": result.status,
            "relaxation_value": result.info.get("relaxation_value"),
            "lower_bound": result.lower_bound, "objective": result.objective,
            "labels": hashlib.sha1(labels.tobytes()).hexdigest()[:12], "load": load,
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def run(out: str, data: str = "heart", formulation: str = "sdp") -> None:
    import s3vm

    built = None
    with open(out, "a") as fh:
        for C in C_VALUES:
            load = _load()
            t0 = time.perf_counter()
            fresh = s3vm.build(data, formulation, C=C).solve()
            row = _row("rebuild", C, time.perf_counter() - t0, fresh, load, data, formulation)
            fh.write(json.dumps(row) + "\n")
            load = _load()
            t0 = time.perf_counter()
            if built is None:
                built = s3vm.build(data, formulation, C=C)
            else:
                assert built.update(C=C) == "in place"
            again = built.solve()
            row = _row("re-solve", C, time.perf_counter() - t0, again, load, data, formulation)
            fh.write(json.dumps(row) + "\n")
            fh.flush()


def table(path: str) -> str:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    by = {(r["mode"], r["C"]): r for r in rows}
    Cs = sorted({r["C"] for r in rows})
    first = rows[0]
    lines = ["| C | rebuild (s) | re-solve (s) | relaxation value, rebuild | re-solve | "
             "same labels |",
             "|---|---|---|---|---|---|"]
    totals = [0.0, 0.0]
    for C in Cs:
        a, b = by[("rebuild", C)], by[("re-solve", C)]
        totals[0] += a["seconds"]
        totals[1] += b["seconds"]
        lines.append(f"| {C:.3g} | {a['seconds']:.2f} | {b['seconds']:.2f} | "
                     f"{a['relaxation_value']:.6g} | {b['relaxation_value']:.6g} | "
                     f"{'yes' if a['labels'] == b['labels'] else 'no'} |")
    lines.append(f"| all {len(Cs)} | {totals[0]:.1f} | {totals[1]:.1f} | | | |")
    loads = [r["load"] for r in rows]
    note = (f"{first['formulation']} on {first['data']}, solver {first['solver']}; load "
            f"{min(loads):.1f} to {max(loads):.1f}; {rows[0]['utc']} to {rows[-1]['utc']}")
    return "\n".join(lines) + "\n\n" + note


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--data", default="heart")
    t = sub.add_parser("table")
    t.add_argument("path")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.out, args.data)
    else:
        print(table(args.path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
