"""Equivalence and inequivalence label constraints (De Bie and Cristianini 2006, section 7.3.1;
docs/formulations.md#groups): the signed ``group`` column.

Group |g| of a row, side sign(g) (0: no group): rows of a group on one side share a label, rows on
opposite sides have opposite labels. ``sdp`` writes Gamma = L Gamma_c L' with one row of Gamma_c
per representative; ``sdp-subspace`` and ``sdp-lowrank`` put the groups into the spectral L.
"""

from __future__ import annotations

import itertools
import json
import os
import warnings

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from s3vm import api, cli
from s3vm.core.kernels import kernel_matrix
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance, label_map
from s3vm.data.readers import read_csv
from s3vm.formulations.sdp import SDPRelaxation
from s3vm.formulations.sdp_lowrank import LowRankSDP
from s3vm.formulations.sdp_subspace import SubspaceSDP, subspace_basis
from s3vm.models.spectral import constrained_spectral, knn_affinity, rbf_affinity
from s3vm.models.svm_dual import svm_dual_value
from s3vm.solvers.errors import InputError

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")

SIGMA = 1.5
SOFT = Settings(kernel="rbf", sigma=SIGMA, C=1.0)
HARD = Settings(kernel="rbf", sigma=SIGMA, hard_margin=True)


@pytest.fixture(scope="module")
def small():
    """n = 12, two labeled points per class, u = 8, rows interleaved."""
    inst = gaussian_blobs(n=12, p=2, separation=2.0, n_labeled_per_class=2, seed=7)
    perm = np.random.default_rng(1).permutation(inst.n)
    return Instance(inst.X[perm], inst.label[perm], inst.truth[perm])


def with_group(inst: Instance, group) -> Instance:
    return Instance(inst.X, inst.label, inst.truth, np.asarray(group), inst.feature_names)


def sdp_solution(inst: Instance, settings: Settings):
    built = SDPRelaxation(sdp_form="primal").build_cvxpy(inst, settings)
    built.model.solve(solver="CLARABEL")
    assert built.model.status == "optimal"
    return built.model.value, built


def group_pair(inst: Instance, j: int, k: int, opposite: bool) -> np.ndarray:
    group = np.zeros(inst.n, dtype=int)
    group[j], group[k] = 1, (-1 if opposite else 1)
    return group


def meets_groups(inst: Instance, y: np.ndarray) -> bool:
    """The rule of the group column, read from the column itself (not from label_map): rows of
    one group have y_i sign(g_i) equal."""
    g = inst.group
    for k in np.unique(np.abs(g[g != 0])):
        rows = np.flatnonzero(np.abs(g) == k)
        if len(set(y[rows] * np.sign(g[rows]))) > 1:
            return False
    return True


# -- the representation ----------------------------------------------------------------------
def test_label_map_signs_and_representatives():
    label = np.array([1, -1, 0, 0, 0, 0, 0, 1])
    group = np.array([0, 2, 3, -3, -2, 0, 5, 0])
    lm = label_map(label, group)
    # Row 4 is on the other side of group 2 from row 1 (labeled -1): tied to the labeled class,
    # label +1. Rows 2, 3 form free group 1 (opposite sides); rows 5 and 6 are free singletons.
    np.testing.assert_array_equal(lm.rep, [0, 0, 1, 1, 0, 2, 3, 0])
    np.testing.assert_array_equal(lm.sign, [1, -1, 1, -1, 1, 1, 1, 1])
    assert lm.size == 4
    L = lm.matrix().toarray()
    assert L.shape == (8, 4) and np.all(np.abs(L).sum(axis=1) == 1)
    # Without groups: the labeled class and one representative per unlabeled row.
    plain = label_map(label)
    np.testing.assert_array_equal(plain.rep, [0, 0, 1, 2, 3, 4, 5, 0])
    np.testing.assert_array_equal(plain.sign, [1, -1, 1, 1, 1, 1, 1, 1])


