"""`s3vm bench`: suite files checked whole before any run, results appended as runs finish and
resumed, local processes or a Dask cluster, failures recorded, bad input refused in one line."""

import csv
import json
import os
import textwrap

import pytest

from s3vm.bench.execution import run_suite
from s3vm.bench.results import read_records
from s3vm.bench.spec import read_suite
from s3vm.cli import main

SUITE = """\
name = "tiny"
formulations = ["switching", "svm1", "bd-mip"]
seeds = [0, 1]
time_limit = 20

[settings]
kernel = "linear"

[grid]
C = [1.0, 10.0]

[set.bd-mip]
solver = "gurobi"

[[instances]]
name = "blobs"
generator = "gaussian_blobs"
n = 16
n_labeled_per_class = 2

[[instances]]
file = "blobs_small"
"""


def _write(tmp_path, text=SUITE, name="suite.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _one_error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("s3vm: error:"), err
    return err[0]


def test_a_suite_expands_to_its_runs(tmp_path):
    suite = read_suite(str(_write(tmp_path)))
    keys = [run.key.split("#")[0] for run in suite.runs]
    # blobs draws with each seed; svm1 reads no C, so it runs once per seed; the shipped file
    # draws nothing and none of the formulations has a seed option, so it runs once.
    assert "blobs/switching[C=1.0] seed=0" in keys and "blobs/switching[C=10.0] seed=1" in keys
    assert "blobs/svm1 seed=1" in keys and "blobs/svm1[C=1.0] seed=0" not in keys
    assert "blobs_small/bd-mip" in keys
    assert len(keys) == len(set(keys)) == 2 * (2 + 1 + 1) + (2 + 1 + 1)
    assert suite.output == str(tmp_path / "suite-results")


@pytest.mark.slow
def test_bench_runs_records_failures_and_resumes(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["bench", str(path), "--jobs", "2"]) == 0
    out, err = capsys.readouterr()
    assert "suite tiny: 12 runs" in out and "blobs_small" in out
    assert "12/12" in err  # the progress bar
    records = read_records(str(tmp_path / "suite-results.jsonl"))
    assert len(records) == 12
    failed = [r for r in records if r["formulation"] == "bd-mip"]
    # gurobi is not installed here: each bd-mip run is an error record, the suite goes on.
    assert failed and all(r["status"] == "error" and "gurobi" in r["message"] for r in failed)
    good = [r for r in records if r["formulation"] == "switching"]
    assert all(r["status"] == "feasible" and r["error"] is not None for r in good)
    assert all(r["info"]["s3vm_version"] and "seed" in r["info"] for r in good)
    with open(tmp_path / "suite-results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 12 and {r["suite"] for r in rows} == {"tiny"}
    if _has("pyarrow"):
        import pandas as pd

        assert len(pd.read_parquet(tmp_path / "suite-results.parquet")) == 12
    # A stop in the middle of writing leaves a cut line: the resume drops it and reruns the run.
    jsonl = tmp_path / "suite-results.jsonl"
    lines = jsonl.read_text().splitlines()
    jsonl.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:25])
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 0
    assert len(read_records(str(jsonl))) == 12
    # Nothing left to do: nothing runs, nothing is appended.
    before = jsonl.read_text()
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 0
    assert jsonl.read_text() == before
    # --retry-errors runs the failed ones again (and they fail again).
    assert main(["bench", str(path), "--jobs", "1", "--quiet", "--retry-errors"]) == 0
    assert len(read_records(str(jsonl))) == 12 + len(failed)


