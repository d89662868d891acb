"""The Bennett-Demiriz S3VM as a mixed-integer program (Bennett and Demiriz 1998, as Fung and
Mangasarian 2001 write it; Problem 3 of docs/formulations.md#bd-mip):

    min  e'y + mu e'z + nu e'(r + s)
    s.t. D(A w - e g) + y >= e,  -z <= w <= z,
         B w - e g + r + M (e - d) >= e,   -B w + e g + s + M d >= e,
         y, z, r, s >= 0,  d binary  (optionally e'd = P)

d_j = 1 labels unlabeled point j as +1. Its optimum is the minimum over labelings of the LP that
keeps only the chosen side's constraint; M comes from :func:`problem3.big_m`.

The reported objective, decision values and primal are those of the returned labeling's own LP
(:class:`problem3.LabelingLP`, no M), not the MIP solver's numbers: a MIP solver accepts a binary
within its integrality tolerance (1e-6 for HiGHS) of 0 or 1, and d_j = 1e-7 relaxes a row by
1e-7 M_j, which with M_j = 1e7 (mu = 1e-6) frees the point entirely. The status is ``optimal``
only when the solver's bound closes the gap to that exact objective (docs/reliability.md,
the tolerance policy); otherwise ``feasible``, with a message that says why.
"""

from __future__ import annotations

import numpy as np

from s3vm.formulations.families.pyomo import PyomoFormulation, update_problem3
from s3vm.models.problem3 import (
    COMPONENTS,
    MIP_COMPONENTS,
    NORM_COMPONENTS,
    SIDES_COMPONENTS,
    Problem3Data,
    build_problem3,
    exact_result_check,
    labeling_value,
    objective_of_point,
    primal_values,
    unlabeled_scores,
)
from s3vm.solvers.errors import InputError


class BennettDemirizMIP(PyomoFormulation):
    problem = 3
    name = "bd-mip"
    #: peak bytes per n^2 entry (linear, rbf), measured: rbf (685-717 between n = 700
    #: and 1,500, docs/changelog.md): the kernel expansion over all points
    dense_bytes = (0, 800)
    summary = "Bennett-Demiriz S3VM mixed-integer program (--mu, --nu, --balance count)"
    problem_class = "mip"
    settings_used = ("kernel", "sigma", "mu", "nu", "balance", "positives")
    components = {**COMPONENTS, **NORM_COMPONENTS, **SIDES_COMPONENTS, **MIP_COMPONENTS}
    derived_constants = True  # big-M from an objective bound (docs/models.md)
    uses_groups = True  # linear rows on d (models/problem3.py, ``groups``)
    in_place_settings = ("mu", "nu")   # mutable Params; Built.solve then checks the big-M
    update_model = update_problem3

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.mu <= 0:
            raise InputError("bd-mip needs mu > 0: the big-M bound derives from the 1-norm penalty")

    def build(self, instance, settings):
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        return build_problem3(Problem3Data.from_instance(instance, settings), mu=settings.mu,
                              unlabeled="mip", nu=settings.nu, positives=positives,
                              links=instance.unlabeled_links())

    def incumbent(self, model, instance, settings):
        # d of the MIP's incumbent, and f = B w - g of its point
        labels = np.where(primal_values(model)["d"] > 0.5, 1, -1).astype(int)
        return {"labels": labels, "decision_values": unlabeled_scores(model)}

    def fill(self, result, model, instance, settings):
        self.fill_on_clock(result, model, instance, settings, None)

    def fill_on_clock(self, result, model, instance, settings, clock):
        labels = np.where(primal_values(model)["d"] > 0.5, 1, -1).astype(int)
        data = model.problem_data
        skipped = clock is not None and clock.expired()
        if skipped:
            # Past the limit the labeling's LP is given no time: it returned at once, after its
            # model had been built and compiled (tenths of a second past the limit, for nothing).
            value = w = g = None
        else:
            value, w, g = labeling_value(data, labels, settings.mu, settings.nu, clock=clock)
        if value is None:  # the labeling's LP did not solve: keep the MIP's own point
            primal = primal_values(model)
            w, g = primal["w"], -primal["b"]
        result.labels = labels
        result.decision_values = data.B @ w - g
        result.primal = {"w": w, "b": -g, "y": np.maximum(0.0, 1.0 - data.d * (data.A @ w - g)),
                         "d": (labels > 0).astype(float)}
        result.info["max_M"] = float(max(model.big_m.extract_values().values(), default=0.0))
        point = objective_of_point(data, labels, w, g, settings.mu, settings.nu)
        # (result, the labels' LP value, its point's value, the mu its LP failed at)
        model.bd_result = (result, value, point,
                           settings.mu if value is None and not skipped else None)

    def objective_bounds(self, model, outcome):
        result, value, point, failed_at_mu = model.bd_result
        return exact_result_check(result, value, outcome.objective, outcome.bound, point=point,
                                  singular_for_mu=failed_at_mu)
