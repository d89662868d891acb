"""Benchmark: VS3VM (successive LPs) on large gaussian_blobs, warm-started against cold re-solves.

For each configuration (LP form, n, separation): gaussian_blobs(n, p=10, separation, 10% labeled,
seed), default Settings (mu = 0.1, nu = 1), SolverProfile(solver="highs"), and

  warm  VS3VM(lp_form=form, warm_start=True)   each LP re-solved from the last basis (default)
  cold  VS3VM(lp_form=form, warm_start=False)  each LP solved from scratch (clearSolver)

Both solve the same sequence of LPs (the script checks that the objective sequences agree).
Warm and cold runs alternate within one process. The total includes the model build; HiGHS run
times and algorithms are recorded per LP by wrapping the session's highspy object.

    .venv/bin/python benchmarks/bench_vs3vm.py
    .venv/bin/python benchmarks/bench_vs3vm.py --configs dual:10000:2.0 --reps 1 --no-doc   # quick
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchmd  # noqa: E402
from benchmd import fmt, median, table  # noqa: E402

P = 10
REC: dict = {}
DEFAULT_CONFIGS = ["dual:100000:2.0", "dual:100000:1.0:cold=0", "primal:10000:2.0", "primal:10000:1.0",
                   "dual:10000:2.0", "dual:10000:1.0"]


def timed_vs3vm_class():
    from s3vm.formulations.vs3vm import VS3VM

    class TimedVS3VM(VS3VM):
        """VS3VM with stopwatches around the model build and on the session's highspy run()."""

        def model_to_solve(self, instance, settings, backend):
            start = time.perf_counter()
            model = super().model_to_solve(instance, settings, backend)
            REC["model_s"] = time.perf_counter() - start
            return model

        def session(self, backend, model, profile):
            session = super().session(backend, model, profile)
            REC["setup_s"] = session.setup_seconds
            session.h = benchmd.TimedHighs(session.h)
            REC["runs"] = session.h.runs
            return session

    return TimedVS3VM


def make_instance(n, separation, seed):
    from s3vm.data.generators import gaussian_blobs

    return gaussian_blobs(n=n, p=P, separation=separation, labeled_fraction=0.1, seed=seed)


def run_once(VS3VM, instance, form, warm, max_lps):
    from s3vm.core.settings import Settings
    from s3vm.solvers.profiles import SolverProfile

    REC.clear()
    gc.collect()
    load, cpu = os.getloadavg()[0], time.process_time()
    start = time.perf_counter()
    result = VS3VM(lp_form=form, warm_start=warm, max_lps=max_lps).solve(
        instance, Settings(), SolverProfile(solver="highs"))
    total = time.perf_counter() - start
    cpu = time.process_time() - cpu
    runs = REC["runs"]
    lp_seconds = list(result.info["lp_seconds"])
    lp_iterations = [0 if i is None else int(i) for i in result.info["lp_iterations"]]
    assert len(runs) == len(lp_seconds)
    return {
        "status": result.status, "stop": result.info["stop"], "total": total,
        "cpu_share": cpu / total, "load": load,
        "result_seconds": result.seconds, "model": REC["model_s"], "setup": REC["setup_s"],
        "build": REC["model_s"] + REC["setup_s"], "n_lps": len(lp_seconds),
        "lp_seconds": lp_seconds, "lp_sum": sum(lp_seconds),
        "per_lp": float(np.mean(lp_seconds)), "per_lp_median": median(lp_seconds),
        "highs_seconds": [r["seconds"] for r in runs],
        "highs_sum": sum(r["seconds"] for r in runs),
        "overhead_per_lp": median([s - r["seconds"] for s, r in zip(lp_seconds, runs)]),
        "lp_iterations": lp_iterations, "simplex": sum(lp_iterations),
        "ipm": sum(r["ipm"] for r in runs),
        "algorithms": [benchmd.algorithm_label(r) for r in runs],
        "n_ipm_lps": sum(r["solver"] == "ipm" for r in runs),
        "objective": result.objective, "objectives": list(result.info["objectives"]),
        "accuracy": float(np.mean(result.labels == instance.truth_U)),
    }


