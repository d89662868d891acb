"""The MOSEK Fusion models of the SDP formulations, their CBF/PTF export and the mosek-fusion
backend.

There is usually no MOSEK licence where these tests run, and MOSEK solves nothing without one.
Fusion models are built and written without a licence, so the check of a model is independent
of MOSEK: the exported CBF file is read back by :func:`read_cbf` below (written from the CBF
specification, for the subset of keywords MOSEK writes), turned into a CVXPY problem, solved
with Clarabel and compared with the formulation's own CVXPY model (``sdp``; ``sdp-subspace`` and
``sdp-lowrank`` with the same V and kernel factor). A wrong coefficient, sign, scale (CBF matrix
entries are plain, not svec-scaled) or index in a Fusion builder shows as a different optimum.
Solves through MOSEK itself run only with a licence; the backend's status mapping is checked on
a stand-in model.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from s3vm import cli
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.sdp import SDPRelaxation
from s3vm.solvers.backends.pyomo.mosek import mosek_licence_problem
from s3vm.solvers.profiles import SolverProfile
from s3vm.solvers.registry import BACKENDS, installed_solvers

mf = pytest.importorskip("mosek.fusion", reason="the mosek package is not installed")

LICENCE = mosek_licence_problem()
needs_licence = pytest.mark.skipif(LICENCE is not None, reason=f"MOSEK cannot solve: {LICENCE}")


# -- an independent CBF reader ---------------------------------------------------------------

class CbfError(ValueError):
    pass


def _parse_cbf(text: str) -> dict:
    """Keyword -> (header tokens, data rows of tokens) for the blocks of a CBF file."""
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    blocks, i = {}, 0
    counts = {  # how many lines follow the header line(s), given the header tokens
        "VER": None, "OBJSENSE": None, "VAR": lambda h: int(h[1]), "INT": lambda h: int(h[0]),
        "PSDVAR": lambda h: int(h[0]), "CON": lambda h: int(h[1]), "PSDCON": lambda h: int(h[0]),
        "OBJFCOORD": lambda h: int(h[0]), "OBJACOORD": lambda h: int(h[0]), "OBJBCOORD": None,
        "FCOORD": lambda h: int(h[0]), "ACOORD": lambda h: int(h[0]),
        "BCOORD": lambda h: int(h[0]), "HCOORD": lambda h: int(h[0]),
        "DCOORD": lambda h: int(h[0]),
    }
    while i < len(lines):
        key = lines[i]
        i += 1
        if not key:
            continue
        if key not in counts:
            raise CbfError(f"CBF keyword {key!r} is not in the subset this reader knows")
        if key in blocks:
            raise CbfError(f"CBF keyword {key} twice")
        header = lines[i].split()
        i += 1
        size = 0 if counts[key] is None else counts[key](header)
        rows = [lines[i + k].split() for k in range(size)]
        i += size
        blocks[key] = (header, rows)
    return blocks


def _cone_constraints(cp, expr, cones):
    """Constraints putting the consecutive pieces of ``expr`` in the CBF cones ``cones``."""
    out, at = [], 0
    for name, dim in cones:
        piece = expr[at:at + dim]
        at += dim
        if name == "F":
            continue
        if name == "L+":
            out.append(piece >= 0)
        elif name == "L-":
            out.append(piece <= 0)
        elif name == "L=":
            out.append(piece == 0)
        elif name == "Q":
            out.append(cp.SOC(piece[0], piece[1:]))
        elif name == "QR":  # 2 x1 x2 >= |x3..|^2, x1, x2 >= 0
            out.append(cp.SOC(piece[0] + piece[1], cp.hstack([piece[0] - piece[1],
                                                               np.sqrt(2) * piece[2:]])))
            out += [piece[0] >= 0, piece[1] >= 0]
        else:
            raise CbfError(f"CBF cone {name!r} is not in the subset this reader knows")
    return out


def read_cbf(path):
    """A ``cvxpy.Problem`` equal to the CBF file at ``path``.

    The problem (CBF specification): min/max  a_obj'x + <F_obj, X> + b_obj  s.t.
    A x + F(X) + b in the CON cones, x in the VAR cones, X_j PSD (PSDVAR), and for every PSDCON
    i: sum_j x_j H_ij + D_i PSD. Matrix entries (FCOORD, HCOORD, DCOORD) give one triangle of a
    symmetric matrix, so (k, l) and (l, k) both receive the value.
    """
    import cvxpy as cp
    import scipy.sparse as sp

    with open(path) as fh:
        blocks = _parse_cbf(fh.read())
    if "INT" in blocks:
        raise CbfError("integer variables: not a continuous conic problem")
    sense = blocks["OBJSENSE"][0][0]
    nvar, _ = map(int, blocks["VAR"][0])
    x = cp.Variable(nvar)
    cones = lambda key: [(r[0], int(r[1])) for r in blocks[key][1]]  # noqa: E731
    constraints = _cone_constraints(cp, x, cones("VAR"))

    psdvar = [int(r[0]) for r in blocks.get("PSDVAR", (None, []))[1]]
    X = [cp.Variable((m, m), PSD=True) for m in psdvar]

    def sym(m, entries):
        M = np.zeros((m, m))
        for k, l, v in entries:
            M[k, l] += v
            if k != l:
                M[l, k] += v
        return M

    def rows_of(key):
        return blocks.get(key, (None, []))[1]

    c = np.zeros(nvar)
    for j, v in rows_of("OBJACOORD"):
        c[int(j)] += float(v)
    obj = c @ x
    if "OBJBCOORD" in blocks:
        obj = obj + float(blocks["OBJBCOORD"][0][0])
    for j in sorted({int(r[0]) for r in rows_of("OBJFCOORD")}):
        F = sym(psdvar[j], [(int(k), int(l), float(v)) for jj, k, l, v in rows_of("OBJFCOORD")
                            if int(jj) == j])
        obj = obj + cp.trace(F @ X[j])

    if "CON" in blocks:
        ncon, _ = map(int, blocks["CON"][0])
        entries = [(int(i), int(j), float(v)) for i, j, v in rows_of("ACOORD")]
        A = sp.coo_matrix(([e[2] for e in entries], ([e[0] for e in entries],
                                                     [e[1] for e in entries])),
                          shape=(ncon, nvar)).tocsr()
        b = np.zeros(ncon)
        for i, v in rows_of("BCOORD"):
            b[int(i)] += float(v)
        g = A @ x + b
        fparts = {}
        for i, j, k, l, v in rows_of("FCOORD"):
            fparts.setdefault((int(i), int(j)), []).append((int(k), int(l), float(v)))
        if fparts:
            extra = []
            for i in range(ncon):
                terms = [cp.trace(sym(psdvar[j], e) @ X[j]) for (ii, j), e in fparts.items()
                         if ii == i]
                extra.append(cp.sum(cp.hstack(terms)) if terms else cp.Constant(0.0))
            g = g + cp.hstack(extra)
        constraints += _cone_constraints(cp, g, cones("CON"))

    for i, row in enumerate(rows_of("PSDCON")):
        m = int(row[0])
        ent, var, val = [], [], []
        for ci, j, k, l, v in rows_of("HCOORD"):
            if int(ci) != i:
                continue
            k, l = int(k), int(l)
            for a, b_ in {(k, l), (l, k)}:
                ent.append(a * m + b_)
                var.append(int(j))
                val.append(float(v))
        H = sp.coo_matrix((val, (ent, var)), shape=(m * m, nvar)).tocsr()
        D = sym(m, [(int(k), int(l), float(v)) for ci, k, l, v in rows_of("DCOORD")
                    if int(ci) == i])
        G = cp.reshape(H @ x, (m, m), order="C") + D
        constraints.append((G + G.T) / 2 >> 0)

    objective = cp.Minimize(obj) if sense == "MIN" else cp.Maximize(obj)
    return cp.Problem(objective, constraints)


@pytest.mark.solver
def test_cbf_reader_on_a_small_known_problem(tmp_path):
    """The reader itself, on a problem with a known optimum: min t + x s.t. [[t, 1], [1, x]]
    PSD (t x >= 1), 0 <= x <= 0.5. Then t = 1/x and t + x falls on (0, 1]: optimum 2.5 at
    x = 0.5. The constant 1 and the bound on x go to different CBF blocks (DCOORD, a CON row)."""
    path = str(tmp_path / "small.cbf")
    with mf.Model("small") as M:
        x = M.variable("x", 1, mf.Domain.greaterThan(0.0))
        t = M.variable("t", 1, mf.Domain.unbounded())
        M.constraint("lmi", mf.Expr.vstack(mf.Expr.hstack(t, mf.Expr.constTerm(1.0)),
                                           mf.Expr.hstack(mf.Expr.constTerm(1.0), x)),
                     mf.Domain.inPSDCone(2))
        M.constraint("cap", x, mf.Domain.lessThan(0.5))
        M.objective(mf.ObjectiveSense.Minimize, mf.Expr.add(t, x))
        M.writeTask(path)
    problem = read_cbf(path)
    problem.solve(solver="CLARABEL")
    assert problem.value == pytest.approx(2.5, rel=1e-6)


@pytest.mark.solver
def test_cbf_reader_on_a_psd_variable(tmp_path):
    """The PSDVAR / FCOORD / OBJFCOORD part of the reader (MOSEK writes those for a Fusion PSD
    variable; the s3vm models have none): min tr X s.t. X PSD (2 x 2), X_01 = 1, X_00 >= 2.
    Optimum 2.5 at X = [[2, 1], [1, 0.5]]."""
    path = str(tmp_path / "psdvar.cbf")
    with mf.Model("psdvar") as M:
        X = M.variable("X", mf.Domain.inPSDCone(2))
        M.constraint("off", X.index(0, 1), mf.Domain.equalsTo(1.0))
        M.constraint("corner", X.index(0, 0), mf.Domain.greaterThan(2.0))
        M.objective(mf.ObjectiveSense.Minimize, mf.Expr.add(X.index(0, 0), X.index(1, 1)))
        M.writeTask(path)
    with open(path) as fh:
        assert "PSDVAR" in fh.read()
    problem = read_cbf(path)
    problem.solve(solver="CLARABEL")
    assert problem.value == pytest.approx(2.5, rel=1e-6)


# -- instances -------------------------------------------------------------------------------

def small_instance(seed=0, n_per_class=6, labeled_per_class=2, p=12):
    """Two Gaussian classes in R^p, 2 labeled points each, labeled rows interleaved (so the
    labeled-first reordering of the builders matters). p >= n keeps the linear kernel matrix
    nonsingular: with p = 2 the linear-kernel SDP is degenerate and Clarabel reports
    optimal_inaccurate on the CVXPY model itself."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.0, 1.0, (n_per_class, p)),
                   rng.normal(2.0 / np.sqrt(p), 1.0, (n_per_class, p))])
    truth = np.repeat([1, -1], n_per_class)
    label = np.zeros(2 * n_per_class, dtype=int)
    for cls in (1, -1):
        label[np.flatnonzero(truth == cls)[:labeled_per_class]] = cls
    perm = rng.permutation(len(truth))
    return Instance(X[perm], label[perm], truth=truth[perm])


