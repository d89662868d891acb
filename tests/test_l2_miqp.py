"""S3VM-L2 as a MIQP (``l2-miqp``, docs/formulations.md#l2-miqp) against an enumeration of
labelings.

Every expected number is computed here, independently of s3vm_models: the kernel matrix from its
definition, and J(y) at each labeling from the *dual* that docs/formulations.md#problem-1-dual
states (Chapelle, Sindhwani and Keerthi 2006, eqs. (4)-(5), with C and C* apart),

    J(y) = max_a 1'a - 1/2 a'(Y K Y + diag(1/(2 C_i))) a   s.t. a >= 0,  y'a = 0 (with bias),

solved by CVXPY with Clarabel, whereas the code under test works with the primal in factor form.
With c = Y a the dual is  max y'c - 1/2 c'(K + D)c  s.t. y o c >= 0 (1'c = 0), in which the
labeling enters linearly, so one compiled CVXPY problem serves every labeling.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from s3vm import api
from s3vm.core.registry import get_formulation
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.models.l2_miqp import L2Data, build_l2_miqp
from s3vm.solvers.errors import InputError

pyscipopt = pytest.importorskip("pyscipopt")
cp = pytest.importorskip("cvxpy")

REL = 1e-6      # MIQP objective (recomputed by a supervised solve) against the enumeration
FILE_REL = 1e-5  # SCIP's optimum of an exported file (its own nonlinear tolerances)


# --------------------------------------------------------------------------------------------
# Instances and the independent J
# --------------------------------------------------------------------------------------------

def make_instance(seed: int, l_per_class: int, u: int, p: int = 2) -> Instance:
    """Two overlapping Gaussian clouds in R^p (unequal spreads), rows shuffled, labeled rows
    interleaved; the first l_per_class points of each cloud are labeled."""
    rng = np.random.default_rng(seed)
    n_pos = l_per_class + (u + 1) // 2
    n_neg = l_per_class + u // 2
    centre = rng.uniform(0.8, 1.5, p)
    X = np.vstack([rng.normal(centre, rng.uniform(0.5, 1.2, p), (n_pos, p)),
                   rng.normal(-centre, rng.uniform(0.5, 1.2, p), (n_neg, p))])
    truth = np.concatenate([np.ones(n_pos, int), -np.ones(n_neg, int)])
    labeled = np.zeros(len(truth), bool)
    labeled[:l_per_class] = True
    labeled[n_pos:n_pos + l_per_class] = True
    order = rng.permutation(len(truth))
    X, truth, labeled = X[order], truth[order], labeled[order]
    return Instance(X, np.where(labeled, truth, 0), truth, name=f"clouds{seed}")


def kernel(X: np.ndarray, kind: str, sigma: float) -> np.ndarray:
    if kind == "linear":
        return X @ X.T
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-sq / (2.0 * sigma ** 2))


class DualJ:
    """J(y) at full labelings of one instance, from the dual of
    docs/formulations.md#problem-1-dual (see module doc)."""

    def __init__(self, instance: Instance, settings: Settings):
        self.instance = instance
        n = instance.n
        K = kernel(instance.X, settings.kernel, settings.sigma)
        C = np.where(instance.label != 0, settings.C, settings.C_unlabeled)
        self.K = K
        self.C = C
        H = K + np.diag(1.0 / (2.0 * C))
        L = np.linalg.cholesky((H + H.T) / 2.0)
        self.y = cp.Parameter(n)
        self.c = cp.Variable(n)
        constraints = [cp.multiply(self.y, self.c) >= 0]
        if settings.bias:
            constraints.append(cp.sum(self.c) == 0)
        self.bias = settings.bias
        self.problem = cp.Problem(
            cp.Maximize(self.y @ self.c - 0.5 * cp.sum_squares(L.T @ self.c)), constraints)

    def full(self, y_unlabeled) -> np.ndarray:
        y = self.instance.label.astype(float).copy()
        y[self.instance.unlabeled] = y_unlabeled
        return y

    def value(self, y_unlabeled) -> float:
        self.y.value = self.full(y_unlabeled)
        self.problem.solve(solver="CLARABEL")
        assert self.problem.status == cp.OPTIMAL
        return float(self.problem.value)

    def decision(self, y_unlabeled) -> np.ndarray:
        """f = K c + b at the optimum; b from the KKT rows y_i f_i = 1 - a_i / (2 C_i) of the
        points with a_i = y_i c_i > 0 (every point with a loss)."""
        self.value(y_unlabeled)
        y = self.full(y_unlabeled)
        c = self.c.value
        Kc = self.K @ c
        if not self.bias:
            return Kc
        a = y * c
        support = a > 1e-6 * max(1.0, a.max())
        b = np.mean(y[support] * (1.0 - a[support] / (2.0 * self.C[support])) - Kc[support])
        return Kc + b


