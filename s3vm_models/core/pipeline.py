"""The one solve pipeline every formulation runs (:meth:`Formulation.solve
<s3vm.core.formulation.Formulation.solve>` calls :func:`solve`).

Check the instance and settings, resolve the solver, start the clock (the time limit covers model
building), run the family's step (the formulation's ``run``) under the supervisor, and complete the
:class:`~s3vm.solvers.results.Result` with the time, the settings actually used and the options
(:func:`finish`, which holds every result to :func:`check_result`). A solve stopped inside its
step reports what the step published (:func:`result_so_far`), with the labeled rows' supervised
SVM's labels when it had none (:func:`supervised_labels`). The formulation is taken as it is
declared (its checks, options, ``run`` and ``round_fallback``); this module imports none.
"""

from __future__ import annotations

import logging
import math
from contextlib import nullcontext
from typing import Optional

import numpy as np

from s3vm._version import __version__
from s3vm.core.answers import prefer_held
from s3vm.core.kernels import kernel_matrix
from s3vm.core.settings import SETTING_KEYS, Settings
from s3vm.core.supervised import l2svm_no_bias
from s3vm.data.instance import Instance
from s3vm.solvers.backends.base import check_options
from s3vm.solvers.errors import MESSAGES, InputError
from s3vm.solvers.results import Result
from s3vm.solvers.runtime.clock import (
    INTERRUPTED,
    Clock,
    Stopped,
    imports_charged,
    signal_name,
    stopped_inside,
)
from s3vm.solvers.runtime.keys import environment_value
from s3vm.solvers.runtime.stdio import native_stdout_elsewhere
from s3vm.solvers.runtime.supervisor import (
    PROGRESS_SECONDS,
    Interrupted,
    received_signal,
    signal_of,
    signals_deferred,
    signals_noted,
    signals_received,
    supervise,
)

#: How far (relative) a solver's bound may lie above the objective and still be read as equal
#: to it (the feasibility tolerances of the MIP solvers are 1e-6).
BOUND_ROUNDING = 1e-6

#: Progress lines of long solves (elapsed time, incumbent, bound), every few seconds.
PROGRESS_LOG = logging.getLogger("s3vm.progress")

#: The most labeled rows for which a solve stopped without labels computes the supervised
#: SVM's (well under a second at this size, inside the time limit's tolerance).
SUPERVISED_FALLBACK_ROWS = 500

#: The most rows for which those labels are scored by the formulation's objective after the
#: stop (a supervised solve on every row: 0.1-0.6 s at heart's 297 on a loaded 2-core machine;
#: D(y) of a thousand rows by an interior-point method would take seconds past the limit).
FALLBACK_SCORED_ROWS = 500

#: The same for the entries of X (n p): the labeling LP of Problem 3 has a column per feature,
#: and a linear kernel costs n^2 p; at 60 x 5,000 the LP before the step took 15 s on a loaded
#: machine, far past a 2 s limit (it is not cut short), where heart's 297 x 13 takes well
#: under a second.
FALLBACK_SCORED_ENTRIES = 100_000

#: The most kernel values the supervised SVM's scores of the unlabeled rows form at once.
FALLBACK_BLOCK_ENTRIES = 1_000_000


