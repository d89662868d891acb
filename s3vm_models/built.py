"""Models as objects: the declarative model of a formulation, to read, change and solve.

:func:`build` returns a :class:`Built`: the model a formulation hands to its solver (a Pyomo
``ConcreteModel``, a ``cvxpy.Problem`` or a MOSEK Fusion ``Model``) with the instance and
settings it was built from. Change the model as its modeling library allows (a side constraint,
a cut, another objective term) and :meth:`Built.solve` solves it with any installed solver of its
kind, through the same pipeline as :func:`s3vm.solve` (time limit, progress, a quiet stdout, the
checks of every :class:`~s3vm.solvers.results.Result`), reading labels and decision values from
the model's named components. The components of each model are listed in :data:`COMPONENTS`
and in docs/models.md.

Formulations that are algorithms rather than one model (``switching``, ``bb``, ``cvs3vm``) have
none to give.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from s3vm.api import _base_settings, _options, _profile, load
from s3vm.core.formulation import remaining_profile
from s3vm.core.registry import formulation_class, get_formulation
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.bb_sdp import BranchAndBoundSDP
from s3vm.formulations.bd_mip import BennettDemirizMIP
from s3vm.formulations.families.conic import ConicFormulation
from s3vm.models import derived_constants as dc
from s3vm.models.cbf import write_cvxpy_cbf
from s3vm.models.conic import ConicModel
from s3vm.models.output_space import s3vm_objective
from s3vm.models.problem3 import OPTIMALITY_GAP, primal_values, unlabeled_scores
from s3vm.models.pyomo_tools import model_state
from s3vm.solvers.errors import InputError, SolverUnavailableError
from s3vm.solvers.registry import DEFAULT_SOLVERS, backend_class, installed_solvers
from s3vm.solvers.runtime.clock import checkpoint
from s3vm.solvers.runtime.files import atomic_output, check_writable
from s3vm.solvers.runtime.stdio import native_stdout_elsewhere

#: The modeling libraries a model may come from.
MODELERS = ("pyomo", "cvxpy", "fusion")

#: Formulation name -> its model's named components: name -> meaning, in the notation of
#: docs/formulations.md (Problem 3 for the LP/MIP family, Problem 1 for S3VM-L2, Problem 2 for
#: the SDPs). Pyomo components are attributes of the model (``model.d[j]``); CVXPY variables are
#: in ``problem.var_dict`` by name.
_PROBLEM3 = {
    "F, L": "index sets: columns of A (features, or kernel columns under rbf), labeled rows",
    "w[k], g": "the classifier f(x) = x'w - g (kernel expansion coefficients under rbf)",
    "y[i]": "labeled slack: D(A w - e g) + y >= e",
    "labeled_margin[i]": "the labeled row  d_i (A_i w - g) + y_i >= 1",
    "obj": "the objective",
}
_NORM = {
    "z[k]": "|w_k| at an optimum: -z <= w <= z",
    "mu": "mutable Param, the weight of e'z",
    "norm_upper[k], norm_lower[k]": "w - z <= 0 and w + z >= 0",
}
_SIDES = {
    "U": "index set of the unlabeled rows",
    "r[j], s[j]": "unlabeled slacks of the +1 side (B w - e g + r >= e) and the -1 side "
                  "(-B w + e g + s >= e)",
    "cost_r[j], cost_s[j]": "mutable Params, the costs of r_j and s_j in the objective",
    "plus_side[j], minus_side[j]": "the two unlabeled rows of point j",
}
_MIP = {
    "d[j]": "binary: 1 labels unlabeled point j +1 (charges r_j), 0 labels it -1 (charges s_j)",
    "big_m[j]": "mutable Param M_j of the big-M rows: B_j w - g + r_j - M_j d_j >= 1 - M_j "
                "and -B_j w + g + s_j + M_j d_j >= 1 (solve raises it where a change needs it)",
    "balance": "e'd = P (with balance='count' only)",
}
_L2 = {
    "R, L, U": "index sets: columns of the factor G (K = G G'), labeled rows, unlabeled rows",
    "v[k], b": "the classifier f = G v + b (b only with bias)",
    "xi_L[i], xi_U[j]": "labeled and unlabeled slacks (squared in the objective)",
    "z[j]": "binary: 1 labels unlabeled point j +1",
    "labeled_margin[i]": "y_i (G_i v + b) + xi_i >= 1",
    "plus_side[j], minus_side[j]": "the unlabeled rows switched by z_j (big-M, or SOS1 with "
                                   "form='sos1': p[j], q[j], zbar[j], complement, plus_switch, "
                                   "minus_switch)",
    "big_m[j]": "mutable Param M_j of the big-M rows (form='bigm'): f_j + xi_j - M_j z_j >= "
                "1 - M_j and -f_j + xi_j + M_j z_j >= 1 (solve raises it, and the bounds of "
                "v, b, xi, where a change needs it)",
    "balance, mean_balance": "e'z = P (balance='count'), the mean balance (balance='mean')",
    "obj": "1/2 |v|^2 + C e'xi_L^2 + C* e'xi_U^2",
}
_LOWRANK_DUAL = {
    "a": "SVM dual variables, 0 <= a <= C (CVXPY variable 'a')",
    "lam": "multipliers of diag(V M V') <= 1 (variable 'lam')",
    "eta": "multiplier of the count balance (variable 'eta', balance='count' only)",
    "constraints[-1]": "the LMI [[V' diag(lam) V + eta B, W(a)'], [W(a), I]] >> 0; its dual "
                       "matrix's top-left block is M, the relaxed label matrix on V",
    "objective": "minimise -(2 1'a - 1'lam - eta rhs): the relaxation's value, negated",
}
COMPONENTS = {
    "rlp": _PROBLEM3,
    "svm1": {**_PROBLEM3, **_NORM},
    "vs3vm": {**_PROBLEM3, **_NORM, **_SIDES,
              "cost_r[j], cost_s[j]": "mutable Params, nu/2 each: the first LP of the successive "
                                      "linear approximation"},
    "bd-mip": {**_PROBLEM3, **_NORM, **_SIDES, **_MIP},
    "bb-mip": {**_PROBLEM3, **_NORM, **_SIDES, **_MIP},
    "l2-miqp": _L2,
    "sdp": {**_LOWRANK_DUAL,
            "V": "the label map L (sdp_form='dual', the default); with sdp_form='primal' the "
                 "variables are 'gamma_u' (g, the free representatives' relaxed labels), "
                 "'Gamma_uu' (G), 't', 'nu', 'mu', and Gamma_c = [[1, g'], [g, G]] >> 0, "
                 "diag(G) = 1"},
    "sdp-subspace": {"M": "the d x d PSD matrix of the label matrix Gamma = V M V' (variable "
                          "'M')",
                     "t, nu, mu": "the SVM LMI's variables (minimise t)",
                     "constraints": "[the SVM LMI, diag(V M V') <= 1, the count balance]"},
    "sdp-lowrank": {**_LOWRANK_DUAL, "V": "the spectral subspace (n x dim)"},
    "bb-sdp": {"X": "the (n + 1) x (n + 1) PSD matrix [[1, x'], [x, V]] of the Shor relaxation "
                    "in output space, points labeled first (variable 'X')",
               "constraints": "[the equality rows, the inequality rows] of the root node"},
}

#: What the formulations without a model are, for the error.
_NOT_MODELS = {
    "bb": "a branch and bound over labelings with SVM bounds computed in numpy",
    "switching": "a local search over labelings (label switching)",
    "cvs3vm": "a clustering step followed by one MIP per cluster",
}


@dataclass
class Built:
    """A formulation's declarative model, built and not solved.

    Attributes
    ----------
    model : pyomo.environ.ConcreteModel, cvxpy.Problem or mosek.fusion.Model
        The model; change it in place (Pyomo, Fusion) or replace it (``built.model =
        cvxpy.Problem(objective, constraints + [cut])``: variables and constraints are shared,
        so the readers keep working).
    formulation : str
    modeler : {"pyomo", "cvxpy", "fusion"}
    instance : Instance
    settings : Settings
        The settings the model was built with.
    options : dict
        The formulation's options.
    components : dict
        The model's named components and what they mean (:data:`COMPONENTS`).
    """

    model: Any
    formulation: str
    modeler: str
    instance: Instance
    settings: Settings
    options: dict = field(default_factory=dict)
    components: dict = field(default_factory=dict)
    _conic: Any = field(default=None, repr=False)
    #: The model's state as built (:func:`s3vm.models.pyomo_tools.model_state`) for the models
    #: with bound-derived constants, which :meth:`solve` compares to tell a changed model.
    _baseline: Any = field(default=None, repr=False)

    def __repr__(self) -> str:
        return (f"Built(formulation={self.formulation!r}, modeler={self.modeler!r}, "
                f"model={type(self.model).__module__}.{type(self.model).__name__}, "
                f"instance={self.instance.name!r}, n={self.instance.n}, u={self.instance.u})")

    @property
    def variables(self) -> dict:
        """name -> variable of a CVXPY model (``problem.var_dict``); Pyomo's are attributes."""
        if self.modeler == "cvxpy":
            return dict(self.model.var_dict)
        raise InputError(f"a {self.modeler} model's components are its attributes "
                         "(built.model.d[3], say); see built.components")

    def solve(self, solver: Optional[str] = None, *, profile: Optional[str] = None,
              time_limit: Optional[float] = None, verbose: bool = False):
        """Solve the model as it is now and return a :class:`~s3vm.solvers.results.Result`.

        The formulation's own step runs on this model: one solver call for the LP, MIP, MIQP
        and SDP models (vs3vm: its successive LPs over this polyhedron), then the labels and
        decision values are read from the model's components (``d`` or ``z``; ``w, g`` or
        ``v, b``; the relaxed label matrix of an SDP, rounded as :func:`s3vm.solve` rounds it).

        ``objective`` is what the formulation reports: the solver's objective of this model for
        the LP/MIP family; S3VM-L2's J at the labels for l2-miqp; for the SDPs D(y) (bb-sdp: J)
        at the rounded labels, with the relaxation's optimum as ``lower_bound`` (a bound on the
        labelings the changed model admits; the certificate of the low-rank dual, when there
        is one, is a bound for the unchanged relaxation, so it stays valid).

        Parameters
        ----------
        solver : str, optional
            Any installed solver that takes a model of this kind (``s3vm list`` names them):
            for Pyomo models an LP/MIP/MIQP solver (highs, scip, ...); for a CVXPY problem a
            CVXPY solver (scs, clarabel, sdpa, mosek); for a Fusion model mosek-fusion. Default:
            the formulation's preferred solver of that kind.
        profile : str, optional
            A solver profile file (:mod:`s3vm.solvers.profiles`).
        time_limit : float, optional
            Seconds.
        verbose : bool
            The solver's log on stderr.
        """

        runner = _runner(self)
        if solver is None and profile is None:
            solver = _default_solver(runner, self.modeler)
        return runner.solve(self.instance, self.settings,
                            _profile(runner, solver, profile, time_limit, verbose))


    def export(self, path: str, format: Optional[str] = None) -> str:
        """Write the model as it is now (with every change) to ``path``; returns the format.

        The writers are those of ``s3vm export``: a Pyomo model as MPS or LP with the
        components' own names (``y(0)``, ``r(3)``, ``c_l_plus_side(2)_``; l2-miqp's file with
        the spellings SCIP's readers need), a MOSEK Fusion model as CBF or PTF (MOSEK writes
        them without a licence), a CVXPY problem as CBF from CVXPY's own conic form of it
        (:mod:`s3vm.models.cbf`). A big-M model is written with its ``big_m`` values as they are
        now: after :meth:`solve` of a changed model, the values that solve raised
        (docs/models.md), so the file solves to the same optimum. Exporting a changed big-M
        model that no solve has checked since the change warns (UserWarning): its values are
        those built, valid for the model as built.

        Parameters
        ----------
        path : str
        format : {"mps", "lp", "cbf", "ptf"}, optional
            Default: the file's extension.

        Raises
        ------
        InputError
            A format this kind of model is not written in, or a path that cannot be written.
        """
        formats = _EXPORT_FORMATS[self.modeler]
        if format is None:
            ext = path.rsplit(".", 1)[-1].lower() if "." in os.path.basename(path) else ""
            if ext not in formats:
                raise InputError(f"cannot tell the format from {path!r}: give format= "
                                 f"({', '.join(formats)})")
            format = ext
        format = format.lower()
        if format not in formats:
            raise InputError(f"a {self.modeler} model is written as {', '.join(formats)}, "
                             f"not {format!r}")
        check_writable(path)
        if self.modeler == "pyomo":
            if self._baseline is not None and model_state(self.model) != self._baseline.get(
                    "checked", self._baseline["state"]):
                warnings.warn("the model was changed since its big-M values were last checked: "
                              "they may cut off the changed optimum; call solve() before "
                              "export() to check and raise them (docs/models.md)", UserWarning,
                              stacklevel=2)
            _pyomo_writer(self)._write(self.model, path, format)
        elif self.modeler == "fusion":
            with atomic_output(path, suffix="." + format) as tmp:
                self.model.writeTask(tmp)
        else:
            with atomic_output(path, suffix="." + format) as tmp:
                write_cvxpy_cbf(self.model, tmp)
        return format