def enumerate_labelings(u: int, positives):
    for bits in itertools.product((-1.0, 1.0), repeat=u):
        if positives is None or sum(b > 0 for b in bits) == positives:
            yield np.array(bits)


@pytest.fixture(scope="module")
def scip_profile(tmp_path_factory):
    """SCIP without its mpec heuristic: on these tiny models that NLP-based heuristic takes
    most of the time and finds nothing; the formulation, not SCIP's tuning, is under test."""
    path = tmp_path_factory.mktemp("profile") / "scip-test.toml"
    path.write_text('solver = "scip"\nmip_rel_gap = 1e-9\n[options]\n'
                    '"heuristics/mpec/freq" = -1\n')
    return str(path)


# name -> (instance seed, labeled per class, u, settings)
CASES = {
    "linear_bias_none": (1, 2, 7, dict(kernel="linear", C=1.0, C_star=0.5)),
    "linear_bias_count": (2, 1, 8, dict(kernel="linear", C=5.0, C_star=2.0, balance="count",
                                        positives=3)),
    "linear_nobias_count": (3, 2, 6, dict(kernel="linear", C=2.0, C_star=2.0, bias=False,
                                          balance="count")),
    "rbf_bias_count": (4, 1, 8, dict(kernel="rbf", sigma=0.7, C=10.0, C_star=10.0,
                                     balance="count")),
    "rbf_nobias_none": (5, 2, 7, dict(kernel="rbf", sigma=1.0, C=3.0, C_star=1.0, bias=False)),
    "rbf_bias_none": (6, 1, 6, dict(kernel="rbf", sigma=0.5, C=10.0, C_star=4.0)),
}


@functools.lru_cache(maxsize=None)
def case(name: str):
    seed, k, u, spec = CASES[name]
    instance = make_instance(seed, k, u)
    settings = Settings(**spec)
    return instance, settings


@functools.lru_cache(maxsize=None)
def enumeration(name: str):
    """(sorted J values, labelings in the same order) over every feasible labeling."""
    instance, settings = case(name)
    positives = settings.positive_count(instance) if settings.balance == "count" else None
    dual = DualJ(instance, settings)
    labelings = list(enumerate_labelings(instance.u, positives))
    values = np.array([dual.value(y) for y in labelings])
    order = np.argsort(values)
    return values[order], [labelings[i] for i in order], dual


# --------------------------------------------------------------------------------------------
# The optimum equals the enumeration's
# --------------------------------------------------------------------------------------------

@pytest.mark.solver
@pytest.mark.slow
def test_cases_are_nontrivial():
    """Each case has a unique optimal labeling with a clear margin, and for some cases it is not
    the labeling of the clouds the points came from (so the data and not the generator decide)."""
    differs = 0
    for name in CASES:
        values, labelings, _ = enumeration(name)
        assert len(values) >= 15
        assert values[1] - values[0] > 1e-4 * (1 + values[0]), name
        assert values[-1] > 1.5 * values[0], name
        instance, _ = case(name)
        differs += not np.array_equal(labelings[0], instance.truth_U)
    assert differs >= 1


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_bigm_optimum_equals_enumeration(name, scip_profile):
    instance, settings = case(name)
    values, labelings, dual = enumeration(name)
    result = api.solve(instance, "l2-miqp", settings, profile=scip_profile)
    assert result.solver == "scip"
    assert result.status == "optimal"
    assert result.objective == pytest.approx(values[0], rel=REL, abs=1e-8)
    # The labeling returned attains the optimum (J recomputed here, not taken from the result).
    assert result.labels.shape == (instance.u,)
    assert dual.value(result.labels) == pytest.approx(values[0], rel=REL, abs=1e-8)
    np.testing.assert_array_equal(result.labels, labelings[0])
    # The solver's own optimum of the model is J there too (so the model, not only the
    # labeling, is Problem 1).
    assert result.info["miqp_objective"] == pytest.approx(values[0], rel=1e-5)
    assert result.lower_bound is not None
    assert result.lower_bound <= values[0] * (1 + REL) + 1e-8
    assert result.lower_bound >= values[0] * (1 - 1e-4)   # proved optimal: bound closes the gap
    # Decision values: the supervised f at that labeling (from the dual's KKT conditions).
    f = dual.decision(result.labels)[instance.unlabeled]
    np.testing.assert_allclose(result.decision_values, f, atol=1e-4 * (1 + np.abs(f).max()))
    if settings.balance == "count":
        assert int((result.labels == 1).sum()) == settings.positive_count(instance)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("name", ["linear_bias_count", "rbf_nobias_none", "rbf_bias_none"])
