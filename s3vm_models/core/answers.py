"""What a solve answers beside its step's own result: the best labeling it holds, what applied,
and the answer to a signal that came before the pipeline could hold anything.

- :func:`prefer_held`: a solve stopped by its time limit or a signal answers the best labeling
  it holds, never a worse one. The pipeline holds the supervised fallback's labels and their
  objective (:func:`s3vm.core.pipeline.fallback_answer`) before the step; a step stopped early
  may hold a worse incumbent (l2-miqp on heart: SCIP's J = 279.2 at 3 s and 218.4 at 30 s,
  against 7.726 for the fallback's labels, which the run had computed).
- :func:`record_applied`: ``result.info["applied"]``, the time limit, solver, profile and solver
  options in force (the JSON answer and the bench records carry ``info``).

The pipeline calls each at one place; this module keeps their rules apart from its stages.
:mod:`s3vm.core.signal_answers` answers a signal that came before the pipeline held anything.
"""

from __future__ import annotations

import math
import os
from typing import Optional

import numpy as np

from s3vm.solvers.bnb.certified import keep_certified
from s3vm.solvers.profiles import shipped_profiles
from s3vm.solvers.results import Result
from s3vm.solvers.runtime.clock import Clock

#: Relative margin by which the held labeling's objective must be below the step's to replace
#: it: two labelings within the solvers' tolerances are the same answer, and the step's own
#: (with its primal solution) stands.
REPLACE_MARGIN = 1e-9


def prefer_held(form, result: Result, instance, settings, clock: Clock,
                scores: Optional[np.ndarray], value: tuple) -> None:
    """Replace a stopped solve's labels by the supervised fallback's when these have a lower
    objective (the formulation's own, :meth:`Formulation.labeling_objective`, which every
    formulation's ``objective`` is at its labels).

    Applies to a result that a time limit or a signal stopped (status ``time_limit``, or a
    signal on ``clock``) and that is not ``optimal``; a solve that ran to its end answers its own
    labeling (a local method's local minimum, with the primal solution that predicts new
    points). ``scores`` and ``value`` are the fallback's
    (:func:`s3vm.core.pipeline.fallback_answer`); nothing is computed here. The replaced
    objective is kept in ``info["replaced_objective"]`` and the message says so; the step's
    bound stays (it bounds every labeling).
    """
    held = value[0] if value else None
    if scores is None or held is None or result.labels is None:
        return
    if result.status == "optimal" or not (clock.interrupted or result.status == "time_limit"):
        return
    own = result.objective
    if own is not None and math.isfinite(own) and \
            own <= held + REPLACE_MARGIN * max(1.0, abs(held)):
        return
    old_labels = result.labels
    result.labels, result.decision_values = form.round_fallback(scores, instance, settings)
    result.objective = held
    # A label certified for the replaced answer stays so where these labels agree (its bound
    # exceeds the old objective, which is above this one); the others are open.
    result.certified_labels = keep_certified(result.certified_labels, old_labels, result.labels)
    if result.status == "error":
        # A step a signal cut short with an error of its own (an LP "interrupted by user")
        # still answers a feasible labeling with its objective: this one.
        result.status = "feasible"
    # The step's primal solution is of its own labels, not of these.
    result.primal = {}
    result.info["labels_from"] = "supervised SVM"
    result.info["replaced_objective"] = own
    if result.lower_bound is not None and result.lower_bound > held:
        result.lower_bound = held  # a model's bound above an exact value: its tolerance
    own_text = "none" if own is None else f"{own:.8g}"
    note = (f"the supervised SVM's labels (objective {held:.8g}) replace {form.name}'s "
            f"incumbent (objective {own_text}), which was worse")
    result.message = f"{result.message}; {note}" if result.message else note


def applied(profile, solver: str) -> dict:
    """The time limit, solver, profile and solver options a solve ran under.

    ``solver``: the solver that ran (a formulation may answer with another when its default
    fails); ``solver_asked``: the profile's (None: the problem class's default). ``profile``:
    a shipped profile's name, or the file the user gave, or None for one made in code;
    ``solver_options``: the profile's options for the solver (gap, threads and its own
    entries), as handed to it."""
    source = getattr(profile, "source", "") or ""
    name = None
    if source:
        shipped = {os.path.realpath(path): key for key, path in shipped_profiles().items()}
        name = shipped.get(os.path.realpath(source), source)
    options = {key: getattr(profile, key, None) for key in ("mip_rel_gap", "threads")}
    options = {key: v for key, v in options.items() if v is not None}
    options.update(dict(getattr(profile, "options", None) or {}))
    return {"time_limit": getattr(profile, "time_limit", None), "solver": solver,
            "solver_asked": getattr(profile, "solver", None), "profile": name,
            "solver_options": options,
            "solver_by_default": bool(getattr(profile, "by_default", False))}


def record_applied(result: Optional[Result], profile) -> None:
    """``result.info["applied"]`` (see :func:`applied`); nothing for no result."""
    if result is not None:
        result.info["applied"] = applied(profile, result.solver)