def solve(form, instance: Instance, settings: Settings, profile, *,
          started: Optional[float] = None, clock: Optional[Clock] = None) -> Result:
    """Check, resolve the solver, run the family's step on a clock that starts before the
    model is built, and return the completed :class:`~s3vm.solvers.results.Result`.

    ``started`` (a ``time.perf_counter()`` value) makes the clock count from an earlier
    moment, when the command or API call began: the time limit then covers reading the
    data and these checks too, as the caller waits for them (not importing the solver
    library, which no clock can cut short; the clock skips it, but in a program that
    charges it: :func:`~s3vm.solvers.runtime.clock.charge_imports`, the command line). A
    limit that reading the data (or a charged import) used up returns at once, status
    ``time_limit``. ``info["seconds_before_step"]`` is the clock's reading when the model
    building began (or when the limit was found spent before it).

    ``clock`` replaces the one the pipeline builds from the profile's ``time_limit`` and
    ``started`` (a test's clock on a :class:`~s3vm.solvers.runtime.clock.ManualTimer`, whose
    limit falls where the test puts it). Either way the solve has one clock, handed to the
    step and on from there (bound problems, the search, every backend call); the profile
    below this function carries solver options only.

    The step runs under :func:`~s3vm.solvers.runtime.supervisor.supervise`: the time limit holds
    even inside a step that cannot be cut short (the result is then what the step reported
    so far, status ``time_limit``), a progress line reaches the log (logger
    ``s3vm.progress``) every few seconds, and a signal (Ctrl-C; SIGTERM under the command
    line) stops the solve and raises :class:`~s3vm.solvers.runtime.supervisor.Interrupted` carrying
    the best result so far.

    The stages, each with one exit: :func:`solve_clock`, :func:`spent_reading` (the limit
    spent before the solver library is imported), :func:`resolve_backend`,
    :func:`spent_importing` (spent by the import), :func:`run_step` (the fallback answer, the
    supervised step, and the completion of a stopped one).
    """
    clock = solve_clock(profile, started, clock)
    instance = form.dense_instance(instance, settings)
    form.check(instance, settings)
    result = spent_reading(form, instance, settings, profile, clock, started)
    if result is None:
        backend = resolve_backend(form, instance, settings, profile, clock, started)
        result = spent_importing(form, backend, instance, settings, clock, started)
        if result is None:
            result = run_step(form, backend, instance, settings, profile, clock)
    return result


def solve_clock(profile, started: Optional[float], clock: Optional[Clock]) -> Clock:
    """The solve's one clock: ``clock`` when given, else one of the profile's ``time_limit``
    counting from ``started`` (now by default). A limit that is not a positive finite number
    is an :class:`~s3vm.solvers.errors.InputError`."""
    limit = profile.time_limit
    if limit is not None and not (limit > 0 and math.isfinite(limit)):
        # profiles check this; a duck-typed one may not
        raise InputError(f"time limit must be > 0 (seconds), got {limit}")
    return Clock(limit, start=started) if clock is None else clock


def spent_reading(form, instance: Instance, settings: Settings, profile, clock: Clock,
                  started: Optional[float]) -> Optional[Result]:
    """The result of a solve whose limit reading the data used up (counted from ``started``),
    None otherwise: no solver library is imported, no model built, no process forked (each
    takes seconds on a loaded machine)."""
    result = None
    if started is not None and clock.expired():
        result = Result(formulation=form.name, solver=str(profile.solver),
                        status="time_limit",
                        message="time limit reached while reading the data")
        result.info["seconds_before_step"] = round(clock.seconds, 6)
        unscored_labels(form, instance, settings, result)
        result = finish(form, result, instance, settings, clock)
    return result


def resolve_backend(form, instance: Instance, settings: Settings, profile, clock: Clock,
                    started: Optional[float]):
    """The backend of ``profile``, its options checked and the memory guard run with it.

    Importing the solver library is not charged to the solve (a second or two, once per
    process, that no clock can cut short): the clock skips it, but under a program that charges
    it (the command line, whose caller waits on the wall clock) when the clock counts from the
    program's ``started``."""
    charged = started is not None and imports_charged()
    with (nullcontext() if charged else clock.excluding()):
        backend = form.backend(profile)
    check_options(backend, profile)  # an option this solver ignores would pass silently
    form.check_memory(instance, settings, backend)  # a solver's own model may cost more
    return backend


