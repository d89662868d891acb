"""The SDP family of Problem 2: ``sdp`` (relaxation), ``sdp-subspace`` (approximation) and
``sdp-lowrank`` (its low-rank dual), and the constrained spectral subspace they share."""

from __future__ import annotations

import itertools
import json
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import subspace_angles

from s3vm import api, cli
from s3vm.core.kernels import kernel_matrix
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs, two_moons
from s3vm.data.instance import Instance
from s3vm.formulations.sdp_lowrank import LowRankSDP
from s3vm.formulations.sdp_subspace import SubspaceSDP, subspace_basis
from s3vm.models.kernel_factor import kernel_factor
from s3vm.models.lowrank_dual import lowrank_operators
from s3vm.models.spectral import (
    constrained_spectral,
    knn_affinity,
    label_constraint_matrix,
    nearest_neighbour_sigma,
    rbf_affinity,
    spectral_subspace,
)
from s3vm.models.svm_dual import svm_dual_value
from s3vm.solvers.errors import InputError
from s3vm.solvers.registry import installed_solvers

# The conic solvers (psd-barrier takes only the subspace family: tests/test_subspace_solver.py).
SDP_SOLVERS = [name for name in installed_solvers("sdp") if name != "psd-barrier"]
ACCURATE = {"clarabel": 1e-6, "mosek": 1e-6}   # relative tolerance per solver; others 2e-3
SIGMA = 1.5

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


def interleaved(inst: Instance, seed: int = 0) -> Instance:
    """The instance with its rows shuffled, so labeled and unlabeled rows interleave."""
    perm = np.random.default_rng(seed).permutation(inst.n)
    return Instance(inst.X[perm], inst.label[perm], inst.truth[perm])


@pytest.fixture(scope="module")
def small():
    """n = 13, 3 labeled points per class, u = 7 (128 labelings), rows interleaved."""
    inst = interleaved(gaussian_blobs(n=13, p=2, separation=2.0, n_labeled_per_class=3, seed=5))
    assert inst.u == 7 and not np.all(inst.label[:6] != 0)
    return inst


@pytest.fixture(scope="module")
def enumerated(small):
    """D(y) of every labeling of the unlabeled points (rbf), soft and hard margin."""
    K = kernel_matrix(small.X, None, "rbf", SIGMA)
    out = {}
    for hard in (False, True):
        C = None if hard else np.ones(small.n)
        rows = []
        for labels in itertools.product((-1, 1), repeat=small.u):
            y = small.label.astype(float)
            y[small.unlabeled] = labels
            rows.append((np.array(labels), svm_dual_value(K, y, C)[0]))
        out[hard] = rows
    return out


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(b))


# -- sdp: the bound interval of De Bie and Cristianini (2006), section 7.1.4 ---------------
@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("solver", SDP_SOLVERS)
@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
@pytest.mark.parametrize("balance", ["none", "count"])
def test_sdp_bound_interval_contains_the_enumerated_optimum(small, enumerated, solver, hard,
                                                            balance):
    settings = dict(kernel="rbf", sigma=SIGMA, balance=balance)
    settings.update(hard_margin=True) if hard else settings.update(C=1.0)
    res = api.solve(small, "sdp", solver=solver, **settings)
    assert res.status in ("optimal", "feasible") and res.lower_bound is not None
    rows = enumerated[hard]
    if balance == "count":
        P = Settings(balance="count").positive_count(small)
        rows = [(y, v) for y, v in rows if np.sum(y == 1) == P]
        assert np.sum(res.labels == 1) == P
    best = min(v for _, v in rows)
    tol = ACCURATE.get(solver, 2e-3) * max(1.0, abs(best))
    assert res.lower_bound <= best + tol
    assert best <= res.objective + 1e-7
    # The objective is D at the rounded labels: one of the enumerated values.
    match = [v for y, v in rows if np.array_equal(y, res.labels)]
    assert match and rel(res.objective, match[0]) < 1e-6


@pytest.mark.solver
def test_sdp_interval_closes_on_separated_clusters():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.5, (5, 2)), rng.normal(0, 0.5, (5, 2)) + [6.0, 0.0]])
    truth = np.repeat([1, -1], 5)
    label = np.zeros(10, dtype=int)
    label[[2, 7]] = truth[[2, 7]]
    inst = interleaved(Instance(X, label, truth), seed=1)
    res = api.solve(inst, "sdp", solver="clarabel", kernel="rbf", sigma=1.0, hard_margin=True)
    assert res.status == "optimal" and res.gap <= 1e-6
    np.testing.assert_array_equal(res.labels, inst.truth_U)


