"""Problem 3 (S3VM-1): RLP, the 1-norm SVM and the Bennett-Demiriz MIP.

The problems are stated in docs/formulations.md#problem-3 (sections 4.2-4.4).

Every expected number here is computed in this file, independently of s3vm_models: the LPs are
written from the math as dense matrices and solved with scipy.optimize.linprog, and the MIP
optimum is checked against an enumeration of all 2^u labelings (docs/formulations.md#bd-mip: "Its
optimum equals the minimum over labelings of the LP that keeps only the chosen side's constraint
(the tests enumerate all labelings to check it)").

The LP of one labeling s in {-1,+1}^u, in the variables (w, g, y, z, q):

    min  e'y + mu e'z + nu e'q
    s.t. D(A w - e g) + y >= e,   -z <= w <= z,   s_j (B_j w - g) + q_j >= 1,   y, z, q >= 0
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import os

import highspy
import numpy as np
import pytest
from scipy.optimize import linprog

from s3vm import api
from s3vm.core.registry import get_formulation
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs, noisy_linear, two_moons
from s3vm.data.instance import Instance
from s3vm.models.problem3 import Problem3Data, big_m
from s3vm.solvers.errors import InputError
from s3vm.solvers.profiles import get_profile
from s3vm.solvers.registry import installed_solvers

MIP_SOLVERS = installed_solvers("mip")
LP_SOLVERS = installed_solvers("lp")

ENUM_RTOL = 1e-6    # MIP optimum against the enumeration of labelings
LP_RTOL = 1e-7      # LP optimum against linprog; exported model against the solved one


# --------------------------------------------------------------------------------------------
# Instances (seeded; the expected values are never stored, always recomputed)
# --------------------------------------------------------------------------------------------

def random_linear_instance(seed: int, per_class: int, u: int, p: int, noise: float) -> Instance:
    return noisy_linear(per_class=per_class, u=u, p=p, noise=noise, seed=seed)


@functools.lru_cache(maxsize=None)
def mip_instance(name: str) -> Instance:
    """Small instances (u in 4..10, p in 2..4) whose labelings can all be enumerated."""
    builders = {
        "blobs_p2_u6": lambda: gaussian_blobs(n=12, p=2, separation=1.5, n_labeled_per_class=3,
                                              seed=1),
        "blobs_p3_u8": lambda: gaussian_blobs(n=12, p=3, separation=2.0, n_labeled_per_class=2,
                                              seed=2),
        "blobs_p4_u5": lambda: gaussian_blobs(n=9, p=4, separation=1.0, n_labeled_per_class=2,
                                              seed=3),
        "blobs_p2_u10": lambda: gaussian_blobs(n=14, p=2, separation=1.0,
                                               n_labeled_per_class=2, seed=4),
        "random_p3_u7": lambda: random_linear_instance(5, 2, 7, 3, noise=1.5),
        "random_p2_u4": lambda: random_linear_instance(6, 3, 4, 2, noise=1.0),
        "random_p4_u9": lambda: random_linear_instance(7, 2, 9, 4, noise=2.0),
    }
    inst = builders[name]()
    assert 4 <= inst.u <= 10 and 2 <= inst.p <= 4
    return inst


# (instance, mu, nu, P for --balance count)
MIP_CASES = [
    ("blobs_p2_u6", 0.1, 1.0, 1),
    ("blobs_p2_u6", 1.0, 0.3, 3),
    ("blobs_p3_u8", 0.05, 2.0, 2),
    ("blobs_p3_u8", 1.0, 1.0, 6),
    ("blobs_p4_u5", 0.8, 1.0, 4),
    ("blobs_p2_u10", 1.0, 0.5, 5),
    ("random_p3_u7", 0.3, 1.5, 2),
    ("random_p3_u7", 2.0, 0.2, 5),
    ("random_p2_u4", 0.01, 1.0, 1),
    ("random_p4_u9", 1.0, 1.0, 6),
]
MIP_CASE_IDS = [f"{c[0]}-mu{c[1]}-nu{c[2]}-P{c[3]}" for c in MIP_CASES]


@functools.lru_cache(maxsize=None)
def lp_instance(name: str) -> Instance:
    """Instances for RLP and the 1-norm SVM, up to l = 200 labeled points."""
    builders = {
        "blobs_l10_p2": lambda: gaussian_blobs(n=40, p=2, separation=1.5,
                                               n_labeled_per_class=5, seed=12),
        "blobs_l200_p5": lambda: gaussian_blobs(n=260, p=5, separation=1.0,
                                                n_labeled_per_class=100, seed=12),
        "random_l200_p8": lambda: random_linear_instance(13, 100, 50, 8, noise=3.0),
        "moons_l30": lambda: two_moons(n_per_class_labeled=15, n_unlabeled_per_class=20,
                                       noise=0.2, seed=14),
    }
    return builders[name]()


LP_INSTANCES = ["blobs_l10_p2", "blobs_l200_p5", "random_l200_p8", "moons_l30"]


# --------------------------------------------------------------------------------------------
# Independent LPs (dense, from the math) and the enumeration of labelings
# --------------------------------------------------------------------------------------------

def problem3_lp(A, d, B, s, mu, nu):
    """Solve  min e'y + mu e'z + nu e'q  s.t. D(Aw - eg) + y >= e, -z <= w <= z,
    s_j (B_j w - g) + q_j >= 1, y, z, q >= 0  with linprog (HiGHS).

    ``mu=None`` drops z and the 1-norm rows (RLP); B may have no rows.
    Returns (optimal value, w, g).
    """
    A = np.asarray(A, float)
    B = np.asarray(B, float).reshape(-1, A.shape[1])
    d = np.asarray(d, float)
    s = np.asarray(s, float)
    l, p = A.shape
    u = B.shape[0]
    nz = 0 if mu is None else p
    # column offsets of w, g, y, z, q
    iw, ig, iy, iz, iq = 0, p, p + 1, p + 1 + l, p + 1 + l + nz
    nvar = iq + u
    rows, rhs = [], []
    for i in range(l):                      # -(d_i A_i w - d_i g + y_i) <= -1
        r = np.zeros(nvar)
        r[iw:iw + p] = -d[i] * A[i]
        r[ig] = d[i]
        r[iy + i] = -1.0
        rows.append(r)
        rhs.append(-1.0)
    for k in range(nz):                     # w_k - z_k <= 0, -w_k - z_k <= 0
        for sign in (1.0, -1.0):
            r = np.zeros(nvar)
            r[iw + k] = sign
            r[iz + k] = -1.0
            rows.append(r)
            rhs.append(0.0)
    for j in range(u):                      # -(s_j B_j w - s_j g + q_j) <= -1
        r = np.zeros(nvar)
        r[iw:iw + p] = -s[j] * B[j]
        r[ig] = s[j]
        r[iq + j] = -1.0
        rows.append(r)
        rhs.append(-1.0)
    c = np.zeros(nvar)
    c[iy:iy + l] = 1.0
    if nz:
        c[iz:iz + nz] = mu
    c[iq:iq + u] = nu
    bounds = [(None, None)] * (p + 1) + [(0, None)] * (l + nz + u)
    res = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(res.fun), res.x[iw:iw + p].copy(), float(res.x[ig])


def all_labelings(u: int) -> np.ndarray:
    return np.array(list(itertools.product((-1, 1), repeat=u)), dtype=int)


@functools.lru_cache(maxsize=None)
def enumerate_labelings(name: str, mu: float, nu: float):
    """The per-labeling LP over all 2^u labelings: (labelings, values, w's, g's)."""
    inst = mip_instance(name)
    A, d, B = inst.XL, inst.yL, inst.XU
    S = all_labelings(inst.u)
    values, ws, gs = [], [], []
    for s in S:
        v, w, g = problem3_lp(A, d, B, s, mu, nu)
        values.append(v)
        ws.append(w)
        gs.append(g)
    return S, np.array(values), np.array(ws), np.array(gs)


def enumerated_optimum(name, mu, nu, positives=None) -> float:
    S, values, _, _ = enumerate_labelings(name, mu, nu)
    if positives is not None:
        values = values[(S == 1).sum(axis=1) == positives]
    return float(values.min())


def labeling_value(inst: Instance, labels, mu, nu) -> float:
    return problem3_lp(inst.XL, inst.yL, inst.XU, labels, mu, nu)[0]


# --------------------------------------------------------------------------------------------
# Solving through the package
# --------------------------------------------------------------------------------------------

def solve_with(instance, formulation, solver, **settings):
    """Solve through the formulation with the shipped profile of ``solver``."""
    return get_formulation(formulation).solve(instance, Settings(**settings),
                                              get_profile(solver=solver))


def assert_rel(actual, expected, rtol, what=""):
    """|actual - expected| <= rtol |expected| (plus 1e-9 absolute, for optima near zero)."""
    assert actual is not None, what
    assert abs(actual - expected) <= rtol * abs(expected) + 1e-9, \
        f"{what}: {actual!r} != {expected!r} (diff {actual - expected:.3g})"


def highs_objective_of_file(path: str) -> float:
    """Read a model file into HiGHS, solve it, return the optimal objective."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 1e-9)
    assert h.readModel(path) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(h.getInfo().objective_function_value)