def spent_importing(form, backend, instance: Instance, settings: Settings, clock: Clock,
                    started: Optional[float]) -> Optional[Result]:
    """The result of a solve whose limit starting the command and the imports used up (seconds
    on a loaded machine), None otherwise: nothing is built, no process forked; the labels are
    the supervised SVM's."""
    result = None
    if started is not None and clock.expired():
        result = Result(formulation=form.name, solver=backend.name, status="time_limit",
                        message="time limit reached while importing the solver library")
        if instance.u:
            supervised_labels(form, instance, settings, result)
        result.info["seconds_before_step"] = round(clock.seconds, 6)
        result = finish(form, result, instance, settings, clock)
    return result


def run_step(form, backend, instance: Instance, settings: Settings, profile,
             clock: Clock) -> Result:
    """The family's step under the supervisor, and its result completed (a stopped step's from
    what it reported, with the fallback labels when it had none)."""
    seconds_before_step = round(clock.seconds, 6)

    def work() -> Optional[Result]:
        result = Result(formulation=form.name, solver=backend.name, status="error")
        try:
            with form.environment():
                form.run(instance, settings, backend, profile, clock, result)
        except Stopped:  # a model build cut short by the limit or a signal
            return None
        except KeyboardInterrupt as exc:  # a solver that caught the signal itself
            clock.stop(INTERRUPTED, signal_of(exc))
            return None
        except Exception as exc:
            if not stopped_inside(exc):
                raise
            return None  # the stop, turned into its own error by a library it was raised in
        return result

    # The labels of a solve stopped before it had a labeling (the supervised SVM's) and their
    # objective (the formulation's, up to FALLBACK_SCORED_ROWS rows) are ready before the step
    # (under a limit always, without one where they are scored: fallback_answer) and held on
    # the clock: a signal during a model build or an SDP solve, which cannot be cut short at
    # once, then finds a complete answer and the worker gets the short grace period
    # (supervisor.INTERRUPT_GRACE_WITH_INCUMBENT), where it waited 2 s and scored the labels
    # afterwards (bb-mip 7.6 s from the signal to the exit at load 10). Computed after the stop,
    # J's supervised solve on heart took 1.3-1.9 s past a 3 s limit on a loaded machine. It
    # costs a supervised SVM on the labeled rows and one labeling's objective (heart, 297 rows:
    # 0.01-0.03 s for J and D(y), 0.4-0.7 s for the Bennett-Demiriz labeling LP, at load 3).
    # A signal while the solver library is imported (before this) is answered by the API with
    # the same labels, unscored (s3vm.core.signal_answers).
    fallback, value = fallback_answer(form, instance, settings, clock)
    if clock.interrupted:  # a signal while it was computed: that is the answer
        result = Result(formulation=form.name, solver=backend.name, status="error",
                        message="stopped before the model was built")
    else:
        result = supervised_step(form, backend, profile, clock, work)
    try:
        # The step is over: a signal from here on must not lose its answer (one that came
        # while the answer was checked left the command line without output, exit 130).
        with signals_deferred():
            result = complete_stopped(form, result, instance, settings, clock, fallback, value,
                                      seconds_before_step)
    except Interrupted as exc:
        if exc.result is None:
            exc.result = result
        raise
    return result


def supervised_step(form, backend, profile, clock: Clock, work) -> Result:
    """``work()`` (the step) under the supervisor: its result, or, for a step stopped inside,
    what it reported on ``clock`` (:func:`result_so_far`)."""
    # A library prints nothing on stdout: what solver libraries write there from C goes to
    # the null device (to stderr under verbose, where the solver's log belongs).
    try:
        with native_stdout_elsewhere(to_stderr=bool(getattr(profile, "verbose", False))):
            outcome = supervise(work, clock, line=progress_line(form.name, clock),
                                emit=PROGRESS_LOG.info, interval=progress_seconds())
        result = outcome.value if outcome.finished else None
    except KeyboardInterrupt as exc:
        # A signal after the step had ended, before its answer was taken (supervise handles
        # those that come while it waits): switching's answer was lost there, exit 130 with
        # nothing on stdout (the interrupt test, twice under load). The labels the step
        # reported are the answer, completed as a stopped solve's.
        clock.stop(INTERRUPTED, signal_of(exc))
        result = None
    except Stopped:
        # The stop of an abortable region (a model build) is raised in the step's thread
        # asynchronously: it can land after the step's own handler, as it returns, and leave
        # the step as its error (vs3vm's build, once in a loaded suite: the signal's answer then
        # came from the API without the held objective). The step reported what it had.
        result = None
    if result is None:
        result = result_so_far(form.name, backend, clock)
    elif clock.interrupted and result.status == "time_limit":
        result.status = "feasible" if result.labels is not None else "error"
    return result