#: The formats :meth:`Built.export` writes, by modeler.
_EXPORT_FORMATS = {"pyomo": ("mps", "lp"), "fusion": ("cbf", "ptf"), "cvxpy": ("cbf",)}


def _pyomo_writer(built: Built):
    """The formulation whose writer ``s3vm export`` uses for this model (bb-mip's model is
    bd-mip's MIP)."""
    if built.formulation == "bb-mip":
        return BennettDemirizMIP()
    return get_formulation(built.formulation, **built.options)


def build(data, formulation: str, settings: Optional[Settings] = None, *,
          modeler: Optional[str] = None, options: Optional[dict] = None, **overrides) -> Built:
    """The declarative model of ``formulation`` on ``data``, to read, change and solve.

    Parameters
    ----------
    data : str, os.PathLike, tuple, pandas.DataFrame or Instance
        As for :func:`s3vm.solve`.
    formulation : str
        A model-based formulation: rlp, svm1, bd-mip, vs3vm (its first LP), l2-miqp, bb-mip
        (the MIP its branch and bound bounds), sdp, sdp-subspace, sdp-lowrank, bb-sdp (its root
        relaxation).
    settings : Settings, optional
        As for :func:`s3vm.solve`.
    modeler : {"pyomo", "cvxpy", "fusion"}, optional
        Which library's model: Pyomo for the LP/MIP family (the only one), CVXPY (default) or
        MOSEK Fusion (needs the ``mosek`` package, no licence to build) for the SDPs.
    options : dict, optional
        The formulation's options (``{"sdp_form": "primal"}``, ``{"form": "sos1"}``, ...).
    **overrides
        Settings given explicitly (``C=10``, ``kernel="rbf"``), as for :func:`s3vm.solve`.

    Returns
    -------
    Built
        ``.model`` is the model; ``.components`` says what its named parts are;
        ``.solve(solver=...)`` returns a Result.

    Raises
    ------
    InputError
        A formulation that is not one model (switching, bb, cvs3vm), or a modeler it has no
        model for.
    """

    instance, data_settings = load(data)
    form = get_formulation(formulation, **_options(options))
    name = form.name
    if name in _NOT_MODELS:
        raise InputError(f"{name} is {_NOT_MODELS[name]}, not one declarative model: solve it "
                         f"with s3vm.solve; the formulations with a model are "
                         f"{', '.join(COMPONENTS)}")
    effective = form.settings_for(_base_settings(data_settings, settings), overrides)
    form.check(instance, effective)
    kind = _modeler(name, modeler)
    conic = None
    # A library prints nothing on stdout: the solves some builds run for their bounds (HiGHS's
    # LPs of bd-mip's big-M) would print the solver's banner there.
    with native_stdout_elsewhere():
        if kind == "pyomo":
            model = _pyomo_model(form, instance, effective)
        else:
            conic = _conic_model(form, instance, effective, kind)
            model = conic.model
    return Built(model=model, formulation=name, modeler=kind, instance=instance,
                 settings=effective, options=form.option_values(),
                 components=dict(COMPONENTS[name]), _conic=conic, _baseline=_baseline(model))