def check_solved_result(result, u):
    """Result fields every optimal Problem 3 solve must have."""
    assert result.status == "optimal", result.message
    assert result.objective is not None and np.isfinite(result.objective)
    assert result.lower_bound is not None
    assert result.lower_bound <= result.objective + 1e-7 * max(1.0, abs(result.objective))
    assert result.gap is not None and result.gap <= 1e-6
    labels = np.asarray(result.labels)
    assert labels.shape == (u,)
    assert set(np.unique(labels)) <= {-1, 1}
    assert np.asarray(result.decision_values).shape == (u,)


# --------------------------------------------------------------------------------------------
# 1. bd-mip against the enumeration of labelings
# --------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_enumeration_makes_the_cases_nontrivial():
    """Guards the test data: labelings differ in value, and the balance constraint binds in
    several cases (else the balance tests would not test the balance)."""
    binding = unlabeled_loss_active = 0
    for name, mu, nu, P in MIP_CASES:
        inst = mip_instance(name)
        S, values, ws, gs = enumerate_labelings(name, mu, nu)
        assert values.max() > values.min() + 1e-3
        if enumerated_optimum(name, mu, nu, P) > enumerated_optimum(name, mu, nu) + 1e-6:
            binding += 1
        best = int(np.argmin(values))
        q = np.maximum(0.0, 1.0 - S[best] * (inst.XU @ ws[best] - gs[best]))
        if q.sum() > 1e-3:  # some unlabeled point inside the margin at the optimum
            unlabeled_loss_active += 1
    assert binding >= 4
    assert unlabeled_loss_active >= 4


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", MIP_SOLVERS)
@pytest.mark.parametrize("case", MIP_CASES, ids=MIP_CASE_IDS)
def test_bd_mip_equals_min_over_labelings(case, solver):
    name, mu, nu, _ = case
    inst = mip_instance(name)
    result = solve_with(inst, "bd-mip", solver, mu=mu, nu=nu)
    check_solved_result(result, inst.u)
    expected = enumerated_optimum(name, mu, nu)
    assert_rel(result.objective, expected, ENUM_RTOL, "MIP optimum vs enumeration")
    # the returned labels attain the optimum
    assert_rel(labeling_value(inst, result.labels, mu, nu), result.objective, ENUM_RTOL,
               "LP value at the returned labels")
    # and the labels are the binaries' side: r is zero where labeled +1 is not charged, etc.
    primal = result.primal
    margin = inst.XU @ primal["w"] + primal["b"]
    q = np.maximum(0.0, 1.0 - result.labels * margin)
    y = np.maximum(0.0, 1.0 - inst.yL * (inst.XL @ primal["w"] + primal["b"]))
    recomputed = y.sum() + mu * np.abs(primal["w"]).sum() + nu * q.sum()
    assert_rel(recomputed, result.objective, ENUM_RTOL, "objective from w, b and labels")


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", MIP_SOLVERS)
@pytest.mark.parametrize("case", MIP_CASES, ids=MIP_CASE_IDS)
def test_bd_mip_count_balance_equals_min_over_balanced_labelings(case, solver):
    name, mu, nu, P = case
    inst = mip_instance(name)
    result = solve_with(inst, "bd-mip", solver, mu=mu, nu=nu, balance="count", positives=P)
    check_solved_result(result, inst.u)
    assert int(np.sum(result.labels == 1)) == P
    expected = enumerated_optimum(name, mu, nu, positives=P)
    assert_rel(result.objective, expected, ENUM_RTOL, "balanced MIP optimum vs enumeration")
    assert_rel(labeling_value(inst, result.labels, mu, nu), result.objective, ENUM_RTOL,
               "LP value at the returned balanced labels")


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", MIP_SOLVERS)
def test_bd_mip_default_count_is_round_u_times_labeled_fraction(solver):
    # blobs_p2_u6: 3 labeled per class, so P = round(6 * 1/2) = 3, no rounding ambiguity
    name, mu, nu = "blobs_p2_u6", 0.1, 1.0
    inst = mip_instance(name)
    assert np.mean(inst.yL == 1) == 0.5 and inst.u == 6
    result = solve_with(inst, "bd-mip", solver, mu=mu, nu=nu, balance="count")
    assert result.status == "optimal"
    assert int(np.sum(result.labels == 1)) == 3
    assert_rel(result.objective, enumerated_optimum(name, mu, nu, positives=3), ENUM_RTOL)


