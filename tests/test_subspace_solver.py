"""The subspace SDP's default solver, ``psd-barrier`` (solvers/engines/psd_barrier.py on
s3vm_models/models/subspace_oracle.py), checked by independent computations: the low-rank dual
written here in CVXPY and solved by Clarabel, a grid over M when d = 1, the SVM dual re-solved at
the returned M, and the certificate's dual point checked for feasibility. Also the spectral rules
and the bad input of the family (exit 2, one line)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import subspace_angles

from s3vm import api
from s3vm.core.kernels import kernel_matrix
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance
from s3vm.formulations.sdp_subspace import SubspaceSDP
from s3vm.models.spectral import constrained_spectral, knn_affinity, rbf_affinity
from s3vm.models.subspace_oracle import DenseOracle, KernelColumns, WorkingSetOracle
from s3vm.models.svm_dual import svm_dual_value
from s3vm.solvers.engines.box_qp import box_qp
from s3vm.solvers.engines.psd_barrier import PSDProblem, minimize, smat, svec
from s3vm.solvers.errors import InputError
from s3vm.solvers.profiles import SolverProfile

from test_sdp_input import one_error_line  # exit 2, one line on stderr, nothing on stdout

SIGMA = 1.5


def problem(seed: int, n: int = 30):
    """Two Gaussian classes in 2-D, 3 labeled points per class, rows shuffled."""
    inst = gaussian_blobs(n=n, p=2, separation=2.0, n_labeled_per_class=3, seed=seed)
    perm = np.random.default_rng(seed).permutation(inst.n)
    return Instance(inst.X[perm], inst.label[perm], inst.truth[perm])


def reference_value(K, V, C, balance=None):
    """The subspace optimum by the low-rank dual, written afresh (not the package's model):
    max 2 1'a - 1'lam - eta b s.t. [[V'diag(lam)V + eta B, W'], [W, I]] PSD, W = G'diag(a)V,
    K = G G' (eigen factor), 0 <= a <= C, lam >= 0; Clarabel."""
    import cvxpy as cp

    w, U = np.linalg.eigh(K)
    keep = w > 1e-10 * w.max()
    G = U[:, keep] * np.sqrt(w[keep])
    n, d = V.shape
    r = G.shape[1]
    a = cp.Variable(n, nonneg=True)
    lam = cp.Variable(n, nonneg=True)
    top = V.T @ cp.diag(lam) @ V
    objective = 2 * cp.sum(a) - cp.sum(lam)
    if balance is not None:
        B, b = balance
        eta = cp.Variable()
        top = top + eta * B
        objective = objective - eta * b
    W = G.T @ cp.diag(a) @ V
    lmi = cp.bmat([[top, W.T], [W, np.eye(r)]])
    cons = [(lmi + lmi.T) / 2 >> 0]
    if C is not None:
        cons.append(a <= C)
    prob = cp.Problem(cp.Maximize(objective), cons)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal", prob.status
    return prob.value


CASES = [("rbf", None, False), ("rbf", 1.0, False), ("rbf", None, True), ("rbf", 1.0, True),
         ("linear", 1.0, False), ("linear", 1.0, True)]


@pytest.mark.slow
@pytest.mark.solver
@pytest.mark.parametrize("kernel,C,count", CASES,
                         ids=[f"{k}-{'hard' if c is None else 'soft'}{'-count' if b else ''}"
                              for k, c, b in CASES])
def test_optimum_matches_clarabel_and_certificate_holds(kernel, C, count):
    inst = problem(seed=1)
    settings = Settings(kernel=kernel, sigma=SIGMA, hard_margin=C is None, C=C or 1.0,
                        C_star=C or 1.0, balance="count" if count else "none")
    form = SubspaceSDP(dim=3, spectral_rule="book")
    built = form.build_oracle(inst, settings)
    prob = built.model
    res = minimize(prob)
    assert res.status == "optimal"
    V = built.read["V"]()
    K = kernel_matrix(inst.X, None, kernel, SIGMA)
    Cv = None if C is None else np.full(inst.n, C)
    balance = None
    if count:
        (B, b), = prob.equalities
        balance = (B, b)
    ref = reference_value(K, V, Cv, balance)
    assert abs(res.primal - ref) <= 1e-5 * max(1.0, abs(ref))
    # M feasible: PSD, diag(V M V') <= 1, the balance met
    M = res.M
    assert np.allclose(M, M.T) and np.linalg.eigvalsh(M)[0] >= -1e-12
    assert np.einsum("ij,jk,ik->i", V, M, V).max() <= 1 + 1e-9
    if count:
        assert abs(np.sum(B * M) - b) <= 1e-7 * max(1.0, abs(b))
    # the value is attained at M: the oracle's a meets the SVM dual's optimality conditions
    # for Q = K o V M V' (checked here), and its value is the reported one; a generic solver
    # agrees to its own accuracy
    a = prob.oracle.a
    Q = K * (V @ M @ V.T)
    grad = Q @ a - 1.0
    scale = max(1.0, a.max())
    upper = np.inf if C is None else C
    assert np.all(a >= 0) and np.all(a <= upper)
    assert np.all(grad[a <= 0] >= -1e-8 * scale) and np.all(grad[a >= upper] <= 1e-8 * scale)
    assert np.all(np.abs(grad[(a > 0) & (a < upper)]) <= 1e-8 * scale)
    assert abs(2 * a.sum() - a @ Q @ a - res.primal) <= 1e-9 * max(1.0, res.primal)
    attained, _ = svm_dual_value(Q, np.ones(inst.n), Cv)
    assert abs(attained - res.primal) <= 1e-5 * max(1.0, abs(res.primal))
    # the certificate: a feasible dual point whose value is the reported lower bound
    lam, eta = res.lam, res.eta
    assert np.all(lam >= 0)
    W = (a[:, None] * V).T @ K @ (a[:, None] * V)
    Z = V.T @ (lam[:, None] * V) - W + sum(e * B_ for (B_, _), e in zip(prob.equalities, eta))
    assert np.linalg.eigvalsh((Z + Z.T) / 2)[0] >= -1e-9 * max(1.0, np.abs(Z).max())
    dual = 2 * a.sum() - lam.sum() - sum(e * b_ for (_, b_), e in zip(prob.equalities, eta))
    assert abs(dual - res.dual) <= 1e-8 * max(1.0, abs(dual))
    assert res.dual <= ref * (1 + 1e-6) + 1e-9 and res.dual <= res.primal
    assert res.rel_gap <= 1e-6


@pytest.mark.solver
@pytest.mark.slow
def test_one_column_against_a_grid_over_M():
    """d = 1: M is a number m in [0, 1 / max v_i^2]; g(m) on a fine grid (SVM duals solved
    independently) bounds the minimum from above, and the certificate from below."""
    inst = problem(seed=2)
    settings = Settings(kernel="rbf", sigma=SIGMA, C=1.0, C_star=1.0)
    built = SubspaceSDP(dim=1).build_oracle(inst, settings)
    res = minimize(built.model)
    V = built.read["V"]()
    K = kernel_matrix(inst.X, None, "rbf", SIGMA)
    top = 1.0 / float((V[:, 0] ** 2).max())

    def g(m):
        return svm_dual_value(K * (m * np.outer(V[:, 0], V[:, 0])), np.ones(inst.n),
                              np.ones(inst.n))[0]

    coarse = np.linspace(0.0, top, 21)
    k = int(np.argmin([g(m) for m in coarse]))       # g is convex: the minimum is next to it
    fine = np.linspace(coarse[max(k - 1, 0)], coarse[min(k + 1, 20)], 21)
    best = min(g(m) for m in fine)
    # (svm_dual_value solves each grid point to about 1e-9 relative)
    assert res.dual <= best * (1 + 1e-8)
    assert res.primal <= best * (1 + 1e-8)
    assert best - res.primal <= 1e-3 * best   # the grid's resolution (spacing top / 200)


@pytest.mark.solver
@pytest.mark.slow
def test_solve_through_the_api_defaults_to_psd_barrier_and_agrees_with_clarabel():
    inst = problem(seed=3)
    # (soft margin: on this draw's hard margin Clarabel stops "inaccurate", 2e-5 below the
    # optimum, which the certificate proves: g at Clarabel's M is above ours)
    common = dict(kernel="rbf", sigma=SIGMA, C=1.0)
    new = api.solve(inst, "sdp-subspace", options={"dim": 3}, **common)
    ref = api.solve(inst, "sdp-subspace", solver="clarabel", options={"dim": 3}, **common)
    assert new.solver == "psd-barrier" and ref.solver == "clarabel"
    cert = new.info["subspace_certificate"]
    assert cert["dual"] <= cert["primal"] and cert["rel_gap"] <= 1e-6
    assert new.info["relaxation_value"] == cert["primal"]
    ref_value = ref.info["relaxation_value"]
    assert abs(cert["primal"] - ref_value) <= 1e-5 * ref_value
    np.testing.assert_array_equal(new.labels, ref.labels)


@pytest.mark.solver
def test_lowrank_with_a_nystroem_factor_agrees_with_clarabel():
    inst = problem(seed=4, n=40)
    common = dict(kernel="rbf", sigma=SIGMA, C=1.0)
    new = api.solve(inst, "sdp-lowrank", options={"dim": 3, "rank": 12}, **common)
    ref = api.solve(inst, "sdp-lowrank", solver="clarabel", options={"dim": 3, "rank": 12},
                    **common)
    assert new.solver == "psd-barrier"
    value = ref.info["relaxation_value"]
    assert abs(new.info["relaxation_value"] - value) <= 1e-5 * value


def test_kernel_access_paths_and_the_working_set_agree():
    """The working set (read by columns: dense K, exact rbf columns from X, a factor G) gives
    the dense oracle's g, gradient and Hessian at the same M."""
    inst = problem(seed=5, n=60)
    V = SubspaceSDP(dim=3).basis(inst)
    K = kernel_matrix(inst.X, None, "rbf", SIGMA)
    w, U = np.linalg.eigh(K)
    G = U * np.sqrt(np.maximum(w, 0))
    M = np.diag([0.02, 0.01, 0.005]) + 0.001
    dense = DenseOracle(K, V, None).evaluate(M)
    for columns in (KernelColumns(K=K), KernelColumns(X=inst.X, sigma=SIGMA),
                    KernelColumns(G=G)):
        oracle = WorkingSetOracle(columns, V, None, initial=np.arange(3))
        oracle.ids, oracle.member[:] = oracle.ids[:5], False   # start from 5 points only
        oracle.member[oracle.ids] = True
        ev = oracle.evaluate(M)
        assert abs(ev.value - dense.value) <= 1e-7 * dense.value
        np.testing.assert_allclose(ev.gradient, dense.gradient, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(ev.hessian, dense.hessian, rtol=1e-5, atol=1e-6)


def test_box_qp_is_exact():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 10))
    Q = A @ A.T + 0.1 * np.eye(30)
    res = box_qp(Q, np.full(30, 0.5))
    grad = Q @ res.a - 1
    # KKT: at 0 the gradient is >= 0, at the bound <= 0, in between 0
    assert np.all(grad[res.a <= 0] >= -1e-9) and np.all(grad[res.a >= 0.5] <= 1e-9)
    free = (res.a > 0) & (res.a < 0.5)
    assert np.abs(grad[free]).max(initial=0) <= 1e-9


