"""``sdp`` in its low-rank dual form (the default ``sdp_form="dual"``) against the primal form of
De Bie and Cristianini, and the certified lower bound.

Independent references: the primal CVXPY model solved by Clarabel (another model, another
solver), and D(y) enumerated over every labeling of a small instance (the supervised SVM dual,
:func:`s3vm.models.svm_dual.svm_dual_value`, at each labeling). A bound is valid only as the value
of a feasible dual point: the tests check it below the enumerated optimum also from deliberately
inaccurate points.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from s3vm import api
from s3vm.core.kernels import kernel_matrix
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance
from s3vm.formulations.sdp import SDPRelaxation
from s3vm.models.kernel_factor import kernel_factor
from s3vm.models.lowrank_dual import certified_value
from s3vm.models.svm_dual import svm_dual_value

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")

CASES = {
    "linear-soft": Settings(kernel="linear", C=1.0),
    "rbf-soft-C*": Settings(kernel="rbf", sigma=1.5, C=2.0, C_star=0.5),
    "rbf-hard": Settings(kernel="rbf", sigma=1.5, hard_margin=True),
    "rbf-soft-count": Settings(kernel="rbf", sigma=1.5, C=1.0, balance="count", positives=3),
}


@pytest.fixture(scope="module")
def small():
    inst = gaussian_blobs(n=12, p=2, separation=2.0, n_labeled_per_class=2, seed=7)
    perm = np.random.default_rng(1).permutation(inst.n)
    return Instance(inst.X[perm], inst.label[perm], inst.truth[perm])


def grouped(inst: Instance) -> Instance:
    unl, lab = inst.unlabeled, inst.labeled
    group = np.zeros(inst.n, dtype=int)
    group[[unl[0], unl[1]]] = 1
    group[[unl[2], unl[3]]] = [2, -2]
    group[[lab[0], unl[4]]] = [3, -3]
    return Instance(inst.X, inst.label, inst.truth, group, inst.feature_names)


def solved(inst, settings, form):
    built = SDPRelaxation(sdp_form=form).build_cvxpy(inst, settings)
    built.model.solve(solver="CLARABEL")
    assert built.model.status in ("optimal", "optimal_inaccurate"), built.model.status
    return built, built.info.get("objective_sign", 1) * built.model.value


def enumerated_minimum(inst: Instance, settings: Settings) -> float:
    """min D(y) over the labelings that meet the balance and the groups, by enumeration."""
    K = kernel_matrix(inst.X, None, settings.kernel, settings.sigma)
    C = None if settings.hard_margin else np.where(inst.label != 0, settings.C,
                                                   settings.C_unlabeled)
    lm = inst.label_map()
    unl = inst.unlabeled
    best = np.inf
    for labels in itertools.product((-1, 1), repeat=inst.u):
        labels = np.array(labels)
        if settings.balance == "count" and np.sum(labels == 1) != settings.positives:
            continue
        y = inst.label.astype(float)
        y[unl] = labels
        z = np.ones(lm.size)
        free = lm.rep > 0
        z[lm.rep[free]] = lm.sign[free] * y[free]
        if not np.array_equal(lm.sign * z[lm.rep], y):  # breaks a group
            continue
        best = min(best, svm_dual_value(K, y, C)[0])
    return best


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("groups", [False, True], ids=["plain", "groups"])
def test_dual_form_has_the_primal_optimum_and_a_certified_bound(small, case, groups):
    inst = grouped(small) if groups else small
    settings = CASES[case]
    primal, p_value = solved(inst, settings, "primal")
    dual, d_value = solved(inst, settings, "dual")
    assert d_value == pytest.approx(p_value, rel=1e-5, abs=1e-7)
    certified = dual.read["certified"]()
    assert certified <= p_value * (1 + 1e-7) + 1e-9
    assert certified >= p_value - 1e-4 * max(1.0, abs(p_value))
    assert certified <= enumerated_minimum(inst, settings) * (1 + 1e-9)
    # The relaxed labels agree in sign where either form is sure of them (the optimal Gamma
    # need not be unique, so the entries themselves may differ a little).
    gd, gp = dual.read["gamma_u"](), primal.read["gamma_u"]()
    sure = (np.abs(gd) > 0.1) | (np.abs(gp) > 0.1)
    assert np.array_equal(np.sign(gd[sure]), np.sign(gp[sure]))
    np.testing.assert_allclose(gd, gp, atol=0.1)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_certificate_of_an_inexact_point_stays_below_the_optimum(small, case):
    """Points no solver returned (random a, lam = 0 or random, any eta) still certify."""
    settings = CASES[case]
    optimum = enumerated_minimum(small, settings)
    G, _ = kernel_factor(small, settings, rank=small.n)
    lm = small.label_map()
    L = lm.matrix()
    C = None if settings.hard_margin else np.where(small.label != 0, settings.C,
                                                   settings.C_unlabeled)
    balance = SDPRelaxation._balance(small, settings, lm)
    rng = np.random.default_rng(0)
    values = []
    for _ in range(30):
        a = rng.uniform(-0.5, 3.0, small.n)
        lam = rng.uniform(0.0, 5.0, small.n) * rng.integers(0, 2)
        eta = float(rng.normal()) if balance is not None else 0.0
        value = certified_value(G, L, a, lam, eta, C, balance)
        assert value <= optimum * (1 + 1e-9) + 1e-9
        values.append(value)
    assert np.isfinite(values).all()


def test_certificate_rejects_non_finite_points(small):
    settings = CASES["linear-soft"]
    G, _ = kernel_factor(small, settings, rank=small.n)
    L = small.label_map().matrix()
    a = np.full(small.n, np.nan)
    assert certified_value(G, L, a, np.zeros(small.n), 0.0, np.ones(small.n)) == -np.inf


@pytest.mark.solver
@pytest.mark.slow
def test_solve_reports_the_certified_bound_and_the_interval(small):
    settings = CASES["rbf-soft-count"]
    result = api.solve(small, "sdp", settings, solver="clarabel")
    assert result.lower_bound == pytest.approx(result.info["certified_bound"])
    assert result.lower_bound <= enumerated_minimum(small, settings) * (1 + 1e-9)
    assert result.objective >= result.lower_bound
    assert result.info["options"]["sdp_form"] == "dual"