# --------------------------------------------------------------------------------------------
# 2. big-M
# --------------------------------------------------------------------------------------------

@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", MIP_SOLVERS)
@pytest.mark.parametrize("case", MIP_CASES, ids=MIP_CASE_IDS)
def test_big_m_relaxed_side_slack_at_mip_optimum(case, solver):
    name, mu, nu, P = case
    inst = mip_instance(name)
    M = big_m(Problem3Data.from_instance(inst), mu, nu)
    assert M.shape == (inst.u,)
    for balance in ({}, {"balance": "count", "positives": P}):
        result = solve_with(inst, "bd-mip", solver, mu=mu, nu=nu, **balance)
        assert result.status == "optimal"
        margin = inst.XU @ result.primal["w"] + result.primal["b"]     # B w - g
        assert np.all(np.abs(margin) + 1.0 < M), (np.abs(margin) + 1.0, M)


@pytest.mark.slow
@pytest.mark.parametrize("case", MIP_CASES, ids=MIP_CASE_IDS)
def test_big_m_bounds_every_labelings_lp_optimum(case):
    """|B_j w - g| + 1 <= M_j at the LP optimum of every labeling (the bound of big_m's
    docstring holds at every point with objective <= l + nu u, so at every such optimum)."""
    name, mu, nu, _ = case
    inst = mip_instance(name)
    M = big_m(Problem3Data.from_instance(inst), mu, nu)
    S, values, ws, gs = enumerate_labelings(name, mu, nu)
    # the trivial point w = 0, g = 0 has value l + nu u: every optimum is at most that
    assert np.all(values <= inst.l + nu * inst.u + 1e-9)
    spread = np.abs(ws @ inst.XU.T - gs[:, None]) + 1.0     # (labelings, u)
    assert np.all(spread <= M[None, :]), float((spread - M).max())