def complete_stopped(form, result: Result, instance: Instance, settings: Settings, clock: Clock,
                     fallback: Optional[np.ndarray], value: tuple,
                     seconds_before_step: float) -> Result:
    """``result`` given the fallback labels where a limit or a signal stopped the solve before
    it had any (see :func:`supervised_labels`), the signal named in its message, and finished
    (:func:`finish`)."""
    # Never worse than what the run holds: the fallback's labels where they beat a stopped
    # step's incumbent (s3vm.core.answers).
    prefer_held(form, result, instance, settings, clock, fallback, value)
    stopped_without_labels = result.status == "time_limit" or (
        clock.interrupted and result.status == "error")
    if stopped_without_labels and result.labels is None and instance.u:
        supervised_labels(form, instance, settings, result, fallback,
                          value if fallback is not None else None)
        if clock.interrupted and result.labels is not None:
            # a signal's answer is the best labeling at hand, with its objective
            result.status = "feasible"
    if clock.interrupted:
        reason = f"interrupted by {signal_name(clock.signal)}"
        result.message = reason + (f" ({result.message})" if result.message else "")
    result.info["seconds_before_step"] = seconds_before_step
    return finish(form, result, instance, settings, clock)


def fallback_answer(form, instance: Instance, settings: Settings,
                    clock: Clock) -> tuple[Optional[np.ndarray], tuple]:
    """(scores, (objective,)) of the fallback labels (:func:`supervised_scores`,
    :func:`fallback_value`), computed before the step and held on ``clock``
    (:meth:`~s3vm.solvers.runtime.clock.Clock.hold`) when they have labels: under a time limit
    always, without one where their objective is computed too (:func:`scorable`; elsewhere a
    stopped solve computes the labels after the stop).

    A signal while the labels are computed (milliseconds) is noted until they are done; one
    while they are scored stops the scoring (which may import Pyomo and HiGHS for the
    Bennett-Demiriz labeling LP: 0.7 s cold, 2 s and more under load, where the signal's
    answer waited for it). Either stops ``clock`` and is not raised: the caller answers with
    the labels, and their objective when it was ready. A signal that a solver library turned
    into an error of its own, which :func:`fallback_value` takes for a failure, is found by
    :func:`~s3vm.solvers.runtime.supervisor.signals_received`.
    """
    scores, value = None, (None,)
    if not instance.u or (clock.limit is None and not scorable(instance)):
        # Without a limit, only where the objective is scored too (a complete answer, for the
        # short grace): on large data the labels alone would cost every solve (the scores of
        # 100,000 unlabeled rows against 400 labeled, rbf: 2 s at load 3) to spare a stopped
        # one their computation after the stop.
        return scores, value
    if settings.balance == "count" and not count_can_be_met(instance, settings):
        # A count no labeling meets (more positives than unlabeled rows) is the step's to
        # answer (infeasible, with exit 0): no fallback labeling exists.
        return scores, value
    signals = signals_received()
    noted: list = []
    try:
        with signals_noted(noted, raise_after=1):
            scores = supervised_scores(instance, settings)
        if noted:
            clock.stop(INTERRUPTED, noted[0])
        else:
            value = fallback_value(form, instance, settings, scores)
    except KeyboardInterrupt as exc:
        clock.stop(INTERRUPTED, signal_of(exc))
    if not clock.interrupted and signals_received() != signals:
        clock.stop(INTERRUPTED, received_signal())
    if scores is not None:
        labels, decision_values = form.round_fallback(scores, instance, settings)
        clock.hold(labels=labels, decision_values=decision_values, objective=value[0])
    return scores, value


