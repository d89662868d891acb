"""The defects found by a campaign of malformed inputs, time limits, signals and memory on
2026-11-23, each reproduced as it was reported: every test here failed before its fix.

Signals, hangs and time limits are checked on the real console script in a subprocess; the
rest in-process (``s3vm.cli.main`` returns the exit status).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from s3vm import api, cli
from s3vm.core.settings import Settings
from s3vm.data.generators import two_moons
from s3vm.data.instance import Instance
from s3vm.solvers.errors import InputError
from s3vm.solvers.registry import installed_solvers
from s3vm.solvers.results import Result

from contract import (
    BLOBS,
    BUILD_PHASES,
    Signalled,
    check_error_line,
    check_result_object,
    environment,
    leftovers,
    parse_json_output,
    run_cli,
)
from reference import labeling_objective_reference

needs_scip = pytest.mark.skipif("scip" not in installed_solvers("miqp"),
                                reason="needs SCIP (pip install s3vm[scip])")


def run(capsys, *argv):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def write(path, text, mode="w"):
    with open(path, mode) as fh:
        fh.write(text)
    return str(path)


def blobs_csv(tmp_path, header="x1,x2,label,truth", extra=lambda row: ""):
    rows = open(os.path.join(os.path.dirname(BLOBS), "data", "blobs_small.csv")).read()
    body = rows.splitlines()[1:]
    return write(tmp_path / "data.csv",
                 header + "\n" + "\n".join(r + extra(r) for r in body) + "\n")


# -- wrong answers reported as right ---------------------------------------------------------

@pytest.mark.parametrize("header, extra", [
    ("x1,x2,label,truth,truth", lambda row: "," + row.split(",")[3]),
    ("x1,x2,label,truth,label", lambda row: "," + row.split(",")[2]),
])
def test_a_repeated_truth_or_label_column_is_refused_not_read_as_a_feature(
        capsys, tmp_path, header, extra):
    # x1,label,truth,truth: pandas renamed the second 'truth' to 'truth.1', a feature carrying
    # the hidden classes into the model, and the run was 'optimal'.
    path = blobs_csv(tmp_path, header, extra)
    status, out, err = run(capsys, "solve", path, "-f", "rlp", "--json")
    check_error_line(status, out, err)
    assert "appears more than once" in err


@pytest.mark.parametrize("entry, flag", [('bias = "no"', "--no-bias"),
                                         ('hard_margin = "no"', "--hard-margin")])
def test_toml_booleans_are_type_checked(capsys, tmp_path, entry, flag):
    # 'bias = "no"' left the bias on and 'hard_margin = "no"' turned the hard margin on. Fixed
    # before this branch by the declarative settings; kept as a regression test.
    data = blobs_csv(tmp_path)
    toml = write(tmp_path / "inst.toml", f'data = "{os.path.basename(data)}"\n{entry}\n')
    status, out, err = run(capsys, "solve", toml, "-f", "sdp", "--json")
    check_error_line(status, out, err)
    assert flag in err and "true or false" in err


@pytest.mark.solver
def test_features_near_1e300_are_refused_with_the_scaling_that_fixes_them(capsys, tmp_path):
    # They gave a NaN solution reported 'optimal' with every label -1.
    path = write(tmp_path / "huge.csv", "x1,x2,label\n1e300,1e300,1\n-1e300,2e300,-1\n"
                                        "3e300,1e299,0\n4e299,1e300,0\n-2e300,-1e300,0\n")
    status, out, err = run(capsys, "solve", path, "-f", "rlp", "--json")
    check_error_line(status, out, err)
    assert "--scale standard" in err
    status, out, err = run(capsys, "solve", path, "-f", "rlp", "--json", "--scale", "standard")
    assert status == 0, err
    result = parse_json_output(out)
    check_result_object(result, u=3)
    assert result["decision_values"] is not None


def test_a_solution_with_nan_values_is_a_numerical_failure_never_a_solution():
    from s3vm.core.pipeline import check_result

    instance = Instance(np.array([[0.0], [1.0], [2.0]]), np.array([1, -1, 0]))
    result = Result("rlp", "highs", "optimal", objective=1.0, lower_bound=1.0,
                    labels=np.array([-1]), decision_values=np.array([np.nan]))
    check_result(result, instance)
    assert result.status == "error" and result.labels is None and result.objective is None
    assert "numerical failure" in result.message and "--scale" in result.message
    wrong = Result("rlp", "highs", "optimal", objective=1.0, labels=np.array([1, 1]))
    check_result(wrong, instance)
    assert wrong.status == "error" and wrong.labels is None


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", ["sdpa", "scs", "clarabel"])
def test_sdp_never_reports_a_bound_above_its_objective(solver):
    if solver not in installed_solvers("sdp"):
        pytest.skip(f"{solver} is not installed")
    # blobs_small: 'optimal' with lower_bound 1.2938040 above the objective 1.2938033 (an
    # inaccurate solve). Both ends are now certified: the bound by a feasible dual point, the
    # objective D(y) by a feasible primal point of the SVM.
    result = api.solve(BLOBS, "sdp", solver=solver)
    assert result.objective is not None and result.lower_bound is not None
    assert result.lower_bound <= result.objective
    assert result.status in ("optimal", "feasible")


@pytest.mark.solver
@pytest.mark.slow
def test_sdp_with_C_1e12_gives_a_result_with_an_objective_or_says_what_to_change():
    # 'feasible' with a null objective: a solution reported without its value.
    for solver in ("scs", "clarabel", "sdpa"):
        if solver not in installed_solvers("sdp"):
            continue
        result = api.solve(BLOBS, "sdp", solver=solver, C=1e12)
        if result.status in ("optimal", "feasible"):
            assert result.objective is not None and result.labels is not None
            assert result.lower_bound is None or result.lower_bound <= result.objective
        else:
            assert result.status == "error" and result.labels is None
            assert "solver=" in result.message or "C=" in result.message


# -- exit 1 where bad input deserves exit 2 --------------------------------------------------

@pytest.mark.parametrize("formulation", ["bb", "vs3vm", "sdp", "sdp-lowrank"])
def test_sigma_1e_300_is_bad_input(capsys, formulation):
    # ZeroDivisionError (exit 1) in bb, vs3vm, sdp and sdp-lowrank.
    status, out, err = run(capsys, "solve", BLOBS, "-f", formulation, "--kernel", "rbf",
                           "--sigma", "1e-300", "--json")
    check_error_line(status, out, err)
    assert "--sigma" in err


def hard_margin_value(X, y) -> float:
    """min 1/2 |w|^2 s.t. y_i (w.x_i + b) >= 1 (inf when y does not separate X), by CVXPY and
    Clarabel: Problem 1's J as C grows without bound, written apart from the package."""
    import cvxpy as cp

    w, b = cp.Variable(X.shape[1]), cp.Variable()
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)),
                         [cp.multiply(y, X @ w + b) >= 1])
    problem.solve(solver="CLARABEL")
    return problem.value if problem.status == "optimal" else math.inf