@pytest.mark.parametrize("mu", [0.0])
def test_bd_mip_rejects_mu_zero(mu):
    inst = mip_instance("blobs_p2_u6")
    with pytest.raises(InputError):
        solve_with(inst, "bd-mip", "highs", mu=mu, nu=1.0)
    with pytest.raises(InputError):
        api.solve(inst, "bd-mip", solver="highs", mu=mu)


def test_bd_mip_export_rejects_mu_zero(tmp_path):
    inst = mip_instance("blobs_p2_u6")
    path = tmp_path / "m.mps"
    with pytest.raises(InputError):
        api.export(inst, "bd-mip", str(path), "mps", mu=0.0)
    assert not path.exists()


# --------------------------------------------------------------------------------------------
# 3. RLP and the 1-norm SVM against linprog
# --------------------------------------------------------------------------------------------

def check_supervised_lp_result(result, inst, mu):
    """w, b of Result.primal reproduce the objective; decision values are XU w + b."""
    w, b = np.asarray(result.primal["w"]), float(result.primal["b"])
    assert w.shape == (inst.p,)
    y = np.maximum(0.0, 1.0 - inst.yL * (inst.XL @ w + b))
    recomputed = y.sum() + (0.0 if mu is None else mu * np.abs(w).sum())
    assert_rel(recomputed, result.objective, LP_RTOL, "objective from primal w, b")
    np.testing.assert_allclose(result.decision_values, inst.XU @ w + b, rtol=1e-12, atol=1e-12)
    dv = np.asarray(result.decision_values)
    assert np.array_equal(np.asarray(result.labels), np.where(dv >= 0, 1, -1))


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", LP_SOLVERS)
@pytest.mark.parametrize("name", LP_INSTANCES)
def test_rlp_matches_linprog(name, solver):
    inst = lp_instance(name)
    expected, _, _ = problem3_lp(inst.XL, inst.yL, np.zeros((0, inst.p)), [], None, 0.0)
    assert expected > 1.0  # the labeled classes overlap: not a zero-objective instance
    result = solve_with(inst, "rlp", solver)
    assert result.status == "optimal"
    assert_rel(result.objective, expected, LP_RTOL, "RLP optimum vs linprog")
    check_supervised_lp_result(result, inst, None)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", LP_SOLVERS)
