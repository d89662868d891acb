"""Reproduce De Bie & Cristianini's experiments: "Convex methods for transduction" (NIPS 16, 2003),
section 5, and "Semi-supervised learning using semi-definite programming" (chapter 7 of
Semi-Supervised Learning, MIT Press, 2006), section 7.4.1.

Run by hand from the repository root (not part of the test suite); it prints markdown tables and
writes the raw numbers as JSON. docs/reproductions/de-bie.md quotes them (written by hand: the
discussion needs the numbers first).

    .venv/bin/python benchmarks/de_bie.py usps --points 100 --dim 4 --runs 10 --json /tmp/usps400.json
    .venv/bin/python benchmarks/de_bie.py usps --points 250 --dim 3 --runs 10 --json /tmp/usps1000.json
    .venv/bin/python benchmarks/de_bie.py usps ... --spectral-rule book --graph knn \\
        --threshold-quantile 0.9                     # the ablation's choices
    .venv/bin/python benchmarks/de_bie.py artificial --json /tmp/artificial.json
    .venv/bin/python benchmarks/de_bie.py summary /tmp/usps400.json ...   # tables of saved runs

USPS (2003, section 5): digits {0, 1} (+1) against {2, 3} (-1) from the 7291-point training
part of ``instances/data/usps/usps.mat`` (pixels in [0, 1], the ESL values mapped by (v + 1) / 2:
distances are half the paper's, so its sigma = 7 is 3.5 here). Each randomisation draws
``--points`` of each digit, then 5 labeled points of each digit (20 labeled), seeded by the run
number. rbf kernel, sigma = mean distance to the nearest neighbour among the drawn points, hard
margin. Scored by ROC AUC on the unlabeled points:

- ``sdp-subspace`` (exact kernel), dimension ``--dim``, with its default solver ``psd-barrier``
  and the spectral options ``--spectral-rule``, ``--graph``, ``--threshold-quantile``;
  ``--formulation sdp-lowrank`` with ``--rank`` takes a Nystroem factor, ``--solver scs``
  (``--eps``) the CVXPY model.
- inductive SVMs on the 20 labeled points with the same kernel, scored by their decision function
  on the unlabeled points: scikit-learn ``SVC(kernel="precomputed", C=1e6)`` (with bias; C = 1e6
  stands in for the hard margin: no alpha reaches it) and the hard-margin SVM without bias
  (``svm_dual_value``, the model the SDP transduces).

Artificial (2006, section 7.4.1): the chapter's data are only in its figures, so we build sets of the
described kind (see :func:`artificial_sets`), rbf with the mean nearest-neighbour width, hard
margin, and run ``sdp`` (the full relaxation: the interval [lower_bound, objective] of 7.1.4) with
Clarabel and SCS, and ``sdp-subspace`` (d = 4) for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from s3vm.core.kernels import kernel_matrix
from s3vm.core.registry import get_formulation
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.data.loaders import data_dir
from s3vm.models.spectral import nearest_neighbour_sigma
from s3vm.models.svm_dual import svm_dual_value
from s3vm.solvers.profiles import SolverProfile

DIGITS_POS, DIGITS_NEG = (0, 1), (2, 3)


def auc(truth, scores) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(truth, scores))


# --- USPS -------------------------------------------------------------------------------------

def usps_digits():
    """(X, digit) of the 7291-point training part, pixels in the ESL upright order, values in
    [0, 1]: the same arrays as :func:`s3vm.data.loaders.load_usps` (which keeps no digit)."""
    import scipy.io

    m = scipy.io.loadmat(str(data_dir() / "usps" / "usps.mat"))
    X = np.asarray(m["train_X"], float).reshape(-1, 16, 16).transpose(0, 2, 1).reshape(-1, 256)
    digit = (m["train_Y"].argmax(axis=1) + 1) % 10
    return X, digit


def usps_instance(X, digit, per_digit: int, labeled_per_digit: int, seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.choice(np.flatnonzero(digit == k), per_digit, replace=False)
                           for k in DIGITS_POS + DIGITS_NEG])
    d = digit[rows]
    truth = np.where(np.isin(d, DIGITS_POS), 1, -1)
    label = np.zeros(rows.size, dtype=int)
    for k in DIGITS_POS + DIGITS_NEG:
        pick = rng.choice(np.flatnonzero(d == k), labeled_per_digit, replace=False)
        label[pick] = truth[pick]
    return Instance(X[rows], label, truth, name=f"usps_0123_{4 * per_digit}_seed{seed}")


def inductive_scores(K, instance):
    """Decision values on the unlabeled points of SVMs trained on the labeled points only."""
    from sklearn.svm import SVC

    lab, unl = instance.labeled, instance.unlabeled
    yl = instance.label[lab].astype(float)
    svc = SVC(kernel="precomputed", C=1e6).fit(K[np.ix_(lab, lab)], yl)
    with_bias = svc.decision_function(K[np.ix_(unl, lab)])
    _, alpha = svm_dual_value(K[np.ix_(lab, lab)], yl, None)
    no_bias = K[np.ix_(unl, lab)] @ (alpha * yl)
    return with_bias, no_bias


def run_usps(args) -> dict:
    X, digit = usps_digits()
    runs = []
    options = {"dim": args.dim, "spectral_rule": args.spectral_rule, "graph": args.graph,
               "threshold_quantile": args.threshold_quantile, "rounding": args.rounding}
    if args.formulation == "sdp-lowrank":
        options.update(rank=args.rank, working_set=0)
    solver_options = {}
    if args.eps is not None:
        solver_options = {"eps_abs": args.eps, "eps_rel": args.eps}
    for seed in range(args.first_seed, args.first_seed + args.runs):
        inst = usps_instance(X, digit, args.points, 5, seed)
        sigma = nearest_neighbour_sigma(inst.X)
        settings = (Settings(kernel="rbf", sigma=sigma, hard_margin=True) if args.C is None else
                    Settings(kernel="rbf", sigma=sigma, C=args.C, C_star=args.C))
        K = kernel_matrix(inst.X, None, "rbf", sigma)
        with_bias, no_bias = inductive_scores(K, inst)
        truth = inst.truth_U
        opts = dict(options)
        if args.formulation == "sdp-lowrank" and args.rank is None:
            opts["rank"] = inst.n          # the exact factor: the model of sdp-subspace
        form = get_formulation(args.formulation, **opts)
        start = time.perf_counter()
        cpu = time.process_time()
        res = form.solve(inst, settings, SolverProfile(solver=args.solver, options=solver_options,
                                                       threads=1))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        row = {
            "seed": seed, "n": inst.n, "u": inst.u, "sigma": sigma, "status": res.status,
            "seconds": wall, "cpu_seconds": cpu, "iterations": res.iterations,
            "load": os.getloadavg()[0],
            "auc_sdp": auc(truth, res.decision_values) if res.decision_values is not None else None,
            "error_sdp": (None if res.labels is None
                          else float(np.mean(np.asarray(res.labels) != truth))),
            "objective": res.objective, "relaxation_value": res.info.get("relaxation_value"),
            "auc_svc": auc(truth, with_bias), "auc_svm_nobias": auc(truth, no_bias),
            "error_svc": float(np.mean(np.where(with_bias >= 0, 1, -1) != truth)),
            "error_svm_nobias": float(np.mean(np.where(no_bias >= 0, 1, -1) != truth)),
        }
        runs.append(row)
        print(json.dumps(row), flush=True)
    return {"experiment": "usps", "points_per_digit": args.points, "dim": args.dim,
            "formulation": args.formulation, "options": options, "solver": args.solver, "C": args.C,
            "eps": args.eps, "runs": runs}


def summarise_usps(out: dict) -> str:
    runs = out["runs"]

    def ms(key):
        v = np.array([r[key] for r in runs if r[key] is not None], float)
        return f"{v.mean():.3f} ± {v.std(ddof=1) if v.size > 1 else 0.0:.3f}"

    secs = np.array([r["seconds"] for r in runs])
    cpus = np.array([r["cpu_seconds"] for r in runs])
    lines = [
        f"n = {runs[0]['n']}, d = {out['dim']}, {len(runs)} randomisations "
        f"(seeds {runs[0]['seed']}..{runs[-1]['seed']}), {out['formulation']} {out['options']}, "
        f"solver {out['solver']} (eps {out['eps']}), C {out.get('C')} (None: hard margin)",
        "",
        "| method | ROC AUC (mean ± sd) | error (threshold 0) |",
        "|---|---|---|",
        f"| {out['formulation']} | {ms('auc_sdp')} | {ms('error_sdp')} |",
        f"| SVC on labeled (C = 1e6, bias) | {ms('auc_svc')} | {ms('error_svc')} |",
        f"| hard-margin SVM on labeled, no bias | {ms('auc_svm_nobias')} | {ms('error_svm_nobias')} |",
        "",
        f"seconds per run: median {np.median(secs):.1f} (min {secs.min():.1f}, max {secs.max():.1f}); "
        f"CPU seconds median {np.median(cpus):.1f}; sigma median "
        f"{np.median([r['sigma'] for r in runs]):.3f}; statuses "
        f"{sorted(set(r['status'] for r in runs))}",
    ]
    return "\n".join(lines)


# --- artificial sets of De Bie and Cristianini (2006), section 7.4.1 -----------------------------

def artificial_sets() -> dict:
    """Instances of the kinds of figures 7.1-7.3 (the chapter gives no coordinates).

    ``two-bars``: two parallel elongated clusters (35 points each, x uniform on [-2, 2], y normal
    with sd 0.15 around +0.6 and -0.6), one labeled point per class at opposite ends (x = -2 on
    the upper bar, x = +2 on the lower one): the inductive SVM on the two labeled points cuts
    across both bars; the transductive optimum follows the gap.
    ``five-clusters-a`` / ``-b``: five Gaussian clusters (sd 0.25, 80 points: sizes 18, 20, 14,
    16, 12) on a pentagon of radius 2, one labeled point in each cluster and a second in the
    first (six labels). Labeling a (fig. 7.2): clusters 0, 2, 4 positive (44 / 36). Labeling b
    (fig. 7.3): clusters 0, 1 positive, 38 against 42 as in the chapter.
    """
    rng = np.random.default_rng(2004)
    out = {}
    m = 35
    up = np.column_stack([rng.uniform(-2, 2, m), rng.normal(0.6, 0.15, m)])
    lo = np.column_stack([rng.uniform(-2, 2, m), rng.normal(-0.6, 0.15, m)])
    up[0] = (-2.0, 0.6)
    lo[0] = (2.0, -0.6)
    X = np.vstack([up, lo])
    truth = np.r_[np.ones(m), -np.ones(m)].astype(int)
    label = np.zeros(2 * m, dtype=int)
    label[0], label[m] = 1, -1
    out["two-bars"] = Instance(X, label, truth, name="two-bars")

    sizes = (18, 20, 14, 16, 12)
    angles = np.pi / 2 + 2 * np.pi * np.arange(5) / 5
    centers = 2.0 * np.column_stack([np.cos(angles), np.sin(angles)])
    X = np.vstack([c + 0.25 * rng.standard_normal((s, 2)) for c, s in zip(centers, sizes)])
    cluster = np.repeat(np.arange(5), sizes)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    labeled = np.r_[starts, starts[0] + 1]
    for key, positive in (("five-clusters-a", (0, 2, 4)), ("five-clusters-b", (0, 1))):
        truth = np.where(np.isin(cluster, positive), 1, -1)
        label = np.zeros(X.shape[0], dtype=int)
        label[labeled] = truth[labeled]
        out[key] = Instance(X, label, truth, name=key)
    return out


def run_artificial(args) -> dict:
    rows = []
    for key, inst in artificial_sets().items():
        if args.sets and key not in args.sets:
            continue
        sigma = nearest_neighbour_sigma(inst.X)
        settings = (Settings(kernel="rbf", sigma=sigma, hard_margin=True) if args.C is None else
                    Settings(kernel="rbf", sigma=sigma, C=args.C, C_star=args.C))
        K = kernel_matrix(inst.X, None, "rbf", sigma)
        with_bias, no_bias = inductive_scores(K, inst)
        truth = inst.truth_U
        d_truth, _ = svm_dual_value(K, inst.truth.astype(float), None)
        for name, opts, solver in (("sdp", {}, "clarabel"), ("sdp", {}, "scs"),
                                   ("sdp-subspace", {"dim": 4}, "scs")):
            form = get_formulation(name, **opts)
            start = time.perf_counter()
            limit = args.scs_limit if solver == "scs" else None
            res = form.solve(inst, settings, SolverProfile(solver=solver, time_limit=limit))
            wall = time.perf_counter() - start
            row = {"set": key, "n": inst.n, "u": inst.u, "sigma": sigma, "formulation": name,
                   "solver": solver, "status": res.status, "seconds": wall,
                   "lower_bound": res.lower_bound, "objective": res.objective,
                   "iterations": res.iterations,
                   "relaxation_value": res.info.get("relaxation_value"),
                   "gap": (None if res.lower_bound is None or res.objective is None else
                           (res.objective - res.lower_bound) / max(1.0, abs(res.objective))),
                   "D_truth": d_truth,
                   "positives": (None if res.labels is None
                                 else int(np.sum(np.asarray(res.labels) == 1))),
                   "true_positives": int(np.sum(truth == 1)),
                   "error": (None if res.labels is None
                             else float(np.mean(np.asarray(res.labels) != truth))),
                   "auc": None if res.labels is None else auc(truth, res.decision_values),
                   "error_svc": float(np.mean(np.where(with_bias >= 0, 1, -1) != truth)),
                   "error_svm_nobias": float(np.mean(np.where(no_bias >= 0, 1, -1) != truth))}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return {"experiment": "artificial", "rows": rows}


def summarise_artificial(out: dict) -> str:
    lines = ["| set | n / u | formulation | solver | status | lower bound | objective D(y) | "
             "rel. gap | D(truth) | error | +1 found / true | inductive SVC error | s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in out["rows"]:
        lb = "-" if r["lower_bound"] is None else f"{r['lower_bound']:.6f}"
        gap = "-" if r["gap"] is None else f"{r['gap']:.1e}"
        obj = "-" if r["objective"] is None else f"{r['objective']:.6f}"
        err = "-" if r["error"] is None else f"{r['error']:.3f}"
        lines.append(f"| {r['set']} | {r['n']} / {r['u']} | {r['formulation']} | {r['solver']} | "
                     f"{r['status']} | {lb} | {obj} | {gap} | {r['D_truth']:.6f} | "
                     f"{err} | {r['positives']} / {r['true_positives']} | "
                     f"{r['error_svc']:.3f} | {r['seconds']:.1f} |")
    return "\n".join(lines)


def machine() -> str:
    cpu = subprocess.run(["bash", "-c", "lscpu | grep 'Model name'"], capture_output=True,
                         text=True).stdout.split(":", 1)[-1].strip()
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    date = subprocess.run(["date"], capture_output=True, text=True).stdout.strip()
    return f"CPU {cpu}, nproc {nproc}, load {os.getloadavg()}, {date}"


def summary(paths) -> None:
    """Print the tables of saved JSON files; USPS files with the same settings are merged (runs
    split over several invocations with ``--first-seed``)."""
    groups: dict = {}
    for path in paths:
        with open(path) as fh:
            out = json.load(fh)
        if out["experiment"] == "artificial":
            print(summarise_artificial(out))
            continue
        key = (out["points_per_digit"], out["dim"], out["formulation"], str(out["options"]),
               out["eps"], out["solver"])
        if key in groups:
            groups[key]["runs"] += out["runs"]
        else:
            groups[key] = out
    for out in groups.values():
        out["runs"].sort(key=lambda r: r["seed"])
        print(summarise_usps(out))
        print()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "summary":
        return summary(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiment", choices=("usps", "artificial"))
    ap.add_argument("--points", type=int, default=100, help="points per digit (100 or 250)")
    ap.add_argument("--dim", type=int, default=4)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--formulation", default="sdp-subspace", choices=("sdp-lowrank", "sdp-subspace"))
    ap.add_argument("--rank", type=int, default=None, help="Nystroem rank (default: n, exact)")
    ap.add_argument("--solver", default="psd-barrier")
    ap.add_argument("--spectral-rule", default="nips", choices=("nips", "book"))
    ap.add_argument("--graph", default="auto", choices=("auto", "dense", "knn"))
    ap.add_argument("--rounding", default="gamma", choices=("gamma", "eigenvector"),
                    help="the score: Gamma[U, i+] (the paper's) or Gamma's dominant eigenvector")
    ap.add_argument("--C", type=float, default=None,
                    help="usps: soft margin with this C (default: the paper's hard margin)")
    ap.add_argument("--threshold-quantile", type=float, default=None,
                    help="clip each column of V at this quantile of |V| (2003, footnote 4)")
    ap.add_argument("--eps", type=float, default=None, help="SCS eps_abs = eps_rel")
    ap.add_argument("--sets", nargs="*", default=None, help="artificial: only these sets")
    ap.add_argument("--scs-limit", type=float, default=120.0,
                    help="artificial: time limit of the SCS runs (seconds)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    head = machine()
    out = run_usps(args) if args.experiment == "usps" else run_artificial(args)
    out["machine"] = head
    out["command"] = ".venv/bin/python benchmarks/de_bie.py " + " ".join(sys.argv[1:])
    out["wall_seconds"] = time.perf_counter() - start
    print(out["command"])
    print(head)
    print(summarise_usps(out) if args.experiment == "usps" else summarise_artificial(out))
    print(f"wall time {out['wall_seconds']:.0f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
