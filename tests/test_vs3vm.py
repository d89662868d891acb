"""VS3VM (Fung and Mangasarian 2001; docs/formulations.md#vs3vm): the LP dual of Problem 3's LPs
(docs/formulations.md#lp-dual) and the successive LP.

Every expected number is computed in this file, independently of s3vm_models:

- the LPs are written from the math as dense matrices and solved with scipy.optimize.linprog,
- kernel columns are computed here from the definition k(x, z) = exp(-|x - z|^2 / (2 sigma^2)),
- objectives are recomputed from (w, b) with the slacks at their least feasible values,
- the Bennett-Demiriz optimum comes from the MIP (solved through the API; its equality with
  the enumeration of labelings is tests/test_problem3.py's subject) and is cross-checked with
  linprog at the labeling VS3VM returns.

The LP in the variables (w, g, y, z, r, s), with costs c_r, c_s on the unlabeled slacks:

    min  e'y + mu e'z + c_r'r + c_s's
    s.t. D(A w - e g) + y >= e,  -z <= w <= z,  B w - e g + r >= e,  -B w + e g + s >= e,
         y, z, r, s >= 0

mu = None drops z (RLP); no B drops r and s (RLP, 1-norm SVM); c_r = c_s = nu/2 is VS3VM's
starting LP; c = nu * (supergradient of e' min(r, s)) is one of its steps. f(x) = x'w - g = x'w + b.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.optimize import linprog

from s3vm import api
from s3vm.core.registry import get_formulation
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs, noisy_linear, two_moons
from s3vm.data.instance import Instance
from s3vm.formulations.vs3vm import VS3VM
from s3vm.models.problem3 import Problem3Data, build_problem3, build_problem3_dual, solution_wg
from s3vm.solvers.errors import InputError
from s3vm.solvers.profiles import get_profile
from s3vm.solvers.registry import get_backend, installed_solvers

LP_SOLVERS = installed_solvers("lp")

LP_RTOL = 1e-7      # an LP optimum against linprog
SEQ_RTOL = 1e-9     # monotonicity of the objective sequence (relative)
OPT_RTOL = 1e-6     # VS3VM against the MIP optimum; the stopping condition


# --------------------------------------------------------------------------------------------
# Instances (seeded; expected values are recomputed, never stored)
# --------------------------------------------------------------------------------------------

def random_linear_instance(seed: int, per_class: int, u: int, p: int, noise: float) -> Instance:
    return noisy_linear(per_class=per_class, u=u, p=p, noise=noise, seed=seed)


@functools.lru_cache(maxsize=None)
def instance(name: str) -> Instance:
    builders = {
        # for the LP dual (a few dozen points)
        "blobs_p3": lambda: gaussian_blobs(n=30, p=3, separation=1.5, n_labeled_per_class=4,
                                           seed=31),
        "random_p4": lambda: random_linear_instance(33, 8, 14, 4, noise=4.0),
        "moons": lambda: two_moons(n_per_class_labeled=8, n_unlabeled_per_class=10, noise=0.15,
                                   seed=33),
        # small ones (u <= 10) whose MIP optimum is cheap
        "small_blobs_1": lambda: gaussian_blobs(n=14, p=2, separation=1.0,
                                                n_labeled_per_class=2, seed=1),
        "small_blobs_3": lambda: gaussian_blobs(n=14, p=2, separation=1.0,
                                                n_labeled_per_class=2, seed=3),
        "small_blobs_p3": lambda: gaussian_blobs(n=13, p=3, separation=2.0,
                                                 n_labeled_per_class=2, seed=5),
        "small_random_p3": lambda: random_linear_instance(5, 2, 7, 3, noise=1.5),
        "small_random_p4": lambda: random_linear_instance(7, 2, 9, 4, noise=2.0),
        "small_moons": lambda: two_moons(n_per_class_labeled=2, n_unlabeled_per_class=5,
                                         noise=0.2, seed=6),
        # for the kernel VS3VM
        "moons_rbf": lambda: two_moons(n_per_class_labeled=3, n_unlabeled_per_class=15,
                                       noise=0.1, seed=7),
    }
    return builders[name]()


LP_INSTANCES = ["blobs_p3", "random_p4", "moons"]
KERNELS = [("linear", None), ("rbf", 0.8), ("rbf", 2.0)]
KERNEL_IDS = ["linear", "rbf0.8", "rbf2"]

# (instance, mu, nu) with u <= 10
SMALL_CASES = [
    ("small_blobs_1", 0.1, 1.0),
    ("small_blobs_3", 0.1, 1.0),
    ("small_blobs_3", 1.0, 0.5),
    ("small_blobs_p3", 0.2, 1.0),
    ("small_random_p3", 0.3, 1.5),
    ("small_random_p4", 0.1, 2.0),
    ("small_moons", 0.05, 1.0),
]
SMALL_IDS = [f"{c[0]}-mu{c[1]}-nu{c[2]}" for c in SMALL_CASES]


# --------------------------------------------------------------------------------------------
# Independent computations
# --------------------------------------------------------------------------------------------

def rbf(X, Z, sigma):
    """k(x, z) = exp(-|x - z|^2 / (2 sigma^2)) from the definition (pairwise differences)."""
    diff = np.asarray(X, float)[:, None, :] - np.asarray(Z, float)[None, :, :]
    return np.exp(-(diff ** 2).sum(axis=2) / (2.0 * sigma ** 2))


def columns(inst: Instance, kernel: str, sigma):
    """(A, d, B, feature map): the labeled and unlabeled columns of Problem 3 and the map of
    new points to columns. rbf: one column per point of the instance (all of them)."""
    if kernel == "linear":
        return inst.XL, inst.yL.astype(float), inst.XU, (lambda X: np.asarray(X, float))
    phi = functools.partial(lambda X, basis: rbf(X, basis, sigma), basis=inst.X)
    return phi(inst.XL), inst.yL.astype(float), phi(inst.XU), phi


def lp3(A, d, B, mu, c_r=None, c_s=None):
    """Solve the LP of the module docstring with linprog; returns (value, w, g)."""
    A = np.asarray(A, float)
    l, p = A.shape
    B = np.zeros((0, p)) if B is None else np.asarray(B, float).reshape(-1, p)
    u = B.shape[0]
    c_r = np.broadcast_to(np.asarray(0.0 if c_r is None else c_r, float), (u,))
    c_s = np.broadcast_to(np.asarray(0.0 if c_s is None else c_s, float), (u,))
    nz = 0 if mu is None else p
    iw, ig, iy, iz = 0, p, p + 1, p + 1 + l
    ir = iz + nz
    i_s = ir + u
    nvar = i_s + u
    rows = []
    rhs = []
    for i in range(l):                  # -(d_i (A_i w - g) + y_i) <= -1
        row = np.zeros(nvar)
        row[iw:iw + p] = -d[i] * A[i]
        row[ig] = d[i]
        row[iy + i] = -1.0
        rows.append(row)
        rhs.append(-1.0)
    for k in range(nz):                 # +-w_k - z_k <= 0
        for sign in (1.0, -1.0):
            row = np.zeros(nvar)
            row[iw + k] = sign
            row[iz + k] = -1.0
            rows.append(row)
            rhs.append(0.0)
    for j in range(u):                  # -(B_j w - g + r_j) <= -1,  -(-B_j w + g + s_j) <= -1
        row = np.zeros(nvar)
        row[iw:iw + p] = -B[j]
        row[ig] = 1.0
        row[ir + j] = -1.0
        rows.append(row)
        rhs.append(-1.0)
        row = np.zeros(nvar)
        row[iw:iw + p] = B[j]
        row[ig] = -1.0
        row[i_s + j] = -1.0
        rows.append(row)
        rhs.append(-1.0)
    c = np.zeros(nvar)
    c[iy:iy + l] = 1.0
    c[iz:iz + nz] = 0.0 if mu is None else mu
    c[ir:ir + u] = c_r
    c[i_s:i_s + u] = c_s
    bounds = [(None, None)] * (p + 1) + [(0, None)] * (nvar - p - 1)
    res = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(res.fun), res.x[iw:iw + p].copy(), float(res.x[ig])


def slacks(A, d, B, w, g):
    """Least feasible slacks at (w, g): y (labeled), r and s (the two sides of each unlabeled)."""
    fL = A @ w - g
    fU = B @ w - g
    return np.maximum(0.0, 1.0 - d * fL), np.maximum(0.0, 1.0 - fU), np.maximum(0.0, 1.0 + fU)


def linear_objective(A, d, B, w, g, mu, c_r=0.0, c_s=0.0):
    """e'y + mu |w|_1 + c_r'r + c_s's at (w, g) with the least slacks (mu None: no norm)."""
    y, r, s = slacks(A, d, B, w, g)
    norm = 0.0 if mu is None else mu * np.abs(w).sum()
    return float(y.sum() + norm + np.sum(c_r * r) + np.sum(c_s * s))


