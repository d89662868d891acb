"""Pictures: boundaries side by side, the branch-and-bound trace, performance profiles and gap
bars from a results file; written whole as PNG, SVG or PDF, bad requests refused in one line."""

import json
import os

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import s3vm  # noqa: E402
from s3vm import plots  # noqa: E402
from s3vm.cli import main  # noqa: E402

pytestmark = pytest.mark.slow


def _one_error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("s3vm: error:"), err
    return err[0]


@pytest.mark.solver
def test_compare_writes_the_boundaries_with_one_flag(tmp_path, capsys):
    target = tmp_path / "demo.png"
    assert main(["compare", "blobs_small", "--formulations", "switching,vs3vm,sdp",
                 "--quiet", "--plot", str(target)]) == 0
    assert "switching" in capsys.readouterr().out
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert os.listdir(tmp_path) == ["demo.png"]


@pytest.mark.solver
def test_each_panel_draws_its_own_boundary():
    instance, _ = s3vm.load("blobs_small")
    results = [s3vm.solve("blobs_small", name) for name in ("switching", "svm1")]
    fig = plots.boundaries(instance, results)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title().split(":")[0] for ax in axes] == ["switching", "svm1"]
    for ax in axes:
        assert ax.collections, "each panel has regions, boundary and points"
    with pytest.raises(s3vm.InputError, match="needs 2 features"):
        heart = s3vm.load_dataset("heart", labeled_fraction=0.1)
        plots.boundaries(heart, [s3vm.solve(heart, "svm1")])


@pytest.mark.solver
def test_the_search_trace_is_recorded_and_drawn(tmp_path, capsys):
    result = s3vm.solve("two_moons", "bb")
    trace = result.info["trace"]
    inc = [v for v in trace["incumbent"] if v is not None]
    assert np.all(np.diff(inc) <= 1e-12), "the incumbent never gets worse"
    assert trace["incumbent"][-1] == pytest.approx(result.objective)
    assert trace["bound"][-1] == pytest.approx(result.lower_bound)
    assert trace["nodes"][-1] == result.nodes and len(trace["seconds"]) <= 501
    target = tmp_path / "bnb.svg"
    assert main(["plot", "bnb", "blobs_small", "-f", "bb,bb-mip", "--quiet",
                 "-o", str(target)]) == 0
    assert "<svg" in target.read_text()[:500]
    capsys.readouterr()
    assert main(["plot", "bnb", "blobs_small", "-f", "switching", "-o",
                 str(tmp_path / "x.png")]) == 2
    assert "switching has no search trace" in _one_error_line(capsys)


def _records():
    rows = []
    for seed, (fast, slow) in enumerate([(1.0, 2.0), (1.0, 8.0), (3.0, 1.5)]):
        rows.append({"suite": "s", "run": f"a{seed}", "instance": "i", "formulation": "a",
                     "grid": {}, "seed": seed, "status": "optimal", "seconds": fast,
                     "gap": 0.0})
        rows.append({"suite": "s", "run": f"b{seed}", "instance": "i", "formulation": "b",
                     "grid": {}, "seed": seed, "status": "optimal" if seed else "time_limit",
                     "seconds": slow, "gap": 0.1 * seed})
        rows.append({"suite": "s", "run": f"c{seed}", "instance": "i", "formulation": "c",
                     "grid": {}, "seed": seed, "status": "feasible", "seconds": 0.1,
                     "gap": None})
    return rows


def test_performance_profile_follows_dolan_and_more():
    fig = plots.performance_profile(_records())
    ax = fig.axes[0]
    curves = {line.get_label().split(" ")[0]: line for line in ax.get_lines()}
    taus, a = curves["a"].get_xdata(), curves["a"].get_ydata()
    b = curves["b"].get_ydata()
    # Problem 0: only a solves; problem 1: a 8x faster; problem 2: b 2x faster.
    assert a[0] == pytest.approx(2 / 3) and b[0] == pytest.approx(1 / 3)
    assert a[np.searchsorted(taus, 2.0)] == pytest.approx(1.0)  # first tau >= 2
    assert b[-1] == pytest.approx(2 / 3)  # b never solved problem 0
    assert curves["c"].get_ydata().max() == 0.0  # local: never "optimal"
    timed = plots.performance_profile(_records(), solved=("optimal", "feasible"))
    c = {l.get_label().split(" ")[0]: l for l in timed.axes[0].get_lines()}["c"]
    assert c.get_ydata()[0] == pytest.approx(1.0)