def _baseline(model):
    """The state :meth:`Built.solve` compares a model with bound-derived constants against."""

    if isinstance(model, ConicModel) or not hasattr(model, "component_objects"):
        return {"problem": model}  # bb-sdp's root: the problem object as built
    if _kind_of_model(model) is None:
        return None
    return {"state": model_state(model), **dc.baseline(model)}


def _kind_of_model(model):
    return dc.kind_of(model) if hasattr(model, "component_objects") else None


def _modeler(name: str, modeler: Optional[str]) -> str:
    pyomo = name in ("rlp", "svm1", "vs3vm", "bd-mip", "bb-mip", "l2-miqp")
    if modeler is None:
        return "pyomo" if pyomo else "cvxpy"
    if modeler not in MODELERS:
        raise InputError(f"modeler= must be one of {', '.join(MODELERS)}, got {modeler!r}")
    if pyomo != (modeler == "pyomo"):
        has = "pyomo" if pyomo else "cvxpy or fusion"
        raise InputError(f"{name} has a {has} model, not a {modeler} one")
    return modeler


def _pyomo_model(form, instance: Instance, settings: Settings):
    if form.name == "bb-mip":
        return BennettDemirizMIP().build(instance, settings)
    return form.build(instance, settings)


def _conic_model(form, instance: Instance, settings: Settings, kind: str):
    if form.name == "bb-sdp":
        return _shor_root(form, instance, settings, kind)
    if kind == "fusion":
        _require_mosek()
    return form.build(instance, settings, kind)


