"""benchmarks/cs3vm_setting.py: its splits, its table and its refusals (the fits themselves are
the benchmark's, run by hand)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from script_modules import script_module

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "cs3vm_setting.py"


@pytest.fixture(scope="module")
def bench():
    return script_module("cs3vm_setting", "benchmarks/cs3vm_setting.py")


@pytest.mark.subprocess
def test_a_split_is_seeded_and_labels_every_class(bench):
    # Ten classes of which one is rare (3 of 1,992 rows): a plain draw of 50 rows misses it
    # most of the time, so the redraw is exercised.
    truth = np.repeat(np.arange(10), [3] + [221] * 9)
    rows = bench.draw_split(truth, 4)
    assert rows.size == 50 and np.unique(rows).size == 50
    assert set(truth[rows]) == set(range(10))
    assert np.array_equal(rows, bench.draw_split(truth, 4))
    assert not np.array_equal(rows, bench.draw_split(truth, 5))


def test_the_table_is_the_mean_over_the_latest_record_of_each_split(bench):
    records = [{"set": "text", "split": s, "method": "svc", "error": e, "seconds": t}
               for s, e, t in ((0, 0.5, 1.0), (1, 0.2, 3.0), (2, 0.3, 2.0))]
    records.append({"set": "text", "split": 0, "method": "svc", "error": 0.1, "seconds": 1.0})
    records.append({"set": "text", "split": 0, "method": "defaults", "error": 0.4,
                    "seconds": 5.0})
    row = bench.table(records).splitlines()[2].split(" | ")
    # svc over splits 0 (the later 10%), 1 and 2: mean 20%, std sqrt(2/3 / 100) = 8.2%
    assert row[2] == "3"
    assert row[3:5] == ["40.0 ± 0.0 (1 split)", "5.0"]
    assert row[5:7] == ["20.0 ± 8.2", "2.0"]
    assert row[7:10] == ["5.3", "6.2", "7.4 |"]


@pytest.mark.subprocess
@pytest.mark.slow
def test_an_unreadable_record_file_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    for path in (bad, tmp_path / "missing.jsonl"):
        done = subprocess.run([sys.executable, str(SCRIPT), "--summary", str(path)],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_recorded_run_has_its_provenance():
    records = [json.loads(line) for line in
               (ROOT / "benchmarks" / "cs3vm_setting.jsonl").read_text().splitlines()]
    assert records and all(r["failure"] is None for r in records)
    for key in ("date", "load", "machine", "commit", "cpu_seconds"):
        assert all(key in r for r in records), key