@pytest.mark.slow
def test_engine_on_a_known_problem():
    """min <C, M> - log? no: a linear g(M) = <C0, M> with C0 = -I over {M PSD, r_i'M r_i <= 1}
    has the value -max trace(M): with rows e_1..e_d the optimum is M = I, value -d."""
    d = 3

    class Linear:
        evaluations = 0

        def evaluate(self, M, hessian=True):
            from s3vm.solvers.engines.psd_barrier import Evaluation

            self.evaluations += 1
            m = d * (d + 1) // 2
            return Evaluation(-float(np.trace(M)), -np.eye(d), np.zeros((m, m)) if hessian
                              else None)

        def accept(self, ev):
            pass

    res = minimize(PSDProblem(Linear(), np.eye(d)))
    assert res.status == "optimal"
    assert abs(res.primal + d) <= 1e-6 and res.dual <= -d + 1e-9 and res.gap <= 1e-6
    assert np.allclose(smat(svec(res.M), d), res.M)


@pytest.mark.solver
@pytest.mark.slow
def test_unreachable_balance_is_said_of_the_subspace_not_the_problem():
    """psd-barrier finds no interior M for a count out of the subspace's reach: not an error,
    and not ``infeasible`` either, since labelings with that count exist."""
    inst = problem(seed=1)
    res = api.solve(inst, "sdp-subspace", options={"dim": 1}, kernel="rbf", sigma=SIGMA,
                    C=1.0, balance="count", positives=1)
    assert res.status == "feasible" and int(np.sum(res.labels == 1)) == 1
    assert "subspace" in res.message
    every = api.solve(inst, "sdp-subspace", options={"dim": 1}, kernel="rbf", sigma=SIGMA,
                      C=1.0, balance="count", positives=inst.u)
    assert every.status == "optimal" and np.all(every.labels == 1)


