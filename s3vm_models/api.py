"""The Python API: solve, compare and export. The command line is a thin layer over these.

Settings come from three places, in increasing priority: the defaults of :class:`Settings`, an
instance file (or a ``settings`` argument), and settings given explicitly (keywords such as
``C=10``, the command line's flags). A file's settings are defaults: a formulation that does not
read one ignores it. An explicit setting is meant: a formulation that cannot honour it refuses it
(in a comparison, an explicit setting goes to the formulations that read it, and
``per_formulation`` gives one formulation its own).
"""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING, Iterable, Optional, Union

import numpy as np

from s3vm.core.answers import record_applied
from s3vm.core.kernels import kernel_matrix
from s3vm.core.registry import formulation_class, formulation_options, get_formulation
from s3vm.core.settings import SETTINGS_TABLE, Settings, instance_files, keyword_hint, load_instance
from s3vm.data.instance import Instance
from s3vm.data.readers import as_instance
from s3vm.inductive import blocked_expansion, predictor
from s3vm.models.certificate_check import CertificateError, CheckReport, check_certificate as _check
from s3vm.models.l2_svm import squared_hinge_svm
from s3vm.solvers.errors import InputError, S3VMError
from s3vm.solvers.profiles import get_profile
from s3vm.solvers.registry import problem_classes
from s3vm.solvers.runtime.clock import imports_charged
from s3vm.solvers.runtime.files import check_not_input
from s3vm.solvers.runtime.supervisor import (
    Interrupted,
    received_signal,
    signal_of,
    signals_received,
)

if TYPE_CHECKING:
    import pandas

Data = Union[str, os.PathLike, Instance, tuple, "pandas.DataFrame"]


def load(data: Data) -> tuple[Instance, Settings]:
    """The instance and the settings ``data`` gives (defaults for data without settings).

    ``data`` is one of

    - a file: CSV data (``label`` +1/-1, 0 unlabeled), LIBSVM/svmlight (``.svm``, ``.libsvm``,
      ``.svmlight``; label 0 unlabeled), or a TOML instance file with settings;
    - the name of an instance shipped with s3vm (``"two_moons"``);
    - arrays: a tuple ``(X, y)`` or ``(X, y, truth)`` of numpy arrays, lists or pandas objects,
      y +1/-1 with 0 on unlabeled rows (for scikit-learn's convention, -1 unlabeled and any
      two labels, use :class:`s3vm.S3VMClassifier`);
    - a pandas DataFrame with the columns of a CSV data file (``label``, optional ``truth``
      and ``group``, the rest features);
    - an :class:`Instance`.

    Everything is checked here, once: a complex, non-numeric or non-finite X, labels outside
    -1/0/+1 or mismatched lengths are an :class:`InputError`.
    """

    if isinstance(data, (str, os.PathLike)):
        return load_instance(os.fspath(data))
    instance = as_instance(data)
    if instance is None:
        raise InputError(f"data must be a file path, a shipped instance name, (X, y), a pandas "
                         f"DataFrame or an Instance, got {type(data).__name__}")
    return instance, Settings()


def _options(options) -> dict:
    """The ``options`` argument, checked: a dict of option names to values."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InputError(f"options must be a dict of option names to values, e.g. "
                         f"{{'max_lps': 10}}, got {type(options).__name__}")
    return options


def _input_files(data, inputs) -> list:
    """The files no output of this call may overwrite: ``inputs`` when given, else the files
    ``data`` names (none for an Instance)."""
    if inputs is not None:
        return list(inputs)
    if isinstance(data, (str, os.PathLike)):
        return instance_files(data)
    return []


def _check_outputs(form, files) -> None:
    """The formulation's output files (``--tree``) must not be one of its inputs."""
    for name, option in form.option_table().items():
        value = getattr(form, name, None)
        if option.kind == "file" and value is not None:
            check_not_input(value, files)


def _base_settings(data_settings: Settings, settings: Optional[Settings]) -> Settings:
    if settings is None:
        return data_settings
    if not isinstance(settings, Settings):
        raise InputError(f"settings must be an s3vm Settings object, got "
                         f"{type(settings).__name__} (give single settings as keywords: C=10)")
    return settings