@pytest.mark.parametrize("mu", [0.05, 1.0])
@pytest.mark.parametrize("name", LP_INSTANCES)
def test_svm1_matches_linprog(name, mu, solver):
    inst = lp_instance(name)
    expected, _, _ = problem3_lp(inst.XL, inst.yL, np.zeros((0, inst.p)), [], mu, 0.0)
    result = solve_with(inst, "svm1", solver, mu=mu)
    assert result.status == "optimal"
    assert_rel(result.objective, expected, LP_RTOL, "1-norm SVM optimum vs linprog")
    check_supervised_lp_result(result, inst, mu)


# --------------------------------------------------------------------------------------------
# 4. Export round trips
# --------------------------------------------------------------------------------------------

EXPORT_CASES = [
    ("rlp", "blobs_l200_p5", {}),
    ("svm1", "moons_l30", {"mu": 0.3}),
    ("bd-mip", "random_p3_u7", {"mu": 0.3, "nu": 1.5}),
    ("bd-mip", "random_p3_u7", {"mu": 0.3, "nu": 1.5, "balance": "count", "positives": 2}),
]
EXPORT_IDS = ["rlp", "svm1", "bd-mip", "bd-mip-count"]


def export_instance(name):
    return lp_instance(name) if name in LP_INSTANCES else mip_instance(name)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["mps", "lp"])
@pytest.mark.parametrize("case", EXPORT_CASES, ids=EXPORT_IDS)
def test_export_round_trip_through_highspy(case, fmt, tmp_path):
    formulation, name, settings = case
    inst = export_instance(name)
    solved = solve_with(inst, formulation, "highs", **settings)
    assert solved.status == "optimal"
    path = str(tmp_path / f"model.{fmt}")
    assert api.export(inst, formulation, path, fmt, Settings(**settings)) == fmt
    assert os.path.isfile(path)
    assert_rel(highs_objective_of_file(path), solved.objective, LP_RTOL,
               f"{formulation} read back from {fmt}")
    # nothing but the model file is left behind (the temporary file was renamed)
    assert sorted(os.listdir(tmp_path)) == [f"model.{fmt}"]


@pytest.mark.solver
@pytest.mark.slow
def test_export_of_bd_mip_matches_enumeration(tmp_path):
    """The exported MIP, solved by HiGHS from the file, has the enumerated optimum."""
    name, mu, nu, P = "blobs_p3_u8", 0.05, 2.0, 2
    inst = mip_instance(name)
    plain, balanced = tmp_path / "plain.mps", tmp_path / "balanced.lp"
    api.export(inst, "bd-mip", str(plain), "mps", mu=mu, nu=nu)
    api.export(inst, "bd-mip", str(balanced), "lp", mu=mu, nu=nu, balance="count",
               positives=P)
    assert_rel(highs_objective_of_file(str(plain)), enumerated_optimum(name, mu, nu), ENUM_RTOL)
    assert_rel(highs_objective_of_file(str(balanced)), enumerated_optimum(name, mu, nu, P),
               ENUM_RTOL)


@pytest.mark.parametrize("formulation", ["rlp", "svm1", "bd-mip"])
def test_export_into_missing_directory_is_input_error(formulation, tmp_path):
    # Regression: PyomoFormulation._write calls tempfile.mkstemp in the target directory, which
    # raised FileNotFoundError (the CLI printed "internal error" instead of exiting with 2).
    inst = mip_instance("blobs_p2_u6")
    missing = tmp_path / "no" / "such" / "dir"
    with pytest.raises(InputError):
        api.export(inst, formulation, str(missing / "model.mps"), "mps")
    assert not (tmp_path / "no").exists()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("fmt", ["nl", "sdpa", "gms", "MPS"])
