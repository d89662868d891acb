"""The memory guard: each formulation declares its footprint per n^2 entry, and an n whose dense
matrices would not fit is refused up front with what to use instead.

``S3VM_MEMORY_LIMIT`` stands in for a small machine, so these run in a second.
"""

from __future__ import annotations

import pytest

from s3vm import api, cli
from s3vm.core.formulation import Formulation
from s3vm.core.registry import formulation_class, formulation_names
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.memory import available_memory, check_dense_memory, parse_size

#: Formulations that form n x n matrices under the linear kernel too (kernel matrix, PSD block).
DENSE_UNDER_LINEAR = {"bb", "switching", "sdp", "sdp-subspace", "bb-sdp", "l2-miqp"}


@pytest.mark.parametrize("name", formulation_names())
def test_every_formulation_declares_its_own_footprint(name):
    cls = formulation_class(name)
    # Declared on the class itself, not inherited by accident (sdp-lowrank derives from the
    # subspace family, whose n x n blocks it does not form).
    declaring = next(k for k in cls.__mro__ if "dense_bytes" in vars(k))
    assert declaring is cls or declaring is Formulation and cls.dense_bytes == (0, 0), \
        f"{name} inherits dense_bytes from {declaring.__name__}"
    linear, rbf = cls.dense_bytes
    assert linear >= 0 and rbf >= 0
    assert (linear > 0) == (name in DENSE_UNDER_LINEAR)


def test_the_lowrank_path_forms_no_dense_matrix():
    lowrank = formulation_class("sdp-lowrank")()
    assert lowrank.dense_bytes_per_entry(Settings(kernel="rbf")) == 0
    assert lowrank.dense_bytes_per_entry(Settings(kernel="linear")) == 0


def test_the_footprint_follows_the_kernel():
    vs3vm = formulation_class("vs3vm")()
    assert vs3vm.dense_bytes_per_entry(Settings(kernel="linear")) == 0
    assert vs3vm.dense_bytes_per_entry(Settings(kernel="rbf")) > 0


@pytest.mark.parametrize("text, size", [("512M", 512 << 20), ("2G", 2 << 30), ("1500000", 1500000),
                                        ("1.5k", 1536), ("3GiB", 3 << 30)])
def test_sizes_are_parsed(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "-1G", "0", ""])
def test_a_bad_size_is_an_input_error(text):
    with pytest.raises(InputError, match="S3VM_MEMORY_LIMIT"):
        parse_size(text)


def test_the_limit_variable_caps_the_memory_available(monkeypatch):
    monkeypatch.setenv("S3VM_MEMORY_LIMIT", "64M")
    assert available_memory() <= 64 << 20


def test_check_passes_what_fits_and_refuses_what_does_not(monkeypatch):
    monkeypatch.setenv("S3VM_MEMORY_LIMIT", "100M")
    check_dense_memory(1000, 8, "sdp", "advice")  # 8 MB
    with pytest.raises(InputError, match=r"sdp needs about 8\.0 GB .* n = 10000 .*: advice"):
        check_dense_memory(10_000, 80, "sdp", "advice")


@pytest.mark.solver
@pytest.mark.slow
def test_a_dense_formulation_too_big_is_refused_naming_the_lowrank_path(monkeypatch):
    # 400 bytes x 600^2 = 144 MB against a 50 MB limit: refused before anything is built.
    monkeypatch.setenv("S3VM_MEMORY_LIMIT", "50M")
    data = gaussian_blobs(n=600, p=3, seed=0)
    with pytest.raises(InputError, match="sdp-lowrank"):
        api.solve(data, "sdp")
    # the low-rank path of the same data goes ahead
    assert api.solve(data, "sdp-lowrank").status in ("optimal", "feasible")


def test_rbf_lp_too_big_names_the_linear_kernel(monkeypatch):
    monkeypatch.setenv("S3VM_MEMORY_LIMIT", "50M")
    data = gaussian_blobs(n=600, p=3, seed=0)
    with pytest.raises(InputError, match="kernel='linear'"):
        api.solve(data, "vs3vm", kernel="rbf")


