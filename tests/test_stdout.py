"""Standard output carries only s3vm's own output, whatever the solver libraries print.

Solver libraries write to file descriptor 1 from C (HiGHS 1.16 prints a banner when a model is
created; SCIP, SCS and Clarabel print logs when asked), where Python's capture cannot see it. So
these tests run the real console script in a subprocess: for every formulation, ``solve --json``
must print exactly one JSON object and nothing else, ``compare``'s table must start with its own
title, and ``--verbose`` must send the solver's log to stderr, never to stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from s3vm.core.registry import FORMULATIONS
from s3vm.solvers.registry import installed_solvers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOBS = os.path.join(ROOT, "instances", "blobs_small.toml")

# Options that keep every formulation small and fast on the 12-point instance.
EXTRA = {
    "cvs3vm": ["--label-fraction", "0.5"],
    "sdp-subspace": ["--dim", "3"],
    "sdp-lowrank": ["--dim", "3"],
    "bb-sdp": ["--no-bias"],
}


def _command():
    script = os.path.join(os.path.dirname(sys.executable), "s3vm")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-m", "s3vm.cli"]


def _run(args, timeout=120):
    env = dict(os.environ)
    env.pop("S3VM_DEBUG", None)
    return subprocess.run(_command() + args, capture_output=True, text=True, timeout=timeout,
                          env=env)


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("name", list(FORMULATIONS))
def test_solve_json_is_the_only_output(name):
    if name == "l2-miqp" and "scip" not in installed_solvers("miqp"):
        pytest.skip("l2-miqp needs SCIP (pip install s3vm[scip])")
    proc = _run(["solve", BLOBS, "-f", name, "--json", "-q"] + EXTRA.get(name, []))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1, proc.stdout[:300]
    result = json.loads(proc.stdout)  # what `| python -m json.tool` needs
    assert result["formulation"] == name
    assert len(result["labels"]) == 8


@pytest.mark.subprocess
@pytest.mark.slow
def test_compare_table_starts_with_its_own_title():
    proc = _run(["compare", BLOBS, "--formulations", "rlp,bd-mip,vs3vm", "-q"])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("blobs_small: n = 12")
    assert lines[1].split()[:3] == ["formulation", "solver", "status"]
    assert [line.split()[0] for line in lines[3:6]] == ["rlp", "bd-mip", "vs3vm"]
    # the labelings proved optimal are named after the table (here the LP's and the MIP's)
    assert lines[6].startswith("proved optimal by rlp")


@pytest.mark.subprocess
@pytest.mark.slow
def test_verbose_sends_solver_logs_to_stderr():
    quiet = _run(["solve", BLOBS, "-f", "bd-mip", "--json", "-q"])
    loud = _run(["solve", BLOBS, "-f", "bd-mip", "--json", "-q", "--verbose"])
    for proc in (quiet, loud):
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["status"] == "optimal"
    assert "HiGHS" not in quiet.stderr + quiet.stdout
    assert "HiGHS" in loud.stderr  # the solver's log, on stderr only


# -- the Python API: a library prints nothing on stdout ---------------------------------------

API_OPTIONS = {
    "cvs3vm": "options={'label_fraction': 0.5}",
    "sdp-subspace": "options={'dim': 3}",
    "sdp-lowrank": "options={'dim': 3}",
    "bb-sdp": "bias=False",
}


def _python(code, timeout=120):
    env = dict(os.environ)
    env.pop("S3VM_DEBUG", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


@pytest.mark.subprocess
@pytest.mark.slow
def test_api_solve_prints_nothing_on_stdout_for_any_formulation():
    # One process for all of them (HiGHS prints its banner from C when its first object is
    # made, once a process; SDPA prints notes): whatever any of them writes shows here.
    names = [name for name in FORMULATIONS
             if name != "l2-miqp" or "scip" in installed_solvers("miqp")]
    calls = "\n".join(f"assert s3vm.solve({BLOBS!r}, {name!r}, {API_OPTIONS.get(name, '')})"
                      f".labels is not None" for name in names)
    proc = _python("import s3vm\n" + calls)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


@pytest.mark.subprocess
@pytest.mark.slow
def test_api_solve_with_a_time_limit_prints_nothing():
    proc = _python("import s3vm; s3vm.solve('two_moons', 'bd-mip', time_limit=3)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


@pytest.mark.slow
def test_estimator_fit_prints_nothing_and_print_still_works():
    # The caller's own print, before, after and from threads solving at the same time, still
    # reaches stdout: only what native code writes to fd 1 goes elsewhere.
    code = """
