"""``bb-sdp``: S3VM-L2 without bias by branch and bound on the SDP relaxation of Problem 2.

The reference is computed here, independently of the code under test: J(y) = D(y) / 2 with

    D(y) = max_{a >= 0} 2 1'a - a'Q a,   Q = Y K' Y,   K' = K + diag(1 / (2 C_i)),

which with Q = R'R (Cholesky) is the nonnegative least-squares problem min_{a >= 0} |R a - b|^2,
b = R^{-T} 1, D = |b|^2 - min (scipy.optimize.nnls); the optimum of bb-sdp is compared with the
minimum of J over every labeling that meets the count. (bb-sdp scores labelings with the primal
Newton solver of s3vm.l2_svm and bounds with CVXPY, neither of which is used here.)
"""

from __future__ import annotations

import functools
import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from scipy.linalg import cholesky, solve_triangular
from scipy.optimize import nnls

from s3vm import api, cli
from s3vm.data import Instance
from s3vm.solvers.errors import InputError
from s3vm.generators import gaussian_blobs, noisy_linear, two_moons
from s3vm.registry import FORMULATIONS
from s3vm.sdp import SDPRelaxation
from s3vm.settings import Settings
from s3vm.svm_dual import svm_dual_value
from s3vm.sdp_bound import LOOSE_EPS, SDPRelaxationProblem, certified_value
from s3vm.solvers.profiles import get_profile
from s3vm.solvers.registry import get_backend

RTOL = 1e-6


def below(bound, value):
    """bound <= value up to rounding (1e-9 relative: two exact computations of one J differ in
    their last digits)."""
    return bound <= value + 1e-9 * max(1.0, abs(value))


# -- the independent reference ---------------------------------------------------------------

def kernel(X, kind, sigma):
    X = np.asarray(X, dtype=float)
    if kind == "linear":
        return X @ X.T
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-sq / (2.0 * sigma ** 2))


def penalties(instance, settings):
    return np.where(instance.label != 0, settings.C, settings.C_unlabeled).astype(float)


def hard_margin_dual(Kp, y):
    """D(y) = max_{a >= 0} 2 1'a - a'(Y K' Y)a by NNLS."""
    Q = Kp * np.outer(y, y)
    R = cholesky(Q)  # upper: Q = R'R
    b = solve_triangular(R, np.ones(len(y)), trans="T")
    _, residual = nnls(R, b, maxiter=50 * len(y))
    return float(b @ b - residual ** 2)


class Reference:
    """J over all labelings of one instance (those meeting the count)."""

    def __init__(self, instance, settings):
        self.instance, self.settings = instance, settings
        self.Kp = kernel(instance.X, settings.kernel, settings.sigma) + \
            np.diag(0.5 / penalties(instance, settings))
        self.P = settings.positive_count(instance) if settings.balance == "count" else None
        self.values = {}
        for signs in itertools.product((-1, 1), repeat=instance.u):
            if self.P is None or signs.count(1) == self.P:
                self.values[signs] = self.J(np.array(signs))
        self.best = min(self.values.values())

    def J(self, labels_U):
        y = self.instance.label.astype(float)
        y[self.instance.unlabeled] = labels_U
        return hard_margin_dual(self.Kp, y) / 2.0

    def best_completion(self, partial):
        free = np.flatnonzero(partial == 0)
        values = [v for k, v in self.values.items()
                  if np.all(np.asarray(k)[partial != 0] == partial[partial != 0])]
        assert free.size == 0 or values
        return min(values) if values else np.inf


# -- instances (seeded; u <= 10, n <= 20) ----------------------------------------------------

CASES = {
    "rbf_u8_none": (lambda: noisy_linear(per_class=2, u=8, p=3, noise=1.0, seed=0),
                    Settings(kernel="rbf", sigma=1.5, C=1.0, bias=False, balance="none")),
    "rbf_u10_count": (lambda: noisy_linear(per_class=2, u=10, p=3, noise=1.0, seed=1),
                      Settings(kernel="rbf", sigma=1.5, C=1.0, C_star=0.5, bias=False,
                               balance="count")),
    "moons_u10_count": (lambda: two_moons(n_per_class_labeled=2, n_unlabeled_per_class=5,
                                          noise=0.1, seed=3),
                        Settings(kernel="rbf", sigma=0.5, C=10.0, bias=False, balance="count")),
    "linear_u8_count_p3": (lambda: gaussian_blobs(n=12, p=2, separation=1.0,
                                                  n_labeled_per_class=2, seed=7),
                           Settings(kernel="linear", C=2.0, C_star=0.3, bias=False,
                                    balance="count", positives=3)),
}


