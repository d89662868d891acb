"""Stronger root relaxations for ``bb-sdp`` under the mean balance, prototyped and measured against
today's root in the same run (docs/benchmarks/sdp.md, "Stronger relaxations tried").

Per instance (``load_sdp_instance``, seed 0, 30% of each class labeled with floor rounding, the
kernel and C of the ``--convention`` selection, the mean balance, the code convention's product
rows by facial reduction), with the starting incumbent UB and its box (no heuristic rounds), the
root's first two SDPs of each relaxation:

- ``today``: the output-space Shor relaxation (the node loop's rows), then one round of at most
  3n of the most violated RLT cuts (the loop's second SDP);
- ``lifted``: the labels of U lifted with the outputs, X of order 1 + n + u over (1, v, y_U), with
  Y_kk = 1 and the couplings of the lifted count (y v >= 1, the box sides times (1 +- y),
  v^2 >= y v and the disjunctive products (v - 1)(1 + y) >= 0, (-1 - v)(1 - y) >= 0), no count;
  then one round of RLT cuts;
- ``lifted+triangle``: ``lifted``, then one round of the RLT cuts and at most 3n of the most
  violated triangle inequalities on the label block (Y_ij + Y_ik + Y_jk >= -1 and the three sign flips; valid for
  every +-1 labeling, Barahona and Mahjoub's triangle facets of the cut polytope).

Each line of the output JSONL: the instance, the relaxation, the certified bound of each SDP (the
node loop's certificate), its CPU and wall seconds, UB and the load average.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/sdp_relaxations.py \\
        --instances art100,art150,connectionist --out benchmarks/sdp_relaxations.jsonl
    .venv/bin/python benchmarks/sdp_relaxations.py --table --out benchmarks/sdp_relaxations.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def lifted_sdp(problem):
    """A :class:`s3vm.bounds.node_sdp.NodeSDP` of order 1 + n + u with the labels of U lifted
    (module docstring), the product rows on the outputs by facial reduction as today's."""
    from s3vm.bounds.node_sdp import NodeSDP
    from s3vm.models.shor_relaxation import FacialReduction, IncumbentScale

    d = problem.data
    sdp = NodeSDP(d, False, problem.backend, problem.profile, problem.options, problem.stats)
    N = d.n + 1 + d.u
    Ct = np.zeros((N, N))
    Ct[1:d.n + 1, 1:d.n + 1] = d.Cm
    sdp.Ct = Ct
    sdp.lifted = True           # rows() adds the label block
    if problem.sdp.fr is not None:
        a = np.zeros(N)
        a[0] = -d.rhs
        a[1 + d.l:d.n + 1] = 1.0
        sdp.fr = FacialReduction.for_vector(a)
    sdp.scale = IncumbentScale.build(Ct, np.r_[0, np.arange(d.n + 1, N)], sdp.fr)
    return sdp