@pytest.mark.slow
def test_bb_with_C_1e12_is_bad_input_with_advice_or_the_enumerated_optimum(capsys):
    # "Newton did not converge": an internal error (exit 1). Where the arithmetic holds (as on
    # some machines it does), bb may prove the optimum instead: then it must be the optimum of
    # enumeration, J at C = 1e12 being the hard-margin SVM's value to ~1e-12 on the labelings
    # that separate the points (every other one costs ~C).
    status, out, err = run(capsys, "solve", BLOBS, "-f", "bb", "--C", "1e12", "--json", "-q")
    if status == 2:
        check_error_line(status, out, err)
        assert "--C" in err
        return
    assert status == 0, err
    result = parse_json_output(out)
    check_result_object(result, u=8)
    instance, _ = api.load(BLOBS)
    X, y = instance.X, instance.label.astype(float)
    unl = instance.label == 0

    def value(labels_U):
        full = y.copy()
        full[unl] = labels_U
        return hard_margin_value(X, full)

    best = min(value(np.array(signs, dtype=float))
               for signs in itertools.product((-1, 1), repeat=int(unl.sum())))
    assert math.isfinite(best)
    # a proof is the optimum; any other answer is a real labeling, no better than it
    assert result["status"] in ("optimal", "feasible", "time_limit"), result
    assert result["objective"] is not None
    if result["status"] == "optimal":
        assert result["objective"] == pytest.approx(best, rel=1e-5)
    assert result["objective"] >= best * (1 - 1e-5)
    assert value(np.asarray(result["labels"], dtype=float)) == pytest.approx(
        result["objective"], rel=1e-5)


@pytest.mark.parametrize("content", [b"data = 5\n", b"data = true\n", b'data = "\xff\xfe"\n',
                                     b"\xff\xfe\x00d\x00a\x00t\x00a\x00"])
def test_instance_files_of_the_wrong_type_or_encoding_are_bad_input(capsys, tmp_path, content):
    # 'data = 5' gave a TypeError, a non-UTF-8 file a UnicodeDecodeError (both exit 1).
    path = write(tmp_path / "bad.toml", content, mode="wb")
    status, out, err = run(capsys, "solve", path, "-f", "rlp", "--json")
    check_error_line(status, out, err)


