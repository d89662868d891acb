"""Node bounds on a pool of workers (solvers/bnb/pool.py): forked processes and a Dask cluster.

The problem is the toy of tests/test_bnb_driver.py (min y'Qy + c'y over labelings, with a valid
bound); every optimum is checked against enumeration over all labelings, computed there.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from s3vm.solvers.bnb.driver import NODE_SELECTIONS
from s3vm.solvers.bnb.pool import ProcessPool, default_workers, make_pool

from test_bnb_driver import QuadProblem, enumerate_optimum, quiet, random_problem, tol


class CountingQuad(QuadProblem):
    """The toy problem counting its bound calls wherever they run (worker reports merged), and
    sleeping ``child_delay`` seconds in every bound but the root's."""

    def __init__(self, *args, child_delay=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.child_delay = child_delay
        self.merged = 0
        self.incumbents = []

    def bound(self, partial, parent_state=None):
        if self.child_delay and parent_state is not None:
            time.sleep(self.child_delay)
        return super().bound(partial, parent_state)

    def notify_incumbent(self, labels, value):
        self.incumbents.append(value)

    def worker_begin(self):
        self.calls = 0

    def worker_report(self):
        return self.calls

    def merge_worker_report(self, report):
        self.merged += report


def counting(seed, u=9, **kwargs):
    rng = np.random.default_rng(seed)
    return CountingQuad(rng.normal(size=(u, u)), rng.normal(size=u), **kwargs)


def outcome(result):
    """What must not change between two runs of the same search."""
    tree = sorted((node, tuple(sorted(attrs.items())))
                  for node, attrs in result.tree.nodes(data=True))
    return (result.status, tuple(result.labels), result.objective, result.lower_bound,
            result.nodes, result.open_nodes, tree)


@pytest.mark.slow
@pytest.mark.parametrize("selection", NODE_SELECTIONS)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("workers", [2, 4])
def test_pool_finds_the_enumerated_optimum(selection, seed, workers):
    problem = random_problem(seed, u=8, greedy=True, positives=4 if seed % 2 else None)
    best, _, _ = enumerate_optimum(problem)
    serial = quiet(random_problem(seed, u=8, greedy=True, positives=4 if seed % 2 else None),
                   node_selection=selection)
    result = quiet(problem, node_selection=selection, pool=ProcessPool(workers))
    assert result.status == serial.status == "optimal"
    assert result.objective == pytest.approx(best, abs=tol(best))
    assert serial.objective == pytest.approx(best, abs=tol(best))
    assert result.lower_bound <= best + tol(best)
    assert problem.objective(result.labels) == pytest.approx(best, abs=tol(best))


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_same_result_twice_for_a_number_of_workers(workers):
    runs = [quiet(random_problem(3, u=9, greedy=True), node_selection="best",
                  pool=make_pool(workers)) for _ in range(2)]
    assert outcome(runs[0]) == outcome(runs[1])


@pytest.mark.slow
def test_worker_reports_reach_the_driver_and_workers_learn_the_incumbent():
    problem = counting(5, greedy=True, heuristic=np.ones(9, dtype=int))
    result = quiet(problem, node_selection="best", pool=ProcessPool(2))
    # Every bound is counted once: the root here, the others in the children.
    bounded = sum(1 for _, a in result.tree.nodes(data=True)
                  if "order" in a and a["status"] != "leaf")
    assert problem.calls + problem.merged == bounded > 1
    # The driver's copy heard of every new incumbent, the last one the optimum.
    assert problem.incumbents[-1] == result.objective


@pytest.mark.wallclock
@pytest.mark.slow
def test_time_limit_kills_the_bounds_running():
    problem = counting(1, child_delay=30.0, heuristic=np.ones(9, dtype=int))
    best, _, _ = enumerate_optimum(problem)
    t0 = time.perf_counter()
    result = quiet(problem, pool=ProcessPool(2), time_limit=0.5)
    # Wall clock: the limit plus 2.5 s for killing the children on a loaded machine (a bound
    # left running would take 30 s); no retry.
    assert time.perf_counter() - t0 < 3.0
    assert result.status == "time_limit" and result.nodes == 1
    assert result.lower_bound <= best + tol(best) <= result.objective + 2 * tol(best)


def test_default_workers_are_the_cores_capped_by_memory():
    import os

    cores = len(os.sched_getaffinity(0))
    assert default_workers() == cores
    assert default_workers(1e18) == 1   # an exabyte a worker: one fits at most
    assert make_pool(1) is None


@pytest.mark.slow
def test_dask_local_cluster_bounds_the_nodes_as_processes_do():
    distributed = pytest.importorskip("distributed")
    from s3vm.solvers.bnb.pool import DaskPool

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        pool = DaskPool(cluster.scheduler_address)
        try:
            assert pool.workers == 2
            for seed in range(3):
                problem = random_problem(seed, u=9, greedy=True)
                best, _, _ = enumerate_optimum(problem)
                on_dask = quiet(problem, node_selection="best", pool=pool)
                forked = quiet(random_problem(seed, u=9, greedy=True), node_selection="best",
                               pool=ProcessPool(2))
                assert on_dask.objective == pytest.approx(best, abs=tol(best))
                assert outcome(on_dask) == outcome(forked)
        finally:
            pool.close()


def _labeling_qp(seed):
    """The conic labeling QP of bb-sdp's incumbent search (Clarabel through CVXPY) on 150
    outputs, the size at which Clarabel 0.11 starts its thread pool."""
    from s3vm.models.output_space import _labeling_qp_conic

    rng = np.random.default_rng(seed)
    R = rng.standard_normal((150, 150))
    y = np.where(rng.random(150) < 0.5, -1.0, 1.0)
    value, v = _labeling_qp_conic(R @ R.T / 150 + np.eye(150), y, np.ones(150), float(y.sum()))
    return value


@pytest.mark.solver
@pytest.mark.slow
def test_children_solve_with_clarabel_after_the_parent_did():
    """A solver library's thread pool started in the parent has no threads in a forked child:
    bb-sdp's node bounds waited forever on Clarabel in every child once the parent had solved
    one labeling QP (the search then sat at its root until the time limit). The children must
    answer, and as the parent does."""
    from s3vm.solvers.runtime.processes import calls_in_children

    parent = _labeling_qp(0)
    started = time.monotonic()
    answers = calls_in_children([(_labeling_qp, (0,)), (_labeling_qp, (1,))],
                                stop=lambda: time.monotonic() - started > 45)
    assert np.isfinite(parent)
    assert answers[0] == pytest.approx(parent, rel=1e-6)
    assert np.isfinite(answers[1])
