"""Models as objects: s3vm.build returns each formulation's declarative model, a user changes it
(a side constraint on bd-mip, a cut on the SDP) and Built.solve solves it with any installed
solver. Optima are checked against enumerations over labelings solved by scipy."""

from __future__ import annotations

import itertools
import os
import re

import numpy as np
import pytest
from scipy.optimize import linprog

import s3vm
from s3vm.built import documented_components
from s3vm.solvers.registry import installed_solvers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOBS = os.path.join(ROOT, "instances", "blobs_small.toml")
PYOMO = ("rlp", "svm1", "vs3vm", "bd-mip", "bb-mip", "l2-miqp")
CVXPY = ("sdp", "sdp-subspace", "sdp-lowrank", "bb-sdp")
SMALL = {"sdp-subspace": {"options": {"dim": 3}}, "sdp-lowrank": {"options": {"dim": 3}},
         "bb-sdp": {"bias": False}}


@pytest.fixture(scope="module")
def data():
    return s3vm.load(BLOBS)


# -- independent optima: enumeration over labelings -------------------------------------------

def labeling_lp(instance, settings, labels) -> float:
    """Problem 3's LP at one labeling of the unlabeled points (scipy's HiGHS through linprog):
    min e'y + mu e'z + nu e't, labeled rows d_i (A_i w - g) + y_i >= 1, the chosen side of
    each unlabeled row s_j (B_j w - g) + t_j >= 1, -z <= w <= z."""
    A, d = instance.XL, instance.yL
    B = instance.XU
    l, p = A.shape
    u = B.shape[0]
    # columns: w (p), g, y (l), z (p), t (u)
    n = p + 1 + l + p + u
    rows, rhs = [], []
    for i in range(l):
        row = np.zeros(n)
        row[:p], row[p], row[p + 1 + i] = -d[i] * A[i], d[i], -1.0
        rows.append(row), rhs.append(-1.0)
    for j in range(u):
        row = np.zeros(n)
        row[:p], row[p], row[p + 1 + l + p + j] = -labels[j] * B[j], labels[j], -1.0
        rows.append(row), rhs.append(-1.0)
    for k in range(p):
        for sign in (1.0, -1.0):
            row = np.zeros(n)
            row[k], row[p + 1 + l + k] = sign, -1.0
            rows.append(row), rhs.append(0.0)
    cost = np.concatenate([np.zeros(p + 1), np.ones(l), np.full(p, settings.mu),
                           np.full(u, settings.nu)])
    bounds = [(None, None)] * (p + 1) + [(0, None)] * (l + p + u)
    res = linprog(cost, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=bounds, method="highs")
    assert res.status == 0
    return float(res.fun)


def svm_duals(K, Y, C, iterations=20000) -> np.ndarray:
    """D(y) = max_{0 <= a <= C} 2 e'a - a'(K o yy')a for every row y of Y at once, by
    accelerated projected gradient (FISTA) on the box; its a is feasible, so each value is
    attained (to about 1e-8 here)."""
    step = 1.0 / (2.0 * np.linalg.eigvalsh(K)[-1])  # K o yy' has the eigenvalues of K
    Q = K[None] * Y[:, :, None] * Y[:, None, :]
    a = np.full(Y.shape, 0.5 * C)
    z, t = a.copy(), 1.0
    for _ in range(iterations):
        new = np.clip(z + step * (2.0 - 2.0 * np.einsum("bij,bj->bi", Q, z)), 0.0, C)
        t_next = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        z = new + (t - 1.0) / t_next * (new - a)
        a, t = new, t_next
    return 2.0 * a.sum(axis=1) - np.einsum("bi,bij,bj->b", a, Q, a)


def labelings(u, fixed=None):
    for labels in itertools.product((-1, 1), repeat=u):
        if fixed is None or labels[fixed[0]] == fixed[1]:
            yield np.array(labels)


# -- what build returns ------------------------------------------------------------------------

@pytest.mark.solver
@pytest.mark.parametrize("name", PYOMO + CVXPY)
def test_build_returns_the_declarative_model_with_its_documented_components(name):
    import cvxpy as cp
    import pyomo.environ as pyo

    built = s3vm.build(BLOBS, name, **SMALL.get(name, {}))
    assert built.formulation == name
    if name in PYOMO:
        assert built.modeler == "pyomo" and isinstance(built.model, pyo.ConcreteModel)
        for key in documented_components()[name]:
            for part in key.split(", "):
                attr = re.sub(r"\[.*\]$", "", part)
                # only with the balance settings, or with groups
                if attr not in ("balance", "mean_balance", "groups"):
                    assert hasattr(built.model, attr), f"{name}: no component {attr}"
    else:
        assert built.modeler == "cvxpy" and isinstance(built.model, cp.Problem)
        documented = {"sdp": {"a", "lam"}, "sdp-lowrank": {"a", "lam"},
                      "sdp-subspace": {"M"}, "bb-sdp": {"X"}}[name]
        assert documented <= set(built.variables)
    assert repr(built).startswith(f"Built(formulation={name!r}")