def test_an_instance_file_naming_itself_as_data_is_bad_input(capsys, tmp_path):
    path = write(tmp_path / "self.toml", 'data = "self.toml"\n')
    status, out, err = run(capsys, "solve", path, "-f", "rlp", "--json")
    check_error_line(status, out, err)
    assert "itself" in err


@pytest.mark.solver
def test_a_solver_option_the_solver_refuses_is_bad_input(capsys, tmp_path):
    # max_iters = -1 for SCS: a ValueError (exit 1); the same mistake for HiGHS exits 2.
    profile = write(tmp_path / "scs.toml", 'solver = "scs"\n[options]\nmax_iters = -1\n')
    status, out, err = run(capsys, "solve", BLOBS, "-f", "sdp", "--profile", profile, "--json")
    check_error_line(status, out, err)
    assert "max_iters" in err


def test_no_warning_is_printed_before_the_error_line(capsys, tmp_path):
    # numpy's RuntimeWarnings came before the message (stderr must be the one line).
    path = write(tmp_path / "big.csv", "x1,label\n1e308,1\n-1e308,-1\n1e308,0\n")
    status, out, err = run(capsys, "solve", path, "-f", "bb", "--json")
    check_error_line(status, out, err)
    status, out, err = run(capsys, "solve", path, "-f", "bb", "--json", "--scale", "standard")
    assert "Warning" not in err


# -- the deadlock ----------------------------------------------------------------------------

