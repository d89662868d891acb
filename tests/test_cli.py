"""The command-line contract of docs/formulations.md#cli-contract, checked from outside.

Most tests call ``s3vm.cli.main(argv)`` in-process (it returns the exit status) and read
stdout/stderr with capsys; a few run the real console script in a subprocess to check a real
process's streams and exit status. Data files are small CSVs written to tmp directories.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from s3vm import cli
from s3vm.core.registry import FORMULATIONS
from s3vm.core.settings import load_instance
from s3vm.solvers.registry import BACKENDS, installed_solvers, unavailable_reason

from contract import without_progress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOBS = os.path.join(ROOT, "instances", "blobs_small.toml")
MOONS = os.path.join(ROOT, "instances", "two_moons.toml")

LP_FORMULATIONS = ("rlp", "svm1")
ALL_FORMULATIONS = ("rlp", "svm1", "bd-mip")
CONTRACT_FIELDS = ("formulation", "solver", "status", "objective", "lower_bound", "labels",
                   "decision_values", "seconds")
STATUSES = ("optimal", "feasible", "time_limit", "infeasible", "error")
TABLE_COLUMNS = ("formulation", "solver", "status", "objective", "lower bound", "gap", "error",
                 "ROC AUC", "seconds")


# -- helpers ---------------------------------------------------------------------------------

def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``s3vm ARGV`` run in-process."""
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def solve_json(capsys, *argv):
    """Run ``s3vm solve ARGV --json``, check the one-JSON-object contract, return the object."""
    status, out, err = run(capsys, "solve", *argv, "--json")
    assert status == 0, err
    assert "Traceback" not in err
    assert out.endswith("\n") and out.count("\n") == 1, f"not one line of JSON: {out!r}"
    result = json.loads(out)
    assert isinstance(result, dict)
    return result


def assert_one_error_line(status, out, err):
    """Exit 2, nothing on stdout, one non-empty 's3vm: error:' line on stderr, no traceback."""
    assert status == 2, (status, out, err)
    assert out == ""
    assert "Traceback" not in err
    err = without_progress(err)  # a run slowed by load prints progress lines first
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), f"stderr is not one line: {err!r}"
    assert lines[0].startswith("s3vm: error:") and lines[0] != "s3vm: error:", lines[0]
    return lines[0]


def write_csv(path, header, rows):
    with open(path, "w") as fh:
        fh.write(",".join(header) + "\n")
        for row in rows:
            fh.write(",".join(str(v) for v in row) + "\n")
    return str(path)


def truth_of_unlabeled(path):
    instance, _ = load_instance(str(path))
    return np.asarray(instance.truth_U, dtype=int)


# (label, truth) per row: unlabeled rows (label 0) interleaved with labeled ones, and their true
# classes in no sorted order, so a result in any order but the file's shows.
ROW_PATTERN = [(1, 1), (0, -1), (0, 1), (-1, -1), (0, -1), (0, 1), (0, 1), (1, 1), (0, -1),
               (-1, -1), (0, 1), (0, -1), (1, 1), (0, -1), (-1, -1), (0, 1)]
CENTRES = {1: (0.0, 0.0), -1: (8.0, 6.0)}
CORNERS = np.array([(-0.5, -0.5), (0.5, -0.3), (0.0, 0.6)])


def separated_rows(pattern=ROW_PATTERN, seed=0):
    """x1, x2, label, truth: the labeled points of a class are the corners of a small triangle
    around its centre ((0, 0) for +1, (8, 6) for -1), its unlabeled points lie inside. So the
    truth is obvious: every hyperplane separating the labeled points (RLP takes any of them)
    puts each unlabeled point on its class's side, with |score| >= 1."""
    rng = np.random.default_rng(seed)
    rows, corner = [], {1: 0, -1: 0}
    for label, truth in pattern:
        if label:
            offset = CORNERS[corner[truth]]
            corner[truth] += 1
        else:
            offset = rng.dirichlet(np.ones(3)) @ CORNERS
        x = np.asarray(CENTRES[truth]) + offset
        rows.append((f"{x[0]:.4f}", f"{x[1]:.4f}", label, truth))
    return rows


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cli-data")


