"""Progress lines that say what runs, in words that read right, and one readable log when node
bounds run on several workers. Nothing here depends on when a line is printed: the phases are
read from the solve's clock where they are set, the lines are formatted from a clock's
snapshot, and the workers' logs are checked for their grouping, whatever the interleaving.

Was: bb-sdp said "starting heuristic" for 20 s while it solved its root SDP; "1 nodes"; under
--verbose the SDPA logs of two workers interleaved line by line.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from s3vm import api
from s3vm.bounds.shor import ShorBoundProblem
from s3vm.core import pipeline
from s3vm.solvers.bnb import driver
from s3vm.solvers.bnb.pool import ProcessPool
from s3vm.solvers.bnb.problem import NodeBound
from s3vm.solvers.runtime.clock import Clock
from s3vm.solvers.runtime.stdio import captured_native_output

from test_bb_sdp import case


def line_at(nodes=None, iterations=None, phase="branch and bound"):
    clock = Clock(None)
    clock.report(phase=phase, nodes=nodes, iterations=iterations, objective=1.5,
                 lower_bound=1.0)
    return pipeline.progress_line("bb", clock)(5.0)


def test_counts_in_progress_lines_agree_with_their_number():
    assert line_at(nodes=1) == "bb: 5 s, branch and bound, 1 node, incumbent 1.5, bound 1"
    assert ", 2 nodes," in line_at(nodes=2) and ", 0 nodes," in line_at(nodes=0)
    assert ", 1 iteration," in line_at(iterations=1)
    assert ", 3 iterations," in line_at(iterations=3)


def test_the_search_summary_counts_one_node_as_one():
    result = driver.SearchResult(status="optimal", labels=None, objective=1.0,
                                 lower_bound=1.0, nodes=1, open_nodes=0, seconds=0.5,
                                 message="", incumbent_source=None, trace={})
    assert ", 1 node, " in driver._summary(result)
    result.nodes = 2
    assert ", 2 nodes, " in driver._summary(result)


@pytest.mark.solver
@pytest.mark.slow
def test_the_root_sdp_runs_under_its_own_phase(monkeypatch):
    # The phase the progress line would show while each node's SDP is solved, read inside
    # the bound itself: the root's is "bounding the root node" (not "starting heuristic"),
    # the others' "branch and bound".
    phases = []
    original = ShorBoundProblem.bound

    def bound(self, partial, parent_state=None):
        phases.append(self.clock.snapshot().get("phase"))
        return original(self, partial, parent_state)

    monkeypatch.setattr(ShorBoundProblem, "bound", bound)
    instance, settings = case("rbf_u12_count")  # a search of several nodes
    # one worker: every bound in this process, where the list can record it
    result = api.solve(instance, "bb-sdp", settings, options={"log_every": 0, "workers": 1})
    assert result.status == "optimal"
    assert phases[0] == "bounding the root node"
    assert len(phases) > 1 and set(phases[1:]) == {"branch and bound"}, phases


class Chatty:
    """A stand-in for a labeling problem whose bound writes a log of several lines from
    the worker, as SDPA does under --verbose, pausing between lines so that two workers'
    lines would interleave if written straight to stderr."""

    u, positives = 4, None

    def worker_begin(self):
        pass

    def notify_incumbent(self, labels, value):
        pass

    def worker_report(self):
        return {}

    def bound(self, partial, state):
        tag = int(partial[0])
        for k in range(5):
            os.write(2, f"sdp {tag} line {k}\n".encode())
            time.sleep(0.02)
        os.write(1, f"stdout of {tag}\n".encode())
        return NodeBound(value=float(tag))


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need os.fork")
def test_each_workers_log_is_written_whole_and_prefixed(capfd):
    pool = ProcessPool(2)
    jobs = [(np.array([1, 0, 0, 0]), None), (np.array([2, 0, 0, 0]), None)]
    answers = pool.bound(Chatty(), jobs, None, lambda: False)
    out, err = capfd.readouterr()
    assert [node.value for node, _ in answers] == [1.0, 2.0]
    lines = err.splitlines()
    expected = [f"[worker {w}] sdp {w} line {k}" for w in (1, 2) for k in range(5)]
    assert lines == expected, err
    # fd 1 going elsewhere than stderr (the null device of a solve without --verbose) is
    # left where it goes: not caught, not copied to stderr
    assert sorted(out.splitlines()) == ["stdout of 1", "stdout of 2"]


def test_the_capture_takes_stdout_where_it_shares_stderr(capfd):
    saved = os.dup(1)
    os.dup2(2, 1)  # as under --verbose: the solver's log on fd 1 goes to stderr
    try:
        with captured_native_output() as caught:
            os.write(1, b"to one\n")
            os.write(2, b"to two\n")
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    assert caught.text == "to one\nto two\n"
    out, err = capfd.readouterr()
    assert out == "" and err == ""