@functools.lru_cache(maxsize=None)
def case(name):
    build, settings = CASES[name]
    instance = build()
    assert instance.u <= 10 and instance.n <= 20
    return instance, settings


@functools.lru_cache(maxsize=None)
def reference(name):
    return Reference(*case(name))


def node_problem(instance, settings, solver="clarabel"):
    return SDPRelaxationProblem.from_instance(instance, settings, get_backend(solver, "sdp"),
                                              get_profile(solver, None, "sdp"))


# -- the optimum -----------------------------------------------------------------------------

@pytest.mark.parametrize("name,solver", [("rbf_u8_none", None), ("rbf_u10_count", "clarabel"),
                                         ("moons_u10_count", None),
                                         ("linear_u8_count_p3", "clarabel")])
def test_optimum_equals_enumeration_and_labels_attain_it(name, solver):
    instance, settings = case(name)
    ref = reference(name)
    result = api.solve(instance, "bb-sdp", settings, solver=solver)
    assert result.status == "optimal"
    assert result.solver == (solver or "scs")
    assert result.objective == pytest.approx(ref.best, rel=RTOL)
    assert result.lower_bound <= result.objective
    assert result.lower_bound == pytest.approx(result.objective, rel=1e-9)
    labels = np.asarray(result.labels)
    if ref.P is not None:
        assert np.count_nonzero(labels == 1) == ref.P
    assert ref.J(labels) == pytest.approx(ref.best, rel=RTOL)
    # A third computation of J at the optimum: the conic dual of the project (Clarabel).
    y = instance.label.astype(float)
    y[instance.unlabeled] = labels
    assert svm_dual_value(ref.Kp, y, None)[0] / 2.0 == pytest.approx(ref.best, rel=1e-5)


def test_primal_gives_the_objective_and_the_decision_values():
    """J = 1/2 beta'K beta + sum C_i max(0, 1 - y_i f_i)^2 at f = K beta (no bias)."""
    name = "rbf_u10_count"
    instance, settings = case(name)
    result = api.solve(instance, "bb-sdp", settings, solver="clarabel")
    beta = np.asarray(result.primal["beta"])
    assert result.primal["b"] == 0.0
    K = kernel(instance.X, settings.kernel, settings.sigma)
    f = K @ beta
    y = instance.label.astype(float)
    y[instance.unlabeled] = result.labels
    J = 0.5 * beta @ K @ beta + penalties(instance, settings) @ np.maximum(0, 1 - y * f) ** 2
    assert J == pytest.approx(result.objective, rel=1e-8)
    np.testing.assert_allclose(result.decision_values, f[instance.unlabeled], atol=1e-9)


# Derandomized: the same examples every run, so the file's outcome and time are reproducible
# (explored with 60-120 random examples per run while writing it).
@hsettings(max_examples=10, derandomize=True, deadline=None,
           suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_random_instances(data):
    """Random points (u <= 6), labels, kernel, C, C* and balance: bb-sdp's optimum is the
    enumeration's and its root bound lies below it."""
    l = data.draw(st.integers(1, 3), label="per class")
    u = data.draw(st.integers(2, 6), label="u")
    seed = data.draw(st.integers(0, 2 ** 16), label="seed")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * l + u, 2))
    label = np.concatenate([np.ones(l), -np.ones(l), np.zeros(u)]).astype(int)
    instance = Instance(X, label)
    balance = data.draw(st.sampled_from(["none", "count"]), label="balance")
    settings = Settings(kernel=data.draw(st.sampled_from(["linear", "rbf"]), label="kernel"),
                        sigma=data.draw(st.floats(0.3, 3.0), label="sigma"),
                        C=data.draw(st.floats(0.1, 10.0), label="C"),
                        C_star=data.draw(st.floats(0.1, 10.0), label="C*"), bias=False,
                        balance=balance,
                        positives=data.draw(st.integers(0, u), label="P")
                        if balance == "count" else None)
    ref = Reference(instance, settings)
    problem = node_problem(instance, settings)
    assert below(problem.bound(np.zeros(u, dtype=int)).value, ref.best)
    result = api.solve(instance, "bb-sdp", settings, solver="clarabel")
    assert result.status == "optimal"
    assert result.objective == pytest.approx(ref.best, rel=RTOL)
    assert ref.J(np.asarray(result.labels)) == pytest.approx(ref.best, rel=RTOL)


