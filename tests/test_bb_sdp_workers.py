"""``bb-sdp`` with its node SDPs on several workers (``workers``, ``scheduler``): the optimum of
enumeration (tests/test_bb_sdp.py computes J at every labeling independently), the same result
for the same number of workers, a Dask cluster, the time limit."""

from __future__ import annotations

import time

import numpy as np
import pytest

from s3vm import api

from test_bb_sdp import RTOL, case, reference

pytestmark = pytest.mark.slow


def solve(name, **options):
    instance, settings = case(name)
    return api.solve(instance, "bb-sdp", settings, options={"log_every": 0, **options})


def same(a, b):
    return (a.status == b.status and a.objective == b.objective
            and a.lower_bound == b.lower_bound and a.nodes == b.nodes
            and np.array_equal(a.labels, b.labels))


@pytest.mark.solver
@pytest.mark.parametrize("name", ["rbf_u12_count"])
def test_two_workers_find_the_enumerated_optimum_the_same_way_twice(name):
    ref = reference(name)
    serial = solve(name, workers=1)
    runs = [solve(name, workers=2) for _ in range(2)]
    for result in (serial, *runs):
        assert result.status == "optimal"
        assert result.objective == pytest.approx(ref.best, rel=RTOL)
        assert ref.J(result.labels) == pytest.approx(ref.best, rel=RTOL)
        assert result.lower_bound <= ref.best * (1 + RTOL)
    assert runs[0].nodes > 1  # the children were bounded on the pool
    assert same(runs[0], runs[1])
    # every node's SDPs counted, wherever they ran
    assert runs[0].info["sdp_solves"] >= runs[0].nodes - 1


@pytest.mark.solver
def test_a_dask_cluster_bounds_the_nodes_as_two_processes_do():
    distributed = pytest.importorskip("distributed")
    name = "rbf_u12_count"
    ref = reference(name)
    # worker processes: the problem travels pickled, as to the machines of a real cluster
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        result = solve(name, scheduler=cluster.scheduler_address)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(ref.best, rel=RTOL)
    assert same(result, solve(name, workers=2))


def test_unreachable_scheduler_is_bad_input():
    from s3vm.solvers.errors import InputError

    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        solve("rbf_u12_count", scheduler="tcp://127.0.0.1:9")


@pytest.mark.wallclock
@pytest.mark.solver
def test_time_limit_holds_with_workers(monkeypatch):
    """Node bounds running on the workers at the limit are killed and the search returns."""
    from s3vm.bounds.shor import ShorBoundProblem

    # Every child bound hangs (the root's, in this process, does not): at the limit both
    # workers are busy, whatever the machine's speed, and only killing them ends the search.
    original = ShorBoundProblem.bound

    def bound(self, partial, parent_state=None):
        if np.any(partial != 0):
            time.sleep(600)
        return original(self, partial, parent_state)

    monkeypatch.setattr(ShorBoundProblem, "bound", bound)
    solve("rbf_u10_mean", workers=1, node_limit=1)  # imports done before the clock runs
    instance, settings = case("rbf_u12_count")
    limit = 4.0
    before = set(alive_children())  # earlier tests' helpers (Dask's) may still run
    start = time.perf_counter()
    result = api.solve(instance, "bb-sdp", settings, time_limit=limit,
                       options={"workers": 2, "log_every": 0})
    wall = time.perf_counter() - start
    assert result.status == "time_limit", result.message
    assert result.nodes == 1 and result.objective is not None  # the root, and its incumbent
    # The limit promises 5% + 0.5 s; a loaded 2-core machine cannot hold that, so 10% + 1 s
    # is asserted. It cannot stop before its limit.
    assert limit <= result.seconds <= limit * 1.1 + 1.0
    assert wall <= result.seconds + 1.0
    assert result.lower_bound is None or result.lower_bound <= result.objective
    # No worker of this search left running: a killed worker can take a moment to die on a
    # loaded machine, so it is given a few seconds (a leaked one sleeps for 600).
    deadline = time.perf_counter() + 5.0
    while not set(alive_children()) <= before and time.perf_counter() < deadline:
        time.sleep(0.1)
    assert set(alive_children()) <= before


def alive_children() -> list:
    """The live child processes of this process, forked by any of its threads (Linux)."""
    import glob
    import os

    pids = []
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        try:
            with open(path) as fh:
                pids += [int(p) for p in fh.read().split()]
        except OSError:  # the thread ended between the listing and the read
            pass
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
        except OSError:
            pass
    return alive


@pytest.mark.solver
def test_cli_gap_tolerance_closed_reports_optimal_with_its_gap(capsys):
    # SDP-S3VM's art100 at C = 1.5 (their file-order choice) closes 2% at the root: optimal, the
    # proven gap beside it (the status was feasible, "gap tolerance reached").
    from s3vm import cli

    status = cli.main(["solve", "sdp_art100", "--formulation", "bb-sdp", "--no-bias",
                       "--balance", "mean", "--kernel", "linear", "--C", "1.5", "--gap", "0.02",
                       "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert status == 0, err
    doc = __import__("json").loads(out)
    assert doc["status"] == "optimal" and "gap tolerance" in doc["message"]
    assert 0 < doc["gap"] <= 0.02 and doc["lower_bound"] < doc["objective"]