def _has(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


@pytest.mark.wallclock
@pytest.mark.slow
def test_time_limits_are_per_run(tmp_path):
    text = """\
    name = "limits"
    formulations = ["bb"]
    time_limit = 1.5
    [settings]
    kernel = "rbf"
    sigma = 0.5
    C = 10.0
    [[instances]]
    file = "sdp_art150"
    """
    suite = read_suite(str(_write(tmp_path, text)))
    [record] = run_suite(suite, jobs=1)
    assert record["status"] in ("time_limit", "feasible") and record["gap"] > 0
    # Wall clock: the limit plus 1 s of tolerance for a loaded machine (no retry).
    assert record["seconds"] < 1.5 + 1.0


@pytest.mark.solver
@pytest.mark.slow
def test_dask_local_cluster_runs_the_suite(tmp_path):
    distributed = pytest.importorskip("distributed")
    suite = read_suite(str(_write(tmp_path)), output=str(tmp_path / "dask"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        records = run_suite(suite, scheduler=cluster.scheduler_address)
    local = {r["run"]: r for r in records}
    assert len(local) == 12
    assert {r["status"] for r in records} == {"feasible", "optimal", "error"}


@pytest.mark.slow
def test_bad_address_is_one_line(tmp_path, capsys):
    pytest.importorskip("distributed")
    assert main(["bench", str(_write(tmp_path)), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "cannot reach the Dask scheduler" in _one_error_line(capsys)
    assert sorted(os.listdir(tmp_path)) == ["suite.toml"]


@pytest.mark.parametrize("change,message", [
    (("svm1", "nope"), "unknown formulation 'nope'"),
    (("kernel = \"linear\"", "kernal = \"linear\""), "unknown setting 'kernal' in [settings]"),
    (("C = [1.0, 10.0]", "C = [1.0, -1.0]"), "[grid]: --C must be >= 0"),
    (("solver = \"gurobi\"", "max_lps = 3"), "max_lps"),
    (("solver = \"gurobi\"", "balance = \"count\"\n[set.svm1]\nbalance = \"count\""),
     "--balance does not apply to svm1"),
    (("n = 16", "m = 16"), "gaussian_blobs takes no m"),
    (("file = \"blobs_small\"", "file = \"missing.toml\""), "file not found"),
    (("name = \"tiny\"", "title = \"tiny\""), "unknown entries title"),
])
def test_a_bad_suite_is_one_line_and_writes_nothing(tmp_path, capsys, change, message):
    old, new = change
    assert old in SUITE
    path = _write(tmp_path, SUITE.replace(old, new, 1))
    assert main(["bench", str(path)]) == 2
    assert message in _one_error_line(capsys)
    assert sorted(os.listdir(tmp_path)) == ["suite.toml"]


def test_a_results_file_of_another_suite_is_refused(tmp_path, capsys):
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"suite": "someone-else", "run": "x", "status": "optimal"}) + "\n")
    before = other.read_text()
    path = _write(tmp_path)
    assert main(["bench", str(path), "-o", str(tmp_path / "other")]) == 2
    assert "holds the results of suite 'someone-else', not of 'tiny'" in _one_error_line(capsys)
    assert other.read_text() == before
    assert sorted(os.listdir(tmp_path)) == ["other.jsonl", "suite.toml"]
    (tmp_path / "junk.jsonl").write_text("not json\n")
    assert main(["bench", str(path), "-o", str(tmp_path / "junk")]) == 2
    assert "line 1 is not a record" in _one_error_line(capsys)


def test_a_bench_row_records_what_applied(tmp_path):
    # issue 38 item 6: the limit, solver, profile and solver options in force, in the JSON
    # record and as CSV columns
    suite = _write(tmp_path, """\
        name = "applied"
        formulations = ["svm1"]
        time_limit = 15
        output = "applied"

        [set.svm1]
        solver = "highs"

        [[instances]]
        file = "blobs_small"
        """)
    assert main(["bench", str(suite), "-q"]) == 0
    (record,) = read_records(str(tmp_path / "applied.jsonl"))
    assert record["applied"]["time_limit"] == 15 and record["applied"]["profile"] == "highs"
    assert record["applied"]["solver"] == "highs"
    with open(tmp_path / "applied.csv") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["profile"] == "highs"
    assert json.loads(row["solver_options"])["threads"] == 1  # solvers/profiles/highs.toml