@pytest.mark.solver
def test_sdp_eigenvector_rounding(small):
    res = api.solve(small, "sdp", solver="clarabel", options={"rounding": "eigenvector"},
                    kernel="rbf", sigma=SIGMA)
    assert res.labels.shape == (small.u,) and res.lower_bound is not None


# -- sdp-subspace ------------------------------------------------------------------------
@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("settings", [
    dict(C=1.0), dict(hard_margin=True), dict(C=1.0, balance="count"),
], ids=["soft", "hard", "count"])
def test_subspace_with_full_dimension_is_the_sdp(small, settings):
    """d = u + 1 spans every vector constant on each labeled class: the same optimum as sdp."""
    common = dict(kernel="rbf", sigma=SIGMA, **settings)
    full = api.solve(small, "sdp", solver="clarabel", **common)
    sub = api.solve(small, "sdp-subspace", solver="clarabel", options={"dim": small.u + 1},
                    **common)
    # (7.6)'s 3 columns reach the count balance on this instance; the default rule's do not
    low = api.solve(small, "sdp-subspace", solver="clarabel",
                    options={"dim": 3, "spectral_rule": "book"}, **common)
    assert sub.lower_bound is None and sub.status == "feasible"
    value = full.lower_bound
    assert rel(sub.info["relaxation_value"], value) < 1e-5
    # A subspace only restricts the relaxation: never below it.
    assert low.info["relaxation_value"] >= value * (1 - 1e-6)


@pytest.mark.solver
def test_subspace_labels_read_the_column_of_a_positive_point(small):
    form = SubspaceSDP(dim=3)
    settings = Settings(kernel="rbf", sigma=SIGMA)
    built = form.build_cvxpy(small, settings)
    built.model.solve(solver="CLARABEL")
    Gamma = built.read["gamma_full"]()
    pos, neg = np.flatnonzero(small.label == 1), np.flatnonzero(small.label == -1)
    unl = small.unlabeled
    # The constant-column rule: every positive column agrees, every negative one is opposite.
    for i in pos:
        np.testing.assert_allclose(Gamma[unl, i], built.read["gamma_u"](), atol=1e-9)
    for i in neg:
        np.testing.assert_allclose(Gamma[unl, i], -built.read["gamma_u"](), atol=1e-9)
    assert np.all(np.diag(Gamma) <= 1 + 1e-6)


@pytest.mark.solver
@pytest.mark.parametrize("solver", ["clarabel", "psd-barrier"])
@pytest.mark.parametrize("name", ["sdp-subspace", "sdp-lowrank"])
def test_balance_out_of_reach_of_a_small_subspace_is_not_called_infeasible(small, name, solver):
    """sum_U Gamma[j, i+] = 2P - u may be out of reach of V M V' when d is small; labelings
    with P positives exist all the same, so the status is not ``infeasible``: the labels of
    the rounded spectral scores, the count met, and a message that the subspace failed."""
    common = dict(kernel="rbf", sigma=SIGMA, C=1.0, balance="count")
    P = Settings(**common).positive_count(small)
    res = api.solve(small, name, solver=solver, options={"dim": 1}, **common)
    assert res.status == "feasible" and res.lower_bound is None
    assert int(np.sum(res.labels == 1)) == P
    assert "subspace" in res.message and "dim=" in res.message
    y = small.label.astype(float)
    y[small.unlabeled] = res.labels
    K = kernel_matrix(small.X, None, "rbf", SIGMA)
    assert rel(res.objective, svm_dual_value(K, y, np.ones(small.n))[0]) < 1e-6


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("dim", [1, 2, 4, 8])
@pytest.mark.parametrize("name", ["sdp-subspace", "sdp-lowrank"])
def test_a_count_that_fixes_every_label_is_solved_at_every_dim(small, enumerated, name, dim):
    """P = 0 and P = u leave one labeling: the optimum, whatever the subspace (it was called
    infeasible at every --dim, while sdp solved it)."""
    common = dict(kernel="rbf", sigma=SIGMA, C=1.0, balance="count")
    for P, side in ((0, -1), (small.u, 1)):
        res = api.solve(small, name, options={"dim": dim}, positives=P, **common)
        assert res.status == "optimal", res.message
        assert np.all(res.labels == side)
        expected = next(v for labels, v in enumerated[False] if np.all(labels == side))
        assert rel(res.objective, expected) < 1e-6 and res.lower_bound == res.objective
        # the full relaxation agrees: its interval closes on the same value
        full = api.solve(small, "sdp", solver="clarabel", positives=P, **common)
        assert rel(full.objective, expected) < 1e-5


