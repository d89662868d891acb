"""Benchmark: the De Bie-Cristianini SDP family.

1. ``sdp`` (the reduced full relaxation) at u = 100 with the default backend (SCS), goal < 10 s;
   and with Clarabel (one run, 300 s limit). Time split: model build (CVXPY expressions),
   CVXPY compilation (``problem.compilation_time``: canonicalisation to the solver's standard
   form), solver (``solver_stats.solve_time`` + ``setup_time``), the rest (D at the rounded labels).
2. ``sdp-lowrank`` on n = 20,000 points (linear kernel, 50 features, d = 4), goal < 60 s, and
   n = 100,000 (stretch), SCS. Time split: spectral step (``subspace_basis``), solver calls (all
   working-set rounds), D(y) at the labels (``supervised_value``), the rest.

Data: ``gaussian_blobs(n, p, separation=3.0, n_labeled_per_class=k, seed=0)``; sdp: n = 110,
p = 10, 5 labeled per class (u = 100); lowrank: p = 50, 10 labeled per class. Settings: linear
kernel, C = 1 (soft margin), and for ``sdp`` also rbf with sigma = mean nearest-neighbour distance,
hard margin. Medians of ``--reps`` runs for runs under a minute, one run otherwise.

    .venv/bin/python benchmarks/bench_sdp.py                  # everything, writes its section
    .venv/bin/python benchmarks/bench_sdp.py --parts sdp --no-doc
    .venv/bin/python benchmarks/bench_sdp.py --from-json saved.json   # rewrite the section only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3vm.core.registry import get_formulation  # noqa: E402
from s3vm.core.settings import Settings  # noqa: E402
from s3vm.data.generators import gaussian_blobs  # noqa: E402
from s3vm.formulations import sdp_lowrank  # noqa: E402
from s3vm.models.spectral import nearest_neighbour_sigma  # noqa: E402
from s3vm.solvers.profiles import SolverProfile  # noqa: E402

import benchmd  # noqa: E402
from benchmd import fmt, median, table  # noqa: E402

REC: dict = {}


def instrument():
    """Timing wrappers (the calls made are unchanged)."""
    from s3vm.solvers.backends.cvxpy import conic as cvxpy_conic

    original_solve = cvxpy_conic.CvxpyBackend.solve

    def solve(self, problem, profile):
        start = time.perf_counter()
        out = original_solve(self, problem, profile)
        REC.setdefault("backend_s", []).append(time.perf_counter() - start)
        stats = problem.solver_stats
        REC.setdefault("compile_s", []).append(getattr(problem, "compilation_time", None) or 0.0)
        REC.setdefault("solver_s", []).append((stats.solve_time or 0.0) + (stats.setup_time or 0.0))
        REC.setdefault("iters", []).append(stats.num_iters)
        return out

    cvxpy_conic.CvxpyBackend.solve = solve

    original_basis = sdp_lowrank.subspace_basis

    def basis(*args, **kwargs):
        start = time.perf_counter()
        out = original_basis(*args, **kwargs)
        REC["spectral_s"] = REC.get("spectral_s", 0.0) + time.perf_counter() - start
        return out

    sdp_lowrank.subspace_basis = basis

    original_value = sdp_lowrank.LowRankSDP.supervised_value

    def value(self, *args, **kwargs):
        start = time.perf_counter()
        out = original_value(self, *args, **kwargs)
        REC["value_s"] = time.perf_counter() - start
        return out

    sdp_lowrank.LowRankSDP.supervised_value = value

    from s3vm.formulations.families.conic import ConicFormulation
    original_build = ConicFormulation.build

    def build(self, *args, **kwargs):
        start = time.perf_counter()
        out = original_build(self, *args, **kwargs)
        REC["build_s"] = time.perf_counter() - start
        return out

    ConicFormulation.build = build


def timed_solve(name, options, inst, settings, profile) -> dict:
    REC.clear()
    form = get_formulation(name, **options)
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    res = form.solve(inst, settings, profile)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    truth = inst.truth_U
    return {"total_s": wall, "cpu_s": cpu, "load": load, "status": res.status,
            "objective": res.objective, "lower_bound": res.lower_bound,
            "relaxation_value": res.info.get("relaxation_value"),
            "error": (None if res.labels is None
                      else float(np.mean(np.asarray(res.labels) != truth))),
            "build_s": REC.get("build_s"), "compile_s": sum(REC.get("compile_s", [])),
            "solver_s": sum(REC.get("solver_s", [])), "backend_s": sum(REC.get("backend_s", [])),
            "solver_calls": len(REC.get("backend_s", [])), "iters": REC.get("iters"),
            "spectral_s": REC.get("spectral_s"), "value_s": REC.get("value_s"),
            "working_set": res.info.get("working_set_size"),
            "rounds": res.info.get("working_set_rounds"), "message": res.message}


def sdp_part(args) -> list:
    inst = gaussian_blobs(110, p=10, separation=3.0, n_labeled_per_class=5, seed=0)
    configs = [("linear, C = 1", Settings(kernel="linear", C=1.0)),
               ("rbf (NN sigma), hard margin",
                Settings(kernel="rbf", sigma=nearest_neighbour_sigma(inst.X), hard_margin=True))]
    rows = []
    for label, settings in configs:
        for solver, reps, limit in (("scs", args.reps, None), ("clarabel", 1, 300.0)):
            if solver == "clarabel" and not args.clarabel:
                continue
            runs = []
            for _ in range(reps):
                runs.append(timed_solve("sdp", {}, inst, settings,
                                        SolverProfile(solver=solver, time_limit=limit)))
                print(json.dumps({"part": "sdp", "config": label, "solver": solver, **runs[-1]},
                                 default=str), flush=True)
            rows.append({"config": label, "solver": solver, "n": inst.n, "u": inst.u,
                         "runs": runs})
    return rows


def lowrank_part(args) -> list:
    rows = []
    for n in args.sizes:
        inst = gaussian_blobs(n, p=50, separation=3.0, n_labeled_per_class=10, seed=0)
        settings = Settings(kernel="linear", C=1.0)
        runs = []
        for rep in range(args.reps):
            runs.append(timed_solve("sdp-lowrank", {"dim": 4}, inst, settings,
                                    SolverProfile(solver="scs")))
            print(json.dumps({"part": "lowrank", "n": n, **runs[-1]}, default=str), flush=True)
            if runs[-1]["total_s"] > 60 and not args.all_reps:
                break
        rows.append({"n": n, "u": inst.u, "runs": runs})
    return rows


def med(runs, key):
    return median([r[key] for r in runs])


def versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in ("cvxpy", "scs", "clarabel",
                                                             "scikit-learn"))


def section(sdp_rows, lr_rows, info, wall, command=None) -> str:
    lines = [f"Command (from the repository root): `{command or benchmd.command_line()}`", ""]
    lines += benchmd.machine_lines(info)
    lines += [f"- {info.get('versions') or versions()}"]
    lines += [
        f"- 1-minute load average at the start of each run is in the *load* column: other sessions' "
        f"jobs shared the 2 cores, so wall times are noisy; *CPU s* (CPU seconds of the benchmark "
        f"process) is the steadier figure. Benchmark wall time {wall:.0f} s.",
        "- Data: `gaussian_blobs(n, p, separation=3.0, n_labeled_per_class=k, seed=0)`. "
        "`sdp`: n = 110, p = 10, k = 5 (l = 10, u = 100). `sdp-lowrank`: p = 50, k = 10, "
        "linear kernel, C = 1, d = 4, SCS, default working set (1000 points first, n > 1000).",
        "- Timings: wall seconds of `Formulation.solve`, medians of the runs stated (one run where "
        "a run took over a minute). *build*: the CVXPY expressions (`build_cvxpy`); *compile*: "
        "CVXPY's `compilation_time` (canonicalisation to the solver's standard form); *solver*: "
        "the solver's own setup + solve time; *rest*: D at the rounded labels (a Clarabel QP) and "
        "bookkeeping. For `sdp-lowrank`: *spectral*: `subspace_basis` (the sparse kNN path beyond "
        "1000 points); *solver calls*: all working-set rounds (compile + solve); *D(y)*: "
        "`supervised_value`.",
        "",
        "### `sdp` at u = 100 (goal: under 10 s with the default backend, SCS)",
        "",
    ]
    trs = []
    for r in sdp_rows:
        runs = r["runs"]
        total = med(runs, "total_s")
        rest = total - med(runs, "build_s") - med(runs, "compile_s") - med(runs, "solver_s")
        trs.append([r["config"], r["solver"], len(runs), fmt(total, 1), fmt(med(runs, "cpu_s"), 1),
                    fmt(med(runs, "build_s")), fmt(med(runs, "compile_s")),
                    fmt(med(runs, "solver_s")), fmt(rest), runs[0]["iters"],
                    runs[0]["status"], fmt(runs[0]["lower_bound"], 5),
                    fmt(runs[0]["objective"], 5), fmt(runs[0]["error"], 3),
                    fmt(med(runs, "load"), 1)])
    lines.append(table(["kernel", "solver", "runs", "total s", "CPU s", "build", "compile",
                        "solver", "rest", "iterations", "status", "lower bound", "objective",
                        "error", "load"], trs))
    lines += ["", "### `sdp-lowrank`, linear kernel, 50 features, d = 4 (goal: n = 20,000 "
              "under 60 s; n = 100,000 stretch)", ""]
    trs = []
    for r in lr_rows:
        runs = r["runs"]
        total = med(runs, "total_s")
        spec = med(runs, "spectral_s")
        trs.append([f"{r['n']:,}", len(runs), fmt(total, 1), fmt(med(runs, "cpu_s"), 1),
                    f"{fmt(spec, 1)} ({100 * spec / total:.0f}%)",
                    fmt(med(runs, "backend_s"), 1), fmt(med(runs, "compile_s"), 1),
                    runs[0]["solver_calls"], runs[0]["working_set"],
                    fmt(med(runs, "value_s"), 1), runs[0]["status"],
                    fmt(runs[0]["relaxation_value"], 3), fmt(runs[0]["objective"], 3),
                    fmt(runs[0]["error"], 4), fmt(med(runs, "load"), 1)])
    lines.append(table(["n", "runs", "total s", "CPU s", "spectral s (share)", "solver calls s",
                        "(compile)", "rounds", "working set", "D(y) s", "status",
                        "subspace value", "D(y)", "error", "load"], trs))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", nargs="+", default=["sdp", "lowrank"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[20000, 100000])
    ap.add_argument("--no-clarabel", dest="clarabel", action="store_false")
    ap.add_argument("--all-reps", action="store_true",
                    help="sdp-lowrank: --reps runs even when a run takes over a minute")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--from-json", default=None,
                    help="rewrite the section from a saved --json file (no run)")
    args = ap.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as fh:
            saved = json.load(fh)
        sdp_rows, lr_rows, info = saved["sdp"], saved["lowrank"], saved["machine"]
        wall = saved.get("wall", float("nan"))
        command = saved.get("command")
    else:
        instrument()
        info = benchmd.machine()
        info["versions"] = versions()
        start = time.perf_counter()
        sdp_rows = sdp_part(args) if "sdp" in args.parts else []
        lr_rows = lowrank_part(args) if "lowrank" in args.parts else []
        wall = time.perf_counter() - start
        command = benchmd.command_line()
    body = section(sdp_rows, lr_rows, info, wall, command)
    print(body)
    if args.json and not args.from_json:
        with open(args.json, "w") as fh:
            json.dump({"sdp": sdp_rows, "lowrank": lr_rows, "machine": info, "wall": wall,
                       "command": command}, fh, indent=1, default=str)
    if not args.no_doc:
        benchmd.write_section("bench_sdp", "De Bie-Cristianini SDPs: `sdp` at u = 100, "
                              "`sdp-lowrank` at scale", body)


if __name__ == "__main__":
    main()