def test_contradictory_group_is_an_input_error_naming_rows_from_0():
    label = np.array([1, -1, 0, 0])
    with pytest.raises(InputError,
                       match=r"rows 0 and 1 .*same side of group 4 \(rows numbered from 0\)"):
        Instance(np.zeros((4, 1)), label, group=np.array([4, 4, 0, 0]))
    with pytest.raises(InputError, match=r"rows 0 and 3 .*labeled alike but on opposite sides"):
        Instance(np.zeros((4, 1)), np.array([1, -1, 0, 1]), group=np.array([2, 0, 0, -2]))
    # Consistent: labeled alike on one side, differently on opposite sides.
    Instance(np.zeros((4, 1)), np.array([1, -1, 0, 1]), group=np.array([2, -2, 2, 2]))


# -- sdp -------------------------------------------------------------------------------------
@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("opposite", [False, True], ids=["equivalence", "inequivalence"])
def test_group_fixes_the_gamma_entry_and_the_labels(small, opposite):
    unl = small.unlabeled
    # Two unlabeled points the free relaxation puts on opposite sides (equivalence) or on the
    # same side (inequivalence): the constraint must change the result.
    _, free = sdp_solution(small, SOFT)
    gu = free.read["gamma_u"]()
    order = np.argsort(gu)
    j, k = (unl[order[0]], unl[order[-1]]) if not opposite else (unl[order[-1]], unl[order[-2]])
    before = free.read["gamma_full"]()[j, k]
    want = -1.0 if opposite else 1.0
    assert abs(before - want) > 0.5
    inst = with_group(small, group_pair(small, j, k, opposite))
    _, built = sdp_solution(inst, SOFT)
    assert built.info["lmi_sizes"] == [small.n + 1, small.u]   # one representative fewer
    assert built.read["gamma_full"]()[j, k] == pytest.approx(want, abs=1e-6)
    result = api.solve(inst, "sdp", solver="clarabel", kernel="rbf", sigma=SIGMA, C=1.0)
    labels = dict(zip(unl, result.labels))
    assert labels[j] * labels[k] == want


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("settings", [SOFT, HARD], ids=["soft", "hard"])
def test_group_bound_is_below_the_enumerated_optimum(small, settings):
    """Groups: an equivalence among unlabeled points, an inequivalence, and an unlabeled point
    tied to a labeled one. The SDP optimum bounds min D(y) over the labelings that meet them."""
    unl, lab = small.unlabeled, small.labeled
    group = np.zeros(small.n, dtype=int)
    group[[unl[0], unl[1]]] = 1
    group[[unl[2], unl[3]]] = [2, -2]
    group[[lab[0], unl[4]]] = [3, -3]
    inst = with_group(small, group)
    K = kernel_matrix(inst.X, None, "rbf", SIGMA)
    C = None if settings.hard_margin else np.ones(inst.n)
    values = []
    for labels in itertools.product((-1, 1), repeat=inst.u):
        y = inst.label.astype(float)
        y[unl] = labels
        if meets_groups(inst, y):
            values.append(svm_dual_value(K, y, C)[0])
    assert len(values) == 2 ** (inst.u - 3)
    bound, _ = sdp_solution(inst, settings)
    free_bound, _ = sdp_solution(small, settings)
    assert free_bound <= bound + 1e-6 * max(1.0, bound)   # constraints can only raise it
    assert bound <= min(values) + 1e-6 * max(1.0, min(values))
    result = api.solve(inst, "sdp", settings, solver="clarabel")
    y = inst.label.astype(float)
    y[unl] = result.labels
    assert meets_groups(inst, y)
    assert result.lower_bound <= result.objective + 1e-6


@pytest.mark.solver
@pytest.mark.slow
def test_singleton_groups_change_nothing(small):
    plain, _ = sdp_solution(small, SOFT)
    for group in (np.zeros(small.n, dtype=int), 1 + np.arange(small.n),
                  -(1 + np.arange(small.n))):
        value, built = sdp_solution(with_group(small, group), SOFT)
        assert value == pytest.approx(plain, rel=1e-7)
        assert built.info["lmi_sizes"] == [small.n + 1, small.u + 1]