def _require_mosek() -> None:
    try:
        import mosek.fusion  # noqa: F401
    except ImportError:
        raise InputError("modeler='fusion' needs MOSEK's Python package (pip install "
                         "s3vm[mosek]); no licence is needed to build a model") from None


def _shor_root(form, instance: Instance, settings: Settings, kind: str):
    """bb-sdp's root relaxation with a reader of the unlabeled outputs x_U (row 0 of X)."""

    if kind == "fusion":
        _require_mosek()
        built = form._export_model(instance, settings)
        return built if isinstance(built, ConicModel) else ConicModel(built)
    built = form.build_cvxpy(instance, settings)
    # X's indices 1..n are the points, labeled first, then the unlabeled in file order.
    unlabeled_at = np.arange(1 + instance.l, 1 + instance.n)
    read_x = built.read["X"]
    rows = built.info.get("order")
    if rows is not None and rows != instance.n + 1:
        built.read["gamma_u"] = None  # reduced coordinates: no x to read (see _runner)
    else:
        built.read["gamma_u"] = lambda: np.asarray(read_x(), dtype=float)[0, unlabeled_at]
    return built


# -- solving -----------------------------------------------------------------------------------

def _runner(built: Built):
    """A formulation object whose step solves ``built.model`` instead of building one."""

    if built.modeler == "pyomo":
        return _pyomo_runner(built)
    if built.formulation == "bb-sdp":
        return _shor_runner(built)
    return _conic_runner(formulation_class(built.formulation), built)