# -- the bound -------------------------------------------------------------------------------

class KernelSDP(SDPRelaxation):
    """The project's ``sdp`` formulation on a given kernel matrix (here K')."""

    def __init__(self, K):
        super().__init__(sdp_form="primal")
        self.K = K

    def kernel(self, instance, settings):
        return self.K


@pytest.mark.parametrize("name", ["rbf_u8_none", "rbf_u10_count"])
def test_root_bound_is_the_sdp_relaxation_of_problem_2_on_k_prime(name):
    """Root: the certified bound <= the optimum, and it is half of what the ``sdp``
    formulation's reduced model (hard margin, kernel K') reaches, up to solver accuracy."""
    instance, settings = case(name)
    ref = reference(name)
    problem = node_problem(instance, settings)
    root = problem.bound(np.zeros(instance.u, dtype=int))
    assert below(root.value, ref.best)
    built = KernelSDP(ref.Kp).build_cvxpy(instance, settings.updated(hard_margin=True))
    built.model.solve(solver="CLARABEL")
    assert problem.relaxation_values[0] == pytest.approx(built.model.value / 2.0, rel=1e-5)
    assert root.value == pytest.approx(built.model.value / 2.0, rel=1e-4)
    assert root.value <= built.model.value / 2.0 * (1 + 1e-6)
    # The rounded relaxation is a labeling, scored exactly.
    assert root.labels_value == pytest.approx(ref.J(root.labels), rel=RTOL)


@pytest.mark.parametrize("name,solver", [("rbf_u10_count", "scs"),
                                         ("linear_u8_count_p3", "clarabel"),
                                         ("rbf_u8_none", "clarabel")])
def test_node_bounds_are_below_every_completion(name, solver):
    instance, settings = case(name)
    ref = reference(name)
    problem = node_problem(instance, settings, solver)
    rng = np.random.default_rng(2)
    for fixed_count in (1, 3, 5):
        partial = np.zeros(instance.u, dtype=int)
        fixed = rng.choice(instance.u, size=fixed_count, replace=False)
        partial[fixed] = rng.choice((-1, 1), size=fixed_count)
        node = problem.bound(partial)
        assert below(node.value, ref.best_completion(partial))
        if node.labels is not None:
            np.testing.assert_array_equal(node.labels[partial != 0], partial[partial != 0])
            assert node.labels_value == pytest.approx(ref.J(node.labels), rel=RTOL)
        if node.branch_index is not None:
            assert partial[node.branch_index] == 0


def test_loose_first_solves_only_with_scs_at_its_default_accuracy():
    instance, settings = case("rbf_u10_count")
    scs = get_profile("scs", None, "sdp")
    assert node_problem(instance, settings, "scs").loose_profile.options["eps_abs"] == LOOSE_EPS
    assert node_problem(instance, settings, "clarabel").loose_profile is None
    chosen = SDPRelaxationProblem.from_instance(
        instance, settings, get_backend("scs", "sdp"), scs.updated(options={"eps_rel": 1e-6}))
    assert chosen.loose_profile is None  # the user's accuracy is kept for every node


