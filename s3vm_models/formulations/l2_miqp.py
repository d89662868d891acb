"""``l2-miqp``: S3VM-L2 (Problem 1) as one declarative mixed-integer quadratic program
(:mod:`s3vm.models.l2_miqp` states the model and its bounds; docs/formulations.md#l2-miqp),
handed to a MIQP solver (SCIP by default) through Pyomo.

The reported objective is J at the returned labeling recomputed by the exact supervised solve of
:class:`~s3vm.models.l2_svm.S3VMObjective` (finite Newton), free of the MIQP's tolerances;
decision values and the primal (expansion coefficients beta over all rows in file order, and b)
come from the same solve. The lower bound is the solver's dual bound.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from s3vm.core.options import Option
from s3vm.formulations.families.labeling import shared_objective
from s3vm.formulations.families.pyomo import PyomoFormulation
from s3vm.models.l2_miqp import COMPONENTS, FORMS, L2Data, build_l2_miqp
from s3vm.models.output_space import s3vm_objective
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.files import atomic_output

# How far above J a solver's dual bound may lie and still count as J (SCIP's default
# feasibility tolerance is 1e-6, and the quadratic's outer approximation is met to about that).
_BOUND_SLACK = 1e-6


class L2MIQP(PyomoFormulation):
    """S3VM-L2 as a Pyomo MIQP (:mod:`s3vm.models.l2_miqp`).

    Parameters
    ----------
    form : {"bigm", "sos1"}, default "bigm"
        Big-M rows with the M of :func:`s3vm.models.l2_miqp.big_m`, or SOS1 complementarity without
        M.
    """

    problem = 1

    name = "l2-miqp"
    #: peak bytes per n^2 entry (linear, rbf), measured: linear: K = G G' of the big-M bound
    #: and its Pyomo model's copies (a slope of 30 bytes between n = 2,000 and 3,000, where 16
    #: were declared); rbf: the kernel expansion in Pyomo and SCIP (a slope of 910 bytes
    #: between n = 300 and 600, where 640 were declared; docs/changelog.md, peak memory)
    dense_bytes = (48, 1400)
    summary = "S3VM-L2 (squared hinge, kernel) as a MIQP, SCIP by default (--form bigm|sos1)"
    problem_class = "miqp"
    components = COMPONENTS
    derived_constants = True  # big-M from an objective bound (docs/models.md)
    uses_groups = True  # linear rows on z (models/l2_miqp.py, ``groups``)
    settings_used = ("kernel", "sigma", "C", "C_star", "bias", "balance", "positives")
    balances = ("none", "count", "mean")

    # An indicator form is not offered: no Pyomo indicator component reaches SCIP; sos1 is its
    # complementarity form.
    options = (Option("form", "choice", "bigm", "how the unlabeled losses switch with the "
                      "labels (big-M rows or SOS1 complementarity)", choices=FORMS),)

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.balance == "mean" and (settings.C <= 0 or settings.C_unlabeled <= 0):
            raise InputError("l2-miqp with --balance mean needs C > 0 and C* > 0")
        if settings.bias and settings.C <= 0:
            raise InputError("l2-miqp with a bias needs C > 0: the bound on b, and so the "
                             "big-M, comes from the labeled losses (or use --no-bias)")

    def build(self, instance, settings):
        return build_l2_miqp(L2Data.from_instance(instance, settings), self.form)

    def model_to_solve(self, instance, settings, backend):
        model = self.build(instance, settings)
        # J's exact objective (its kernel matrix and factor) is made here, inside the time
        # limit: after a time-limited solve fill() only solves the labeling's SVM (it made
        # the objective there, past the limit, and the solve's process was killed with SCIP's
        # labels before it returned).
        model.l2_objective = shared_objective(instance, settings)
        return model

    def incumbent(self, model, instance, settings):
        # z of the MIQP's incumbent, and f = G_U v + b of its point
        z = np.array([model.z[j].value for j in model.U], dtype=float)
        v = np.array([model.v[k].value for k in model.R], dtype=float)
        b = float(model.b.value) if hasattr(model, "b") else 0.0
        return {"labels": np.where(z > 0.5, 1, -1).astype(int),
                "decision_values": model.l2_data.GU @ v + b}

    def fill(self, result, model, instance, settings):
        z = np.array([model.z[j].value for j in model.U], dtype=float)
        labels = np.where(z > 0.5, 1, -1).astype(int)
        # J at the labeling from the exact supervised solve on the instance's kernel, so that
        # the objective, f and the primal carry none of the MIQP's tolerances.
        objective = getattr(model, "l2_objective", None)
        if objective is None:  # a model given by the caller (s3vm.built)
            objective = s3vm_objective(instance, settings)
        # One BLAS thread: on a loaded machine a threaded factorisation waits for its other
        # threads at every Newton step (over 0.3 s at heart's 297 points, after the limit).
        with threadpool_limits(limits=1, user_api="blas"):
            solution = objective.solve(labels)
        result.labels = labels
        result.decision_values = solution.outputs[instance.unlabeled]
        result.primal = {"beta": solution.beta, "b": solution.b}
        result.info.update({
            "form": self.form,
            "upper_bound_for_M": model.l2_bounds.upper,
            "max_M": float(model.l2_bounds.M.max()) if self.form == "bigm" else None,
        })
        model.l2_result = (result, solution.value)

    def objective_bounds(self, model, outcome):
        # The objective is J at the labeling by a supervised solve, so it carries none of the
        # MIQP's tolerances. The solver's bound holds up to its feasibility tolerance: when it
        # exceeds that J by no more than such a tolerance it is capped there; a larger excess
        # is a fault and is reported as it is, not hidden.
        result, value = model.l2_result
        result.info["miqp_objective"] = outcome.objective
        result.info["solver_bound"] = outcome.bound
        bound = outcome.bound
        if bound is not None and value < bound <= value + _BOUND_SLACK * (1.0 + abs(value)):
            bound = value
        return value, bound

    def _write(self, model, path: str, fmt: str) -> None:
        with atomic_output(path, suffix="." + fmt) as tmp:
            model.write(tmp, io_options={"symbolic_solver_labels": True})
            _repair_for_scip(tmp, fmt)


def _repair_for_scip(path: str, fmt: str) -> None:
    """Rewrite two spellings of Pyomo's writers that SCIP's readers reject, in place.

    - LP: Pyomo writes squares as ``x ^ 2``; both spellings are CPLEX LP, but SCIP's LP reader
      rejects a blank after the caret. Pyomo's labels never contain a caret, so replacing
      `` ^ 2`` by ``^2`` touches only the squares of the quadratic objective.
    - MPS: Pyomo opens a new ``SOS`` section for every SOS set; SCIP's MPS reader rejects a
      repeated section header. One header for all sets is the standard layout.
    """
    with open(path, encoding="ascii") as fh:
        text = fh.read()
    if fmt == "lp":
        text = text.replace(" ^ 2", "^2")
    elif fmt == "mps":
        lines, seen = [], False
        for line in text.splitlines(keepends=True):
            if line.rstrip("\r\n") == "SOS":
                if seen:
                    continue
                seen = True
            lines.append(line)
        text = "".join(lines)
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)