def _profile(form, solver: Optional[str], profile: Optional[str], time_limit: Optional[float],
             verbose: Optional[bool] = None):
    """The profile for one formulation: the named solver or file, else its class's default."""

    by_default = solver is None and profile is None
    if by_default:
        solver = form.default_solver()
    return get_profile(solver, profile, form.problem_class).updated(
        time_limit=time_limit, verbose=verbose or None, by_default=by_default or None)


def solve(data: Data, formulation: str, settings: Optional[Settings] = None, *,
          solver: Optional[str] = None, profile: Optional[str] = None,
          time_limit: Optional[float] = None, options: Optional[dict] = None,
          verbose: bool = False, inputs: Optional[list] = None,
          started: Optional[float] = None, pairs: Optional[dict] = None,
          start=None, effect: bool = True, **overrides):
    """Solve one formulation on one instance.

    Parameters
    ----------
    data : str, os.PathLike, tuple, pandas.DataFrame or Instance
        A data file (CSV, LIBSVM), a TOML instance file, the name of a shipped instance,
        ``(X, y)`` arrays (y +1/-1, 0 unlabeled), a DataFrame or an :class:`Instance`; see
        :func:`load`.
    formulation : str
        A name from :func:`s3vm.core.registry.formulation_names`.
    settings : Settings, optional
        Replaces the settings of a TOML file (defaults for a CSV file); like them, defaults that
        a formulation which does not read them ignores.
    solver, profile : str, optional
        A solver name or a profile file (see :mod:`s3vm.solvers.profiles`).
    time_limit : float, optional
        Seconds, reading the data and building the model included; overrides the profile's
        limit.
    options : dict, optional
        The formulation's own options (``{"clusters": 3}`` for cvs3vm, ...).
    verbose : bool
        The solver's own log on stderr.
    inputs : list of str, optional
        Files no output file (``tree_file``) may overwrite; default: the files ``data`` names.
    started : float, optional
        The ``time.perf_counter()`` value the time limit counts from when the data was read
        before this call (the command line passes the moment it began reading); default the
        start of this call.
    pairs : dict, optional
        Must-link and cannot-link pairs of rows, ``{"must": [(i, j), ...], "cannot": [(i, j),
        ...]}`` (rows numbered from 0 in the data's order, labeled rows included): rows i and
        j share a label, or have opposite labels. Joined with the data's ``group`` column
        (:func:`s3vm.data.pairs.pairs_to_groups`), and honoured as groups are: exactly by
        bd-mip, bb-mip, l2-miqp, bb, bb-sdp and the SDP relaxations, by construction by
        switching, refused (an :class:`InputError`) by the others.
    start : array_like of +1/-1, optional
        A start labeling of the unlabeled rows (file order): bb, bb-mip and bb-sdp take it as
        their first incumbent (a warm start; ``result.info["incumbent_source"]`` is "start"
        while nothing beats it); the others refuse it.
    effect : bool, default True
        For a local formulation (switching, primal-tsvm, vs3vm, cvs3vm), report what the
        unlabeled rows changed (``result.info["unlabeled_effect"]``, :func:`unlabeled_effect`):
        one more supervised solve on the labeled rows.
    **overrides
        Fields of :class:`Settings` given explicitly (``C=10``, ``kernel="rbf"``, ...); None
        values are ignored. One the formulation does not read is an :class:`InputError`.

    Returns
    -------
    s3vm.solvers.results.Result

    Raises
    ------
    s3vm.solvers.runtime.supervisor.Interrupted
        On Ctrl-C (a KeyboardInterrupt): its ``result`` is the best result so far.
    """
    started = time.perf_counter() if started is None else started
    read, data_settings = load(data)
    signals = signals_received()
    try:
        instance = read.with_pairs(pairs)
        form = get_formulation(formulation, **_options(options))
        _check_outputs(form, _input_files(data, inputs))
        effective = form.settings_for(_base_settings(data_settings, settings), overrides)
        if start is not None:
            form.set_start(instance, effective, start)
        result = form.solve(instance, effective,
                            _profile(form, solver, profile, time_limit, verbose),
                            started=started)
    except KeyboardInterrupt as exc:
        if getattr(exc, "result", None) is not None:
            raise
        # A signal before the solve held an answer (importing the formulation or the solver
        # library, seconds under load): the supervised fallback's labels, as a stopped solve's.
        signum = signal_of(exc)
        answer = _answer_of_signal(read, pairs, formulation, options, data_settings, settings,
                                   (solver, profile, time_limit, verbose), overrides, signum)
        raise Interrupted(signum, result=answer) from None
    except Exception:
        if received_signal() is None or signals_received() == signals:
            raise
        # A library turned a signal into an error of its own (an import it cut short): the
        # signal's answer, as above.
        signum = received_signal()
        answer = _answer_of_signal(read, pairs, formulation, options, data_settings, settings,
                                   (solver, profile, time_limit, verbose), overrides, signum)
        raise Interrupted(signum, result=answer) from None
    if effect and type(form).local and result.labels is not None and result.status in ANSWERED:
        try:
            result.info["unlabeled_effect"] = unlabeled_effect(type(form), instance, effective,
                                                               result)
        except KeyboardInterrupt as exc:  # the solve's answer stands, without the comparison
            raise Interrupted(signal_of(exc), result=result) from None
    return result

