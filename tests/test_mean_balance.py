"""``--balance mean`` (the balance of Piccialli, Schwiddessen and Sudoso 2024) for bb, bb-sdp and
l2-miqp, against an enumeration of labelings; and SDP-S3VM's parameter selection.

The reference J_mean is computed here from the primal (docs/formulations.md#balance): with
K = G G' and an output o_i = f_i + e_i per point,

    J_mean(y) = min 1/2 |c|^2 + sum_i C_i e_i^2   s.t.  f = G c (+ b),  y o (f + e) >= 1,
                                                       sum_{j in U} (f_j + e_j) = u mean(y_L),

one CVXPY problem with the labels as parameters, solved by Clarabel at every labeling (the code
under test works in output space with K'^-1 and an active-set method, or, for l2-miqp, hands a
MIQP to SCIP).
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from s3vm import api, cli
from s3vm.core.settings import Settings
from s3vm.data.generators import noisy_linear, two_moons
from s3vm.selection import penalty_grid, select_parameters, stratified_folds

from reference import L2Reference

cp = pytest.importorskip("cvxpy")
RTOL = 1e-6


class MeanReference(L2Reference):
    """J_mean at every labeling (:class:`reference.L2Reference` with the mean row), and the
    least."""

    def __init__(self, instance, settings):
        super().__init__(instance, settings)
        self.values = self.all_values()
        self.best = min(self.values.values())

    def J(self, labels_U):
        return self(labels_U)


CASES = {
    "rbf_bias": (lambda: noisy_linear(per_class=3, u=9, p=2, noise=1.0, seed=1),
                 Settings(kernel="rbf", sigma=1.0, C=2.0, C_star=0.7, bias=True, balance="mean")),
    "linear_nobias": (lambda: noisy_linear(per_class=2, u=10, p=3, noise=1.2, seed=6),
                      Settings(kernel="linear", C=3.0, C_star=0.6, bias=False, balance="mean")),
    "moons_bias": (lambda: two_moons(n_per_class_labeled=3, n_unlabeled_per_class=5, noise=0.1,
                                     seed=2),
                   Settings(kernel="rbf", sigma=0.5, C=10.0, C_star=6.0, bias=True,
                            balance="mean")),
}


@functools.lru_cache(maxsize=None)
def case(name):
    build, settings = CASES[name]
    instance = build()
    return instance, settings, MeanReference(instance, settings)


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("formulation,name", [
    ("bb", "rbf_bias"), ("bb", "linear_nobias"), ("bb", "moons_bias"),
    ("bb-sdp", "linear_nobias"), ("l2-miqp", "rbf_bias"), ("l2-miqp", "linear_nobias"),
])
def test_mean_balance_optimum_equals_enumeration(formulation, name):
    instance, settings, ref = case(name)
    if formulation == "l2-miqp":
        pytest.importorskip("pyscipopt")
    result = api.solve(instance, formulation, settings)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(ref.best, rel=RTOL)
    assert ref.J(np.asarray(result.labels)) == pytest.approx(ref.best, rel=RTOL)
    assert result.lower_bound <= result.objective * (1 + 1e-6)
    assert result.info["settings"]["balance"] == "mean"


@pytest.mark.slow
@pytest.mark.solver
def test_mean_balance_is_not_the_count():
    """The balance is on the clipped outputs: the optimal labeling's outputs sum to the target,
    and J_mean is at least J without balance at every labeling."""
    from s3vm.models.l2_svm import S3VMObjective
    from s3vm.models.output_space import MeanBalanceObjective

    instance, settings, ref = case("moons_bias")
    mean = MeanBalanceObjective(instance, settings)
    plain = S3VMObjective(instance, settings)
    rng = np.random.default_rng(0)
    for _ in range(10):
        labels = rng.choice([-1, 1], instance.u)
        sol = mean.solve(labels)
        assert sol.value >= plain(labels) * (1 - 1e-9)
        if np.isfinite(sol.value):
            assert sol.v[instance.unlabeled].sum() == pytest.approx(mean.rhs, abs=1e-8)
            assert sol.value == pytest.approx(ref.J(labels), rel=RTOL)


def test_stratified_folds_are_scikit_learn_0_17():
    """Per class, KFold over its positions in order, the first count % k folds one larger."""
    y = np.array([1, 1, -1, 1, -1, 1, 1, -1, 1, 1, -1, -1, 1])
    folds = stratified_folds(y, 3)
    test_of = np.empty(y.size, dtype=int)
    for f, (train, test) in enumerate(folds):
        test_of[test] = f
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == y.size
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == -1)   # 8 and 5 points
    np.testing.assert_array_equal(test_of[pos], [0, 0, 0, 1, 1, 1, 2, 2])
    np.testing.assert_array_equal(test_of[neg], [0, 0, 1, 1, 2])
    assert len(penalty_grid()) == 21
    assert penalty_grid()[0] == 0.01 and abs(penalty_grid()[-1] - 100.0) < 1e-8


@pytest.mark.slow
def test_selection_and_the_penalty_convention(capsys, tmp_path):
    from s3vm.data.loaders import load_sdp_instance

    instance = load_sdp_instance("art100", 0.3, seed=0, rounding="floor")
    chosen = select_parameters(instance)
    assert chosen.kernel in ("linear", "rbf") and chosen.C in chosen.grid
    assert chosen.C_star == pytest.approx(chosen.C * 30 / 70)
    assert chosen.sigma == pytest.approx(1.0)          # gamma = 1/p with p = 2
    best = max(acc for acc, _ in chosen.accuracy.values())
    assert chosen.accuracy[chosen.kernel][0] == best
    # The command line prints the choice for a shipped instance as flags, and writes an
    # instance file that solves SDP-S3VM's problem.
    from s3vm.core.settings import load_instance

    shipped, _ = load_instance("sdp_art100")
    expected = select_parameters(shipped)
    path = tmp_path / "art100-selected.toml"
    status = cli.main(["select", "sdp_art100", "-o", str(path)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert expected.flags() in out and "--balance mean" in out and "--no-bias" in out
    inst, settings = load_instance(str(path))
    assert settings.balance == "mean" and settings.bias is False
    assert settings.C == expected.C and settings.C_star == expected.C_star
    assert inst.n == shipped.n


def test_select_with_fewer_labeled_points_of_a_class_than_folds(capsys):
    # two_moons has 2 labeled points per class: 10 folds ended in "internal error: TypeError"
    # (folds without a point of a class, an accuracy of NaN and no C chosen).
    from s3vm.core.settings import load_instance

    status = cli.main(["select", "two_moons", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    result = json.loads(out)
    assert result["folds"] == 2
    assert "2 folds instead of 10" in err
    instance, _ = load_instance("two_moons")
    # By hand: 2 folds, each testing one point of each class and training on the other two.
    folds = stratified_folds(instance.label[instance.labeled], 2)
    assert all(set(instance.label[instance.labeled][test]) == {-1, 1} for _, test in folds)
    assert select_parameters(instance, folds=2).flags() == result["flags"]


@pytest.mark.slow
def test_select_warns_at_the_edge_of_its_grid_and_says_what_it_wrote(capsys, tmp_path):
    # heart's unscaled features, folds in file order: C = 0.01, the smallest of the grid,
    # chosen without a word.
    path = tmp_path / "heart-selected.toml"
    status = cli.main(["select", "heart", "--file-order", "-o", str(path)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "--C 0.01 " in out
    assert "smallest value of the grid" in err and "--scale standard" in err
    assert f"wrote {path}" in err and path.exists()
    assert "Traceback" not in err
