"""benchmarks/suite_runs.py: what it reads from pytest's summary and from a run logged by hand,
and the table it prints (the runs themselves are the benchmark's, made by hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from script_modules import script_module

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "suite_runs.py"

LOG = """start Mon Dec  7 10:05:42 UTC 2026 7ad4040 docs/reliability.md: a stop
make lint rc=0 37s load=0.82 0.29 0.17
touch .venv/.installed-test
.venv/bin/python -m ruff check .
All checks passed!
make test rc=2 520s load=1.71 1.94 1.14
FAILED tests/test_reliability.py::test_sdp_subspace_holds_its_time_limit - As...
1 failed, 2659 passed, 10 skipped, 3 xfailed, 2 warnings in 519.54s (0:08:39)
make: *** [Makefile:58: test] Error 1
end Mon Dec  7 10:14:59 UTC 2026 total 557s
"""


@pytest.fixture(scope="module")
def runs():
    return script_module("suite_runs", "benchmarks/suite_runs.py")


@pytest.mark.parametrize("line, counts", [
    ("2660 passed, 10 skipped, 3 xfailed, 2 warnings in 903.75s (0:15:03)",
     dict(passed=2660, failed=0, skipped=10, xfailed=3, errors=0, pytest_seconds=903.75)),
    ("1 failed, 2659 passed, 10 skipped, 3 xfailed in 519.54s (0:08:39)",
     dict(passed=2659, failed=1, skipped=10, xfailed=3, errors=0, pytest_seconds=519.54)),
    ("2 failed, 5 passed, 1 error in 3.10s",
     dict(passed=5, failed=2, errors=1, pytest_seconds=3.1)),
    ("1356 passed, 7 skipped, 1 warning in 27.66s",
     dict(passed=1356, skipped=7, failed=0, pytest_seconds=27.66)),
])
def test_the_counts_are_read_from_pytests_summary_line(runs, line, counts):
    found = runs.summary_of("collected 99 items\n....\n" + line + "\n")
    assert {k: found[k] for k in counts} == counts


def test_output_without_a_summary_has_no_counts(runs):
    found = runs.summary_of("All checks passed!\nproved optimal by bb: objective 16.05\n")
    assert found["passed"] is None and found["pytest_seconds"] is None


def test_a_logged_run_gives_a_line_per_command_with_its_times(runs):
    lint, test = runs.records_of_log(LOG, "A", None, "a machine")
    assert (lint["command"], lint["rc"], lint["passed"]) == ("make lint", 0, None)
    assert (test["command"], test["rc"], test["failed"], test["passed"]) == ("make test", 2, 1,
                                                                          2659)
    assert lint["started"] == lint["round"] == test["round"] == "2026-12-07 10:05:42 UTC"
    assert lint["ended"] == test["started"] == "2026-12-07 10:06:19 UTC"  # 37 s later
    assert test["ended"] == "2026-12-07 10:14:59 UTC"
    assert test["commit"] == "7ad4040" and test["load_end"] == 1.71


def test_a_log_that_does_not_start_as_logged_is_refused(runs):
    with pytest.raises(ValueError, match="first line"):
        runs.records_of_log("make test rc=0 5s load=1.0 1.0 1.0\n", "A", None, "a machine")


@pytest.mark.subprocess
def test_the_table_shows_each_command_with_its_outcome(runs, tmp_path):
    data = tmp_path / "runs.jsonl"
    with open(data, "w") as fh:
        for record in runs.records_of_log(LOG, "A", None, "a machine"):
            fh.write(json.dumps(record) + "\n")
    done = subprocess.run([sys.executable, str(SCRIPT), "table", str(data)], capture_output=True,
                          text=True, check=True)
    rows = [line for line in done.stdout.splitlines() if line.startswith("| 2026")]
    assert len(rows) == 2
    assert "`make lint` | nothing | exit 0 |" in rows[0]
    assert "`make test` | nothing | 1 failed, 2,659 passed | 8 min 39 s | 8 min 40 s |" in rows[1]
