"""The subspace SDP: the default solver (``psd-barrier``) beside the CVXPY model with SCS (the
path before it), on USPS and on a generated 10^4-point set. Not part of the test suite; run by
hand from the repository root. docs/benchmarks/sdp.md quotes its output.

    .venv/bin/python benchmarks/bench_subspace.py usps --points 100 --dim 4 --draws 5 \\
        --old-draws 3 --old-limit 300 --json /tmp/sub400.json
    .venv/bin/python benchmarks/bench_subspace.py usps --points 250 --dim 3 --draws 5 \\
        --old-draws 1 --old-limit 900 --json /tmp/sub1000.json
    .venv/bin/python benchmarks/bench_subspace.py large --n 10000 --dim 3 --rank 1000 \\
        --draws 3 --old-draws 1 --old-limit 600 --json /tmp/sub10k.json
    .venv/bin/python benchmarks/bench_subspace.py large --n 10000 --dim 3 --exact \\
        --draws 3 --old-draws 0 --json /tmp/sub10k_exact.json

``--out FILE.jsonl`` appends the run to a JSON-lines file instead (docs/benchmarks/sdp.md's
table is printed from benchmarks/subspace.jsonl by benchmarks/pages.py).

Every run is a fresh child process (``one``), so that its peak resident memory (ru_maxrss) is
its own. The times are the whole ``Formulation.solve``: the spectral step, the kernel (or its
factor), the solve and the score of the rounded labels.

USPS: the draws of benchmarks/de_bie.py (``--points`` of each digit of {0, 1} against {2, 3},
5 labeled per digit; rbf with sigma = mean nearest-neighbour distance, hard margin). New:
``sdp-subspace`` (exact K) with ``psd-barrier``. Old: ``sdp-lowrank`` with the exact factor
(rank = n, no working set) and SCS at eps 1e-3, the command of the reproduction before this
solver (the primal ``sdp-subspace`` with SCS is slower still); same V, same model.

Large: every {0, 1, 2, 3} digit of the USPS training and test parts (4575), then copies of
randomly chosen ones translated by one pixel (one of 8 directions), until ``--n`` points;
5 labeled per digit, seeded by the draw. ``sdp-lowrank`` with a Nystroem factor of rank
``--rank`` (the spectral step takes its sparse 10-nearest-neighbour path beyond 1000 points).
New: ``psd-barrier``; old: SCS with the working set, under ``--old-limit`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def shift_image(x: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """A 16 x 16 image (flattened) translated by (dy, dx) pixels, filled with its background."""
    img = x.reshape(16, 16)
    out = np.full_like(img, img.min())
    out[max(dy, 0):16 + min(dy, 0), max(dx, 0):16 + min(dx, 0)] = \
        img[max(-dy, 0):16 + min(-dy, 0), max(-dx, 0):16 + min(-dx, 0)]
    return out.ravel()


def large_instance(n: int, seed: int):
    """The generated set (see the module docstring) as an Instance with its truth."""
    import scipy.io

    from s3vm.data.instance import Instance
    from s3vm.data.loaders import data_dir

    from de_bie import DIGITS_NEG, DIGITS_POS

    m = scipy.io.loadmat(str(data_dir() / "usps" / "usps.mat"))
    parts = [(m["train_X"], m["train_Y"]), (m["test_x"], m["test_y"])]
    X = np.vstack([np.asarray(a, float).reshape(-1, 16, 16).transpose(0, 2, 1).reshape(-1, 256)
                   for a, _ in parts])
    digit = np.concatenate([(b.argmax(axis=1) + 1) % 10 for _, b in parts])
    keep = np.isin(digit, DIGITS_POS + DIGITS_NEG)
    X, digit = X[keep], digit[keep]
    rng = np.random.default_rng(seed)
    directions = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
    pairs = rng.choice(X.shape[0] * 8, size=n - X.shape[0], replace=False)
    src, which = pairs // 8, pairs % 8
    X = np.vstack([X, np.array([shift_image(X[i], *directions[k]) for i, k in zip(src, which)])])
    digit = np.concatenate([digit, digit[src]])
    _, first = np.unique(X, axis=0, return_index=True)   # no two equal points
    first = np.sort(first)
    X, digit = X[first], digit[first]
    truth = np.where(np.isin(digit, DIGITS_POS), 1, -1)
    label = np.zeros(X.shape[0], dtype=int)
    for k in DIGITS_POS + DIGITS_NEG:
        pick = rng.choice(np.flatnonzero(digit == k), 5, replace=False)
        label[pick] = truth[pick]
    return Instance(X, label, truth, name=f"usps_large_{X.shape[0]}_seed{seed}")


def one(args) -> dict:
    """One solve in this process; prints its JSON row."""
    from s3vm.core.registry import get_formulation
    from s3vm.core.settings import Settings
    from s3vm.models.spectral import nearest_neighbour_sigma
    from s3vm.solvers.profiles import SolverProfile

    from de_bie import auc, usps_digits, usps_instance

    if args.experiment == "usps":
        X, digit = usps_digits()
        inst = usps_instance(X, digit, args.points, 5, args.seed)
    else:
        inst = large_instance(args.n, args.seed)
    sigma = nearest_neighbour_sigma(inst.X)
    settings = Settings(kernel="rbf", sigma=sigma, hard_margin=True)
    if args.path == "new":
        if args.experiment == "usps":
            form = get_formulation("sdp-subspace", dim=args.dim)
        elif args.exact:
            form = get_formulation("sdp-subspace", dim=args.dim)   # exact rbf columns
        else:
            form = get_formulation("sdp-lowrank", dim=args.dim, rank=args.rank)
        profile = SolverProfile(solver="psd-barrier", threads=1)
    else:
        if args.experiment == "usps":
            form = get_formulation("sdp-lowrank", dim=args.dim, rank=inst.n, working_set=0)
        else:
            form = get_formulation("sdp-lowrank", dim=args.dim, rank=args.rank)
        profile = SolverProfile(solver="scs", time_limit=args.limit, threads=1,
                                options={"eps_abs": 1e-3, "eps_rel": 1e-3})
    from threadpoolctl import threadpool_limits

    start, cpu = time.perf_counter(), time.process_time()
    with threadpool_limits(limits=1):     # both paths: one BLAS thread (the machine is shared)
        res = form.solve(inst, settings, profile)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    cert = res.info.get("subspace_certificate") or {}
    row = {"path": args.path, "seed": args.seed, "n": inst.n, "status": res.status,
           "seconds": wall, "cpu_seconds": cpu, "load": os.getloadavg()[0],
           "value": res.info.get("relaxation_value"), "rel_gap": cert.get("rel_gap"),
           "newton_steps": cert.get("newton_steps"), "svm_solves": cert.get("svm_solves"),
           "largest_working_set": cert.get("largest_working_set"),
           "iterations": res.iterations, "message": res.message,
           "auc": (auc(inst.truth_U, res.decision_values)
                   if res.decision_values is not None else None),
           "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    print(json.dumps(row), flush=True)
    return row


def child(args, path: str, seed: int, limit=None) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "one", args.experiment, "--path", path,
           "--seed", str(seed), "--dim", str(args.dim)]
    if args.experiment == "usps":
        cmd += ["--points", str(args.points)]
    else:
        cmd += ["--n", str(args.n), "--rank", str(args.rank)] + (["--exact"] if args.exact else [])
    if limit is not None:
        cmd += ["--limit", str(limit)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        row = {"path": path, "seed": seed, "status": "crashed",
               "message": out.stderr.strip().splitlines()[-1:] or ""}
    else:
        row = json.loads(lines[-1])
    print(json.dumps(row), flush=True)
    return row


def summary(rows: list, label: str) -> str:
    out = []
    for path in ("new", "old"):
        mine = [r for r in rows if r["path"] == path and r.get("seconds") is not None]
        if not mine:
            continue
        wall = np.array([r["seconds"] for r in mine])
        cpu = np.array([r["cpu_seconds"] for r in mine])
        rss = np.array([r["max_rss_mb"] for r in mine])
        aucs = [r["auc"] for r in mine if r.get("auc") is not None]
        out.append(f"| {label} | {path} | {len(mine)} | {np.median(wall):.2f} "
                   f"({wall.min():.2f}-{wall.max():.2f}) | {np.median(cpu):.2f} | "
                   f"{rss.max():.0f} | {sorted(set(r['status'] for r in mine))} | "
                   f"{np.mean(aucs) if aucs else float('nan'):.3f} |")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", nargs="?", default="run", choices=("run", "one"))
    parser.add_argument("experiment", choices=("usps", "large"))
    parser.add_argument("--points", type=int, default=100, help="points per digit (usps)")
    parser.add_argument("--n", type=int, default=10000, help="points (large)")
    parser.add_argument("--rank", type=int, default=1000, help="Nystroem rank (large)")
    parser.add_argument("--exact", action="store_true",
                        help="large: sdp-subspace with the exact rbf kernel (columns computed on "
                        "demand, no n x n matrix) instead of a Nystroem factor; new path only")
    parser.add_argument("--dim", type=int, default=4)
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--old-draws", type=int, default=1)
    parser.add_argument("--old-limit", type=float, default=600.0)
    parser.add_argument("--path", choices=("new", "old"), default="new")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=float, default=None)
    parser.add_argument("--json")
    parser.add_argument("--out", help="append the run as JSON lines to this file (a header line, "
                        "then one line per solve with its problem), for benchmarks/pages.py")
    args = parser.parse_args(argv)
    if args.mode == "one":
        one(args)
        return
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "nproc": os.cpu_count(),
            "cpu": platform.processor() or platform.machine(), "argv": sys.argv[1:]}
    try:
        with open("/proc/cpuinfo") as fh:
            meta["cpu"] = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(json.dumps(meta), flush=True)
    rows = []
    # old and new alternate draw by draw, so that both see the same load
    for seed in range(max(args.draws, args.old_draws)):
        if seed < args.draws:
            rows.append(child(args, "new", seed))
        if seed < args.old_draws:
            rows.append(child(args, "old", seed, args.old_limit))
    label = (f"USPS {4 * args.points}, d = {args.dim}" if args.experiment == "usps"
             else f"generated {args.n}, d = {args.dim}, "
             + ("exact rbf" if args.exact else f"Nystroem {args.rank}"))
    print("| problem | path | draws | wall s median (min-max) | CPU s median | max RSS MB | "
          "statuses | mean AUC |")
    print("|---|---|---|---|---|---|---|---|")
    print(summary(rows, label))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(json.dumps({"part": "header", "problem": label, **meta}) + "\n")
            for row in rows:
                fh.write(json.dumps({"problem": label, **row}) + "\n")


if __name__ == "__main__":
    main()
