"""Pictures (matplotlib, the optional extra ``plot``): decision boundaries on a 2-D instance,
the branch-and-bound search over time and nodes, Dolan-Moré performance profiles and gap bars
from a results file of ``s3vm bench``.

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (no global
state, no display needed); :func:`save` writes it as PNG, SVG or PDF, whole or not at all.
"""

from __future__ import annotations

import math
import os
from typing import Iterable, Optional, Sequence

import numpy as np

from s3vm.api import evaluate
from s3vm.core.problems import PROBLEMS
from s3vm.core.registry import formulation_class
from s3vm.inductive import predictor
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.files import atomic_output, check_writable

FORMATS = ("png", "svg", "pdf")
#: The colours of the classes: -1 blue, +1 orange (colour-blind safe), as in every panel.
CLASS_COLOURS = {-1: "#1f77b4", 1: "#ff7f0e"}
SERIES = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def _figure(width: float, height: float):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("pictures need matplotlib: pip install 's3vm[plot]'") from None
    return Figure(figsize=(width, height), layout="constrained")


def check_output(path: str) -> str:
    """The format of ``path`` (its extension: png, svg or pdf), checked before any work."""

    ext = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise InputError(f"cannot tell the picture format from {path!r}: end the name with "
                         f"{', '.join('.' + f for f in FORMATS)}")
    check_writable(path)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError("pictures need matplotlib: pip install 's3vm[plot]'") from None
    return ext


def save(figure, path: str, dpi: int = 150) -> None:
    """Write ``figure`` to ``path`` (PNG, SVG or PDF by the extension), whole or not at all."""

    fmt = check_output(path)
    with atomic_output(path, suffix="." + fmt) as tmp:
        figure.savefig(tmp, format=fmt, dpi=dpi)


# -- decision boundaries -------------------------------------------------------------------
def _panels(count: int, columns: int, width: float, height: float) -> list:
    """Exactly ``count`` axes on a new figure, at most ``columns`` a row, the rows as even as
    they can be (4 panels: two rows of two, not a row of three over one) and a shorter last
    row centred: no blank panel is left in the grid."""
    rows = math.ceil(count / max(1, min(columns, count)))
    cols = math.ceil(count / rows)
    fig = _figure(width * cols + 0.4, height * rows + 0.5)
    # Each panel spans two half-columns, so that a last row of fewer panels can be centred.
    grid = fig.add_gridspec(rows, 2 * cols)
    axes = []
    for k in range(count):
        row, col = divmod(k, cols)
        in_row = min(cols, count - row * cols)
        first = (cols - in_row) + 2 * col
        axes.append(fig.add_subplot(grid[row, first:first + 2]))
    return axes