def lp2_algorithms(instance, form="dual"):
    """LP 2 of the sequence (the first linearisation, where every cost moves from nu/2 to 0 or
    nu) solved by: the session (warm dual simplex, what VS3VM does), and from scratch with HiGHS
    defaults and with IPM + crossover."""
    import highspy

    from s3vm.core.settings import Settings
    from s3vm.formulations.vs3vm import VS3VM, ConcaveS3VM
    from s3vm.solvers.profiles import SolverProfile
    from s3vm.solvers.registry import get_backend

    settings = Settings()
    backend = get_backend("highs", "lp")
    formulation = VS3VM(lp_form=form)
    model = formulation.model_to_solve(instance, settings, backend)
    session = formulation.session(backend, model, SolverProfile(solver="highs"))
    session.h = benchmd.TimedHighs(session.h)
    session.resolve()
    problem = ConcaveS3VM(model, settings.mu, settings.nu)
    problem.linearize(problem.read())
    out = []
    lp_after_sync = None
    for label, options in (("HiGHS default (dual simplex, presolve), cold", {}),
                           ("IPM + crossover, cold", {"solver": "ipm", "run_crossover": "on"})):
        if lp_after_sync is None:
            session._sync()  # the changed bounds, as the next resolve would send them
            lp_after_sync = session.h.getLp()
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for k, v in options.items():
            h.setOptionValue(k, v)
        h.passModel(lp_after_sync)
        start = time.perf_counter()
        h.run()
        seconds = time.perf_counter() - start
        info = h.getInfo()
        out.append((label, seconds, int(info.simplex_iteration_count),
                    int(info.ipm_iteration_count), float(info.objective_function_value)))
    start = time.perf_counter()
    session.resolve()  # warm: the session's own choice, from LP 1's basis
    run = session.h.runs[-1]
    info = session.h.getInfo()
    out.insert(0, (f"session: {benchmd.algorithm_label(run)} from LP 1's basis (VS3VM warm)",
                   run["seconds"], run["simplex"], run["ipm"],
                   float(info.objective_function_value)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS,
                    help="FORM:N:SEPARATION[:cold=K] entries; cold=K overrides the number of "
                         "cold runs (default: %(default)s)")
    ap.add_argument("--reps", type=int, default=3, help="warm runs, and cold runs at n < 50,000")
    ap.add_argument("--cold-reps-large", type=int, default=1,
                    help="cold runs at n >= 50,000 (a cold dual run at 100,000 takes ~210 s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-lps", type=int, default=50)
    ap.add_argument("--no-lp2", action="store_true",
                    help="skip the LP-2 algorithm comparison at the first large dual config")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()

    import pyomo.environ  # noqa: F401

    from s3vm.solvers.registry import get_backend

    get_backend("highs", "lp")
    VS3VM = timed_vs3vm_class()
    run_once(VS3VM, make_instance(400, 2.0, 99), "dual", True, args.max_lps)  # warm-up
    run_once(VS3VM, make_instance(400, 2.0, 99), "primal", True, args.max_lps)

    wall = time.perf_counter()
    results = []
    for spec in args.configs:
        form, n, sep, *extra = spec.split(":")
        n, sep = int(n), float(sep)
        instance = make_instance(n, sep, args.seed)
        cold_reps = args.reps if n < 50_000 else args.cold_reps_large
        for item in extra:
            if item.startswith("cold="):
                cold_reps = int(item[5:])
        for i in range(max(args.reps, cold_reps)):
            modes = [m for m, k in (("warm", args.reps), ("cold", cold_reps)) if i < k]
            if i % 2:
                modes.reverse()
            for mode in modes:
                row = run_once(VS3VM, instance, form, mode == "warm", args.max_lps)
                row.update(form=form, n=n, separation=sep, mode=mode, rep=i,
                           l=instance.l, u=instance.u)
                results.append(row)
                print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v)
                                  for k, v in row.items()
                                  if k not in ("lp_seconds", "highs_seconds", "objectives",
                                               "lp_iterations", "algorithms")}), flush=True)
    elapsed = time.perf_counter() - wall

    lp2 = None
    large = [c for c in args.configs if c.startswith("dual:") and int(c.split(":")[1]) >= 50_000]
    if large and not args.no_lp2:
        _, n, sep = large[0].split(":")[:3]
        lp2 = (int(n), float(sep), lp2_algorithms(make_instance(int(n), float(sep), args.seed)))
        for entry in lp2[2]:
            print("LP2", entry, flush=True)

    if not args.no_doc:
        benchmd.write_section("bench_vs3vm", "VS3VM: total time, LPs, warm vs cold re-solves",
                              document(results, args, elapsed, lp2))
        print(f"wrote {benchmd.DOC}")
    print(f"benchmark wall time: {elapsed:.0f} s")


