"""The root SDP of ``bb-sdp`` with the mean balance's product rows under SDPA, per basis of the facial
reduction (docs/benchmarks/sdp.md, "Product rows, certificates and the stop test").

Per instance, the starting incumbent's box, no cuts, SDPA at 1e-5 and 1e-7, with
``difference`` (the basis of consecutive differences e_k / a_k - e_k' / a_k' used before),
``pivot`` (:meth:`s3vm.models.shor_relaxation.FacialReduction.for_vector`) and ``none`` (no
product rows, the balance's row alone); each line of the output JSONL: the instance, basis,
accuracy, SDPA's status and phase, the certificate and b'y, the condition number of Q'Q, wall
seconds and the load average. Instances: ``ionosphere`` (load_sdp_instance, seed 0, 30% of
each class labeled with floor rounding, the code convention's kernel and C), ``ionosphere250``
(the 250-point subset of tests/test_bb_sdp.py, same kernel and C).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/sdp_fr_basis.py \\
        --instances ionosphere250,ionosphere --out benchmarks/sdp_fr_basis.jsonl
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/sdp_fr_basis.py \
        --instances wdbc --bases pivot,none --out benchmarks/sdp_fr_basis.jsonl
    .venv/bin/python benchmarks/sdp_fr_basis.py --table --out benchmarks/sdp_fr_basis.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np
import scipy.sparse as sp


def difference_basis(a):
    """The basis used before: e_k for a_k = 0, e_k / a_k - e_k' / a_k' for consecutive nonzeros."""
    from s3vm.models.shor_relaxation import FacialReduction

    a = np.asarray(a, dtype=float)
    nz, zero = np.flatnonzero(a != 0), np.flatnonzero(a == 0)
    rows = list(zero) + [k for pair in zip(nz[:-1], nz[1:]) for k in pair]
    cols = list(range(zero.size)) + [zero.size + c for c in range(nz.size - 1) for _ in (0, 1)]
    vals = [1.0] * zero.size + [v for k1, k2 in zip(nz[:-1], nz[1:])
                                for v in (1.0 / a[k1], -1.0 / a[k2])]
    return FacialReduction(sp.csr_matrix((vals, (rows, cols)), shape=(a.size, a.size - 1)), a)


def instance_of(name: str):
    from s3vm.api import load
    from s3vm.core.settings import Settings
    from s3vm.data.loaders import load_sdp_instance
    from s3vm.selection import select_parameters

    if name == "ionosphere250":
        full = load_sdp_instance("ionosphere", None)
        rng = np.random.default_rng(0)
        idx = np.sort(rng.choice(full.n, 250, replace=False))
        truth = full.label[idx]
        y = np.zeros(idx.size, dtype=int)
        for c in (1, -1):
            k = np.flatnonzero(truth == c)
            y[rng.choice(k, int(0.3 * k.size), replace=False)] = c
        instance = load((full.X[idx], y, truth))[0]
        return instance, Settings(kernel="linear", C=0.03981071705534974,
                                  C_star=0.008381203590599946, bias=False, balance="mean")
    instance = load(load_sdp_instance(name, 0.3, seed=0, rounding="floor"))[0]
    sel = select_parameters(instance, seed=0, convention="code")
    return instance, Settings(**{**sel.settings(), "bias": False, "balance": "mean"})


def measure(name: str, bases: list, fh) -> None:
    from s3vm.core.registry import get_formulation
    from s3vm.models.shor_relaxation import IncumbentScale
    from s3vm.solvers.profiles import get_profile
    from s3vm.solvers.registry import get_backend

    instance, settings = instance_of(name)
    form = get_formulation("bb-sdp", mean_products=True)
    problem = form.labeling_problem(instance, settings, get_backend("sdpa", "conic"),
                                    get_profile("sdpa", None, "conic"))
    problem.initial_incumbent()
    L, U = problem._root_box()
    d, sdp = problem.data, problem.sdp
    umd = np.maximum(L ** 2, U ** 2)
    T = 1.0 + float(np.sum(umd))
    a = sdp.fr.a
    pivot = sdp.fr
    for basis in bases:
        sdp.fr = {"difference": difference_basis(a), "pivot": pivot, "none": None}[basis]
        sdp.scale = IncumbentScale.build(sdp.Ct, np.array([0]), sdp.fr)
        cond = None
        if sdp.fr is not None:
            ev = np.linalg.eigvalsh(sdp.fr.G)
            cond = float(ev[-1] / ev[0])
        for tol in (1e-5, 1e-7):
            rows = sdp.rows(L, U, np.ones(d.n), umd, np.zeros((0, 3)))
            load = os.getloadavg()[0]
            t = time.perf_counter()
            cert, _ = sdp.solve_once(rows, T, tol, problem.UB)
            record = {"instance": name, "n": d.n, "u": d.u, "rhs": d.rhs, "basis": basis,
                      "tolerance": tol, "status": sdp.last_status,
                      "certificate": None if cert is None else float(cert.value),
                      "dual": None if cert is None else float(cert.dual), "cond": cond,
                      "UB": problem.UB, "wall": time.perf_counter() - t, "load": load,
                      "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
            if record["certificate"] is not None and not math.isfinite(record["certificate"]):
                record["certificate"] = None
            fh.write(json.dumps(record) + "\n")
            fh.flush()


def table(path: str) -> None:
    """The table of docs/benchmarks/sdp.md from the output JSONL."""
    from itertools import groupby

    rows = [json.loads(line) for line in open(path)]
    print("| instance | n, u | basis | cond(Q'Q) | SDPA at 1e-5 | certificate | s "
          "| SDPA at 1e-7 | certificate | s | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (inst, basis), g in groupby(rows, key=lambda r: (r["instance"], r["basis"])):
        g = list(g)
        cells = []
        for tol in (1e-5, 1e-7):
            r = next((x for x in g if x["tolerance"] == tol), None)
            if r is None:
                cells += ["-", "-", "-"]
                continue
            c = r["certificate"]
            value = "-" if c is None else f"{c:.6f}" if abs(c) < 1e6 else f"{c:.2e}"
            cells += [r["status"], value, f"{r['wall']:.1f}"]
        cond = g[0]["cond"]
        cond = "-" if cond is None else f"{cond:.2g}"
        print(f"| {inst} | {g[0]['n']}, {g[0]['u']} | {basis} | {cond} | " + " | ".join(cells)
              + f" | {g[0]['load']:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--instances", default="ionosphere250,ionosphere")
    ap.add_argument("--bases", default="difference,pivot,none")
    ap.add_argument("--table", action="store_true", help="print the table of --out")
    args = ap.parse_args()
    if args.table:
        table(args.out)
        return
    with open(args.out, "a") as fh:
        for name in args.instances.split(","):
            measure(name, args.bases.split(","), fh)


if __name__ == "__main__":
    main()