def test_sos1_form_equals_enumeration(name, scip_profile):
    instance, settings = case(name)
    values, labelings, dual = enumeration(name)
    result = api.solve(instance, "l2-miqp", settings, profile=scip_profile,
                       options={"form": "sos1"})
    assert result.status == "optimal"
    assert result.objective == pytest.approx(values[0], rel=REL, abs=1e-8)
    np.testing.assert_array_equal(result.labels, labelings[0])
    assert result.info["miqp_objective"] == pytest.approx(values[0], rel=1e-5)
    assert result.lower_bound <= values[0] * (1 + REL) + 1e-8


def test_an_upper_bound_below_the_optimum_cuts_it_off():
    """The bounds of the derivation are not vacuous: built from an 'upper bound' far below the
    optimum, the model loses the optimum. So the test above would notice a wrong M."""
    from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect

    instance, settings = case("rbf_bias_count")
    values, _, _ = enumeration("rbf_bias_count")
    model = build_l2_miqp(L2Data.from_instance(instance, settings), "bigm", upper=0.05 * values[0])
    results = ScipDirect().solve(model, load_solutions=False,
                                 raise_exception_on_nonoptimal_result=False,
                                 solver_options={"heuristics/mpec/freq": -1})
    value = results.incumbent_objective
    assert value is None or value > values[0] * 1.01


# --------------------------------------------------------------------------------------------
# Export: the file SCIP reads back has the same optimum
# --------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["lp", "mps"])
@pytest.mark.parametrize("form", ["bigm", "sos1"])
def test_export_round_trip_through_scip(fmt, form, tmp_path):
    name = "rbf_bias_count" if form == "bigm" else "linear_nobias_count"
    instance, settings = case(name)
    values, _, _ = enumeration(name)
    path = tmp_path / f"model.{fmt}"
    assert api.export(instance, "l2-miqp", str(path), fmt, settings,
                      options={"form": form}) == fmt
    text = path.read_text()
    assert ("QUADOBJ" in text) if fmt == "mps" else ("^2" in text)
    model = pyscipopt.Model()
    model.hideOutput()
    model.setParam("limits/gap", 1e-9)
    model.setParam("heuristics/mpec/freq", -1)
    model.readProblem(str(path))
    kinds = {c.getConshdlrName() for c in model.getConss()}
    if form == "sos1":
        assert "SOS1" in kinds
    model.optimize()
    assert model.getStatus() == "optimal"
    assert model.getObjVal() == pytest.approx(values[0], rel=FILE_REL)
    binaries = [v for v in model.getVars() if v.vtype() == "BINARY"]
    assert len(binaries) == instance.u


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["indicator", "BIGM", "", "hull"])
def test_unknown_form_is_input_error(form):
    with pytest.raises(InputError, match="form"):
        get_formulation("l2-miqp", form=form)
    instance, settings = case("linear_bias_none")
    with pytest.raises(InputError, match="form"):
        api.solve(instance, "l2-miqp", settings, options={"form": form})


def test_bias_with_zero_C_is_input_error():
    instance, _ = case("linear_bias_none")
    with pytest.raises(InputError, match="C > 0"):
        api.solve(instance, "l2-miqp", Settings(C=0.0, C_star=1.0))


def test_setting_it_does_not_read_is_input_error():
    instance, _ = case("linear_bias_none")
    with pytest.raises(InputError, match="mu="):
        api.solve(instance, "l2-miqp", mu=0.5)


def test_export_to_conic_format_is_input_error(tmp_path):
    instance, settings = case("linear_bias_none")
    with pytest.raises(InputError, match="cannot be exported"):
        api.export(instance, "l2-miqp", str(tmp_path / "m.cbf"), "cbf", settings)
