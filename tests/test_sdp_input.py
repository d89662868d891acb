"""Bad input to the SDP family through the command line: exit 2, one line on
stderr, nothing on stdout, no traceback."""

from __future__ import annotations

import pytest

from s3vm import cli
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance

N, U = 10, 6


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """n = 10, two labeled points per class, u = 6."""
    inst = gaussian_blobs(n=N, p=2, separation=2.0, n_labeled_per_class=2, seed=3)
    assert inst.n == N and inst.u == U
    path = tmp_path_factory.mktemp("input") / "small.csv"
    Instance(inst.X, inst.label, inst.truth).to_csv(str(path))
    return str(path)


def one_error_line(argv) -> str:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli.main(argv)
    assert status == 2, (status, err.getvalue())
    assert out.getvalue() == "" and "Traceback" not in err.getvalue()
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s3vm: error:"), err.getvalue()
    return lines[0]


@pytest.mark.parametrize("formulation", ["sdp-subspace", "sdp-lowrank"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_dim_larger_than_u_plus_one(data, formulation, kernel):
    line = one_error_line(["solve", data, "-f", formulation, "--kernel", kernel,
                           "--dim", str(U + 2), "--json"])
    assert "d larger than u + 1" in line and f"dim = {U + 2}" in line


@pytest.mark.parametrize("formulation", ["sdp-subspace", "sdp-lowrank"])
def test_dim_zero(data, formulation):
    line = one_error_line(["solve", data, "-f", formulation, "--dim", "0", "--json"])
    assert "--dim must be >= 1" in line


def test_rank_larger_than_n_for_rbf(data):
    line = one_error_line(["solve", data, "-f", "sdp-lowrank", "--kernel", "rbf",
                           "--rank", str(N + 1), "--json"])
    assert "rank larger than n" in line and f"n = {N}" in line


@pytest.mark.parametrize("rank", ["0", "-3"])
def test_rank_below_one(data, rank):
    line = one_error_line(["solve", data, "-f", "sdp-lowrank", "--kernel", "rbf", "--rank", rank,
                           "--json"])
    assert "--rank must be >= 1" in line


def test_bad_dim_is_refused_before_export_writes(data, tmp_path):
    target = tmp_path / "model.ptf"
    one_error_line(["export", data, "-f", "sdp-subspace", "--dim", str(U + 2), "-o", str(target)])
    assert not target.exists()


@pytest.mark.solver
def test_dim_at_the_limit_is_accepted(data, capsys):
    """d = u + 1 is the whole label-constrained subspace: allowed."""
    status = cli.main(["solve", data, "-f", "sdp-subspace", "--dim", str(U + 1),
                       "--solver", "clarabel", "--json"])
    capsys.readouterr()
    assert status == 0
