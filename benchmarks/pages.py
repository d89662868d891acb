"""The generated parts of the benchmark pages: every table printed from its data file
(``benchmarks/*.jsonl``) and every plot drawn from the same data into ``docs/img/``.

Run by hand from the repository root after a benchmark has written its data file::

    .venv/bin/python benchmarks/pages.py            # rewrite the tables and plots that are out of date
    .venv/bin/python benchmarks/pages.py --check    # name what is out of date; exit 1 if anything is
    .venv/bin/python benchmarks/pages.py --print NAME          # one table, as the page holds it
    .venv/bin/python benchmarks/pages.py --list                # every table and plot, with its page
    .venv/bin/python benchmarks/pages.py --redraw              # every plot, after a change of style

A page (``docs/benchmarks/*.md``, ``docs/changelog.md``) holds a generated table between two
markers, which this script rewrites and ``tests/test_docs.py`` compares with what the table's
function returns now::

    <!-- table: NAME -->
    ...
    <!-- end table: NAME -->

A plot is an SVG file ``docs/img/NAME.svg`` that its page embeds; the file records the SHA-256 of
the numbers it draws (its metadata's description), which the docs test recomputes from the data
files, so an image that no longer shows its data fails the test without depending on the
matplotlib version that drew it.

To add a table: a function decorated with ``@table(page, name)`` that returns the block's
markdown, its data files as keyword arguments with their defaults (most print a script's own
table through :func:`printed`; the others read the data file here); then the two markers in the
page. To add a plot: a function decorated with ``@plot(name, page, ...)`` that returns the numbers
it draws (JSON-able: they are what the digest covers) and a function that draws them on a
matplotlib ``Figure``; then ``![...](../img/NAME.svg)`` in the page. For example, a new
benchmark whose script prints its table from its data file, and a plot of its errors::

    @table(PRACTICE, "safe estimator")
    def safe_estimator(data="benchmarks/safe_estimator.jsonl") -> str:
        return printed("benchmarks/safe_estimator.py", "--summary", data)

    @plot("safe-estimator-errors", PRACTICE)
    def safe_estimator_errors(data="benchmarks/safe_estimator.jsonl"):
        numbers = {r["set"]: 100 * r["error"] for r in records(data)}
        def draw(figure):
            figure.subplots().barh(list(numbers), list(numbers.values()))
        return numbers, draw

then ``.venv/bin/python benchmarks/pages.py`` fills the markers and draws the SVG, and
``tests/test_docs.py`` checks both from then on (it runs every registered table and plot).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
IMG = DOCS / "img"
if str(ROOT / "benchmarks") not in sys.path:  # the scripts beside this one, when imported
    sys.path.insert(0, str(ROOT / "benchmarks"))


@dataclass(frozen=True)
class Table:
    """A generated table: ``make(**data)`` returns the markdown between the page's markers; a
    ``history`` table (the changelog's) has no markers and is not rewritten: every table it
    prints must stand in the page as printed."""

    name: str
    page: str
    make: Callable[..., str]
    history: bool = False


@dataclass(frozen=True)
class Plot:
    """A generated plot: ``make(**data)`` returns ``(numbers, draw)``; ``draw(figure)`` draws."""

    name: str
    pages: tuple
    make: Callable[..., tuple]
    size: tuple

    @property
    def path(self) -> Path:
        return IMG / f"{self.name}.svg"


TABLES: dict[str, Table] = {}
PLOTS: dict[str, Plot] = {}


def table(page: str, name: str, history: bool = False):
    """Register the decorated function as the table ``name`` of ``docs/<page>``."""
    def register(make):
        TABLES[name] = Table(name, page, make, history)
        return make
    return register


def plot(name: str, *pages: str, size=(7.0, 4.0)):
    """Register the decorated function as the plot ``docs/img/<name>.svg`` of ``pages``."""
    def register(make):
        PLOTS[name] = Plot(name, pages, make, size)
        return make
    return register


# -- tables: markers, blocks, the printing of scripts -------------------------------------------
def markers(name: str) -> tuple[str, str]:
    return f"<!-- table: {name} -->", f"<!-- end table: {name} -->"


def _span(text: str, name: str) -> tuple[int, int] | None:
    """Where the block of ``name`` lies in a page's text: between its markers, each a line of
    its own (a marker quoted in a sentence is not one)."""
    start, end = (re.escape(m) for m in markers(name))
    found = re.search(rf"(?m)^{start}$(.*?)^{end}$", text, re.S)
    return found.span(1) if found else None


def block_in(text: str, name: str) -> str | None:
    """The generated block of ``name`` in a page's text, markers excluded; None without them."""
    span = _span(text, name)
    return None if span is None else text[span[0]:span[1]]


def with_block(text: str, name: str, content: str) -> str:
    first, last = _span(text, name)
    return text[:first] + content + text[last:]


def as_block(markdown: str) -> str:
    """The text between the markers: the markdown with a blank line around it, and between a
    table and the lines next to it (markdown ends a table only at a blank line)."""
    lines, out = markdown.strip("\n").splitlines(), []
    for line in lines:
        if out and out[-1] and line and out[-1].startswith("|") != line.startswith("|"):
            out.append("")
        out.append(line.rstrip())
    return "\n\n" + "\n".join(out) + "\n\n"


def printed(*argv: str) -> str:
    """What ``python ARGV`` prints from the repository root, after a line that states the
    command; HTML comments (a script's note of the machine it printed on) are left out."""
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    kept, loads = [], []
    for line in done.stdout.splitlines():
        uptime = UPTIME.match(line)
        if uptime:  # a header line's `uptime`: summed up below the tables
            loads.append(float(uptime.group(1)))
        elif not line.startswith("<!--"):
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    if loads:
        kept += ["", f"The 1-minute load at the start of each of the file's {len(loads)} "
                     f"piece{'s' if len(loads) > 1 else ''} (its header lines' `uptime`): "
                     f"{min(loads):.2f} to {max(loads):.2f}."]
    return f"Printed by `.venv/bin/python {' '.join(argv)}`:\n\n" + "\n".join(kept)


#: An ``uptime`` line, as sdp_s3vm.py prints its data file's header lines (with a date or not).
UPTIME = re.compile(r"^(?:[\d-]+ [\d:]+ UTC: )?\s*[\d:]+ up .*load average: ([\d.]+),")


def ours(name: str) -> str:
    """The note above a table this script computes itself."""
    return f"Printed by `.venv/bin/python benchmarks/pages.py --print \"{name}\"`:\n\n"


def records(path: str) -> list[dict]:
    with open(ROOT / path if not Path(path).is_absolute() else path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def render_table(name: str, **data) -> str:
    return as_block(TABLES[name].make(**data))


def tables_of(markdown: str) -> list[str]:
    """The markdown tables in a text: runs of lines that start with '|'."""
    found, run = [], []
    for line in markdown.splitlines() + [""]:
        if line.startswith("|"):
            run.append(line)
        elif run:
            found.append("\n".join(run))
            run = []
    return found


def shows(page_text: str, name: str, **data) -> bool:
    """Whether a page shows the table ``name`` as its data prints it now: the block between its
    markers, or (a history table) every table it prints, somewhere in the page."""
    spec = TABLES[name]
    if spec.history:
        printed_tables = tables_of(spec.make(**data))
        return bool(printed_tables) and all(t in page_text for t in printed_tables)
    return block_in(page_text, name) == render_table(name, **data)


def markdown_table(header: list, rows: list) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def run_note(header: dict, rows: list[dict], what: str) -> str:
    """One line under a table: when, at which commit, on what machine, at what load."""
    loads = [r["load"] for r in rows if r.get("load") is not None]
    load = f"{min(loads):.1f} to {max(loads):.1f}" if loads else "not recorded"
    return (f"{what}: started {header['date']} at commit {header['commit']}, on {header['machine']} "
            f"(shared), Python {header['python']}; 1-minute load {load} at the runs' starts.")


def _ratio(slow: float, fast: float) -> str:
    return f"{slow / fast:.1f}x" if fast > 0 else "-"


def _seconds(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


# -- the pages' tables ---------------------------------------------------------------------------
EXACT = "benchmarks/exact.md"
PRACTICE = "benchmarks/practitioner.md"
SCALE = "benchmarks/scale.md"
SDP = "benchmarks/sdp.md"
LIMITS = "benchmarks/limits.md"
HISTORY = "changelog.md"
INDEX = "benchmarks/index.md"
CONTRIBUTING = "contributing.md"


@table(EXACT, "bb scale")
def bb_scale(data="benchmarks/bb_scale.jsonl") -> str:
    rows = records(data)
    header = next(r for r in rows if r.get("part") == "header")
    runs = [r for r in rows if r.get("part") == "scale"]
    out = []
    for u in sorted({r["u"] for r in runs}):
        mine = sorted((r for r in runs if r["u"] == u), key=lambda r: r["seed"])
        out.append([u, f"{sum(r['status'] == 'optimal' for r in mine)}/{len(mine)}",
                    _seconds(statistics.median(r["cpu"] for r in mine)),
                    _seconds(statistics.median(r["seconds"] for r in mine)),
                    f"{statistics.median(r['nodes'] for r in mine):,.0f}",
                    ", ".join(f"{r['nodes']:,}/{_seconds(r['cpu'])}" for r in mine)])
    return ours("bb scale") + markdown_table(
        ["u", "proved", "median CPU s", "median wall s", "median nodes",
         "per seed 0, 1, ...: nodes / CPU s"], out) + "\n\n" + run_note(header, runs, "Run")


def _pairs(data: str, part: str, first: str, second: str, solver: str, slower: str) -> tuple:
    """The table of a part of ``bench_bb.py`` that runs two formulations on each instance: per u,
    how many proved the same optimum, the median CPU seconds of each and their ratio (the
    ``slower`` one's over the other's), and the nodes."""
    faster = first if slower == second else second
    rows = records(data)
    header = next(r for r in rows if r.get("part") == "header")
    runs = [r for r in rows if r.get("part") == part]
    out = []
    for u in sorted({r["u"] for r in runs}):
        mine = sorted((r for r in runs if r["u"] == u), key=lambda r: r["seed"])
        a = statistics.median(r[first]["cpu"] for r in mine)
        b = statistics.median(r[second]["cpu"] for r in mine)
        proved = sum(r[first]["status"] == r[second]["status"] == "optimal" for r in mine)
        out.append([u, f"{proved}/{len(mine)}", f"{sum(r['same_optimum'] for r in mine)}/{len(mine)}",
                    _seconds(a), _seconds(b), _ratio(a if slower == first else b,
                                                     b if slower == first else a),
                    ", ".join(f"{r[first]['nodes']:,}" for r in mine),
                    ", ".join(f"{r[second]['nodes']:,}" if r[second]["nodes"] is not None
                              else "-" for r in mine)])
    head = ["u", "both proved", "same optimum", f"{first} median CPU s",
            f"{second} median CPU s", f"{slower} / {faster}", f"{first} nodes", f"{solver} nodes"]
    loads = [r[k] for r in runs for k in (first, second)]
    return markdown_table(head, out), run_note(header, loads, "Run")


@table(EXACT, "bb against l2-miqp")
def bb_miqp(data="benchmarks/bb_miqp.jsonl") -> str:
    text, note = _pairs(data, "miqp", "bb", "l2-miqp", "SCIP", slower="l2-miqp")
    return ours("bb against l2-miqp") + text + "\n\n" + note


@table(EXACT, "bb-mip against bd-mip")
def bb_mip(data="benchmarks/bb_mip.jsonl") -> str:
    text, note = _pairs(data, "mip", "bb-mip", "bd-mip", "HiGHS", slower="bb-mip")
    return ours("bb-mip against bd-mip") + text + "\n\n" + note


@table(EXACT, "sdp-s3vm 60 s")
def sdp_s3vm_60(data="benchmarks/sdp_s3vm-60.jsonl") -> str:
    return printed("benchmarks/sdp_s3vm.py", "table", "--out", data)


@table(EXACT, "sdp-s3vm 600 s")
def sdp_s3vm_600(data="benchmarks/sdp_s3vm-600.jsonl") -> str:
    return printed("benchmarks/sdp_s3vm.py", "table", "--out", data)


@table(EXACT, "sdp-s3vm nodes")
def sdp_s3vm_nodes(data="benchmarks/sdp_s3vm-nodes.jsonl") -> str:
    return printed("benchmarks/sdp_s3vm.py", "nodes-table", "--out", data)


@table("reliability.md", "solve loops")
def solve_loops(data="benchmarks/solve_loop.jsonl") -> str:
    return printed("benchmarks/solve_loop.py", "table", data)


@table("reliability.md", "signal sweep")
def signal_sweep(data="benchmarks/answers.jsonl") -> str:
    return printed("benchmarks/answers.py", "table", "signals", data)


@table("reliability.md", "short limits")
def short_limits(data="benchmarks/answers.jsonl") -> str:
    return printed("benchmarks/answers.py", "table", "limits", data)


@table("reliability.md", "never worse")
def never_worse(data="benchmarks/answers.jsonl") -> str:
    return printed("benchmarks/answers.py", "table", "never-worse", data)


@table(PRACTICE, "ssl-book defaults")
def ssl_book_defaults(data="benchmarks/ssl_book_defaults.jsonl") -> str:
    return printed("benchmarks/ssl_book.py", "--versus-book", "defaults", "--summary", data)


#: the sets and methods of the table "ssl-book defaults and peers" and of its plot
PEER_SETS = ("g241c", "g241d", "digit1", "usps-ssl", "bci", "text")
PEERS = ("defaults", "qn-s3vm", "label-spreading", "self-training", "svmlight-tsvm")


@table(PRACTICE, "safe estimator")
def safe_estimator(data="benchmarks/practitioner.jsonl") -> str:
    return printed("benchmarks/practitioner.py", "table", data)


@table(PRACTICE, "ssl-book safe defaults")
def ssl_book_safe(data="benchmarks/ssl_book_safe.jsonl") -> str:
    return printed("benchmarks/ssl_book.py", "--versus-book", "defaults", "--summary", data)


@table(PRACTICE, "ssl-book defaults and peers")
def ssl_book_peers(book="benchmarks/ssl_book.jsonl",
                   defaults="benchmarks/ssl_book_defaults.jsonl") -> str:
    return printed("benchmarks/ssl_book.py", "--summary", book, defaults, "--sets", *PEER_SETS,
                   "--methods", *PEERS)


@table(PRACTICE, "ssl-book settings tried")
def ssl_book_variants(data="benchmarks/ssl_book_variants.jsonl") -> str:
    return printed("benchmarks/ssl_book_variants.py", "--summary", data)


@table(PRACTICE, "ssl-book balance estimates")
def ssl_book_balance() -> str:
    return printed("benchmarks/ssl_book_variants.py", "--balance")


@table(PRACTICE, "multiclass")
def multiclass(data="benchmarks/multiclass.jsonl") -> str:
    return printed("benchmarks/multiclass.py", "--summary", data)


@table(PRACTICE, "cs3vm setting")
def cs3vm_setting(data="benchmarks/cs3vm_setting.jsonl") -> str:
    return printed("benchmarks/cs3vm_setting.py", "--summary", data)


@table(SCALE, "sparse scale")
def sparse_scale(data="benchmarks/sparse_scale.jsonl") -> str:
    return printed("benchmarks/sparse_scale.py", "--out", data, "--table", "b314d2c")


@table(SCALE, "switching scale")
def switching_scale(data="benchmarks/switching_scale.jsonl") -> str:
    rows = records(data)
    header = next(r for r in rows if r.get("part") == "header")
    runs = [r for r in rows if r.get("part") == "switching"]
    out = []
    for n in sorted({r["n"] for r in runs}):
        mine = sorted((r for r in runs if r["n"] == n), key=lambda r: r["seed"])
        out.append([f"{n:,}", len(mine), _seconds(statistics.median(r["seconds"] for r in mine)),
                    _seconds(statistics.median(r["cpu"] for r in mine)),
                    ", ".join(f"{100 * r['error']:.2f}% / {r['objective']:,.1f}" for r in mine)])
    return ours("switching scale") + markdown_table(
        ["n", "seeds", "median s (the result's clock)", "median CPU s",
         "per seed 0, 1, ...: error / J"], out) + "\n\n" + run_note(header, runs, "Run")


@table(SCALE, "l2-miqp build")
def l2_miqp_build(data="benchmarks/l2_miqp_build.jsonl") -> str:
    out = [[f"{r['n']:,}", f"{float(r['loadavg'][0]):.1f}", f"{r['build_median_s']:.2f} s",
            f"{r['walker_median_s']:.2f} s", f"{r['matrix_median_s']:.2f} s",
            f"{r['walker_median_s'] / r['matrix_median_s']:.1f}x", r["date"]] for r in records(data)]
    return ours("l2-miqp build") + markdown_table(
        ["n", "load", "build (`model_to_solve`)", "translation before (Pyomo's walker)",
         "translation now (matrix rows)", "before / now", "date"], out)


@table(SCALE, "peak memory")
def peak_memory(data="benchmarks/peak_memory.jsonl") -> str:
    mib = 2 ** 20
    out = [[r["formulation"], r["kernel"], f"{r['n']:,}", f"{r['time_limit']:.0f}", r["status"],
            "-" if r.get("seconds") is None else f"{r['seconds']:.1f}", f"{r['wall']:.1f}",
            f"{r['peak_bytes'] / mib:,.0f}",
            f"{(r['peak_bytes'] - 1024 * r['baseline_kib']) / mib:,.0f}",
            f"{r['tree_pss_bytes'] / mib:,.0f}", f"{r['load']:.1f}", r["date"]]
           for r in records(data)]
    return ours("peak memory") + markdown_table(
        ["formulation", "kernel", "n", "limit (s)", "status", "solve (s)", "child's wall (s)",
         "peak (MiB)", "growth (MiB)", "tree PSS (MiB)", "load", "date"], out)


@table(SDP, "sdp relaxations")
def sdp_relaxations(data="benchmarks/sdp_relaxations.jsonl") -> str:
    return printed("benchmarks/sdp_relaxations.py", "--table", "--out", data)


@table(SDP, "sdp fr basis")
def sdp_fr_basis(data="benchmarks/sdp_fr_basis.jsonl") -> str:
    return printed("benchmarks/sdp_fr_basis.py", "--table", "--out", data)


@table(SDP, "sdp-s3vm roots")
def sdp_s3vm_roots(data="benchmarks/sdp_s3vm-roots.jsonl") -> str:
    return printed("benchmarks/sdp_s3vm.py", "roots-table", "--out", data)


@table(SDP, "certificate loss")
def certificate_loss(data="benchmarks/sdp_certificate_loss.jsonl") -> str:
    out = [[r["instance"], r["nodes"], r["cert_gap_share"], r["sdp"], r["escalations"],
            f"{r['cpu']:.1f}", r["loss"]["nodes"], f"{100 * r['loss']['median']:.2f}%",
            f"{100 * r['loss']['max']:.2f}%", r["loss"]["over_1pct"]] for r in records(data)]
    return ours("certificate loss") + markdown_table(
        ["instance", "node limit", "escalation threshold (share of gap)", "SDPs", "escalations",
         "CPU s", "nodes with a gap", "loss median", "loss max", "nodes over 1%"], out)


#: the count-balance study's variants (``sdp_s3vm.py count``), in the table's order
COUNT_VARIANTS = {
    "bb-sdp none": "`bb-sdp --count-bound none`: SDP-S3VM's relaxation in v, the count left to "
                   "the search",
    "bb-sdp lifted": "`bb-sdp --count-bound lifted` (default): the labels lifted with the "
                     "outputs, the count and its products, the couplings",
    "bb": "`bb --no-bias` (root): the SVM bound of Chapelle et al. (2006)",
    "bb-sdp-previous": "previous `bb-sdp` (root): De Bie and Cristianini's relaxation on K'",
}


@table(SDP, "subspace solver")
def subspace_solver(data="benchmarks/subspace.jsonl") -> str:
    rows = records(data)
    solves = [r for r in rows if r.get("part") != "header" and r.get("seconds") is not None]
    new_value = {(r["problem"], r["seed"]): r["value"] for r in solves if r["path"] == "new"}
    out = []
    for problem in dict.fromkeys(r["problem"] for r in solves):
        for path in ("new", "old"):
            mine = [r for r in solves if (r["problem"], r["path"]) == (problem, path)]
            if not mine:
                continue
            wall = [r["seconds"] for r in mine]
            gaps = [r["rel_gap"] for r in mine if r.get("rel_gap") is not None]
            above = [100 * (r["value"] / new_value[(problem, r["seed"])] - 1) for r in mine
                     if path == "old" and r.get("value") and new_value.get((problem, r["seed"]))]
            out.append([problem, path, len(mine),
                        f"{statistics.median(wall):.2f} ({min(wall):.2f}-{max(wall):.2f})",
                        f"{statistics.median(r['cpu_seconds'] for r in mine):.2f}",
                        f"{max(r['max_rss_mb'] for r in mine):.0f}",
                        ", ".join(sorted({r["status"] for r in mine})),
                        f"{min(gaps):.1e} - {max(gaps):.1e}" if gaps else "-",
                        " / ".join(f"{a:+.2f}%" for a in above) or "",
                        f"{min(r['load'] for r in mine):.1f}-{max(r['load'] for r in mine):.1f}"])
    dates = sorted({r["date"] for r in rows if r.get("part") == "header"})
    return ours("subspace solver") + markdown_table(
        ["problem", "path", "draws", "wall s, median (min-max)", "CPU s, median",
         "max RSS MB", "status", "certified rel. gap", "old value against new (same draw)",
         "load"], out) + f"\n\nRun {', '.join(dates)}."


@table(SDP, "count bound")
def count_bound(data="benchmarks/sdp_s3vm-count.jsonl") -> str:
    rows = [r for r in records(data) if r.get("part") != "header"]
    instances = list(dict.fromkeys(r["instance"] for r in rows))
    best = {i: min(r["objective"] for r in rows if r["instance"] == i) for i in instances}
    out = []
    for label, what in COUNT_VARIANTS.items():
        cells = [what]
        for i in instances:
            r = next((r for r in rows if r["instance"] == i and r["label"] == label), None)
            cells += (["-"] * 3 if r is None else
                      [f"{r['root_bound']:.4f}", f"{100 * (best[i] - r['root_bound']) / best[i]:.1f}%",
                       _seconds(r["seconds"])])
        out.append(cells)
    head = ["variant"] + [f"{i} {c}" for i in instances for c in ("root bound", "gap", "s")]
    full = [r for r in rows if r["label"].endswith(" full")]
    notes = [f"Gaps against the best labeling any run found ({', '.join(f'{i} {best[i]:.4f}' for i in instances)})."]
    notes += [f"The full search (`{r['label']}`, {r['instance']}, {r['time_limit']:.0f} s): "
              f"{r['status']} after {r['seconds']:.1f} s ({r['cpu']:.0f} CPU s) and {r['nodes']} "
              f"nodes ({r['sdp_solves']} SDPs), best value {r['objective']:.4f}, lower bound "
              f"{r['lower_bound']:.3f} (root {r['root_bound']:.3f}), gap {100 * r['gap']:.1f}%."
              for r in full]
    return ours("count bound") + markdown_table(head, out) + "\n\n" + "\n\n".join(notes)


@table(SDP, "node sdp settings")
def node_sdp_settings(data="benchmarks/node_sdp_speed.jsonl") -> str:
    rows = records(data)
    out = [[r["instance"], r["n"], f"{r['kernel']}, {r['C']:.3g}", r["sdps"], f"{r['old_s']:.2f}",
            f"{r['new_s']:.2f}", f"{r['median_ratio']:.2f}", f"{r['total_ratio']:.2f}",
            f"{r['max_rel_loss']:.1e}"] for r in rows if "sdps" in r]
    summary = next(r for r in rows if r.get("summary"))
    first = next(r for r in rows if "started" in r)
    return ours("node sdp settings") + markdown_table(
        ["instance", "n", "kernel, C", "SDPs", "old CPU s", "new CPU s", "median old / new",
         "old / new of the totals", "largest relative bound loss, new against old"], out) + (
        f"\n\nAll {sum(r['sdps'] for r in rows if 'sdps' in r)} SDPs: median old / new "
        f"{summary['median_ratio']:.2f}, of the totals {summary['total_ratio']:.2f}; 1-minute load "
        f"{first['load'][0]:.1f} at the start ({first['started']} UTC), {summary['load'][0]:.1f} "
        f"at the end ({summary['ended']} UTC).")


@table(LIMITS, "interrupts")
def interrupts(data="benchmarks/interrupt_latency.jsonl") -> str:
    return printed("benchmarks/interrupt_latency.py", "table", data)


@table(LIMITS, "wide csv 20k")
def wide_csv_20k(data="benchmarks/wide_csv-20k.jsonl") -> str:
    return printed("benchmarks/wide_csv.py", "table", data)


@table(LIMITS, "wide csv 5k")
def wide_csv_5k(data="benchmarks/wide_csv-5k.jsonl") -> str:
    return printed("benchmarks/wide_csv.py", "table", data)


@table(CONTRIBUTING, "suite runs")
def suite_runs(data="benchmarks/suite_runs.jsonl") -> str:
    return printed("benchmarks/suite_runs.py", "table", data)


# The changelog's tables come from data files of runs that are over: held to them as the
# reference pages' are, but the entries' text around them is history and not rewritten.
@table(HISTORY, "ssl-book table 1", history=True)
def ssl_book_table_1(data="benchmarks/ssl_book.jsonl") -> str:
    return printed("benchmarks/ssl_book.py", "--summary", data)


@table(HISTORY, "ssl-book table 2", history=True)
def ssl_book_table_2(data="benchmarks/ssl_book.jsonl") -> str:
    return printed("benchmarks/ssl_book.py", "--summary", data, "--common")


@table(HISTORY, "sdp-s3vm mean", history=True)
def sdp_s3vm_mean(data="benchmarks/sdp_s3vm-mean.jsonl") -> str:
    return printed("benchmarks/sdp_s3vm.py", "table", "--out", data)


@table(HISTORY, "sdp-s3vm compare", history=True)
def sdp_s3vm_compare(data="benchmarks/sdp_s3vm-compare.jsonl") -> str:
    return printed("benchmarks/sdp_s3vm.py", "compare-table", "--out", data)


@table(HISTORY, "sdp-s3vm eleven summary", history=True)
def sdp_s3vm_eleven_summary(data="benchmarks/sdp_s3vm-eleven.jsonl") -> str:
    return printed("benchmarks/sdp_s3vm.py", "compare-summary", "--out", data)


@table(HISTORY, "sdp-s3vm eleven", history=True)
def sdp_s3vm_eleven(data="benchmarks/sdp_s3vm-eleven.jsonl") -> str:
    return printed("benchmarks/sdp_s3vm.py", "compare-table", "--out", data)


# -- plots ---------------------------------------------------------------------------------------
def digest(name: str, numbers) -> str:
    """SHA-256 of what a plot draws: floats to 10 significant digits, so that the last bits of a
    mean computed by another library version do not count."""
    def normal(x):
        if isinstance(x, float):
            return float(f"{x:.10g}")
        if isinstance(x, dict):
            return {str(k): normal(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [normal(v) for v in x]
        return x
    text = json.dumps({"plot": name, "numbers": normal(numbers)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def plot_digest(name: str, **data) -> str:
    numbers, _ = PLOTS[name].make(**data)
    return digest(name, numbers)


def recorded_digest(path: Path) -> str | None:
    """The digest an SVG written here records; None for a missing file or a foreign one."""
    if not path.exists():
        return None
    found = re.search(r"benchmarks/pages\.py [^<]* sha256:([0-9a-f]{64})", path.read_text())
    return found.group(1) if found else None


def render_plot(name: str, path: Path | None = None, **data) -> str:
    """Draw the plot ``name`` from its data into ``path`` (its place in docs/img by default);
    returns the digest it records."""
    import matplotlib
    from matplotlib.figure import Figure

    spec = PLOTS[name]
    numbers, draw = spec.make(**data)
    value = digest(name, numbers)
    # A fixed salt and no date: the same numbers give the same file on the same matplotlib.
    style = {"svg.hashsalt": f"s3vm-{name}", "svg.fonttype": "none", "font.size": 9,
             "axes.spines.top": False, "axes.spines.right": False}
    with matplotlib.rc_context(style):
        figure = Figure(figsize=spec.size, layout="constrained")
        draw(figure)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={
            "Date": None, "Title": name,
            "Description": f"drawn by benchmarks/pages.py {name} from its data, sha256:{value}"})
    (path or spec.path).write_bytes(buffer.getvalue())
    return value


def _latest(paths: list[str], key) -> dict:
    """The records of several files, a later record of the same key replacing an earlier one
    (as the scripts' own summaries read them)."""
    latest = {}
    for path in paths:
        for r in records(path):
            latest[key(r)] = r
    return latest


@plot("safe-estimator-vs-svc", PRACTICE, INDEX, size=(7.6, 3.8))
def safe_estimator_vs_svc(data="benchmarks/practitioner.jsonl"):
    from practitioner import rows_of

    numbers = {}
    for (name, protocol, l), row in sorted(rows_of(records(data)).items()):
        if all(m in row for m in ("svc", "s3vm", "s3vm-old")):
            numbers.setdefault(protocol, []).append(
                [name, l, round(row["svc"], 3), round(row["s3vm"], 3), round(row["s3vm-old"], 3)])

    def draw(figure):
        axes = figure.subplots(1, len(numbers), sharey=True)
        for ax, (protocol, rows) in zip(np.atleast_1d(axes), sorted(numbers.items())):
            svc = [r[2] for r in rows]
            top = max(max(svc), max(max(r[3], r[4]) for r in rows)) + 2
            ax.plot([0, top], [0, top], color="0.6", lw=0.8)
            ax.scatter(svc, [r[4] for r in rows], s=14, facecolors="none", edgecolors="C1",
                       label="s3vm before (labeled ratio, no safeguard)")
            ax.scatter(svc, [r[3] for r in rows], s=14, color="C0", label="S3VMClassifier()")
            ax.set_title(f"labels drawn {protocol}")
            ax.set_xlabel("SVC on the labeled rows: error (%)")
        np.atleast_1d(axes)[0].set_ylabel("error on the unlabeled rows (%)")
        np.atleast_1d(axes)[0].legend(fontsize=7, loc="upper left")
    return numbers, draw


@plot("error-vs-labeled", PRACTICE, INDEX, size=(7.2, 4.6))
def error_vs_labeled(book="benchmarks/ssl_book.jsonl",
                     defaults="benchmarks/ssl_book_defaults.jsonl"):
    from ssl_book import BOOK_TSVM

    latest = _latest([book, defaults], lambda r: (r["set"], r["l"], r["split"], r["method"]))
    numbers = {}
    for name in PEER_SETS:
        numbers[name] = {"book's TSVM": [[l, BOOK_TSVM[(name, l)]] for l in (10, 100)]}
        for method in PEERS:
            points = []
            for l in (10, 100):
                errors = [r["error"] for (s, l_, _, m), r in latest.items()
                          if (s, l_, m) == (name, l, method) and r["error"] is not None]
                if errors:
                    points.append([l, 100 * statistics.fmean(errors)])
            numbers[name][method] = points

    def draw(figure):
        axes = figure.subplots(2, 3, sharex=True).ravel()
        for ax, name in zip(axes, PEER_SETS):
            for method, points in numbers[name].items():
                xs, ys = zip(*points)
                book_line = method == "book's TSVM"
                ax.plot(xs, ys, "k--" if book_line else "o-", lw=1.8 if method == "defaults" else 1,
                        ms=3, label=method if method != "defaults" else "S3VMClassifier()",
                        zorder=3 if method == "defaults" else 2)
            ax.set_xscale("log")
            ax.set_xticks([10, 100], ["10", "100"])
            ax.set_title(name)
            ax.set_ylim(0, 55)
        for ax in axes[3:]:
            ax.set_xlabel("labeled points l")
        for ax in axes[::3]:
            ax.set_ylabel("error % (unlabeled)")
        handles, labels = axes[0].get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=8,
                      frameon=False)
    return numbers, draw


@plot("bb-seconds-vs-u", EXACT, INDEX, size=(6.0, 3.6))
def bb_seconds_vs_u(data="benchmarks/bb_scale.jsonl"):
    runs = [r for r in records(data) if r.get("part") == "scale"]
    sizes = sorted({r["u"] for r in runs})
    numbers = {"seeds": [[r["u"], r["seed"], r["cpu"], r["status"] == "optimal"] for r in runs],
               "median cpu": [[u, statistics.median(r["cpu"] for r in runs if r["u"] == u)]
                              for u in sizes],
               "median wall": [[u, statistics.median(r["seconds"] for r in runs if r["u"] == u)]
                               for u in sizes]}

    def draw(figure):
        ax = figure.subplots()
        us, cpu = zip(*numbers["median cpu"])
        ax.plot(us, cpu, "o-", color="C0", label="median CPU seconds")
        us, wall = zip(*numbers["median wall"])
        ax.plot(us, wall, "s--", color="C1", ms=4, label="median wall seconds (shared machine)")
        seeds = numbers["seeds"]
        ax.scatter([s[0] for s in seeds], [s[2] for s in seeds], s=12, color="C0", alpha=0.4,
                   label="one seed (CPU s)")
        ax.set_yscale("log")
        ax.set_xlabel("unlabeled points u (two moons, 2 labeled)")
        ax.set_ylabel("seconds to prove optimal")
        ax.legend(frameon=False, fontsize=8)
    return numbers, draw


@plot("bb-sdp-gap-vs-time", EXACT, INDEX, size=(7.0, 4.2))
def bb_sdp_gap_vs_time(short="benchmarks/sdp_s3vm-60.jsonl",
                       long="benchmarks/sdp_s3vm-600.jsonl"):
    # The records hold the root's end and the run's end; the 60 s run of the same problem adds
    # the gap at 60 s. Nothing between them is recorded, so nothing is drawn between them.
    numbers = {}
    for path in (short, long):
        for r in records(path):
            if (r.get("part") == "header" or r.get("formulation") != "bb-sdp"
                    or r.get("convention") != "code" or r.get("seed") != 0
                    or r.get("code", "new") != "new"):
                continue
            points = numbers.setdefault(r["instance"], {"n": r["n"], "points": []})["points"]
            if r.get("root_incumbent") and r.get("root_seconds") is not None:
                root = (r["root_incumbent"] - r["root_bound"]) / r["root_incumbent"]
                points.append([r["root_seconds"], 100 * root, "root"])
            points.append([r["seconds"], 100 * r["gap"],
                           "proved" if r["status"] == "optimal" else "open"])
    for entry in numbers.values():
        entry["points"].sort()

    def draw(figure):
        ax = figure.subplots()
        floor = 0.01
        colours = [f"C{k}" for k in range(10)] + ["black"]
        for k, (name, entry) in enumerate(sorted(numbers.items(), key=lambda e: e[1]["n"])):
            pts = entry["points"]
            colour = colours[k % len(colours)]
            ys = [max(p[1], floor) for p in pts]
            ax.plot([p[0] for p in pts], ys, ":", color=colour, lw=1)
            for (t, _, kind), y in zip(pts, ys):
                marker = {"root": "o", "open": "s", "proved": "*"}[kind]
                ax.plot(t, y, marker, color=colour, ms=9 if kind == "proved" else 5,
                        mfc=colour if kind != "root" else "white")
            ax.plot([], [], "s", color=colour, label=f"{name} (n = {entry['n']})")
        ax.axhline(0.1, color="grey", lw=0.8)
        ax.text(0.01, 0.1, "relative gap 1e-3: proved below", fontsize=7, color="grey",
                ha="left", va="bottom", transform=ax.get_yaxis_transform())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("seconds (2 workers, one BLAS thread each)")
        ax.set_ylabel("gap % (incumbent - bound) / incumbent")
        ax.plot([], [], "o", color="k", mfc="white", label="end of the root")
        ax.plot([], [], "s", color="k", label="end of a run (60 s or 600 s)")
        ax.plot([], [], "*", color="k", ms=9, label="proved")
        figure.legend(*ax.get_legend_handles_labels(), frameon=False, fontsize=7,
                      loc="outside right upper")
    return numbers, draw


@plot("sparse-seconds-vs-n", SCALE, size=(6.4, 4.4))
def sparse_seconds_vs_n(data="benchmarks/sparse_scale.jsonl", commit="b314d2c"):
    labels = {"primal-tsvm-defaults": "S3VMClassifier(kernel=\"linear\")",
              "primal-tsvm": "primal-tsvm, C = 1, C* = 10 C l / u",
              "linearsvc-all": "LinearSVC, every true label",
              "linearsvc-labeled": "LinearSVC, labeled rows only",
              "linearsvc-switching": "LinearSVC label-switching loop"}
    rows = records(data)
    numbers = {}
    for method, label in labels.items():
        points = sorted([r["n"], r["seconds"]] for r in rows
                        if r.get("commit") == commit and r["method"] == method)
        if points:
            numbers[label] = points
    # The first records (no commit field) are the code before issue 26's work.
    before = sorted([r["n"], r["seconds"]] for r in rows
                    if "commit" not in r and r["method"] == "primal-tsvm")
    if before:
        numbers["primal-tsvm, C = 1, before (2026-11-28 00:01)"] = before

    def draw(figure):
        ax = figure.subplots()
        for k, (label, points) in enumerate(numbers.items()):
            xs, ys = zip(*points)
            ax.plot(xs, ys, "o--" if "before" in label else "o-", label=label,
                    color="grey" if "before" in label else f"C{k}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("documents n (10^5 words, 30 draws a document)")
        ax.set_ylabel("seconds a fit (wall)")
        figure.legend(*ax.get_legend_handles_labels(), frameon=False, fontsize=7, ncol=2,
                      loc="outside lower center")
    return numbers, draw


@plot("switching-seconds-vs-n", SCALE, size=(6.0, 3.6))
def switching_seconds_vs_n(data="benchmarks/switching_scale.jsonl"):
    runs = [r for r in records(data) if r.get("part") == "switching"]
    sizes = sorted({r["n"] for r in runs})
    numbers = {"seeds": [[r["n"], r["seed"], r["cpu"], r["error"]] for r in runs],
               "median cpu": [[n, statistics.median(r["cpu"] for r in runs if r["n"] == n)]
                              for n in sizes],
               "median clock": [[n, statistics.median(r["seconds"] for r in runs if r["n"] == n)]
                                for n in sizes]}

    def draw(figure):
        ax = figure.subplots()
        xs, ys = zip(*numbers["median cpu"])
        ax.plot(xs, ys, "o-", color="C0", label="median CPU seconds")
        xs, ys = zip(*numbers["median clock"])
        ax.plot(xs, ys, "s--", color="C1", ms=4, label="median seconds, the result's clock")
        seeds = numbers["seeds"]
        good = [s for s in seeds if s[3] < 0.05]
        poor = [s for s in seeds if s[3] >= 0.05]
        ax.scatter([s[0] for s in good], [s[2] for s in good], s=12, color="C0", alpha=0.4,
                   label="one seed (CPU s)")
        ax.scatter([s[0] for s in poor], [s[2] for s in poor], s=22, color="C3", marker="x",
                   label="one seed ending at 5% error or more")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("points n (two moons, 10 labeled)")
        ax.set_ylabel("seconds a solve")
        ax.legend(frameon=False, fontsize=7)
    return numbers, draw


@plot("interrupt-seconds", LIMITS, size=(6.4, 5.6))
def interrupt_seconds(data="benchmarks/interrupt_latency.jsonl"):
    rows = records(data)
    numbers = {}
    for r in rows:
        if r.get("signalled"):
            numbers.setdefault(f"{r['formulation']} ({r['asked']})", {})[r["label"]] = \
                r["after_signal"]

    def draw(figure):
        ax = figure.subplots()
        names = list(numbers)
        labels = list(dict.fromkeys(label for v in numbers.values() for label in v))
        height = 0.8 / max(1, len(labels))
        for k, label in enumerate(labels):
            ys = [i + k * height for i in range(len(names))]
            ax.barh(ys, [numbers[n].get(label, 0) for n in names], height=height, label=label)
        ax.set_yticks([i + 0.4 - height / 2 for i in range(len(names))], names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("seconds from SIGINT to the exit")
        ax.legend(frameon=False, title="code")
    return numbers, draw


# -- the command line ----------------------------------------------------------------------------
def out_of_date() -> list[str]:
    """The tables and plots whose page or image does not show their data now."""
    stale = []
    for spec in TABLES.values():
        if not shows((DOCS / spec.page).read_text(), spec.name):
            stale.append(f"table {spec.name!r} in docs/{spec.page}")
    for spec in PLOTS.values():
        if recorded_digest(spec.path) != plot_digest(spec.name):
            stale.append(f"plot docs/img/{spec.name}.svg")
    return stale


def write_all(redraw: bool = False) -> list[str]:
    """Rewrite every table and plot that is out of date (every plot with ``redraw``, after a
    change of how it is drawn, which its digest does not cover); returns what was written."""
    written = []
    for spec in TABLES.values():
        if spec.history:
            continue
        page = DOCS / spec.page
        text = page.read_text()
        if block_in(text, spec.name) is None:
            raise SystemExit(f"docs/{spec.page} has no markers for the table {spec.name!r}: "
                             f"{' and '.join(markers(spec.name))}")
        content = render_table(spec.name)
        if block_in(text, spec.name) != content:
            page.write_text(with_block(text, spec.name, content))
            written.append(f"docs/{spec.page}: {spec.name}")
    IMG.mkdir(exist_ok=True)
    for spec in PLOTS.values():
        if redraw or recorded_digest(spec.path) != plot_digest(spec.name):
            render_plot(spec.name)
            written.append(f"docs/img/{spec.name}.svg")
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument("--print", metavar="NAME", dest="name", help="print one table")
    parser.add_argument("--list", action="store_true", help="list the tables and plots")
    parser.add_argument("--redraw", action="store_true",
                        help="draw every plot again (after a change of how they are drawn)")
    args = parser.parse_args(argv)
    if args.list:
        for spec in TABLES.values():
            print(f"table  {spec.name:32s} docs/{spec.page}")
        for spec in PLOTS.values():
            print(f"plot   {spec.name:32s} docs/img/{spec.name}.svg in "
                  + ", ".join(f"docs/{p}" for p in spec.pages))
        return 0
    if args.name:
        if args.name not in TABLES:
            parser.error(f"no table {args.name!r}; --list names them")
        print(TABLES[args.name].make().strip("\n"))
        return 0
    if args.check:
        stale = out_of_date()
        for what in stale:
            print(f"out of date: {what}")
        return 1 if stale else 0
    for what in write_all(args.redraw):
        print(f"wrote {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
