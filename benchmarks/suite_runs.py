"""The test suite's own runs: commands in a fresh clone, with a second suite beside them or not.

A change lands when ``make test`` passes on a fresh clone on a loaded machine (docs/contributing.md).
``run`` does what a reviewer would do by hand: it clones the committed ``HEAD`` of this repository
into a new folder (clone A), and, with ``--beside``, a second one (clone B); runs A's commands
one after the other (stopping at the first that fails) while B runs its own at the same time;
and writes one line per command to the data file::

    .venv/bin/python benchmarks/suite_runs.py run --run "make demo" --run "make test" \\
        --beside "make test" --out benchmarks/suite_runs.jsonl

Each line carries the run's start (``round``: the commands of both clones of one run share
it), the commit, the clone, the command and what ran beside it, the exit status, pytest's counts
and seconds (from its summary line; none for a command that runs no tests), the wall seconds, the
1-minute load at the command's start and end, the UTC times and the machine.
Uncommitted changes are not in the clones: commit first. The clones and their logs
(``<clone>.log``) are left in place when a command fails or with ``--keep``; otherwise they are
removed and only the data lines remain.

``import`` reads the log of a run made by the same steps by hand (a line ``start <date>
<commit> ...``, then for each command ``make <target> rc=<status> <seconds>s load=<1> <5>
<15>`` followed by the last lines of its output, and ``end ...``), as the runs before this
script were logged.

``table`` prints the table of docs/contributing.md ("Suite runs") from such a file::

    .venv/bin/python benchmarks/suite_runs.py table benchmarks/suite_runs.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNT = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)\b")
SECONDS = re.compile(r" in ([\d.]+)s\b")
COUNTED = ("passed", "failed", "skipped", "xfailed", "xpassed", "errors")


def summary_of(output: str) -> dict:
    """pytest's counts and seconds from the last summary line in ``output`` (a line with
    " in <seconds>s" and at least one count); every count None where there is none."""
    for line in reversed(output.splitlines()):
        seconds = SECONDS.search(line)
        counts = COUNT.findall(line)
        if seconds and counts:
            found = {("errors" if kind.startswith("error") else kind): int(n)
                     for n, kind in counts}
            return {**{k: found.get(k, 0) for k in COUNTED},
                    "pytest_seconds": float(seconds.group(1))}
    return {**{k: None for k in COUNTED}, "pytest_seconds": None}


def machine() -> str:
    """The processor's model and the number of cores this process may use."""
    model = "unknown processor"
    try:
        with open("/proc/cpuinfo") as fh:
            model = next(line.split(":", 1)[1].strip() for line in fh
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {len(os.sched_getaffinity(0))} cores"


def utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def clone(source: Path, folder: Path) -> str:
    """Clone ``source``'s committed HEAD into ``folder``; its short commit."""
    subprocess.run(["git", "clone", "-q", str(source), str(folder)], check=True)
    return subprocess.run(["git", "-C", str(folder), "rev-parse", "--short", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.strip()


def run_commands(folder: Path, commands: list[str], base: dict, records: list) -> None:
    """Run ``commands`` in ``folder`` one after the other, each line appended to ``records``;
    stop at the first that fails."""
    log = folder.with_name(folder.name + ".log")
    for command in commands:
        started, load_start = datetime.now(timezone.utc), os.getloadavg()[0]
        tick = time.monotonic()
        done = subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True, text=True)
        wall = time.monotonic() - tick
        with open(log, "a") as fh:
            fh.write(f"$ {command}\n{done.stdout}{done.stderr}")
        records.append({**base, "command": command, "rc": done.returncode,
                        **summary_of(done.stdout + done.stderr), "wall_seconds": round(wall, 1),
                        "load_start": round(load_start, 2),
                        "load_end": round(os.getloadavg()[0], 2), "started": utc(started),
                        "ended": utc(datetime.now(timezone.utc))})
        if done.returncode != 0:
            return


def run(args) -> int:
    place = Path(tempfile.mkdtemp(prefix="s3vm-suite-runs-"))
    clones = {"A": args.run, **({"B": args.beside} if args.beside else {})}
    records: dict[str, list] = {name: [] for name in clones}
    threads, began = [], datetime.now(timezone.utc)
    for name, commands in clones.items():
        commit = clone(ROOT, place / name)
        other = clones.get("B" if name == "A" else "A")
        base = {"round": utc(began), "commit": commit, "clone": name, "beside": " && ".join(other) if other else None,
                "machine": machine()}
        threads.append(threading.Thread(target=run_commands,
                                        args=(place / name, commands, base, records[name])))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with open(args.out, "a") as fh:
        for name in clones:
            for record in records[name]:
                fh.write(json.dumps(record) + "\n")
    failed = [r for rs in records.values() for r in rs if r["rc"] != 0]
    if args.keep or failed:  # a failure's log is what one reads next
        print(f"clones and logs kept in {place}", file=sys.stderr)
    else:
        shutil.rmtree(place, ignore_errors=True)
    return 1 if failed else 0


LOG_START = re.compile(r"^start (\w{3} \w{3} +\d+ [\d:]+ UTC \d{4}) (\w+)")
LOG_COMMAND = re.compile(r"^(make [\w-]+) rc=(\d+) (\d+)s load=([\d.]+)")


def records_of_log(text: str, clone_name: str, beside: str | None, where: str) -> list[dict]:
    """The data lines of a run logged by hand (see the module's notes)."""
    lines = text.splitlines()
    head = LOG_START.match(lines[0])
    if head is None:
        raise ValueError("the log's first line is not 'start <date> <commit> ...'")
    moment = datetime.strptime(" ".join(head.group(1).split()), "%a %b %d %H:%M:%S UTC %Y")
    moment = start = moment.replace(tzinfo=timezone.utc)
    found, current = [], None
    for line in lines[1:]:
        command = LOG_COMMAND.match(line)
        if command:
            wall = float(command.group(3))
            current = {"round": utc(start), "commit": head.group(2), "clone": clone_name, "beside": beside,
                       "machine": where, "command": command.group(1),
                       "rc": int(command.group(2)), "wall_seconds": wall, "load_start": None,
                       "load_end": float(command.group(4)), "started": utc(moment),
                       "ended": utc(moment + timedelta(seconds=wall)), "_tail": []}
            moment += timedelta(seconds=wall)
            found.append(current)
        elif current is not None and not line.startswith("end "):
            current["_tail"].append(line)
    for record in found:
        record.update(summary_of("\n".join(record.pop("_tail"))))
    return found


def import_log(args) -> int:
    beside = " && ".join(args.beside) if args.beside else None
    records = records_of_log(Path(args.log).read_text(), args.clone, beside, args.machine)
    with open(args.out, "a") as fh:
        for record in records:
            fh.write(json.dumps(record) + "\n")
    return 0


def outcome(record: dict) -> str:
    if record["passed"] is None:
        return "exit 0" if record["rc"] == 0 else f"exit {record['rc']}"
    parts = [f"{record['failed']} failed"] if record["failed"] else []
    parts += [f"{record['errors']} errors"] if record["errors"] else []
    parts.append(f"{record['passed']:,} passed")
    return ("green, " if record["rc"] == 0 else "") + ", ".join(parts)


def minutes(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    # whole seconds cut as pytest's "(0:08:39)" shows them
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s" if seconds >= 60 else f"{seconds:.1f} s"


def table(args) -> int:
    with open(args.data) as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    rows = ["| started (UTC) | commit | clone | command | beside it | outcome | pytest's time "
            "| wall | load |", "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(records, key=lambda r: (r["round"], r["clone"], r["started"])):
        load = (f"{r['load_start']:.1f} to {r['load_end']:.1f}" if r["load_start"] is not None
                else f"{r['load_end']:.1f} at the end")
        rows.append(f"| {r['started'][:16]} | {r['commit']} | {r['clone']} | `{r['command']}` | "
                    f"{'`' + r['beside'] + '`' if r['beside'] else 'nothing'} | {outcome(r)} | "
                    f"{minutes(r['pytest_seconds'])} | {minutes(r['wall_seconds'])} | {load} |")
    machines = sorted({r["machine"] for r in records})
    print("\n".join(rows))
    print(f"\nMachine: {'; '.join(machines)} (shared with other work).")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("run", help="commands in a fresh clone, a second clone's beside them")
    p.add_argument("--run", action="append", required=True, metavar="COMMAND")
    p.add_argument("--beside", action="append", metavar="COMMAND")
    p.add_argument("--out", required=True)
    p.add_argument("--keep", action="store_true")
    p = sub.add_parser("import", help="the data lines of a run logged by hand")
    p.add_argument("log")
    p.add_argument("--clone", required=True, choices=("A", "B"))
    p.add_argument("--beside", action="append", metavar="COMMAND")
    p.add_argument("--machine", default=machine())
    p.add_argument("--out", required=True)
    p = sub.add_parser("table", help="the table of docs/contributing.md")
    p.add_argument("data")
    args = parser.parse_args(argv)
    return {"run": run, "import": import_log, "table": table}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
