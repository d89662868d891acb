"""Benchmark: what ``s3vm solve`` answers to a signal at each moment of its start, at short time
limits, and against the supervised fallback it holds (docs/reliability.md, "Every run answers").

``run`` writes one JSON line per command run, each ``s3vm solve heart -f NAME --json -q`` in a
child process (the console script of this environment), with the last commit that changed the
package's files (``+`` when they differ from it), ``--label``, the 1-minute load and the UTC time:

- ``signals``: SIGINT and SIGTERM in turn at each offset of ``--offsets``, counted from the
  moment the child's console script has its handler (``SigCgt`` of ``/proc/PID/status`` shows
  SIGTERM caught; ``ready`` is that moment from the spawn, the interpreter's own start): the
  exit status, whether stdout held one JSON object, its status, whether it had labels, its
  objective, and the seconds from the signal to the exit;
- ``limits``: each formulation at each ``--limits`` value: the answer's status, labels,
  objective, message and the command's wall clock from the spawn;
- ``never-worse``: l2-miqp and bd-mip at each ``--limits`` value: the answered objective, the
  incumbent it replaced (``info["replaced_objective"]``) and the supervised fallback's own
  objective (computed in this process by ``s3vm.core.pipeline``, for the table).

::

    .venv/bin/python benchmarks/answers.py run signals --out benchmarks/answers.jsonl
    .venv/bin/python benchmarks/answers.py run limits --limits 0.5 1 2 --out benchmarks/answers.jsonl
    .venv/bin/python benchmarks/answers.py run never-worse --limits 2 3 6 12 \\
        --out benchmarks/answers.jsonl
    .venv/bin/python benchmarks/answers.py table signals benchmarks/answers.jsonl

``table KIND FILE`` prints the table of docs/reliability.md for that kind.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
S3VM = os.path.join(os.path.dirname(sys.executable), "s3vm")
OFFSETS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0)
FORMULATIONS = ("rlp", "svm1", "bd-mip", "bb", "bb-mip", "vs3vm", "switching", "cvs3vm", "sdp",
                "bb-sdp", "sdp-subspace", "sdp-lowrank", "l2-miqp", "primal-tsvm")


def _load() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def _commit() -> str:
    """The last commit that changed the package's files (a commit of docs or benchmarks alone
    runs the same code), with ``+`` when the files differ from it."""
    head = subprocess.run(["git", "log", "-1", "--format=%h", "--", "s3vm_models", "solvers"],
                          cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "s3vm_models", "solvers"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return head + ("+" if dirty else "")


def _catches(pid: int, signum: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    except OSError:
        pass
    return False


def _answer(out: bytes) -> dict:
    """The fields of the answer on stdout (``json`` false when it is not one JSON object)."""
    try:
        answer = json.loads(out.decode())
    except ValueError:
        return {"json": False}
    message = answer.get("message") or ""
    return {"json": True, "status": answer.get("status"),
            "labels": answer.get("labels") is not None, "objective": answer.get("objective"),
            "message": message[:200],
            "labels_from": (answer.get("info") or {}).get("labels_from"),
            "replaced_objective": (answer.get("info") or {}).get("replaced_objective"),
            "applied": (answer.get("info") or {}).get("applied")}


def _base(kind: str, label: str) -> dict:
    return {"kind": kind, "code": _commit(), "label": label, "load": _load(),
            "utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}


def run_signals(names, offsets, label, out) -> None:
    for name in names:
        for index, after in enumerate(offsets):
            signum = (signal.SIGINT, signal.SIGTERM)[index % 2]
            record = _base("signals", label)
            spawned = time.perf_counter()
            proc = subprocess.Popen([S3VM, "solve", "heart", "-f", name, "--json", "-q"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            while not _catches(proc.pid, signal.SIGTERM) and proc.poll() is None \
                    and time.perf_counter() - spawned < 30:
                time.sleep(0.001)
            ready = time.perf_counter() - spawned
            time.sleep(after)
            sent = time.perf_counter()
            proc.send_signal(signum)
            stdout, _ = proc.communicate(timeout=120)
            ended = time.perf_counter()
            record.update({"formulation": name, "after": after, "ready": round(ready, 3),
                           "signal": signal.Signals(signum).name, "exit": proc.returncode,
                           "to_exit": round(ended - sent, 3), "empty": not stdout.strip(),
                           **_answer(stdout)})
            _write(out, record)


def run_limits(kind, names, limits, label, out) -> None:
    for limit in limits:
        for name in names:
            record = _base(kind, label)
            spawned = time.perf_counter()
            done = subprocess.run([S3VM, "solve", "heart", "-f", name, "--time-limit",
                                   str(limit), "--json", "-q"], capture_output=True, timeout=600)
            wall = time.perf_counter() - spawned
            record.update({"formulation": name, "limit": limit, "exit": done.returncode,
                           "wall": round(wall, 3), "empty": not done.stdout.strip(),
                           **_answer(done.stdout)})
            if kind == "never-worse":
                record["fallback_objective"] = _fallback_objective(name)
            _write(out, record)


def _fallback_objective(name: str):
    """The supervised fallback's objective on heart, by the package's own functions."""
    from s3vm import api
    from s3vm.core import pipeline
    from s3vm.core.registry import get_formulation

    instance, settings = api.load("heart")
    form = get_formulation(name)
    effective = form.settings_for(settings, {})
    scores = pipeline.supervised_scores(instance, effective)
    return pipeline.fallback_value(form, instance, effective, scores)[0]


def _write(path, record) -> None:
    line = json.dumps(record)
    print(line, flush=True)
    with open(path, "a") as fh:
        fh.write(line + "\n")


# -- tables ---------------------------------------------------------------------------------
def _records(path, kind):
    with open(path) as fh:
        return [r for r in map(json.loads, filter(str.strip, fh)) if r["kind"] == kind]


def _code(r) -> str:
    """The code a record ran: its label when given (a commit's files checked out), else the
    commit."""
    return r.get("label") or r["code"]


def _num(value, spec=".4g") -> str:
    return "-" if value is None else format(value, spec)


def _cell(r) -> str:
    """One answer in a cell: its status, labels or none, objective."""
    if r.get("empty"):
        return "**nothing on stdout**"
    if not r.get("json"):
        return "**not JSON**"
    labels = "labels" if r["labels"] else "no labels"
    objective = f", {_num(r['objective'])}" if r.get("objective") is not None else ""
    return f"{r['status']}, {labels}{objective}"


def _columns(records):
    seen = []
    for r in records:
        key = (_code(r), r["formulation"])
        if key not in seen:
            seen.append(key)
    return seen


def table_signals(path) -> str:
    records = _records(path, "signals")
    columns = _columns(records)
    by = {(_code(r), r["formulation"], r["after"]): r for r in records}
    offsets = sorted({r["after"] for r in records})
    head = ["after the handler (s)"] + [f"{f} at {c}" for c, f in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for after in offsets:
        row = [f"{after:g}"]
        for code, name in columns:
            r = by.get((code, name, after))
            row.append("" if r is None else
                       f"{r['signal']}: {_cell(r)}; exit {r['exit']} after {r['to_exit']:.2f} s")
        lines.append("| " + " | ".join(row) + " |")
    summary = []
    for code, name in columns:
        rs = [r for r in records if (_code(r), r["formulation"]) == (code, name)]
        answered = sum(1 for r in rs if r.get("json"))
        labelled = sum(1 for r in rs if r.get("labels"))
        ready = [r["ready"] for r in rs]
        summary.append(f"{name} at {code}: {answered} of {len(rs)} answered, {labelled} with "
                       f"labels, the handler in place {min(ready):.2f} to {max(ready):.2f} s "
                       f"after the spawn, load {min(r['load'] for r in rs):.1f} to "
                       f"{max(r['load'] for r in rs):.1f}")
    lines.append("")
    lines.append("; ".join(summary) + ".")
    return "\n".join(lines)


def table_limits(path) -> str:
    records = _records(path, "limits")
    columns = []
    for r in records:
        key = (_code(r), r["limit"])
        if key not in columns:
            columns.append(key)
    by = {(_code(r), r["limit"], r["formulation"]): r for r in records}
    names = [n for n in FORMULATIONS if any(r["formulation"] == n for r in records)]
    head = ["formulation"] + [f"{limit:g} s at {code}" for code, limit in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in names:
        row = [name]
        for code, limit in columns:
            r = by.get((code, limit, name))
            if r is None:
                row.append("")
                continue
            wall = f"{r['wall']:.2f} s" + {"within": "", "imports": " (imports past T)",
                                             "over": " (over)"}[_timing(r)]
            row.append(f"{_cell(r)}; {wall}")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    notes = []
    for code, limit in columns:
        rs = [r for r in records if (_code(r), r["limit"]) == (code, limit)]
        bound = 1.05 * limit + 0.5
        timing = [_timing(r) for r in rs]
        notes.append(f"{limit:g} s at {code}: {sum(1 for r in rs if r.get('labels'))} of "
                     f"{len(rs)} with labels, {timing.count('within')} within {bound:.3g} s, "
                     f"{timing.count('imports')} right after a start and imports that alone "
                     "outlasted the limit, "
                     f"{timing.count('over')} over, load {min(r['load'] for r in rs):.1f} to "
                     f"{max(r['load'] for r in rs):.1f}")
    lines.append("; ".join(notes) + ".")
    return "\n".join(lines)


#: The messages of a limit spent before anything was built: reading the data, importing the
#: solver library (docs/reliability.md, "Time limits": no clock cuts an import short).
BEFORE_THE_STEP = ("time limit reached while reading the data",
                   "time limit reached while importing the solver library")


def _timing(r) -> str:
    """``within`` the documented 1.05 T + 0.5 s, past it right after the ``imports`` that alone
    took longer than the limit (the documented exception), or ``over``."""
    if r["wall"] <= 1.05 * r["limit"] + 0.5:
        return "within"
    return "imports" if (r.get("message") or "").startswith(BEFORE_THE_STEP) else "over"


def table_never_worse(path) -> str:
    records = _records(path, "never-worse")
    head = ["formulation", "limit (s)", "code", "answered", "objective", "the step's incumbent",
            "the fallback's objective"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted(records, key=lambda r: (r["formulation"], r["limit"], r["utc"])):
        replaced = r.get("replaced_objective")
        lines.append("| " + " | ".join([
            r["formulation"], f"{r['limit']:g}", _code(r), r.get("status") or "-",
            _num(r.get("objective")),
            (_num(replaced) + " (replaced)") if replaced is not None else "-",
            _num(r.get("fallback_objective"))]) + " |")
    return "\n".join(lines)


TABLES = {"signals": table_signals, "limits": table_limits, "never-worse": table_never_worse}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("kind", choices=sorted(TABLES))
    run.add_argument("names", nargs="*")
    run.add_argument("--offsets", type=float, nargs="+", default=list(OFFSETS))
    run.add_argument("--limits", type=float, nargs="+", default=[0.5, 1, 2])
    run.add_argument("--label", default="")
    run.add_argument("--out", required=True)
    table = sub.add_parser("table")
    table.add_argument("kind", choices=sorted(TABLES))
    table.add_argument("data")
    args = parser.parse_args(argv)
    if args.command == "table":
        print(TABLES[args.kind](args.data))
        return 0
    if args.kind == "signals":
        run_signals(args.names or ["bd-mip"], args.offsets, args.label, args.out)
    elif args.kind == "limits":
        run_limits("limits", args.names or FORMULATIONS, args.limits, args.label, args.out)
    else:
        run_limits("never-worse", args.names or ["l2-miqp", "bd-mip"], args.limits, args.label,
                   args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