def boundaries(instance, results: Sequence, columns: int = 3, resolution: int = 200):
    """One panel per result, side by side: the points of a 2-D instance and the result's
    decision boundary f = 0 (solid) and margins f = +-1 (dashed).

    Labeled points are large and edged in black; unlabeled points take the colour of the label
    the result gives them, and those it labels against ``truth`` are ringed in red; where an exact
    search certified its labels (``Result.certified_labels``), the open ones are hollow. Each title
    gives the formulation, status, objective and (with ``truth``) the transductive error.

    Parameters
    ----------
    instance : Instance
        Two features.
    results : sequence of Result
        Solved on ``instance``.
    """

    if instance.p != 2:
        raise InputError(f"a boundary picture needs 2 features, {instance.name} has "
                         f"{instance.p}")
    results = list(results)
    if not results:
        raise InputError("no result to draw")
    axes = _panels(len(results), columns, 3.6, 3.5)
    X = instance.X
    pad = 0.08 * (X.max(axis=0) - X.min(axis=0))
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], resolution),
                         np.linspace(lo[1], hi[1], resolution))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    lab, unl = instance.labeled, instance.unlabeled
    fig = axes[0].figure
    certifying = False
    for k, ax in enumerate(axes):
        result = results[k]
        metrics = evaluate(instance, result)
        title = f"{result.formulation}: {result.status}"
        if result.objective is not None:
            title += f", obj {result.objective:.4g}"
        if metrics["error"] is not None:
            title += f"\nerror {metrics['error']:.1%}"
        try:
            f = predictor(result, instance)(grid).reshape(gx.shape)
        except InputError as exc:
            f = None
            ax.text(0.5, 0.5, str(exc), transform=ax.transAxes, ha="center", va="center",
                    wrap=True, fontsize=8)
        if f is not None:
            ax.contourf(gx, gy, f, levels=[-np.inf, 0.0, np.inf],
                        colors=[CLASS_COLOURS[-1], CLASS_COLOURS[1]], alpha=0.12)
            if f.min() < 0 < f.max():
                ax.contour(gx, gy, f, levels=[0.0], colors="black", linewidths=1.4)
            margins = [m for m in (-1.0, 1.0) if f.min() < m < f.max()]
            if margins:
                ax.contour(gx, gy, f, levels=margins, colors="black", linewidths=0.7,
                           linestyles="dashed")
        if result.labels is not None and len(result.labels) == unl.size:
            colours = np.array([CLASS_COLOURS[int(v)] for v in result.labels])
            shut = np.ones(unl.size, dtype=bool)
            if result.certified_labels is not None and len(result.certified_labels) == unl.size:
                certifying, shut = True, np.asarray(result.certified_labels, dtype=bool)
                ax.scatter(X[unl[~shut], 0], X[unl[~shut], 1], s=16, facecolors="none",
                           edgecolors=colours[~shut], linewidths=1.1)  # open labels
            ax.scatter(X[unl[shut], 0], X[unl[shut], 1], s=14, c=colours[shut], alpha=0.85,
                       linewidths=0)
            if instance.truth is not None:
                wrong = unl[np.asarray(result.labels) != instance.truth[unl]]
                ax.scatter(X[wrong, 0], X[wrong, 1], s=46, facecolors="none",
                           edgecolors="#d62728", linewidths=1.0)
        else:
            ax.scatter(X[unl, 0], X[unl, 1], s=14, c="#999999", linewidths=0)
        for cls, marker in ((-1, "s"), (1, "^")):
            rows_ = lab[instance.label[lab] == cls]
            ax.scatter(X[rows_, 0], X[rows_, 1], s=70, marker=marker, c=CLASS_COLOURS[cls],
                       edgecolors="black", linewidths=1.0, zorder=3)
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(instance.feature_names[0], fontsize=8)
        ax.set_ylabel(instance.feature_names[1], fontsize=8)
        ax.tick_params(labelsize=7)
    _class_legend(fig, instance, certifying)
    return fig


def _class_legend(fig, instance, certifying: bool = False) -> None:
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], marker="^", ls="", mfc=CLASS_COLOURS[1], mec="black", ms=8,
               label="labeled +1"),
        Line2D([], [], marker="s", ls="", mfc=CLASS_COLOURS[-1], mec="black", ms=7,
               label="labeled -1"),
        Line2D([], [], marker="o", ls="", mfc=CLASS_COLOURS[1], mec="none", ms=5,
               label="unlabeled, labeled +1"),
        Line2D([], [], marker="o", ls="", mfc=CLASS_COLOURS[-1], mec="none", ms=5,
               label="unlabeled, labeled -1"),
        Line2D([], [], color="black", lw=1.4, label="f = 0"),
        Line2D([], [], color="black", lw=0.7, ls="--", label="f = ±1"),
    ]
    if certifying:
        handles.append(Line2D([], [], marker="o", ls="", mfc="none", mec="#555555", ms=5,
                              label="label open (not certified)"))
    if instance.truth is not None:
        handles.append(Line2D([], [], marker="o", ls="", mfc="none", mec="#d62728", ms=8,
                              label="label ≠ truth"))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4),
               fontsize=8, frameon=False)


