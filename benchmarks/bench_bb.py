"""Speed of `bb` (S3VM-L2 by branch and bound, SVM bound) on two moons and the SDP-S3VM instances.

Parts (each prints JSON lines, the first a header with the date, load, commit and machine;
benchmarks/pages.py prints the tables of docs/benchmarks/exact.md from the files of scale, miqp
and mip, and the changelog, docs/changelog.md, has the earlier runs):

  scale   two_moons(1 labeled per moon, u/2 unlabeled per moon, seed s), rbf sigma 0.5, C = C* = 10,
          bias, count balance at the true ratio; bb with --time-limit per run; for each u the
          median seconds and nodes over the seeds and how many runs were proved optimal.
  miqp    the same instances at u = 20, 30, 40: bb against l2-miqp (SCIP); ratio of medians.
  mip     the same instances at u = 20, 30, 40 under Problem 3 (the Bennett-Demiriz MIP, rbf
          sigma 0.5, mu and nu at their defaults, count balance at the true count): bb-mip (the
          project's driver, LP bounds) against bd-mip (the same MIP by HiGHS's own branch and
          bound); both must prove the same optimum.
  sdpbound  bb --no-bias against bb-sdp on the same two-moons instances (no bias, otherwise as
          scale): nodes and seconds each needs, and whether the optima agree; bb-sdp both with its
          default SCS use (a loose solve per node, redone tightly unless it prunes) and with every
          node solved at CVXPY's default SCS accuracy (eps 1e-4: the baseline, same run).
  sdp     the SDP-S3VM instances of Piccialli, Schwiddessen and Sudoso (2024), bundled in
          instances/data/sdp-s3vm-instances, smallest first, 30% of each class
          labeled (load_sdp_instance, seed 0), rbf with their default width gamma = 1/p (p
          features), i.e. sigma = sqrt(p / 2), which is 1 on the 2-D sets (their kernel and C
          come from a cross-validation we do not rerun; we fix C = C* = 1), count balance at
          the true count (they balance the mean output); bb (and bb-sdp with --with-bb-sdp), one
          at a time, --time-limit 600.

    .venv/bin/python benchmarks/bench_bb.py scale --sizes 50 100 150 200 300 --seeds 5 --time-limit 120
    .venv/bin/python benchmarks/bench_bb.py miqp --sizes 20 30 40 --seeds 3 --time-limit 600
    .venv/bin/python benchmarks/bench_bb.py mip --sizes 20 30 40 --seeds 3 --time-limit 120
    .venv/bin/python benchmarks/bench_bb.py sdpbound --sizes 10 20 30 40 --seeds 3 --time-limit 600
    .venv/bin/python benchmarks/bench_bb.py sdp --time-limit 600
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from s3vm.api import evaluate, solve

import benchmd

MOONS = dict(kernel="rbf", sigma=0.5, C=10.0, C_star=10.0, balance="count", positives="truth")


def moons(u, seed):
    from s3vm.data.generators import two_moons

    return two_moons(1, u // 2, seed=seed)


def run(inst, name, time_limit, **kw):
    load = benchmd.load()
    t, cpu = time.perf_counter(), benchmd.cpu_seconds()
    r = solve(inst, name, time_limit=time_limit, **kw)
    return {"formulation": name, "status": r.status, "objective": r.objective,
            "lower_bound": r.lower_bound, "gap": r.gap, "nodes": r.nodes, "seconds": r.seconds,
            "wall": time.perf_counter() - t, "cpu": benchmd.cpu_seconds() - cpu,
            "error": evaluate(inst, r)["error"], "load": load,
            **{k: r.info[k] for k in ("sdp_solves", "tight_solves") if k in r.info}}


def scale(args):
    for u in args.sizes:
        rows = []
        for seed in range(args.seeds):
            row = {"part": "scale", "u": u, "seed": seed,
                   **run(moons(u, seed), "bb", args.time_limit, **MOONS)}
            print(json.dumps(row), flush=True)
            rows.append(row)
        print(json.dumps({"part": "scale-summary", "u": u, "runs": len(rows),
                          "proved": sum(r["status"] == "optimal" for r in rows),
                          "median_seconds": statistics.median(r["seconds"] for r in rows),
                          "median_nodes": statistics.median(r["nodes"] or 0 for r in rows)}),
              flush=True)


def miqp(args):
    for u in args.sizes:
        pairs = []
        for seed in range(args.seeds):
            inst = moons(u, seed)
            a = run(inst, "bb", args.time_limit, **MOONS)
            b = run(inst, "l2-miqp", args.time_limit, solver="scip", **MOONS)
            same = (a["objective"] is not None and b["objective"] is not None
                    and abs(a["objective"] - b["objective"]) <= 1e-5 * max(1, abs(a["objective"])))
            row = {"part": "miqp", "u": u, "seed": seed, "bb": a, "l2-miqp": b, "same_optimum": same}
            print(json.dumps(row), flush=True)
            pairs.append(row)
        mb = statistics.median(p["bb"]["seconds"] for p in pairs)
        mm = statistics.median(p["l2-miqp"]["seconds"] for p in pairs)
        print(json.dumps({"part": "miqp-summary", "u": u, "bb_median_s": mb, "miqp_median_s": mm,
                          "ratio": mm / mb}), flush=True)


def mip(args):
    kw = {k: MOONS[k] for k in ("kernel", "sigma", "balance", "positives")}
    for u in args.sizes:
        for seed in range(args.seeds):
            inst = moons(u, seed)
            a = run(inst, "bb-mip", args.time_limit, **kw)
            b = run(inst, "bd-mip", args.time_limit, **kw)
            same = (a["status"] == b["status"] == "optimal"
                    and abs(a["objective"] - b["objective"]) <= 1e-6 * max(1, abs(a["objective"])))
            print(json.dumps({"part": "mip", "u": u, "seed": seed, "bb-mip": a, "bd-mip": b,
                              "same_optimum": same}), flush=True)


def sdpbound(args):
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        tight = os.path.join(folder, "scs-tight.toml")
        with open(tight, "w") as fh:
            fh.write('solver = "scs"\n[options]\neps_abs = 1e-4\neps_rel = 1e-4\n')
        _sdpbound_runs(args, tight)


def _sdpbound_runs(args, tight):
    for u in args.sizes:
        for seed in range(args.seeds):
            inst = moons(u, seed)
            kw = {**MOONS, "bias": False}
            a = run(inst, "bb", args.time_limit, **kw)
            b = run(inst, "bb-sdp", args.time_limit, **kw)
            c = run(inst, "bb-sdp", args.time_limit, profile=tight, **kw)
            same = (a["status"] == b["status"] == c["status"] == "optimal"
                    and max(abs(a["objective"] - b["objective"]), abs(a["objective"] - c["objective"]))
                    <= 1e-6 * max(1, abs(a["objective"])))
            print(json.dumps({"part": "sdpbound", "u": u, "seed": seed, "bb": a, "bb-sdp": b,
                              "bb-sdp-tight": c, "same_optimum": same}), flush=True)


def sdp(args):
    from s3vm.data.loaders import SDP_INSTANCES, load_sdp_instance, sdp_rbf_sigma

    names = sorted(SDP_INSTANCES, key=lambda k: SDP_INSTANCES[k][0] * (1 + SDP_INSTANCES[k][1] / 100))
    spent = 0.0
    for name in names[args.skip:]:
        if spent >= args.budget:  # stop once the budget is spent (a run may overrun it by its limit)
            print(json.dumps({"part": "sdp", "instance": name, "skipped": "budget"}), flush=True)
            continue
        inst = load_sdp_instance(name, 0.3, seed=0)
        sigma = args.sigma or sdp_rbf_sigma(inst.p)
        kw = dict(kernel="rbf", sigma=sigma, C=args.C, C_star=args.C, balance="count",
                  positives="truth")
        # bb-sdp has no bias: beside it, bb without bias is the like-for-like comparison.
        runs = [("bb", {})] + ([("bb", {"bias": False}), ("bb-sdp", {"bias": False})]
                               if args.with_bb_sdp else [])
        for form, extra in runs:
            row = {"part": "sdp", "instance": name, "n": inst.n, "u": inst.u, "sigma": sigma,
                   "bias": extra.get("bias", True), **run(inst, form, args.time_limit, **kw, **extra)}
            spent += row["wall"]
            print(json.dumps(row), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("part", choices=("scale", "miqp", "mip", "sdpbound", "sdp"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 150, 200, 300])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--budget", type=float, default=3600.0, help="sdp: total seconds")
    ap.add_argument("--sigma", type=float, default=None,
                    help="sdp: rbf width (default sqrt(p / 2), their gamma = 1/p)")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--skip", type=int, default=0, help="sdp: skip the first K instances")
    ap.add_argument("--with-bb-sdp", action="store_true")
    args = ap.parse_args()
    print(json.dumps(benchmd.run_header()), flush=True)
    {"scale": scale, "miqp": miqp, "mip": mip, "sdpbound": sdpbound, "sdp": sdp}[args.part](args)


if __name__ == "__main__":
    main()
