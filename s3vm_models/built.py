"""Models as objects: the declarative model of a formulation, to read, change and solve.

:func:`build` returns a :class:`Built`: the model a formulation hands to its solver (a Pyomo
``ConcreteModel``, a ``cvxpy.Problem`` or a MOSEK Fusion ``Model``) with the instance and
settings it was built from. Change the model as its modeling library allows (a side constraint,
a cut, another objective term) and :meth:`Built.solve` solves it with any installed solver of its
kind, through the same pipeline as :func:`s3vm.solve` (time limit, progress, a quiet stdout, the
checks of every :class:`~s3vm.solvers.results.Result`), reading labels and decision values from
the model's named components. What a model is comes from its formulation's class: the
libraries it is written in (``modelers``), its named components (``components``, listed by
:func:`documented_components` and in docs/models.md), the hook that builds it
(``declarative_model``) and the one that solves it as given (``solving_given``); this module
names no formulation, so one registered from outside is built like a shipped one.

Formulations that are algorithms rather than one model (``switching``, ``bb``, ``cvs3vm``) have
none to give, and say why (``no_model``).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

from s3vm.api import _base_settings, _options, _profile, load
from s3vm.core.formulation import MODELERS, GivenModel, warn_inexact_file
from s3vm.core.registry import formulation_class, formulation_names, get_formulation
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.models import derived_constants as dc
from s3vm.models.cbf import write_cvxpy_cbf
from s3vm.models.conic import ConicModel
from s3vm.models.pyomo_tools import model_state
from s3vm.solvers.errors import InputError, SolverUnavailableError
from s3vm.solvers.registry import DEFAULT_SOLVERS, backend_class, installed_solvers
from s3vm.solvers.runtime.files import atomic_output, check_writable
from s3vm.solvers.runtime.stdio import native_stdout_elsewhere


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
        The model's named components and what they mean (the formulation's ``components``).
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

    def update(self, **settings) -> str:
        """Change settings of the built model (the keywords :func:`build` takes: ``C=``,
        ``C_star=``, ``mu=``, ``nu=``, ``positives=``, ``balance=``, ``sigma=``, ...); the next
        :meth:`solve` solves the changed problem. Returns how: ``"in place"`` or
        ``"rebuilt"`` (``"unchanged"`` when nothing changed).

        In place, where the model holds the settings as parameters (its formulation's
        ``in_place_settings``): mu and nu in the mutable Params of the Problem 3 models (svm1,
        vs3vm, bd-mip, bb-mip: a MIP's big-M is then checked and raised by :meth:`solve` as
        for any change, docs/models.md), C and C* in the ``cp.Parameter`` of the low-rank dual's
        models (sdp's dual form, sdp-lowrank), which CVXPY re-solves without compiling the
        problem again (DPP). The model keeps your own changes to it.

        Otherwise the model is built again from the instance with the new settings, as a
        fresh :func:`build` would, and your changes to the old model are not carried over
        (update before you change it).

        Raises
        ------
        InputError
            A setting the formulation does not read, or values it refuses, as for
            :func:`build` (the model is then left as it was).
        """
        form = get_formulation(self.formulation, **self.options)
        new = form.settings_for(self.settings, settings)
        if not self.settings.differences(new):
            return "unchanged"
        form.check(self.instance, new)
        if form.update_model(self.model, self._conic, self.instance, self.settings, new):
            self.settings = new
            return "in place"
        fresh = build(self.instance, self.formulation, new, modeler=self.modeler,
                      options=self.options)
        self.model, self.settings, self._conic = fresh.model, fresh.settings, fresh._conic
        self._baseline = fresh._baseline
        return "rebuilt"

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
        those built, valid for the model as built. A big-M model whose largest M times 1e-6 (the
        integrality tolerance of HiGHS and SCIP) reaches 1 warns with
        :class:`~s3vm.solvers.errors.InexactFileWarning`: a reader of the file may relax its
        rows and report an optimum below the problem's, which :meth:`solve` would have called
        ``inaccurate`` (the writers themselves write every number exactly).

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
            runner = _runner(self)
            runner._write(self.model, path, format)
            warn_inexact_file(runner.inexact_file_note(self.model))
        elif self.modeler == "fusion":
            with atomic_output(path, suffix="." + format) as tmp:
                self.model.writeTask(tmp)
        else:
            with atomic_output(path, suffix="." + format) as tmp:
                write_cvxpy_cbf(self.model, tmp)
        return format


#: The formats :meth:`Built.export` writes, by modeler.
_EXPORT_FORMATS = {"pyomo": ("mps", "lp"), "fusion": ("cbf", "ptf"), "cvxpy": ("cbf",)}


#: The formats :meth:`Built.export` writes, by modeler.
_EXPORT_FORMATS = {"pyomo": ("mps", "lp"), "fusion": ("cbf", "ptf"), "cvxpy": ("cbf",)}


def build(data, formulation: str, settings: Optional[Settings] = None, *,
          modeler: Optional[str] = None, options: Optional[dict] = None,
          pairs: Optional[dict] = None, **overrides) -> Built:
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
    pairs : dict, optional
        Must-link and cannot-link pairs of rows, as for :func:`s3vm.solve`: the MIP models
        carry them as rows on their label binaries (``groups``), the SDPs in their label map.
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
        A formulation that is not one model (switching, bb, cvs3vm, or one that declares no
        ``modelers``), or a modeler it has no model for.
    """

    instance, data_settings = load(data)
    instance = instance.with_pairs(pairs)
    form = get_formulation(formulation, **_options(options))
    name = form.name
    _check_declarations(form)
    if not form.modelers:
        raise InputError(f"{name} is {form.no_model}, not one declarative model: solve it "
                         f"with s3vm.solve; the formulations with a model are "
                         f"{', '.join(documented_components())}")
    effective = form.settings_for(_base_settings(data_settings, settings), overrides)
    form.check(instance, effective)
    kind = _modeler(form, modeler)
    if kind == "fusion":
        _require_mosek()
    # A library prints nothing on stdout: the solves some builds run for their bounds (HiGHS's
    # LPs of bd-mip's big-M) would print the solver's banner there.
    with native_stdout_elsewhere():
        made = form.declarative_model(instance, effective, kind)
    conic = made if isinstance(made, ConicModel) else None
    model = made.model if conic is not None else made
    return Built(model=model, formulation=name, modeler=kind, instance=instance,
                 settings=effective, options=form.option_values(),
                 components=dict(form.components), _conic=conic,
                 _baseline=_baseline(model, form.derived_constants))


def _baseline(model, derived_constants: bool):
    """The state :meth:`Built.solve` compares a model with bound-derived constants (its
    formulation's ``derived_constants``) against."""

    if not hasattr(model, "component_objects"):
        return {"problem": model}  # a conic model: the problem object as built
    if not derived_constants:
        return None
    return {"state": model_state(model), **dc.baseline(model)}


def documented_components() -> dict:
    """name -> {component: meaning} of every registered formulation with a declarative model
    (each class's ``components``; docs/models.md lists them)."""
    out = {}
    for name in formulation_names():
        cls = formulation_class(name)
        if getattr(cls, "modelers", ()):
            out[name] = dict(cls.components)
    return out


def _check_declarations(form) -> None:
    """A class registered from outside that declares its model wrongly is an InputError, not a
    TypeError further on."""
    modelers = getattr(form, "modelers", None)
    name = form.name
    if not isinstance(modelers, tuple) or not set(modelers) <= set(MODELERS):
        raise InputError(f"formulation {name!r} declares modelers {modelers!r}: a tuple of "
                         f"{', '.join(MODELERS)} (empty when it has no declarative model)")
    if not modelers and not isinstance(getattr(form, "no_model", None), str):
        raise InputError(f"formulation {name!r} declares no declarative model (modelers) and "
                         "no reason why (no_model): solve it with s3vm.solve")
    if modelers and not isinstance(getattr(form, "components", None), dict):
        raise InputError(f"formulation {name!r} declares no components for its model")


def _modeler(form, modeler: Optional[str]) -> str:
    if modeler is None:
        return form.modelers[0]
    if modeler not in MODELERS:
        raise InputError(f"modeler= must be one of {', '.join(MODELERS)}, got {modeler!r}")
    if modeler not in form.modelers:
        raise InputError(f"{form.name} has a {' or '.join(form.modelers)} model, not a "
                         f"{modeler} one")
    return modeler


def _require_mosek() -> None:
    try:
        import mosek.fusion  # noqa: F401
    except ImportError:
        raise InputError("modeler='fusion' needs MOSEK's Python package (pip install "
                         "s3vm[mosek]); no licence is needed to build a model") from None


# -- solving -----------------------------------------------------------------------------------

def _runner(built: Built):
    """A formulation object whose step solves ``built.model`` instead of building one."""

    form = get_formulation(built.formulation, **built.options)
    return form.solving_given(GivenModel(model=built.model, modeler=built.modeler,
                                         conic=built._conic, solvers=_kind_hint(built.modeler),
                                         baseline=built._baseline))


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