@pytest.mark.solver
def test_count_balance_with_groups_is_met_when_reachable(small):
    unl = small.unlabeled
    group = np.zeros(small.n, dtype=int)
    group[[unl[0], unl[1]]] = [1, -1]        # one +1 and one -1 whatever the sign
    inst = with_group(small, group)
    result = api.solve(inst, "sdp", solver="clarabel", kernel="rbf", sigma=SIGMA, C=1.0,
                       balance="count", positives=3)
    assert int(np.sum(result.labels == 1)) == 3
    assert result.labels[0] == -result.labels[1]


# -- sdp-subspace and sdp-lowrank -----------------------------------------------------------
def test_spectral_subspace_meets_the_groups(small):
    unl = small.unlabeled
    group = np.zeros(small.n, dtype=int)
    group[[unl[0], unl[1], unl[2]]] = [1, 1, -1]
    inst = with_group(small, group)
    A = rbf_affinity(inst.X, SIGMA)
    res = constrained_spectral(A, inst.label, 3, "dense", group=inst.group)
    assert res.L.shape == (inst.n, 2 + inst.u - 2)
    np.testing.assert_allclose(res.V[unl[0]], res.V[unl[1]], atol=1e-9)
    np.testing.assert_allclose(res.V[unl[0]], -res.V[unl[2]], atol=1e-9)
    D = np.diag(A.sum(axis=1))
    L = res.L.toarray()
    for lam, zi in zip(res.values, res.eigenvectors.T):
        np.testing.assert_allclose(L.T @ (D - A - lam * D) @ L @ zi, 0, atol=1e-9)
    # The sparse path (complete graph) solves the same problem.
    As, _ = knn_affinity(inst.X, SIGMA, neighbors=inst.n - 1)
    sparse = constrained_spectral(As, inst.label, 3, "sparse", group=inst.group)
    np.testing.assert_allclose(sparse.values, res.values, rtol=1e-6, atol=1e-10)
    assert np.max(subspace_angles(sparse.V, res.V)) < 1e-6


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_subspace_and_lowrank_meet_the_groups_and_agree(small, kernel):
    unl, lab = small.unlabeled, small.labeled
    group = np.zeros(small.n, dtype=int)
    group[[unl[0], unl[1]]] = [1, -1]
    group[[lab[0], unl[2]]] = 2
    inst = with_group(small, group)
    settings = Settings(kernel=kernel, sigma=SIGMA, C=1.0)
    V = subspace_basis(inst, 3)
    sub = SubspaceSDP(dim=3).build_cvxpy(inst, settings, V=V)
    sub.model.solve(solver="CLARABEL")
    low = LowRankSDP(dim=3, rank=inst.n).build_cvxpy(inst, settings, V=V)
    low.model.solve(solver="CLARABEL")
    assert -low.model.value == pytest.approx(sub.model.value, rel=1e-5)
    Gamma = sub.read["gamma_full"]()
    assert Gamma[unl[0], unl[1]] == pytest.approx(-Gamma[unl[0], unl[0]], abs=1e-9)
    assert Gamma[lab[0], unl[2]] == pytest.approx(Gamma[lab[0], lab[0]], abs=1e-9)
    for name in ("sdp-subspace", "sdp-lowrank"):
        result = api.solve(inst, name, settings, solver="clarabel",
                           options={"dim": 3} if name == "sdp-subspace" else
                           {"dim": 3, "rank": inst.n})
        assert result.labels[0] == -result.labels[1]
        assert result.labels[2] == small.label[lab[0]]


@pytest.mark.solver
def test_dim_limit_counts_free_groups(small):
    group = np.zeros(small.n, dtype=int)
    group[small.unlabeled[:4]] = 1                  # u = 8 -> 5 free representatives
    inst = with_group(small, group)
    api.solve(inst, "sdp-subspace", solver="clarabel", kernel="rbf", sigma=SIGMA,
              options={"dim": 6})
    with pytest.raises(InputError, match="d larger than u \\+ 1.*free groups"):
        api.solve(inst, "sdp-subspace", kernel="rbf", sigma=SIGMA, options={"dim": 7})