def test_the_primal_sdp_has_the_label_matrix_variables():
    built = s3vm.build(BLOBS, "sdp", options={"sdp_form": "primal"})
    assert {"gamma_u", "Gamma_uu", "t"} <= set(built.variables)


def test_the_fusion_model_is_built_when_mosek_is_installed():
    pytest.importorskip("mosek.fusion")
    built = s3vm.build(BLOBS, "sdp", modeler="fusion")
    assert type(built.model).__name__ == "Model" and built.modeler == "fusion"
    built.model.dispose()


@pytest.mark.parametrize("name", ["bb", "switching", "cvs3vm"])
def test_formulations_without_a_model_say_so(name):
    with pytest.raises(s3vm.InputError, match=f"{name} is .*not one declarative model"):
        s3vm.build(BLOBS, name)


def test_a_modeler_the_formulation_has_no_model_for_is_refused():
    with pytest.raises(s3vm.InputError, match="bd-mip has a pyomo model, not a cvxpy one"):
        s3vm.build(BLOBS, "bd-mip", modeler="cvxpy")
    with pytest.raises(s3vm.InputError, match="modeler= must be one of"):
        s3vm.build(BLOBS, "sdp", modeler="jump")


# -- the facts on the classes ------------------------------------------------------------------

def test_every_registered_formulation_declares_its_model():
    # What s3vm.build needs is declared by each class (no table keyed by name in built.py).
    from s3vm.core.formulation import MODELERS
    from s3vm.core.registry import formulation_class

    with_model = []
    for name in s3vm.formulation_names():
        cls = formulation_class(name)
        assert isinstance(cls.modelers, tuple) and set(cls.modelers) <= set(MODELERS), name
        assert callable(cls.declarative_model) and callable(cls.solving_given), name
        if cls.modelers:
            with_model.append(name)
            assert cls.no_model is None, name
            assert cls.components and all(isinstance(k, str) and isinstance(v, str) and v
                                          for k, v in cls.components.items()), name
        else:
            assert isinstance(cls.no_model, str) and cls.no_model.strip(), name
            assert "\n" not in cls.no_model and not cls.components, name
    assert sorted(with_model) == sorted(PYOMO + CVXPY)
    assert {n: formulation_class(n).modelers[0] for n in with_model} == {
        **dict.fromkeys(PYOMO, "pyomo"), **dict.fromkeys(CVXPY, "cvxpy")}


def test_built_names_no_formulation():
    # Its facts come from the classes: the module imports and names no formulation.
    with open(os.path.join(ROOT, "s3vm_models", "built.py"), encoding="utf-8") as fh:
        source = fh.read()
    assert "s3vm.formulations." not in source
    for name in ("bb-mip", "bb-sdp", "bd-mip", "switching", "cvs3vm"):
        assert f'"{name}"' not in source, name


@pytest.fixture
def own_registry(monkeypatch):
    from s3vm.core import registry

    monkeypatch.setattr(registry, "FORMULATIONS", dict(registry.FORMULATIONS))
    return registry


@pytest.mark.solver
@pytest.mark.slow
def test_a_formulation_registered_from_outside_is_built_and_solved(own_registry, data):
    # A Pyomo family member written outside the package: the Bennett-Demiriz MIP stated with
    # the model builder of s3vm.models; built.py knows nothing of it.
    from s3vm.formulations.families.pyomo import PyomoFormulation
    from s3vm.models.problem3 import Problem3Data, build_problem3, primal_values, unlabeled_scores

    class ToyMIP(PyomoFormulation):
        name = "toy-mip"
        summary = "the Bennett-Demiriz MIP, registered from a test"
        problem = 3
        problem_class = "mip"
        settings_used = ("kernel", "sigma", "mu", "nu")
        components = {"d[j]": "binary: 1 labels unlabeled point j +1"}

        def build(self, instance, settings):
            return build_problem3(Problem3Data.from_instance(instance, settings),
                                  mu=settings.mu, unlabeled="mip", nu=settings.nu)

        def fill(self, result, model, instance, settings):
            result.labels = np.where(primal_values(model)["d"] > 0.5, 1, -1)
            result.decision_values = unlabeled_scores(model)

    own_registry.register_formulation("toy-mip", ToyMIP)
    built = s3vm.build(BLOBS, "toy-mip")
    assert built.modeler == "pyomo" and built.components == ToyMIP.components
    assert hasattr(built.model, "d")
    instance, settings = data
    best = min(labeling_lp(instance, settings, y) for y in labelings(instance.u))
    result = built.solve(solver="highs")
    assert result.formulation == "toy-mip" and result.status == "optimal"
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-8)
    with pytest.raises(s3vm.InputError, match="toy-mip has a pyomo model, not a cvxpy one"):
        s3vm.build(BLOBS, "toy-mip", modeler="cvxpy")