# Chosen so that every part of the model is active: C binds (soft < hard), C* differs from C,
# the balance moves the optimum (count != none).
CASES = {
    "soft-linear": Settings(kernel="linear", C=0.05),
    "hard-linear": Settings(kernel="linear", hard_margin=True),
    "soft-rbf-C*-count": Settings(kernel="rbf", sigma=4.0, C=2.0, C_star=0.3, balance="count",
                                  positives=3),
    "hard-rbf": Settings(kernel="rbf", sigma=4.0, hard_margin=True),
    "hard-rbf-count": Settings(kernel="rbf", sigma=4.0, hard_margin=True, balance="count",
                               positives=2),
}


@pytest.fixture(scope="module")
def instance():
    return small_instance()


@pytest.fixture(scope="module")
def cvxpy_optima(instance):
    """The optimum of SDPRelaxation.build_cvxpy per case, solved with Clarabel."""
    out = {}
    for key, settings in CASES.items():
        problem = SDPRelaxation(sdp_form="primal").build(instance, settings, "cvxpy").model
        problem.solve(solver="CLARABEL")
        assert problem.status == "optimal", (key, problem.status)
        out[key] = problem.value
    return out


@pytest.mark.solver
@pytest.mark.slow
def test_every_part_of_the_model_is_active(cvxpy_optima):
    """Otherwise the cross-check below could not see an error in that part."""
    o = cvxpy_optima
    assert o["soft-linear"] < o["hard-linear"] - 1e-3
    assert o["hard-rbf-count"] > o["hard-rbf"] + 1e-3
    assert o["soft-rbf-C*-count"] < o["hard-rbf"] - 1e-3


