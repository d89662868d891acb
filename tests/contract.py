"""What every run of the command line must give, and how the reliability tests run it.

The contract (docs/reliability.md): exit 0 with a valid result, or exit 2 with one line
``s3vm: error: ...`` on stderr and nothing on stdout; after SIGINT/SIGTERM 130/143 with the best
result so far; never a traceback, a hang, a NaN objective, labels of the wrong length or a
partial output file. Imported by the tests (``from contract import ...``).
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTANCES = os.path.join(ROOT, "instances")
BLOBS = os.path.join(INSTANCES, "blobs_small.toml")
STATUSES = ("optimal", "feasible", "time_limit", "infeasible", "error")


def command() -> list:
    script = os.path.join(os.path.dirname(sys.executable), "s3vm")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "s3vm.cli"]


def environment(**extra) -> dict:
    env = dict(os.environ)
    env.pop("S3VM_DEBUG", None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_cli(args, timeout: float = 120, env=None, cwd=None) -> subprocess.CompletedProcess:
    """The console script in a subprocess (a hang fails the test through ``timeout``)."""
    return subprocess.run(command() + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=env or environment(), cwd=cwd)


def children(pid: int) -> list:
    """The child processes of ``pid`` (Linux's /proc; empty elsewhere)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


class Signalled:
    """A console-script process sent ``signum`` ``after`` seconds into its solve (counted from
    the start of the child process that runs the solve, so that a slow start on a loaded
    machine does not matter): its exit status, output and the seconds from the signal to its
    end."""

    def __init__(self, args, signum, after: float, timeout: float = 120, env=None):
        start = time.perf_counter()
        proc = subprocess.Popen(command() + [str(a) for a in args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env or environment())
        while proc.poll() is None and not children(proc.pid) and \
                time.perf_counter() - start < timeout:
            time.sleep(0.02)
        self.solve_started = time.perf_counter() - start
        time.sleep(after)
        sent = time.perf_counter()
        proc.send_signal(signum)
        try:
            self.stdout, self.stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.stdout, self.stderr = proc.communicate()
            raise AssertionError(f"no exit within {timeout} s of {signal.Signals(signum).name}")
        self.returncode = proc.returncode
        self.after_signal = time.perf_counter() - sent
        self.total = time.perf_counter() - start


#: A progress line (``NAME: 5 s, PHASE, ..., incumbent X, bound Y``): one reaches stderr every
#: few seconds of a solve, so how many a run prints depends on the machine's load.
PROGRESS_LINE = re.compile(r"^[\w-]+: \d+ s, .+, incumbent \S+, bound \S+$")


#: The phases a solve starts in (its model being built), as its progress lines name them.
BUILD_PHASES = ("building", "setting up", "starting heuristic")


def without_progress(err: str) -> str:
    """stderr without its progress lines: what a test may check exactly, whatever the load
    (a run that takes 5 s on a loaded machine prints a progress line first)."""
    return "".join(line for line in err.splitlines(keepends=True)
                   if not PROGRESS_LINE.match(line.rstrip("\n")))


def check_error_line(status: int, out: str, err: str) -> None:
    """Exit 2, nothing on stdout, exactly one line 's3vm: error: ...' on stderr (beside any
    progress lines, which come with the time a run takes)."""
    assert status == 2, (status, out[-300:], err[-600:])
    assert out == "", out[:300]
    lines = without_progress(err).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s3vm: error: "), err[-600:]


def check_result_object(result: dict, u=None, formulation=None) -> None:
    """A valid result: a status of the contract, finite numbers (or null), u labels +1/-1 and u
    finite decision values (or null)."""
    assert result["status"] in STATUSES, result["status"]
    if formulation is not None:
        assert result["formulation"] == formulation
    for key in ("objective", "lower_bound", "gap"):
        value = result.get(key)
        assert value is None or (isinstance(value, (int, float)) and math.isfinite(value)), \
            (key, value)
    if result["objective"] is not None and result["lower_bound"] is not None:
        assert result["lower_bound"] <= result["objective"] + 1e-6 * max(1, abs(
            result["objective"])), (result["lower_bound"], result["objective"])
    labels, scores = result["labels"], result["decision_values"]
    if labels is not None:
        assert all(v in (1, -1) for v in labels), labels[:20]
        if u is not None:
            assert len(labels) == u, (len(labels), u)
    if scores is not None:
        assert all(v is not None and math.isfinite(v) for v in scores)
        if labels is not None:
            assert len(scores) == len(labels)
    if result["status"] == "optimal":
        assert result["objective"] is not None


def parse_json_output(out: str) -> object:
    """stdout of a --json run: exactly one line of JSON without NaN or Infinity."""
    assert out.endswith("\n") and out.count("\n") == 1, f"not one line of JSON: {out[:300]!r}"

    def refuse(token):
        raise AssertionError(f"{token} in the JSON output")

    return json.loads(out, parse_constant=refuse)


def check_run(status: int, out: str, err: str, *, json_mode: bool = True, u=None,
              formulation=None) -> object:
    """The contract of one run: exit 0 with a valid result, or exit 2 with one error line."""
    assert "Traceback" not in err, err[-2000:]
    assert status in (0, 2), (status, err[-1000:])
    if status == 2:
        check_error_line(status, out, err)
        return None
    if not json_mode:
        return out
    result = parse_json_output(out)
    if isinstance(result, list):
        for row in result:
            check_result_object(row, u)
    else:
        check_result_object(result, u, formulation)
    return result


def leftovers(folder, keep=()) -> list:
    """Files in ``folder`` other than ``keep``: a partial or temporary output left behind."""
    return sorted(f for f in os.listdir(folder) if f not in set(keep))
