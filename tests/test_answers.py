"""Every run answers (issue 38, items 2, 3, 5, 6): a signal at any moment of ``s3vm solve``
gets one JSON object (labels wherever any exist, status ``error`` with the reason where none
can); a stopped solve never answers a labeling worse than the supervised fallback it holds;
short limits answer labels; the answer records what applied.

Each answer is verified apart from the package: the labels' objective by tests/reference.py
(the Bennett-Demiriz LP by scipy's linprog, J by L-BFGS-B), the fallback's labels by a
squared-hinge SVM written here (scipy's L-BFGS-B on the labeled rows, rounded to the answer's
own count of positives).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy.optimize import minimize

from s3vm.api import load
from s3vm.core.registry import formulation_class, formulation_names
from s3vm.core.settings import Settings

from reference import labeling_objective_reference

#: The console script of this environment (its first module notes signals).
S3VM = os.path.join(os.path.dirname(sys.executable), "s3vm")

pytestmark = pytest.mark.skipif(not os.path.exists(S3VM), reason="no s3vm console script")


def _heart():
    instance, settings = load("heart")
    return instance, settings


def _catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (its SigCgt mask in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    except OSError:
        pass
    return False


def _answer_checked(out: bytes, instance, name: str, settings: Settings) -> dict:
    """The one JSON object on stdout, checked: labels u values +1/-1 with the objective of the
    formulation at them (tests/reference.py), or no labels, status error and the reason."""
    text = out.decode()
    assert text.strip(), "stdout is empty: the signal got no answer"
    answer = json.loads(text)  # one object: json.loads refuses anything after it
    assert isinstance(answer, dict)
    labels = answer["labels"]
    if labels is None:
        assert answer["status"] == "error"
        assert "interrupted" in answer["message"] or "time limit" in answer["message"]
        return answer
    labels = np.asarray(labels)
    assert labels.shape == (instance.u,) and set(np.unique(labels)) <= {-1, 1}
    if answer["objective"] is not None:
        expected = labeling_objective_reference(formulation_class(name).problem, instance,
                                                settings, labels)
        assert answer["objective"] == pytest.approx(expected, rel=1e-5, abs=1e-7)
    return answer


# -- signals: a sweep of times across the start ---------------------------------------------
#: Seconds after the console script's handler is in place (its SigCgt shows SIGTERM caught; the
#: interpreter's own start before it, 0.04 to 0.10 s, is the system's: docs/reliability.md).
SWEEP = (0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0)


@pytest.mark.subprocess
@pytest.mark.parametrize("index, after", list(enumerate(SWEEP)),
                         ids=[f"{t:.2f}s" for t in SWEEP])
def test_a_signal_at_any_moment_of_the_start_is_answered(index, after):
    signum = (signal.SIGINT, signal.SIGTERM)[index % 2]
    proc = subprocess.Popen([S3VM, "solve", "heart", "-f", "bd-mip", "--json", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not _catches(proc.pid, signal.SIGTERM) and proc.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(after)
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        # The signal was lost (once, under make test-latest at 1.25 s): the command solved on,
        # and left running it loaded the rest of the suite for half an hour.
        proc.kill()
        proc.communicate()
        pytest.fail(f"the signal {after} s after the start was not answered within 60 s")
    assert out.strip(), f"stdout is empty: the signal {after} s after the start got no answer"
    instance, settings = _heart()
    answer = _answer_checked(out, instance, "bd-mip", Settings(**{
        **settings.to_dict(), **_settings_of(out)}))
    assert proc.returncode == 128 + signum, err.decode()[-2000:]
    if answer["labels"] is not None:
        assert answer["status"] == "feasible"
    assert f"interrupted by {signal.Signals(signum).name}" in answer["message"]


def _settings_of(out: bytes) -> dict:
    """The settings an answer records (none in an answer before the data was read)."""
    return (json.loads(out.decode()).get("info") or {}).get("settings") or {}


# -- never worse than the fallback the run holds ---------------------------------------------
def _fallback_labels(instance, settings, positives: int) -> np.ndarray:
    """The labeled rows' squared-hinge SVM without bias (linear kernel), by L-BFGS-B: the
    P = ``positives`` highest scores of the unlabeled rows are +1."""
    XL = np.asarray(instance.X, dtype=float)[instance.labeled]
    yL = instance.label[instance.labeled].astype(float)

    def fun(w):
        slack = np.maximum(0.0, 1.0 - yL * (XL @ w))
        value = 0.5 * w @ w + settings.C * np.sum(slack ** 2)
        grad = w - 2.0 * settings.C * XL.T @ (yL * slack)
        return value, grad

    w = minimize(fun, np.zeros(XL.shape[1]), jac=True, method="L-BFGS-B",
                 options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000}).x
    scores = np.asarray(instance.X, dtype=float)[instance.unlabeled] @ w
    labels = -np.ones(instance.u, dtype=int)
    labels[np.argsort(-scores)[:positives]] = 1
    return labels


def _solve_heart_limited(name: str, limit: float):
    """``s3vm solve heart -f NAME --time-limit LIMIT --json -q``: (the finished process, the
    instance, the JSON answer), exit status 0 checked; skipped without SCIP for l2-miqp."""
    if name == "l2-miqp":
        pytest.importorskip("pyscipopt")
    done = subprocess.run([S3VM, "solve", "heart", "-f", name, "--time-limit", str(limit),
                           "--json", "-q"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    instance, _ = _heart()
    return done, instance, json.loads(done.stdout)


@pytest.mark.subprocess
@pytest.mark.solver
@pytest.mark.parametrize("name, limit", [("l2-miqp", 5), ("l2-miqp", 8), ("bd-mip", 4),
                                         ("bd-mip", 6)])
def test_a_stopped_solve_answers_no_worse_than_the_fallback_it_holds(name, limit):
    done, instance, answer = _solve_heart_limited(name, limit)
    settings = Settings(**answer["info"]["settings"])
    labels = np.asarray(answer["labels"])
    problem = formulation_class(name).problem
    fallback = _fallback_labels(instance, settings, int(np.sum(labels > 0)))
    if answer["message"].startswith("time limit reached while reading the data"):
        # At load 8 the command's start and reading the data used up 4 s: the answer is then
        # the fallback's labels, not scored (nothing may import the solver library past the
        # limit); they are checked against the fallback computed here.
        assert answer["objective"] is None, answer["message"]
        assert np.sum(labels != fallback) <= 2, answer["message"]  # L-BFGS-B's last digits
        return
    own = labeling_objective_reference(problem, instance, settings, labels)
    assert answer["objective"] == pytest.approx(own, rel=1e-5, abs=1e-7)
    held = labeling_objective_reference(problem, instance, settings, fallback)
    assert own <= held * (1 + 1e-6) + 1e-9, (
        f"{name} at {limit} s answered objective {own:.6g}, worse than the supervised "
        f"fallback's {held:.6g}: {answer['status']}, {answer.get('message')}")


# -- labels at every limit --------------------------------------------------------------------
@pytest.mark.subprocess
@pytest.mark.parametrize("limit", [0.5, 1])
@pytest.mark.parametrize("name", formulation_names())
def test_a_short_limit_answers_labels(name, limit):
    done, instance, answer = _solve_heart_limited(name, limit)
    assert answer["labels"] is not None, answer.get("message")
    _answer_checked(done.stdout, instance, name, Settings(**answer["info"]["settings"]))


# -- what applied ------------------------------------------------------------------------------
@pytest.mark.subprocess
@pytest.mark.solver
def test_the_answer_records_the_limit_solver_profile_and_options(tmp_path):
    profile = tmp_path / "p.toml"
    profile.write_text('solver = "highs"\nthreads = 1\nmip_rel_gap = 0.25\n'
                       '[options]\nrandom_seed = 7\n')
    out = subprocess.run([S3VM, "solve", "blobs_small", "-f", "bd-mip", "--profile",
                          str(profile), "--time-limit", "30", "--json", "-q"],
                         capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    applied = json.loads(out.stdout)["info"]["applied"]
    assert applied["time_limit"] == 30
    assert applied["solver"] == "highs" and applied["profile"] == str(profile)
    assert applied["solver_options"] == {"mip_rel_gap": 0.25, "threads": 1, "random_seed": 7}


@pytest.mark.solver
def test_the_api_result_records_a_shipped_profile_by_name():
    import s3vm

    result = s3vm.solve("blobs_small", "bd-mip", solver="highs", time_limit=20)
    applied = result.info["applied"]
    assert applied["profile"] == "highs" and applied["time_limit"] == 20
    # the shipped file's own entries (solvers/profiles/highs.toml), read here apart
    import tomllib
    from importlib import resources
    with (resources.files("s3vm.solvers") / "profiles" / "highs.toml").open("rb") as fh:
        shipped = tomllib.load(fh)
    assert applied["solver_options"]["mip_rel_gap"] == shipped["mip_rel_gap"]
    assert applied["solver_options"]["threads"] == shipped["threads"]
    no_limit = s3vm.solve("blobs_small", "rlp")
    assert no_limit.info["applied"]["time_limit"] is None
    assert no_limit.info["applied"]["solver"] == no_limit.solver


class _SignatureThatStops:
    """A callable whose signature raises Stopped: what ``inspect.getfullargspec`` meets when
    the stop of an abortable region lands while Pyomo inspects a rule."""

    @property
    def __signature__(self):
        from s3vm.solvers.runtime.clock import Stopped

        raise Stopped("the region's stop")

    def __call__(self):
        return None


@pytest.mark.solver
@pytest.mark.parametrize("name", ["cvs3vm", "bb-mip"])
def test_a_stop_a_library_turned_into_its_own_error_is_answered(name, monkeypatch):
    # inspect.getfullargspec, which Pyomo calls while it builds a model, raises
    # TypeError("unsupported callable") from any exception, the stop of an abortable region
    # too: cvs3vm stopped in its LP build answered that error (the API then the unscored
    # labels of a signal before the solve), twice in 45 runs under load.
    import inspect

    from s3vm import api
    from s3vm.solvers.runtime.clock import INTERRUPTED
    from s3vm.solvers.runtime.supervisor import Interrupted

    cls = formulation_class(name)
    run = cls.run

    def run_stopped_in_a_library(self, instance, settings, backend, profile, clock, result):
        if name == "bb-mip":  # inside the driver's search: a bound problem's build
            return run(self, instance, settings, backend, profile, clock, result)
        clock.stop(INTERRUPTED, signal.SIGINT)
        inspect.getfullargspec(_SignatureThatStops())

    monkeypatch.setattr(cls, "run", run_stopped_in_a_library)
    if name == "bb-mip":
        from s3vm.solvers.bnb import driver

        expand = driver._Search._expand

        def expand_stopped_in_a_library(self, node):
            self.clock.stop(INTERRUPTED, signal.SIGINT)
            inspect.getfullargspec(_SignatureThatStops())
            return expand(self, node)

        monkeypatch.setattr(driver._Search, "_expand", expand_stopped_in_a_library)
    with pytest.raises(Interrupted) as stopped:
        api.solve("heart", name, kernel="linear")
    result = stopped.value.result
    assert result is not None and result.labels is not None, result
    assert result.status == "feasible" and result.objective is not None
    assert "interrupted by SIGINT" in result.message


def test_a_stop_raised_as_the_step_returns_is_answered_from_what_it_reported():
    # A model build's stop is raised in the step's thread asynchronously and can land after
    # the step's own handler, leaving Stopped as the step's error: the signal's answer then
    # came from the API, without the objective the pipeline held (vs3vm's build, once in a
    # loaded suite). The pipeline answers what the step reported instead.
    from types import SimpleNamespace

    from s3vm.core import pipeline
    from s3vm.solvers.runtime.clock import INTERRUPTED, Clock, Stopped

    clock = Clock(None)
    labels = np.array([1, -1, 1])

    def work():
        clock.report(phase="successive LPs, LP 1", labels=labels, objective=2.5)
        clock.stop(INTERRUPTED, signal.SIGINT)
        raise Stopped("stopped as the step returned")

    form = SimpleNamespace(name="vs3vm")
    backend = SimpleNamespace(name="highs")
    result = pipeline.supervised_step(form, backend, SimpleNamespace(verbose=False), clock, work)
    assert result.status == "feasible"
    assert list(result.labels) == [1, -1, 1] and result.objective == 2.5