def _pyomo_runner(built: Built):
    if built.formulation == "bb-mip":
        # its MIP, solved by a MIP solver (the driver would relax the user's model in place)
        base, options = BennettDemirizMIP, {}
    else:
        base = formulation_class(built.formulation)
        options = built.options

    class Given(base):
        name = built.formulation

        def model_to_solve(self, instance, settings, backend):
            return built.model

    if built._baseline is not None:
        return _kept_exact(Given, built)(**options)
    return Given(**options)


def _kept_exact(base, built: Built):
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
            model = built.model
            changed = model_state(model) != built._baseline["state"]
            self._exact = (backend, profile, clock) if changed else None
            broken = dc.assumption_broken(model, built._baseline) if changed else None
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
                built._baseline["checked"] = model_state(model)  # export() need not warn

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

        def fill(self, result, model, instance, settings):
            super().fill(result, model, instance, settings)
            if self._exact is not None and result.labels is not None:
                backend, profile, clock = self._exact
                _value_on_model(result, model, instance,
                                backend.solve, remaining_profile(profile, clock))

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
        model.bd_result = (model.bd_result[0], value)
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


def _solve_given(built: Built):
    """The conic step on ``built.model``: one solver call, no working set or fallback."""

    def run_model(self, instance, settings, backend, profile, clock):
        if backend.model_kind != built.modeler:
            raise InputError(f"solver {backend.name!r} does not take a {built.modeler} model: "
                             f"{_kind_hint(built.modeler)}")
        checkpoint()
        clock.report(phase=f"solving the SDP ({backend.name})")
        conic = dataclasses.replace(built._conic, model=built.model)
        return conic, backend.solve(built.model, remaining_profile(profile, clock)), {}

    return run_model