@pytest.mark.slow
def test_time_limit_still_certifies():
    inst = problem(seed=1)
    form = SubspaceSDP(dim=3)
    settings = Settings(kernel="rbf", sigma=SIGMA, hard_margin=True)
    res = form.solve(inst, settings, SolverProfile(solver="psd-barrier", time_limit=1e-3))
    assert res.status in ("time_limit", "feasible")
    cert = res.info.get("subspace_certificate")
    if cert is not None:
        assert cert["dual"] <= cert["primal"]


@pytest.mark.solver
def test_profile_options_are_checked():
    inst = problem(seed=1)
    settings = Settings(kernel="rbf", sigma=SIGMA, hard_margin=True)
    with pytest.raises(InputError, match="no option 'tolerance'"):
        SubspaceSDP(dim=2).solve(inst, settings, SolverProfile(solver="psd-barrier",
                                                               options={"tolerance": 1e-6}))
    with pytest.raises(InputError, match="does not solve formulation 'sdp'"):
        api.solve(inst, "sdp", solver="psd-barrier", kernel="rbf", sigma=SIGMA)


# -- the spectral rules --------------------------------------------------------------------------

def nips_reference(A, label, d):
    """De Bie and Cristianini (2003), section 4.1, as they write it: Lo = [e+/sqrt(l+),
    e-/sqrt(l-), I_u], the d dominant eigenvectors of Lo'D^-1/2 A D^-1/2 Lo, v = Lo h, centred."""
    label = np.asarray(label)
    pos, neg, unl = label == 1, label == -1, label == 0
    n = label.size
    Lo = np.zeros((n, 2 + unl.sum()))
    Lo[pos, 0] = 1 / np.sqrt(pos.sum())
    Lo[neg, 1] = 1 / np.sqrt(neg.sum())
    Lo[np.flatnonzero(unl), 2 + np.arange(unl.sum())] = 1.0
    s = 1 / np.sqrt(A.sum(axis=1))
    T = Lo.T @ (s[:, None] * A * s[None, :]) @ Lo
    w, H = np.linalg.eigh((T + T.T) / 2)
    V = Lo @ H[:, np.argsort(-w)[:d]]
    return V - (V[pos].mean(0) + V[neg].mean(0)) / 2


