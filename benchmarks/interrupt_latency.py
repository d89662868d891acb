"""Benchmark: the seconds from SIGINT to the exit of ``s3vm solve ... --json``, for every
formulation of the registry, with the signal sent while the model is built and while it is
solved.

``run`` starts each formulation on ``heart`` (rbf where the formulation takes a kernel), reads
its progress lines (``S3VM_PROGRESS_SECONDS=0.05``: the phase the solve reports, whatever the
load) and sends SIGINT at the first line of the phase asked for: ``build`` (the phase a solve
starts in, "building ...", "setting up ...", "starting heuristic") or ``solve`` (the first
other phase: a solver at work, a branch and bound, an SDP). One line per run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/interrupt_latency.py \\
        run --label after --out benchmarks/interrupt_latency.jsonl

Each line carries the formulation, the phase asked for and the phase seen when the signal went,
the seconds from the signal to the exit, the exit status, the result's status, whether it has
labels, an objective and decision values, the 1-minute load before the run and the UTC time.
A run whose solve finished before the phase came says so (``"signalled": false``).

``table`` prints the table of docs/benchmarks/limits.md ("Interrupts") from such a file, one
row per formulation and phase, a column per label::

    .venv/bin/python benchmarks/interrupt_latency.py table benchmarks/interrupt_latency.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

PROGRESS = re.compile(r"^[\w-]+: \d+ s, (?P<phase>.+?), (?:\d+ \w+, )*incumbent \S+, bound \S+$")
BUILD_PHASES = ("building", "setting up", "starting heuristic")


def _load() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def _command() -> list:
    script = os.path.join(os.path.dirname(sys.executable), "s3vm")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "s3vm.cli"]


def is_build(phase: str) -> bool:
    """Whether a progress line's phase is one a solve starts in (its model being built)."""
    return phase.startswith(BUILD_PHASES)


def one(name: str, kernel: str, phase: str, data: str = "heart", timeout: float = 300) -> dict:
    """Run one formulation and signal it at the first progress line of ``phase``."""
    load = _load()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    env = dict(os.environ, S3VM_PROGRESS_SECONDS="0.05")
    args = ["solve", data, "-f", name, "--kernel", kernel, "--json"]
    proc = subprocess.Popen(_command() + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    out: list = []
    seen: dict = {}
    sent = threading.Event()

    def read_stderr():
        for line in proc.stderr:
            match = PROGRESS.match(line.rstrip("\n"))
            if match is None or sent.is_set():
                continue
            now_phase = match.group("phase")
            if is_build(now_phase) == (phase == "build"):
                seen["phase"], seen["at"] = now_phase, time.perf_counter()
                proc.send_signal(signal.SIGINT)
                sent.set()

    def read_stdout():
        out.append(proc.stdout.read())

    readers = [threading.Thread(target=read_stderr, daemon=True),
               threading.Thread(target=read_stdout, daemon=True)]
    for reader in readers:
        reader.start()
    proc.wait(timeout=timeout)
    ended = time.perf_counter()
    for reader in readers:
        reader.join(5)
    row = {"formulation": name, "kernel": kernel, "data": data, "asked": phase,
           "signalled": sent.is_set(), "phase": seen.get("phase"),
           "after_signal": round(ended - seen["at"], 3) if sent.is_set() else None,
           "exit": proc.returncode, "load": load, "utc": started}
    try:
        result = json.loads(out[0]) if out and out[0].strip() else None
    except ValueError:
        result = None
    if result is not None:
        row.update({"status": result.get("status"),
                    "labels": result.get("labels") is not None,
                    "objective": result.get("objective"),
                    "decision_values": result.get("decision_values") is not None,
                    "message": result.get("message")})
    return row


def run(args) -> None:
    from s3vm.core.registry import formulation_class, formulation_names

    names = args.formulations or formulation_names()
    with open(args.out, "a") if args.out else open(os.devnull, "w") as fh:
        for name in names:
            fixed = "kernel" in formulation_class(name).settings_fixed
            kernel = "linear" if fixed else "rbf"
            for phase in args.phases:
                row = one(name, kernel, phase, data=args.data)
                row["label"] = args.label
                line = json.dumps(row)
                print(line, flush=True)
                fh.write(line + "\n")
                fh.flush()


def table(args) -> None:
    rows = [json.loads(line) for line in open(args.file) if line.strip()]
    labels = list(dict.fromkeys(r["label"] for r in rows))
    keys = list(dict.fromkeys((r["formulation"], r["asked"]) for r in rows))
    loads = {label: [r["load"] for r in rows if r["label"] == label] for label in labels}
    head = "| formulation | signal during | " + " | ".join(
        f"{label}: s to exit (exit, status, objective)" for label in labels) + " |"
    print(head)
    print("|" + "---|" * (2 + len(labels)))
    for name, phase in keys:
        cells = []
        for label in labels:
            found = [r for r in rows if r["label"] == label and r["formulation"] == name
                     and r["asked"] == phase]
            if not found:
                cells.append("")
                continue
            r = found[-1]
            if not r["signalled"]:
                cells.append(f"finished first ({r.get('status')})")
                continue
            objective = r.get("objective")
            has = "labels" if r.get("labels") else "no labels"
            value = "-" if objective is None else f"{objective:.6g}"
            cells.append(f"{r['after_signal']:.2f} ({r['exit']}, {r.get('status')}, {has}, "
                         f"{value}; {r['phase']})")
        print(f"| {name} | {phase} | " + " | ".join(cells) + " |")
    print()
    print("Load (1 minute) before the runs: " + "; ".join(
        f"{label} {min(v):.1f}-{max(v):.1f}" for label, v in loads.items()))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run")
    p.add_argument("-f", "--formulations", nargs="*")
    p.add_argument("--phases", nargs="*", default=["build", "solve"],
                   choices=["build", "solve"])
    p.add_argument("--data", default="heart")
    p.add_argument("--label", required=True, help="the column this run fills (before, after)")
    p.add_argument("--out")
    p.set_defaults(fn=run)
    p = sub.add_parser("table")
    p.add_argument("file")
    p.set_defaults(fn=table)
    args = parser.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()
