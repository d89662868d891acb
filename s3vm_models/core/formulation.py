"""What every formulation provides: its options, its checks, and the one solve pipeline.

The pipeline (:meth:`Formulation.solve`) is the same for every formulation: check the instance
and settings, resolve the solver, start the clock (the time limit covers model building), run the
family's step, and complete the :class:`~s3vm.solvers.results.Result` with the time, the
settings actually used and the options. Each family supplies one hook, :meth:`Formulation.run`:
build the model and hand it to a backend (Pyomo, conic), or to an engine (successive LPs, branch
and bound).
"""

from __future__ import annotations

import logging
import math
import os
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from typing import ClassVar, Optional

import numpy as np

from s3vm._version import __version__
from s3vm.core.kernels import kernel_matrix
from s3vm.core.options import flags_of, table
from s3vm.core.problems import PROBLEMS, labeling_objective
from s3vm.core.registry import all_options
from s3vm.core.settings import SETTINGS_TABLE, Settings, keyword_hint
from s3vm.core.supervised import l2svm_no_bias
from s3vm.data.instance import Instance
from s3vm.solvers.bnb.problem import labels_by_outputs
from s3vm.solvers.errors import InputError, MESSAGES
from s3vm.solvers.registry import backend_class, get_backend, unavailable_reason
from s3vm.solvers.results import Result
from s3vm.solvers.runtime.clock import Clock, INTERRUPTED, Stopped, imports_charged
from s3vm.solvers.runtime.files import check_writable
from s3vm.solvers.runtime.memory import check_dense_memory
from s3vm.solvers.runtime.stdio import native_stdout_elsewhere
from s3vm.solvers.runtime.supervisor import (Interrupted, PROGRESS_SECONDS, signal_name, signal_of,
                                             supervise)

#: How far (relative) a solver's bound may lie above the objective and still be read as equal
#: to it (the feasibility tolerances of the MIP solvers are 1e-6).
BOUND_ROUNDING = 1e-6

#: Progress lines of long solves (elapsed time, incumbent, bound), every few seconds.
PROGRESS_LOG = logging.getLogger("s3vm.progress")

ALL_SETTINGS = ("kernel", "sigma", "C", "C_star", "bias", "hard_margin", "balance", "positives",
                "mu", "nu")

#: Bytes a solve with dense matrices needs whatever n, added to the guard's estimate: the
#: libraries it imports (CVXPY, Pyomo, SCIP, SDPA) and their work space, 120 to 160 MiB for
#: sdp and about 290 MiB for l2-miqp at the smallest sizes of docs/benchmarks.md (peak memory).
DENSE_BASE_BYTES = 384 << 20

#: What to do instead, per formulation, when its n x n matrices do not fit.
MEMORY_ADVICE = {
    "lp": "use --kernel linear (an LP without n x n coefficients) or sdp-lowrank, or fewer points",
    "svm": "use sdp-lowrank (a low-rank kernel factor, no n x n matrix) or fewer points",
    "sdp": "use sdp-lowrank (a low-rank kernel factor, no n x n matrix) or fewer points",
}