def _answer_of_signal(read, pairs, formulation, options, data_settings, settings, run,
                      overrides, signum: int):
    """The answer of a solve a signal stopped before it held one (see
    :func:`s3vm.core.answers.answer_of_signal`), with what applied; None when the call's
    arguments are wrong. ``run``: (solver, profile, time_limit, verbose) of the call."""
    # Not at the top: it imports the pipeline (scipy.optimize and more), which `s3vm --help`
    # and parsing a solve must not import (tests/test_cli_startup.py).
    from s3vm.core.signal_answers import answer_of_signal

    try:
        form = get_formulation(formulation, **_options(options))
        effective = form.settings_for(_base_settings(data_settings, settings), overrides)
        chosen = _profile(form, *run)
        answer = answer_of_signal(form, read.with_pairs(pairs), effective,
                                  str(chosen.solver or ""), signum)
        record_applied(answer, chosen)
        return answer
    except Exception:  # noqa: BLE001 - an import the signal broke: the caller's answer then
        return None


#: The statuses of a finished local search, whose labeling :func:`unlabeled_effect` reports.
ANSWERED = ("optimal", "feasible", "locally_optimal")


def unlabeled_effect(cls, instance: Instance, settings: Settings, result) -> Optional[dict]:
    """What the unlabeled rows changed in a local formulation's answer: how many of them it
    labels otherwise than the same family's supervised SVM on the labeled rows alone, the
    balance count it used and where that came from, and both objectives.

    The supervised SVM is the formulation's problem without unlabeled terms (svm1 for the
    LP family, the squared-hinge SVM for S3VM-L2; :meth:`Formulation.supervised_name`),
    scored on the unlabeled rows by its inductive rule (:mod:`s3vm.inductive`). None when
    the instance has no labeled or no unlabeled row.
    """
    if instance.u == 0 or instance.l == 0:
        return None
    X_L, X_U = instance.X[instance.labeled], instance.X[instance.unlabeled]
    y_L = instance.label[instance.labeled]
    name = cls.supervised_name()
    if name is not None:
        labeled = Instance(X_L, y_L, name=instance.name)
        plain = Settings(**dict(settings.to_dict(), balance="none", positives=None))
        counterpart = get_formulation(name)   # built once: its class's settings and profile
        sup = counterpart.solve(labeled, counterpart.settings_for(plain, {}, strict=False),
                                _profile(counterpart, None, None, None, False))
        f = predictor(sup, labeled)(X_U)
        what, value = f"{name} on the labeled rows", sup.objective
    else:
        K = kernel_matrix(X_L, None, settings.kernel, settings.sigma)
        sol = squared_hinge_svm(K, y_L.astype(float), float(settings.C), bool(settings.bias))
        f = blocked_expansion(X_U, X_L, settings.kernel, settings.sigma, sol.beta, sol.b)
        what, value = "the squared-hinge SVM on the labeled rows", float(sol.value)
    supervised = np.where(f >= 0, 1, -1)
    count = None
    if "balance" in cls.settings_used and settings.balance == "count":
        count = {"positives": int(np.sum(np.asarray(result.labels) > 0)),
                 "source": ("given" if settings.positives is not None
                            else "the labeled ratio")}
    return {"changed": int(np.sum(supervised != np.asarray(result.labels))),
            "unlabeled": int(instance.u), "supervised": what, "count": count,
            "objective": result.objective, "supervised_objective": value}


