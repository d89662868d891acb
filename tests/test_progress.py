"""Long solves of every family show progress on stderr (a line every few seconds: elapsed time,
incumbent, bound), and ``--quiet`` silences them.

Once only branch and bound printed anything; the MIP, MIQP and SDP solves printed
nothing while they ran (``sdp`` on two moons ran 135 s without a line). The interval is 5 s;
``S3VM_PROGRESS_SECONDS`` shortens it here so that each case takes a few seconds.
"""

from __future__ import annotations

import json
import logging
import re

import pytest

from s3vm import api
from s3vm.data.generators import two_moons
from s3vm.solvers.registry import installed_solvers

from contract import BLOBS, environment, run_cli

LINE = re.compile(r"^(?P<name>[\w-]+): (?P<elapsed>\d+) s, (?P<phase>.+), "
                  r"incumbent (?P<incumbent>\S+), bound (?P<bound>\S+)$")


@pytest.fixture()
def fast_lines(monkeypatch):
    monkeypatch.setenv("S3VM_PROGRESS_SECONDS", "0.5")
    from s3vm.solvers.runtime import supervisor

    supervisor.set_isolation(True)
    yield
    supervisor.set_isolation(False)


@pytest.fixture(scope="module")
def moons(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "moons1010.csv"
    two_moons(5, 500, seed=1).to_csv(str(path))
    return str(path)


# family -> (formulation, data, settings, solver): each runs far longer than its 2.5 s limit
CASES = {
    "mip": ("bd-mip", "heart", {}, None),
    "miqp": ("l2-miqp", "heart", {}, None),
    "successive LPs": ("vs3vm", "moons", {"kernel": "rbf", "sigma": 0.5}, None),
    # all 2,010 points as Nystroem landmarks: 2,011-square systems, a second or more (1,010
    # points, or the default 500 landmarks, finish before the first line)
    "label switching": ("switching", "big_moons", {"kernel": "rbf", "sigma": 0.5,
                                                   "options": {"rank": 2010}}, None),
    "sdp": ("sdp", "sdp_2moons", {}, "scs"),
    "subspace sdp": ("sdp-lowrank", "moons", {"kernel": "rbf", "sigma": 0.5}, None),
}


@pytest.fixture(scope="module")
def big_moons(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "moons2010.csv"
    two_moons(5, 1000, seed=1).to_csv(str(path))
    return str(path)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("family", list(CASES))
def test_a_long_solve_prints_progress_lines(caplog, fast_lines, moons, big_moons, family):
    name, data, settings, solver = CASES[family]
    if name == "l2-miqp" and "scip" not in installed_solvers("miqp"):
        pytest.skip("needs SCIP")
    caplog.set_level(logging.INFO, logger="s3vm.progress")
    settings = dict(settings)
    options = settings.pop("options", None)
    data = {"moons": moons, "big_moons": big_moons}.get(data, data)
    api.solve(data, name, solver=solver, time_limit=2.5,
              options=options, **settings)
    lines = [r.getMessage() for r in caplog.records if r.name == "s3vm.progress"]
    parsed = [LINE.match(line) for line in lines]
    assert lines and all(parsed), lines
    assert {m["name"] for m in parsed} == {name}
    elapsed = [int(m["elapsed"]) for m in parsed]
    assert elapsed == sorted(elapsed) and elapsed[-1] <= 3


@pytest.mark.solver
@pytest.mark.slow
def test_a_mip_line_shows_the_solver_s_incumbent_and_bound(caplog, fast_lines):
    caplog.set_level(logging.INFO, logger="s3vm.progress")
    api.solve("heart", "bd-mip", time_limit=4)
    last = LINE.match([r.getMessage() for r in caplog.records
                       if r.name == "s3vm.progress"][-1])
    assert last["incumbent"] != "-" and last["bound"] != "-"
    assert float(last["bound"]) <= float(last["incumbent"])


@pytest.mark.slow
def test_branch_and_bound_prints_its_own_log_instead(caplog, monkeypatch):
    monkeypatch.setenv("S3VM_PROGRESS_SECONDS", "0.5")
    caplog.set_level(logging.INFO, logger="s3vm")
    api.solve("heart", "bb", time_limit=3, options={"log_every": 200})
    names = {r.name for r in caplog.records}
    assert "s3vm.bnb" in names
    rows = [r.getMessage() for r in caplog.records if r.name == "s3vm.bnb"]
    assert any("best bound" in row for row in rows)


@pytest.mark.subprocess
@pytest.mark.slow
def test_quiet_prints_nothing_and_the_default_prints_lines():
    args = ["solve", "heart", "-f", "bd-mip", "--json"]
    env = environment(S3VM_PROGRESS_SECONDS="0.5")
    quiet = run_cli(args + ["--time-limit", "2.5", "-q"], env=env)
    assert quiet.returncode == 0
    # A command's clock counts from its process's start, imports included (seconds on a loaded
    # machine): the loud run gets 2.5 s of solving after what the quiet run's start-up took.
    # A run whose start-up left its step under 1.5 s (3 lines' time: at load 13 the start-up
    # alone took the whole limit, and no line came) runs again with twice the limit.
    limit = round(1.5 * json.loads(quiet.stdout)["info"]["seconds_before_step"] + 2.5, 2)
    for _ in range(3):
        loud = run_cli(args + ["--time-limit", str(limit)], env=env)
        assert loud.returncode == 0
        result = json.loads(loud.stdout)
        if result["seconds"] - result["info"]["seconds_before_step"] >= 1.5:
            break
        limit *= 2
    assert quiet.stderr == ""
    assert any(LINE.match(line) for line in loud.stderr.splitlines()), loud.stderr


@pytest.mark.solver
def test_a_short_solve_prints_no_progress_line(caplog):
    caplog.set_level(logging.INFO, logger="s3vm.progress")
    api.solve(BLOBS, "vs3vm")
    assert not [r for r in caplog.records if r.name == "s3vm.progress"]


@pytest.mark.slow
def test_an_isolated_solve_s_progress_follows_new_incumbent_arrays(capfd):
    """The child of an isolated solve sends its clock's progress while it runs. It compared the
    state with the one sent before by ``!=``, which raised on a progress holding arrays (SCIP's
    incumbent labels): a traceback on stderr, and the parent's lines stayed at the first
    incumbent. Here the step reports three incumbents, each with new label and value arrays,
    and waits until the parent has seen each (a handshake: no timing involved)."""
    import os
    import select

    import numpy as np

    from s3vm.solvers.runtime import supervisor
    from s3vm.solvers.runtime.clock import Clock

    ack_read, ack_write = os.pipe()
    clock = Clock()
    seen: list = []

    def work():
        clock.report(phase="solving")
        for nodes in (1, 2, 3):
            labels = np.where(np.arange(40) % nodes == 0, 1.0, -1.0)
            # As a MIP's incumbent hook: the labels first, then the counts (the progress
            # dict's order, in which ``!=`` met the arrays before a number that differed).
            clock.report(labels=labels, decision_values=labels * nodes)
            clock.report(nodes=nodes, objective=10.0 - nodes)
            ready, _, _ = select.select([ack_read], [], [], 30)
            if not ready or os.read(ack_read, 1) != b"%d" % nodes:
                return f"the parent never saw incumbent {nodes}"
        return "followed"

    def line(elapsed):
        progress = clock.snapshot()
        nodes = progress.get("nodes")
        if nodes is not None and (not seen or seen[-1] != nodes):
            seen.append(nodes)
            assert np.array_equal(progress["labels"],
                                  np.where(np.arange(40) % nodes == 0, 1.0, -1.0))
            os.write(ack_write, b"%d" % nodes)
        return None

    supervisor.set_isolation(True)
    try:
        done = supervisor.supervise(work, clock, line=line, emit=lambda text: None,
                                    interval=0.05)
    finally:
        supervisor.set_isolation(False)
        os.close(ack_read)
        os.close(ack_write)
    assert done.finished and done.value == "followed", (done, seen)
    assert seen == [1, 2, 3]
    assert "Traceback" not in capfd.readouterr().err