@pytest.mark.wallclock
@pytest.mark.subprocess
@pytest.mark.slow
@needs_scip
def test_scip_cannot_block_on_its_log():
    # SCIP wrote its log into Pyomo's capture pipe while holding the GIL: the run never
    # returned, deaf to its time limit and to Ctrl-C.
    proc, wall = timed_cli(["solve", BLOBS, "-f", "l2-miqp", "--C", "1e12", "--time-limit",
                            "10", "--json", "-q"], timeout=90)
    assert wall < 60
    assert proc.returncode == 0, proc.stderr
    result = parse_json_output(proc.stdout)
    check_result_object(result, u=8)
    assert within_limit(result, 10, wall)
    # --verbose puts SCIP's log on stderr directly (a pipe this test drains, never one of ours).
    # The command's clock counts from its process's start: SCIP runs (and logs) only once the
    # start-up is over (at load 10 the start-up alone passed a 5 s limit, and no SCIP line
    # came), so a run whose limit its start-up used up is run again with twice the limit.
    limit = round(1.5 * result["info"]["seconds_before_step"] + 5, 2)
    for _ in range(3):
        proc, wall = timed_cli(["solve", BLOBS, "-f", "l2-miqp", "--C", "1e12", "--time-limit",
                                str(limit), "--json", "--verbose"], timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        verbose = parse_json_output(proc.stdout)
        assert within_limit(verbose, limit, wall)
        if not (verbose["message"] or "").startswith("time limit reached while"):
            break  # SCIP ran
        limit *= 2
    assert "SCIP" in proc.stderr, (verbose["message"], proc.stderr[-2000:])


# -- limits and signals ----------------------------------------------------------------------

def within_limit(result: dict, limit: float, wall: float) -> bool:
    """Whether a command's ``seconds`` hold ``limit`` within 10% + 1 s.

    Its clock counts from the process's start, and starting Python and importing the solver
    library cannot be cut short: when they alone used the limit up (seconds on a loaded
    machine), the command returns at once after them, without solving. That is the one
    overrun allowed, and it is not taken on the command's word: its start-up
    (``seconds_before_step``) and its ``seconds`` must lie within ``wall``, the seconds the
    test measured around the whole process, the result must say that the limit was reached
    before the solve began, and nothing may run after it.

    The limit's promise is 5% + 0.5 s; a loaded 2-core machine (8 suites beside each other)
    cannot hold that, so 10% + 1 s is asserted.

    The process's start is known to one clock tick (``/proc/self/stat`` counts it in
    ``SC_CLK_TCK`` steps, rounded down), so the command's ``seconds`` may exceed ``wall`` by up
    to a tick (seen: 3.334775 s against 3.334038 s on a quiet machine).
    """
    seconds, before = result["seconds"], result["info"]["seconds_before_step"]
    tick = 1 / os.sysconf("SC_CLK_TCK")
    assert 0 <= before <= seconds <= wall + tick, (before, seconds, wall)
    if seconds <= limit * 1.1 + 1:
        return True
    started_late = (before >= limit and result["status"] == "time_limit"
                    and (result["message"] or "").startswith("time limit reached while"))
    return started_late and seconds - before <= 0.5


def timed_cli(args, **kwargs):
    """(process, wall seconds) of the console script run in a subprocess."""
    start = time.perf_counter()
    proc = run_cli(args, **kwargs)
    return proc, time.perf_counter() - start


@pytest.fixture(scope="module")
def moons3010(tmp_path_factory):
    path = tmp_path_factory.mktemp("moons") / "moons3010.csv"
    two_moons(5, 1500, seed=1).to_csv(str(path))
    return str(path)


@pytest.mark.wallclock
@pytest.mark.subprocess
@pytest.mark.slow
def test_model_building_is_inside_the_time_limit(moons3010):
    # vs3vm --kernel rbf on 3,010 points with --time-limit 3 ran 26-45 s (building the LP of
    # 9 million kernel values) and returned no incumbent.
    proc, wall = timed_cli(["solve", moons3010, "-f", "vs3vm", "--kernel", "rbf", "--sigma",
                            "0.5", "--time-limit", "3", "--json", "-q"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = parse_json_output(proc.stdout)
    check_result_object(result, u=3000)
    assert result["status"] == "time_limit"
    assert within_limit(result, 3, wall)
    # The command's clock counts from its process's start: the wall clock adds only its exit
    # (and the process's own start before its clock, 2 s at most on a loaded machine).
    assert wall < result["seconds"] + 2


@pytest.mark.wallclock
@pytest.mark.subprocess
@pytest.mark.slow
def test_sdp_subspace_holds_its_time_limit(tmp_path):
    # sdp-subspace ran 17 s for a 3 s limit.
    path = str(tmp_path / "moons.csv")
    two_moons(5, 400, seed=2).to_csv(path)
    proc, wall = timed_cli(["solve", path, "-f", "sdp-subspace", "--kernel", "rbf", "--sigma",
                            "0.5", "--time-limit", "3", "--json", "-q"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = parse_json_output(proc.stdout)
    check_result_object(result, u=800)
    assert within_limit(result, 3, wall)


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("args, after, signum, status", [
    (["-f", "bb"], 3, signal.SIGTERM, 143), (["-f", "bb"], 3, signal.SIGINT, 130),
    # bb-mip ended with "internal error: RuntimeError" when the signal cancelled a leaf's LP;
    # 8 s: after its starting heuristic (two LPs) even on a loaded machine.
    (["-f", "bb-mip", "--kernel", "rbf"], 8, signal.SIGINT, 130),
    (["-f", "bb-mip", "--kernel", "rbf"], 8, signal.SIGTERM, 143)])
def test_a_signal_prints_the_best_result_so_far(args, after, signum, status):
    # SIGTERM ended every formulation with no output (bb's incumbent lost).
    run = Signalled(["solve", "heart", *args, "--json", "-q"], signum, after=after)
    assert run.returncode == status, run.stderr
    assert run.after_signal < 4
    result = parse_json_output(run.stdout)
    check_result_object(result, u=267)
    assert result["decision_values"] is not None
    assert result["labels"] is not None and result["objective"] is not None
    assert "interrupted" in result["message"]
    assert run.stderr.strip().splitlines()[-1] == \
        f"s3vm: interrupted by {signal.Signals(signum).name}"


@pytest.mark.wallclock
@pytest.mark.subprocess
@pytest.mark.slow
def test_ctrl_c_on_a_mip_returns_at_once_with_its_incumbent():
    # Ctrl-C on bd-mip (heart) was ignored for over 3 minutes.
    run = Signalled(["solve", "heart", "-f", "bd-mip", "--json", "-q"], signal.SIGINT,
                    after=4)
    assert run.returncode == 130, run.stderr
    assert run.after_signal < 5  # seconds, on a loaded 2-core machine
    result = parse_json_output(run.stdout)
    check_result_object(result, u=267)
    assert "interrupted by SIGINT" in result["message"]


@pytest.mark.wallclock
@pytest.mark.subprocess
@pytest.mark.slow
def test_ctrl_c_on_an_sdp_solve_is_an_interruption_not_a_solver_failure():
    # Ctrl-C on sdp gave 'status error', "SCS failed", exit 0 (SCS catches SIGINT itself).
    run = Signalled(["solve", "sdp_2moons", "-f", "sdp", "--solver", "scs", "--json", "-q"],
                    signal.SIGINT, after=3)
    assert run.returncode == 130, run.stderr
    assert run.after_signal < 5  # seconds, on a loaded 2-core machine
    result = parse_json_output(run.stdout)
    check_result_object(result, u=210)
    assert "interrupted by SIGINT" in result["message"]
    assert "failed" not in result["message"]


@pytest.mark.subprocess
@pytest.mark.slow
def test_an_interrupted_export_leaves_no_file(tmp_path):
    # An interrupted export left a partial temporary file beside the target.
    data = str(tmp_path / "moons.csv")
    two_moons(5, 700, seed=3).to_csv(data)
    target = tmp_path / "model.mps"
    import subprocess

    from contract import command, environment

    proc = subprocess.Popen(command() + ["export", data, "-f", "vs3vm", "--kernel", "rbf",
                                         "-o", str(target)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment())
    deadline = time.perf_counter() + 120
    # Wait for the temporary file (the write has begun), then stop the process.
    while time.perf_counter() < deadline and proc.poll() is None:
        if len(leftovers(tmp_path, keep=["moons.csv"])):
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the export ended before it could be interrupted"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert leftovers(tmp_path, keep=["moons.csv"]) == []


@pytest.mark.parametrize("which", ["tree", "export", "export-csv"])
def test_an_output_that_is_an_input_file_is_refused(capsys, tmp_path, which):
    # --tree or -o equal to the input file overwrote the data.
    data = blobs_csv(tmp_path)
    toml = write(tmp_path / "inst.toml", 'data = "data.csv"\n')
    before = {p: open(p).read() for p in (data, toml)}
    if which == "tree":
        args = ["solve", toml, "-f", "bb", "--tree", data, "--json"]
    elif which == "export":
        args = ["export", data, "-f", "rlp", "-o", data, "--format", "lp"]
    else:
        args = ["export", toml, "-f", "rlp", "-o", data, "--format", "mps"]
    status, out, err = run(capsys, *args)
    check_error_line(status, out, err)
    assert "input" in err
    assert {p: open(p).read() for p in (data, toml)} == before


@pytest.mark.solver
@pytest.mark.slow
def test_an_infeasible_subspace_says_what_to_change():
    # sdp-lowrank on heart returned 'infeasible' ("its low-rank dual is unbounded") with no
    # advice; the count is met by labelings, so the problem is not infeasible: the subspace is,
    # and the message says so with what to change, beside labels that meet the count.
    instance, settings = api.load("heart")
    result = api.solve(instance, "sdp-lowrank", settings)
    assert result.status == "feasible"
    assert int((result.labels == 1).sum()) == settings.positive_count(instance)
    assert "subspace" in result.message
    assert "balance='none'" in result.message and "dim=" in result.message


# -- the API ---------------------------------------------------------------------------------

def test_complex_features_are_refused_not_cut_to_their_real_part():
    X = np.array([[1 + 2j, 0], [0, 1], [1, 1]])
    with pytest.raises(InputError, match="complex"):
        Instance(X, np.array([1, -1, 0]))
    with pytest.raises(InputError, match="complex"):
        Instance(np.ones((3, 1)), np.array([1, -1, 0], dtype=complex))


def test_text_features_are_refused():
    with pytest.raises(InputError, match="text"):
        Instance(np.array([["1.5"], ["2"], ["3"]]), np.array([1, -1, 0]))


@pytest.mark.solver
def test_float32_settings_and_features_are_accepted_like_float64():
    instance = Instance(np.array([[0.0, 1], [1, 0], [0.2, 0.9], [0.9, 0.1]], dtype=np.float32),
                        np.array([1, -1, 0, 0]))
    a = api.solve(instance, "svm1", mu=np.float32(0.5))
    b = api.solve(instance, "svm1", mu=0.5)
    assert a.status == b.status == "optimal" and list(a.labels) == list(b.labels)


def test_bad_settings_objects_are_input_errors():
    with pytest.raises(InputError, match="Settings"):
        api.solve(BLOBS, "rlp", settings={"C": 1})
    with pytest.raises(InputError):
        Settings(C=float("nan"))


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("command", [["solve", BLOBS, "-f", "vs3vm", "--profile"], ["bench"]])
def test_a_non_utf8_profile_or_suite_file_is_one_line(tmp_path, command):
    # Instance files were checked for this; a profile or suite file gave "internal error:
    # UnicodeDecodeError" (all three now read TOML through one function).
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'solver = "\xff\xfe"\n')
    proc = run_cli(command + [str(bad)])
    check_error_line(proc.returncode, proc.stdout, proc.stderr)
    assert "not UTF-8 text" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_a_signal_a_library_turns_into_its_own_error_is_still_an_interruption(monkeypatch,
                                                                           capsys, tmp_path):
    # Pyomo's writers catch the interrupt a SIGTERM raises in the middle of an export and raise
    # "DeveloperError: Internal Pyomo implementation error" instead: that was exit 1, "internal
    # error", where the signal's 143 was due.
    def export(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except KeyboardInterrupt:
            raise RuntimeError("Internal implementation error") from None

    monkeypatch.setattr(api, "export", export)
    status = cli.main(["export", "two_moons", "-f", "bd-mip", "-o", str(tmp_path / "m.mps")])
    err = capsys.readouterr().err
    assert status == 143, err
    assert err.strip() == "s3vm: interrupted by SIGTERM"
    assert list(tmp_path.iterdir()) == []


# -- interrupts keep the best labels (issue 29) ----------------------------------------------

def _signal_after_line(args, marker: str, signum, delay: float, timeout: float = 180):
    """Run the console script, send ``signum`` ``delay`` seconds after ``marker`` appears on its
    stderr (a solver's own log line: the solve is in that phase, whatever the load), and return
    (exit status, stdout, seconds from the signal to the exit)."""
    import subprocess
    import threading

    from contract import command, environment

    proc = subprocess.Popen(command() + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=environment())
    seen = threading.Event()
    out: list = []

    def read_stderr():
        for line in proc.stderr:
            if marker in line:
                seen.set()
        seen.set()  # the process ended

    def read_stdout():
        out.append(proc.stdout.read())

    threading.Thread(target=read_stderr, daemon=True).start()
    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()
    assert seen.wait(timeout), f"no {marker!r} within {timeout} s"
    assert proc.poll() is None, "the solve ended before its phase"
    time.sleep(delay)
    sent = time.perf_counter()
    proc.send_signal(signum)
    proc.wait(timeout=timeout)
    after = time.perf_counter() - sent
    reader.join(timeout)
    return proc.returncode, out[0] if out else "", after


@pytest.mark.subprocess
@pytest.mark.slow
def test_bd_mip_interrupted_in_its_mip_keeps_its_incumbent_within_a_second():
    # SIGINT while HiGHS was in the MIP's root (cuts and heuristics, where it does not check
    # its interrupt for seconds) gave status "error", an objective and "labels": null, 2-2.7 s
    # after the signal: the labels now reach the clock with every incumbent, and the process
    # exits without tearing the solver libraries down.
    status, out, after = _signal_after_line(
        ["solve", "heart", "-f", "bd-mip", "--kernel", "rbf", "--sigma", "3", "--json",
         "--verbose"], "Solving MIP model", signal.SIGINT, delay=1.5)
    assert status == 130, out[-300:]
    result = parse_json_output(out)
    check_result_object(result, u=267)
    assert result["status"] == "feasible"
    assert result["labels"] is not None and result["objective"] is not None
    assert result["decision_values"] is not None
    assert after < 1.0, after


def _every_formulation():
    from s3vm.core.registry import formulation_names

    return formulation_names()


#: Seconds from SIGINT to the exit that an interrupt may take, on a loaded 2-core machine. The
#: promise is "within a second": the worker gets 0.4 s once a complete answer is at hand, which
#: the solve holds from before its step (the fallback labels with their objective). Measured on
#: heart: 0.06-0.50 s from the signal to the exit at load 3-4, every formulation and phase
#: (docs/benchmarks/limits.md, "Interrupts"). Twice the promise leaves a loaded machine the time to
#: start the signalled process's answer and exit.
INTERRUPT_SECONDS = 2.0


#: The formulations that report no build phase, and why: the signal of their "build" case
#: could not be sent, and a case that sends no signal checks nothing.
NO_BUILD_PHASE = {
    "switching": "numpy from its first step: label switching is its only phase",
    "primal-tsvm": "numpy from its first step: label switching is its only phase",
}

#: A console script whose solve sends SIGINT to the command's process at the first progress
#: report of a phase (``build``: a phase of BUILD_PHASES, given as JSON; ``solve``: any other), from
#: inside the solve (its child process): every case is signalled in its phase, whatever the
#: load, fast formulations included. It writes one line ``s3vm-test-signal {json}`` first:
#: the phase, the time, and the answer held on the solve's clock at that moment (the
#: supervised fallback's labels and objective, computed before the step).
_SIGNAL_IN_PHASE = """
import json, os, signal, sys, time
from s3vm.cli.main import console_main
from s3vm.solvers.runtime import clock as clock_module
from s3vm.solvers.runtime import supervisor
MAIN, WANT, BUILD_PHASES = os.getpid(), sys.argv.pop(1), tuple(json.loads(sys.argv.pop(1)))
sent = []
report = clock_module.Clock.report
def signalling_report(self, **fields):
    report(self, **fields)
    phase = fields.get("phase")
    in_solve = os.getpid() != MAIN or not supervisor._isolate  # not the parent's copy
    if phase and in_solve and not sent and phase.startswith(BUILD_PHASES) == (WANT == "build"):
        sent.append(phase)
        held = self.held()
        labels = held.get("labels")
        note = {"phase": phase, "at": time.time(),
                "held_labels": None if labels is None else [int(v) for v in labels],
                "held_objective": held.get("objective"),
                "answer_at_hand": self.answer_at_hand()}
        sys.stderr.write("s3vm-test-signal " + json.dumps(note) + "\\n")
        sys.stderr.flush()
        os.kill(MAIN, signal.SIGINT)
clock_module.Clock.report = signalling_report
sys.argv[0] = "s3vm"
console_main()
"""


def _interrupt_cases():
    return [pytest.param(name, phase, id=f"{name}-{phase}") for name in _every_formulation()
            for phase in ("build", "solve")
            if not (phase == "build" and name in NO_BUILD_PHASE)]


@pytest.mark.solver
@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("name, phase", _interrupt_cases())
def test_an_interrupt_keeps_labels_with_their_objective(name, phase):
    # Interrupted while its model was built (or its SDP solved), l2-miqp and the SDPs answered
    # status "error" without labels; bd-mip in its MIP lost its labels; then bb-mip, sdp and
    # l2-miqp, stopped in a build or an SDP solve, waited 2 s and scored their fallback
    # labels afterwards (7.6, 5.3 and 3.0 s at load 10). Every formulation now answers its best
    # labeling (its own, or the supervised SVM's held before the step) with that labeling's
    # objective, checked here against an independent computation (tests/reference.py; linear
    # kernel, so that J and D(y) have a primal or box-constrained dual for L-BFGS-B).
    #
    # Every case sends its signal, from inside the solve at the start of its phase (before, 6
    # of the 28 cases ended before a progress line of their phase and sent none), and the
    # fallback is checked where it is made, not by the time the answer took (with the held
    # fallback removed, the 2 s bound let 8 of the 14 build cases pass).
    from s3vm.core.registry import formulation_class

    started = time.time()
    done = subprocess.run([sys.executable, "-c", _SIGNAL_IN_PHASE, phase,
                           json.dumps(BUILD_PHASES), "solve", "heart", "-f", name, "--kernel",
                           "linear", "--json"],
                          capture_output=True, text=True, timeout=300, env=environment())
    ended = time.time()
    notes = [json.loads(line.split(" ", 1)[1]) for line in done.stderr.splitlines()
             if line.startswith("s3vm-test-signal ")]
    assert len(notes) == 1, f"no signal sent in the {phase} phase: {done.stderr[-600:]}"
    note = notes[0]
    assert started <= note["at"] <= ended
    # The fallback is held on the clock before the step: its labels always (heart is small
    # enough to score without a limit), and with the objective a complete answer (but for rlp
    # and svm1, whose objective has no term of the unlabeled rows).
    scored = name not in ("rlp", "svm1")
    assert note["held_labels"] is not None and len(note["held_labels"]) == 267, note["phase"]
    assert (note["held_objective"] is not None) == scored, note
    if phase == "build":
        assert note["answer_at_hand"] == scored, note

    # The signal reached the command while its solve ran: it answers and exits 130.
    assert done.returncode == 130, done.stderr[-600:]
    result = parse_json_output(done.stdout)
    check_result_object(result, u=267)
    assert result["labels"] is not None, result["message"]
    if "interrupted by SIGINT" in (result["message"] or ""):
        assert result["status"] in ("feasible", "optimal"), result["message"]
        if result["status"] == "feasible":
            assert ended - note["at"] < INTERRUPT_SECONDS, (ended - note["at"], note["phase"])
    else:
        # The solve finished before the signal stopped it: its own answer, verified below.
        assert result["status"] in ("optimal", "feasible"), result["message"]
    if result["info"].get("labels_from") == "supervised SVM":
        # The answer is the fallback held before the step, labels and objective.
        assert result["labels"] == note["held_labels"], result["message"]
        if scored:
            assert result["objective"] == pytest.approx(note["held_objective"], rel=1e-9)
    if not scored:  # no term of the unlabeled rows, so no labeling's value
        return
    assert result["objective"] is not None, result["message"]
    instance, _ = api.load("heart")
    settings = Settings(**result["info"]["settings"])
    expected = labeling_objective_reference(formulation_class(name).problem, instance, settings,
                                            np.asarray(result["labels"]))
    assert result["objective"] == pytest.approx(expected, rel=1e-5, abs=1e-6), result["message"]


#: A command line whose ``finish`` (the answer checked) or ``print_solve`` (the answer written)
#: sends the process SIGINT first: a signal in that stage, whatever the load.
_SIGNAL_IN_STAGE = """
import os, signal, sys
from s3vm.cli.commands import solve as solve_command
from s3vm.cli.main import main
from s3vm.core import pipeline
module, name = {"after-step": (pipeline, "supervise"), "checking": (pipeline, "finish"),
                "writing": (solve_command, "print_solve")}[sys.argv[1]]
original = getattr(module, name)
def with_a_signal(*args, **kwargs):
    if sys.argv[1] == "after-step":  # the step has ended; its answer is not taken yet
        done = original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return done
    os.kill(os.getpid(), signal.SIGINT)
    return original(*args, **kwargs)
setattr(module, name, with_a_signal)
sys.exit(main(["solve", "heart", "-f", "svm1", "--kernel", "linear", "--json"]))
"""


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_signal_as_the_step_ends_answers_the_labels_at_hand():
    # switching's answer was lost when SIGINT came after its step had ended and before the
    # answer was taken (exit 130, nothing on stdout; the interrupt test above, twice under
    # load). Sent here right after the supervised step returns: a stopped solve's answer,
    # with its labels, written whole.
    done = subprocess.run([sys.executable, "-c", _SIGNAL_IN_STAGE, "after-step"],
                          capture_output=True, text=True, timeout=120, env=environment())
    assert done.returncode == 130, done.stderr[-400:]
    assert done.stderr.rstrip().endswith("interrupted by SIGINT"), done.stderr[-400:]
    result = parse_json_output(done.stdout)
    check_result_object(result, u=267)
    assert result["status"] == "feasible" and result["labels"] is not None, result["message"]
    assert "interrupted by SIGINT" in result["message"]


@pytest.mark.solver
@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("where", ["checking", "writing"])
def test_a_signal_after_the_step_keeps_its_answer(where):
    # SIGINT that came after svm1's LP had ended, while its answer was checked or written, ended
    # the command with exit 130 and nothing on stdout (the interrupt test above, once in CI under
    # load). Sent here from inside that stage: the answer is written whole, then the command
    # ends on the signal.
    done = subprocess.run([sys.executable, "-c", _SIGNAL_IN_STAGE, where], capture_output=True,
                          text=True, timeout=120, env=environment())
    assert done.returncode == 130, done.stderr[-400:]
    assert done.stderr.rstrip().endswith("interrupted by SIGINT"), done.stderr[-400:]
    result = parse_json_output(done.stdout)
    check_result_object(result, u=267)
    assert result["status"] == "optimal" and result["labels"] is not None
    # the same answer as a solve that no signal touched (svm1's optimum itself is checked
    # against scipy's linprog in its own tests)
    assert result["objective"] == pytest.approx(
        api.solve("heart", "svm1", kernel="linear").objective, rel=1e-9)
    assert result["labels"] == list(api.solve("heart", "svm1", kernel="linear").labels)


@pytest.mark.solver
@pytest.mark.slow
def test_a_signal_after_an_infeasible_subspace_still_answers_the_rounded_labels(monkeypatch):
    # sdp-lowrank on heart: the subspace of d = 4 holds no label matrix meeting the count, and
    # the labels are the rounded spectral scores (status feasible). A signal that landed just
    # after the SDP's verdict left status "infeasible" without labels, for a problem with
    # labelings (found by the interrupt test above, once in three runs). The signal is
    # delivered here right after the SDP returns, whatever the load.
    from s3vm.core.registry import formulation_class
    from s3vm.solvers.runtime.clock import INTERRUPTED
    from s3vm.solvers.runtime.supervisor import Interrupted

    cls = formulation_class("sdp-lowrank")
    run_model = cls.run_model

    def then_a_signal(self, instance, settings, backend, profile, clock):
        done = run_model(self, instance, settings, backend, profile, clock)
        clock.stop(INTERRUPTED, signal.SIGINT)
        return done

    monkeypatch.setattr(cls, "run_model", then_a_signal)
    with pytest.raises(Interrupted) as caught:
        api.solve("heart", "sdp-lowrank", kernel="linear")
    result = caught.value.result
    assert result.status == "feasible", result.message
    assert "holds no label matrix" in result.message
    instance, _ = api.load("heart")
    settings = Settings(**result.info["settings"])
    expected = labeling_objective_reference(2, instance, settings, np.asarray(result.labels))
    assert result.objective == pytest.approx(expected, rel=1e-5, abs=1e-6)