#: Keys of ``per_formulation`` that choose how a formulation is run rather than what it solves.
RUN_KEYS = ("solver", "profile", "time_limit")


def _split_per_formulation(names: list, per_formulation: Optional[dict]) -> dict:
    """name -> (settings, options, run keys) of each formulation's own entries, checked."""
    out = {name: ({}, {}, {}) for name in names}
    for name, entries in (per_formulation or {}).items():
        if name not in out:
            raise InputError(f"settings for {name!r}, which is not among the formulations "
                             f"compared ({', '.join(names)})")
        own = formulation_options(name)
        for key, value in entries.items():
            if key in SETTINGS_TABLE:
                out[name][0][key] = value
            elif key in own:
                out[name][1][key] = value
            elif key in RUN_KEYS:
                out[name][2][key] = value
            else:
                raise InputError(f"{name}.{key}: {key!r} is neither a setting nor an option of "
                                 f"{name} (nor {' or '.join(RUN_KEYS)})")
    return out


def prepare_comparison(data: Data, formulations: Iterable[str],
                       settings: Optional[Settings] = None, *, options: Optional[dict] = None,
                       per_formulation: Optional[dict] = None, **overrides):
    """Check a comparison before anything is solved: (instance, [(formulation, settings,
    run keys)]).

    Options and explicit settings go to each formulation that takes them; one that none of
    the formulations takes is an :class:`InputError`. ``per_formulation`` maps a formulation
    name to its own settings and options (``{"vs3vm": {"balance": "none"}}``), which it must
    honour, and to its own ``solver``, ``profile`` (a profile file) and ``time_limit``.
    """
    instance, data_settings = load(data)
    base = _base_settings(data_settings, settings)
    names = list(formulations)
    if not names:
        raise InputError("no formulation to compare")
    if len(set(names)) != len(names):
        raise InputError(f"a formulation is named twice: {', '.join(names)}")
    options = _options(options)
    overrides = {k: v for k, v in overrides.items() if v is not None}
    own = _split_per_formulation(names, per_formulation)
    classes = [formulation_class(name) for name in names]
    unused = [k for k in options if not any(k in cls.option_table() for cls in classes)]
    if unused:
        raise InputError(f"{', '.join('--' + k.replace('_', '-') for k in unused)} applies to "
                         "none of the formulations compared")
    for key in overrides:
        if key not in SETTINGS_TABLE:
            raise InputError(f"unknown setting {key!r}{keyword_hint(key)}: the settings are "
                             f"{', '.join(SETTINGS_TABLE)}")
        if not any(cls.applicable({key: None}) for cls in classes):
            flag = SETTINGS_TABLE[key].flag_name if key in SETTINGS_TABLE else key
            raise InputError(f"{flag} does not apply to {', '.join(names)}")
    prepared = []
    for name, cls in zip(names, classes):
        own_settings, own_options, run = own[name]
        form = get_formulation(name, **{**{k: v for k, v in options.items()
                                           if k in cls.option_table()}, **own_options})
        cls.settings_for(base, own_settings)  # the formulation's own entries must apply
        shared = cls.applicable(overrides)
        effective = cls.settings_for(base, {**shared, **own_settings}, strict=False)
        form.check(instance, effective)
        prepared.append((form, effective, run))
    return instance, prepared


