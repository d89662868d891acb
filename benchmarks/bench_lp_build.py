"""Benchmark: the 1-norm SVM LP through the project's Pyomo path against the same LP in highspy.

    min e'y + mu e'z  s.t.  D(A w - e g) + y >= e,  -z <= w <= z,  y, z >= 0

on n points with 10 features, all labeled (gaussian_blobs, seeded; Instance with label = truth).

Routes, all in one process and interleaved within each repetition (so that drift of the
machine's speed hits every route alike; odd repetitions run the direct route of each pair first):

  pyomo-primal   SVM1(lp_form="primal").solve(instance, Settings(mu), SolverProfile("highs"))
  direct-primal  the same primal LP (same rows, columns and order as HighsSession passes to HiGHS,
                 checked below) built from numpy/scipy CSR, addCols/addRows, run, with the HiGHS
                 algorithm HighsSession picks for a first solve (IPM + crossover at >= 5000 rows)
  pyomo-dual     SVM1(lp_form="dual").solve(...)  (the project's default form with HiGHS)
  direct-dual    the LP dual the same way (p + 1 rows; HighsSession picks dual simplex)
  *-default      the direct routes with HiGHS defaults (no option set)

The issue's comparison is pyomo-primal against direct-primal; pyomo-dual against direct-dual is
reported too. Run by hand:

    .venv/bin/python benchmarks/bench_lp_build.py                 # 10,000 and 100,000 points
    .venv/bin/python benchmarks/bench_lp_build.py --sizes 10000 --reps 1 --no-doc   # quick
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import inspect
import io
import json
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchmd  # noqa: E402
from benchmd import fmt, median, table  # noqa: E402

P = 10
REL_TOL = 1e-6
REC: dict = {}


# ---------------------------------------------------------------------------------------------
# The project's path, instrumented (timing wrappers only; the calls made are unchanged)

def instrument_project():
    from s3vm.formulations.svm1 import SVM1
    from s3vm.solvers.backends.pyomo import highs as highs_backend

    source = inspect.getsource(highs_backend.HighsBackend.solve)
    assert "HighsSession(self, model, profile, clock).resolve()" in source, \
        "HighsBackend.solve changed: update the timing wrapper of this benchmark"

    def solve(self, model, profile, clock=None):  # = HighsBackend.solve, a stopwatch on h.run()
        session = highs_backend.HighsSession(self, model, profile, clock)
        REC["setup_s"] = session.setup_seconds
        session.h = benchmd.TimedHighs(session.h)
        outcome = session.resolve()
        REC["runs"] = session.h.runs
        return outcome

    highs_backend.HighsBackend.solve = solve
    compile_seconds = benchmd.instrument_compiler()

    class TimedSVM1(SVM1):
        def model_to_solve(self, instance, settings, backend):
            start = time.perf_counter()
            model = super().model_to_solve(instance, settings, backend)
            REC["model_s"] = time.perf_counter() - start
            return model

    return TimedSVM1, compile_seconds


def run_pyomo(SVM1, compile_seconds, instance, settings, form, collect=True):
    from s3vm.solvers.profiles import SolverProfile

    REC.clear()
    compile_seconds.clear()
    if collect:
        gc.collect()
    load, cpu = os.getloadavg()[0], time.process_time()
    start = time.perf_counter()
    result = SVM1(lp_form=form).solve(instance, settings, SolverProfile(solver="highs"))
    total = time.perf_counter() - start
    cpu = time.process_time() - cpu
    assert result.status == "optimal", result.status
    run = REC["runs"][-1]
    build = REC["model_s"] + REC["setup_s"]
    return {"build": build, "model": REC["model_s"], "compile": sum(compile_seconds),
            "to_highs": REC["setup_s"] - sum(compile_seconds), "solve": run["seconds"],
            "other": total - build - run["seconds"], "total": total,
            "objective": result.objective, "algorithm": benchmd.algorithm_label(run),
            "algo_options": {k: run[k] for k in ("solver", "simplex_strategy", "run_crossover")},
            "simplex": run["simplex"], "ipm": run["ipm"], "w": result.primal["w"],
            "g": -result.primal["b"], "cpu_share": cpu / total, "load": load}


# ---------------------------------------------------------------------------------------------
# The direct route

def primal_arrays(XL, d, mu, inf):
    """The primal LP in HighsSession's layout: columns [y (l), z (p), w (p), g]; rows
    [labeled margins (>= 1), w - z <= 0, w + z >= 0]."""
    l, p = XL.shape
    ncol = l + 2 * p + 1
    cost = np.concatenate([np.ones(l), np.full(p, mu), np.zeros(p + 1)])
    col_lower = np.concatenate([np.zeros(l + p), np.full(p + 1, -inf)])
    col_upper = np.full(ncol, inf)
    # margin row i: y_i (1), w (d_i A_i), g (-d_i)
    width = p + 2
    idx = np.empty((l, width), dtype=np.int32)
    val = np.empty((l, width))
    idx[:, 0] = np.arange(l)
    val[:, 0] = 1.0
    idx[:, 1:p + 1] = l + p + np.arange(p)
    val[:, 1:p + 1] = XL * d[:, None]
    idx[:, p + 1] = l + 2 * p
    val[:, p + 1] = -d
    k = np.arange(p, dtype=np.int32)
    norm_idx = np.column_stack([l + k, l + p + k]).ravel()  # z_k, w_k
    index = np.concatenate([idx.ravel(), norm_idx, norm_idx])
    value = np.concatenate([val.ravel(), np.tile([-1.0, 1.0], p), np.ones(2 * p)])
    start = np.concatenate([np.arange(l, dtype=np.int32) * width,
                            l * width + 2 * np.arange(2 * p, dtype=np.int32)])
    row_lower = np.concatenate([np.ones(l), np.full(p, -inf), np.zeros(p)])
    row_upper = np.concatenate([np.full(l, inf), np.zeros(p), np.full(p, inf)])
    return cost, col_lower, col_upper, row_lower, row_upper, start, index, value


def dual_arrays(XL, d, mu, inf):
    """The LP dual in HighsSession's layout: columns a (l); rows [-mu <= (DA)' a <= mu (p),
    d'a = 0]; objective -e'a, 0 <= a <= 1."""
    l, p = XL.shape
    cost = -np.ones(l)
    col_lower, col_upper = np.zeros(l), np.ones(l)
    value = np.concatenate([(XL * d[:, None]).T.ravel(), d])
    index = np.tile(np.arange(l, dtype=np.int32), p + 1)
    start = np.arange(p + 1, dtype=np.int32) * l
    row_lower = np.concatenate([np.full(p, -mu), [0.0]])
    row_upper = np.concatenate([np.full(p, mu), [0.0]])
    return cost, col_lower, col_upper, row_lower, row_upper, start, index, value


def session_algorithm(n_rows: int) -> dict:
    """What HighsSession._choose_lp_algorithm picks for the first solve of an LP."""
    from s3vm.solvers.backends.pyomo.highs import LARGE_LP_ROWS

    if n_rows >= LARGE_LP_ROWS:
        return {"solver": "ipm", "run_crossover": "on"}
    return {"solver": "simplex", "simplex_strategy": 1}


def run_direct(instance, mu, form, options):
    import highspy

    gc.collect()
    load, cpu = os.getloadavg()[0], time.process_time()
    start = time.perf_counter()
    XL, d = instance.XL, instance.yL
    l, p = XL.shape
    inf = highspy.kHighsInf
    arrays = (primal_arrays if form == "primal" else dual_arrays)(XL, d, mu, inf)
    cost, col_lower, col_upper, row_lower, row_upper, rstart, index, value = arrays
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for key, val in options.items():
        h.setOptionValue(key, val)
    empty_i = np.array([], dtype=np.int32)
    h.addCols(cost.size, cost, col_lower, col_upper, 0, empty_i, empty_i, np.array([]))
    h.addRows(row_lower.size, row_lower, row_upper, value.size, rstart, index, value)
    built = time.perf_counter()
    h.run()
    ran = time.perf_counter()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal, h.getModelStatus()
    info = h.getInfo()
    solution = h.getSolution()
    if form == "primal":
        x = np.asarray(solution.col_value)
        w, g = x[l + p:l + 2 * p], float(x[l + 2 * p])
        objective = float(info.objective_function_value)
    else:
        y = np.asarray(solution.row_dual)
        w, g = -y[:p], float(y[p])
        objective = -float(info.objective_function_value)
    end = time.perf_counter()
    cpu = time.process_time() - cpu
    return {"build": built - start, "solve": ran - built, "other": end - ran,
            "total": end - start, "objective": objective, "cpu_share": cpu / (end - start),
            "load": load,
            "algo_options": {k: benchmd.option(h, k)
                             for k in ("solver", "simplex_strategy", "run_crossover")},
            "simplex": int(info.simplex_iteration_count), "ipm": int(info.ipm_iteration_count),
            "w": w, "g": g}


def check_layout(n=300, seed=1):
    """The direct arrays are the very LP HighsSession hands HiGHS (both forms), at small n."""
    import highspy
    import scipy.sparse as sp

    from s3vm.models.problem3 import Problem3Data, build_problem3, build_problem3_dual
    from s3vm.solvers.backends.pyomo.highs import HighsBackend, HighsSession
    from s3vm.solvers.profiles import SolverProfile

    instance = make_instance(n, seed)
    data = Problem3Data.from_instance(instance)
    inf = highspy.kHighsInf
    for form, build, arrays in (("primal", build_problem3, primal_arrays),
                                ("dual", build_problem3_dual, dual_arrays)):
        session = HighsSession(HighsBackend(), build(data, mu=0.1), SolverProfile())
        lp = session.h.getLp()
        cost, cl, cu, rl, ru, start, index, value = arrays(instance.XL, instance.yL, 0.1, inf)
        ours = sp.csr_matrix((value, index, np.append(start, value.size)),
                             shape=(rl.size, cost.size)).toarray()
        a = lp.a_matrix_
        matrix = (sp.csc_matrix if a.format_ == highspy.MatrixFormat.kColwise else sp.csr_matrix)(
            (np.asarray(a.value_), np.asarray(a.index_), np.asarray(a.start_)),
            shape=(lp.num_row_, lp.num_col_)).toarray()
        for name, x, y in (("cost", cost, lp.col_cost_), ("col lower", cl, lp.col_lower_),
                           ("col upper", cu, lp.col_upper_), ("row lower", rl, lp.row_lower_),
                           ("row upper", ru, lp.row_upper_), ("matrix", ours, matrix)):
            if not np.array_equal(np.asarray(x), np.asarray(y)):
                raise AssertionError(f"{form} LP differs from HighsSession's in {name}")


def make_instance(n, seed, separation=2.0):
    from s3vm.data.generators import gaussian_blobs
    from s3vm.data.instance import Instance

    blobs = gaussian_blobs(n=n, p=P, separation=separation, seed=seed)
    return Instance(blobs.X, blobs.truth, blobs.truth, feature_names=blobs.feature_names,
                    name=blobs.name + "_all_labeled")


# ---------------------------------------------------------------------------------------------

def profile_pyomo(SVM1, compile_seconds, instance, settings, form, top=22):
    """cProfile one Pyomo route; the functions that take >= 1% of the time, by cumulative time."""
    profiler = cProfile.Profile()
    gc.collect()
    profiler.enable()
    row = run_pyomo(SVM1, compile_seconds, instance, settings, form, collect=False)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    path = f"/tmp/bench_lp_build_{form}_{instance.n}.prof"
    stats.dump_stats(path)
    total = row["total"]
    entries = []
    for (filename, line, func), (cc, nc, tt, ct, callers) in stats.stats.items():
        if ct < 0.01 * total:
            continue
        if "site-packages/pyomo" in filename:
            where = "pyomo/" + filename.split("site-packages/pyomo/", 1)[1]
        elif filename.startswith(benchmd.ROOT):
            where = os.path.relpath(filename, benchmd.ROOT)
            if where.startswith("benchmarks"):
                continue
        elif filename == "~" and "highspy" in func:
            where = "highspy"
        elif filename == "~" and ("listcomp" in func or "method" in func):
            where = "builtin"
        else:
            continue
        entries.append((ct, tt, nc, f"`{where}:{line} {func}`"))
    entries.sort(reverse=True)
    return row, entries[:top], path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--separation", type=float, default=2.0)
    ap.add_argument("--mu", type=float, default=0.1)
    ap.add_argument("--default-reps-large", type=int, default=1,
                    help="runs of direct-primal with HiGHS defaults (dual simplex) at n >= 50,000 "
                         "(about 200 s each at 100,000; 0 skips it)")
    ap.add_argument("--profile", action="store_true",
                    help="also cProfile one pyomo-primal and one pyomo-dual run at the largest n")
    ap.add_argument("--no-doc", action="store_true",
                    help="do not write the section (build/benchmark-sections.md)")
    args = ap.parse_args()

    import pyomo.environ  # noqa: F401  (imports outside every clock)

    from s3vm.core.settings import Settings
    from s3vm.solvers.registry import get_backend

    get_backend("highs", "lp")
    SVM1, compile_seconds = instrument_project()
    settings = Settings(mu=args.mu)
    check_layout()
    # warm-up: the first Pyomo solve in a process pays one-off costs
    run_pyomo(SVM1, compile_seconds, make_instance(500, 99), settings, "primal")

    wall = time.perf_counter()
    runs = []  # dicts: n, rep, route, + numbers
    for n in args.sizes:
        instance = make_instance(n, args.seed, args.separation)
        rows_primal, rows_dual = n + 2 * P, P + 1
        algo_primal, algo_dual = session_algorithm(rows_primal), session_algorithm(rows_dual)
        for rep in range(args.reps):
            pairs = [
                [("pyomo-primal", lambda: run_pyomo(SVM1, compile_seconds, instance, settings, "primal")),
                 ("direct-primal", lambda: run_direct(instance, args.mu, "primal", algo_primal))],
                [("pyomo-dual", lambda: run_pyomo(SVM1, compile_seconds, instance, settings, "dual")),
                 ("direct-dual", lambda: run_direct(instance, args.mu, "dual", algo_dual))],
            ]
            order = [route for pair in pairs for route in (pair if rep % 2 == 0 else pair[::-1])]
            order.append(("direct-dual-default", lambda: run_direct(instance, args.mu, "dual", {})))
            if n < 50_000 or rep < args.default_reps_large:
                order.append(("direct-primal-default",
                              lambda: run_direct(instance, args.mu, "primal", {})))
            for route, fn in order:
                row = fn()
                row.update(n=n, rep=rep, route=route)
                runs.append(row)
                print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                                  for k, v in row.items() if k not in ("w", "g")}), flush=True)
        # the project's session made the algorithm choice the direct route copies
        for row in runs:
            if row["n"] == n and row["route"].startswith("pyomo"):
                expected = algo_primal if row["route"] == "pyomo-primal" else algo_dual
                got = {k: row["algo_options"][k] for k in expected}
                assert got == expected, (row["route"], got, expected)
    elapsed = time.perf_counter() - wall

    profiles = []
    if args.profile:
        n = max(args.sizes)
        instance = make_instance(n, args.seed, args.separation)
        for form in ("primal", "dual"):
            profiles.append((form, n) + profile_pyomo(SVM1, compile_seconds, instance, settings, form))

    report = summarize(runs, args)
    print(report["text"])
    print(f"benchmark wall time: {elapsed:.0f} s")
    if not args.no_doc:
        benchmd.write_section("bench_lp_build", "1-norm SVM LP: Pyomo path vs direct highspy",
                              document(report, runs, args, elapsed, profiles))
        print(f"wrote {benchmd.DOC}")


ROUTES = ["pyomo-primal", "direct-primal", "direct-primal-default", "pyomo-dual", "direct-dual",
          "direct-dual-default"]


def summarize(runs, args):
    out = {"rows": [], "ratios": [], "objectives": []}
    for n in args.sizes:
        at = [r for r in runs if r["n"] == n]
        reference = [r for r in at if r["route"] == "direct-primal"]
        ref_obj = {r["rep"]: r["objective"] for r in reference}
        worst = 0.0
        for r in at:
            rel = abs(r["objective"] - ref_obj[r["rep"]]) / max(1.0, abs(ref_obj[r["rep"]]))
            r["rel_diff"] = rel
            worst = max(worst, rel)
        out["objectives"].append((n, ref_obj[0], worst))
        for route in ROUTES:
            rs = [r for r in at if r["route"] == route]
            if not rs:
                continue
            out["rows"].append({
                "n": n, "route": route, "runs": len(rs),
                "algorithm": benchmd.algorithm_label({**rs[0]["algo_options"]}),
                **{k: median([r.get(k) for r in rs])
                   for k in ("build", "model", "compile", "to_highs", "solve", "other", "total",
                             "simplex", "ipm", "cpu_share", "load")},
                "cpu": median([r["cpu_share"] * r["total"] for r in rs]),
                "objective": rs[0]["objective"], "rel_diff": max(r["rel_diff"] for r in rs)})
        for pyomo_route, direct_route in (("pyomo-primal", "direct-primal"),
                                          ("pyomo-dual", "direct-dual")):
            py = {r["rep"]: r for r in at if r["route"] == pyomo_route}
            di = {r["rep"]: r for r in at if r["route"] == direct_route}
            per_rep = {k: [py[i][k] / di[i][k] for i in py] for k in ("build", "solve", "total")}
            cpu_ratio = median([py[i]["cpu_share"] * py[i]["total"]
                                / (di[i]["cpu_share"] * di[i]["total"]) for i in py])
            # HiGHS solves the identical LP with the same algorithm and iteration count on both
            # routes, so run-time differences between the two are machine noise; what Pyomo adds
            # is the time outside Highs.run().
            added = median([(py[i]["total"] - py[i]["solve"]) - (di[i]["total"] - di[i]["solve"])
                            for i in py])
            direct_total = median([r["total"] for r in di.values()])
            out["ratios"].append({"n": n, "pair": f"{pyomo_route} / {direct_route}",
                                  **{k: median(v) for k, v in per_rep.items()},
                                  "total_runs": per_rep["total"], "cpu_ratio": cpu_ratio,
                                  "added": added, "equal_run_ratio": 1 + added / direct_total,
                                  "ratio_of_medians": median([r["total"] for r in py.values()])
                                  / median([r["total"] for r in di.values()])})
    lines = [json.dumps(r, default=float) for r in out["rows"] + out["ratios"]]
    out["text"] = "\n".join(lines)
    return out


def document(report, runs, args, elapsed, profiles):
    info = benchmd.machine()
    lines = [f"Command (from the repository root): `{benchmd.command_line()}`", ""]
    lines += benchmd.machine_lines(info)
    lines += [
        f"- LP: the 1-norm SVM LP (`svm1`), mu = {args.mu}, on `gaussian_blobs(n, p={P}, "
        f"separation={args.separation}, seed={args.seed})` with every point labeled "
        f"(`Instance(X, label=truth)`); primal: n + {2 * P} rows, n + {2 * P + 1} columns; "
        f"dual: {P + 1} rows, n columns",
        f"- {args.reps} repetitions; in each, all routes run in one process, interleaved "
        "(odd repetitions run the direct route of each pair first); medians below. "
        f"Benchmark wall time {elapsed:.0f} s.",
        "- Pyomo routes: `SVM1(lp_form=...).solve(instance, Settings(mu), "
        "SolverProfile(solver=\"highs\"))`, timed around the call. *build* = Pyomo model "
        "(`build_problem3` / `build_problem3_dual`) + `HighsSession` setup (of which *compile* is "
        "`LinearStandardFormCompiler.write` and *to HiGHS* the rest: bounds, row merging, "
        "addCols/addRows); *solve* = `Highs.run()`; *other* = the rest of `.solve` (bound/cost "
        "sync before the run, loading the solution into Pyomo, duals, filling the Result).",
        "- Direct routes: numpy arrays in CSR form, `addCols` + `addRows`, `run()`, then reading "
        "w and g from the solution (*other*). The direct LP is the very LP `HighsSession` passes "
        "(same rows, columns, order, bounds and coefficients; the script asserts this at n = 300), "
        "so HiGHS does the same work on both routes.",
        "- HiGHS algorithm: *direct-primal* and *direct-dual* set the options `HighsSession` "
        "picks for a first solve (primal, >= 5000 rows: `solver=ipm, run_crossover=on`; dual, "
        "11 rows: `solver=simplex, simplex_strategy=1`, dual simplex); the script asserts the "
        "Pyomo runs used the same. *-default* routes set no option (HiGHS 1.15 then runs dual "
        "simplex on both forms).",
        "- The issue's comparison is **pyomo-primal vs direct-primal**. The project's default "
        "with HiGHS (`lp_form=\"auto\"`) solves the **dual** form, so pyomo-dual vs direct-dual "
        "is what a default `svm1` run costs.",
        "",
        "### Times (seconds, medians)",
        "",
    ]
    rows = []
    for r in report["rows"]:
        pyomo = r["route"].startswith("pyomo")
        rows.append([f"{r['n']:,}", r["route"], r["runs"], r["algorithm"],
                     fmt(r["build"]), fmt(r["model"]) if pyomo else "-",
                     fmt(r["compile"]) if pyomo else "-", fmt(r["to_highs"]) if pyomo else "-",
                     fmt(r["solve"]), fmt(r["other"]), fmt(r["total"]),
                     f"{int(r['simplex'])} / {int(r['ipm'])}",
                     f"{r['objective']:.10g}", f"{r['rel_diff']:.1e}",
                     fmt(r["cpu"]), fmt(r["cpu_share"]), fmt(r["load"], 1)])
    lines.append(table(["n", "route", "runs", "HiGHS algorithm", "build", "(model)", "(compile)",
                        "(to HiGHS)", "solve", "other", "total",
                        "simplex / IPM iter.", "optimum", "rel. diff", "CPU s", "CPU/wall",
                        "load"], rows))
    lines += ["", "*optimum*: the primal optimum (dual routes: minus the dual LP's optimum); "
              "*rel. diff*: largest |optimum - optimum of direct-primal in the same repetition| / "
              "max(1, |optimum|) over the runs. *CPU s*: CPU seconds of the "
              "benchmark process over the whole route (close to the wall time on an idle machine: "
              "HiGHS ran single-threaded here); *CPU/wall*: "
              "CPU seconds of the benchmark process over wall seconds of the run (below 1: the "
              "process waited for a core, i.e. other load on the machine); *load*: 1-minute load "
              "average when the run started.", "", "### Ratios Pyomo / direct (medians of "
              "the per-repetition ratios)", ""]
    rows = []
    for r in report["ratios"]:
        goal = ""
        if r["pair"].startswith("pyomo-primal") and r["n"] >= 100_000:
            goal = "met" if max(r["total"], r["equal_run_ratio"]) <= 2.0 else "**not met**"
        rows.append([f"{r['n']:,}", r["pair"], fmt(r["build"], 1), fmt(r["solve"], 2),
                     fmt(r["total"], 2), ", ".join(fmt(x, 2) for x in r["total_runs"]),
                     fmt(r["cpu_ratio"], 2), fmt(r["added"], 2), fmt(r["equal_run_ratio"], 2),
                     goal])
    lines.append(table(["n", "pair", "build", "solve", "total", "total, per repetition",
                        "CPU s ratio", "Pyomo adds s", "ratio at equal HiGHS time",
                        "goal: total <= 2x at n = 100,000"], rows))
    lines += ["", "*Pyomo adds*: median over repetitions of (Pyomo total - its `Highs.run` time) "
              "- (direct total - its `Highs.run` time), the seconds the Pyomo path spends outside "
              "HiGHS beyond what the direct route spends; *ratio at equal HiGHS time*: "
              "1 + that / median direct total. Both routes hand HiGHS the identical LP and "
              "algorithm (same iteration counts above), so differences in `Highs.run` time "
              "between them are machine noise; this ratio removes it."]
    worst = max(w for _, _, w in report["objectives"])
    lines += ["", f"Optima agree: largest relative difference over all routes and runs "
              f"{worst:.1e} (tolerance {REL_TOL:g}): "
              + ("**yes**" if worst <= REL_TOL else "**NO**") + ". "
              "The dual-form optimum equals the primal optimum."]
    if profiles:
        lines += ["", "### Where the Pyomo path's time goes (cProfile, one run each)", ""]
        for form, n, row, entries, path in profiles:
            lines += [f"pyomo-{form} at n = {n:,}: {row['total']:.2f} s under cProfile "
                      f"(HiGHS run {row['solve']:.2f} s; profile in `{path}`). Functions with "
                      ">= 1% of the time, by cumulative seconds:", ""]
            lines.append(table(["cumulative s", "own s", "calls", "function"],
                               [[fmt(ct), fmt(tt), nc, name] for ct, tt, nc, name in entries]))
            lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