# -- branch and bound ----------------------------------------------------------------------
def search_trace(results: Sequence, labels: Optional[Sequence[str]] = None):
    """The incumbent and the lower bound of branch-and-bound searches over time (left) and
    over nodes (right), one colour per result, from ``Result.info["trace"]``.

    The objectives of different problems (Problem 1's J for bb and bb-sdp, Problem 3's 1-norm
    objective for bb-mip) do not share a scale: each problem gets its own row of axes, titled
    with its name."""
    results = list(results)
    if not results:
        raise InputError("no result to draw")
    traces = []
    for result in results:
        trace = (result.info or {}).get("trace") if not isinstance(result, dict) \
            else (result.get("info") or {}).get("trace")
        name = result.formulation if not isinstance(result, dict) else result["formulation"]
        if not trace or not trace.get("seconds"):
            raise InputError(f"{name} has no search trace: only the branch-and-bound "
                             "formulations (bb, bb-mip, bb-sdp) record one")
        traces.append((name, trace))
    labels = list(labels) if labels is not None else [name for name, _ in traces]
    problems = [_problem_of(name) for name, _ in traces]
    order = list(dict.fromkeys(problems))  # the problems in the order of the results
    fig = _figure(10.0, 3.6 * len(order) + 0.7)
    axes = fig.subplots(len(order), 2, squeeze=False)
    for k, ((name, trace), label, problem) in enumerate(zip(traces, labels, problems)):
        colour = SERIES[k % len(SERIES)]
        for ax, xkey in zip(axes[order.index(problem)], ("seconds", "nodes")):
            x = np.asarray(trace[xkey], dtype=float)
            inc = np.array([np.nan if v is None else v for v in trace["incumbent"]], float)
            bnd = np.array([np.nan if v is None else v for v in trace["bound"]], float)
            ax.step(x, inc, where="post", color=colour, lw=1.6, label=f"{label}: incumbent")
            ax.step(x, bnd, where="post", color=colour, lw=1.2, ls="--",
                    label=f"{label}: lower bound")
            ax.fill_between(x, bnd, inc, step="post", color=colour, alpha=0.08)
    for (left, right), problem in zip(axes, order):
        left.set_xlabel("seconds")
        right.set_xlabel("nodes")
        for ax in (left, right):
            ax.set_ylabel("objective" if problem is None else f"{problem.name} objective")
            ax.grid(True, alpha=0.3)
            if ax.get_xlim()[1] > 0:
                ax.set_xlim(left=0)
        where = "" if problem is None else f"Problem {problem.number} ({problem.name}): "
        left.set_title(f"{where}incumbent and lower bound over time", fontsize=10)
        right.set_title(f"{where}over nodes", fontsize=10)
    handles, names = [], []
    for row in axes:
        h, n = row[1].get_legend_handles_labels()
        handles += h
        names += n
    fig.legend(handles, names, loc="outside lower center", ncols=min(len(names), 4),
               fontsize=8, frameon=False)
    return fig


def _problem_of(formulation: str):
    """The :class:`~s3vm.core.problems.Problem` a formulation solves (None for a name this
    process has no formulation of, as a results file from elsewhere may hold)."""
    try:
        return PROBLEMS[formulation_class(formulation).problem]
    except (InputError, KeyError, AttributeError):
        return None


# -- results files -------------------------------------------------------------------------
def _problems(records: Iterable[dict]):
    """(problems, formulations, cost lookup): a problem is an instance, seed and grid point; a
    formulation's record whose grid has fewer keys (it reads fewer settings) counts for every
    problem its grid agrees with."""
    records = list(records)
    problems = sorted({(r["instance"], r.get("seed"), tuple(sorted((r.get("grid") or {}).items())))
                       for r in records}, key=str)
    widest = max((len(p[2]) for p in problems), default=0)
    problems = [p for p in problems if len(p[2]) == widest] or problems
    formulations = list(dict.fromkeys(r["formulation"] for r in records))

    def find(formulation, problem):
        instance, seed, grid = problem
        grid = dict(grid)
        found = [r for r in records if r["formulation"] == formulation
                 and r["instance"] == instance
                 and r.get("seed") in (seed, None)
                 and all(grid.get(k) == v for k, v in (r.get("grid") or {}).items())]
        return found[-1] if found else None

    return problems, formulations, find