def test_gap_bars_and_the_results_file_commands(tmp_path, capsys):
    fig = plots.gap_bars(_records())
    heights = sorted(round(p.get_height(), 6) for p in fig.axes[0].patches)
    assert heights == [0.0, 10.0]  # a: mean 0 %, b: mean of 0, 10, 20 %
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "no bound" in texts
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    assert main(["plot", "profile", str(results), "-o", str(tmp_path / "p.pdf")]) == 0
    assert (tmp_path / "p.pdf").read_bytes()[:4] == b"%PDF"
    assert main(["plot", "gap", str(results), "-o", str(tmp_path / "g.png")]) == 0
    capsys.readouterr()
    for argv, message in (
            (["plot", "gap", str(results), "-o", str(tmp_path / "g.jpg")], "picture format"),
            (["plot", "profile", str(results), "--solved", "done", "-o",
              str(tmp_path / "q.png")], "unknown status 'done'"),
            (["plot", "gap", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "q.png")],
             "results file not found"),
            (["compare", "heart", "--formulations", "svm1", "--plot",
              str(tmp_path / "h.gif")], "picture format")):
        assert main(argv) == 2
        assert message in _one_error_line(capsys)
    assert sorted(os.listdir(tmp_path)) == ["g.png", "p.pdf", "r.jsonl"]


@pytest.mark.solver
def test_the_search_trace_of_a_time_limited_bb_mip_is_drawn(tmp_path, capsys):
    # The user guide's example stopped by its limit: bb-mip's result lost its trace at the
    # limit (the decision values' LP was cancelled at once) and the plot failed after the solve.
    target = tmp_path / "bnb-limited.svg"
    status = main(["plot", "bnb", "heart", "-f", "bb-mip", "--time-limit", "4", "--quiet",
                   "-o", str(target)])
    assert status == 0, capsys.readouterr().err
    assert "<svg" in target.read_text()[:500]


@pytest.mark.solver
@pytest.mark.parametrize("count, rows", [(1, [1]), (2, [2]), (3, [3]), (4, [2, 2]),
                                         (5, [3, 2]), (7, [3, 3, 1])])
def test_the_boundaries_have_exactly_one_panel_per_result(count, rows):
    # Four formulations left two of six panels blank (a 2 x 3 grid with two hidden).
    instance, _ = s3vm.load("blobs_small")
    result = s3vm.solve("blobs_small", "svm1")
    fig = plots.boundaries(instance, [result] * count, resolution=20)
    assert len(fig.axes) == count and all(ax.get_visible() for ax in fig.axes)
    # the panels lie in rows of the expected lengths, a shorter last row centred
    spans = [ax.get_subplotspec() for ax in fig.axes]
    per_row = [sum(1 for s in spans if s.rowspan.start == r) for r in range(len(rows))]
    assert per_row == rows
    last = [s for s in spans if s.rowspan.start == len(rows) - 1]
    columns = 2 * rows[0]
    left = min(s.colspan.start for s in last)
    right = columns - max(s.colspan.stop for s in last)
    assert left == right, (left, right)


@pytest.mark.solver
def test_the_search_trace_gives_each_problem_its_own_axes():
    # plot bnb -f bb,bb-mip drew Problem 1's J and Problem 3's 1-norm objective on one axis.
    fig = plots.search_trace([s3vm.solve("blobs_small", "bb"),
                              s3vm.solve("blobs_small", "bb-mip"),
                              s3vm.solve("blobs_small", "bb", C=2.0)])
    assert len(fig.axes) == 4  # two rows: time and nodes for each problem
    by_problem = {}
    for ax in fig.axes:
        series = {line.get_label().split(":")[0] for line in ax.get_lines()}
        by_problem.setdefault(ax.get_title().split(":")[0], set()).update(series)
        assert "objective" in ax.get_ylabel()
    assert by_problem == {"Problem 1 (S3VM-L2)": {"bb"}, "Problem 3 (S3VM-1)": {"bb-mip"}}
    # one problem: one row, as before
    assert len(plots.search_trace([s3vm.solve("blobs_small", "bb")]).axes) == 2