# -- sdp-lowrank -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wide():
    """Linear kernel with p >= n, so K is full rank and the LMI of De Bie and Cristianini
    (2006), (7.4)-(7.5), has an interior."""
    return interleaved(gaussian_blobs(n=14, p=16, separation=3.0, n_labeled_per_class=3, seed=2))


@pytest.mark.solver
@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("case", ["linear", "rbf", "rbf-count", "linear-hard"])
def test_lowrank_dual_equals_subspace(small, wide, case):
    inst = wide if case.startswith("linear") else small
    settings = dict(kernel="linear") if case.startswith("linear") else dict(kernel="rbf",
                                                                            sigma=SIGMA)
    settings.update(hard_margin=True) if case.endswith("hard") else settings.update(C=1.0)
    if case.endswith("count"):
        settings["balance"] = "count"
    options = {"dim": 3}
    if case.endswith("count"):   # the count is reachable in (7.6)'s subspace, not the default's
        options["spectral_rule"] = "book"
    sub = api.solve(inst, "sdp-subspace", solver="clarabel", options=options, **settings)
    low = api.solve(inst, "sdp-lowrank", solver="clarabel", options=dict(options, rank=inst.n),
                    **settings)
    assert low.lower_bound is None and low.status == "feasible"
    assert rel(low.info["relaxation_value"], sub.info["relaxation_value"]) < 1e-5
    np.testing.assert_array_equal(low.labels, sub.labels)
    assert rel(low.objective, sub.objective) < 1e-6


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_lowrank_M_is_the_dual_of_the_lmi(small, wide, kernel):
    """M from the LMI's dual attains the optimum of the inner SVM: f(M) = value."""
    inst = wide if kernel == "linear" else small
    settings = Settings(kernel=kernel, sigma=SIGMA, C=1.0)
    built = LowRankSDP(dim=3, rank=inst.n).build_cvxpy(inst, settings)
    built.model.solve(solver="CLARABEL")
    value = -built.model.value
    M, V = built.read["M"](), built.read["V"]()
    assert np.all(np.linalg.eigvalsh(M) >= -1e-7)
    assert np.all(np.einsum("ij,jk,ik->i", V, M, V) <= 1 + 1e-6)
    K = kernel_matrix(inst.X, None, kernel, SIGMA)
    f_of_M, _ = svm_dual_value(K * (V @ M @ V.T), np.ones(inst.n), np.ones(inst.n))
    assert rel(f_of_M, value) < 1e-5


def test_lowrank_operators_give_W_and_the_top_block():
    rng = np.random.default_rng(3)
    G, V, a = rng.normal(size=(9, 4)), rng.normal(size=(9, 2)), rng.uniform(size=9)
    BW, BV = lowrank_operators(G, V)
    np.testing.assert_allclose(BW @ a, (G.T @ np.diag(a) @ V).ravel(order="F"), atol=1e-12)
    np.testing.assert_allclose(BV @ a, (V.T @ np.diag(a) @ V).ravel(order="F"), atol=1e-12)


def test_nystroem_factor_with_all_landmarks_is_exact(small):
    G, exact = kernel_factor(small, Settings(kernel="rbf", sigma=SIGMA), rank=small.n)
    assert exact
    np.testing.assert_allclose(G @ G.T, kernel_matrix(small.X, None, "rbf", SIGMA), atol=1e-8)
    G, exact = kernel_factor(small, Settings(kernel="rbf", sigma=SIGMA), rank=5, seed=1)
    assert not exact and G.shape == (small.n, 5)


@pytest.mark.solver
@pytest.mark.slow
def test_working_set_reaches_the_full_optimum():
    inst = gaussian_blobs(n=300, p=5, separation=2.5, n_labeled_per_class=4, seed=1)
    settings = dict(kernel="linear", C=1.0)
    full = api.solve(inst, "sdp-lowrank", solver="clarabel", options={"working_set": 0},
                     **settings)
    part = api.solve(inst, "sdp-lowrank", solver="clarabel", options={"working_set": 40},
                     **settings)
    assert "working_set_rounds" not in full.info and part.info["working_set_rounds"] >= 2
    assert part.info["working_set_size"] < inst.n
    assert rel(part.info["relaxation_value"], full.info["relaxation_value"]) < 1e-4
    assert np.mean(part.labels == full.labels) >= 0.99


