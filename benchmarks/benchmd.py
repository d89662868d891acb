"""Shared helpers of the hand-run benchmarks: machine description and the header line of a data
file, instrumentation of the HiGHS session, and writing a section for the changelog.

Nothing here changes package behaviour: the wrappers below only time calls the package makes.
"""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Where the scripts that describe their run in markdown (bench_lp_build, bench_vs3vm, bench_sdp,
#: peak_memory) write it: a scratch file outside the repository's tracked files (build/), from
#: which the run's entry of docs/changelog.md is written by hand. The reference pages
#: (docs/benchmarks/) take their tables from data files instead (benchmarks/pages.py).
DOC = os.path.join(ROOT, "build", "benchmark-sections.md")

DOC_HEADER = """# Benchmark sections

Sections written by the hand-run scripts in `benchmarks/`, each replaced in place when its script
runs again; each states the exact command, the machine and the date. Copy a run's section into
an entry of docs/changelog.md.
"""


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def machine() -> dict:
    """nproc, CPU model, python, highspy and pyomo versions, and `date`."""
    import numpy
    import pyomo
    import scipy

    try:
        from importlib.metadata import version
        highspy_version = version("highspy")
    except Exception:  # pragma: no cover
        highspy_version = "?"
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    nproc = str(os.cpu_count())  # not `nproc`, which OMP_NUM_THREADS=1 turns into 1
    date = subprocess.run(["date"], capture_output=True, text=True).stdout.strip()
    mem = "?"
    try:
        with open("/proc/meminfo") as fh:
            kb = int(re.search(r"MemTotal:\s+(\d+)", fh.read()).group(1))
            mem = f"{kb / 2**20:.0f} GiB"
    except (OSError, AttributeError):
        pass
    return {"nproc": nproc, "cpu": cpu, "mem": mem, "python": platform.python_version(),
            "highspy": highspy_version, "pyomo": pyomo.__version__, "numpy": numpy.__version__,
            "scipy": scipy.__version__, "date": date}


def load() -> float | None:
    """The 1-minute load average (``/proc/loadavg``), None where there is none."""
    try:
        with open("/proc/loadavg") as fh:
            return float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds() -> float:
    """CPU seconds of this process and its children that were waited for (a solver's child
    process included): on a shared machine a run's wall time is mostly waiting for a core, its
    CPU time is not."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run_header(**extra) -> dict:
    """The JSON line a run's data file starts with: the UTC date, the 1-minute load, the commit,
    the machine in words and the command, so that the table printed from the file can say them."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "?"
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh
                        if line.startswith("model name")), "?")
    except OSError:
        pass
    return {"part": "header", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": load(), "commit": commit,
            "machine": f"{os.cpu_count()} cores, {cpu}, {platform.system()} {platform.machine()}",
            "python": platform.python_version(), "command": command_line(), **extra}


def machine_lines(info: dict) -> list[str]:
    return [
        f"- machine: `nproc` = {info['nproc']}, CPU `{info['cpu']}`, {info['mem']} RAM",
        f"- python {info['python']}, highspy {info['highspy']}, pyomo {info['pyomo']}, "
        f"numpy {info['numpy']}, scipy {info['scipy']}",
        f"- date (`date`): {info['date']}",
    ]


def command_line() -> str:
    script = os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)
    args = " ".join(sys.argv[1:])
    return f".venv/bin/python {script}" + (f" {args}" if args else "")


def write_section(key: str, title: str, body: str, path: str = DOC) -> None:
    """Replace (or append) the section between the markers of ``key`` in ``path`` (build/)."""
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    block = f"{start}\n## {title}\n\n{body.rstrip()}\n{end}\n"
    text = open(path).read() if os.path.exists(path) else DOC_HEADER
    if start in text and end in text:
        before, rest = text.split(start, 1)
        after = rest.split(end, 1)[1].lstrip("\n")
        text = before + block + ("\n" + after if after else "")
    else:
        text = text.rstrip() + "\n\n" + block
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def fmt(x, digits=2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and x != x:
        return "-"
    return f"{x:.{digits}f}"


def option(h, name):
    """highspy 1.15 returns (status, value) from getOptionValue; older versions the value."""
    got = h.getOptionValue(name)
    return got[1] if isinstance(got, tuple) else got


class TimedHighs:
    """Stands in for a session's ``highspy.Highs``: forwards every call and records, per
    ``run()``, the wall seconds of the run, the algorithm options in force and the counts."""

    def __init__(self, h):
        self._h = h
        self.runs = []

    def __getattr__(self, name):
        return getattr(self._h, name)

    def run(self):
        h = self._h
        algo = {k: option(h, k) for k in ("solver", "simplex_strategy", "run_crossover")}
        start = time.perf_counter()
        status = h.run()
        seconds = time.perf_counter() - start
        info = h.getInfo()
        self.runs.append({"seconds": seconds, **algo,
                          "simplex": int(info.simplex_iteration_count),
                          "ipm": int(info.ipm_iteration_count),
                          "crossover": int(info.crossover_iteration_count)})
        return status


def algorithm_label(run: dict) -> str:
    if run["solver"] == "ipm":
        return "ipm+crossover" if run["run_crossover"] == "on" else "ipm"
    if run["solver"] == "simplex":
        return {1: "dual simplex", 4: "primal simplex"}.get(run["simplex_strategy"],
                                                            f"simplex/{run['simplex_strategy']}")
    return f"HiGHS default (solver={run['solver']})"


_compile_seconds = []


def instrument_compiler() -> list:
    """Time every LinearStandardFormCompiler.write call (the Pyomo -> matrix step of
    HighsSession); returns the list the durations are appended to."""
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    if getattr(LinearStandardFormCompiler.write, "_timed", False):
        return _compile_seconds
    original = LinearStandardFormCompiler.write

    def write(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            _compile_seconds.append(time.perf_counter() - start)

    write._timed = True
    LinearStandardFormCompiler.write = write
    return _compile_seconds