def count_can_be_met(instance: Instance, settings: Settings) -> bool:
    """Whether some labeling of the unlabeled rows has the count balance's number of
    positives (it has none when the count exceeds the unlabeled rows)."""
    try:
        settings.positive_count(instance)
    except InputError:
        return False
    return True


def finish(form, result: Result, instance: Instance, settings: Settings, clock: Clock) -> Result:
    """Check ``result``, stamp its time and provenance; raise Interrupted after a signal."""
    check_result(result, instance)
    translate = MESSAGES["translate"]
    if result.message and translate is not None and MESSAGES["spelling"] == "python":
        # The advice in a message names keywords under the Python API (scale='standard').
        result.message = translate(result.message)
    result.seconds = clock.seconds
    used = list(form.applicable(dict.fromkeys(SETTING_KEYS), fixed=True))
    options = form.option_values()
    result.info.update({
        "instance": instance.name,
        "settings": settings.to_dict(used),
        "options": options,
        # The seed of the labeled draw (or generator) that made the data, and the seed of
        # the formulation's own randomised steps (None where there is none).
        "seed": {"data": instance.meta.get("seed"), "formulation": options.get("seed")},
        "s3vm_version": __version__,
    })
    if instance.meta:
        result.info["data"] = dict(instance.meta)
    if clock.interrupted:
        raise Interrupted(clock.signal, result=result)
    return result


def progress_line(name: str, clock: Clock):
    """The progress line of this solve at ``elapsed`` seconds (see :meth:`Clock.report`)."""

    def line(elapsed: float) -> str:
        snap = clock.snapshot()
        parts = [f"{name}: {elapsed:.0f} s", snap.get("phase") or "building the model"]
        for key, word in (("iterations", "iteration"), ("nodes", "node")):
            if snap.get(key) is not None:
                parts.append(f"{snap[key]} {word}{'' if snap[key] == 1 else 's'}")
        parts.append(f"incumbent {_fmt(snap.get('objective'))}")
        parts.append(f"bound {_fmt(snap.get('lower_bound'))}")
        return ", ".join(parts)

    return line


def result_so_far(name: str, backend, clock: Clock) -> Result:
    """The result of a solve stopped inside a step: what the step reported (its incumbent
    and proven bound), status ``time_limit`` (or, after a signal, ``feasible`` with a
    solution and ``error`` without)."""
    snap = clock.snapshot()
    labels = snap.get("labels")
    if clock.interrupted:
        status = "feasible" if labels is not None else "error"
    else:
        status = "time_limit"
    where = snap.get("phase") or "building the model"
    reason = "stopped" if clock.interrupted else "time limit reached"
    return Result(formulation=name, solver=backend.name, status=status,
                  objective=snap.get("objective"), lower_bound=snap.get("lower_bound"),
                  labels=labels, decision_values=snap.get("decision_values"),
                  primal=snap.get("primal") or {}, iterations=snap.get("iterations"),
                  nodes=snap.get("nodes"), message=f"{reason} while {where}")