@pytest.fixture(scope="module")
def separated(data_dir):
    """Well separated clusters, unlabeled rows interleaved: truth is obvious."""
    return write_csv(data_dir / "separated.csv", ("x1", "x2", "label", "truth"), separated_rows())


@pytest.fixture(scope="module")
def overlapping(data_dir):
    """Overlapping Gaussian classes (4 labeled + 8 unlabeled each, shuffled): error > 0, AUC < 1."""
    rng = np.random.default_rng(3)
    rows = []
    for cls, mean in ((1, (0.0, 0.0)), (-1, (1.5, 1.0))):
        for i, x in enumerate(rng.normal(mean, 1.0, size=(12, 2))):
            rows.append((f"{x[0]:.6f}", f"{x[1]:.6f}", cls if i < 4 else 0, cls))
    rows = [rows[i] for i in rng.permutation(len(rows))]
    return write_csv(data_dir / "overlapping.csv", ("x1", "x2", "label", "truth"), rows)


def missing_solver():
    """A solver the registry knows but that cannot run here (None when all of them run)."""
    for name in ("cbc", "cplex", "glpk", "gurobi", "mosek"):
        if name in BACKENDS and unavailable_reason(name) is not None:
            return name
    return None


# -- 1. solve --json -------------------------------------------------------------------------

@pytest.mark.solver
@pytest.mark.parametrize("formulation", ALL_FORMULATIONS)
def test_solve_json_contract_and_file_order(capsys, separated, formulation):
    result = solve_json(capsys, separated, "--formulation", formulation)
    for key in CONTRACT_FIELDS:
        assert key in result, key
    assert result["formulation"] == formulation
    assert result["solver"] == "highs"
    assert result["status"] == "optimal"
    assert isinstance(result["objective"], float) and math.isfinite(result["objective"])
    assert result["lower_bound"] is None or result["lower_bound"] <= result["objective"] + 1e-6
    assert isinstance(result["seconds"], float) and result["seconds"] >= 0

    truth = truth_of_unlabeled(separated)
    labels = result["labels"]
    assert len(labels) == len(truth) == sum(1 for label, _ in ROW_PATTERN if label == 0)
    assert set(labels) <= {1, -1}
    # labels[k] is the class of the k-th unlabeled row of the file
    assert labels == truth.tolist()

    values = result["decision_values"]
    assert len(values) == len(truth)
    assert all(isinstance(v, float) and math.isfinite(v) for v in values)
    if formulation in LP_FORMULATIONS:
        assert [1 if v >= 0 else -1 for v in values] == labels
        assert "nodes" not in result
    else:
        assert isinstance(result["nodes"], int) and result["nodes"] >= 0
    for key in ("iterations", "nodes"):
        if key in result:
            assert isinstance(result[key], int) and result[key] >= 0


@pytest.mark.solver
@pytest.mark.parametrize("path, formulations", [(BLOBS, ALL_FORMULATIONS),
                                                (MOONS, LP_FORMULATIONS)])
def test_solve_json_with_instance_file(capsys, path, formulations):
    # two_moons with bd-mip is a minutes-long MIP (96 binaries): only the LPs here.
    instance, _ = load_instance(path)
    for formulation in formulations:
        result = solve_json(capsys, path, "-f", formulation)
        assert result["formulation"] == formulation
        assert result["status"] == "optimal"
        assert len(result["labels"]) == len(result["decision_values"]) == instance.u
        assert set(result["labels"]) <= {1, -1}


