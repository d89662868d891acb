"""What every formulation provides: its declarations, its options and its checks.

The pipeline (:meth:`Formulation.solve`, :mod:`s3vm.core.pipeline`) is the same for every
formulation: check the instance and settings, resolve the solver, start the clock (the time limit
covers model building), run the family's step, and complete the
:class:`~s3vm.solvers.results.Result` with the time, the settings actually used and the options.
Each family supplies one hook, :meth:`Formulation.run`: build the model and hand it to a backend
(Pyomo, conic), or to an engine (successive LPs, branch and bound).
"""

from __future__ import annotations

import logging
import warnings
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Optional

import numpy as np

from s3vm.core import pipeline
from s3vm.core.answers import record_applied
from s3vm.core.options import flags_of, table
from s3vm.core.problems import PROBLEMS, labeling_objective
from s3vm.core.registry import all_options, formulation_class, formulation_names
from s3vm.core.settings import SETTING_KEYS, SETTINGS_TABLE, Settings, keyword_hint
from s3vm.data.instance import Instance, is_sparse
from s3vm.solvers.bnb.links import round_scores
from s3vm.solvers.bnb.problem import labels_by_outputs
from s3vm.solvers.errors import InexactFileWarning, InputError
from s3vm.solvers.registry import backend_class, get_backend, unavailable_reason
from s3vm.solvers.results import Result
from s3vm.solvers.runtime.clock import Clock
from s3vm.solvers.runtime.files import check_writable
from s3vm.solvers.runtime.memory import check_array_memory, check_dense_memory
from s3vm.solvers.runtime.supervisor import Interrupted

#: Bytes a solve with dense matrices needs whatever n, added to the guard's estimate: the
#: libraries it imports (CVXPY, Pyomo, SCIP, SDPA) and their work space, 120 to 160 MiB for
#: sdp and about 290 MiB for l2-miqp at the smallest sizes of docs/changelog.md (peak memory).
DENSE_BASE_BYTES = 384 << 20

#: Peak bytes per entry of densifying a sparse X for a formulation that reads it dense (the
#: dense array and the Instance's checked copy).
DENSIFY_BYTES = 16

#: The formulations that take a scipy.sparse X as it is, for the message of the others.
SPARSE_ADVICE = ("primal-tsvm (linear kernel, never densified) or switching with --kernel rbf "
                 "(through the kernel's Nystroem factor)")

#: What to do instead, per formulation, when its n x n matrices do not fit.
MEMORY_ADVICE = {
    "lp": "use --kernel linear (an LP without n x n coefficients) or sdp-lowrank, or fewer points",
    "svm": "use sdp-lowrank (a low-rank kernel factor, no n x n matrix) or fewer points",
    "sdp": "use sdp-lowrank (a low-rank kernel factor, no n x n matrix) or fewer points",
}