def _conic_runner(base, built: Built):
    class Given(base):
        run_model = _solve_given(built)

    return Given(**built.options)


def _shor_runner(built: Built):
    """bb-sdp's root relaxation solved once: labels by the sign of the relaxed outputs x_U,
    scored by S3VM-L2's J (the objective bb-sdp minimises)."""

    if built.modeler == "fusion":
        raise InputError("bb-sdp's MOSEK Fusion root model is for export and inspection: "
                         "build the CVXPY one (modeler='cvxpy') to solve it here")
    if built._conic is None or built._conic.read.get("gamma_u") is None:
        raise InputError("this bb-sdp root model is lifted (the count's labels) or written in "
                         "reduced coordinates (facial reduction), so its outputs cannot be "
                         "read: build it with balance='none', count_bound='none' or "
                         "mean_products=False to solve it here")

    class Given(ConicFormulation):
        name = "bb-sdp"
        settings_used = BranchAndBoundSDP.settings_used
        settings_fixed = BranchAndBoundSDP.settings_fixed
        balances = BranchAndBoundSDP.balances
        dense_bytes = BranchAndBoundSDP.dense_bytes
        uses_groups = False
        run_model = _solve_given(built)

        def supervised_value(self, instance, settings, y):
            solution = s3vm_objective(instance, settings).solve(
                np.asarray(y[instance.unlabeled], dtype=int))
            return solution.value, None, "J of S3VM-L2 at the rounded labels"

        def run(self, instance, settings, backend, profile, clock, result):
            super().run(instance, settings, backend, profile, clock, result)
            if built.model is not built._baseline["problem"] and result.lower_bound is not None:
                # The root's box comes from an incumbent of the unchanged problem: a change
                # that raises the optimum above that incumbent can leave the changed optimum
                # outside the box, so the relaxation bounds only the labelings inside it.
                result.info["lower_bound_of_box"] = result.lower_bound
                result.info["lower_bound_note"] = (
                    "the model was changed: its box comes from the unchanged problem's "
                    "incumbent, so the relaxation's value bounds the changed problem only over "
                    "the box (lower_bound_of_box), not as a whole")
                result.lower_bound = None

    return Given()


def _kind_hint(modeler: str) -> str:
    return {"cvxpy": "a CVXPY problem is solved by scs, clarabel, sdpa, cvxopt or mosek",
            "fusion": "a MOSEK Fusion model is solved by mosek-fusion",
            "pyomo": "a Pyomo model is solved by highs, scip, cbc, glpk, gurobi, cplex or "
                     "mosek"}[modeler]


def _default_solver(runner, modeler: str) -> str:
    """The first installed solver, by the formulation's preference then its class's list,
    whose backend takes a model of ``modeler``; SolverUnavailableError when none does."""

    problem_class = runner.problem_class
    candidates = [*runner.preferred_solvers, DEFAULT_SOLVERS.get(problem_class),
                  *installed_solvers(problem_class)]
    installed = set(installed_solvers(problem_class))
    for name in candidates:
        if name in installed and backend_class(name, problem_class).model_kind == modeler:
            return name

    raise SolverUnavailableError(f"no installed solver takes a {modeler} model "
                                 f"({_kind_hint(modeler)})")