@pytest.mark.solver
@pytest.mark.slow
def test_lowrank_builds_at_scale_without_an_n_by_n_matrix():
    """n = 20,000, 50 features, d = 4: no dense n x n matrix (3.2 GB) is ever allocated."""
    inst = gaussian_blobs(n=20000, p=50, separation=3.0, n_labeled_per_class=10, seed=0)
    tracemalloc.start()
    try:
        built = LowRankSDP(dim=4).build_cvxpy(inst, Settings(kernel="linear", C=1.0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1e9
    assert built.info["lmi_sizes"] == [4 + 50] and built.read["V"]().shape == (20000, 4)


# -- the spectral subspace ---------------------------------------------------------------
@pytest.fixture(scope="module")
def moons():
    return interleaved(two_moons(2, 30, 0.1, seed=1))


def test_label_constraint_matrix_in_row_order(moons):
    L = label_constraint_matrix(moons.label).toarray()
    lab, unl = moons.labeled, moons.unlabeled
    assert L.shape == (moons.n, moons.u + 2)
    np.testing.assert_array_equal(L[:, 0], 1)
    np.testing.assert_array_equal(L[:, 1], moons.label)
    np.testing.assert_array_equal(L[np.ix_(unl, np.arange(2, moons.u + 2))], np.eye(moons.u))
    assert not L[lab, 2:].any()
    with pytest.raises(InputError, match="each class"):
        label_constraint_matrix(np.where(moons.label == -1, 0, moons.label))


def test_spectral_columns_follow_the_constant_column_rule(moons):
    A = rbf_affinity(moons.X, nearest_neighbour_sigma(moons.X))
    res = constrained_spectral(A, moons.label, 3, "dense")
    L = res.L.toarray()
    # V = L z with the constant column's coefficient 0 ...
    z, *_ = np.linalg.lstsq(L, res.V, rcond=None)
    np.testing.assert_allclose(L @ z, res.V, atol=1e-9)
    np.testing.assert_allclose(z[0], 0, atol=1e-9)
    np.testing.assert_allclose(L @ res.Z, res.V, atol=1e-9)
    # ... so labeled positives share a value and labeled negatives have its opposite.
    pos, neg = moons.label == 1, moons.label == -1
    np.testing.assert_allclose(res.V[pos], np.broadcast_to(res.V[pos][0], res.V[pos].shape))
    np.testing.assert_allclose(res.V[neg], -np.broadcast_to(res.V[pos][0], res.V[neg].shape))
    assert np.linalg.matrix_rank(res.V) == 3 and np.all(res.V[pos][0] >= 0)
    # Before the rule the columns solve (7.6): L'(D - A)L z = lambda L'D L z, with the trivial
    # constant solution left out (its eigenvalue is 0).
    D = np.diag(A.sum(axis=1))
    for lam, zi in zip(res.values, res.eigenvectors.T):
        np.testing.assert_allclose(L.T @ (D - A - lam * D) @ L @ zi, 0, atol=1e-9)
        assert abs(np.ones(moons.n) @ D @ L @ zi) < 1e-9
    assert np.all(np.diff(res.values) >= 0) and res.values[0] > -1e-12


def test_dense_and_sparse_paths_agree(moons):
    sigma = nearest_neighbour_sigma(moons.X)
    A_sparse, used = knn_affinity(moons.X, sigma, neighbors=moons.n - 1)
    assert sp.issparse(A_sparse) and used == sigma
    A_dense = rbf_affinity(moons.X, sigma)
    np.testing.assert_allclose(A_sparse.toarray(), A_dense, atol=1e-12)
    dense = constrained_spectral(A_dense, moons.label, 3, "dense")
    sparse = constrained_spectral(A_sparse, moons.label, 3, "sparse")
    np.testing.assert_allclose(sparse.values, dense.values, rtol=1e-6, atol=1e-10)
    assert np.max(subspace_angles(dense.V, sparse.V)) < 1e-6
    # auto takes the sparse path (a k-nearest-neighbour graph) above dense_max_n.
    V = spectral_subspace(moons.X, moons.label, 2, method="auto", dense_max_n=10, neighbors=8)
    assert V.shape == (moons.n, 2)
    A8, _ = knn_affinity(moons.X, None, neighbors=8)
    assert A8.nnz <= moons.n * (2 * 8 + 1)


def test_sparse_path_on_a_disconnected_graph():
    """Two far clusters and a 3-NN graph: the eigenvalue 0 is double; the non-constant null
    vector (the cluster indicator) is kept, the constant one is left out."""
    inst = interleaved(gaussian_blobs(n=80, p=2, separation=40.0, n_labeled_per_class=2, seed=3))
    A, _ = knn_affinity(inst.X, None, neighbors=3)
    res = constrained_spectral(A, inst.label, 2, "sparse")
    assert abs(res.values[0]) < 1e-9
    np.testing.assert_array_equal(np.sign(res.V[:, 0]), inst.truth)


# -- bad input ---------------------------------------------------------------------------
def test_bad_options_are_input_errors(small):
    with pytest.raises(InputError, match="dim= must be >= 1"):
        SubspaceSDP(dim=0)
    with pytest.raises(InputError, match="d larger than u"):
        api.solve(small, "sdp-subspace", options={"dim": small.u + 2}, kernel="rbf")
    with pytest.raises(InputError, match="d larger than u"):
        subspace_basis(small, small.u + 2)
    with pytest.raises(InputError, match="rank larger than n"):
        api.solve(small, "sdp-lowrank", options={"rank": small.n + 1}, kernel="rbf")
    with pytest.raises(InputError, match="rank= must be"):
        LowRankSDP(rank=0)
    with pytest.raises(InputError, match="does not apply"):
        api.solve(small, "sdp", options={"dim": 2})


@pytest.fixture(scope="module")
def small_csv(small, tmp_path_factory):
    path = tmp_path_factory.mktemp("sdp") / "small.csv"
    small.to_csv(str(path))
    return str(path)


@pytest.mark.parametrize("argv", [
    ["-f", "sdp-subspace", "--dim", "0"],
    ["-f", "sdp-subspace", "--dim", "9"],
    ["-f", "sdp-lowrank", "--dim", "0"],
    ["-f", "sdp-lowrank", "--rank", "14"],
    ["-f", "sdp-lowrank", "--rank", "x"],
    ["-f", "sdp", "--rank", "3"],
    ["-f", "sdp", "--rounding", "nearest"],
])
def test_cli_bad_input_exits_2_with_one_line(capsys, small_csv, argv):
    status = cli.main(["solve", small_csv, *argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("s3vm: error:")


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ["-f", "sdp-lowrank", "--dim", "2", "--kernel", "rbf", "--rank", "13", "--seed", "1"],
    ["-f", "sdp-subspace", "--dim", "2", "--rounding", "eigenvector"],
    ["-f", "sdp", "--rounding", "eigenvector", "--kernel", "rbf"],
])
def test_cli_solves_the_family(capsys, small_csv, argv):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = cli.main(["solve", small_csv, *argv, "--solver", "clarabel", "--json"])
    out, _ = capsys.readouterr()
    assert status == 0
    result = json.loads(out)
    assert len(result["labels"]) == 7 and len(result["decision_values"]) == 7
    if argv[1] == "sdp":
        assert result["lower_bound"] is not None
    else:
        assert result["lower_bound"] is None and result["status"] == "feasible"


@pytest.mark.solver
@pytest.mark.slow
def test_scs_stopped_by_its_time_limit_reports_time_limit():
    # u = 80 takes SCS seconds; a 0.2 s limit stops it with an inaccurate iterate, which must
    # not pass for a converged solve.
    from s3vm.data.generators import two_moons

    inst = two_moons(n_per_class_labeled=2, n_unlabeled_per_class=40, noise=0.1, seed=3)
    result = api.solve(inst, "sdp", kernel="rbf", sigma=0.5, hard_margin=True, solver="scs",
                       time_limit=0.2)
    assert result.status == "time_limit"
    # Any bound reported is a certified one (the value of a feasible dual point), so it lies
    # below the relaxation's optimum however early the solver was stopped.
    reference = api.solve(inst, "sdp", kernel="rbf", sigma=0.5, hard_margin=True,
                          solver="sdpa" if "sdpa" in installed_solvers("sdp") else "scs")
    assert reference.status in ("optimal", "feasible")
    optimum = reference.info["relaxation_value"]
    assert result.lower_bound is None or result.lower_bound <= optimum * (1 + 1e-7)


@pytest.mark.solver
@pytest.mark.slow
def test_sdp_subspace_scores_its_labels_where_the_projected_newton_fails():
    # sdp_art100 (rbf, sigma 1, 2 features): the projected Newton's SVM dual returned NaN and
    # the solve ended with status error and no labels; the conic dual scores the same labels.
    import cvxpy as cp

    from s3vm.core.settings import load_instance

    result = api.solve("sdp_art100", "sdp-subspace")
    assert result.status in ("optimal", "feasible"), result.message
    assert result.labels is not None
    instance, settings = load_instance("sdp_art100")
    y = instance.label.astype(float)
    y[instance.unlabeled] = result.labels
    # D(y) of Problem 2 (no bias) with C = C* = 1, by SCS: a second solver.
    K = kernel_matrix(instance.X, None, "rbf", settings.sigma)
    a = cp.Variable(instance.n, nonneg=True)
    Q = psd_sqrt(K) * y[:, None]
    value = cp.Problem(cp.Maximize(2 * cp.sum(a) - cp.sum_squares(Q.T @ a)), [a <= 1.0]).solve(
        solver="SCS", eps=1e-7)
    assert result.objective == pytest.approx(value, rel=1e-3)


def psd_sqrt(K: np.ndarray) -> np.ndarray:
    """A square root S of the PSD matrix K (S S' = K)."""
    w, V = np.linalg.eigh(K)
    return V * np.sqrt(np.maximum(w, 0.0))


@pytest.mark.solver
@pytest.mark.slow
def test_sdp_subspace_answers_on_every_shipped_instance():
    # Its default settings on shipped data: a labeling (or the time limit's fallback), or a
    # subspace that cannot meet the balance said as such; never status error without labels.
    from s3vm.instances import shipped_instances

    for name in shipped_instances():
        result = api.solve(name, "sdp-subspace", time_limit=2.0)
        assert result.status != "error", (name, result.message)
        if result.status == "infeasible":
            assert "subspace" in result.message, (name, result.message)
        else:
            assert result.labels is not None, (name, result.status, result.message)


@pytest.mark.solver
@pytest.mark.slow
def test_sdp_without_sdpa_says_what_to_install(monkeypatch, capsys):
    # Without the sdpa extra, sdp ran 18 minutes on two_moons with SCS and nothing said why.
    from s3vm.core import formulation as base
    from s3vm.solvers import registry

    real = registry.unavailable_reason

    def hidden(name, problem_class=None):
        return "not installed (hidden by the test)" if name == "sdpa" else real(name,
                                                                               problem_class)

    monkeypatch.setattr(registry, "unavailable_reason", hidden)
    monkeypatch.setattr(base, "unavailable_reason", hidden)  # the name the pipeline holds
    monkeypatch.setattr(base, "_INSTALL_HINTS_GIVEN", set())
    status = cli.main(["solve", "two_moons", "-f", "sdp", "--time-limit", "1", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert json.loads(out)["solver"] == "scs"
    assert "pip install s3vm[sdpa]" in err and "Traceback" not in err


@pytest.mark.solver
@pytest.mark.slow
def test_psd_barrier_failing_as_the_limit_comes_answers_time_limit_with_labels(monkeypatch):
    # Found by the whole suite on a loaded machine (sdp_2moons, time_limit=2): psd-barrier gave
    # up on its SVM dual just as the limit came, and with no time left for the conic model the
    # solve answered status error without labels. It was stopped by its limit: time_limit, with
    # the labels at hand (the supervised SVM's, scored by D(y)).
    from s3vm.formulations.families.conic import ConicFormulation
    from s3vm.solvers.backends.base import Outcome
    from s3vm.solvers.runtime.clock import TIME_LIMIT

    solve = ConicFormulation.run_model

    def failing_at_the_limit(self, instance, settings, backend, profile, clock):
        built, _, extra = solve(self, instance, settings, backend, profile, clock)
        clock.stop(TIME_LIMIT)
        return built, Outcome(status="error", message="the SVM dual did not converge; use a "
                                                      "soft margin"), extra

    monkeypatch.setattr(ConicFormulation, "run_model", failing_at_the_limit)
    result = api.solve("sdp_2moons", "sdp-subspace", time_limit=30)
    assert result.status == "time_limit", result.message
    assert "psd-barrier failed" in result.message
    assert result.labels is not None and result.objective is not None