def solve_recorded(form, instance: Instance, settings: Settings, profile,
                   started: Optional[float], clock: Optional[Clock] = None) -> Result:
    """:func:`s3vm.core.pipeline.solve`, with what applied (limit, solver, profile, options)
    recorded on its result, a signal's too (:func:`s3vm.core.answers.record_applied`)."""
    try:
        result = pipeline.solve(form, instance, settings, profile, started=started, clock=clock)
    except Interrupted as exc:
        record_applied(exc.result, profile)
        raise
    record_applied(result, profile)
    return result


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
    modelers : tuple of str
        The modeling libraries of the declarative model :func:`s3vm.build` returns, the default
        first (:data:`MODELERS`); empty for a formulation that is an algorithm, not one model.
    no_model : str or None
        Why there is no declarative model (one line), when :attr:`modelers` is empty.
    components : dict
        The declarative model's named components: name -> meaning, in the notation of
        docs/formulations.md (docs/models.md lists them).
    estimator_options : dict
        Options :class:`s3vm.S3VMClassifier` sets where its ``options`` leave them out (the
        estimator's defaults; :func:`s3vm.solve` keeps the formulation's own).
    in_place_settings : tuple of str
        The settings a built declarative model takes without a rebuild (``Built.update``:
        mutable Pyomo Params, CVXPY Parameters); :meth:`update_model` writes them.
    derived_constants : bool
        Whether the declarative model carries constants derived from a bound on the optimum
        of the problem as built (big-M values, variable bounds), which a user's change can
        void: ``Built.solve`` then checks and raises them
        (:mod:`s3vm.formulations.families.kept_exact`, docs/models.md).
    local : bool
        A local search: :func:`s3vm.solve` reports ``info["unlabeled_effect"]``.
    sparse_linear : str or None
        Where the estimator routes sparse linear input (``switching``: ``primal-tsvm``).
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
    in_place_settings: ClassVar[tuple] = ()
    unmeetable_count_is_infeasible: ClassVar[bool] = False
    settings_used: ClassVar[tuple] = SETTING_KEYS
    settings_fixed: ClassVar[dict] = {}
    balances: ClassVar[tuple] = ("none", "count")
    preferred_solvers: ClassVar[tuple] = ()
    modelers: ClassVar[tuple] = ()
    no_model: ClassVar[Optional[str]] = None
    components: ClassVar[dict] = {}
    derived_constants: ClassVar[bool] = False
    estimator_options: ClassVar[dict] = {}
    accepts_sparse: ClassVar[bool] = False
    sparse_linear: ClassVar[Optional[str]] = None
    local: ClassVar[bool] = False

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
    def applicable(cls, values: dict, fixed: bool = False) -> dict:
        """The settings of ``values`` it reads (and with ``fixed``, fixes): the one filter."""
        return {k: v for k, v in values.items()
                if k in cls.settings_used or (fixed and k in cls.settings_fixed)}

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
        if not self.uses_groups and instance.has_groups:
            # Dropping the constraints silently would solve another problem than the data states.
            raise InputError(f"formulation {self.name!r} does not take groups (the 'group' "
                             f"column or pairs: equivalence constraints): use "
                             f"{', '.join(group_formulations())}, or drop them")
        if settings.balance == "count":
            settings.positive_count(instance, in_range=not self.unmeetable_count_is_infeasible)

    def takes_sparse(self, settings: Settings) -> bool:
        """Whether this formulation works on a ``scipy.sparse`` X as it is under ``settings``
        (:attr:`accepts_sparse` by default)."""
        return self.accepts_sparse

    def dense_instance(self, instance: Instance, settings: Settings) -> Instance:
        """``instance`` as this formulation reads it: itself when X is dense or the
        formulation takes sparse X (:meth:`takes_sparse`), else a copy with X densified,
        explicitly and only when the dense array fits in the memory available (an
        :class:`InputError` naming the sparse-capable formulations otherwise)."""
        if not is_sparse(instance.X) or self.takes_sparse(settings):
            return instance
        n, p = instance.X.shape
        check_array_memory(n, p, DENSIFY_BYTES, f"{self.name} reads the features dense: it",
                           f"its feature indices run to {p:,}; use {SPARSE_ADVICE}, or number "
                           "the features compactly (1 to the number of distinct indices)")
        return Instance(instance.X.toarray(), instance.label, instance.truth, instance.group,
                        instance.feature_names, instance.name, dict(instance.meta))

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
              started: Optional[float] = None, clock: Optional[Clock] = None) -> Result:
        """Check, resolve the solver, run the family's step on a clock that starts before the
        model is built, and return the completed :class:`~s3vm.solvers.results.Result`: the
        one pipeline of every formulation, :func:`s3vm.core.pipeline.solve` (``started``,
        ``clock``, the time limit, progress lines and signals are described there)."""
        return solve_recorded(self, instance, settings, profile, started, clock)

    def round_fallback(self, scores: np.ndarray, instance: Instance,
                       settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        """(labels, scores) of the unlabeled rows from real scores: with the count balance the
        P highest scores are +1, else the signs. The SDP family, which takes groups, rounds with
        them instead (:func:`s3vm.formulations.families.conic.round_scores`)."""
        scores = np.asarray(scores, dtype=float)
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        links = instance.unlabeled_links() if self.uses_groups else None
        labels = round_scores(scores, positives, links)
        if labels is None:  # no labeling keeps the groups with the count: the scores' own
            labels = labels_by_outputs(scores, positives)
        return labels, scores

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

        ``clock`` started before anything was built; the step hands it on (the bound problems,
        the search, ``backend.solve(model, profile, clock)``: its solver gets the time left).
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
        instance = self.dense_instance(instance, settings)
        self.check(instance, settings)
        model = self._export_model(instance, settings)
        self._write(model, path, fmt)
        warn_inexact_file(self.inexact_file_note(model), stacklevel=3)

    def inexact_file_note(self, model) -> Optional[str]:
        """Why a file of ``model`` may solve below the problem's optimum in another reader
        (:func:`warn_inexact_file`), or None; per family."""
        return None

    def labeling_objective(self, instance: Instance, settings: Settings,
                           labels: np.ndarray) -> Optional[float]:
        """The objective of this formulation at a full labeling of the unlabeled rows (+1/-1,
        in row order): its problem's (:func:`s3vm.core.problems.labeling_objective`, J for
        Problem 1, the Bennett-Demiriz LP for Problem 3; the conic family's D(y)). None for a
        formulation whose objective does not score a labeling."""
        score = labeling_objective(self.problem)
        return None if score is None else score(instance, settings, labels)

    def declarative_model(self, instance: Instance, settings: Settings, modeler: str):
        """The model :func:`s3vm.build` returns for ``modeler`` (one of :attr:`modelers`), built
        and not solved: :meth:`build` by default (the conic family's holds its readers)."""
        return self.build(instance, settings)

    def set_start(self, instance: Instance, settings: Settings, labels) -> None:
        """Start the solve from the labeling ``labels`` of the unlabeled rows (a warm start);
        an :class:`InputError` here: only the branch-and-bound formulations take one."""
        raise InputError(f"{self.name} takes no start labeling (bb, bb-mip and bb-sdp do, as "
                         "their first incumbent)")

    def update_model(self, model, conic, instance: Instance, old: Settings,
                     new: Settings) -> bool:
        """Write the settings ``new`` into the declarative ``model`` built with ``old`` (its
        conic holder ``conic``, None for Pyomo), in place, when only :attr:`in_place_settings`
        differ and the model holds them as parameters; False when it must be built again (the
        default: nothing is in place)."""
        return False

    def solving_given(self, given: "GivenModel") -> "Formulation":
        """A formulation whose step solves ``given.model`` (a declarative model the user may
        have changed) instead of building one: what ``Built.solve`` runs. Each family that has
        a declarative model gives it."""
        raise InputError(f"{self.name} has no declarative model to solve")

    def _export_model(self, instance: Instance, settings: Settings):
        """The model :meth:`export` writes (the conic family builds its MOSEK Fusion model)."""
        return self.build(instance, settings)

    def _write(self, model, path: str, fmt: str) -> None:  # pragma: no cover - per family
        raise NotImplementedError


#: The modeling libraries a declarative model may come from (:attr:`Formulation.modelers`).
MODELERS = ("pyomo", "cvxpy", "fusion")


def warn_inexact_file(note: Optional[str], stacklevel: int = 2) -> None:
    """Warn with ``note`` (a :class:`~s3vm.solvers.errors.InexactFileWarning`) when there is
    one: :meth:`Formulation.export` and :meth:`s3vm.built.Built.export` do."""
    if note:
        warnings.warn(note, InexactFileWarning, stacklevel=stacklevel + 1)


@dataclass
class GivenModel:
    """A declarative model handed back to its formulation to be solved as it is now
    (:meth:`Formulation.solving_given`).

    Attributes
    ----------
    model : object
        The Pyomo model, CVXPY problem or Fusion model.
    modeler : str
        Its library (:data:`MODELERS`).
    conic : object, optional
        The conic family's holder it was built in (its readers), None for Pyomo.
    solvers : str
        Which solvers take a model of this kind, for the error when another is asked for.
    baseline : dict, optional
        The model's state as built, for a model whose constants derive from a bound (big-M):
        the solve tells a changed model by it and keeps those constants valid (Pyomo), or
        claims no bound the change could void (bb-sdp's root). None for the others.
    """

    model: Any
    modeler: str
    conic: Any = None
    solvers: str = ""
    baseline: Any = None


def group_formulations() -> list:
    """The registered formulations that honour groups (their ``uses_groups``), for messages:
    each class is imported (a message of refused input, not a solve's path)."""
    return [name for name in formulation_names()
            if getattr(formulation_class(name), "uses_groups", False)]


#: (formulation, solver) pairs whose missing preferred solver was already reported.
_INSTALL_HINTS_GIVEN: set = set()