def supervised_labels(form, instance: Instance, settings: Settings, result: Result,
                      scores: Optional[np.ndarray] = None,
                      value: Optional[tuple] = None) -> None:
    """Labels for a solve its time limit stopped before it had any labeling (a model still
    being built, a relaxation without an iterate to round): the supervised SVM of the
    labeled rows under the solve's kernel, sigma and C (the squared-hinge SVM without bias
    of :func:`s3vm.core.supervised.l2svm_no_bias`), rounded by :meth:`Formulation.round_fallback`,
    said so in the message, and scored by the formulation's own objective
    (:meth:`Formulation.labeling_objective`; the objective stays None where it has none, where
    its computation fails, or beyond :data:`FALLBACK_SCORED_ROWS` rows).

    ``scores``: the SVM's scores of the unlabeled rows when computed already
    (:func:`supervised_scores`); ``value``: their labels' objective when computed already
    (:func:`fallback_value`, a 1-tuple, the objective or None). Skipped (the result keeps no
    labels) when a class has no labeled row, or when the labeled rows are too many for this to
    take well under a second, or when no labeling meets the count balance.
    """
    if settings.balance == "count" and not count_can_be_met(instance, settings):
        return
    if scores is None:
        scores = supervised_scores(instance, settings)
    if scores is None:
        return
    result.labels, result.decision_values = form.round_fallback(scores, instance, settings)
    result.info["labels_from"] = "supervised SVM"
    note = ("the labels are the supervised SVM's on the labeled rows (no labeling of "
            f"{form.name} yet)")
    value = value[0] if value is not None else \
        fallback_value(form, instance, settings, scores)[0]
    if value is not None:
        result.objective = value
        if result.lower_bound is not None and result.lower_bound > value:
            # a bound of the solver's model above a labeling's exact value: its tolerance
            result.lower_bound = value
        note += f", scored by {form.name}'s objective"
    result.message = f"{result.message}; {note}" if result.message else note


def unscored_labels(form, instance: Instance, settings: Settings, result: Result) -> None:
    """Labels at every limit, for a limit already spent (reading the data): the supervised
    SVM's (milliseconds, :func:`supervised_labels`), not scored, as their objective may need
    Pyomo and HiGHS imported (the Bennett-Demiriz labeling LP), a second and more."""
    if instance.u:
        supervised_labels(form, instance, settings, result,
                          supervised_scores(instance, settings), (None,))


def fallback_value(form, instance: Instance, settings: Settings,
                   scores: Optional[np.ndarray]) -> tuple:
    """(objective,) of the labels the supervised ``scores`` round to, or (None,): none, or
    beyond :data:`FALLBACK_SCORED_ROWS` rows or :data:`FALLBACK_SCORED_ENTRIES` entries of X."""
    if scores is None or not scorable(instance):
        return (None,)
    labels, _ = form.round_fallback(scores, instance, settings)
    try:
        # The scoring LP or SVM is a solver call like the step's: its banner (HiGHS's) must
        # not reach stdout.
        with native_stdout_elsewhere():
            value = form.labeling_objective(instance, settings, labels)
    except Exception:  # noqa: BLE001 - a solver's failure here (CVXPY's SolverError, say)
        return (None,)  # must not fail a solve that only needed the labels
    return (float(value) if value is not None and math.isfinite(value) else None,)


def scorable(instance: Instance) -> bool:
    """Whether the fallback labels' objective is computed for ``instance`` (at most
    :data:`FALLBACK_SCORED_ROWS` rows and :data:`FALLBACK_SCORED_ENTRIES` entries of X)."""
    return instance.n <= FALLBACK_SCORED_ROWS and \
        instance.n * instance.p <= FALLBACK_SCORED_ENTRIES