def concave_objective(A, d, B, w, g, mu, nu):
    """e'y + mu |w|_1 + nu e' min(r, s) at (w, g): Problem 3 with the best side per point."""
    y, r, s = slacks(A, d, B, w, g)
    return float(y.sum() + mu * np.abs(w).sum() + nu * np.minimum(r, s).sum())


def supergradient_costs(r, s, nu, tie=1e-9):
    """nu times Fung and Mangasarian's supergradient of e' min(r, s): r_j charged when
    r_j < s_j, s_j when r_j > s_j, half each at a tie (lambda = 0.5)."""
    r, s = np.asarray(r), np.asarray(s)
    is_tie = np.abs(r - s) <= tie * np.maximum(1.0, r + s)
    c_r = np.where(is_tie, 0.5, np.where(r < s, 1.0, 0.0)) * nu
    return c_r, nu - c_r


def assert_rel(actual, expected, rtol, what=""):
    assert actual is not None, what
    assert abs(actual - expected) <= rtol * max(1.0, abs(expected)), \
        f"{what}: {actual!r} != {expected!r} (diff {actual - expected:.3g})"


def solve_model(model, solver="highs"):
    """Solve a built Pyomo model with a backend; the backend's Outcome."""
    outcome = get_backend(solver, "lp").solve(model, get_profile(solver=solver))
    assert outcome.status == "optimal", outcome.message
    return outcome