@pytest.mark.slow
@pytest.mark.parametrize("graph", ["dense", "knn"])
def test_nips_rule_spans_the_papers_subspace(graph):
    inst = problem(seed=6, n=80)
    if graph == "dense":
        A = rbf_affinity(inst.X, 0.7)
        methods = ["dense"]
    else:
        A, _ = knn_affinity(inst.X, 0.7, 10)
        methods = ["dense", "sparse"]
    ref = nips_reference(np.asarray(A.toarray() if hasattr(A, "toarray") else A), inst.label, 4)
    for method in methods:
        V = constrained_spectral(A, inst.label, 4, method=method, rule="nips").V
        assert np.max(subspace_angles(V, ref)) < 1e-6
        # the labeled rows of every column are +c / -c
        lab = inst.labeled
        signed = V[lab] * inst.label[lab][:, None]
        assert np.allclose(signed, signed[0])


def test_threshold_quantile_clips_the_columns():
    inst = problem(seed=6, n=80)
    V = SubspaceSDP(dim=3).basis(inst)
    Vc = SubspaceSDP(dim=3, threshold_quantile=0.9).basis(inst)
    limit = np.quantile(np.abs(V), 0.9, axis=0)
    assert np.allclose(Vc, np.clip(V, -limit, limit))
    assert np.all(np.abs(Vc).max(axis=0) <= limit + 1e-15)


# -- bad input through the command line ----------------------------------------------------------