def summary(rows):
    keys = ("total", "build", "model", "setup", "n_lps", "lp_sum", "per_lp", "per_lp_median",
            "highs_sum", "overhead_per_lp", "simplex", "ipm", "n_ipm_lps", "accuracy", "cpu_share",
            "load")
    out = {k: median([r[k] for r in rows]) for k in keys}
    out["cpu"] = median([r["cpu_share"] * r["total"] for r in rows])
    return out


def same_sequence(a, b, tol=1e-6):
    if len(a["objectives"]) != len(b["objectives"]):
        return False
    return all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a["objectives"],
                                                                    b["objectives"]))


def document(results, args, elapsed, lp2):
    info = benchmd.machine()
    lines = [f"Command (from the repository root): `{benchmd.command_line()}`", ""]
    lines += benchmd.machine_lines(info)
    lines += [
        f"- Data: `gaussian_blobs(n, p={P}, separation, labeled_fraction=0.1, seed={args.seed})`;"
        " `Settings()` defaults (linear kernel, mu = 0.1, nu = 1); "
        "`SolverProfile(solver=\"highs\")`; `VS3VM(lp_form, warm_start, "
        f"max_lps={args.max_lps}, tol=1e-9)`.",
        f"- Runs: {args.reps} warm and {args.reps} cold per configuration, except cold at "
        f"n >= 50,000: {args.cold_reps_large} (each such cold run takes minutes), and "
        "configurations marked `cold=K` in the command. Warm and cold "
        "alternate in one process; medians below. "
        f"Benchmark wall time {elapsed:.0f} s.",
        "- *total*: wall seconds of `VS3VM.solve` (model build, HiGHS setup, all LPs); *build*: "
        "the Pyomo model plus `HighsSession` setup; *per LP*: mean of `result.info[\"lp_seconds\"]` "
        "(each LP's `resolve`: bound/cost sync, `Highs.run`, loading the solution); *HiGHS*: sum "
        "of `Highs.run` seconds; *py/LP*: median per-LP seconds outside `Highs.run`; "
        "*simplex iter.*: sum of `result.info[\"lp_iterations\"]` (HiGHS's simplex count; "
        "IPM iterations and crossover are not in it); *IPM LPs*: LPs the session sent to IPM; "
        "*CPU s*: CPU seconds of the benchmark process over the run (about the wall time an idle "
        "machine would show: HiGHS ran single-threaded here); "
        "*CPU/wall*: CPU seconds of the benchmark process over wall seconds (below 1: it "
        "waited for a core, other load on the machine); *load*: 1-minute load average at the "
        "start of the run.",
        "- The dual-form LP has 11 rows and l + 2u columns (the session always uses simplex: dual "
        "simplex, since the supergradient's costs are bounds there). The primal-form LP has "
        "l + 2u + 20 rows: the session sends its first LP and any LP whose costs changed on more "
        "than 2% of the columns to IPM + crossover, so its simplex counts do not measure the "
        "warm start; compare seconds there.",
        "",
        "### Totals (medians)",
        "",
    ]
    configs = []
    for r in results:
        key = (r["form"], r["n"], r["separation"])
        if key not in configs:
            configs.append(key)
    rows, compare = [], []
    for key in configs:
        at = [r for r in results if (r["form"], r["n"], r["separation"]) == key]
        s = {}
        for mode in ("warm", "cold"):
            rs = [r for r in at if r["mode"] == mode]
            if not rs:
                continue
            s[mode] = summary(rs)
            m = s[mode]
            goal = ""
            if mode == "warm" and key[1] >= 100_000:
                goal = f"wall {'met' if m['total'] < 60 else '**not met**'}, " \
                       f"CPU {'met' if m['cpu'] < 60 else '**not met**'}"
            rows.append([key[0], f"{key[1]:,}", key[2], f"{rs[0]['l']:,}/{rs[0]['u']:,}", mode,
                         len(rs), fmt(m["total"], 1), goal, fmt(m["build"]),
                         int(m["n_lps"]), fmt(m["per_lp"]), fmt(m["per_lp_median"]),
                         fmt(m["highs_sum"], 1), fmt(m["overhead_per_lp"]), int(m["simplex"]),
                         int(m["n_ipm_lps"]), f"{rs[0]['objective']:.8g}",
                         fmt(100 * m["accuracy"], 1), rs[0]["stop"], fmt(m["cpu"], 1),
                         fmt(m["cpu_share"]),
                         fmt(m["load"], 1)])
        if "warm" in s and "cold" in s:
            warm = [r for r in at if r["mode"] == "warm"]
            cold = [r for r in at if r["mode"] == "cold"]
            same = all(same_sequence(w, c) for w in warm for c in cold)
            it_ratio = s["warm"]["simplex"] / s["cold"]["simplex"] if s["cold"]["simplex"] else None
            comparable = s["warm"]["n_ipm_lps"] == 0 and s["cold"]["n_ipm_lps"] == 0
            goal = ("met" if it_ratio is not None and it_ratio <= 0.5 else "**not met**") \
                if comparable else "n/a (IPM LPs)"
            compare.append([key[0], f"{key[1]:,}", key[2], int(s["warm"]["simplex"]),
                            int(s["cold"]["simplex"]), fmt(it_ratio, 2), goal,
                            fmt(s["warm"]["total"], 1), fmt(s["cold"]["total"], 1),
                            fmt(s["warm"]["highs_sum"] / s["cold"]["highs_sum"], 2),
                            "yes" if same else "**no**"])
    lines.append(table(["form", "n", "sep.", "l/u", "mode", "runs", "total s",
                        "goal < 60 s", "build s", "LPs", "per LP s", "median LP s", "HiGHS s",
                        "py/LP s", "simplex iter.", "IPM LPs", "objective", "accuracy %",
                        "stop", "CPU s", "CPU/wall", "load"], rows))
    lines += ["", "### Warm-started sequence vs cold re-solves of the same LPs", ""]
    lines.append(table(["form", "n", "sep.", "warm simplex iter.", "cold simplex iter.",
                        "warm / cold iter.", "goal <= 0.5", "warm total s", "cold total s",
                        "warm / cold HiGHS s", "same LP sequence"], compare))
    lines += ["", "*same LP sequence*: every warm and cold run produced the same objective "
              "sequence (relative 1e-6) and number of LPs.", ""]

    # per-LP detail of the first large dual configuration
    detail = [r for r in results if r["form"] == "dual" and r["n"] >= 50_000]
    if detail:
        key = (detail[0]["form"], detail[0]["n"], detail[0]["separation"])
        warms = sorted((r for r in detail if (r["form"], r["n"], r["separation"]) == key
                        and r["mode"] == "warm"), key=lambda r: r["total"])
        warm = warms[len(warms) // 2]  # the median warm run
        cold = next((r for r in detail if (r["form"], r["n"], r["separation"]) == key
                     and r["mode"] == "cold"), None)
        lines += [f"### Per LP: dual form, n = {key[1]:,}, separation {key[2]} (the median warm "
                  "run" + (" and the first cold run)" if cold else ")"), ""]
        rows = []
        for i in range(warm["n_lps"]):
            row = [i + 1, warm["algorithms"][i], warm["lp_iterations"][i],
                   fmt(warm["highs_seconds"][i]), fmt(warm["lp_seconds"][i])]
            if cold and i < cold["n_lps"]:
                row += [cold["lp_iterations"][i], fmt(cold["highs_seconds"][i]),
                        fmt(cold["lp_seconds"][i])]
            rows.append(row)
        header = ["LP", "algorithm", "warm simplex iter.", "warm HiGHS s", "warm LP s"]
        if cold:
            header += ["cold simplex iter.", "cold HiGHS s", "cold LP s"]
        lines.append(table(header, rows))
        lines.append("")
    if lp2:
        n, sep, entries = lp2
        lines += [f"### LP 2 (dual form, n = {n:,}, separation {sep}) by algorithm", "",
                  "LP 2 is the first linearisation: every unlabeled cost moves from nu/2 to 0 or "
                  "nu, i.e. every upper bound of the dual LP's b and c columns changes. Solved by "
                  "the session as VS3VM does, and from scratch on a fresh `Highs` with the same LP "
                  "(`getLp`/`passModel`):", ""]
        lines.append(table(["how", "HiGHS s", "simplex iter.", "IPM iter.", "dual-LP objective"],
                           [[a, fmt(b), c, d, f"{e:.10g}"] for a, b, c, d, e in entries]))
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