@pytest.mark.slow
@pytest.mark.solver
def test_command_line_overrides_instance_file(capsys, tmp_path):
    with open(BLOBS) as fh:
        text = fh.read()
    assert re.search(r"(?m)^nu = 1\.0$", text)
    data = os.path.join(ROOT, "instances", "data", "blobs_small.csv")
    edited = re.sub(r'(?m)^data = .*$', f"data = {json.dumps(data)}", text)
    edited = re.sub(r"(?m)^nu = 1\.0$", "nu = 0.01", edited)
    (tmp_path / "blobs_nu.toml").write_text(edited)

    base = solve_json(capsys, BLOBS, "-f", "bd-mip")
    overridden = solve_json(capsys, BLOBS, "-f", "bd-mip", "--nu", "0.01")
    from_file = solve_json(capsys, tmp_path / "blobs_nu.toml", "-f", "bd-mip")
    for r in (base, overridden, from_file):
        assert r["status"] == "optimal"
    assert overridden["objective"] == pytest.approx(from_file["objective"], rel=1e-7, abs=1e-9)
    assert abs(overridden["objective"] - base["objective"]) > 1e-3


# -- 2. compare ------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.solver
def test_compare_table(capsys, overlapping):
    from sklearn.metrics import roc_auc_score

    status, out, err = run(capsys, "compare", overlapping, "--formulations", "rlp,svm1,bd-mip")
    assert status == 0, err
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("formulation"))
    positions = [header.find(col) for col in TABLE_COLUMNS]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), header
    body = lines[lines.index(header) + 2:lines.index(header) + 5]
    assert [line.split()[0] for line in body] == ["rlp", "svm1", "bd-mip"]
    # Then each labeling proved optimal is named: the MIP's (its labels over the unlabeled rows).
    rest = lines[lines.index(header) + 5:]
    assert any(line.startswith("proved optimal by bd-mip") for line in rest)

    # the error and AUC cells agree with an independent evaluation of the JSON results
    status, out, _ = run(capsys, "compare", overlapping, "--formulations", "rlp,svm1,bd-mip",
                         "--json")
    truth = truth_of_unlabeled(overlapping)
    for line, result in zip(body, json.loads(out)):
        cells = line.split()
        error = np.mean(np.asarray(result["labels"]) != truth)
        auc = roc_auc_score(truth, result["decision_values"])
        assert f"{error:.2%}" in cells and f"{auc:.4f}" in cells, line


@pytest.mark.slow
@pytest.mark.solver
def test_compare_json(capsys, overlapping):
    from sklearn.metrics import roc_auc_score

    order = ["svm1", "bd-mip", "rlp"]
    status, out, err = run(capsys, "compare", overlapping, "--formulations", ",".join(order),
                           "--json")
    assert status == 0, err
    assert out.count("\n") == 1
    results = json.loads(out)
    assert isinstance(results, list)
    assert [r["formulation"] for r in results] == order
    truth = truth_of_unlabeled(overlapping)
    errors = []
    for r in results:
        for key in CONTRACT_FIELDS + ("error", "auc"):
            assert key in r, key
        assert r["status"] == "optimal"
        labels = np.asarray(r["labels"])
        assert labels.shape == truth.shape and set(labels.tolist()) <= {1, -1}
        error = float(np.mean(labels != truth))
        auc = float(roc_auc_score(truth, r["decision_values"]))
        assert r["error"] == pytest.approx(error, abs=1e-12)
        assert r["auc"] == pytest.approx(auc, abs=1e-12)
        errors.append(error)
    assert any(e > 0 for e in errors), "the overlapping data should make some error"


# -- 3. export -------------------------------------------------------------------------------

def read_with_highs(path):
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    lp = h.getLp()
    integers = sum(1 for v in lp.integrality_ if v != highspy.HighsVarType.kContinuous)
    return lp.num_col_, lp.num_row_, integers