def supervised_scores(instance: Instance, settings: Settings) -> Optional[np.ndarray]:
    """The scores of the unlabeled rows by the labeled rows' supervised SVM (see
    :func:`supervised_labels`); None where it is skipped or fails."""
    yL = instance.label[instance.labeled].astype(float)
    if min(np.sum(yL > 0), np.sum(yL < 0)) == 0 or yL.size > SUPERVISED_FALLBACK_ROWS:
        return None
    XL = instance.XL
    try:
        beta = l2svm_no_bias(kernel_matrix(XL, None, settings.kernel, settings.sigma), yL,
                             float(settings.C))
    except (np.linalg.LinAlgError, ValueError, ArithmeticError):
        # computed for every timed solve, it must not fail one the formulation would solve
        # (C = 0 divides by zero here)
        return None
    # Computed before every solve: the u x l kernel block in slices of FALLBACK_BLOCK_ENTRIES,
    # not at once (100,000 unlabeled rows against 500 labeled: 400 MB).
    XU = instance.XU
    step = max(1, FALLBACK_BLOCK_ENTRIES // max(1, yL.size))
    scores = np.concatenate([kernel_matrix(XU[i:i + step], XL, settings.kernel, settings.sigma)
                             @ beta for i in range(0, instance.u, step)]) \
        if instance.u else np.zeros(0)
    return scores if np.all(np.isfinite(scores)) else None


def progress_seconds() -> float:
    """Seconds between progress lines: 5, or ``S3VM_PROGRESS_SECONDS`` when set (checked by its
    key in :data:`s3vm.solvers.runtime.keys.ENVIRONMENT`: at least 0.01 s, so that a tiny value
    cannot flood stderr)."""
    return environment_value("S3VM_PROGRESS_SECONDS", PROGRESS_SECONDS)


def _fmt(value) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.8g}"


def _check_certified(result: Result, u: int) -> None:
    """Certified labels only beside labels and an objective, one bool per unlabeled row."""
    certified = result.certified_labels
    if certified is None:
        return
    certified = np.asarray(certified, dtype=bool)
    whole = result.labels is not None and result.objective is not None
    result.certified_labels = certified if whole and certified.shape == (u,) else None


def check_result(result: Result, instance: Instance) -> None:
    """The guarantees of every result, whatever a solver returned: labels are u values +1/-1,
    decision values u finite numbers, the objective and bound finite (or None), and the bound
    not above the objective. A solution with non-finite numbers is a numerical failure: status
    ``error`` with a message saying what to change, never a solution reported as found."""
    u = instance.u
    failures = []
    labels = result.labels
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (u,) or not np.all((labels == 1) | (labels == -1)):
            failures.append(f"labels of shape {labels.shape} (expected {u} values +1/-1)")
    scores = result.decision_values
    if scores is not None:
        scores = np.asarray(scores, dtype=float)
        if scores.shape != (u,):
            failures.append(f"{scores.size} decision values (expected {u})")
        elif not np.all(np.isfinite(scores)):
            failures.append("non-finite decision values")
    objective = result.objective
    if objective is not None and not math.isfinite(float(objective)):
        failures.append(f"objective {objective}")
    if failures:
        result.labels = result.decision_values = result.objective = None
        result.lower_bound = result.certified_labels = None
        result.primal = {}
        if result.status in ("optimal", "feasible", "time_limit"):
            result.status = "error"
        result.message = ("numerical failure: " + ", ".join(failures) + "; the data or options "
                          "are too extreme for the solver (scale the features with --scale "
                          "standard, or choose moderate --C, --sigma)")
        return
    if result.labels is not None:
        result.labels = labels.astype(int)
    _check_certified(result, u)
    bound = result.lower_bound
    if bound is not None:
        bound = float(bound)
        if math.isnan(bound) or bound == -math.inf:
            result.lower_bound = None
        elif objective is not None and bound > float(objective):
            if bound <= float(objective) + BOUND_ROUNDING * max(1.0, abs(objective)):
                result.lower_bound = float(objective)  # rounding: the objective is attained
            else:
                # A bound above an attained objective is wrong: drop it rather than report a
                # negative gap.
                result.info["dropped_lower_bound"] = bound
                result.lower_bound = None
                result.certified_labels = None  # proven by the same bounds
                if result.status == "optimal":
                    result.status = "feasible"
                    # the solver's "Optimal" would contradict the status
                    result.message = (f"optimality not proven: the solver's bound {bound:.6g} "
                                      f"lies above {float(objective):.6g}, the objective of "
                                      "its labels, and is dropped")
