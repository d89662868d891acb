"""A changed Pyomo model with bound-derived constants kept exact (what ``Built.solve`` runs).

bd-mip's, bb-mip's and l2-miqp's big-M values (and l2-miqp's bounds on v, b, xi) are derived
from an upper bound on the optimum of the problem as built. A user's side constraint can raise
the optimum above that bound, and the constants would then cut off the changed optimum. The
wrapper here checks them after each solve against the changed model's own value and raises them
where they fall short (the argument is in :mod:`s3vm.models.derived_constants` and
docs/models.md).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from s3vm.core.formulation import GivenModel
from s3vm.data.instance import Instance
from s3vm.models import derived_constants as dc
from s3vm.models.problem3 import OPTIMALITY_GAP, primal_values, unlabeled_scores
from s3vm.models.pyomo_tools import model_state


def kept_exact(base, given: GivenModel):
    """``base`` whose solve keeps a changed model's bound-derived constants valid
    (:mod:`s3vm.models.derived_constants`) and values the returned labels on the model as it is.

    After each solve that finished, the value V of the returned labels bounds the changed
    problem's optimum; when the model's big-M values (and l2-miqp's variable bounds) are below
    what V asks for, they are raised and the model solved again, at most twice (the second
    solve passes: see the module). A changed model found infeasible is solved again with its
    constants 1,000 times larger, twice at most. ``info["big_m"]`` says what was found and done.
    For a changed model the labels' value is the model's own optimum at those labels (the label
    binaries fixed, one LP or QP by the same solver), so a side constraint on w, v, g or a
    slack is in the objective, the decision values and the primal.
    """

    class KeptExact(base):
        def run(self, instance, settings, backend, profile, clock, result):
            model = given.model
            changed = model_state(model) != given.baseline["state"]
            self._exact = (backend, profile) if changed else None
            broken = dc.assumption_broken(model, given.baseline) if changed else None
            raised = grown = 0
            while True:
                super().run(instance, settings, backend, profile, clock, result)
                if broken is not None or clock.expired():
                    break
                if result.status == "infeasible" and changed and grown < 2:
                    grown += 1
                    dc.grow_constants(model, 1e3)
                    continue
                if result.status not in ("optimal", "feasible") or result.objective is None:
                    break
                if not dc.short_constants(model, result.objective) or raised >= 2:
                    break
                raised += 1
                dc.raise_constants(model, result.objective)
            _report_constants(result, model, changed, broken, raised, grown)
            if broken is None and result.status == "optimal":
                given.baseline["checked"] = model_state(model)  # export() need not warn

        def objective_bounds(self, model, outcome):
            value, bound = super().objective_bounds(model, outcome)
            result = (model.l2_result if dc.kind_of(model) == "l2" else model.bd_result)[0]
            if (self._exact is not None and result.status == "optimal" and value is not None
                    and bound is not None
                    and value - bound > OPTIMALITY_GAP * max(1.0, abs(value))):
                result.status = "feasible"
                result.message = (f"optimality not proven: the solver's bound {bound:.6g} is "
                                  f"below {value:.6g}, the model's optimum at its labels")
            return value, bound

        def fill_on_clock(self, result, model, instance, settings, clock):
            super().fill_on_clock(result, model, instance, settings, clock)
            if self._exact is not None and result.labels is not None:
                backend, profile = self._exact
                _value_on_model(result, model, instance,
                                lambda model, profile: backend.solve(model, profile, clock),
                                profile)

    return KeptExact


def _value_on_model(result, model, instance: Instance, solve, profile) -> None:
    """Replace the labels' value (bd-mip's LP without M, l2-miqp's supervised J) by the changed
    model's optimum at those labels: the label binaries fixed, the rest solved by ``solve``."""

    binaries = dc.label_variables(model)
    labels = np.asarray(result.labels)
    was_fixed = {j: var.fixed for j, var in binaries.items()}
    for j, var in binaries.items():
        var.fix(1 if labels[j] > 0 else 0)
    try:
        outcome = solve(model, profile)
    finally:
        for j, var in binaries.items():
            if not was_fixed[j]:
                var.unfix()
    value = outcome.objective if outcome.status == "optimal" and outcome.has_solution else None
    result.info["labels_value"] = ("the changed model's optimum at the returned labels (its "
                                   "label binaries fixed)")
    if dc.kind_of(model) == "problem3":
        if value is not None:
            primal = primal_values(model)
            result.decision_values = unlabeled_scores(model)
            result.primal = {**primal, "d": (labels > 0).astype(float)}
        # The changed model's value at the labels (its objective may not be Problem 3's): no
        # point value of Problem 3, no verdict on the kernel.
        model.bd_result = (model.bd_result[0], value, None, None)
        return
    if value is None:
        model.l2_result = (model.l2_result[0], model.l2_result[1])
        result.info["labels_value"] = ("the model at the returned labels did not solve: the "
                                       "value is J without the changes")
        return
    data = model.l2_data
    v = np.array([model.v[k].value for k in model.R], dtype=float)
    b = float(model.b.value) if hasattr(model, "b") else 0.0
    G = np.empty((instance.n, v.size))
    G[instance.labeled], G[instance.unlabeled] = data.GL, data.GU
    result.decision_values = data.GU @ v + b
    # beta with G' beta = v (the expansion over the rows, file order), least norm.
    result.primal = {"beta": np.linalg.lstsq(G.T, v, rcond=None)[0], "b": b, "v": v}
    model.l2_result = (model.l2_result[0], float(value))


def _report_constants(result, model, changed: bool, broken: Optional[str], raised: int,
                      grown: int) -> None:
    """Say in ``result`` what the check of the bound-derived constants found and did."""

    current = dc.current_constants(model)
    largest = float(current["M"].max()) if current.get("M") is not None and current["M"].size \
        else None
    info = {"changed": changed, "raised": raised, "grown_after_infeasible": grown,
            "max_M": largest}
    scale = (f"big-M values up to {largest:.3g}" if largest is not None
             else f"|v| <= {model.l2_bounds.v:.3g}")
    if broken is not None:
        info["note"] = (f"{broken}: the big-M values and bounds derived from the objective are "
                        "not proven to keep this model's optimum")
        if result.status == "optimal":
            result.status = "feasible"
            result.message = f"not proven optimal: {info['note']}"
    elif result.status == "infeasible" and changed:
        info["note"] = (f"infeasible with {scale}: a point needing larger outputs than these "
                        "allow is not excluded")
        result.message = info["note"]
    elif raised or grown:
        info["note"] = (f"the changed model needed larger big-M values or bounds than the ones "
                        f"built: raised {raised + grown} time(s) ({scale} now) and solved again"
                        + (" (after an infeasible solve)" if grown else ""))
        if result.status == "optimal":
            result.message = f"optimal; {info['note']}"
    elif result.status in ("optimal", "feasible") and result.objective is not None:
        info["note"] = "the big-M values and bounds are valid for the model's value"
    if largest is not None:
        result.info["max_M"] = largest
    result.info["big_m"] = info