@pytest.mark.solver
@pytest.mark.parametrize("formulation, fmt, explicit", [
    ("rlp", "mps", True), ("svm1", "lp", True), ("bd-mip", "mps", False), ("bd-mip", "lp", False),
    ("rlp", "lp", False),
])
def test_export(capsys, tmp_path, separated, formulation, fmt, explicit):
    target = tmp_path / f"model.{fmt}"
    argv = ["export", separated, "--formulation", formulation, "-o", target]
    if explicit:
        argv += ["--format", fmt]
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    assert "Traceback" not in err
    assert target.is_file() and target.stat().st_size > 0
    assert sorted(os.listdir(tmp_path)) == [target.name], "a temporary file was left behind"
    cols, rows, integers = read_with_highs(target)
    assert cols > 0 and rows > 0
    u = sum(1 for label, _ in ROW_PATTERN if label == 0)
    assert integers == (u if formulation == "bd-mip" else 0)


@pytest.mark.solver
@pytest.mark.parametrize("fmt", ["mps", "lp"])
def test_export_says_only_what_it_wrote(capsys, caplog, tmp_path, separated, fmt):
    """Regression (fixed in pyomo_formulation.py during this work): with format="lp" passed as a
    str to model.write, Pyomo's guess_format gave ProblemFormat.cpxlp for the ".lp" temporary
    file, and Pyomo logged "WARNING: Filename '.../tmpXXXX.lp' likely does not match specified
    file format (lp)" -- on stdout, naming a temporary file. Pyomo's log handler holds the
    stdout of import time, which capsys does not see, so the log records are checked too."""
    caplog.set_level(logging.WARNING)
    target = tmp_path / f"m.{fmt}"
    status, out, err = run(capsys, "export", separated, "-f", "bd-mip", "-o", target)
    assert status == 0, err
    assert out == ""
    assert err.splitlines() == [f"wrote {target} ({fmt})"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


# -- 4. list ---------------------------------------------------------------------------------

def test_list(capsys):
    status, out, err = run(capsys, "list")
    assert status == 0, err
    lines = out.splitlines()
    assert "formulations:" in lines and "solvers:" in lines
    forms = lines[lines.index("formulations:") + 1:lines.index("solvers:")]
    solvers = lines[lines.index("solvers:") + 1:]
    assert [line.split()[0] for line in forms] == list(FORMULATIONS)
    for name in ALL_FORMULATIONS:
        assert name in FORMULATIONS
    assert [line.split()[0] for line in solvers] == list(BACKENDS)
    for line in solvers:
        name = line.split()[0]
        if unavailable_reason(name) is None:
            assert line.split()[2] == "installed", line
        else:
            assert "unavailable" in line, line
    assert any(line.split()[0] == "highs" and "installed" in line.split() for line in solvers)


# -- 5. solvers and profiles -----------------------------------------------------------------

@pytest.mark.solver
def test_solver_option(capsys, separated):
    result = solve_json(capsys, separated, "-f", "bd-mip", "--solver", "highs",
                        "--time-limit", "30")
    assert result["solver"] == "highs" and result["status"] == "optimal"


@pytest.mark.solver
@pytest.mark.parametrize("formulation", ["rlp", "bd-mip"])
def test_every_installed_solver_runs(capsys, separated, formulation):
    """Regression (fixed in solvers/backends/pyomo/scip.py during this work): --solver scip exited 1
    with "internal error: TypeError: int() argument must be ..., not 'UninitializedConfigValue'"
    because the backend read the node count with ``results.extra_info.get("NNodes")``, which on
    Pyomo 6.10 returns the ConfigValue object, and Result.to_dict failed on int(nodes)."""
    truth = truth_of_unlabeled(separated)
    for name in installed_solvers("mip" if formulation == "bd-mip" else "lp"):
        status, out, err = run(capsys, "solve", separated, "-f", formulation, "--solver", name,
                               "--json")
        assert status == 0, f"{name}: {err}"
        result = json.loads(out)
        assert result["solver"] == name
        assert result["status"] == "optimal"
        assert result["labels"] == truth.tolist()


@pytest.mark.solver
def test_profile_file(capsys, tmp_path, separated):
    profile = tmp_path / "mine.toml"
    profile.write_text('solver = "highs"\ntime_limit = 30\n')
    for formulation in ("svm1", "bd-mip"):
        result = solve_json(capsys, separated, "-f", formulation, "--profile", profile)
        assert result["solver"] == "highs" and result["status"] == "optimal"
    # --solver may name the profile's own solver (another one is refused: test_fuzz_inputs.py)
    result = solve_json(capsys, separated, "-f", "rlp", "--profile", profile, "--solver", "highs")
    assert result["solver"] == "highs"


def test_profile_unknown_key(capsys, tmp_path, separated):
    profile = tmp_path / "typo.toml"
    profile.write_text('solver = "highs"\ntime_limt = 30\n')
    line = assert_one_error_line(*run(capsys, "solve", separated, "-f", "rlp", "--profile",
                                      profile, "--json"))
    assert "time_limt" in line


def test_profile_missing_file(capsys, tmp_path, separated):
    line = assert_one_error_line(*run(capsys, "solve", separated, "-f", "rlp", "--profile",
                                      tmp_path / "nope.toml", "--json"))
    assert "nope.toml" in line


def test_unknown_solver(capsys, separated):
    line = assert_one_error_line(*run(capsys, "solve", separated, "-f", "rlp", "--solver",
                                      "no-such-solver", "--json"))
    assert "no-such-solver" in line


@pytest.mark.parametrize("formulation, problem_class", [("rlp", "lp"), ("bd-mip", "mip")])
def test_missing_solver_names_installed_ones(capsys, separated, formulation, problem_class):
    name = missing_solver()
    if name is None:
        pytest.skip("every registered solver is available here")
    line = assert_one_error_line(*run(capsys, "solve", separated, "-f", formulation, "--solver",
                                      name, "--json"))
    assert name in line
    installed = installed_solvers(problem_class)
    assert installed, "highs at least should be installed"
    for other in installed:
        assert other in line, f"{other} not named in: {line}"


# -- 6. bad input ----------------------------------------------------------------------------

HEADER = ("x1", "x2", "label", "truth")


def _rows_with(row, column, value):
    rows = [list(r) for r in separated_rows()]
    rows[row][HEADER.index(column)] = value
    return rows


def _all_labeled():
    return [(x1, x2, truth, truth) for x1, x2, _, truth in separated_rows()]


def _no_negative_label():
    return [(x1, x2, 0 if label == -1 else label, truth)
            for x1, x2, label, truth in separated_rows()]


# name -> the CSV text (None: no file at all)
BAD_FILES = {
    "missing-file": None,
    "no-label-column": (("x1", "x2", "lab", "truth"), separated_rows()),
    "non-numeric": (HEADER, _rows_with(2, "x1", "abc")),
    "nan": (HEADER, _rows_with(2, "x2", "nan")),
    "empty-cell": (HEADER, _rows_with(2, "x2", "")),
    "inf": (HEADER, _rows_with(2, "x1", "inf")),
    "minus-inf": (HEADER, _rows_with(2, "x1", "-inf")),
    "label-2": (HEADER, _rows_with(2, "label", 2)),
    "label-0.5": (HEADER, _rows_with(2, "label", 0.5)),
    "no-labeled-negative": (HEADER, _no_negative_label()),
    "no-unlabeled": (HEADER, _all_labeled()),
    "truth-0": (HEADER, _rows_with(1, "truth", 0)),
    "empty-file": "",
    "header-only": (HEADER, []),
    "no-feature-column": (("label", "truth"), [(r[2], r[3]) for r in separated_rows()]),
}


def _write_bad(directory, name):
    spec = BAD_FILES[name]
    path = directory / f"{name}.csv"
    if spec is None:
        return str(path)
    if isinstance(spec, str):
        path.write_text(spec)
        return str(path)
    return write_csv(path, *spec)


@pytest.fixture
def outdir(tmp_path):
    """An empty folder for export targets: after a failed export it must still be empty."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def _run_command(capsys, command, data, outdir, *options):
    if command == "solve":
        return run(capsys, "solve", data, *options, "--json")
    return run(capsys, "export", data, *options, "-o", outdir / "model.mps")


@pytest.mark.parametrize("command", ["solve", "export"])
@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_data_file(capsys, tmp_path, outdir, command, name):
    data = _write_bad(tmp_path, name)
    assert_one_error_line(*_run_command(capsys, command, data, outdir, "-f", "bd-mip"))
    assert os.listdir(outdir) == []


def test_error_names_the_row_as_other_errors_do(capsys, tmp_path):
    """Row numbers in messages count data rows from 1 throughout. (Was a bug: a label or truth
    out of range was reported by Instance with its 0-based index, one less than the row a
    non-numeric value in the same row got; fixed in data.read_csv.)"""
    lines = {}
    for name in ("non-numeric", "label-2"):
        lines[name] = assert_one_error_line(
            *run(capsys, "solve", _write_bad(tmp_path, name), "-f", "rlp", "--json"))
    assert all("row 3" in line for line in lines.values()), lines
    line = assert_one_error_line(
        *run(capsys, "solve", _write_bad(tmp_path, "truth-0"), "-f", "rlp", "--json"))
    assert "row 2" in line


# options that both solve and export take
BAD_PROBLEM_OPTIONS = {
    "positives-above-u": ["--balance", "count", "--positives", "11"],
    "positives-negative": ["--balance", "count", "--positives", "-1"],
    "positives-text": ["--balance", "count", "--positives", "many"],
    "C-negative": ["--C", "-1"],
    "C-star-negative": ["--C-star", "-1"],
    "mu-negative": ["--mu", "-1"],
    "mu-zero": ["--mu", "0"],
    "nu-negative": ["--nu", "-1"],
    "sigma-negative": ["--sigma", "-1"],
    "sigma-zero": ["--sigma", "0"],
    "C-not-a-number": ["--C", "abc"],
    "C-nan": ["--C", "nan"],
    "nu-inf": ["--nu", "inf"],
    "kernel-poly": ["--kernel", "poly"],
    "balance-bad": ["--balance", "always"],
    "unknown-option": ["--gamma", "1"],
}


@pytest.mark.parametrize("command", ["solve", "export"])
@pytest.mark.parametrize("name", sorted(BAD_PROBLEM_OPTIONS))
def test_bad_problem_option(capsys, separated, outdir, command, name):
    assert_one_error_line(*_run_command(capsys, command, separated, outdir, "-f", "bd-mip",
                                        *BAD_PROBLEM_OPTIONS[name]))
    assert os.listdir(outdir) == []


@pytest.mark.parametrize("command", ["solve", "export"])
def test_unknown_formulation(capsys, separated, outdir, command):
    line = assert_one_error_line(*_run_command(capsys, command, separated, outdir,
                                               "-f", "no-such-formulation"))
    assert "no-such-formulation" in line
    assert os.listdir(outdir) == []


BAD_SOLVER_OPTIONS = {
    "unknown-solver": ["--solver", "no-such-solver"],
    "time-limit-zero": ["--time-limit", "0"],
    "time-limit-negative": ["--time-limit", "-5"],
    "time-limit-text": ["--time-limit", "soon"],
    "time-limit-nan": ["--time-limit", "nan"],
}


@pytest.mark.parametrize("formulation", ["rlp", "bd-mip"])
@pytest.mark.parametrize("name", sorted(BAD_SOLVER_OPTIONS))
def test_bad_solver_option(capsys, separated, formulation, name):
    assert_one_error_line(*run(capsys, "solve", separated, "-f", formulation,
                               *BAD_SOLVER_OPTIONS[name], "--json"))


def test_compare_checks_every_name_before_solving(capsys, separated):
    assert_one_error_line(*run(capsys, "compare", separated, "--formulations",
                               "rlp,no-such-formulation", "--json"))
    assert_one_error_line(*run(capsys, "compare", separated, "--formulations", " , ", "--json"))


def test_export_to_missing_directory(capsys, tmp_path, separated):
    """Was a bug: exit 1 "internal error: FileNotFoundError" from tempfile.mkstemp in
    PyomoFormulation._write; the export command (s3vm.cli.commands.export) now checks the directory
    first."""
    target = tmp_path / "no-such-dir" / "model.mps"
    line = assert_one_error_line(*run(capsys, "export", separated, "-f", "rlp", "-o", target))
    assert "no-such-dir" in line
    assert not (tmp_path / "no-such-dir").exists()


def test_export_onto_a_directory(capsys, tmp_path, separated):
    target = tmp_path / "adir"
    target.mkdir()
    assert_one_error_line(*run(capsys, "export", separated, "-f", "rlp", "--format", "mps",
                               "-o", target))
    assert os.listdir(target) == [] and sorted(os.listdir(tmp_path)) == ["adir"]


@pytest.mark.parametrize("argv", [
    ["--format", "nl", "-o", "model.nl"],      # a format the formulation does not write
    ["--format", "gams", "-o", "model.mps"],
    ["-o", "model.xyz"],                        # no --format and an unknown extension
    ["-o", "model"],                            # no --format and no extension
])
def test_export_unsupported_format(capsys, outdir, separated, argv):
    argv = [str(outdir / a) if a.startswith("model") else a for a in argv]
    assert_one_error_line(*run(capsys, "export", separated, "-f", "bd-mip", *argv))
    assert os.listdir(outdir) == []


# -- a real process --------------------------------------------------------------------------

def _command():
    script = os.path.join(os.path.dirname(sys.executable), "s3vm")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "s3vm.cli"]


def _env():
    env = dict(os.environ)
    env.pop("S3VM_DEBUG", None)
    return env


@pytest.mark.subprocess
@pytest.mark.slow
def test_process_solve_json(separated):
    proc = subprocess.run(_command() + ["solve", separated, "--formulation", "svm1", "--json"],
                          capture_output=True, text=True, timeout=60, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    # nothing but progress lines, which a solve slowed by load prints after 5 s
    assert without_progress(proc.stderr) == ""
    assert proc.stdout.count("\n") == 1
    result = json.loads(proc.stdout)
    assert result["formulation"] == "svm1" and result["status"] == "optimal"
    assert result["labels"] == truth_of_unlabeled(separated).tolist()


@pytest.mark.subprocess
@pytest.mark.slow
def test_process_bad_input(tmp_path, separated):
    missing = subprocess.run(_command() + ["solve", tmp_path / "nope.csv", "-f", "rlp", "--json"],
                             capture_output=True, text=True, timeout=60, env=_env())
    export = subprocess.run(_command() + ["export", separated, "-f", "bd-mip", "-o",
                                          tmp_path / "missing" / "model.mps"],
                            capture_output=True, text=True, timeout=60, env=_env())
    for proc in (missing, export):
        assert_one_error_line(proc.returncode, proc.stdout, proc.stderr)
    assert os.listdir(tmp_path) == []


@pytest.mark.subprocess
@pytest.mark.slow
def test_process_stdout_closed_early(separated):
    """`s3vm ... | head -c 10`: the reader goes away. Was a bug: exit 1 with "internal error:
    BrokenPipeError" (or Python's "Exception ignored ... BrokenPipeError" at exit); cli.main now
    flushes stdout itself and stops quietly with status 141 (128 + SIGPIPE)."""
    proc = subprocess.Popen(_command() + ["solve", separated, "-f", "rlp", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    proc.stdout.close()  # before the child has imported anything, so its write must fail
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 141, err
    assert without_progress(err) == ""