# -- MOSEK Fusion: build and export only (solving needs a licence) ---------------------------
@pytest.mark.solver
@pytest.mark.slow
def test_fusion_models_honour_the_groups(tmp_path, small, monkeypatch):
    mf = pytest.importorskip("mosek.fusion", reason="the mosek package is not installed")
    import s3vm.models.fusion.sdp as fsdp

    from test_fusion import read_cbf

    unl, lab = small.unlabeled, small.labeled
    group = np.zeros(small.n, dtype=int)
    group[[unl[0], unl[1]]] = [1, -1]
    group[[lab[0], unl[2]]] = 2
    inst = with_group(small, group)
    settings = Settings(kernel="rbf", sigma=SIGMA, C=1.0, balance="count", positives=4)
    ref_value, ref = sdp_solution(inst, settings)
    m = inst.label_map().size - 1
    built = SDPRelaxation(sdp_form="primal").build(inst, settings, "fusion")
    try:
        assert isinstance(built.model, mf.Model)
        assert built.info == ref.info
        assert built.model.getVariable("gamma_u").getSize() == m
        values = {v.name(): np.asarray(v.value) for v in ref.model.variables()}
        iu, ju = np.triu_indices(m, k=1)
        by_var = {id(built.model.getVariable("gamma_u")): values["gamma_u"],
                  id(built.model.getVariable("Gamma_uu")): values["Gamma_uu"][iu, ju]}
        monkeypatch.setattr(fsdp, "levels", lambda var, size: by_var[id(var)])
        np.testing.assert_allclose(built.read["gamma_full"](), ref.read["gamma_full"](),
                                   atol=1e-9)
        path = tmp_path / "sdp.cbf"
        built.model.writeTask(str(path))
    finally:
        built.model.dispose()
    problem = read_cbf(path)
    problem.solve(solver="CLARABEL")
    assert problem.value == pytest.approx(ref_value, rel=1e-5)
    # sdp-subspace and sdp-lowrank take the grouped V; exported through the CLI path.
    for name in ("sdp-subspace", "sdp-lowrank"):
        target = tmp_path / f"{name}.ptf"
        api.export(inst, name, str(target), "ptf", settings, options={"dim": 3})
        assert target.stat().st_size > 0


# -- the command line ------------------------------------------------------------------------
def write_grouped_csv(path, inst: Instance, group) -> str:
    """The CSV contract with a group column, written directly (an Instance refuses bad groups)."""
    rows = np.column_stack([inst.X, inst.label, inst.truth, group])
    with open(path, "w") as fh:
        fh.write("x0,x1,label,truth,group\n")
        for x0, x1, label, truth, g in rows:
            fh.write(f"{float(x0)!r},{float(x1)!r},{int(label)},{int(truth)},{int(g)}\n")
    return str(path)


