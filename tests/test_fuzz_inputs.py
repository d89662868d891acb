"""The fuzz campaign's third round (issue 29): bad input or output that ended in an internal
error (exit 1), and bad input that was accepted without a word (exit 0).

Each case must now end in exit 2 with one line ``s3vm: error: ...`` naming what is wrong (the
contract of tests/contract.py), or, for the Python API, an S3VMError; a case whose input is
valid after all (a frame of object columns holding numbers) must give the answer of its plain
twin. The walk over every environment variable, profile entry and suite entry is
tests/test_fuzz_keys.py.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import threading
import time
import tomllib

import numpy as np
import pytest

from s3vm import api, cli
from s3vm.cli.parser import build_parser
from s3vm.core.settings import load_instance
from s3vm.solvers.errors import S3VMError
from s3vm.solvers.registry import installed_solvers

from contract import BLOBS, INSTANCES, check_error_line, command, environment, run_cli

CSV = os.path.join(INSTANCES, "data", "blobs_small.csv")


def run(capsys, *argv, env=None, monkeypatch=None):
    """``s3vm ARGV`` in this process: (status, stdout, stderr)."""
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, *argv, says: str, env=None, monkeypatch=None) -> str:
    """Exit 2, nothing on stdout, one error line that contains ``says``."""
    status, out, err = run(capsys, *argv, env=env, monkeypatch=monkeypatch)
    check_error_line(status, out, err)
    assert says in err, err
    return err.strip()


def write(folder, name: str, text: str) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


# -- exit 1 before: bad input or output -------------------------------------------------------
def test_a_profile_option_nested_two_tables_deep_is_refused(capsys, tmp_path):
    profile = write(tmp_path, "p.toml", 'solver = "highs"\n[options.inner.deeper]\na = 1\n')
    refused(capsys, "solve", BLOBS, "-f", "bd-mip", "--profile", profile, "-q",
            says="options.inner.deeper")


@pytest.mark.solver
def test_a_nested_option_table_highs_cannot_take_is_refused(capsys, tmp_path):
    # One level of tables is a solver's (MOSEK's mosek_params); HiGHS has none.
    profile = write(tmp_path, "p.toml", 'solver = "highs"\n[options.inner]\na = 1\n')
    refused(capsys, "solve", BLOBS, "-f", "bd-mip", "--profile", profile, "-q",
            says="HiGHS rejected option inner")


@pytest.mark.parametrize("limit", ["inf", "1e400", "nan", "-inf"])
def test_an_infinite_memory_limit_is_refused(capsys, monkeypatch, limit):
    refused(capsys, "solve", BLOBS, "-f", "bb", env={"S3VM_MEMORY_LIMIT": limit},
            monkeypatch=monkeypatch, says="S3VM_MEMORY_LIMIT")


@pytest.mark.parametrize("command_", ["dataset", "select"])
def test_a_negative_seed_is_refused(capsys, tmp_path, command_):
    target = "heart" if command_ == "dataset" else BLOBS
    suffix = ".csv" if command_ == "dataset" else ".toml"
    output = tmp_path / ("x" + suffix)
    refused(capsys, command_, target, "-o", output, "--seed", "-1", says="--seed")
    assert not output.exists()


def test_an_instance_file_nested_3000_deep_is_refused(capsys, tmp_path):
    path = write(tmp_path, "deep.toml", "data = " + "[" * 3000 + "]" * 3000 + "\n")
    refused(capsys, "solve", path, "-f", "bb", says="nested too deeply")


@pytest.mark.subprocess
@pytest.mark.slow
def test_standard_output_on_a_full_device_is_refused():
    proc = subprocess.run(" ".join(shlex.quote(a) for a in command() + [
        "solve", BLOBS, "-f", "rlp", "--json", "-q"]) + " > /dev/full", shell=True,
        capture_output=True, text=True, timeout=120, env=environment())
    check_error_line(proc.returncode, proc.stdout, proc.stderr)
    assert "cannot write standard output" in proc.stderr


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_closed_standard_output_is_refused():
    proc = subprocess.run(" ".join(shlex.quote(a) for a in command() + [
        "solve", BLOBS, "-f", "rlp", "--json", "-q"]) + " >&-", shell=True,
        capture_output=True, text=True, timeout=120, env=environment())
    check_error_line(proc.returncode, proc.stdout, proc.stderr)
    assert "standard output is closed" in proc.stderr


@pytest.mark.solver
def test_a_frame_of_object_columns_of_numbers_solves_as_its_array():
    import pandas as pd

    instance, _ = load_instance(CSV)
    X, y = instance.X, instance.label
    as_frame = api.solve((pd.DataFrame(X).astype(object), y), "rlp")
    as_array = api.solve((X.astype(object), y), "rlp")
    assert as_frame.status == as_array.status == "optimal"
    assert as_frame.labels.tolist() == as_array.labels.tolist()
    assert as_frame.objective == pytest.approx(as_array.objective, rel=1e-9)
    text = pd.DataFrame(X).astype(object)
    text.iloc[3, 1] = "a"
    with pytest.raises(S3VMError, match="column '1'"):
        api.solve((text, y), "rlp")


# -- exit 0 before: accepted without a word ----------------------------------------------------
def test_a_libsvm_file_of_labels_only_is_refused(capsys, tmp_path):
    path = write(tmp_path, "labels.svm", "1\n-1\n0\n1\n0\n")
    refused(capsys, "solve", path, "-f", "rlp", says="label only")


def test_an_unlabeled_marker_for_a_csv_file_is_refused(capsys):
    refused(capsys, "solve", CSV, "-f", "rlp", "--unlabeled-marker", "5",
            says="--unlabeled-marker")


def test_an_unlabeled_entry_of_an_instance_file_naming_a_csv_is_refused(capsys, tmp_path):
    path = write(tmp_path, "i.toml", f'data = "{CSV}"\nunlabeled = "x"\n')
    refused(capsys, "solve", path, "-f", "rlp", says="'unlabeled'")


def test_a_profile_verbose_that_is_not_a_bool_is_refused(capsys, tmp_path):
    profile = write(tmp_path, "p.toml", 'solver = "highs"\nverbose = "yes"\n')
    refused(capsys, "solve", BLOBS, "-f", "rlp", "--profile", profile, says="verbose")


@pytest.mark.skipif("sdpa" not in installed_solvers("sdp"), reason="SDPA not installed")
def test_an_unknown_sdpa_option_is_refused(capsys, tmp_path):
    profile = write(tmp_path, "p.toml", 'solver = "sdpa"\n[options]\nepsilonStr = 1e-6\n')
    refused(capsys, "solve", BLOBS, "-f", "sdp", "--profile", profile, "-q",
            says="'epsilonStr'")


def test_an_option_of_the_builtin_solver_is_refused(capsys, tmp_path):
    profile = write(tmp_path, "p.toml", 'solver = "builtin"\n[options]\nnode_limit = 5\n')
    refused(capsys, "solve", BLOBS, "-f", "bb", "--profile", profile, "-q",
            says="'node_limit'")


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.skipif("scip" not in installed_solvers("mip"), reason="SCIP not installed")
@pytest.mark.parametrize("option", ['"limits/bogus" = 1', '"limits/time" = -5'],
                         ids=["unknown", "out-of-range"])
def test_an_option_scip_refuses_is_refused_in_one_line(tmp_path, option):
    # Through the console script without -q: SCIP's own call trace on fd 2 must not show.
    profile = write(tmp_path, "p.toml", f'solver = "scip"\n[options]\n{option}\n')
    proc = run_cli(["solve", BLOBS, "-f", "bd-mip", "--profile", profile],
                   env=environment(S3VM_PROGRESS_SECONDS=600))
    check_error_line(proc.returncode, proc.stdout, proc.stderr)
    assert "SCIP rejected option limits/" in proc.stderr


def test_a_profile_and_another_solver_are_refused(capsys, tmp_path):
    profile = write(tmp_path, "p.toml", 'solver = "highs"\n')
    refused(capsys, "solve", BLOBS, "-f", "rlp", "--profile", profile, "--solver", "glpk",
            says="two solvers")


def test_abbreviated_flags_are_refused(capsys):
    refused(capsys, "solve", BLOBS, "-f", "bb", "--kernel", "rbf", "--sig", "0.5", "--sigma",
            "2", says="--sig")


def test_no_parser_takes_abbreviations():
    parsers, seen = [build_parser()], 0
    while parsers:
        parser = parsers.pop()
        seen += 1
        assert parser.allow_abbrev is False, parser.prog
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    assert seen > 10  # the program, its commands and plot's kinds


def test_a_solved_list_without_a_status_is_refused(capsys, tmp_path):
    refused(capsys, "plot", "profile", tmp_path / "R.jsonl", "--solved", ",", "-o",
            tmp_path / "p.png", says="--solved")
    assert not (tmp_path / "p.png").exists()


def test_a_tiny_progress_interval_is_refused(capsys, monkeypatch):
    refused(capsys, "solve", BLOBS, "-f", "bb", env={"S3VM_PROGRESS_SECONDS": "1e-300"},
            monkeypatch=monkeypatch, says="S3VM_PROGRESS_SECONDS")


SUITE = 'name = "s"\nformulations = ["rlp"]\n[[instances]]\nfile = "blobs_small"\n'


@pytest.mark.parametrize("entry, says", [
    ('solver = "nope"', "unknown solver 'nope'"),
    ('solver = "scs"', "does not solve LP"),
    ("name = 5", "name must be"),
    ("description = 5", "description must be"),
    ('output = "sub/"', "output must be a file stem"),
], ids=["solver-nope", "solver-scs", "name-5", "description-5", "output-folder"])
def test_a_bad_suite_entry_is_refused(capsys, tmp_path, entry, says):
    text = SUITE.replace('name = "s"\n', "") if entry.startswith("name") else SUITE
    suite = write(tmp_path, "suite.toml", entry + "\n" + text)
    refused(capsys, "bench", suite, "--list", says=says)
    assert sorted(os.listdir(tmp_path)) == ["suite.toml"]


@pytest.mark.parametrize("entry, says", [
    ("name = 5", "instance 1: name must be a name, got 5"),
    ('name = " "', "instance 1: name must be a non-empty name"),
    ("name = [1]", "instance 1: name must be a name"),
], ids=["int", "blank", "list"])
def test_a_bad_instance_name_in_a_suite_is_refused(capsys, tmp_path, entry, says):
    # An instance's name labels its runs in every results file: 5 was taken as "5".
    suite = write(tmp_path, "suite.toml", SUITE + entry + "\n")
    refused(capsys, "bench", suite, "--list", says=says)
    assert sorted(os.listdir(tmp_path)) == ["suite.toml"]


# -- select writes TOML that reads back --------------------------------------------------------
@pytest.mark.parametrize("stem", ['we"ird', "back\\slash", "tab\there"])
def test_select_writes_an_instance_file_that_reads_back(capsys, tmp_path, stem):
    data = tmp_path / f"{stem}.csv"
    data.write_bytes(open(CSV, "rb").read())
    output = tmp_path / "out.toml"
    status, out, err = run(capsys, "select", data, "-o", output, "--folds", "2")
    assert status == 0, err
    spec = tomllib.loads(output.read_text(encoding="utf-8"))
    assert spec["data"] == data.name
    instance, settings = load_instance(str(output))
    original, _ = load_instance(str(data))
    assert np.array_equal(instance.X, original.X)
    assert settings.kernel == spec["kernel"] and settings.C == spec["C"]


# -- a FIFO read late: the write waits for its reader (up to 10 s) ------------------------------
@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_dataset_into_a_fifo_waits_for_its_reader_and_writes_it_whole(tmp_path):
    plain = tmp_path / "plain.csv"
    status = run_cli(["dataset", "heart", "-o", plain])
    assert status.returncode == 0, status.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(command() + ["dataset", "heart", "-o", str(fifo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment())
    try:
        time.sleep(1.0)
        assert proc.poll() is None  # no reader yet: still waiting, not failed
        chunks = []
        reader = threading.Thread(target=lambda: chunks.append(fifo.read_bytes()), daemon=True)
        reader.start()
        reader.join(timeout=120)
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert chunks and chunks[0] == plain.read_bytes()


@pytest.mark.parametrize("make", ["dataset", "generator"])
def test_a_negative_seed_is_an_s3vm_error_through_the_api(make):
    from s3vm.data import generators
    from s3vm.data.loaders import load_dataset

    with pytest.raises(S3VMError, match="seed must be an integer >= 0"):
        if make == "dataset":
            load_dataset("heart", labeled_fraction=0.1, seed=-1)
        else:
            generators.two_moons(seed=-1)