# -- the model and its files -----------------------------------------------------------------

def test_build_without_licence_gives_scalar_variables_in_two_lmis(instance):
    settings = CASES["soft-rbf-C*-count"]
    built = SDPRelaxation(sdp_form="primal").build(instance, settings, "fusion")
    try:
        model = built.model
        assert isinstance(model, mf.Model)
        n, u = instance.n, instance.u
        assert built.info["lmi_sizes"] == [n + 1, u + 1]
        assert set(built.read) == {"gamma_u", "gamma_full"}
        sizes = {name: model.getVariable(name).getSize()
                 for name in ("gamma_u", "Gamma_uu", "nu", "mu", "t")}
        assert sizes == {"gamma_u": u, "Gamma_uu": u * (u - 1) // 2, "nu": n, "mu": n, "t": 1}
        assert model.hasConstraint("balance")
    finally:
        built.model.dispose()


@pytest.mark.solver
def test_readers_rebuild_gamma_like_the_cvxpy_model(monkeypatch, instance):
    """gamma_u / gamma_full of the Fusion model, fed the CVXPY solution's values (no licence
    needed: the level reader is replaced), give the CVXPY model's gamma_u / gamma_full."""
    import s3vm.models.fusion.sdp as fsdp

    settings = CASES["soft-rbf-C*-count"]
    ref = SDPRelaxation(sdp_form="primal").build(instance, settings, "cvxpy")
    ref.model.solve(solver="CLARABEL")
    values = {v.name(): np.asarray(v.value) for v in ref.model.variables()}
    iu, ju = np.triu_indices(instance.u, k=1)
    built = SDPRelaxation(sdp_form="primal").build(instance, settings, "fusion")
    try:
        model = built.model
        by_var = {id(model.getVariable("gamma_u")): values["gamma_u"],
                  id(model.getVariable("Gamma_uu")): values["Gamma_uu"][iu, ju]}
        monkeypatch.setattr(fsdp, "levels", lambda var, size: by_var[id(var)])
        np.testing.assert_allclose(built.read["gamma_u"](), ref.read["gamma_u"](), atol=1e-12)
        np.testing.assert_allclose(built.read["gamma_full"](), ref.read["gamma_full"](),
                                   atol=1e-12)
    finally:
        built.model.dispose()


@pytest.mark.solver
@pytest.mark.parametrize("case", list(CASES))
def test_exported_cbf_has_the_cvxpy_optimum(tmp_path, instance, cvxpy_optima, case):
    """The cross-check: CBF written by MOSEK, read by read_cbf, solved by Clarabel."""
    path = tmp_path / "model.cbf"
    SDPRelaxation(sdp_form="primal").export(instance, CASES[case], str(path), "cbf")
    text = path.read_text()
    # Scalar variables in affine matrix constraints only: no PSD variable in the file.
    assert "PSDCON" in text and "PSDVAR" not in text and "FCOORD" not in text
    problem = read_cbf(path)
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal"
    assert problem.value == pytest.approx(cvxpy_optima[case], rel=1e-5)


def test_exported_ptf_names_the_model(tmp_path, instance):
    path = tmp_path / "model.ptf"
    SDPRelaxation(sdp_form="primal").export(instance, CASES["soft-linear"], str(path), "ptf")
    text = path.read_text()
    assert text.startswith("Task sdp")
    for name in ("gamma_u", "Gamma_uu", "nu", "mu", "t[0]", "head", "svm"):
        assert name in text, name
    assert "SVECPSD" in text


@pytest.mark.parametrize("fmt, explicit", [("cbf", True), ("ptf", True), ("cbf", False),
                                           ("ptf", False)])
def test_cli_export(capsys, tmp_path, instance, fmt, explicit):
    data = tmp_path / "data.csv"
    instance.to_csv(str(data))
    outdir = tmp_path / "out"
    outdir.mkdir()
    target = outdir / f"model.{fmt}"
    argv = ["export", str(data), "--formulation", "sdp", "--kernel", "rbf", "--hard-margin",
            "-o", str(target)] + (["--format", fmt] if explicit else [])
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out == "" and err.splitlines() == [f"wrote {target} ({fmt})"]
    assert os.listdir(outdir) == ["model." + fmt], "a temporary file was left behind"
    assert target.stat().st_size > 0


def test_cli_export_rejects_lp_formats_for_sdp(capsys, tmp_path, instance):
    data = tmp_path / "data.csv"
    instance.to_csv(str(data))
    status = cli.main(["export", str(data), "-f", "sdp", "--format", "mps",
                       "-o", str(tmp_path / "m.mps")])
    _, err = capsys.readouterr()
    assert status == 2 and err.count("\n") == 1 and "cbf, ptf" in err
    assert not (tmp_path / "m.mps").exists()


# -- sdp-subspace and sdp-lowrank ------------------------------------------------------------

SUBSPACE_DIM = 4
SUBSPACE_CASES = {
    "soft-linear": CASES["soft-linear"],
    "hard-rbf": CASES["hard-rbf"],
    "soft-rbf-C*-count": Settings(kernel="rbf", sigma=4.0, C=2.0, C_star=0.3, balance="count",
                                  positives=5),  # 2P - u != 0: the balance enters the objective
}


@pytest.fixture(scope="module")
def subspace_parts(instance):
    """(V, {case: G}) shared by the CVXPY and Fusion builders, so both solve the same problem."""
    sub = pytest.importorskip("s3vm.formulations.sdp_subspace")
    low = pytest.importorskip("s3vm.formulations.sdp_lowrank")
    V = sub.subspace_basis(instance, SUBSPACE_DIM)
    form = low.LowRankSDP(dim=SUBSPACE_DIM)
    return V, {case: form.factor(instance, st)[0] for case, st in SUBSPACE_CASES.items()}


def _cbf_optimum(built, path):
    try:
        built.model.writeTask(str(path))
    finally:
        built.model.dispose()
    text = path.read_text()
    assert "PSDCON" in text and "PSDVAR" not in text
    problem = read_cbf(path)
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal"
    return problem.value


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("case", list(SUBSPACE_CASES))
def test_subspace_and_lowrank_cbf_have_the_cvxpy_optima(tmp_path, instance, subspace_parts, case):
    from s3vm.formulations.sdp_lowrank import LowRankSDP
    from s3vm.formulations.sdp_subspace import SubspaceSDP
    from s3vm.models.fusion.sdp_lowrank import build_lowrank
    from s3vm.models.fusion.sdp_subspace import build_subspace

    V, factors = subspace_parts
    settings = SUBSPACE_CASES[case]
    values = {}
    for form, builder, extra in ((SubspaceSDP(dim=SUBSPACE_DIM), build_subspace, {}),
                                 (LowRankSDP(dim=SUBSPACE_DIM), build_lowrank,
                                  {"G": factors[case]})):
        ref = form.build_cvxpy(instance, settings, V=V, **extra)
        ref.model.solve(solver="CLARABEL")
        assert ref.model.status == "optimal", (form.name, ref.model.status)
        built = builder(form, instance, settings, V=V, **extra)
        assert built.info == ref.info
        value = _cbf_optimum(built, tmp_path / f"{form.name}.cbf")
        assert value == pytest.approx(ref.model.value, rel=1e-5), form.name
        values[form.name] = value
    # docs/formulations.md#low-rank-dual: with an exact factor (here: linear features, rbf with
    # rank = n) the low-rank dual (written as the minimum of the negative) has the subspace SDP's
    # optimum.
    assert -values["sdp-lowrank"] == pytest.approx(values["sdp-subspace"], rel=1e-5)


@pytest.mark.solver
def test_subspace_readers_rebuild_m_like_the_cvxpy_model(monkeypatch, instance, subspace_parts):
    import s3vm.models.fusion.sdp_subspace as fsub
    from s3vm.formulations.sdp_subspace import SubspaceSDP

    V, _ = subspace_parts
    settings = SUBSPACE_CASES["soft-rbf-C*-count"]
    form = SubspaceSDP(dim=SUBSPACE_DIM)
    ref = form.build_cvxpy(instance, settings, V=V)
    ref.model.solve(solver="CLARABEL")
    M = ref.read["M"]()
    built = fsub.build_subspace(form, instance, settings, V=V)
    try:
        ia, ja = np.triu_indices(SUBSPACE_DIM)
        monkeypatch.setattr(fsub, "levels", lambda var, size: M[ia, ja])
        for key in ("M", "gamma_u", "gamma_full", "V"):
            np.testing.assert_allclose(built.read[key](), ref.read[key](), atol=1e-12)
    finally:
        built.model.dispose()


# -- the backend -----------------------------------------------------------------------------

def test_backend_is_registered_for_sdp_only():
    assert BACKENDS["mosek-fusion"] == \
        {"sdp": "s3vm.solvers.backends.mosek_fusion:MosekFusionBackend"}
    from s3vm.solvers.backends.mosek_fusion import MosekFusionBackend

    assert MosekFusionBackend.name == "mosek-fusion" and MosekFusionBackend.model_kind == "fusion"
    assert MosekFusionBackend.extra == "mosek"
    assert MosekFusionBackend.unavailable_reason() == LICENCE


@pytest.mark.skipif(LICENCE is None, reason="MOSEK is licensed here")
def test_solve_without_licence_exits_2_naming_installed_sdp_solvers(capsys, tmp_path, instance):
    data = tmp_path / "data.csv"
    instance.to_csv(str(data))
    status = cli.main(["solve", str(data), "-f", "sdp", "--solver", "mosek-fusion", "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("s3vm: error:")
    assert "mosek-fusion" in lines[0] and "licence" in lines[0]
    here = installed_solvers("sdp")
    assert here and all(name in lines[0] for name in here)


@pytest.mark.solver
@pytest.mark.skipif(LICENCE is None, reason="MOSEK is licensed here")
def test_backend_without_licence_returns_an_error_outcome(instance):
    """Called directly (the registry would refuse first), a solve fails as an Outcome."""
    from s3vm.solvers.backends.mosek_fusion import MosekFusionBackend

    built = SDPRelaxation(sdp_form="primal").build(instance, CASES["soft-linear"], "fusion")
    try:
        outcome = MosekFusionBackend().solve(built.model, SolverProfile(time_limit=5, threads=1))
    finally:
        built.model.dispose()
    assert outcome.status == "error" and not outcome.has_solution
    assert outcome.message.startswith("MOSEK:") and "\n" not in outcome.message
    assert "licen" in outcome.message.lower()


def test_backend_rejects_an_unknown_parameter_before_solving(instance):
    from s3vm.solvers.backends.mosek_fusion import MosekFusionBackend
    from s3vm.solvers.errors import InputError

    built = SDPRelaxation(sdp_form="primal").build(instance, CASES["soft-linear"], "fusion")
    try:
        with pytest.raises(InputError, match="noSuchParameter"):
            MosekFusionBackend().set_parameters(
                built.model, SolverProfile(time_limit=5, threads=1,
                                           options={"noSuchParameter": 1}))
    finally:
        built.model.dispose()


class FakeSolvedModel:
    """What MosekFusionBackend.solve asks of a Fusion Model after Model.solve, with given
    statuses: the status mapping is checked here without a licence."""

    def __init__(self, problem, primal, response=0, iterations=7):
        self.problem, self.primal = problem, primal
        self.response, self.iterations = response, iterations
        self.params, self.accepted = {}, None

    def setSolverParam(self, key, value):
        self.params[key] = value

    def solve(self):
        pass

    def getSolverIntInfo(self, name):
        return {"optimizeResponse": self.response, "intpntIter": self.iterations}[name]

    def getProblemStatus(self):
        return self.problem

    def getPrimalSolutionStatus(self):
        return self.primal

    def acceptedSolutionStatus(self, status):
        self.accepted = status

    def primalObjValue(self):
        return 2.5

    def dualObjValue(self):
        return 2.4999


@pytest.mark.solver
@pytest.mark.parametrize("problem, primal, response, status, has_solution", [
    ("PrimalAndDualFeasible", "Optimal", "ok", "optimal", True),
    ("PrimalFeasible", "Feasible", "trm_stall", "feasible", True),
    ("Unknown", "Unknown", "trm_max_time", "time_limit", False),
    ("PrimalInfeasible", "Undefined", "ok", "infeasible", False),
    ("DualInfeasible", "Undefined", "ok", "error", False),
    ("Unknown", "Unknown", "trm_stall", "error", False),
])
def test_backend_status_mapping(problem, primal, response, status, has_solution):
    import mosek

    from s3vm.solvers.backends.mosek_fusion import MosekFusionBackend

    model = FakeSolvedModel(getattr(mf.ProblemStatus, problem), getattr(mf.SolutionStatus, primal),
                            int(getattr(mosek.rescode, response)))
    outcome = MosekFusionBackend().solve(model, SolverProfile(time_limit=12, threads=2))
    assert model.params == {"optimizerMaxTime": 12.0, "numThreads": 2}
    assert (outcome.status, outcome.has_solution, outcome.iterations) == (status, has_solution, 7)
    assert problem in outcome.message and "\n" not in outcome.message
    if has_solution:
        assert outcome.objective == 2.5
        assert outcome.bound == (2.4999 if status == "optimal" else None)
        assert model.accepted == mf.AccSolutionStatus.Feasible
    else:
        assert outcome.objective is None and outcome.bound is None


@needs_licence
@pytest.mark.parametrize("case", list(CASES))
def test_mosek_fusion_solve_matches_cvxpy(instance, cvxpy_optima, case):
    from s3vm.solvers.backends.mosek_fusion import MosekFusionBackend

    form = SDPRelaxation(sdp_form="primal")
    built = form.build(instance, CASES[case], "fusion")
    try:
        outcome = MosekFusionBackend().solve(built.model, SolverProfile(time_limit=60))
        assert outcome.status == "optimal" and outcome.has_solution
        assert outcome.objective == pytest.approx(cvxpy_optima[case], rel=1e-5)
        gamma = built.read["gamma_full"]()
        np.testing.assert_allclose(np.diag(gamma), 1.0, atol=1e-6)
        lab, unl = instance.labeled, instance.unlabeled
        yl = instance.label[lab]
        np.testing.assert_allclose(gamma[np.ix_(lab, lab)], np.outer(yl, yl), atol=1e-9)
        np.testing.assert_allclose(gamma[np.ix_(unl, lab)],
                                   np.outer(built.read["gamma_u"](), yl), atol=1e-9)
        assert np.linalg.eigvalsh(gamma).min() > -1e-6
        if CASES[case].balance == "count":
            P = CASES[case].positive_count(instance)
            assert built.read["gamma_u"]().sum() == pytest.approx(2 * P - instance.u, abs=1e-6)
    finally:
        built.model.dispose()


@needs_licence
def test_mosek_fusion_through_the_formulation(instance, cvxpy_optima):
    settings = CASES["soft-rbf-C*-count"]
    result = SDPRelaxation(sdp_form="primal").solve(instance, settings,
                                                    SolverProfile(solver="mosek-fusion"))
    assert result.solver == "mosek-fusion" and result.status in ("optimal", "feasible")
    assert result.lower_bound == pytest.approx(cvxpy_optima["soft-rbf-C*-count"], rel=1e-5)
    assert result.objective >= result.lower_bound - 1e-6


@needs_licence
def test_mosek_fusion_solves_subspace_and_lowrank(instance, subspace_parts):
    from s3vm.formulations.sdp_lowrank import LowRankSDP
    from s3vm.formulations.sdp_subspace import SubspaceSDP
    from s3vm.models.fusion.sdp_lowrank import build_lowrank
    from s3vm.models.fusion.sdp_subspace import build_subspace
    from s3vm.solvers.backends.mosek_fusion import MosekFusionBackend

    V, factors = subspace_parts
    settings = SUBSPACE_CASES["soft-rbf-C*-count"]
    for form, builder, extra in ((SubspaceSDP(dim=SUBSPACE_DIM), build_subspace, {}),
                                 (LowRankSDP(dim=SUBSPACE_DIM), build_lowrank,
                                  {"G": factors["soft-rbf-C*-count"]})):
        ref = form.build_cvxpy(instance, settings, V=V, **extra)
        ref.model.solve(solver="CLARABEL")
        built = builder(form, instance, settings, V=V, **extra)
        try:
            outcome = MosekFusionBackend().solve(built.model, SolverProfile(time_limit=60))
            assert outcome.status == "optimal", form.name
            assert outcome.objective == pytest.approx(ref.model.value, rel=1e-5), form.name
            # M from the primal (subspace) or from the LMI's dual (low-rank)
            np.testing.assert_allclose(built.read["gamma_u"](), ref.read["gamma_u"](), atol=1e-3)
        finally:
            built.model.dispose()



# -- bb-sdp: the root of the output-space Shor relaxation -------------------------------------

@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("balance,options", [("mean", {"mean_products": False}), ("mean", {}),
                                             ("count", {"count_bound": "lifted"})])
def test_bb_sdp_root_exports_with_the_cvxpy_optimum(tmp_path, balance, options):
    """``s3vm export -f bb-sdp`` writes the root relaxation (box of the starting incumbent, no
    cuts); read back, it has the optimum of the formulation's CVXPY model of the same rows."""
    from s3vm.core.registry import get_formulation
    from s3vm.data.generators import noisy_linear

    inst = noisy_linear(per_class=3, u=7, p=2, noise=1.0, seed=3)
    settings = Settings(kernel="rbf", sigma=1.0, C=2.0, C_star=0.8, bias=False, balance=balance)
    form = get_formulation("bb-sdp", **options)
    path = str(tmp_path / "root.cbf")
    form.export(inst, settings, path, "cbf")
    from_file = read_cbf(path)
    from_file.solve(solver="CLARABEL")
    built = form.build_cvxpy(inst, settings)
    built.model.solve(solver="CLARABEL")
    assert from_file.status == built.model.status == "optimal"
    assert from_file.value == pytest.approx(built.model.value, rel=1e-6)