def cli_sdp_labels(data, capsys) -> list:
    """The labels of ``s3vm solve DATA -f sdp`` (rbf, Clarabel) read from its JSON; exit 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = cli.main(["solve", data, "-f", "sdp", "--kernel", "rbf", "--sigma", str(SIGMA),
                           "--solver", "clarabel", "--json"])
    out, _ = capsys.readouterr()
    assert status == 0
    return json.loads(out)["labels"]


@pytest.mark.solver
def test_cli_solves_with_a_group_column(capsys, tmp_path, small):
    unl = small.unlabeled
    group = np.zeros(small.n, dtype=int)
    group[[unl[0], unl[1]]] = [5, -5]
    data = write_grouped_csv(tmp_path / "grouped.csv", small, group)
    assert np.array_equal(read_csv(data).group, group)
    labels = cli_sdp_labels(data, capsys)
    assert labels[0] == -labels[1]


@pytest.mark.parametrize("command", ["solve", "export"])
def test_cli_contradictory_groups_exit_2_naming_rows(capsys, tmp_path, small, command):
    lab = small.labeled
    pos = lab[small.label[lab] == 1]
    neg = lab[small.label[lab] == -1]
    group = np.zeros(small.n, dtype=int)
    group[[pos[0], neg[0]]] = 3                      # labeled differently on one side
    data = write_grouped_csv(tmp_path / "bad.csv", small, group)
    target = tmp_path / "model.cbf"
    argv = ["solve", data, "-f", "sdp", "--json"] if command == "solve" else \
        ["export", data, "-f", "sdp", "-o", str(target)]
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("s3vm: error:")
    a, b = sorted((pos[0] + 1, neg[0] + 1))         # 1-based data rows
    assert f"rows {a} and {b}" in lines[0] and "numbered from 1" in lines[0]
    assert not os.path.exists(target)
    assert sorted(os.listdir(tmp_path)) == ["bad.csv"]


@pytest.mark.parametrize("formulation", ["rlp", "svm1", "vs3vm"])
def test_formulations_without_groups_refuse_a_group_column(capsys, tmp_path, small, formulation):
    group = np.zeros(small.n, dtype=int)
    group[small.unlabeled[:2]] = 7
    data = write_grouped_csv(tmp_path / "grouped.csv", small, group)
    status = cli.main(["solve", data, "-f", formulation, "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "group" in err


@pytest.mark.solver
def test_an_all_zero_group_column_is_no_constraint(capsys, tmp_path, small):
    data = write_grouped_csv(tmp_path / "nogroups.csv", small, np.zeros(small.n, dtype=int))
    assert cli.main(["solve", data, "-f", "rlp", "--json"]) == 0
    capsys.readouterr()


# -- group ids are read exactly or refused ----------------------------------------------------
def write_group_cells(path, inst: Instance, cells: dict) -> str:
    """The instance as CSV with the group column written as the given text (row -> cell)."""
    rows = ["x1,x2,label,group"]
    for i in range(inst.n):
        rows.append(f"{float(inst.X[i, 0])!r},{float(inst.X[i, 1])!r},{int(inst.label[i])},"
                    f"{cells.get(i, '0')}")
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.mark.parametrize("formulation", ["sdp", "sdp-lowrank"])
@pytest.mark.parametrize("ids", [("1e19", "-1e19"), ("10000000000000000000", "-2e19"),
                                 ("9223372036854775808", "-5")])
def test_group_ids_beyond_int64_exit_2_with_one_line(capsys, tmp_path, small, formulation, ids):
    """Such ids once wrapped to the same int64 (1e19 and 2e19 alike) and put rows on one side."""
    unl = small.unlabeled
    data = write_group_cells(tmp_path / "huge.csv", small, {unl[0]: ids[0], unl[1]: ids[1]})
    status = cli.main(["solve", data, "-f", formulation, "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("s3vm: error:") and "group" in lines[0]
    assert f"row {unl[0] + 1}" in lines[0] or f"row {unl[1] + 1}" in lines[0]


@pytest.mark.solver
@pytest.mark.slow
def test_group_ids_beyond_2_to_the_53_are_read_exactly(capsys, tmp_path, small):
    """2^53 + 1 and 2^53 are one float: read as floats, +(2^53 + 1) and -2^53 were one group
    on two sides; they are two groups, and +-(2^53 + 1) stays one group on two sides."""
    unl = small.unlabeled
    big = 2 ** 53
    data = write_group_cells(tmp_path / "exact.csv", small,
                             {unl[0]: str(big + 1), unl[1]: str(-big), unl[2]: str(big + 1),
                              unl[3]: str(-(big + 1))})
    group = read_csv(data).group
    assert group[unl[0]] == big + 1 and group[unl[1]] == -big
    assert group[unl[3]] == -(big + 1)
    labels = np.asarray(cli_sdp_labels(data, capsys))
    position = {row: k for k, row in enumerate(unl)}
    y = np.asarray(small.label, dtype=int).copy()
    y[unl] = labels
    with_ids = Instance(small.X, small.label, small.truth, group, small.feature_names)
    assert meets_groups(with_ids, y)
    assert labels[position[unl[0]]] == labels[position[unl[2]]] == -labels[position[unl[3]]]


@pytest.mark.parametrize("group, message", [
    ([10 ** 19], "2^63"),
    (np.array([2 ** 63], dtype=np.uint64), "2^63"),
    ([2.0 ** 60], "2^53"),
    ([1.5], "integers"),
])
def test_in_memory_group_ids_that_cannot_be_kept_exactly_are_input_errors(small, group, message):
    column = np.zeros(small.n, dtype=object if isinstance(group, list) else np.asarray(group).dtype)
    column[small.unlabeled[0]] = group[0]
    with pytest.raises(InputError, match=message.replace("^", r"\^")):
        Instance(small.X, small.label, small.truth, column, small.feature_names)
