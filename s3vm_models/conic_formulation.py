"""The part the SDP formulations share: build the model kind the backend takes, solve, and turn a
relaxation into labels with the bound interval of De Bie and Cristianini (2006), section 7.1.4
(docs/formulations.md#sdp-bounds)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import numpy as np

from .base import Formulation, remaining_profile
from .data import Instance
from .options import Option
from .solvers.clock import Clock, checkpoint
from .solvers.errors import InputError
from .solvers.files import atomic_output
from .kernels import kernel_matrix
from .settings import Settings
from .svm_dual import svm_dual_value

ROUNDINGS = ("gamma", "eigenvector")
ROUNDING = Option("rounding", "choice", "gamma", "labels from a column of Gamma or its dominant "
                  "eigenvector", choices=ROUNDINGS)


@dataclass
class ConicModel:
    """A built conic model: the solver-facing object and the handles to read a solution from.

    ``model`` is a ``cvxpy.Problem`` or a MOSEK Fusion ``Model``; ``read`` maps a handle name to
    a function returning its value after the solve.
    """

    model: Any
    read: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)


def problem2_penalties(instance: Instance, settings: Settings) -> Optional[np.ndarray]:
    """Per-point upper bounds C_i of Problem 2 (C on labeled, C* on unlabeled), None for hard
    margin."""
    if settings.hard_margin:
        return None
    C = np.full(instance.n, float(settings.C))
    C[instance.unlabeled] = settings.C_unlabeled
    if np.any(C <= 0):
        raise InputError("C and C* must be > 0 for the soft margin (or use --hard-margin)")
    return C


def balance_coefficients(instance: Instance) -> tuple[np.ndarray, float]:
    """(c, rhs) with the count balance c'g = rhs in the free representatives' labels g.

    sum_(j in U) y_j = sum_(j in U, r_j = 0) s_j + sum_(j in U, r_j > 0) s_j g_(r_j - 1); the
    first sum is fixed, so rhs = 2P - u less it.
    """
    lm = instance.label_map()
    unl = instance.unlabeled
    rep, sgn = lm.rep[unl], lm.sign[unl]
    c = np.zeros(lm.size)
    np.add.at(c, rep, sgn)
    return c[1:], float(-c[0])


def svm_lmi(K: np.ndarray, Gamma, C: Optional[np.ndarray]):
    """(t, constraint): the SVM part of every SDP of Problem 2 in CVXPY, for a label matrix
    expression Gamma,

        [[K o Gamma, 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD,   mu, nu >= 0

    (hard margin, C None: no mu). Minimising t over it gives max_a 2 1'a - a'(K o Gamma)a.
    """
    import cvxpy as cp

    n = K.shape[0]
    t = cp.Variable(name="t")
    nu = cp.Variable(n, nonneg=True, name="nu")
    if C is None:
        v, corner = 1 + nu, t
    else:
        mu = cp.Variable(n, nonneg=True, name="mu")
        v, corner = 1 - mu + nu, t - 2 * (C @ mu)
    v = cp.reshape(v, (n, 1), order="F")
    lmi = cp.bmat([[cp.multiply(K, Gamma), v], [v.T, cp.reshape(corner, (1, 1), order="F")]])
    return t, lmi >> 0


class ConicFormulation(Formulation):
    """An SDP relaxation of Problem 2 whose rounded labels are scored by the supervised D(y).

    Subclasses give :meth:`build_cvxpy` (and :meth:`build_fusion` for MOSEK Fusion) returning a
    :class:`ConicModel` with a ``gamma_u`` reader (the relaxed unlabeled labels) and a
    ``gamma_full`` reader (the whole relaxed label matrix, for eigenvector rounding).
    """

    problem_class: ClassVar[str] = "sdp"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "hard_margin",
                                      "balance", "positives")
    is_relaxation: ClassVar[bool] = True
    uses_groups: ClassVar[bool] = True
    # Written from the MOSEK Fusion model (no licence needed to build or write it).
    export_formats: ClassVar[tuple] = ("cbf", "ptf")

    options: ClassVar[tuple] = (ROUNDING,)

    def kernel(self, instance: Instance, settings: Settings) -> np.ndarray:
        return kernel_matrix(instance.X, None, settings.kernel, settings.sigma)

    def build(self, instance: Instance, settings: Settings, kind: str = "cvxpy") -> ConicModel:
        if kind == "cvxpy":
            return self.build_cvxpy(instance, settings)
        if kind == "fusion":
            return self.build_fusion(instance, settings)
        if kind == "psd-oracle":
            raise InputError(f"solver psd-barrier does not solve formulation {self.name!r}: it "
                             "takes the subspace SDPs (sdp-subspace, sdp-lowrank) only; choose "
                             "a conic solver (scs, clarabel, ...)")
        raise InputError(f"formulation {self.name!r} has no {kind} model")

    def build_cvxpy(self, instance: Instance, settings: Settings) -> ConicModel:
        raise NotImplementedError

    def build_fusion(self, instance: Instance, settings: Settings) -> ConicModel:
        raise InputError(f"formulation {self.name!r} has no MOSEK Fusion model yet")

    def _export_model(self, instance: Instance, settings: Settings) -> ConicModel:
        return self.build(instance, settings, "fusion")

    def _write(self, built: ConicModel, path: str, fmt: str) -> None:
        # MOSEK picks the writer from the file's extension, so the temporary file carries it.
        try:
            with atomic_output(path, suffix="." + fmt) as tmp:
                built.model.writeTask(tmp)
        finally:
            built.model.dispose()

    def round_fallback(self, scores: np.ndarray, instance: Instance,
                       settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        """As the relaxation's own scores are rounded: groups and the balance count met."""
        return round_scores(scores, instance, settings)

    def labels_from(self, built: ConicModel, instance: Instance,
                    settings: Settings) -> tuple[np.ndarray, np.ndarray]:
        """(labels, scores) of the unlabeled points from a solved relaxation (see
        :func:`round_scores`)."""
        if self.rounding == "gamma":
            scores = np.asarray(built.read["gamma_u"](), dtype=float)
        else:
            # The dominant eigenvector of the label matrix, signed to agree with the labels.
            vals, vecs = np.linalg.eigh(built.read["gamma_full"]())
            v = vecs[:, -1]
            lab = instance.labeled
            if v[lab] @ instance.label[lab] < 0:
                v = -v
            scores = v[instance.unlabeled]
        return round_scores(scores, instance, settings)

    def run_model(self, instance: Instance, settings: Settings, backend, profile,
                  clock: Clock) -> tuple[ConicModel, Any, dict]:
        """Build the model the backend takes and solve it: (built, outcome, extra info).

        The hook for formulations that solve in more than one step (a working set) or read the
        solver's status differently.
        """
        built = self.build(instance, settings, backend.model_kind)
        checkpoint()
        clock.report(phase=f"solving the SDP ({backend.name})")
        return built, backend.solve(built.model, remaining_profile(profile, clock)), {}

    def supervised_value(self, instance: Instance, settings: Settings, y: np.ndarray
                         ) -> tuple[float, Optional[np.ndarray], Optional[str]]:
        """(D(y), the maximising a, a note on how D was computed or None): the score of a
        rounded labeling, the upper end of the interval of De Bie and Cristianini (2006),
        section 7.1.4."""
        value, alpha = svm_dual_value(self.kernel(instance, settings), y,
                                      problem2_penalties(instance, settings))
        return value, alpha, None

    def run(self, instance, settings, backend, profile, clock, result):
        clock.report(phase=f"building and solving the SDP ({backend.name})")
        built, outcome, extra = self.run_model(instance, settings, backend, profile, clock)
        result.status, result.iterations, result.message = (outcome.status, outcome.iterations,
                                                            outcome.message)
        result.info.update({**built.info, **extra})
        if outcome.status == "infeasible":
            result.message = f"{outcome.message}: {self.infeasible_advice(instance, settings)}"
        elif outcome.status == "error" and not clock.stopped:
            others = [name for name in ("sdpa", "clarabel", "scs") if name != backend.name]
            result.message = (f"{outcome.message} (the SDP solver failed: try another one, "
                              f"--solver {' or '.join(others)}, or moderate --C/--C-star)")
        if not outcome.has_solution:
            return
        # A model written as the minimum of the negative (a dual) says so in its info.
        sign = built.info.get("objective_sign", 1)
        relaxed = None if outcome.objective is None else sign * outcome.objective
        labels, scores = self.labels_from(built, instance, settings)
        clock.report(phase="scoring the rounded labels", labels=labels, decision_values=scores)
        bound = None
        if self.is_relaxation:
            certify = built.read.get("certified")
            if certify is not None:
                # A feasible dual point's value: proven whatever the solver's accuracy.
                bound = certify()
                result.info["certified_bound"] = bound if np.isfinite(bound) else None
                bound = bound if np.isfinite(bound) else None
            elif outcome.status == "optimal":
                bound = relaxed  # the solver's word (a model without a dual certificate)
            clock.report(lower_bound=bound)
        y = instance.label.astype(float)
        y[instance.unlabeled] = labels
        value, alpha, note = self.supervised_value(instance, settings, y)
        result.labels, result.decision_values = labels, scores
        result.objective = value
        result.primal = {"alpha": alpha, "relaxation_value": relaxed}
        result.info["relaxation_value"] = relaxed
        if note:
            result.info["objective_note"] = note
        result.lower_bound = bound
        if value is None or not np.isfinite(value):
            # The rounded labels have no finite, computable score D(y): no solution to report,
            # only the relaxation's bound.
            result.status = "error"
            result.labels = result.decision_values = result.objective = None
            result.primal = {"relaxation_value": relaxed}
            result.message = ("the rounded labels cannot be separated with --hard-margin "
                              "(D(y) is infinite): drop --hard-margin or use another kernel"
                              if value is not None and not np.isnan(value) else
                              "the supervised SVM at the rounded labels did not solve: lower "
                              "--C/--C-star or scale the features (--scale standard)")
            return
        if outcome.status in ("optimal", "feasible"):
            gap = result.gap
            # Both ends of the interval of section 7.1.4 meet: the rounded labels are optimal.
            # Both ends are certified (the bound by a feasible dual point, D(y) by a feasible
            # primal point), so an inaccurate solve can reach "optimal" only by this proof.
            result.status = "optimal" if gap is not None and gap <= 1e-6 else "feasible"
            if result.status == "optimal" and outcome.status != "optimal":
                result.message = (f"{outcome.message}: the solver was inaccurate, but the "
                                  "certified bound and objective meet")
        else:
            result.status = outcome.status

    def infeasible_advice(self, instance: Instance, settings: Settings) -> str:
        """What to change when the relaxation has no feasible point."""
        if settings.hard_margin:
            return ("with --hard-margin the points cannot be separated in this relaxation: drop "
                    "--hard-margin (the soft margin, --C) or use another kernel")
        if settings.balance == "count":
            P = settings.positive_count(instance)
            return (f"no label matrix meets the balance count P = {P} of {instance.u} unlabeled "
                    "points with the constraints of this model (groups, the subspace): choose "
                    "another --positives, or --balance none")
        return "the model has no feasible point: check the groups of the data"

def round_scores(scores: np.ndarray, instance: Instance,
                 settings: Settings) -> tuple[np.ndarray, np.ndarray]:
    """(labels, scores): labels of the unlabeled points from relaxed scores, meeting the groups.

    Every free representative of :meth:`Instance.label_map` gets the sign of its score (the mean
    of sign_j x score_j over its rows, which are equal for a label matrix L Gamma_c L'), and its
    rows get sign_j times that; rows tied to the labeled class keep their fixed labels. With the
    count balance the representatives are taken in decreasing score and set to +1 while that
    brings the number of positives closer to P: without groups, exactly the P highest scores
    are +1; with groups P may be out of reach (groups move several labels at once) and the
    nearest count is kept.

    Parameters
    ----------
    scores : ndarray (u,)
        One score per unlabeled row, in row order; larger means +1.
    """
    scores = np.asarray(scores, dtype=float)
    unl = instance.unlabeled
    lm = instance.label_map()
    rep, sgn = lm.rep[unl], lm.sign[unl]
    free = rep > 0
    m = lm.size
    total = np.zeros(m)
    count = np.zeros(m)
    np.add.at(total, rep[free], sgn[free] * scores[free])
    np.add.at(count, rep[free], 1.0)
    rep_score = total[1:] / np.maximum(count[1:], 1.0)
    z = np.ones(m)
    if settings.balance == "count":
        P = settings.positive_count(instance)
        # The positives each free representative brings as +1 (its + rows) or as -1 (its - rows).
        plus = np.zeros(m)
        np.add.at(plus, rep[free], (sgn[free] > 0).astype(float))
        minus = count - plus
        z[1:] = -1.0
        positives = int(np.sum(sgn[~free] > 0) + minus[1:].sum())
        order = 1 + np.argsort(-rep_score, kind="stable")
        step = (plus - minus).astype(int)
        if np.all(step[1:] == 1):
            z[order[:max(P - positives, 0)]] = 1.0
        else:
            for k in order:
                if abs(positives + step[k] - P) < abs(positives - P):
                    z[k] = 1.0
                    positives += step[k]
    else:
        z[1:] = np.where(rep_score >= 0, 1.0, -1.0)
    return (sgn * z[rep]).astype(int), scores