def performance_profile(records: Sequence[dict], solved: Sequence[str] = ("optimal",),
                        title: Optional[str] = None):
    """Dolan and Moré's performance profile of the formulations over the problems of a results
    file: the share rho_s(tau) of problems that formulation s solved within tau times the time
    of the fastest formulation on that problem, tau on a log2 axis.

    A run counts as solved when its status is in ``solved`` (default: proven optimal); any
    other run (time limit, error, a local method's ``feasible``) never reaches the curve's top.
    Dolan, E. D. and Moré, J. J. (2002), Benchmarking optimization software with performance
    profiles, Mathematical Programming 91, 201-213.
    """
    problems, formulations, find = _problems(records)
    if not problems:
        raise InputError("the results file holds no run")
    cost = np.full((len(problems), len(formulations)), np.inf)
    for i, problem in enumerate(problems):
        for j, name in enumerate(formulations):
            record = find(name, problem)
            if record is not None and record.get("status") in solved \
                    and record.get("seconds") is not None:
                cost[i, j] = max(float(record["seconds"]), 1e-6)
    best = cost.min(axis=1)
    ok = np.isfinite(best)
    ratios = np.where(ok[:, None], cost / np.where(ok, best, 1.0)[:, None], np.inf)
    finite = ratios[np.isfinite(ratios)]
    top = max(2.0, float(finite.max()) * 1.25) if finite.size else 2.0
    fig = _figure(6.4, 4.2)
    ax = fig.subplots()
    taus = np.concatenate([[1.0], np.geomspace(1.0, top, 400)])
    for j, name in enumerate(formulations):
        rho = [(ratios[:, j] <= tau).mean() for tau in taus]
        ax.step(taus, rho, where="post", color=SERIES[j % len(SERIES)], lw=1.8,
                label=f"{name} ({int(np.isfinite(cost[:, j]).sum())}/{len(problems)})")
    ax.set_xscale("log", base=2)
    ax.set_xlim(1.0, top)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("τ: within this factor of the fastest (seconds)")
    ax.set_ylabel("share of problems solved")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right", title=f"solved = {', '.join(solved)}",
              title_fontsize=8)
    ax.set_title(title or f"performance profile over {len(problems)} problems", fontsize=10)
    return fig


def gap_bars(records: Sequence[dict], title: Optional[str] = None):
    """The relative gap (objective - bound) / max(1, |objective|) of each formulation on each
    instance (and grid point), the mean over seeds, as grouped bars; a run without a bound is
    marked "no bound", a failed run "error"."""
    from matplotlib.patches import Patch

    records = list(records)
    if not records:
        raise InputError("the results file holds no run")
    problems, formulations, find = _problems(records)
    groups = list(dict.fromkeys((p[0], p[2]) for p in problems))
    seeds = {g: [p[1] for p in problems if (p[0], p[2]) == g] for g in groups}
    width = 0.8 / len(formulations)
    fig = _figure(min(16.0, max(6.0, 0.45 * len(groups) * len(formulations) + 2.5)), 4.4)
    ax = fig.subplots()
    top, notes = 0.0, []
    for j, name in enumerate(formulations):
        for g, (instance, grid) in enumerate(groups):
            rows = [find(name, (instance, seed, grid)) for seed in seeds[(instance, grid)]]
            rows = list({id(r): r for r in rows if r is not None}.values())
            x = g - 0.4 + width * (j + 0.5)
            if not rows:
                continue
            gaps = [r["gap"] for r in rows if r.get("gap") is not None]
            if gaps:
                value = 100.0 * float(np.mean(gaps))
                ax.bar(x, value, width * 0.92, color=SERIES[j % len(SERIES)])
                notes.append((x, value, f"{value:.1f}%" if value >= 0.05 else "0"))
                top = max(top, value)
            else:
                errors = all(r.get("status") == "error" for r in rows)
                notes.append((x, 0.0, "error" if errors else "no bound"))
    top = top or 1.0
    for x, value, text in notes:
        ax.text(x, value + 0.015 * top, text, ha="center", va="bottom", fontsize=7,
                rotation=90 if text in ("error", "no bound") else 0)
    ax.legend(handles=[Patch(color=SERIES[j % len(SERIES)], label=name)
                       for j, name in enumerate(formulations)], fontsize=8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([instance + ("\n" + ", ".join(f"{k}={v}" for k, v in grid)
                                    if grid else "") for instance, grid in groups], fontsize=8)
    ax.set_ylabel("relative gap (%)")
    ax.set_ylim(0, top * 1.3)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title or "gap between objective and proven lower bound (mean over seeds)",
                 fontsize=10)
    return fig