@pytest.fixture(scope="module")
def outlier_file(tmp_path_factory):
    """A point so far from all others that its rbf affinities underflow to 0. (The width, the
    mean nearest-neighbour distance, grows with the outlier's own distance / n: with 40 other
    points the outlier stays about 40 widths away, beyond exp(-745).)"""
    inst = problem(seed=7, n=40)
    X = np.vstack([inst.X, [1e3, 1e3]])
    label = np.r_[inst.label, 0]
    path = tmp_path_factory.mktemp("outlier") / "outlier.csv"
    Instance(X, label, np.r_[inst.truth, 1]).to_csv(str(path))
    return str(path)


@pytest.mark.parametrize("formulation", ["sdp-subspace", "sdp-lowrank"])
@pytest.mark.parametrize("rule", ["nips", "book"])
def test_isolated_point_in_the_graph(outlier_file, formulation, rule, tmp_path):
    line = one_error_line(["solve", outlier_file, "-f", formulation, "--spectral-rule", rule,
                           "--kernel", "rbf", "--json"])
    assert "isolated point" in line and "rows 40" in line
    target = tmp_path / "model.ptf"     # nothing written either
    one_error_line(["export", outlier_file, "-f", formulation, "--spectral-rule", rule,
                    "-o", str(target)])
    assert not target.exists()


@pytest.mark.parametrize("rule", ["nips", "book"])
def test_dim_larger_than_the_spectral_problem_allows(outlier_file, rule):
    line = one_error_line(["solve", outlier_file, "-f", "sdp-subspace", "--spectral-rule", rule,
                           "--dim", "60", "--json"])
    assert "d larger than u + 1" in line


def test_bad_threshold_quantile():
    line = one_error_line(["solve", "two_moons", "-f", "sdp-subspace",
                           "--threshold-quantile", "1.5", "--json"])
    assert "--threshold-quantile must be in (0, 1]" in line


@pytest.mark.solver
@pytest.mark.slow
def test_an_svm_that_does_not_converge_is_an_error_not_a_value():
    """Linear kernel, p = 2, hard margin: K o V M V' is singular and the SVM dual has no exact
    solution the projected Newton can reach; the solve says so instead of returning a value."""
    inst = gaussian_blobs(n=40, p=2, separation=3.0, n_labeled_per_class=3, seed=2)
    res = api.solve(inst, "sdp-subspace", options={"dim": 3}, kernel="linear", hard_margin=True)
    assert res.status == "error" and res.labels is None
    assert "did not converge" in res.message


def test_a_faint_link_is_not_an_isolated_point():
    # heart's row 151 lies 11 widths from its nearest neighbour: its affinity 2e-27 vanishes
    # beside the diagonal's 1 in a row sum, yet the point is linked.
    from s3vm.models.spectral import isolated_points

    A = np.array([[1.0, 0.5, 2e-27], [0.5, 1.0, 0.0], [2e-27, 0.0, 1.0]])
    assert isolated_points(A).size == 0
    assert isolated_points(sp.csr_matrix(A)).size == 0
    A[0, 2] = A[2, 0] = 0.0
    assert list(isolated_points(A)) == [2]
    assert list(isolated_points(sp.csr_matrix(A))) == [2]


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("formulation", ["sdp-subspace", "sdp-lowrank"])
def test_a_failed_default_solver_falls_back_on_the_conic_model(monkeypatch, formulation):
    # psd-barrier cannot take a kernel whose Q_FF is singular (linear, few features, 10^4
    # points): with no solver named, the conic model answers, and the result says so.
    from s3vm import api
    from s3vm.solvers.backends.base import Outcome
    from s3vm.solvers.backends.psd_barrier import PsdBarrierBackend

    def fail(self, model, profile, clock=None):
        return Outcome(status="error", message="the SVM dual did not converge")

    monkeypatch.setattr(PsdBarrierBackend, "solve", fail)
    inst = problem(seed=3, n=30)
    result = api.solve(inst, formulation, options={"dim": 3})
    assert result.solver in ("scs", "clarabel")
    assert result.status in ("optimal", "feasible") and result.labels is not None
    assert result.message.startswith("psd-barrier failed (the SVM dual did not converge)")
    assert result.info["solver_fallback"]["from"] == "psd-barrier"
    # A solver the user names is not replaced: its failure is the answer.
    named = api.solve(inst, formulation, options={"dim": 3}, solver="psd-barrier")
    assert named.status == "error" and "solver_fallback" not in named.info