def run_vs3vm(inst, mu, nu, solver="highs", kernel="linear", sigma=1.0, **options):
    settings = Settings(mu=mu, nu=nu, kernel=kernel, sigma=sigma)
    return VS3VM(**options).solve(inst, settings, get_profile(solver=solver))


def result_wg(result):
    """(w, g) of a Result: the package reports b = -g."""
    return np.asarray(result.primal["w"], float), -float(result.primal["b"])


# --------------------------------------------------------------------------------------------
# 1. The LP dual against the primal and linprog
# --------------------------------------------------------------------------------------------

# (what, mu, unlabeled part, nu)
LP_PROBLEMS = [("rlp", None, None, 0.0), ("svm1", 0.3, None, 0.0), ("vs3vm_start", 0.2, "lp", 1.4)]
LP_PROBLEM_IDS = [p[0] for p in LP_PROBLEMS]


def expected_lp(inst, kernel, sigma, mu, unlabeled, nu):
    A, d, B, _ = columns(inst, kernel, sigma)
    if unlabeled:
        return lp3(A, d, B, mu, nu / 2.0, nu / 2.0)[0]
    return lp3(A, d, None, mu)[0]


@pytest.mark.solver
@pytest.mark.parametrize("problem", LP_PROBLEMS, ids=LP_PROBLEM_IDS)
@pytest.mark.parametrize("kernel, sigma", KERNELS, ids=KERNEL_IDS)
@pytest.mark.parametrize("name", LP_INSTANCES)
def test_lp_dual_model_equals_primal_and_linprog(name, kernel, sigma, problem):
    what, mu, unlabeled, nu = problem
    inst = instance(name)
    settings = Settings(kernel=kernel, sigma=sigma or 1.0)
    data = Problem3Data.from_instance(inst, settings)
    A, d, B, _ = columns(inst, kernel, sigma)
    # the package's columns are the ones of the definition (rbf: against all n points)
    np.testing.assert_allclose(data.A, A, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(data.B, B, rtol=1e-10, atol=1e-12)
    expected = expected_lp(inst, kernel, sigma, mu, unlabeled, nu)
    if what == "rlp" and kernel == "linear" and name != "blobs_p3":
        assert expected > 0.5  # the labeled classes overlap: not the trivial optimum 0

    primal = build_problem3(data, mu=mu, unlabeled=unlabeled, nu=nu)
    dual = build_problem3_dual(data, mu=mu, unlabeled=unlabeled, nu=nu)
    primal_value = solve_model(primal).objective
    dual_value = solve_model(dual).objective
    assert_rel(primal_value, expected, LP_RTOL, "primal model vs linprog")
    assert_rel(-dual_value, expected, LP_RTOL, "minus the dual optimum vs linprog")

    c = nu / 2.0 if unlabeled else 0.0
    Bc = B if unlabeled else np.zeros((0, A.shape[1]))
    for model, form in ((dual, "dual"), (primal, "primal")):
        w, g = solution_wg(model)
        assert w.shape == (A.shape[1],) and np.all(np.isfinite(w)) and np.isfinite(g), form
        assert_rel(linear_objective(A, d, Bc, w, g, mu, c, c), expected, LP_RTOL,
                   f"objective at (w, g) of the {form} model")


@pytest.mark.solver
@pytest.mark.parametrize("lp_form", ["dual", "primal"])
@pytest.mark.parametrize("formulation", ["rlp", "svm1"])
@pytest.mark.parametrize("kernel, sigma", KERNELS, ids=KERNEL_IDS)
@pytest.mark.parametrize("name", LP_INSTANCES)
def test_supervised_lp_forms_through_the_formulation(name, kernel, sigma, formulation, lp_form):
    inst = instance(name)
    mu = None if formulation == "rlp" else 0.3
    settings = Settings(kernel=kernel, sigma=sigma or 1.0, mu=0.3)
    result = get_formulation(formulation, lp_form=lp_form).solve(inst, settings,
                                                                   get_profile(solver="highs"))
    assert result.status == "optimal", result.message
    expected = expected_lp(inst, kernel, sigma, mu, None, 0.0)
    assert_rel(result.objective, expected, LP_RTOL, f"{formulation} ({lp_form}) vs linprog")
    A, d, B, phi = columns(inst, kernel, sigma)
    w, g = result_wg(result)
    assert_rel(linear_objective(A, d, np.zeros((0, A.shape[1])), w, g, mu), expected, LP_RTOL,
               "objective at the reported w, b")
    np.testing.assert_allclose(result.decision_values, phi(inst.XU) @ w - g, rtol=1e-9,
                               atol=1e-9)


@pytest.mark.solver
@pytest.mark.parametrize("lp_form", ["dual", "primal"])
@pytest.mark.parametrize("kernel, sigma", KERNELS, ids=KERNEL_IDS)
@pytest.mark.parametrize("name", LP_INSTANCES)
def test_vs3vm_starting_lp_through_the_formulation(name, kernel, sigma, lp_form):
    """VS3VM(max_lps=1) solves only the starting LP (costs nu/2): its (w, b) attain the LP's
    optimum, and the objective it reports is the concave objective there."""
    inst = instance(name)
    mu, nu = 0.2, 1.4
    result = run_vs3vm(inst, mu, nu, kernel=kernel, sigma=sigma or 1.0, max_lps=1,
                       lp_form=lp_form)
    assert result.status == "feasible" and result.iterations == 1
    A, d, B, _ = columns(inst, kernel, sigma)
    w, g = result_wg(result)
    assert_rel(linear_objective(A, d, B, w, g, mu, nu / 2, nu / 2),
               expected_lp(inst, kernel, sigma, mu, "lp", nu), LP_RTOL,
               "starting LP value at the reported w, b")
    assert_rel(result.objective, concave_objective(A, d, B, w, g, mu, nu), 1e-9,
               "reported objective vs the concave objective at w, b")
    assert result.info["objectives"] == [result.objective]


# --------------------------------------------------------------------------------------------
# 2. VS3VM
# --------------------------------------------------------------------------------------------

def check_vs3vm_result(result, inst, mu, nu, kernel="linear", sigma=None, max_lps=50):
    """What every VS3VM result must satisfy, recomputed from its w and b."""
    assert result.status == "feasible", result.message
    objectives = result.info["objectives"]
    # iterations: the number of LPs solved (the starting LP included), one objective each
    assert result.iterations == len(objectives) == len(result.info["lp_seconds"])
    assert 1 <= result.iterations <= max_lps
    # the sequence never increases
    for before, after in zip(objectives, objectives[1:]):
        assert after <= before + SEQ_RTOL * max(1.0, abs(before)), objectives
    A, d, B, phi = columns(inst, kernel, sigma)
    w, g = result_wg(result)
    assert_rel(result.objective, concave_objective(A, d, B, w, g, mu, nu), 1e-9,
               "reported objective vs the concave objective at the reported w, b")
    # the reported point is one of the iterates and (up to the tolerance) the best of them
    assert any(abs(result.objective - f) <= 1e-12 * max(1.0, abs(f)) for f in objectives)
    assert result.objective <= min(objectives) + SEQ_RTOL * max(1.0, abs(result.objective))
    # decision values are f(x) = phi(x)'w + b on the unlabeled rows; labels their signs
    scores = phi(inst.XU) @ w - g
    np.testing.assert_allclose(result.decision_values, scores, rtol=1e-9, atol=1e-9)
    dv = np.asarray(result.decision_values)
    assert np.array_equal(np.asarray(result.labels), np.where(dv >= 0, 1, -1))
    return A, d, B, w, g


def check_stopping_condition(A, d, B, w, g, mu, nu):
    """Fung and Mangasarian's necessary optimality condition at the final point: it minimises
    its own linearisation over the polyhedron, checked with an independent LP."""
    y, r, s = slacks(A, d, B, w, g)
    c_r, c_s = supergradient_costs(r, s, nu)
    at_point = float(y.sum() + mu * np.abs(w).sum() + c_r @ r + c_s @ s)
    best, _, _ = lp3(A, d, B, mu, c_r, c_s)
    assert best <= at_point + OPT_RTOL * max(1.0, abs(at_point))
    assert_rel(best, at_point, OPT_RTOL, "LP minimum of the linearisation vs its value at x")


@pytest.fixture(scope="module")
def mip_optima():
    """Bennett-Demiriz optimum of every small case (MIP through the API, HiGHS)."""
    out = {}
    for name, mu, nu in SMALL_CASES:
        result = api.solve(instance(name), "bd-mip", solver="highs", mu=mu, nu=nu)
        assert result.status == "optimal", result.message
        out[(name, mu, nu)] = result.objective
    return out


def test_small_cases_are_small_and_nontrivial():
    names = {c[0] for c in SMALL_CASES}
    assert len(names) >= 5
    for name in names:
        inst = instance(name)
        assert 1 <= inst.u <= 10 and inst.l >= 2


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", LP_SOLVERS)
def test_vs3vm_against_the_mip_optimum(solver, mip_optima):
    """VS3VM's point is feasible for the MIP: its value is >= the MIP optimum, >= the LP of
    its own labeling (linprog), and on some instances VS3VM reaches the optimum."""
    reached = 0
    for name, mu, nu in SMALL_CASES:
        inst = instance(name)
        result = run_vs3vm(inst, mu, nu, solver=solver)
        A, d, B, w, g = check_vs3vm_result(result, inst, mu, nu)
        optimum = mip_optima[(name, mu, nu)]
        assert result.objective >= optimum - OPT_RTOL * max(1.0, optimum), (name, mu, nu)
        # the labeling VS3VM returns, charged on its chosen side only (linprog)
        labels = np.asarray(result.labels)
        side = lp3(A, d, B, mu, nu * (labels == 1), nu * (labels == -1))[0]
        assert optimum - OPT_RTOL * max(1.0, optimum) <= side
        assert side <= result.objective + OPT_RTOL * max(1.0, result.objective)
        if abs(result.objective - optimum) <= OPT_RTOL * max(1.0, optimum):
            reached += 1
    assert reached >= 1, "VS3VM reached the MIP optimum on no instance"


@pytest.mark.solver
@pytest.mark.parametrize("solver", LP_SOLVERS)
@pytest.mark.parametrize("case", SMALL_CASES, ids=SMALL_IDS)
def test_vs3vm_stops_at_the_seeds_condition(case, solver):
    name, mu, nu = case
    inst = instance(name)
    result = run_vs3vm(inst, mu, nu, solver=solver)
    assert result.info["stop"] == "necessary optimality condition"
    A, d, B, w, g = check_vs3vm_result(result, inst, mu, nu)
    check_stopping_condition(A, d, B, w, g, mu, nu)


@pytest.mark.solver
@pytest.mark.parametrize("lp_form", ["dual", "primal"])
def test_vs3vm_on_larger_instance(lp_form):
    """More unlabeled points and several LPs: monotone, stops at Fung and Mangasarian's
    condition."""
    inst = gaussian_blobs(n=120, p=4, separation=1.5, n_labeled_per_class=5, seed=41)
    mu, nu = 0.1, 1.0
    result = run_vs3vm(inst, mu, nu, lp_form=lp_form)
    assert result.iterations >= 3  # the test exercises several linearisations
    A, d, B, w, g = check_vs3vm_result(result, inst, mu, nu)
    assert result.info["stop"] == "necessary optimality condition"
    check_stopping_condition(A, d, B, w, g, mu, nu)


@pytest.mark.solver
@pytest.mark.parametrize("lp_form", ["dual", "primal"])
def test_kernel_vs3vm(lp_form):
    inst = instance("moons_rbf")
    mu, nu, sigma = 0.05, 1.0, 0.5
    result = run_vs3vm(inst, mu, nu, kernel="rbf", sigma=sigma, lp_form=lp_form)
    assert np.asarray(result.primal["w"]).shape == (inst.n,)  # one coefficient per point
    A, d, B, w, g = check_vs3vm_result(result, inst, mu, nu, kernel="rbf", sigma=sigma)
    assert result.info["stop"] == "necessary optimality condition"
    check_stopping_condition(A, d, B, w, g, mu, nu)


@pytest.mark.solver
@pytest.mark.parametrize("lp_form", ["dual", "primal"])
@pytest.mark.parametrize("case", [SMALL_CASES[0], SMALL_CASES[4]], ids=[SMALL_IDS[0],
                                                                        SMALL_IDS[4]])
def test_warm_and_cold_give_the_same_sequence(case, lp_form):
    name, mu, nu = case
    inst = instance(name)
    warm = run_vs3vm(inst, mu, nu, lp_form=lp_form)
    cold = run_vs3vm(inst, mu, nu, lp_form=lp_form, warm_start=False)
    assert warm.iterations >= 2
    np.testing.assert_allclose(cold.info["objectives"], warm.info["objectives"], rtol=1e-9,
                               atol=1e-9)
    assert np.array_equal(cold.labels, warm.labels)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("lp_form", ["dual"])
def test_warm_start_reuses_the_basis(lp_form):
    """Warm and cold runs visit the same iterates; the warm re-solves need fewer simplex
    iterations in all (cold ones start every LP from scratch). Dual form only: there a step
    changes bounds and the dual simplex restarts from a dual feasible basis. (In the primal
    form on this instance the warm primal simplex re-solves take more iterations than cold
    ones, 117 against 76: a speed matter, not a correctness one.)"""
    inst = gaussian_blobs(n=120, p=4, separation=1.5, n_labeled_per_class=5, seed=41)
    warm = run_vs3vm(inst, 0.1, 1.0, lp_form=lp_form)
    cold = run_vs3vm(inst, 0.1, 1.0, lp_form=lp_form, warm_start=False)
    np.testing.assert_allclose(cold.info["objectives"], warm.info["objectives"], rtol=1e-9)
    assert warm.info["lp_iterations"][0] == cold.info["lp_iterations"][0]  # both start cold
    assert sum(warm.info["lp_iterations"][1:]) < sum(cold.info["lp_iterations"][1:])


def test_supergradient_of_the_concave_term():
    """ConcaveS3VM's costs are nu times Fung and Mangasarian's supergradient of e' min(r, s):
    r_j where r_j < s_j, s_j where r_j > s_j, half each at an exact tie (lambda = 0.5)."""
    from s3vm.formulations.vs3vm import ConcaveS3VM, Iterate

    data = Problem3Data.from_instance(instance("small_blobs_1"))
    model = build_problem3(data, mu=0.1, unlabeled="lp", nu=1.6)
    problem = ConcaveS3VM(model, 0.1, 1.6)
    u = data.B.shape[0]
    fU = np.linspace(-1.5, 1.5, u)
    fU[[2, 5]] = 0.0  # exact ties r_j = s_j = 1
    r, s = np.maximum(0.0, 1.0 - fU), np.maximum(0.0, 1.0 + fU)
    x = Iterate(w=np.zeros(data.A.shape[1]), g=0.0, y=np.zeros(data.A.shape[0]),
                z=np.zeros(data.A.shape[1]), r=r, s=s)
    c_r, c_s = problem.supergradient(x)
    want_r, want_s = supergradient_costs(r, s, 1.6)
    assert want_r[2] == want_s[2] == 0.8
    np.testing.assert_array_equal(c_r, want_r)
    np.testing.assert_array_equal(c_s, want_s)
    # the linearisation at x written into the model: its objective at x is the linear value
    problem.linearize(x)
    assert [model.cost_r[j].value for j in range(u)] == want_r.tolist()
    assert [model.cost_s[j].value for j in range(u)] == want_s.tolist()
    assert problem.linear_value(x) == pytest.approx(want_r @ r + want_s @ s, rel=1e-12)


@pytest.mark.solver
@pytest.mark.parametrize("case", SMALL_CASES[:2] + SMALL_CASES[3:], ids=SMALL_IDS[:2] +
                         SMALL_IDS[3:])
def test_dual_and_primal_forms_reach_the_same_objective(case):
    name, mu, nu = case
    inst = instance(name)
    dual = run_vs3vm(inst, mu, nu, lp_form="dual")
    primal = run_vs3vm(inst, mu, nu, lp_form="primal")
    assert_rel(dual.objective, primal.objective, OPT_RTOL, "dual vs primal form")


@pytest.mark.solver
@pytest.mark.parametrize("solver", LP_SOLVERS)
def test_auto_lp_form_follows_the_solvers_duals(solver):
    """auto: the dual form where the solver returns duals, else the primal; the final
    objective is the same as HiGHS's primal form on a case with unique LP optima."""
    name, mu, nu = SMALL_CASES[0]
    inst = instance(name)
    backend = get_backend(solver, "lp")
    form = VS3VM()
    model = form.model_to_solve(inst, Settings(mu=mu, nu=nu), backend)
    assert getattr(model, "dual_form", False) == backend.provides_duals
    auto = run_vs3vm(inst, mu, nu, solver=solver)
    reference = run_vs3vm(inst, mu, nu, lp_form="primal")
    assert_rel(auto.objective, reference.objective, OPT_RTOL, f"{solver} auto vs highs primal")
    if not backend.provides_duals:
        with pytest.raises(InputError):
            run_vs3vm(inst, mu, nu, solver=solver, lp_form="dual")


def test_vs3vm_rejects_balance_count():
    inst = instance("small_blobs_1")
    with pytest.raises(InputError):
        api.solve(inst, "vs3vm", solver="highs", balance="count")
    with pytest.raises(InputError):
        VS3VM().solve(inst, Settings(balance="count"), get_profile(solver="highs"))


@pytest.mark.parametrize("max_lps", [0, -1, 1.5, True])
def test_vs3vm_rejects_bad_max_lps(max_lps):
    with pytest.raises(InputError):
        VS3VM(max_lps=max_lps)


@pytest.mark.solver
@pytest.mark.parametrize("solver", LP_SOLVERS)
def test_max_lps_caps_the_number_of_lps(solver):
    inst = instance("small_blobs_3")
    mu, nu = 0.1, 1.0
    free = run_vs3vm(inst, mu, nu, solver=solver)
    assert free.iterations >= 3  # so that caps of 1 and 2 bind
    for cap in (1, 2):
        result = api.solve(inst, "vs3vm", solver=solver, mu=mu, nu=nu,
                           options={"max_lps": cap})
        assert result.iterations == cap and len(result.info["objectives"]) == cap
        assert "cap" in result.info["stop"]
        check_vs3vm_result(result, inst, mu, nu, max_lps=cap)
        # the reported point is the newest iterate, the one the free run also reached
        assert_rel(result.objective, free.info["objectives"][cap - 1], 1e-9)


# --------------------------------------------------------------------------------------------
# 3. Time limits: an LP stopped by the solver's time limit is a time_limit stop, not an error
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lp_form", ["auto", "primal"])
@pytest.mark.parametrize("solver", LP_SOLVERS)
def test_lp_stopped_by_the_time_limit_reports_time_limit(solver, lp_form):
    """Regression: successive_lp turned every non-optimal LP outcome but "infeasible" into
    status "error", so `s3vm solve --formulation vs3vm --time-limit S` reported "error" when the
    solver stopped an LP at the limit (rlp and svm1 report "time_limit" there)."""
    inst = instance("small_blobs_1")
    result = api.solve(inst, "vs3vm", solver=solver, time_limit=1e-9,
                       options={"lp_form": lp_form})
    assert result.status == "time_limit", (result.status, result.message)
    supervised = api.solve(inst, "svm1", solver=solver, time_limit=1e-9)
    assert supervised.status == result.status


class FakeSession:
    """Replays LP outcomes; each "optimal" one moves the fake model to the next point."""

    def __init__(self, problem, outcomes):
        self.problem, self.outcomes = problem, list(outcomes)

    def resolve(self):
        from s3vm.solvers.backends.base import Outcome

        status = self.outcomes.pop(0)
        if status == "optimal":
            self.problem.step += 1
        return Outcome(status=status, seconds=0.0, message=status,
                       has_solution=status == "optimal")


class FakeConcave:
    """f(x) = -x on the points x = 1, 2, 3, ...: every LP decreases f (never stationary)."""

    step = 0

    def read(self):
        return self.step

    def value(self, x):
        return -float(x)

    def linearize(self, x):
        pass

    def linear_value(self, x):
        return -float(x)


@pytest.mark.parametrize("status, expected", [("time_limit", "time_limit"),
                                              ("infeasible", "infeasible"),
                                              ("error", "error")])
def test_slp_driver_keeps_the_last_iterate_when_an_lp_fails(status, expected):
    from s3vm.solvers.engines.slp import successive_lp

    problem = FakeConcave()
    session = FakeSession(problem, ["optimal", "optimal", status])
    trace = successive_lp(problem, session, max_lps=10)
    assert trace.status == expected
    assert trace.x == 2 and trace.objective == -2.0  # the last LP that finished
    assert trace.objectives == [-1.0, -2.0]
    assert trace.n_lps == 3  # LPs attempted, the failed one included