def comparison_profiles(prepared: list, solver: Optional[str] = None,
                        profile: Optional[str] = None, time_limit: Optional[float] = None,
                        verbose: Optional[bool] = None) -> tuple[list, Optional[str]]:
    """The profile of each formulation of a comparison, and a note on those that keep their
    own solver.

    A formulation's own ``solver`` or ``profile`` (its run keys, ``--set NAME.profile=FILE``)
    is meant for it: a solver that does not take its models is an :class:`InputError`. The
    comparison's ``solver`` or ``profile`` goes to every other formulation whose problem class
    (LP, MIP, SVM, ...) that solver takes; the rest keep their default solver (and take the
    profile's time limit), and a note names them (one solver that takes none of them is an
    InputError).

    Parameters
    ----------
    prepared : list of (Formulation, Settings, dict)
        What :func:`prepare_comparison` returns second.
    solver, profile, time_limit, verbose
        As for :func:`compare`.

    Returns
    -------
    (list of SolverProfile, str or None)
        The profiles, and a note naming the formulations that keep their own solver (None
        when there are none).
    """
    shared = None
    if solver is not None or profile is not None:
        shared = get_profile(solver, profile)
        classes = problem_classes(shared.solver)  # an unknown solver is bad input here
    profiles, own_solver, applied = [], [], 0
    for form, _, run in prepared:
        limit = run.get("time_limit", time_limit)
        if "solver" in run or "profile" in run:
            prof = _profile(form, run.get("solver"), run.get("profile"), limit, verbose)
            _check_solver(form, prof.solver)
        elif shared is not None and form.problem_class in classes:
            prof = shared.updated(time_limit=limit, verbose=verbose or None)
            applied += 1
        else:
            if shared is not None:
                # The profile's time limit is not the solver's own: it holds for every
                # formulation compared, as --time-limit would.
                limit = shared.time_limit if limit is None else limit
                own_solver.append(form.name)
            prof = _profile(form, None, None, limit, verbose)
        profiles.append(prof)
    if shared is not None and not applied:
        # named for the comparison, applied to no formulation: a mistake, not a preference
        if not own_solver:
            raise InputError(f"solver {shared.solver!r} applies to none of the formulations "
                             "compared: each has its own solver or profile")
        takes = "/".join(c.upper() for c in classes)
        raise InputError(f"solver {shared.solver!r} solves none of the formulations compared "
                         f"({', '.join(own_solver)}): it takes {takes} models")
    note = None
    if own_solver:
        note = (f"solver {shared.solver!r} does not solve the models of "
                f"{', '.join(own_solver)}, which keep their own solver")
    return profiles, note


def _check_solver(form, name: Optional[str]) -> None:
    """``name`` must take ``form``'s models (an InputError naming the formulation)."""
    if name is not None and form.problem_class not in problem_classes(name):
        raise InputError(f"{form.name}: solver {name!r} does not solve its "
                         f"{form.problem_class.upper()} models")


def _check_backends(prepared: list, profiles: list) -> float:
    """Resolve every formulation's backend before anything is solved (a solver that does not
    take its models, or is not installed here, is an error now, not after the others ran);
    the seconds it took (importing the solver libraries)."""
    began = time.perf_counter()
    for (form, _, _), prof in zip(prepared, profiles):
        form.backend(prof)
    return time.perf_counter() - began


def compare(data: Data, formulations: Iterable[str], settings: Optional[Settings] = None, *,
            solver: Optional[str] = None, profile: Optional[str] = None,
            time_limit: Optional[float] = None, options: Optional[dict] = None,
            per_formulation: Optional[dict] = None, verbose: bool = False,
            inputs: Optional[list] = None, started: Optional[float] = None, **overrides):
    """Solve several formulations on one instance; every input is checked before any solve.

    See :func:`prepare_comparison` for how settings and options reach each formulation, and
    :func:`comparison_profiles` for how ``solver`` and ``profile`` do: each goes to the
    formulations whose models that solver takes, the others keep their own solver (said on the
    log, logger ``s3vm.solvers``). Each formulation has its own time limit; the first one's
    counts from ``started`` (see :func:`solve`; default the start of this call), so reading
    the data and checking the comparison count against it.

    Returns
    -------
    list of (Result, dict)
        Each result with its evaluation against ``truth`` (see :func:`evaluate`).

    Raises
    ------
    s3vm.solvers.runtime.supervisor.Interrupted
        On Ctrl-C: its ``results`` are the rows so far, the interrupted solve's last.
    S3VMError
        A formulation failed after others finished: the exception's ``results`` attribute
        holds their rows (no finished result is lost).
    """
    started = time.perf_counter() if started is None else started
    instance, prepared = prepare_comparison(data, formulations, settings, options=options,
                                            per_formulation=per_formulation, **overrides)
    files = _input_files(data, inputs)
    for form, _, run in prepared:
        _check_outputs(form, files)
    profiles, note = comparison_profiles(prepared, solver, profile, time_limit, verbose)
    if note is not None:
        logging.getLogger("s3vm.solvers").info("compare: %s", note)
    importing = _check_backends(prepared, profiles)
    if not imports_charged():
        started += importing  # as solve() does: a library's import is not the solve's time
    out = []
    for (form, effective, _), prof in zip(prepared, profiles):
        try:
            result = form.solve(instance, effective, prof, started=started)
            started = None  # the next formulation's limit counts from its own start
        except Interrupted as exc:
            if exc.result is not None:
                out.append((exc.result, evaluate(instance, exc.result)))
            exc.results = out
            raise
        except S3VMError as exc:
            exc.results = out
            raise
        out.append((result, evaluate(instance, result)))
    return out