def test_export_unsupported_format_is_input_error(fmt, tmp_path):
    inst = mip_instance("blobs_p2_u6")
    path = tmp_path / f"model.{fmt}"
    with pytest.raises(InputError):
        api.export(inst, "bd-mip", str(path), fmt)
    assert os.listdir(tmp_path) == []


def test_export_format_from_extension(tmp_path):
    inst = mip_instance("blobs_p2_u6")
    assert api.export(inst, "svm1", str(tmp_path / "m.lp")) == "lp"
    assert api.export(inst, "svm1", str(tmp_path / "m.mps")) == "mps"
    with pytest.raises(InputError):
        api.export(inst, "svm1", str(tmp_path / "m.txt"))
    assert sorted(os.listdir(tmp_path)) == ["m.lp", "m.mps"]


def test_lp_export_logs_no_format_warning(tmp_path, caplog):
    # Regression: passing format="lp" while Pyomo guesses ProblemFormat.cpxlp from the ".lp"
    # suffix of the temporary file made every LP export log "Filename '/.../tmpXXXX.lp' likely
    # does not match specified file format (lp)", naming a file the user never sees.
    inst = mip_instance("blobs_p2_u6")
    with caplog.at_level(logging.WARNING):
        api.export(inst, "rlp", str(tmp_path / "m.lp"), "lp")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


# --------------------------------------------------------------------------------------------
# 6. Result fields and file order
# --------------------------------------------------------------------------------------------

def separated_shuffled_instance(seed=21, u=8):
    """Two far apart clusters in R^3, two labeled points per class, rows shuffled so that
    labeled and unlabeled rows of both classes interleave. The correct labels are the truth."""
    rng = np.random.default_rng(seed)
    n_pos, n_neg = 2 + u // 2, 2 + (u - u // 2)
    X = np.vstack([rng.normal([6.0, 6.0, 0.0], 0.5, (n_pos, 3)),
                   rng.normal([-6.0, -6.0, 0.0], 0.5, (n_neg, 3))])
    truth = np.array([1] * n_pos + [-1] * n_neg)
    label = np.zeros_like(truth)
    label[[0, 1, n_pos, n_pos + 1]] = truth[[0, 1, n_pos, n_pos + 1]]
    perm = rng.permutation(len(truth))
    return Instance(X[perm], label[perm], truth[perm], name="separated")


@pytest.mark.slow
def test_separated_instance_truth_is_the_unique_enumerated_optimum():
    """Guards the file-order test: its truth labeling is the unique best labeling."""
    inst = separated_shuffled_instance()
    mu, nu = 0.1, 1.0
    S = all_labelings(inst.u)
    values = np.array([labeling_value(inst, s, mu, nu) for s in S])
    best = S[np.argmin(values)]
    assert np.array_equal(best, inst.truth_U)
    assert np.sort(values)[1] > values.min() + 1e-3
    # the unlabeled rows really interleave the classes in file order
    assert len(set(inst.truth_U[:4])) == 2 or len(set(inst.truth_U[-4:])) == 2


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", MIP_SOLVERS)
def test_bd_mip_result_labels_in_file_order(solver, tmp_path):
    inst = separated_shuffled_instance()
    csv = tmp_path / "separated.csv"
    inst.to_csv(str(csv))
    for balance in ({}, {"balance": "count", "positives": int(np.sum(inst.truth_U == 1))}):
        result = api.solve(str(csv), "bd-mip", solver=solver, mu=0.1, nu=1.0, **balance)
        check_solved_result(result, inst.u)
        assert result.solver == solver and result.formulation == "bd-mip"
        assert np.array_equal(result.labels, inst.truth_U)
        assert np.array_equal(np.sign(result.decision_values), inst.truth_U)
        assert_rel(result.objective, labeling_value(inst, inst.truth_U, 0.1, 1.0), ENUM_RTOL)


def separated_line_instance(seed=22, u=8):
    """Two clusters on a line, [3, 6] (+1) and [-6, -3] (-1); the labeled points are the two
    innermost of each class, so EVERY zero-loss separator of them (RLP's optimum set, not only
    the 1-norm SVM's) classifies all points correctly. Rows shuffled."""
    rng = np.random.default_rng(seed)
    half = 2 + u // 2
    pos = np.sort(rng.uniform(3.0, 6.0, half))
    neg = -np.sort(rng.uniform(3.0, 6.0, half))
    X = np.concatenate([pos, neg])[:, None]
    truth = np.array([1] * half + [-1] * half)
    label = np.zeros_like(truth)
    label[[0, 1, half, half + 1]] = truth[[0, 1, half, half + 1]]  # the innermost ones
    perm = rng.permutation(len(truth))
    return Instance(X[perm], label[perm], truth[perm], name="separated_line")


