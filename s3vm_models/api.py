"""The Python API: solve, compare and export. The command line is a thin layer over these."""

from __future__ import annotations

from typing import Iterable, Optional, Union

import numpy as np

from .data import Instance
from .solvers.errors import InputError
from .registry import formulation_options, get_formulation
from .settings import Settings, load_instance


def _resolve(data: Union[str, Instance], settings: Optional[Settings], overrides: dict):
    if isinstance(data, Instance):
        instance, base = data, settings or Settings()
    else:
        instance, base = load_instance(str(data))
        if settings is not None:
            base = settings
    return instance, base.updated(**overrides)


def check_overrides(forms, overrides: dict, settings: Settings) -> None:
    """Reject settings given explicitly that none of the formulations reads."""
    for key in overrides:
        if not any(key in form.settings_used for form in forms):
            names = ", ".join(form.name for form in forms)
            flag = "--" + key.replace("_", "-")
            if key == "bias":
                flag = "--no-bias"
            raise InputError(f"{flag} does not apply to {names}")
    if "positives" in overrides and settings.balance != "count":
        raise InputError("--positives needs --balance count")


def _profile(form, solver: Optional[str], profile: Optional[str], time_limit: Optional[float]):
    """The profile for one formulation: the named solver or file, else its class's default."""
    from .solvers.profiles import get_profile

    return get_profile(solver, profile, form.problem_class).updated(time_limit=time_limit)


def solve(data: Union[str, Instance], formulation: str, settings: Optional[Settings] = None, *,
          solver: Optional[str] = None, profile: Optional[str] = None,
          time_limit: Optional[float] = None, options: Optional[dict] = None, **overrides):
    """Solve one formulation on one instance.

    Parameters
    ----------
    data : str or Instance
        A CSV data file, a TOML instance file, or an :class:`Instance`.
    formulation : str
        A name from :func:`s3vm.registry.formulation_names`.
    settings : Settings, optional
        Replaces the settings of a TOML file (defaults for a CSV file).
    solver, profile : str, optional
        A solver name or a profile file (see :mod:`s3vm.solvers.profiles`).
    time_limit : float, optional
        Seconds; overrides the profile's limit.
    options : dict, optional
        The formulation's own options (``{"clusters": 3}`` for cvs3vm, ...).
    **overrides
        Fields of :class:`Settings` (``C=10``, ``kernel="rbf"``, ...); None values are ignored.

    Returns
    -------
    s3vm.solvers.results.Result
    """
    instance, settings = _resolve(data, settings, overrides)
    form = get_formulation(formulation, **(options or {}))
    check_overrides([form], overrides, settings)
    return form.solve(instance, settings, _profile(form, solver, profile, time_limit))


def compare(data: Union[str, Instance], formulations: Iterable[str],
            settings: Optional[Settings] = None, *, solver: Optional[str] = None,
            profile: Optional[str] = None, time_limit: Optional[float] = None,
            options: Optional[dict] = None, **overrides):
    """Solve several formulations on one instance; every input is checked before any solve.

    ``options`` go to each formulation that takes them (e.g. ``clusters`` to cvs3vm only).

    Returns
    -------
    list of (Result, dict)
        Each result with its evaluation against ``truth`` (see :func:`evaluate`).
    """
    instance, settings = _resolve(data, settings, overrides)
    names = list(formulations)
    if not names:
        raise InputError("no formulation to compare")
    options = options or {}
    forms = [get_formulation(name, **{k: v for k, v in options.items()
                                      if k in formulation_options(name)}) for name in names]
    unused = [k for k in options if not any(k in formulation_options(n) for n in names)]
    if unused:
        raise InputError(f"{', '.join('--' + k.replace('_', '-') for k in unused)} applies to "
                         "none of the formulations compared")
    check_overrides(forms, overrides, settings)
    for form in forms:
        form.check(instance, settings)
    profiles = [_profile(form, solver, profile, time_limit) for form in forms]
    out = []
    for form, prof in zip(forms, profiles):
        result = form.solve(instance, settings, prof)
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


def export(data: Union[str, Instance], formulation: str, path: str, fmt: Optional[str] = None,
           settings: Optional[Settings] = None, options: Optional[dict] = None,
           **overrides) -> str:
    """Write the model of ``formulation`` on ``data`` to ``path``; returns the format used.

    ``fmt`` defaults to the file's extension (``.mps``, ``.lp``, ...).
    """
    instance, settings = _resolve(data, settings, overrides)
    form = get_formulation(formulation, **(options or {}))
    check_overrides([form], overrides, settings)
    if fmt is None:
        ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        if ext not in form.export_formats:
            raise InputError(f"cannot tell the format from {path!r}: give --format "
                             f"({', '.join(form.export_formats)})")
        fmt = ext
    form.export(instance, settings, path, fmt)
    return fmt
