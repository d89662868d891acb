"""`s3vm bench`'s results files under crashes, kills and a second writer: one process at a time
(a lock), whole lines on disk (a torn last line repaired on resume), records checked, inputs
never written over, every setting typed before anything is written; the settings a run used,
an instance's own before the suite's defaults, one column each."""

import csv
import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import s3vm
from s3vm.bench.execution import run_suite
from s3vm.bench.results import read_records, records_frame
from s3vm.bench.spec import read_suite
from s3vm.cli import main
from s3vm.data.generators import gaussian_blobs

SUITE = """\
name = "files"
formulations = ["switching"]
seeds = [0, 1]

[settings]
kernel = "linear"

[[instances]]
name = "blobs"
generator = "gaussian_blobs"
n = 16
n_labeled_per_class = 2
"""


CONSOLE = "from s3vm.cli import console_main; console_main()"  # the s3vm command


def _write(tmp_path, text=SUITE, name="suite.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _one_error_line(capsys):
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s3vm: error:"), err
    return lines[0]


def _runs(path) -> list:
    return [r["run"] for r in read_records(str(path))]


# -- one writer at a time --------------------------------------------------------------------
@pytest.mark.subprocess
@pytest.mark.slow
def test_a_second_bench_on_the_same_results_is_refused(tmp_path, capsys):
    path = _write(tmp_path)
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 0
    jsonl = tmp_path / "suite-results.jsonl"
    before = jsonl.read_bytes()
    with open(jsonl, "rb") as held:  # another bench at work holds the lock
        fcntl.flock(held, fcntl.LOCK_EX)
        assert main(["bench", str(path), "--jobs", "1", "--quiet", "--retry-errors"]) == 2
        assert "being written by another s3vm bench" in _one_error_line(capsys)
        # ... and so is a bench in a process of its own.
        second = subprocess.run([sys.executable, "-c", CONSOLE, "bench", str(path), "-q"],
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and second.stdout == ""
        assert second.stderr.count("\n") == 1 and "being written by another" in second.stderr
        # Reading (--list) does not need the lock.
        assert main(["bench", str(path), "--list"]) == 0
        assert capsys.readouterr().out.count("feasible") == 2
    assert jsonl.read_bytes() == before


# -- crashes ---------------------------------------------------------------------------------
def test_a_first_run_cut_short_resumes(tmp_path):
    # The bench died writing its very first record: the file holds only a torn line.
    path = _write(tmp_path)
    jsonl = tmp_path / "suite-results.jsonl"
    jsonl.write_text('{"suite": "files", "run": "blobs/swi')
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 0
    runs = _runs(jsonl)
    assert len(runs) == len(set(runs)) == 2
    assert jsonl.read_text().endswith("}\n") and jsonl.read_text().count("\n") == 2


@pytest.mark.slow
def test_a_whole_last_record_without_its_newline_is_kept(tmp_path):
    path = _write(tmp_path)
    jsonl = tmp_path / "suite-results.jsonl"
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 0
    lines = jsonl.read_text().splitlines()
    jsonl.write_text(lines[0] + "\n")  # one run's record, as if the other never ran
    first = json.loads(lines[0])
    jsonl.write_text(lines[0])  # ... and its newline lost
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 0
    records = read_records(str(jsonl))
    assert len(records) == 2 and records[0] == first  # kept, and the next on a line of its own
    with open(tmp_path / "suite-results.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 2


@pytest.mark.slow
@pytest.mark.parametrize("field,value,message", [
    ("status", None, "(no 'status' field)"),
    ("instance", 3, "(its 'instance' is 3)"),
    ("seconds", "fast", "(its 'seconds' is 'fast')"),
    ("grid", [1], "(its 'grid' is [1])"),
])
def test_a_record_without_a_field_is_one_line(tmp_path, capsys, field, value, message):
    path = _write(tmp_path)
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 0
    capsys.readouterr()
    jsonl = tmp_path / "suite-results.jsonl"
    lines = jsonl.read_text().splitlines()
    damaged = json.loads(lines[0])
    if value is None:
        del damaged[field]
    else:
        damaged[field] = value
    jsonl.write_text(json.dumps(damaged) + "\n" + lines[1] + "\n")
    before = jsonl.read_bytes()
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 2
    assert "line 1 is not a record of an s3vm results file " + message in \
        _one_error_line(capsys)
    for kind in ("profile", "gap"):
        assert main(["plot", kind, str(jsonl), "-o", str(tmp_path / "p.png")]) == 2
        assert message in _one_error_line(capsys)
    assert jsonl.read_bytes() == before and not (tmp_path / "p.png").exists()


# -- inputs and types, before anything is written ----------------------------------------------
def test_results_over_the_suites_own_data_are_refused(tmp_path, capsys):
    data = tmp_path / "data.csv"
    gaussian_blobs(n=16, p=2, n_labeled_per_class=2, seed=0).to_csv(str(data))
    (tmp_path / "data.jsonl").write_text("")  # an empty results file: once taken as ours
    text = SUITE.split("[[instances]]")[0] + '[[instances]]\nfile = "data.csv"\n'
    before = data.read_bytes()
    for output in ('output = "data"\n', f'output = "{tmp_path / "data"}"\n'):
        path = _write(tmp_path, output + text)
        assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 2
        assert "it is an input of this command" in _one_error_line(capsys)
        assert data.read_bytes() == before
        assert sorted(os.listdir(tmp_path)) == ["data.csv", "data.jsonl", "suite.toml"]
    # The suite file itself is an input too.
    path = _write(tmp_path, SUITE, name="suite.csv")
    assert main(["bench", str(path), "-o", str(tmp_path / "suite")]) == 2
    assert "it is an input" in _one_error_line(capsys)


def test_a_tree_file_over_an_input_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a formulation's file option is relative to where bench runs
    data = tmp_path / "data.csv"
    gaussian_blobs(n=16, p=2, n_labeled_per_class=2, seed=0).to_csv(str(data))
    before = data.read_bytes()
    text = ('name = "tree"\nformulations = ["bb"]\n[set.bb]\ntree_file = "{}"\n'
            '[[instances]]\nfile = "data.csv"\n')
    for target in ("data.csv", "suite-results.jsonl", "suite.toml"):
        path = _write(tmp_path, text.format(target))
        assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 2
        assert f"[set.bb] tree_file: cannot write {target}" in _one_error_line(capsys)
        assert data.read_bytes() == before
        assert sorted(os.listdir(tmp_path)) == ["data.csv", "suite.toml"]


@pytest.mark.parametrize("entry,message", [
    ("[set.switching]\nsolver = 1\n", "[set.switching] solver must be a name, got 1"),
    ("[set.switching]\ntime_limit = \"x\"\n", "[set.switching] time_limit must be a number"),
    ("[set.switching]\ntime_limit = -1\n", "[set.switching] time_limit must be a number > 0"),
])
def test_a_setting_of_the_wrong_type_writes_nothing(tmp_path, capsys, entry, message):
    path = _write(tmp_path, SUITE.replace("[[instances]]", entry + "\n[[instances]]", 1))
    assert main(["bench", str(path), "--jobs", "1", "--quiet"]) == 2
    assert message in _one_error_line(capsys)
    assert sorted(os.listdir(tmp_path)) == ["suite.toml"]


def test_an_output_entry_that_is_not_text_writes_nothing(tmp_path, capsys):
    path = _write(tmp_path, "output = 5\n" + SUITE)
    assert main(["bench", str(path)]) == 2
    assert "output must be a file stem" in _one_error_line(capsys)
    assert sorted(os.listdir(tmp_path)) == ["suite.toml"]


def test_the_parquet_columns_have_one_type_each(tmp_path):
    pytest.importorskip("pyarrow")
    base = {"suite": "s", "instance": "i", "formulation": "f", "status": "error",
            "grid": {}, "seed": None}
    records = [dict(base, run="a", solver=1, message="x", settings={"positives": 3}),
               dict(base, run="b", solver="highs", message=None,
                    settings={"positives": "truth", "bias": True, "C": 2.0})]
    frame = records_frame(records)
    frame.to_parquet(tmp_path / "r.parquet")
    assert list(frame["solver"]) == ["1", "highs"] and list(frame["positives"]) == ["3", "truth"]


# -- whose settings ------------------------------------------------------------------------
PRECEDENCE = """\
name = "precedence"
formulations = ["switching"]

[settings]                      # defaults: the instances below set their own kernel
kernel = "rbf"
sigma = 0.5
C = 5.0

[[instances]]
name = "own"
generator = "gaussian_blobs"
n = 16
n_labeled_per_class = 2
settings = { kernel = "linear" }

[[instances]]
name = "inst"
file = "inst.toml"
"""


def _precedence_files(tmp_path, extra=""):
    data = tmp_path / "blobs.csv"
    gaussian_blobs(n=14, p=2, n_labeled_per_class=2, seed=3).to_csv(str(data))
    (tmp_path / "inst.toml").write_text('data = "blobs.csv"\nkernel = "linear"\nC = 2.0\n')
    return _write(tmp_path, PRECEDENCE.replace("[[instances]]", extra + "[[instances]]", 1))


@pytest.mark.slow
def test_an_instances_own_settings_win_over_the_suite_defaults(tmp_path):
    path = _precedence_files(tmp_path)
    records = {r["instance"]: r for r in run_suite(read_suite(str(path)), jobs=1)}
    own, inst = records["own"], records["inst"]
    assert own["settings"]["kernel"] == "linear" and own["settings"]["C"] == 5.0
    assert inst["settings"]["kernel"] == "linear" and inst["settings"]["C"] == 2.0
    blobs = gaussian_blobs(n=16, n_labeled_per_class=2, seed=0)
    assert own["objective"] == pytest.approx(
        s3vm.solve(blobs, "switching", kernel="linear", C=5.0).objective, rel=1e-9)
    from s3vm.core.settings import load_instance

    instance, _ = load_instance(str(tmp_path / "inst.toml"))
    assert inst["objective"] == pytest.approx(
        s3vm.solve(instance, "switching", kernel="linear", C=2.0).objective, rel=1e-9)
    # Every effective setting is a column of the CSV.
    with open(tmp_path / "suite-results.csv") as fh:
        rows = {r["instance"]: r for r in csv.DictReader(fh)}
    assert rows["inst"]["kernel"] == "linear" and float(rows["inst"]["C"]) == 2.0
    assert rows["own"]["kernel"] == "linear" and float(rows["own"]["C"]) == 5.0


@pytest.mark.slow
def test_an_override_table_wins_over_an_instances_settings(tmp_path, capsys):
    path = _precedence_files(tmp_path, "[override]\nkernel = \"rbf\"\n\n")
    text = path.read_text().replace('kernel = "rbf"\nsigma', "sigma", 1)  # not in both tables
    path.write_text(text)
    records = {r["instance"]: r for r in run_suite(read_suite(str(path)), jobs=1)}
    assert records["own"]["settings"]["kernel"] == "rbf"
    assert records["inst"]["settings"] == dict(records["inst"]["settings"], kernel="rbf",
                                               sigma=0.5, C=2.0)
    blobs = gaussian_blobs(n=16, n_labeled_per_class=2, seed=0)
    assert records["own"]["objective"] == pytest.approx(
        s3vm.solve(blobs, "switching", kernel="rbf", sigma=0.5, C=5.0).objective, rel=1e-9)
    # A setting in both [settings] and [override] is refused.
    path.write_text(text.replace("[settings]", "[settings]\nkernel = \"linear\"", 1))
    assert main(["bench", str(path)]) == 2
    assert "kernel both in [settings] and in [override]" in _one_error_line(capsys)

# -- a kill -----------------------------------------------------------------------------------
def _processes() -> dict:
    """pid -> (parent pid, state) of every process (Linux /proc)."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            table[int(entry)] = (int(fields[1]), fields[0])
    return table


def _alive(pids) -> list:
    table = _processes()
    return [pid for pid in pids if pid in table and table[pid][1] != "Z"]


# Two runs that each use their whole time limit, on two local workers.
SLOW = """\
name = "killed"
formulations = ["bb"]
time_limit = 6
[settings]
kernel = "rbf"
sigma = 0.5
[grid]
C = [10.0, 20.0]
[[instances]]
file = "sdp_art150"
"""


def _bench_at_work(path):
    """A bench process on ``path`` with --jobs 2, once both its workers have taken a run:
    (process, worker pids)."""
    bench = subprocess.Popen([sys.executable, "-c", CONSOLE, "bench", str(path), "--jobs", "2",
                              "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers = []
    while len(workers) < 2 and time.monotonic() < deadline and bench.poll() is None:
        time.sleep(0.2)
        workers = []
        for pid, (parent, _) in _processes().items():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if parent == bench.pid and b"spawn_main" in fh.read():
                        workers.append(pid)
            except OSError:
                continue
    if len(workers) < 2:
        bench.kill()
        pytest.fail("the workers did not start")
    # A worker has taken its run once it maps SciPy's L-BFGS-B (imported by the solve, not by
    # the worker's start): a fixed second was too short at load 9, where a worker still
    # importing (before its initializer asked for the parent's death signal) outlived the
    # 3 s below, then found its parent gone and ended without running anything.
    while time.monotonic() < deadline and not all(_maps(pid, b"_lbfgsb") for pid in workers):
        time.sleep(0.2)
    if not all(_maps(pid, b"_lbfgsb") for pid in workers):
        bench.kill()
        pytest.fail("the workers did not take their runs")
    return bench, workers


def _maps(pid: int, name: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/maps", "rb") as fh:
            return name in fh.read()
    except OSError:
        return False


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_bench_takes_its_workers_with_it_and_resumes(tmp_path):
    """SIGKILL, which no handler sees: the workers go with the bench, and the resumed suite
    records each run once."""
    path = _write(tmp_path, SLOW)
    bench, workers = _bench_at_work(path)
    bench.kill()
    bench.wait()
    deadline = time.monotonic() + 3
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    # Before, each worker finished its run (6 s) after the bench had gone.
    assert not _alive(workers)
    assert main(["bench", str(path), "--jobs", "2", "--quiet"]) == 0
    runs = [r["run"] for r in read_records(str(tmp_path / "suite-results.jsonl"))]
    assert len(runs) == len(set(runs)) == 2


@pytest.mark.slow
def test_the_example_suite_of_the_docs_runs_heart_with_its_own_kernel(tmp_path):
    import re

    from s3vm.bench.execution import run_task

    page = (os.path.dirname(__file__) + "/../docs/bench.md")
    with open(page) as fh:
        block = re.search(r"```toml\n(.*?)```", fh.read(), re.S).group(1)
    suite = read_suite(str(_write(tmp_path, block)))
    [run] = [r for r in suite.runs
             if r.key.startswith("heart/switching[C=1.0] seed=0#")]
    record = run_task(run.task())
    assert record["status"] == "feasible"
    assert record["settings"]["kernel"] == "linear"  # the instance's, not [settings]' rbf
    assert 0 < record["labels"].count(1) < len(record["labels"])  # not every row on one side


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_terminated_bench_stops_its_runs_at_once(tmp_path):
    # SIGTERM, like Ctrl-C: the bench ends now (before, it waited for every run in progress to
    # use up its time limit, then dropped its record), and its workers with it.
    path = _write(tmp_path, SLOW)
    bench, workers = _bench_at_work(path)
    bench.terminate()
    started = time.monotonic()
    assert bench.wait(timeout=30) == 128 + signal.SIGTERM
    assert time.monotonic() - started < 4.0
    deadline = time.monotonic() + 3
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(workers)