@pytest.mark.solver
@pytest.mark.parametrize("solver", LP_SOLVERS)
@pytest.mark.parametrize("formulation", ["rlp", "svm1"])
def test_supervised_lp_labels_in_file_order(formulation, solver, tmp_path):
    inst = separated_line_instance()
    assert len(set(inst.truth_U[:3])) == 2  # classes interleave among the unlabeled rows
    csv = tmp_path / "separated_line.csv"
    inst.to_csv(str(csv))
    result = api.solve(str(csv), formulation, solver=solver)
    assert result.status == "optimal"
    assert np.asarray(result.labels).shape == (inst.u,)
    assert np.array_equal(result.labels, inst.truth_U)
    np.testing.assert_allclose(result.decision_values,
                               inst.XU @ result.primal["w"] + result.primal["b"], rtol=1e-12)


SOLVER_PER_FORMULATION = [(f, s) for f in ("rlp", "svm1", "bd-mip")
                          for s in installed_solvers(get_formulation(f).problem_class)]


@pytest.mark.solver
@pytest.mark.parametrize("formulation, solver", SOLVER_PER_FORMULATION)
def test_result_serialises_to_json(formulation, solver):
    # Regression: ScipBackend.counts read extra_info.get("NNodes"), which on Pyomo's ConfigDict
    # returns the ConfigValue object, not the count; Result.to_dict then called int() on it
    # (TypeError), so `s3vm solve ... --solver scip --json` ended in "internal error".
    inst = mip_instance("random_p3_u7")
    result = solve_with(inst, formulation, solver, mu=0.3, nu=1.5)
    assert result.nodes is None or isinstance(result.nodes, int)
    assert result.iterations is None or isinstance(result.iterations, int)
    out = json.loads(result.to_json())
    assert out["status"] == "optimal" and out["solver"] == solver
    assert out["objective"] == pytest.approx(result.objective, rel=1e-12)
    assert out["labels"] == [int(v) for v in result.labels]
    assert len(out["decision_values"]) == inst.u


# -- a numerically singular kernel: the objective is the returned point's ---------------------
def _value_of(result, instance, sigma, mu, nu=1.0):
    """Problem 3's objective at the result's own point (w, g) and labels, from an rbf kernel
    written here: exp(-|x - z|^2 / (2 sigma^2)) over every point of the instance."""
    X = instance.X
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / (2.0 * sigma * sigma))
    w, g = result.primal["w"], -result.primal["b"]
    fL = K[instance.labeled] @ w - g
    fU = K[instance.unlabeled] @ w - g
    return (np.maximum(0.0, 1.0 - instance.yL * fL).sum() + mu * np.abs(w).sum()
            + nu * np.maximum(0.0, 1.0 - result.labels * fU).sum()), fU


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("sigma, mu, singular", [(2e4, 1e-9, True), (1.0, 0.1, False)])
def test_bd_mip_on_a_singular_kernel_reports_its_point_s_objective_and_says_so(sigma, mu,
                                                                               singular):
    """At sigma 2e4 every rbf value of blobs_small lies within 1e-6 of 1 (the kernel matrix is
    numerically of rank one) and mu = 1e-9 lets w grow to 1e8: the labeling's LP did not
    solve, and the result said 0.078, the MIP's value on its relaxed rows, while its own point
    has 9.97. The objective must be its point's; the result says the kernel is singular."""
    instance, _ = api.load("blobs_small")
    result = api.solve(instance, "bd-mip", kernel="rbf", sigma=sigma, mu=mu, nu=1.0,
                       time_limit=60)
    value, fU = _value_of(result, instance, sigma, mu)
    assert result.objective == pytest.approx(value, rel=1e-6, abs=1e-6)
    assert np.allclose(result.decision_values, fU, rtol=1e-9, atol=1e-9 * np.abs(fU).max())
    assert bool(result.info.get("singular_kernel")) == singular
    if singular:
        assert result.status != "optimal" and "singular" in result.message
    else:
        assert result.status == "optimal"
