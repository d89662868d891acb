"""switching's other starts and loss: ∇S3VM's continuation (search gradient / best, kept by J)
and SVMlight's hinge loss, checked against independent computations."""

import itertools

import numpy as np
import pytest

import s3vm
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs, two_moons
from s3vm.models.gradient_s3vm import balance_target, kernel_root, smoothed_outputs
from s3vm.models.hinge_svm import HingeObjective
from s3vm.models.l2_svm import S3VMObjective

from reference import dense_kernel, l2_objective


def test_kernel_root_factors_the_kernel():
    moons = two_moons(3, 20, seed=0)
    K = dense_kernel(moons.X, "rbf", 0.5)
    G = kernel_root(K)
    np.testing.assert_allclose(G @ G.T, K, atol=1e-8)


@pytest.mark.slow
def test_smoothed_outputs_meet_the_balance_and_a_stationary_point():
    # The continuation's last stage is a stationary point of J_s at the full C* (L-BFGS's
    # gradient test), and the mean unlabeled output is the balance target exactly.
    moons = two_moons(3, 25, seed=1)
    G = kernel_root(dense_kernel(moons.X, "rbf", 0.5))
    L, U = moons.labeled, moons.unlabeled
    C = np.where(moons.label != 0, 10.0, 5.0)
    target = balance_target(30, moons.label[L], U.size)
    assert target == pytest.approx(2 * 30 / U.size - 1)
    f = smoothed_outputs(G, moons.label, L, U, C, target)
    assert np.mean(f[U]) == pytest.approx(target, abs=1e-10)
    # J_s written here from its definition, b eliminated by the balance; its gradient at the
    # returned w (recovered from f) is near zero relative to its scale.
    gm = G[U].mean(axis=0)
    y = moons.label[L].astype(float)

    def J(w):
        b = target - gm @ w
        fl, fu = G[L] @ w + b, G[U] @ w + b
        return 0.5 * w @ w + 10.0 * np.sum(np.maximum(0, 1 - y * fl) ** 2) + \
            5.0 * np.sum(np.exp(-3.0 * fu ** 2))

    Z = G - gm  # f - target = (G - gm) w
    w = np.linalg.lstsq(Z, f - target, rcond=None)[0]
    np.testing.assert_allclose(Z @ w + target, f, atol=1e-6)
    h = 1e-6
    grad = np.array([(J(w + h * e) - J(w - h * e)) / (2 * h) for e in np.eye(w.size)])
    assert np.linalg.norm(grad) <= 1e-3 * max(1.0, np.linalg.norm(w))


def _tiny():
    for seed in range(3):
        yield two_moons(1, 5, seed=seed), Settings(kernel="rbf", sigma=0.5, C=10.0, C_star=5.0,
                                                   balance="count")


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("search", ["gradient", "best"])
@pytest.mark.parametrize("case", list(_tiny()), ids=lambda c: "moons")
def test_the_starts_return_a_labeling_and_its_own_J(case, search):
    inst, settings = case
    result = s3vm.solve(inst, "switching", settings, options={"search": search})
    P = settings.positive_count(inst)
    assert np.sum(result.labels == 1) == P
    # J from its definition (an independent QP of the reference module), and not below the
    # optimum over every labeling with the count.
    assert result.objective == pytest.approx(l2_objective(inst, settings, result.labels),
                                             rel=1e-5, abs=1e-6)
    exact = S3VMObjective(inst, settings)
    optimum = min(exact(np.array(b)) for b in itertools.product((-1, 1), repeat=inst.u)
                  if sum(v == 1 for v in b) == P)
    assert result.objective >= optimum - 1e-9 * max(1.0, optimum)
    if search == "best":
        # best keeps the lower J of the two searches, and says both
        starts = result.info["starts"]
        assert result.objective == pytest.approx(min(starts.values()))
        for name in ("anneal", "gradient"):
            alone = s3vm.solve(inst, "switching", settings, options={"search": name})
            assert starts[name] == pytest.approx(alone.objective)


@pytest.mark.slow
def test_best_is_never_above_anneal():
    # Two moons, 2 labeled and 200 unlabeled points.
    moons = two_moons(1, 100, seed=3)
    settings = dict(kernel="rbf", sigma=0.5, C=10.0, balance="count")
    anneal = s3vm.solve(moons, "switching", options={"search": "anneal"}, **settings)
    best = s3vm.solve(moons, "switching", options={"search": "best"}, **settings)
    assert best.objective <= anneal.objective + 1e-9 * anneal.objective


def test_hinge_objective_is_the_svm_optimum():
    # libsvm's solution, checked by duality: the hinge SVM's primal value at it equals the
    # dual value sum(alpha) - 1/2 beta'K beta (alpha_i = y_i beta_i in [0, C_i]) to libsvm's
    # tolerance, and its outputs are SVC's decision function.
    from sklearn.svm import SVC

    data = gaussian_blobs(n=40, p=2, separation=1.5, n_labeled_per_class=20, seed=0)
    settings = Settings(kernel="rbf", sigma=1.0, C=3.0)
    obj = HingeObjective(data, settings)
    y = data.label.astype(float)
    sol = obj.train(y, obj.C)
    alpha = y * sol.beta
    assert np.all(alpha >= -1e-9) and np.all(alpha <= 3.0 + 1e-9)
    assert abs(sol.beta.sum()) < 1e-8   # the bias's condition sum(alpha y) = 0
    dual = alpha.sum() - 0.5 * sol.beta @ obj.K @ sol.beta
    assert sol.value == pytest.approx(dual, rel=1e-2)
    svc = SVC(kernel="rbf", gamma=0.5, C=3.0).fit(data.X, y)
    np.testing.assert_allclose(sol.outputs, svc.decision_function(data.X), atol=1e-6)


@pytest.mark.slow
def test_hinge_switching_runs_and_refuses_what_it_cannot_do():
    moons = two_moons(2, 40, seed=0)
    result = s3vm.solve(moons, "switching", kernel="rbf", sigma=0.5, C=10.0, balance="count",
                        options={"loss": "hinge", "anneal": "joachims"})
    assert np.sum(result.labels == 1) == 40 and np.mean(result.labels == moons.truth_U) > 0.9
    obj = HingeObjective(moons, Settings(kernel="rbf", sigma=0.5, C=10.0, balance="count"))
    assert result.objective == pytest.approx(obj(result.labels), rel=1e-6)
    with pytest.raises(s3vm.InputError, match="bias"):
        s3vm.solve(moons, "switching", kernel="rbf", bias=False, options={"loss": "hinge"})
