"""Every formulation stops at its time limit, neither before it (95%) nor after it by more than
5% + 0.5 s, model building included, on an instance that needs far more time, and a
time-limited run returns status ``time_limit``, a message naming the limit, a labeling with its
decision values, and, for a search, its trace, node count, incumbent and proven bound.

Each case solves with a 3-second limit an instance that the formulation takes 20 s to minutes
to solve (docs/reliability.md), through the Python API with each solve in a child process, as
the command line runs it (:func:`s3vm.solvers.runtime.supervisor.set_isolation`): a step that cannot
be cut short is killed with its process instead of running on in the test's. Both the solve's
own clock (``seconds``, from the call) and the wall clock of the call are held to
[0.95 T, 1.05 T + 0.5 s], with no retry (marked ``wallclock``: ``-m "not wallclock"`` leaves
them out); the command line itself is timed in tests/test_reliability.py.

The logic of the limits (where a search stops, what a solver call gets, what a step does past
the limit) is tested on a clock whose timer only the test moves
(:class:`~s3vm.solvers.runtime.clock.ManualTimer`): the limit falls where the test puts it,
whatever the load of the machine.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from s3vm import api
from s3vm.core.registry import FORMULATIONS
from s3vm.data.generators import two_moons
from s3vm.solvers.registry import installed_solvers

from contract import check_result_object

LIMIT = 3.0
#: The formulations that search a tree: at their limit they have a trace and an incumbent.
SEARCHES = ("bb", "bb-mip", "bb-sdp")
#: The formulations whose solver stops at the limit by itself and returns its own result.
OWN_RESULT = ("bd-mip", "l2-miqp", *SEARCHES)
RBF = {"kernel": "rbf", "sigma": 0.5}

# formulation -> (instance, options)
CASES = {
    # 3,000 labeled points: the LP of a kernel expansion over all of them (9 million values)
    "rlp": ("labeled3010", dict(RBF, lp_form="primal")),
    "svm1": ("labeled3010", dict(RBF, lp_form="primal")),
    # 3,000 unlabeled points: the LPs (building them alone takes longer than the limit)
    "vs3vm": ("moons3010", RBF),
    "cvs3vm": ("moons3010", RBF),
    # the Nystroem factor on all 3,010 points (3,010-square systems; the default 500 landmarks
    # take about a second)
    "switching": ("moons3010", dict(RBF, rank=3010)),
    # heart (267 unlabeled): the MIPs and branch and bound run for minutes
    "bd-mip": ("heart", {}),
    "bb-mip": ("heart", {}),
    "bb": ("heart", {}),
    "l2-miqp": ("heart", {}),
    # the SDPs: 1,010 points with an rbf kernel (SDPA and SCS need minutes)
    "sdp": ("moons1010", RBF),
    "sdp-subspace": ("moons1010", RBF),
    "sdp-lowrank": ("moons3010", RBF),
    # 90 points (40 unlabeled a class) with one cutting-plane round a node: the root is bounded
    # in under a second, the search takes a minute (161 nodes, 59 s on the loaded machine)
    "bb-sdp": ("moons90", dict(RBF, max_rounds=1)),
    # sparse data, 400,000 rows and columns with 40 nonzeros a row and 20 labeled rows: the
    # label switching takes 26 s on the quiet 2-core machine (60,000 rows, once a minute, took
    # 2.7 s after the solver's speed-up and finished inside the limit in CI)
    "primal-tsvm": ("sparse400000", {}),
}


OWN = ("lp_form", "rank", "max_rounds")  # options of the formulation, not settings


def test_every_formulation_has_a_case():
    assert set(CASES) == set(FORMULATIONS)


@pytest.fixture(scope="module")
def instances(tmp_path_factory):
    folder = tmp_path_factory.mktemp("limits")
    paths = {"heart": "heart"}
    for name, instance in (("moons3010", two_moons(5, 1500, seed=1)),
                           ("moons1010", two_moons(5, 500, seed=1)),
                           ("labeled3010", two_moons(1500, 5, seed=1)),
                           ("moons90", two_moons(5, 40, seed=1))):
        path = folder / f"{name}.csv"
        instance.to_csv(str(path))
        paths[name] = str(path)
    return paths


#: Instances held in memory, built only for the case that uses them (half a gigabyte).
IN_MEMORY = {"sparse400000": lambda: _sparse_instance(400_000)}


def _sparse_instance(n, per_row=40, seed=0):
    """n random sparse rows (n columns, CSR, in memory: reading a file of them takes longer
    than the limit), 10 labeled a class, 0 elsewhere."""
    import scipy.sparse as sp

    from s3vm.data.instance import Instance

    rng = np.random.default_rng(seed)
    cols = rng.integers(0, n, size=n * per_row)
    X = sp.csr_matrix((rng.random(n * per_row), cols, np.arange(0, n * per_row + 1, per_row)),
                      shape=(n, n))
    y = np.zeros(n)
    y[:10], y[10:20] = 1, -1
    return Instance(X, y, name=f"sparse{n}")


@pytest.fixture()
def isolated():
    # Library imports are outside a solve's clock (they are paid once per process): done
    # here, so that the wall clock of the call measures the solve.
    import cvxpy  # noqa: F401
    import pyomo.environ  # noqa: F401

    from s3vm.solvers.runtime import supervisor

    supervisor.set_isolation(True)
    yield
    supervisor.set_isolation(False)


def solve_limited(data, name, options, limit):
    settings = {k: v for k, v in options.items() if k not in OWN}
    own = {k: v for k, v in options.items() if k in OWN}
    start = time.perf_counter()
    result = api.solve(data, name, time_limit=limit, options=own, **settings)
    wall = time.perf_counter() - start
    out = result.to_dict()
    check_result_object(out, formulation=name)
    assert out["status"] == "time_limit", (out["status"], out.get("message"))
    assert "time limit" in out["message"], out["message"]
    # Used, not left: an unsolved problem runs to its limit (bb-mip stopped at 12.5 s of 20
    # when HiGHS counted its limit from the session's first LP), and stops there: a step that
    # checks no clock (a Pyomo build, ARPACK, an SDPA node) ran on to the end of the grace
    # period and was killed with the trace and decision values of the search. The call's
    # clock starts with the call: the wall clock is held to the same interval.
    for clock, seconds in (("seconds", out["seconds"]), ("wall clock", wall)):
        assert 0.95 * limit <= seconds <= 1.05 * limit + 0.5, (clock, seconds, out["message"])
    if "labeled3010" not in str(data):  # 3,000 labeled rows: past the supervised fallback
        # Its best labeling, or the labeled rows' supervised SVM's when it had none yet (sdp
        # on heart returned no labels at its limit).
        assert out["labels"] is not None, out["message"]
        assert out["decision_values"] is not None, out["message"]
        assert len(out["decision_values"]) == len(out["labels"])
        if out["info"].get("labels_from") == "supervised SVM":
            assert "supervised SVM" in out["message"]
    return out


@pytest.mark.wallclock
@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_the_time_limit_holds(instances, isolated, name):
    if name == "l2-miqp" and "scip" not in installed_solvers("miqp"):
        pytest.skip("l2-miqp needs SCIP")
    data, options = CASES[name]
    instance = IN_MEMORY[data]() if data in IN_MEMORY else instances[data]
    result = solve_limited(instance, name, options, LIMIT)
    if result["message"].split(";")[0] == "time limit reached while building the model":
        # Under load the model's build alone can outlast the 3 s limit (l2-miqp's SCIP model
        # at load 6): the answer is then the supervised fallback the solve held, scored by the
        # formulation's objective, checked here against an independent computation.
        if result["labels"] is not None:  # None past the fallback's rows (labeled3010)
            assert result["info"]["labels_from"] == "supervised SVM", result["message"]
        if result["objective"] is not None:
            check_fallback_objective(instance, name, result)
        return
    if name in OWN_RESULT:
        # The solver's own result (with its labels when it had some), not the last progress
        # report of a solve killed at the end of the grace period: l2-miqp scored SCIP's labels
        # with a threaded factorisation after the limit and was killed in 5 of 10 solves on the
        # loaded machine ("time limit reached while solving (SCIP)", SCIP's labels lost).
        assert result["message"].split(";")[0] == "time limit reached", result["message"]
    if name in SEARCHES:
        # The search's own result, not its last progress report: bb-sdp's node SDP ran past
        # the limit in the command line's solve process and was killed with the search
        # ("time limit reached while starting heuristic", no trace, no decision values); bb-mip
        # stopped early when HiGHS counted its limit from the session's first LP, and the LP of
        # the decision values after the stop was cancelled at once.
        replaced = result["info"].get("replaced_objective")
        if replaced is None:
            assert result["message"] == "time limit reached", result["message"]
            assert result.get("info", {}).get("labels_from") is None
        else:
            # never worse (issue 38): the search's incumbent, worse than the supervised
            # fallback's labels the solve held, is replaced by them, and the message says so
            assert result["message"].startswith("time limit reached; the supervised SVM's "
                                                "labels"), result["message"]
            assert result["info"]["labels_from"] == "supervised SVM"
            assert result["objective"] < replaced
        assert result["objective"] is not None
        assert result["lower_bound"] is not None
        assert result["lower_bound"] <= result["objective"] + 1e-9 * abs(result["objective"])
        trace = result["info"]["trace"]
        assert trace["nodes"] and trace["nodes"][-1] == result["nodes"] > 0


def check_fallback_objective(instance, name, result) -> None:
    from s3vm.core.registry import formulation_class
    from s3vm.core.settings import Settings

    from reference import labeling_objective_reference

    settings = Settings(**result["info"]["settings"])
    if isinstance(instance, str) or not hasattr(instance, "X"):
        instance, _ = api.load(instance)
    expected = labeling_objective_reference(formulation_class(name).problem, instance, settings,
                                            np.asarray(result["labels"]))
    assert result["objective"] == pytest.approx(expected, rel=1e-5, abs=1e-6), result["message"]


@pytest.mark.solver
@pytest.mark.slow
def test_a_node_sdp_running_at_the_limit_is_stopped_there_with_the_search(monkeypatch):
    # bb-sdp with one round a node: a node SDP is running at the limit (sdp_2moons). In
    # the command line's solve process SDPA ran in place, holding the GIL with no limit of its
    # own, so the whole solve was killed at the end of the grace period (3.66 s of 3) and the
    # result came from its last progress report: "time limit reached while starting
    # heuristic", no trace, no decision values. (That path, a child process at the wall
    # clock's limit, is test_the_time_limit_holds's bb-sdp case.)
    #
    # The solve's clock runs on a timer that only this test moves: the time stands still
    # until the third node SDP, which starts with 0.5 s left and takes 1 s, so that the limit
    # falls while it runs, at the same place on any machine under any load.
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings
    from s3vm.formulations.bb_sdp import BranchAndBoundSDP
    from s3vm.solvers.profiles import get_profile
    from s3vm.solvers.runtime.clock import Clock, ManualTimer

    at_the_limit, left, took = 3, 0.5, 1.0
    timer = ManualTimer()
    clock = Clock(LIMIT, timer=timer)
    calls = []  # (time left, limit passed) at each node SDP's call
    bounds = []  # the SDP calls made before each node bound began
    made = BranchAndBoundSDP.labeling_problem

    def labeling_problem(self, instance, settings, backend, profile, clock=None):
        problem = made(self, instance, settings, backend, profile, clock)
        sdp_backend = problem.sdp.backend
        solve = sdp_backend.solve

        def timed_solve(model, profile, clock=None):
            if len(calls) + 1 == at_the_limit:
                timer.advance(LIMIT - left - clock.seconds)
            calls.append((clock.remaining(), clock.expired()))
            outcome = solve(model, profile, clock)
            if len(calls) == at_the_limit:
                timer.advance(took)
            return outcome

        def counted_bound(partial, parent_state=None):
            bounds.append(len(calls))
            return bound(partial, parent_state)

        bound = problem.bound
        monkeypatch.setattr(sdp_backend, "solve", timed_solve)
        monkeypatch.setattr(problem, "bound", counted_bound)
        return problem

    monkeypatch.setattr(BranchAndBoundSDP, "labeling_problem", labeling_problem)
    # moons90 (the bb-sdp case of test_the_time_limit_holds: a search of a minute) with one
    # worker: the nodes are bounded in this process, on this clock (a forked worker would
    # move a copy of the timer).
    instance = two_moons(5, 40, seed=1)
    form = get_formulation("bb-sdp", max_rounds=1, workers=1)
    settings = form.settings_for(Settings(), RBF)
    profile = get_profile(form.default_solver(), None, form.problem_class)
    result = form.solve(instance, settings, profile, clock=clock).to_dict()
    check_result_object(result, formulation="bb-sdp")
    # The SDP at the limit got what was left as its own limit, and none came after it.
    assert len(calls) == at_the_limit, calls
    assert calls[-1][0] == pytest.approx(left) and not any(expired for _, expired in calls)
    # The search stopped at its next check: after the node of that SDP, at most its sibling
    # was bounded (without an SDP), and every node bounded is counted.
    assert sum(1 for made in bounds if made >= at_the_limit) <= 1, bounds
    assert result["nodes"] == len(bounds)
    # The search's own result at the limit, on the clock's time: the limit and the SDP's
    # overrun, nothing more (no step after it charged to the clock).
    assert result["status"] == "time_limit"
    assert result["message"] == "time limit reached", result["message"]
    assert result["seconds"] == pytest.approx(LIMIT - left + took)
    assert result["info"].get("labels_from") is None
    assert result["objective"] is not None and result["decision_values"] is not None
    assert result["lower_bound"] <= result["objective"] + 1e-9 * abs(result["objective"])
    trace = result["info"]["trace"]
    assert trace["nodes"][-1:] == ([result["nodes"]] if result["nodes"] else [])


@pytest.mark.solver
@pytest.mark.slow
def test_a_highs_session_gets_its_whole_limit_on_every_re_solve():
    # HiGHS compares its time_limit option with the Highs object's total run time: a session
    # that set the time left as the option stopped its later LPs early.
    from s3vm.bounds.lp_relaxation import LPRelaxationProblem
    from s3vm.core.settings import Settings
    from s3vm.models.problem3 import Problem3Data, build_problem3
    from s3vm.solvers.profiles import get_profile
    from s3vm.solvers.registry import get_backend
    from s3vm.solvers.runtime.clock import Clock, ManualTimer

    instance = two_moons(20, 200, seed=3)
    settings = Settings(kernel="rbf", sigma=0.5)
    model = build_problem3(Problem3Data.from_instance(instance, settings), mu=settings.mu,
                           unlabeled="mip", nu=settings.nu)
    profile = get_profile(None, None, "lp")
    # The solve's clock moves 100 s between the LPs, whatever they take.
    timer = ManualTimer()
    problem = LPRelaxationProblem(model, get_backend(None, "lp"), profile,
                                  clock=Clock(600.0, timer=timer))
    partial = np.zeros(instance.u, dtype=int)
    for j in range(4):
        timer.advance(100.0)
        left = 600.0 - 100.0 * (j + 1)
        partial[j] = 1 if j % 2 else -1
        before = problem.session.h.getRunTime()
        outcome = problem._solve(partial)
        assert outcome.status == "optimal", outcome.message
        after = problem.session.h.getRunTime()
        limit = problem.session.h.getOptionValue("time_limit")[1]
        # The option is the session's run time at the call plus what the clock has left.
        assert before + left - 1e-9 <= limit <= after + left + 1e-9, (limit, before, after)


def test_an_lp_cancelled_by_a_signal_stops_the_search_with_its_incumbent():
    # A signal landing inside a leaf's LP (HiGHS: "Interrupted by user") raised RuntimeError
    # ("the LP of a full labeling did not solve") and the incumbent was lost.
    import signal

    from s3vm.bounds.lp_relaxation import LPRelaxationProblem
    from s3vm.solvers.backends.base import Outcome
    from s3vm.solvers.runtime.clock import INTERRUPTED, Clock, Stopped

    class Cancelled:
        def resolve(self):
            return Outcome(status="error", message="Interrupted by user")

        def solve(self, labels):  # a leaf's own LP (the labeling's, without big-M)
            return self.resolve()

    problem = LPRelaxationProblem.__new__(LPRelaxationProblem)
    problem.u, problem.session, problem._fixed, problem._d = 3, Cancelled(), np.zeros(3, int), []
    problem.labeling_lp = problem.session
    problem.lp_solves = problem.lp_iterations = 0
    problem._failing = set()  # no labeling whose LP failed before
    problem._apply = lambda partial: None
    clock = Clock()
    clock.stop(INTERRUPTED, signal.SIGINT)
    problem.clock = clock  # the attribute the constructor sets (bypassed here)
    with pytest.raises(Stopped):
        problem.objective(np.array([1, -1, 1]))


@pytest.mark.solver
@pytest.mark.slow
def test_labels_at_a_limit_before_any_labeling_are_the_supervised_svms(instances, isolated):
    # sdp stopped before its solver had an iterate returned no labels at all.
    import cvxpy as cp

    from s3vm.core.kernels import kernel_matrix
    from s3vm.core.settings import Settings, load_instance

    path = instances["moons1010"]
    result = api.solve(path, "sdp", time_limit=2.0, kernel="rbf", sigma=0.5, C=10.0,
                       balance="count")
    assert result.status == "time_limit"
    assert result.info.get("labels_from") == "supervised SVM", result.message
    assert "supervised SVM" in result.message and result.objective is None
    instance, _ = load_instance(path)
    settings = Settings(kernel="rbf", sigma=0.5, C=10.0, balance="count")
    # The squared-hinge SVM without bias on the labeled rows, by its dual with CVXPY.
    lab = instance.labeled
    y = instance.label[lab].astype(float)
    K = kernel_matrix(instance.XL, None, "rbf", 0.5) + np.eye(y.size) / (2 * 10.0)
    a = cp.Variable(y.size, nonneg=True)
    cp.Problem(cp.Maximize(2 * cp.sum(a) - cp.quad_form(cp.multiply(y, a), cp.psd_wrap(K))))\
        .solve(solver="CLARABEL")
    scores = kernel_matrix(instance.XU, instance.XL, "rbf", 0.5) @ (y * a.value)
    P = settings.positive_count(instance)
    labels = np.asarray(result.labels)
    assert (labels == 1).sum() == P
    # The P highest scores are the +1 labels (up to ties at the threshold).
    order = np.sort(scores)[::-1]
    threshold = order[P - 1]
    assert np.all(labels[scores > threshold + 1e-6] == 1)
    assert np.all(labels[scores < order[P] - 1e-6] == -1) if P < scores.size else True


def test_the_limit_reached_during_the_last_step_does_not_cancel_it():
    # The search ends at its limit by its own check; the supervisor's stop then came a moment
    # later (through a pipe, from the parent of a child-process solve) and cancelled the LP of
    # the decision values, so the command line's bb-mip results had none.
    import signal

    from s3vm.solvers.runtime.clock import INTERRUPTED, TIME_LIMIT, Clock, ManualTimer

    cancelled = []
    timer = ManualTimer()
    clock = Clock(0.01, timer=timer)
    timer.advance(0.02)
    assert clock.expired()
    with clock.finishing(5.0):
        timer.advance(1.0)
        with clock.cancellable(lambda: cancelled.append("call")):
            assert not cancelled  # a step started after the limit is not cancelled at once
            assert clock.remaining() == pytest.approx(4.0)
            clock.stop(TIME_LIMIT)
            assert not cancelled and clock.stop_reason == TIME_LIMIT
            clock.stop(INTERRUPTED, signal.SIGINT)
            assert cancelled == ["call"]  # a signal still cancels it
    assert clock.remaining() < 1e-6  # after the step: stopped


@pytest.mark.wallclock
@pytest.mark.slow
def test_an_abortable_step_is_stopped_at_the_stop():
    # Pyomo's model building and its compiling for HiGHS check no clock: rlp on 3,000 labeled
    # rows ran on to the end of the grace period (3.65 s of 3) and was killed there.
    import threading

    from s3vm.solvers.runtime.clock import TIME_LIMIT, Clock, Stopped

    clock = Clock()
    start = time.perf_counter()
    stopper = threading.Timer(0.3, clock.stop, args=(TIME_LIMIT,))
    stopper.start()
    count = 0
    with pytest.raises(Stopped):
        with clock.abortable():
            while time.perf_counter() - start < 30:  # pure Python, no checkpoint
                count += 1
    stopper.join()
    assert count > 0 and time.perf_counter() - start < 5


@pytest.mark.slow
def test_a_step_begun_after_the_stop_runs_to_its_end_and_no_stop_lands_after_a_step():
    import threading

    from s3vm.solvers.runtime.clock import TIME_LIMIT, Clock, Stopped

    clock = Clock()
    clock.stop(TIME_LIMIT)
    with clock.abortable():  # the decision values of the incumbent, after the limit
        total = sum(range(200000))
    assert total == 199999 * 200000 // 2
    # A stop that comes as a step ends is raised in the step or not at all.
    for k in range(40):
        clock = Clock()
        stopper = threading.Timer(0.001 * (k % 4), clock.stop, args=(TIME_LIMIT,))
        stopper.start()
        try:
            with clock.abortable():
                end = time.perf_counter() + 0.002
                while time.perf_counter() < end:
                    pass
        except Stopped:
            pass
        stopper.join()
        x = 0
        for i in range(20000):  # a Stopped left pending would be raised here
            x += i
        assert x == 19999 * 20000 // 2


def _expired_clock():
    from s3vm.solvers.runtime.clock import Clock, ManualTimer

    timer = ManualTimer()
    clock = Clock(1.0, timer=timer)
    timer.advance(1.0)
    assert clock.expired()
    return clock


def test_l2_miqp_makes_no_kernel_after_the_limit(monkeypatch):
    # After SCIP stopped at the limit, l2-miqp built J's kernel matrix and factor to score the
    # labels (3.30 s of 3 on heart under load): past the grace period the process was killed
    # with SCIP's labels. The objective is now made with the model, inside the limit.
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings
    from s3vm.formulations import l2_miqp
    from s3vm.models.l2_svm import S3VMObjective
    from s3vm.solvers.results import Result

    instance = two_moons(3, 6, seed=4)
    settings = Settings(kernel="rbf", sigma=0.5)
    formulation = get_formulation("l2-miqp")
    model = formulation.model_to_solve(instance, settings, None)
    labels = np.where(np.arange(instance.u) % 2 == 0, 1, -1)
    for k, j in enumerate(model.U):
        model.z[j].set_value(float(labels[k] > 0))
    monkeypatch.setattr(l2_miqp, "s3vm_objective", lambda *a: pytest.fail("made after the limit"))
    result = Result(formulation="l2-miqp", solver="scip", status="time_limit")
    formulation.fill_on_clock(result, model, instance, settings, _expired_clock())
    np.testing.assert_array_equal(result.labels, labels)
    # Its decision values are the SVM's at those labels (a solve of its own, cold).
    reference = S3VMObjective(instance, settings).solve(labels)
    np.testing.assert_allclose(result.decision_values, reference.outputs[instance.unlabeled],
                               atol=1e-8)


@pytest.mark.solver
def test_bd_mip_builds_no_labeling_lp_after_the_limit(monkeypatch):
    # Past the limit the labeling's LP was built and compiled for HiGHS, then given no time:
    # tenths of a second past the limit for nothing. The MIP's own point stands.
    from pyomo.environ import Var

    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings
    from s3vm.formulations import bd_mip
    from s3vm.models.problem3 import primal_values
    from s3vm.solvers.results import Result

    instance = two_moons(3, 6, seed=4)
    settings = Settings(kernel="linear")
    formulation = get_formulation("bd-mip")
    model = formulation.model_to_solve(instance, settings, None)
    labels = np.where(np.arange(instance.u) % 2 == 0, 1, -1)
    for var in model.component_data_objects(ctype=Var):
        if var.value is None:
            var.set_value(0.0, skip_validation=True)
    for k, j in enumerate(model.U):
        model.d[j].set_value(float(labels[k] > 0), skip_validation=True)
    monkeypatch.setattr(bd_mip, "labeling_value", lambda *a: pytest.fail("built after the limit"))
    result = Result(formulation="bd-mip", solver="highs", status="time_limit")
    formulation.fill_on_clock(result, model, instance, settings, _expired_clock())
    np.testing.assert_array_equal(result.labels, labels)
    primal = primal_values(model)
    data = model.problem_data
    np.testing.assert_allclose(result.decision_values, data.B @ primal["w"] + primal["b"])