@pytest.mark.solver
@pytest.mark.slow
def test_a_working_set_beyond_memory_ends_psd_barrier_and_the_conic_model_answers(monkeypatch):
    # A linear kernel with few features makes K o V M V' singular: the working set of the SVM
    # duals then grows toward n (12 GB at 10^5 points before this cap). With a budget of a few
    # columns it must stop with a clear reason, and the default solve fall back.
    import s3vm.models.subspace_oracle as oracle
    from s3vm import api
    from s3vm.data.generators import gaussian_blobs

    monkeypatch.setattr(oracle, "available_memory", lambda: 1e6)
    inst = gaussian_blobs(n=1500, p=3, separation=2.0, labeled_fraction=0.1, seed=0)
    named = api.solve(inst, "sdp-lowrank", kernel="linear", solver="psd-barrier")
    assert named.status == "error" and "outgrew memory" in named.message
    result = api.solve(inst, "sdp-lowrank", kernel="linear")
    assert result.solver in ("scs", "clarabel") and result.labels is not None
    # (here the factor's rank already passes psd-barrier over, before any working set)
    assert result.info["solver_fallback"]["from"] == "psd-barrier"


@pytest.mark.solver
@pytest.mark.slow
def test_an_svm_dual_that_never_converges_is_an_error_result_not_an_exception(monkeypatch):
    # OracleError escaped s3vm.solve from the scoring of the rounded labels (rbf, sigma 3, 10^4
    # points): the API raised instead of returning a result.
    import s3vm.models.subspace_oracle as oracle
    from s3vm import api
    from s3vm.solvers.engines.psd_barrier import OracleError

    def never(qp):
        raise OracleError("the SVM dual did not converge (forced)")

    monkeypatch.setattr(oracle, "_check", never)
    value, a = oracle.svm_value(oracle.KernelColumns(K=np.eye(4)), np.array([1., -1, 1, -1]),
                                None)
    assert np.isnan(value) and a is None
    from s3vm.formulations.sdp_subspace import SubspaceSDP

    monkeypatch.setattr(SubspaceSDP, "supervised_value",
                        lambda self, instance, settings, y: (float("nan"), None, None))
    result = api.solve(problem(seed=3, n=30), "sdp-subspace", options={"dim": 3})
    assert result.status == "error" and result.labels is None and result.objective is None
    assert "did not solve" in result.message


@pytest.mark.solver
@pytest.mark.slow
def test_sdp_lowrank_passes_over_psd_barrier_for_a_factor_of_low_rank():
    # A linear kernel with 10 features at 10^4 points took psd-barrier 50 s to fail (its SVM
    # duals have more free points than K o V M V' has rank); the conic model takes 3 s.
    from s3vm import api
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings
    from s3vm.data.generators import gaussian_blobs

    inst = gaussian_blobs(n=1200, p=3, separation=2.0, labeled_fraction=0.1, seed=0)
    form = get_formulation("sdp-lowrank")
    assert "rank at most 30" in form.barrier_unsuited(inst, Settings(kernel="linear"))
    assert form.barrier_unsuited(inst, Settings(kernel="rbf")) is None  # 100 x 10 >= n / 2
    result = api.solve(inst, "sdp-lowrank", kernel="linear")
    assert result.solver in ("scs", "clarabel") and result.labels is not None
    assert result.message.startswith("psd-barrier passed over (K o V M V' has rank at most 30")
    named = api.solve(inst, "sdp-lowrank", kernel="linear", solver="psd-barrier")
    assert named.solver == "psd-barrier" and "solver_fallback" not in named.info


@pytest.mark.solver
@pytest.mark.slow
def test_sdp_lowrank_scores_on_its_factor_when_the_exact_kernel_fails(monkeypatch):
    # rbf with sigma 3 on 10^4 points in 10 dimensions: the exact kernel's SVM dual did not
    # converge, and the run ended in 'error' with labels in hand.
    import s3vm.formulations.sdp_lowrank as lowrank
    from s3vm import api

    monkeypatch.setattr(lowrank, "svm_value", lambda columns, y, C: (float("nan"), None))
    result = api.solve(problem(seed=3, n=30), "sdp-lowrank", kernel="rbf",
                       options={"dim": 3, "rank": 10})
    assert result.status in ("optimal", "feasible") and np.isfinite(result.objective)
    assert "Nystroem" in result.info["objective_note"]