def evaluate(instance: Instance, result) -> dict:
    """Transductive error and ROC AUC on the unlabeled rows, against ``truth`` when present."""
    truth = instance.truth_U
    metrics = {"error": None, "auc": None}
    if truth is None or result.labels is None or truth.size == 0:
        return metrics
    metrics["error"] = float(np.mean(np.asarray(result.labels) != truth))
    scores = result.decision_values
    if scores is not None and len(np.unique(truth)) == 2 and np.all(np.isfinite(scores)):
        from sklearn.metrics import roc_auc_score

        metrics["auc"] = float(roc_auc_score(truth, scores))
    return metrics


def export(data: Data, formulation: str, path: Optional[str] = None,
           fmt: Optional[str] = None,
           settings: Optional[Settings] = None, options: Optional[dict] = None,
           inputs: Optional[list] = None, **overrides) -> str:
    """Write the model of ``formulation`` on ``data`` to ``path``; returns the format used.

    ``fmt`` defaults to the file's extension (``.mps``, ``.lp``, ...). ``path`` may not be one
    of the input files (``inputs``, default: the files ``data`` names).

    ``data`` may also be a :class:`~s3vm.built.Built` (from :func:`s3vm.build`, changed or
    not): ``export(built, path)`` or ``export(built, path, fmt)`` writes that model as it is,
    as :meth:`Built.export <s3vm.built.Built.export>` does.
    """
    # A Built (s3vm.built, which imports this module: recognised by its parts, not imported)
    if hasattr(data, "modeler") and callable(getattr(data, "export", None)):
        if settings is not None or options or overrides:
            raise InputError("export(built, path, fmt) writes the model as built: its settings "
                             "and options are those of s3vm.build")
        # export(built, path[, fmt]): the arguments after ``data`` are the path and the format
        return data.export(formulation, path)
    if path is None:
        raise InputError("export needs a path to write")
    check_not_input(path, _input_files(data, inputs))
    instance, data_settings = load(data)
    form = get_formulation(formulation, **_options(options))
    effective = form.settings_for(_base_settings(data_settings, settings), overrides)
    if fmt is None:
        ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        if ext not in form.export_formats:
            raise InputError(f"cannot tell the format from {path!r}: give --format "
                             f"({', '.join(form.export_formats) or 'none'})")
        fmt = ext
    form.export(instance, effective, path, fmt)
    return fmt


def check_certificate(path) -> CheckReport:
    """Check a certificate of optimality written by bb-sdp's ``certificate`` option (``s3vm
    solve ... --certificate FILE``), recomputing every node's bound and the tree's coverage of
    the labelings from the instance it holds, with numpy and scipy alone
    (:mod:`s3vm.models.certificate_check`; docs/models.md describes the format).

    Returns
    -------
    s3vm.models.certificate_check.CheckReport
        ``holds`` says whether the proof holds; ``failures`` why not.

    Raises
    ------
    InputError
        The file cannot be read or is not a certificate.
    """
    try:
        return _check(os.fspath(path) if isinstance(path, os.PathLike) else path)
    except CertificateError as exc:
        raise InputError(f"certificate: {exc}") from None