def test_loose_solve_is_continued_unless_it_prunes():
    """A node whose loose certificate reaches the cutoff gets one SCS solve; any other node a
    second one at the profile's accuracy, whose certificate is kept when larger
    and whose labels the node uses. Every bound stays below every completion."""
    name = "rbf_u10_count"
    instance, settings = case(name)
    ref = reference(name)
    root = np.zeros(instance.u, dtype=int)
    open_node = node_problem(instance, settings, "scs")  # no incumbent: nothing can be pruned
    tight = open_node.bound(root)
    assert open_node.sdp_solves == 2 and open_node.tight_solves == 1
    loose_value = open_node.relaxation_values[0]
    pruned = node_problem(instance, settings, "scs")
    pruned.notify_cutoff(0.5 * loose_value)  # below the loose certificate
    loose = pruned.bound(root)
    assert pruned.sdp_solves == 1 and pruned.tight_solves == 0
    assert loose.value >= 0.5 * loose_value
    assert below(loose.value, ref.best) and below(tight.value, ref.best)
    assert tight.value >= loose.value - 1e-6 * abs(loose.value)
    # Tightly, the certificate is within SCS's default accuracy of the relaxation.
    assert tight.value == pytest.approx(open_node.relaxation_values[-1], rel=1e-3)


@pytest.mark.parametrize("name", ["rbf_u8_none", "rbf_u10_count"])
def test_certificate_holds_for_arbitrary_duals(name):
    """Weak duality makes the certified value a lower bound on 2 J for ANY a >= 0 and H: random
    ones (and a scaled optimum-like a) must never exceed twice the optimum."""
    instance, settings = case(name)
    ref = reference(name)
    lab, unl = instance.labeled, instance.unlabeled
    order = np.concatenate([lab, unl])
    Kn = ref.Kp[np.ix_(order, order)]
    yS = instance.label[lab].astype(float)
    u = instance.u
    count = None if ref.P is None else 2 * ref.P - u
    rng = np.random.default_rng(5)
    for trial in range(20):
        a = rng.exponential(scale=rng.uniform(0.01, 2.0), size=instance.n)
        V = rng.normal(size=(u + 1, rng.integers(1, u + 2)))
        H = V @ V.T
        H /= np.sqrt(np.outer(np.diag(H), np.diag(H)))
        value = certified_value(Kn, yS, a, H, count)
        assert below(value, 2.0 * ref.best)


def test_single_completion_is_exact():
    """When the count leaves one completion the bound is its J, with the labeling offered."""
    name = "linear_u8_count_p3"
    instance, settings = case(name)
    ref = reference(name)
    problem = node_problem(instance, settings)
    partial = np.zeros(instance.u, dtype=int)
    partial[:ref.P] = 1  # all positives placed: the rest must be -1
    node = problem.bound(partial)
    expected = np.where(np.arange(instance.u) < ref.P, 1, -1)
    np.testing.assert_array_equal(node.labels, expected)
    assert node.value == pytest.approx(ref.J(expected), rel=RTOL)


# -- against bb --no-bias --------------------------------------------------------------------

@pytest.mark.skipif("bb" not in FORMULATIONS, reason="the bb formulation is not registered")
@pytest.mark.parametrize("name", ["rbf_u10_count", "moons_u10_count"])
def test_bb_without_bias_reaches_the_same_optimum(name):
    instance, settings = case(name)
    sdp = api.solve(instance, "bb-sdp", settings)
    svm = api.solve(instance, "bb", settings)
    assert sdp.status == svm.status == "optimal"
    assert sdp.objective == pytest.approx(svm.objective, rel=RTOL)
    assert sdp.objective == pytest.approx(reference(name).best, rel=RTOL)


# -- input -----------------------------------------------------------------------------------

def test_bias_is_rejected():
    instance, settings = case("rbf_u8_none")
    with pytest.raises(InputError, match="without bias"):
        api.solve(instance, "bb-sdp", settings, bias=True)
    # A file's (or a Settings object's) bias is a default that bb-sdp, which has none, ignores.
    result = api.solve(instance, "bb-sdp", settings.updated(bias=True),
                        options={"node_limit": 1})
    assert result.info["settings"]["bias"] is False


def test_cli_solve_json(capsys, tmp_path):
    name = "rbf_u8_none"
    instance, _ = case(name)
    path = tmp_path / "small.csv"
    instance.to_csv(str(path))
    status = cli.main(["solve", str(path), "--formulation", "bb-sdp", "--kernel", "rbf",
                       "--sigma", "1.5", "--C", "1", "--no-bias", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    result = json.loads(out)
    assert result["status"] == "optimal" and result["formulation"] == "bb-sdp"
    assert isinstance(result["nodes"], int) and result["nodes"] >= 1
    assert result["objective"] == pytest.approx(reference(name).best, rel=RTOL)