import threading
import numpy as np
import s3vm
from s3vm.data.generators import two_moons
inst = two_moons(n_per_class_labeled=3, n_unlabeled_per_class=15, seed=1)
X, y = inst.X, np.where(inst.label == 0, -1, (inst.label > 0).astype(int))
print("before")
threads = [threading.Thread(target=lambda: s3vm.S3VMClassifier("vs3vm").fit(X, y))
           for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()
s3vm.S3VMClassifier("bd-mip").fit(X, y)
print("after")
"""
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "before\nafter\n"


@pytest.mark.subprocess
@pytest.mark.slow
def test_verbose_api_solve_sends_the_solver_log_to_stderr():
    proc = _python(f"import s3vm; s3vm.solve({BLOBS!r}, 'bd-mip', verbose=True)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "HiGHS" in proc.stderr


@pytest.mark.solver
@pytest.mark.slow
def test_no_inaccuracy_warning_when_the_status_settles_it():
    # SDPA ends this SDP "optimal_inaccurate"; the certified bound and D(y) then meet, so the
    # result is optimal and CVXPY's "Solution may be inaccurate" must not say otherwise.
    import warnings

    import s3vm

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = s3vm.solve(BLOBS, "sdp")
    if "inaccurate" not in result.message:
        pytest.skip(f"the {result.solver} solve was accurate: nothing to hush")
    assert result.status == "optimal"
    assert not [w for w in caught if "inaccurate" in str(w.message)]


def _quiet_solve_with(monkeypatch, run) -> int:
    """``s3vm solve BLOBS -f svm1 --json -q`` in its own solve process, with svm1's step
    replaced by ``run(original_run, self, ...)``; the exit status."""
    from s3vm import cli
    from s3vm.core.registry import get_formulation
    from s3vm.solvers.runtime import supervisor

    formulation = type(get_formulation("svm1"))
    original = formulation.run
    monkeypatch.setattr(formulation, "run",
                        lambda self, *args, **kwargs: run(original, self, *args, **kwargs))
    supervisor.set_isolation(True)
    try:
        return cli.main(["solve", BLOBS, "-f", "svm1", "--json", "-q"])
    finally:
        supervisor.set_isolation(False)


@pytest.mark.solver
@pytest.mark.slow
def test_quiet_keeps_native_stderr_noise_out(monkeypatch, capfd):
    # SCIP writes its errors (call traces of hundreds of lines when an allocation fails) and
    # its warnings to file descriptor 2 from C, whatever its log setting: under -q only the
    # command's own one-line messages may reach stderr, from the solve's process or a child.
    from s3vm import cli

    def noisy(run, self, *args, **kwargs):
        os.write(2, b"[scip.c:123] ERROR: insufficient memory\n" * 360)
        return run(self, *args, **kwargs)

    status = _quiet_solve_with(monkeypatch, noisy)
    out, err = capfd.readouterr()
    assert status == 0 and json.loads(out)["status"] == "optimal"
    assert err == ""
    # without -q the same text still reaches stderr (nothing is hidden from a user who asks)
    status = cli.main(["solve", BLOBS, "-f", "svm1", "--json"])
    out, err = capfd.readouterr()
    assert status == 0 and err.count("ERROR: insufficient memory") == 360


def test_quiet_still_prints_the_one_line_error_of_a_solve_that_died(monkeypatch, capfd):
    def abort(run, self, *args, **kwargs):
        import faulthandler

        faulthandler.disable()  # pytest's own dump of the abort goes around fd 2
        os.write(2, b"terminate called after throwing an instance of 'std::bad_alloc'\n" * 50)
        os.abort()

    status = _quiet_solve_with(monkeypatch, abort)
    out, err = capfd.readouterr()
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "SIGABRT" in err and "bad_alloc" not in err