class Formulation(ABC):
    """A named S3VM formulation.

    Subclasses state the problem once (:meth:`build`, or the model their family's :meth:`run`
    builds) and declare what they take in class attributes; the constructor, the command line
    and comparisons read those declarations.

    Parameters
    ----------
    **options
        Values of the entries of :attr:`options` (keywords only); any other keyword is an
        :class:`InputError` naming its flag.

    Class attributes
    ----------------
    name : str
        The registry name (``--formulation NAME``).
    summary : str
        One line for ``s3vm list``.
    problem : int
        Which problem of docs/formulations.md it solves (1: S3VM-L2, 2: TSVM-H, 3: S3VM-1;
        :data:`s3vm.core.problems.PROBLEMS`). How its solution scores a new point and what the
        estimator solves without unlabeled points follow from it; None for a formulation
        whose solution cannot score new points.
    supervised_formulation : str or None
        The registered formulation the estimator solves when there is no unlabeled point, where
        it differs from the problem's own (``rlp`` keeps its robust LP); None: the problem's.
    problem_class : str
        Which solvers may take its models: a key of
        :data:`s3vm.solvers.vocabulary.PROBLEM_CLASSES`.
    options : tuple of Option
        The formulation's own options (:mod:`s3vm.core.options`); a subclass extends its parent's.
    export_formats : tuple of str
        Formats ``s3vm export`` can write.
    needs_labels : bool
        Whether both classes must have a labeled point.
    needs_unlabeled : bool
        Whether there must be an unlabeled point.
    settings_used : tuple of str
        The :class:`Settings` fields the formulation reads. An instance file's value of any other
        field is ignored; the same field given explicitly (a command-line flag, a keyword of
        :func:`s3vm.solve`) is an error, not silently dropped.
    settings_fixed : dict
        Fields the formulation always solves with one value: name -> (value, why). An explicit
        other value is an error giving ``why``; a file's other value is ignored.
    balances : tuple of str
        The values of ``balance`` the formulation solves (when it reads ``balance``); another is
        an :class:`InputError`.
    preferred_solvers : tuple of str
        The solvers to use when none is named, the first installed one winning (before the
        default of the problem class).
    unmeetable_count_is_infeasible : bool
        Whether a balance count outside 0..u is a problem without feasible labelings (status
        ``infeasible``) rather than bad input.
    uses_groups : bool
        Whether the formulation honours the data's ``group`` column (equivalence and
        inequivalence constraints); a formulation that does not refuses data that has groups.
    dense_bytes : tuple of (float, float)
        Peak bytes per entry of an n x n matrix under the linear and the rbf kernel: all the
        step's dense matrices and the solver's copies counted, measured as the slope of peak RSS
        against n^2 (``benchmarks/peak_memory.py``). The memory guard refuses an n whose
        ``dense_bytes * n^2`` exceeds the memory available; (0, 0), the default, for a
        formulation that forms no n x n matrix.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    problem: ClassVar[Optional[int]] = None
    supervised_formulation: ClassVar[Optional[str]] = None
    problem_class: ClassVar[str]
    options: ClassVar[tuple] = ()
    export_formats: ClassVar[tuple] = ()
    dense_bytes: ClassVar[tuple] = (0, 0)
    needs_labels: ClassVar[bool] = True
    needs_unlabeled: ClassVar[bool] = True
    uses_groups: ClassVar[bool] = False
    unmeetable_count_is_infeasible: ClassVar[bool] = False
    settings_used: ClassVar[tuple] = ALL_SETTINGS
    settings_fixed: ClassVar[dict] = {}
    balances: ClassVar[tuple] = ("none", "count")
    preferred_solvers: ClassVar[tuple] = ()

    def __init__(self, **values):
        options = self.option_table()
        unknown = [k for k in values if k not in options]
        if unknown:
            # Name the flag the user typed (--gap, not the keyword rel_gap of another table).
            known = {name: option for name, (option, _) in all_options().items()}
            hint = (" (a MIP solver's gap is the profile's mip_rel_gap)"
                    if "rel_gap" in unknown and self.problem_class in ("lp", "mip") else "")
            if not hint and len(unknown) == 1:
                hint = keyword_hint(unknown[0], self.name)
            raise InputError(f"{flags_of(unknown, {**known, **options})} does not apply to "
                             f"formulation {self.name!r}{hint}")
        for name, option in options.items():
            setattr(self, name, option.validate(values.get(name, option.default)))
        self.check_options()

    # -- declarations ----------------------------------------------------------------------
    @classmethod
    def inductive_rule(cls) -> Optional[str]:
        """How a solution scores a new point (:data:`s3vm.core.problems.INDUCTIVE_RULES`), from
        the problem the formulation declares; None when it declares none."""
        return None if cls.problem is None else PROBLEMS[cls.problem].inductive_rule

    @classmethod
    def supervised_name(cls) -> Optional[str]:
        """The registered formulation that solves this one's problem without unlabeled points,
        or None when the estimator solves the problem's supervised SVM itself."""
        if cls.supervised_formulation is not None:
            return cls.supervised_formulation
        return None if cls.problem is None else PROBLEMS[cls.problem].supervised_formulation

    @classmethod
    def option_table(cls) -> dict:
        """name -> :class:`~s3vm.core.options.Option` of this formulation."""
        return table(cls.options)

    def option_values(self) -> dict:
        """The options this formulation was made with (defaults included)."""
        return {name: getattr(self, name) for name in self.option_table()}

    @classmethod
    def default_solver(cls) -> "str | None":
        """The first installed of :attr:`preferred_solvers`, else None (the class default)."""

        for rank, name in enumerate(cls.preferred_solvers):
            if unavailable_reason(name, cls.problem_class) is None:
                if rank:
                    cls._say_what_to_install(name)
                return name
        return None

    @classmethod
    def _say_what_to_install(cls, chosen: str) -> None:
        """A warning (logger ``s3vm.solvers``, once per formulation and process) that the
        preferred solver is missing, what installs it, and what the one chosen instead costs:
        sdp ran 18 minutes on two_moons with SCS where SDPA takes seconds, and nothing said so."""

        first = cls.preferred_solvers[0]
        if (cls.name, first) in _INSTALL_HINTS_GIVEN:
            return
        _INSTALL_HINTS_GIVEN.add((cls.name, first))
        extra = backend_class(first, cls.problem_class).extra
        install = f" (pip install s3vm[{extra}])" if extra else ""
        logging.getLogger("s3vm.solvers").warning(
            "%s: solver %s is not installed%s; using %s, which can take minutes where %s takes "
            "seconds (give --time-limit / time_limit=, or install %s)", cls.name, first,
            install, chosen, first, first)

    def check_options(self) -> None:
        """Checks that involve several options or the file system (after each is valid)."""

    @classmethod
    def settings_for(cls, base: Settings, explicit: dict, strict: bool = True) -> Settings:
        """The settings this formulation solves with.

        Parameters
        ----------
        base : Settings
            Defaults (an instance file's settings): fields the formulation does not read are
            ignored, fixed fields take the formulation's value.
        explicit : dict
            Fields given explicitly (None values are ignored).
        strict : bool
            Refuse an explicit field the formulation does not read, or a fixed field given
            another value (True for a solve; False for options given to a whole comparison,
            which go to the formulations that read them).
        """
        explicit = {k: v for k, v in explicit.items() if v is not None}
        for key, value in explicit.items():
            if key not in SETTINGS_TABLE:
                raise InputError(f"unknown setting {key!r}{keyword_hint(key, cls.name)}: the "
                                 f"settings are {', '.join(SETTINGS_TABLE)}")
            if not strict:
                continue
            flag = SETTINGS_TABLE[key].flag_name
            if key in cls.settings_fixed:
                fixed, why = cls.settings_fixed[key]
                if SETTINGS_TABLE[key].validate(value) != fixed:
                    raise InputError(f"{flag} does not apply to {cls.name}: {why}")
            elif key not in cls.settings_used:
                raise InputError(f"{flag} does not apply to {cls.name}")
        values = {k: getattr(base, k) for k in cls.settings_used}
        values.update({k: v for k, v in explicit.items() if k in cls.settings_used})
        values.update({k: fixed for k, (fixed, _) in cls.settings_fixed.items()})
        if "positives" in explicit and values.get("balance") != "count" \
                and "positives" in cls.settings_used:
            raise InputError("--positives needs --balance count")
        return Settings(**values)

    def check(self, instance: Instance, settings: Settings) -> None:
        """Raise :class:`InputError` when the instance or settings do not fit the formulation."""
        for key, (value, why) in self.settings_fixed.items():
            if getattr(settings, key) != value:
                raise InputError(why)
        instance.require_moderate_features()
        self.check_memory(instance, settings)
        if "balance" in self.settings_used and settings.balance not in self.balances:
            raise InputError(f"--balance {settings.balance} does not apply to {self.name} (it "
                             f"takes {', '.join(self.balances)}; the mean balance is S3VM-L2's: "
                             "bb, bb-sdp, l2-miqp)")
        if self.needs_labels:
            instance.require_both_classes_labeled()
        if self.needs_unlabeled:
            instance.require_unlabeled()
        if not self.uses_groups and instance.group is not None and np.any(instance.group != 0):
            # Dropping the constraints silently would solve another problem than the data states.
            raise InputError(f"formulation {self.name!r} does not take the 'group' column "
                             "(equivalence constraints): use sdp, sdp-subspace or sdp-lowrank, "
                             "or drop the column")
        if settings.balance == "count":
            settings.positive_count(instance, in_range=not self.unmeetable_count_is_infeasible)

    def dense_bytes_per_entry(self, settings: Settings, backend=None) -> float:
        """Peak bytes per entry of an n x n matrix this formulation forms under ``settings``
        (its :attr:`dense_bytes` for the kernel; 0 for none). A formulation whose footprint
        depends on more than the kernel (its options, the ``backend`` once it is known)
        overrides this."""
        linear, rbf = self.dense_bytes
        return rbf if settings.kernel == "rbf" else linear

    def check_memory(self, instance: Instance, settings: Settings, backend=None) -> None:
        """The memory guard: refuse an n whose dense matrices (:meth:`dense_bytes_per_entry`,
        plus :data:`DENSE_BASE_BYTES`) exceed the memory available. Called by :meth:`check`
        and again by :meth:`solve` once the backend is resolved."""
        check_dense_memory(instance.n, self.dense_bytes_per_entry(settings, backend), self.name,
                           self.memory_advice(settings, backend), base=DENSE_BASE_BYTES)

    def memory_advice(self, settings: Settings, backend=None) -> str:
        """What to do instead when the n x n matrices do not fit."""
        if self.problem_class in ("lp", "mip", "miqp"):
            return MEMORY_ADVICE["lp"] if settings.kernel == "rbf" else MEMORY_ADVICE["svm"]
        return MEMORY_ADVICE.get(self.problem_class, MEMORY_ADVICE["svm"])

    # -- the pipeline ----------------------------------------------------------------------
    def solve(self, instance: Instance, settings: Settings, profile, *,
              started: Optional[float] = None) -> Result:
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

        The step runs under :func:`~s3vm.solvers.runtime.supervisor.supervise`: the time limit holds
        even inside a step that cannot be cut short (the result is then what the step reported
        so far, status ``time_limit``), a progress line reaches the log (logger
        ``s3vm.progress``) every few seconds, and a signal (Ctrl-C; SIGTERM under the command
        line) stops the solve and raises :class:`~s3vm.solvers.runtime.supervisor.Interrupted` carrying
        the best result so far.
        """
        limit = profile.time_limit
        if limit is not None and not (limit > 0 and math.isfinite(limit)):
            # profiles check this; a duck-typed one may not
            raise InputError(f"time limit must be > 0 (seconds), got {limit}")
        self.check(instance, settings)
        if started is not None and Clock(limit, start=started).expired():
            # Reading the data used the whole limit: no solver library is imported, no model
            # built, no process forked (each takes seconds on a loaded machine).
            clock = Clock(limit, start=started)
            result = Result(formulation=self.name, solver=str(profile.solver),
                            status="time_limit",
                            message="time limit reached while reading the data")
            result.info["seconds_before_step"] = round(clock.seconds, 6)
            return self._finish(result, instance, settings, clock)
        importing = time.perf_counter()
        backend = self.backend(profile)
        if started is not None and not imports_charged():
            # Importing the solver library is not charged to the solve (a second or two, once
            # per process, that no clock can cut short): the clock skips it, but under a
            # program that charges it (the command line, whose caller waits on the wall clock).
            started += time.perf_counter() - importing
        self.check_memory(instance, settings, backend)  # a solver's own model may cost more
        clock = Clock(limit, start=started)
        seconds_before_step = round(clock.seconds, 6)
        if started is not None and clock.expired():
            # Starting the command and the imports used the whole limit (seconds on a loaded
            # machine): nothing is built, no process forked.
            result = Result(formulation=self.name, solver=backend.name, status="time_limit",
                            message="time limit reached while importing the solver library")
            if instance.u:
                self._supervised_labels(instance, settings, result)
            result.info["seconds_before_step"] = seconds_before_step
            return self._finish(result, instance, settings, clock)

        def work() -> Optional[Result]:
            result = Result(formulation=self.name, solver=backend.name, status="error")
            try:
                with self.environment():
                    self.run(instance, settings, backend, profile, clock, result)
            except Stopped:  # a model build cut short by the limit or a signal
                return None
            except KeyboardInterrupt as exc:  # a solver that caught the signal itself
                clock.stop(INTERRUPTED, signal_of(exc))
                return None
            return result

        # The labels of a solve stopped before it had a labeling (the supervised SVM's) are
        # ready before the step: computed after the grace period they took 0.08 to 0.15 s at
        # 20,000 columns on a loaded machine, on top of the limit and its grace period.
        # Their objective too (the formulation's at those labels, up to FALLBACK_SCORED_ROWS
        # rows): computed after the stop, J's supervised solve on heart took 1.3-1.9 s past a
        # 3 s limit on a loaded machine.
        fallback = self._supervised_scores(instance, settings) \
            if limit is not None and instance.u else None
        fallback_value = self._fallback_value(instance, settings, fallback)
        # A library prints nothing on stdout: what solver libraries write there from C goes to
        # the null device (to stderr under verbose, where the solver's log belongs).
        with native_stdout_elsewhere(to_stderr=bool(getattr(profile, "verbose", False))):
            outcome = supervise(work, clock, line=self._progress_line(clock),
                                emit=PROGRESS_LOG.info, interval=progress_seconds())
        result = outcome.value if outcome.finished else None
        if result is None:
            result = self._result_so_far(backend, clock)
        elif clock.interrupted and result.status == "time_limit":
            result.status = "feasible" if result.labels is not None else "error"
        stopped_without_labels = result.status == "time_limit" or (
            clock.interrupted and result.status == "error")
        if stopped_without_labels and result.labels is None and instance.u:
            self._supervised_labels(instance, settings, result, fallback,
                                    fallback_value if fallback is not None else None)
            if clock.interrupted and result.labels is not None:
                # a signal's answer is the best labeling at hand, with its objective
                result.status = "feasible"
        if clock.interrupted:
            reason = f"interrupted by {signal_name(clock.signal)}"
            result.message = reason + (f" ({result.message})" if result.message else "")
        result.info["seconds_before_step"] = seconds_before_step
        return self._finish(result, instance, settings, clock)

    def _finish(self, result: Result, instance: Instance, settings: Settings,
                clock: Clock) -> Result:
        """Check ``result``, stamp its time and provenance; raise Interrupted after a signal."""
        check_result(result, instance)
        translate = MESSAGES["translate"]
        if result.message and translate is not None and MESSAGES["spelling"] == "python":
            # The advice in a message names keywords under the Python API (scale='standard').
            result.message = translate(result.message)
        result.seconds = clock.seconds
        used = [k for k in ALL_SETTINGS if k in self.settings_used or k in self.settings_fixed]
        options = self.option_values()
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

    def _progress_line(self, clock: Clock):
        """The progress line of this solve at ``elapsed`` seconds (see :meth:`Clock.report`)."""

        def line(elapsed: float) -> str:
            snap = clock.snapshot()
            parts = [f"{self.name}: {elapsed:.0f} s", snap.get("phase") or "building the model"]
            for key, word in (("iterations", "iterations"), ("nodes", "nodes")):
                if snap.get(key) is not None:
                    parts.append(f"{snap[key]} {word}")
            parts.append(f"incumbent {_fmt(snap.get('objective'))}")
            parts.append(f"bound {_fmt(snap.get('lower_bound'))}")
            return ", ".join(parts)

        return line

    def _result_so_far(self, backend, clock: Clock) -> Result:
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
        return Result(formulation=self.name, solver=backend.name, status=status,
                      objective=snap.get("objective"), lower_bound=snap.get("lower_bound"),
                      labels=labels, decision_values=snap.get("decision_values"),
                      primal=snap.get("primal") or {}, iterations=snap.get("iterations"),
                      nodes=snap.get("nodes"), message=f"{reason} while {where}")

    def _supervised_labels(self, instance: Instance, settings: Settings, result: Result,
                           scores: Optional[np.ndarray] = None,
                           value: Optional[tuple] = None) -> None:
        """Labels for a solve its time limit stopped before it had any labeling (a model still
        being built, a relaxation without an iterate to round): the supervised SVM of the
        labeled rows under the solve's kernel, sigma and C (the squared-hinge SVM without bias
        of :func:`s3vm.core.supervised.l2svm_no_bias`), rounded by :meth:`round_fallback`, said so in
        the message, and scored by the formulation's own objective
        (:meth:`labeling_objective`; the objective stays None where it has none, where its
        computation fails, or beyond :data:`FALLBACK_SCORED_ROWS` rows).

        ``scores``: the SVM's scores of the unlabeled rows when computed already
        (:meth:`_supervised_scores`); ``value``: their labels' objective when computed already
        (:meth:`_fallback_value`, a 1-tuple, the objective or None). Skipped (the result keeps
        no labels) when a class has no labeled row, or when the labeled rows are too many for
        this to take well under a second.
        """
        if scores is None:
            scores = self._supervised_scores(instance, settings)
        if scores is None:
            return
        result.labels, result.decision_values = self.round_fallback(scores, instance, settings)
        result.info["labels_from"] = "supervised SVM"
        note = ("the labels are the supervised SVM's on the labeled rows (no labeling of "
                f"{self.name} yet)")
        value = value[0] if value is not None else \
            self._fallback_value(instance, settings, scores)[0]
        if value is not None:
            result.objective = value
            if result.lower_bound is not None and result.lower_bound > value:
                # a bound of the solver's model above a labeling's exact value: its tolerance
                result.lower_bound = value
            note += f", scored by {self.name}'s objective"
        result.message = f"{result.message}; {note}" if result.message else note

    def labeling_objective(self, instance: Instance, settings: Settings,
                           labels: np.ndarray) -> Optional[float]:
        """The objective of this formulation at a full labeling of the unlabeled rows (+1/-1,
        in row order): its problem's (:func:`s3vm.core.problems.labeling_objective`, J for
        Problem 1, the Bennett-Demiriz LP for Problem 3; the conic family's D(y)). None for a
        formulation whose objective does not score a labeling."""
        score = labeling_objective(self.problem)
        return None if score is None else score(instance, settings, labels)

    def _fallback_value(self, instance: Instance, settings: Settings,
                        scores: Optional[np.ndarray]) -> tuple:
        """(objective,) of the labels the supervised ``scores`` round to, or (None,): none, or
        beyond :data:`FALLBACK_SCORED_ROWS` rows."""
        if scores is None or instance.n > FALLBACK_SCORED_ROWS:
            return (None,)
        labels, _ = self.round_fallback(scores, instance, settings)
        return (self._score_fallback(instance, settings, labels),)

    def _score_fallback(self, instance: Instance, settings: Settings,
                        labels: np.ndarray) -> Optional[float]:
        """:meth:`labeling_objective` of fallback labels, None when it fails or is not
        finite (the labels are still an answer)."""
        try:
            value = self.labeling_objective(instance, settings, labels)
        except Exception:  # noqa: BLE001 - a solver's failure here (CVXPY's SolverError, say)
            return None    # must not fail a solve that only needed the labels
        return float(value) if value is not None and math.isfinite(value) else None

    def _supervised_scores(self, instance: Instance,
                           settings: Settings) -> Optional[np.ndarray]:
        """The scores of the unlabeled rows by the labeled rows' supervised SVM (see
        :meth:`_supervised_labels`); None where it is skipped or fails."""
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
        scores = kernel_matrix(instance.XU, XL, settings.kernel, settings.sigma) @ beta
        return scores if np.all(np.isfinite(scores)) else None

    def round_fallback(self, scores: np.ndarray, instance: Instance,
                       settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        """(labels, scores) of the unlabeled rows from real scores: with the count balance the
        P highest scores are +1, else the signs. The SDP family, which takes groups, rounds with
        them instead (:func:`s3vm.formulations.families.conic.round_scores`)."""
        scores = np.asarray(scores, dtype=float)
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        return labels_by_outputs(scores, positives), scores

    def backend(self, profile):
        """The backend that solves this formulation's models for ``profile`` (resolved before
        the clock starts: importing a solver library is not charged to the solve, but under
        :func:`~s3vm.solvers.runtime.clock.charge_imports`)."""

        return get_backend(profile.solver, self.problem_class)

    @contextmanager
    def environment(self):
        """The context of :meth:`run` (thread limits, say); nothing by default."""
        yield

    @abstractmethod
    def run(self, instance: Instance, settings: Settings, backend, profile, clock: Clock,
            result: Result) -> None:
        """The family's step: build, solve with ``backend`` (or drive it), and fill ``result``
        (status, objective, lower bound, labels, decision values, primal, counts, message).

        ``clock`` started before anything was built; solver calls get ``clock.remaining()`` as
        their time limit.
        """

    # -- models and export -----------------------------------------------------------------
    @abstractmethod
    def build(self, instance: Instance, settings: Settings):
        """Return the model of this formulation for ``instance`` (not solved)."""

    def export(self, instance: Instance, settings: Settings, path: str, fmt: str) -> None:
        """Write the model to ``path`` in format ``fmt`` (one of :attr:`export_formats`)."""
        if fmt not in self.export_formats:
            spelled = ", ".join(self.export_formats) or "none"
            raise InputError(f"formulation {self.name!r} cannot be exported as {fmt!r} "
                             f"(formats: {spelled})")
        check_writable(path)
        self.check(instance, settings)
        self._write(self._export_model(instance, settings), path, fmt)

    def _export_model(self, instance: Instance, settings: Settings):
        """The model :meth:`export` writes (the conic family builds its MOSEK Fusion model)."""
        return self.build(instance, settings)

    def _write(self, model, path: str, fmt: str) -> None:  # pragma: no cover - per family
        raise NotImplementedError


#: (formulation, solver) pairs whose missing preferred solver was already reported.
_INSTALL_HINTS_GIVEN: set = set()

#: The most labeled rows for which a solve stopped without labels computes the supervised
#: SVM's (well under a second at this size, inside the time limit's tolerance).
SUPERVISED_FALLBACK_ROWS = 500

#: The most rows for which those labels are scored by the formulation's objective after the
#: stop (a supervised solve on every row: 0.1-0.6 s at heart's 297 on a loaded 2-core machine;
#: D(y) of a thousand rows by an interior-point method would take seconds past the limit).
FALLBACK_SCORED_ROWS = 500


def progress_seconds() -> float:
    """Seconds between progress lines: 5, or ``S3VM_PROGRESS_SECONDS`` when set."""
    text = os.environ.get("S3VM_PROGRESS_SECONDS")
    if text:
        try:
            value = float(text)
        except ValueError:
            value = 0.0
        if value > 0 and math.isfinite(value):
            return value
        raise InputError(f"S3VM_PROGRESS_SECONDS must be a number of seconds > 0, got {text!r}")
    return PROGRESS_SECONDS


def _fmt(value) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.8g}"


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
        result.lower_bound = None
        result.primal = {}
        if result.status in ("optimal", "feasible", "time_limit"):
            result.status = "error"
        result.message = ("numerical failure: " + ", ".join(failures) + "; the data or options "
                          "are too extreme for the solver (scale the features with --scale "
                          "standard, or choose moderate --C, --sigma)")
        return
    if result.labels is not None:
        result.labels = labels.astype(int)
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
                if result.status == "optimal":
                    result.status = "feasible"


def remaining_profile(profile, clock: Clock):
    """``profile`` with the time limit that remains on ``clock`` (unchanged without a limit)."""
    remaining = clock.remaining()
    return profile if remaining is None else profile.updated(time_limit=remaining)