def add_triangles(rows, X, n: int, u: int, cap: int, min_violation: float = -1e-2) -> int:
    """Add the at most ``cap`` most violated triangle inequalities on the label block of X (order
    1 + n + u); returns how many."""
    Y = X[n + 1:, n + 1:]
    i, j, k = (t.ravel() for t in np.meshgrid(np.arange(u), np.arange(u), np.arange(u),
                                                 indexing="ij"))
    keep = (i < j) & (j < k)
    i, j, k = i[keep], j[keep], k[keep]
    a, b, c = Y[i, j], Y[i, k], Y[j, k]
    signs = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=float)
    found = []
    for s in signs:
        val = s[0] * a + s[1] * b + s[2] * c + 1.0
        m = np.flatnonzero(val < min_violation)
        found.append((val[m], m, np.tile(s, (m.size, 1))))
    vals = np.concatenate([f[0] for f in found])
    if vals.size == 0:
        return 0
    idx = np.concatenate([f[1] for f in found])
    sg = np.concatenate([f[2] for f in found])
    order = np.argsort(vals, kind="stable")[:cap]
    ky = n + 1
    ii, jj, kk, ss = i[idx[order]] + ky, j[idx[order]] + ky, k[idx[order]] + ky, sg[order]
    rows.add("tri", np.stack([ii, ii, jj], axis=1), np.stack([jj, kk, kk], axis=1), ss,
             -np.ones(order.size), False)
    return int(order.size)


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (SDPA runs in a forked child): on a
    shared machine the CPU time, not the wall time, compares."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(name: str, convention: str, relaxations: list) -> list:
    from s3vm.api import load
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings
    from s3vm.data.loaders import load_sdp_instance
    from s3vm.models.shor_relaxation import add_rlt, separate_rlt
    from s3vm.selection import select_parameters
    from s3vm.solvers.profiles import get_profile
    from s3vm.solvers.registry import get_backend

    instance = load(load_sdp_instance(name, 0.3, seed=0, rounding="floor"))[0]
    sel = select_parameters(instance, seed=0, convention=convention)
    settings = Settings(**{**sel.settings(), "bias": False, "balance": "mean"})
    form = get_formulation("bb-sdp", **sel.options())
    problem = form.labeling_problem(instance, settings, get_backend("sdpa", "conic"),
                                    get_profile("sdpa", None, "conic"))
    problem.initial_incumbent()
    L, U = problem._root_box()
    d = problem.data
    lmd, umd = np.ones(d.n), np.maximum(L ** 2, U ** 2)
    cap = int(problem.options.cut_factor * d.n)
    out = []
    for relaxation in relaxations:
        sdp = problem.sdp if relaxation == "today" else lifted_sdp(problem)
        T = 1.0 + float(np.sum(umd)) + (0.0 if relaxation == "today" else d.u)
        record = {"instance": name, "convention": convention, "relaxation": relaxation,
                  "n": d.n, "u": d.u, "UB": problem.UB, "load": os.getloadavg()[0],
                  "bounds": [], "cpu": [], "wall": [], "added": []}
        rows = sdp.rows(L, U, lmd, umd, np.zeros((0, 3)))
        for step in range(2):
            t, c = time.perf_counter(), cpu_seconds()
            cert, X = sdp.solve(rows, T, 1e-5, problem.UB, problem._prune_at())
            record["wall"].append(time.perf_counter() - t)
            record["cpu"].append(cpu_seconds() - c)
            record["bounds"].append(None if cert is None else float(cert.value))
            record["status"] = sdp.last_status
            if cert is None or step == 1:
                break
            cuts = separate_rlt(X, L, U, d.n, problem.options.min_violation)[:cap]
            add_rlt(rows, cuts, L, U)
            record["added"].append(int(len(cuts)))
            if relaxation == "lifted+triangle":
                record["added"].append(add_triangles(rows, X, d.n, d.u, cap))
        record["product_rows"] = "kept" if sdp.fr is not None else "off/dropped"
        out.append(record)
        print(json.dumps(record), flush=True)
    return out


def table(path: str) -> None:
    rows = [json.loads(line) for line in open(path)]
    base = {(r["instance"], r["convention"]): r for r in rows if r["relaxation"] == "today"}
    print("| instance | relaxation | gap 1st SDP | gap 2nd SDP | share of today's 2nd-SDP gap "
          "| seconds (2 SDPs, CPU) | x today | load |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        b = base.get((r["instance"], r["convention"]))

        def gap(x):
            return None if x is None else (r["UB"] - x) / abs(r["UB"])

        gaps = [gap(x) for x in r["bounds"]] + [None] * (2 - len(r["bounds"]))
        g0 = None if b is None or len(b["bounds"]) < 2 else (b["UB"] - b["bounds"][1]) / abs(b["UB"])
        share = "-" if g0 in (None, 0) or gaps[1] is None else f"{gaps[1] / g0:.2f}"
        cpu = sum(r["cpu"])
        ratio = "-" if b is None else f"{cpu / max(sum(b['cpu']), 1e-9):.1f}"
        print(f"| {r['instance']} | {r['relaxation']} | "
              + " | ".join("-" if g is None else f"{100 * g:.3f}%" for g in gaps)
              + f" | {share} | {cpu:.1f} | {ratio} | {r['load']:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--instances", default="art100,art150,connectionist")
    ap.add_argument("--convention", default="code")
    ap.add_argument("--relaxations", default="today,lifted,lifted+triangle")
    ap.add_argument("--table", action="store_true", help="print the table of --out")
    args = ap.parse_args()
    if args.table:
        table(args.out)
        return
    with open(args.out, "a") as fh:
        for name in args.instances.split(","):
            for record in measure(name, args.convention, args.relaxations.split(",")):
                fh.write(json.dumps(record) + "\n")
                fh.flush()


if __name__ == "__main__":
    main()
