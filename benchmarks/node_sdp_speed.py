"""Node SDPs of ``bb-sdp``: today's settings against the previous ones, on the same SDPs in one
run (docs/benchmarks/sdp.md, "The node SDP's settings").

The node SDPs are captured from a short search (``--nodes`` nodes of at most ``--max-rounds``
cutting-plane rounds, the default settings otherwise) on
SDP-S3VM instances in their setting (30% of each class labeled, floor rounding, seed 0, kernel
and C from :func:`s3vm.selection.select_parameters`, C* = C l / u, no bias, the mean balance
with its product rows): each round's box, diagonal bounds, cuts and incumbent. Each captured SDP
is then solved twice, alternately, in this process (one BLAS thread, SDPA single-threaded; CPU
seconds of the process and of SDPA's child processes, the machine being shared):

- ``old``: the node loop's previous settings: SDPA's default lambdaStar, tolerance 1e-7, every
  row V_ii <= umd_i in the model, the trace-bound certificate alone;
- ``new``: tolerance 1e-5 (1e-7 where the search had reached within 1% of the incumbent), the
  rows V_ii <= umd_i hidden but those the search had seen violated, the larger of the
  trace-bound and incumbent-relative certificates, a more accurate re-solve when the certificate
  loses more than 1e-4 of b'y and a tenth of the gap.

It prints one JSON line per SDP (seconds and certified bound of each) and a summary per instance
and overall: the median of the per-SDP ratios old / new seconds, the ratio of the totals, and the
largest relative loss of the new certificate against the old one (negative: the new is higher).

    .venv/bin/python benchmarks/node_sdp_speed.py --instances art150 connectionist heart \\
        --nodes 2 --max-rounds 3 --per-instance 4

With ``--incumbents`` it prints instead the starting incumbent of each instance (value, number
of positive labels, CPU seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def capture(name: str, nodes: int, max_rounds: int = 30) -> tuple:
    """(problem factory, list of captured rounds) from a short search on ``name``."""
    from s3vm.api import load
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings
    from s3vm.data.loaders import load_sdp_instance
    from s3vm.selection import select_parameters
    from s3vm.solvers.bnb.driver import search
    from s3vm.solvers.profiles import get_profile
    from s3vm.solvers.registry import get_backend

    instance = load(load_sdp_instance(name, 0.3, seed=0, rounding="floor"))[0]
    chosen = select_parameters(instance)
    settings = Settings(**{**chosen.settings(), "bias": False, "balance": "mean"})
    form = get_formulation("bb-sdp")

    def make():
        return form.labeling_problem(instance, settings, get_backend("sdpa", "conic"),
                                     get_profile("sdpa", None, "conic"))

    problem = make()
    problem.options.max_rounds = max_rounds
    rounds = []
    solve_node = problem.sdp.solve_node

    def recording(L, U, lmd, umd, cuts, upper, T, tolerance, UB, prune_at):
        rounds.append({"L": L.copy(), "U": U.copy(), "lmd": lmd.copy(), "umd": umd.copy(),
                       "cuts": np.array(cuts), "T": T, "tolerance": tolerance,
                       "upper": None if upper is None else upper.copy(),
                       "UB": UB, "prune_at": prune_at, "finest": problem.sdp.finest})
        return solve_node(L, U, lmd, umd, cuts, upper, T, tolerance, UB, prune_at)

    problem.sdp.solve_node = recording
    search(problem, node_selection="best", node_limit=nodes, keep_tree=False, log_every=0)
    return make, rounds, {"n": instance.n, "kernel": chosen.kernel, "C": chosen.C}


def solve(make, r: dict, new: bool) -> tuple[float, float, int]:
    """(CPU seconds, certified bound, SDP solves) of one captured round under the new or old
    settings."""
    from s3vm.bounds.node_sdp import NodeSDP
    from s3vm.bounds.shor import ShorOptions

    problem = make()
    if not new:
        problem.options = ShorOptions(tolerance=1e-7, tolerance_near=1e-7, cert_loss=np.inf,
                                      hide_upper=False, lambda_star=False,
                                      incumbent_certificate=False,
                                      products=problem.options.products)
        problem.sdp = NodeSDP(problem.data, problem._lifted, problem.backend, problem.profile,
                              problem.options, problem.stats)
    problem.UB = r["UB"]
    problem.sdp.finest = r["finest"]
    upper = r["upper"] if new else None
    tolerance = r["tolerance"] if new else 1e-7
    t0 = cpu_seconds()
    cert, _, _, _ = problem.sdp.solve_node(r["L"], r["U"], r["lmd"], r["umd"], r["cuts"], upper,
                                           r["T"], tolerance, r["UB"], r["prune_at"])
    return (cpu_seconds() - t0, float("nan") if cert is None else cert.value,
            problem.stats["sdp"])


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (SDPA runs in a forked child
    outside a solve process): on a shared machine the CPU time, not the wall time, compares."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def incumbents(names) -> None:
    """The starting incumbent of ``bb-sdp`` (the supervised SVM's outputs rounded and improved
    by the heuristic) on each instance in the same setting: one JSON line each, with the
    number of positive labels and the CPU seconds."""
    from s3vm.api import load
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings
    from s3vm.data.loaders import load_sdp_instance
    from s3vm.selection import select_parameters
    from s3vm.solvers.profiles import get_profile
    from s3vm.solvers.registry import get_backend

    for name in names:
        instance = load(load_sdp_instance(name, 0.3, seed=0, rounding="floor"))[0]
        settings = Settings(**select_parameters(instance).settings())
        problem = get_formulation("bb-sdp").labeling_problem(
            instance, settings, get_backend("sdpa", "conic"), get_profile("sdpa", None, "conic"))
        t0 = time.process_time()
        labels, value, _ = problem.initial_incumbent()
        print(json.dumps({"instance": name, "value": value,
                          "positives": int(np.sum(labels == 1)),
                          "cpu": time.process_time() - t0}), flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", nargs="+", default=["art150", "connectionist", "heart"])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--per-instance", type=int, default=6)
    parser.add_argument("--max-rounds", type=int, default=30,
                        help="cutting-plane rounds a node of the capturing search")
    parser.add_argument("--incumbents", action="store_true",
                        help="print the starting incumbent of each instance instead")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    if args.incumbents:
        with threadpool_limits(limits=1, user_api="blas"):
            incumbents(args.instances)
        return 0

    print(json.dumps({"load": os.getloadavg(), "started": time.strftime("%H:%M:%S")}), flush=True)
    ratios_all, old_all, new_all = [], 0.0, 0.0
    with threadpool_limits(limits=1, user_api="blas"):
        for name in args.instances:
            make, rounds, meta = capture(name, args.nodes, args.max_rounds)
            pick = np.unique(np.linspace(0, len(rounds) - 1, args.per_instance).round().astype(int))
            ratios, losses, t_old, t_new = [], [], 0.0, 0.0
            for k in pick:
                so, bo, _ = solve(make, rounds[k], new=False)
                sn, bn, solves = solve(make, rounds[k], new=True)
                ratios.append(so / sn)
                losses.append((bo - bn) / abs(bo))
                t_old, t_new = t_old + so, t_new + sn
                print(json.dumps({"instance": name, "round": int(k), "old_s": so, "new_s": sn,
                                  "old_bound": bo, "new_bound": bn, "new_solves": solves,
                                  "UB": rounds[k]["UB"]}),
                      flush=True)
            ratios_all += ratios
            old_all, new_all = old_all + t_old, new_all + t_new
            print(json.dumps({"instance": name, **meta, "sdps": len(pick),
                              "captured": len(rounds), "median_ratio": float(np.median(ratios)),
                              "total_ratio": t_old / t_new, "old_s": t_old, "new_s": t_new,
                              "max_rel_loss": float(np.max(losses))}), flush=True)
    print(json.dumps({"summary": True, "median_ratio": float(np.median(ratios_all)),
                      "total_ratio": old_all / new_all, "load": os.getloadavg(),
                      "ended": time.strftime("%H:%M:%S")}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