def test_a_formulation_from_outside_without_a_model_is_a_clean_input_error(own_registry):
    from s3vm.core.formulation import Formulation

    class Toy(Formulation):
        name = "toy"
        summary = "declares nothing about a model"
        problem_class = "svm"

        def build(self, instance, settings):
            return None

        def run(self, instance, settings, backend, profile, clock, result):
            result.status = "error"

    own_registry.register_formulation("toy", Toy)
    with pytest.raises(s3vm.InputError, match="'toy' declares no declarative model"):
        s3vm.build(BLOBS, "toy")
    Toy.no_model = "a toy"
    with pytest.raises(s3vm.InputError, match="toy is a toy, not one declarative model"):
        s3vm.build(BLOBS, "toy")
    Toy.modelers = ("jump",)
    with pytest.raises(s3vm.InputError, match="declares modelers"):
        s3vm.build(BLOBS, "toy")


# -- build, change, solve ---------------------------------------------------------------------

@pytest.mark.solver
@pytest.mark.slow
def test_bd_mip_as_built_solves_to_the_enumerated_optimum(data):
    instance, settings = data
    best = min(labeling_lp(instance, settings, y) for y in labelings(instance.u))
    result = s3vm.build(BLOBS, "bd-mip").solve(solver="highs")
    assert result.status == "optimal"
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-8)
    assert labeling_lp(instance, settings, result.labels) == pytest.approx(best, abs=1e-7)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_a_side_constraint_forcing_a_label_on_bd_mip(data, solver):
    import pyomo.environ as pyo

    if solver not in installed_solvers("mip"):
        pytest.skip(f"{solver} is not installed")
    instance, settings = data
    free = {tuple(y): labeling_lp(instance, settings, y) for y in labelings(instance.u)}
    optimum = np.array(min(free, key=free.get))
    j = 0
    forced = -optimum[j]  # against the optimum: the constraint must change the answer
    best = min(v for y, v in free.items() if y[j] == forced)
    assert best > min(free.values()) + 1e-6
    built = s3vm.build(BLOBS, "bd-mip")
    built.model.force = pyo.Constraint(expr=built.model.d[j] == (1 if forced > 0 else 0))
    result = built.solve(solver=solver)
    assert result.status == "optimal" and result.solver == solver
    assert result.labels[j] == forced
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-8)


@pytest.mark.solver
@pytest.mark.slow
def test_a_cut_on_the_sdp_raises_its_bound_and_stays_below_the_enumerated_optimum(data):
    import cvxpy as cp

    instance, settings = data
    K = instance.X @ instance.X.T

    def D(*labelings_):
        Y = np.tile(instance.label.astype(float), (len(labelings_), 1))
        Y[:, instance.unlabeled] = labelings_
        return svm_duals(K, Y, settings.C)

    every = list(labelings(instance.u))
    values = {tuple(lab): value for lab, value in zip(every, D(*every))}
    optimum = np.array(min(values, key=values.get))
    j = 2
    forced = -optimum[j]
    best_forced = min(v for lab, v in values.items() if lab[j] == forced)

    solver = next(name for name in ("sdpa", "clarabel", "scs") if name in installed_solvers("sdp"))
    plain = s3vm.build(BLOBS, "sdp", options={"sdp_form": "primal"}).solve(solver=solver)
    built = s3vm.build(BLOBS, "sdp", options={"sdp_form": "primal"})
    g = built.variables["gamma_u"]
    # The relaxed label of point j (its entry against the labeled +1 class) is -1 or +1 at a
    # labeling: g_j >= 1/2 keeps exactly the labelings with y_j = +1 and leaves the relaxation
    # an interior (g_j = 1 would be its boundary).
    cut = g[j] <= -0.5 if forced < 0 else g[j] >= 0.5
    built.model = cp.Problem(built.model.objective, built.model.constraints + [cut])
    result = built.solve(solver=solver)
    assert result.status in ("optimal", "feasible")
    assert result.labels[j] == forced
    # The relaxation's optimum (whatever the solver's accuracy) is a lower bound on D over the
    # labelings the cut keeps, and the cut, against the optimum, raised it.
    before, after = plain.info["relaxation_value"], result.info["relaxation_value"]
    assert before <= min(values.values()) + 1e-5
    assert after <= best_forced + 1e-5
    assert after > before + 1e-3
    if result.lower_bound is not None:
        assert result.lower_bound <= best_forced + 1e-5
    assert result.objective == pytest.approx(D(result.labels)[0], rel=1e-5)


@pytest.mark.solver
def test_a_model_is_solved_only_by_a_solver_of_its_kind():
    built = s3vm.build(BLOBS, "sdp")
    with pytest.raises(s3vm.InputError, match="does not solve SDP models"):
        built.solve(solver="highs")
    # psd-barrier solves this SDP from its own oracle, not from a CVXPY problem
    with pytest.raises(s3vm.InputError, match="'psd-barrier' does not take a cvxpy model"):
        built.solve(solver="psd-barrier")