def test_the_command_line_refusal_is_exit_2_with_one_line(monkeypatch, capsys):
    monkeypatch.setenv("S3VM_MEMORY_LIMIT", "10K")  # blobs_small: 12 points, 58 kB
    status = cli.main(["solve", "blobs_small", "-f", "sdp", "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "sdp-lowrank" in err


# -- the paths that form dense arrays outside a formulation's n x n matrices ------------------
def test_the_dense_graph_of_the_lowrank_path_is_checked(monkeypatch, capsys):
    lowrank = formulation_class("sdp-lowrank")(graph="dense")
    assert lowrank.dense_bytes_per_entry(Settings()) > 0
    # 64 bytes x 2,000^2 = 256 MB against 100 MB: refused, naming the sparse graph
    monkeypatch.setenv("S3VM_MEMORY_LIMIT", "100M")
    data = gaussian_blobs(n=2000, p=3, seed=0)
    with pytest.raises(InputError, match="graph='knn'"):
        api.solve(data, "sdp-lowrank", options={"graph": "dense"})


def test_select_checks_the_kernel_of_its_labeled_points(monkeypatch, tmp_path, capsys):
    data = gaussian_blobs(n=2000, p=3, labeled_fraction=1.0, seed=0)
    path = str(tmp_path / "all_labeled.csv")
    data.to_csv(path)
    monkeypatch.setenv("S3VM_MEMORY_LIMIT", "100M")  # 64 x 2,000^2 = 256 MB
    status = cli.main(["select", path])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "select needs about" in err and "2000 labeled" in err


def test_a_libsvm_file_with_a_huge_feature_index_is_refused(tmp_path, capsys):
    # a feature index of 10^9 on 50 rows would be 400 GB read dense, beyond any machine here
    path = tmp_path / "huge.svm"
    path.write_text("".join(f"{1 if i % 2 else -1} 1:0.5 1000000000:1\n" for i in range(40))
                    + "".join("0 1:0.1 3:0.2\n" for _ in range(10)))
    status = cli.main(["solve", str(path), "-f", "svm1", "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "1,000,000,000" in err and "compactly" in err


@pytest.mark.parametrize("generator, params", [
    ("gaussian_blobs", {"n": 10**6, "p": 10**4}),
    ("two_moons", {"n_unlabeled_per_class": 10**10}),
    ("noisy_linear", {"u": 10**6, "p": 10**5}),
])
def test_generators_refuse_a_draw_beyond_the_memory(generator, params):
    from s3vm.data import generators

    with pytest.raises(InputError, match=f"{generator} needs about .* draw fewer"):
        getattr(generators, generator)(**params)


def test_the_subspace_sdp_counts_its_cvxpy_model_when_a_cvxpy_solver_is_named(monkeypatch):
    # V M V' in CVXPY has an n x n block of coefficients per entry of M: at n = 700 and d = 40
    # about 51 GB (the default psd-barrier forms none: about 1 GB)
    from s3vm.solvers.registry import get_backend

    monkeypatch.setenv("S3VM_MEMORY_LIMIT", "4G")
    data = gaussian_blobs(n=700, p=3, seed=0)
    form = formulation_class("sdp-subspace")(dim=40)
    form.check_memory(data, Settings(), get_backend("psd-barrier", "sdp"))  # fits
    with pytest.raises(InputError, match=r"sdp-subspace needs about 5\d\.\d GB.*psd-barrier"):
        api.solve(data, "sdp-subspace", solver="scs", options={"dim": 40})


def test_the_rbf_sdp_estimate_covers_its_measured_slope():
    # measured (docs/changelog.md, peak memory): 1,180 to 1,290 bytes per n^2 entry at n = 600
    # and 900 with the rbf kernel, against the 400 declared for both kernels before
    sdp = formulation_class("sdp")()
    assert sdp.dense_bytes_per_entry(Settings(kernel="rbf")) >= 1300


@pytest.mark.slow
def test_bb_keeps_its_open_nodes_within_its_declared_footprint():
    # Depth-first, every level of the dive leaves a sibling open, and each kept its own Cholesky
    # factor of the active set (a^2 doubles): the sum grew with the cube of the depth, 1.9 GiB
    # at n = 1,000 (rbf, 45 s) against the 430 MiB the guard estimated (docs/changelog.md).
    # tracemalloc counts numpy's buffers: the search's peak must stay within the declared bytes
    # per n^2 entry, less the kernel matrix's 8, formed before the trace starts.
    import tracemalloc

    from threadpoolctl import threadpool_limits

    from s3vm.bounds.svm import SVMBoundProblem
    from s3vm.models.l2_svm import S3VMObjective
    from s3vm.solvers.bnb.driver import search

    n = 150
    instance = gaussian_blobs(n=n, p=10, separation=2.0, labeled_fraction=0.1, seed=0)
    settings = Settings(kernel="rbf")
    problem = SVMBoundProblem(S3VMObjective(instance, settings))
    tracemalloc.start()
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            result = search(problem, node_limit=300, keep_tree=False, log=lambda s: None,
                            progress=lambda s: None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.nodes >= 300  # the dive reached a depth of about u = 135
    declared = formulation_class("bb")().dense_bytes_per_entry(settings)
    assert peak <= (declared - 8) * n * n, f"{peak / n**2:.0f} bytes per n^2 entry"
