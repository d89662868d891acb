"""The sparse scale run of issue 26: the primal linear S3VM (``primal-tsvm``, through
``S3VMClassifier(kernel="linear").fit(X_csr, y)``) on a two-topic bag-of-words corpus, against
scikit-learn's LinearSVC on the labeled rows alone, on every true label, and in a
label-switching loop. ``primal-tsvm-defaults`` is the estimator with its defaults (C = C* =
10); ``primal-tsvm`` sets ``--C`` and ``--C-star``.

The corpus: ``n`` documents of ``words`` word draws each over a vocabulary of ``vocab`` words;
each document is of topic +1 or -1 (probability 1/2). Every word of the vocabulary leans to
one topic (a fair coin); a document's word is drawn from the half of the vocabulary that leans
to its topic with probability (1 + tilt) / 2, else from the other half, and within a half by
its Zipf rank. Each word is weak evidence of its topic (odds 0.7 : 0.3 at tilt 0.4) and no
word is a topic's own: 100 labeled documents see only the frequent words, while 30 words a
document together decide the topic (about 1% Bayes error at tilt 0.4). Rows are TF-IDF
vectors (counts times log(n / document frequency)) of unit length, as text classifiers take
them. ``labeled`` documents (half of each topic) carry their label;
the others are unlabeled (-1 in scikit-learn's convention), their true topic kept for the error.

Each method runs in a fresh process (``--method``), which draws the same corpus from the seed,
so that its peak resident memory (``ru_maxrss``) is its own: corpus plus fit. ``fit_peak_mib``
is tracemalloc's peak over the fit alone (the allocations of numpy and scipy), beyond the
corpus. Seconds are the fit's wall-clock time. Errors are % on the unlabeled rows. Each record
carries the commit it ran at and ``/proc/loadavg`` before and after it.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/sparse_scale.py \\
        --n 100000 1000000 --out benchmarks/sparse_scale.jsonl
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
import tracemalloc

import numpy as np

METHODS = ("primal-tsvm-defaults", "primal-tsvm", "linearsvc-labeled", "linearsvc-all",
           "linearsvc-switching")


def _zipf_cdf(k: int, a: float = 1.0) -> np.ndarray:
    weights = 1.0 / np.arange(1, k + 1, dtype=float) ** a
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def corpus(n: int, vocab: int = 100_000, words: int = 30, tilt: float = 0.4,
           labeled: int = 100, seed: int = 0):
    """(X CSR float64 n x vocab, y with -1 on unlabeled rows and 0/1 labels, truth 0/1)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    truth = (rng.random(n) < 0.5).astype(np.int8)
    # Each word leans to one topic; within its half of the vocabulary a word is drawn by its
    # Zipf rank among the half's words.
    leans = rng.random(vocab) < 0.5
    halves = [np.flatnonzero(~leans), np.flatnonzero(leans)]
    cdfs = [_zipf_cdf(half.size) for half in halves]
    indices = np.empty(n * words, dtype=np.int32)
    chunk = 100_000                      # rows a chunk: the draws' temporaries stay small
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        m = (stop - start) * words
        doc_topic = np.repeat(truth[start:stop], words)
        own = rng.random(m) < (1.0 + tilt) / 2.0
        half = np.where(own, doc_topic, 1 - doc_topic)
        u = rng.random(m)
        out = np.empty(m, dtype=np.int32)
        for h in (0, 1):
            sel = half == h
            rank = np.minimum(np.searchsorted(cdfs[h], u[sel]), halves[h].size - 1)
            out[sel] = halves[h][rank]
        indices[start * words:stop * words] = out
    indptr = np.arange(0, n * words + 1, words, dtype=np.int64)
    X = sp.csr_matrix((np.ones(n * words), indices, indptr), shape=(n, vocab))
    X.sum_duplicates()
    # TF-IDF: counts times log(n / document frequency), rows scaled to unit length.
    df = np.bincount(X.indices, minlength=vocab)
    X.data *= np.log(n / np.maximum(df, 1))[X.indices]
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    X.data /= np.repeat(norms, np.diff(X.indptr))
    y = np.full(n, -1, dtype=np.int64)
    for c in (0, 1):
        rows = np.flatnonzero(truth == c)
        y[rng.choice(rows, size=labeled // 2, replace=False)] = c
    return X, y, truth


def _error(pred: np.ndarray, truth: np.ndarray) -> float:
    return float(100.0 * np.mean(pred != truth))


def run_primal(X, y, truth, C, C_star):
    from s3vm import S3VMClassifier

    clf = S3VMClassifier(kernel="linear", C=C, C_star=C_star, balance="count")
    clf.fit(X, y)
    unl = y == -1
    info = clf.result_.info.get("primal_tsvm", {})
    return {"error": _error(clf.transduction_[unl], truth[unl]),
            "objective": clf.result_.objective, "trainings": info.get("trainings"),
            "formulation": clf.result_.formulation, "C": C, "C_star": C_star}


def run_defaults(X, y, truth):
    """The estimator as a user meets it: ``S3VMClassifier(kernel="linear").fit(X_csr, y)``
    (its defaults: C = C* = 10, the count at the labeled ratio)."""
    from s3vm import S3VMClassifier

    clf = S3VMClassifier(kernel="linear")
    clf.fit(X, y)
    unl = y == -1
    info = clf.result_.info.get("primal_tsvm", {})
    return {"error": _error(clf.transduction_[unl], truth[unl]),
            "objective": clf.result_.objective, "trainings": info.get("trainings"),
            "formulation": clf.result_.formulation, "C": clf.C,
            "C_star": clf.C if clf.C_star is None else clf.C_star}


def _linearsvc(C=1.0):
    from sklearn.svm import LinearSVC

    return LinearSVC(C=C, dual=True, tol=1e-4, max_iter=1000)


def run_labeled(X, y, truth, C):
    lab = y != -1
    clf = _linearsvc(C).fit(X[lab], y[lab])
    unl = ~lab
    return {"error": _error(clf.predict(X[unl]), truth[unl]), "C": C}


def run_all(X, y, truth, C):
    clf = _linearsvc(C).fit(X, truth)
    unl = y == -1
    return {"error": _error(clf.predict(X[unl]), truth[unl]),
            "training_error": _error(clf.predict(X), truth), "C": C}


def run_switching(X, y, truth, C, rounds=10):
    """Label switching with LinearSVC (Joachims' loop, squared hinge as liblinear's default):
    train on the labeled rows, label the unlabeled rows by their scores under the labeled
    rows' class ratio, then retrain on all rows and swap the pairs whose scores disagree
    with their labels, until no pair swaps or ``rounds`` retrainings."""
    lab = y != -1
    unl = np.flatnonzero(~lab)
    clf = _linearsvc(C).fit(X[lab], y[lab])
    f = clf.decision_function(X[unl])
    positives = int(round(unl.size * np.mean(y[lab] == 1)))
    labels = np.zeros(unl.size, dtype=np.int64)
    labels[np.argsort(-f, kind="stable")[:positives]] = 1
    target = y.copy()
    done = 0
    for done in range(1, rounds + 1):
        target[unl] = labels
        clf = _linearsvc(C).fit(X, target)
        f = clf.decision_function(X[unl])
        pos = np.flatnonzero(labels == 1)
        neg = np.flatnonzero(labels == 0)
        pos = pos[np.argsort(f[pos], kind="stable")]
        neg = neg[np.argsort(-f[neg], kind="stable")]
        k = min(pos.size, neg.size)
        gain = f[neg[:k]] > f[pos[:k]]
        m = k if gain.all() else int(np.argmin(gain))
        if m == 0:
            break
        labels[pos[:m]], labels[neg[:m]] = 0, 1
    return {"error": _error(labels, truth[unl]), "rounds": done, "C": C}


def one(method: str, n: int, seed: int, C: float, C_star: float) -> dict:
    t0 = time.perf_counter()
    X, y, truth = corpus(n, seed=seed)
    made = time.perf_counter() - t0
    # Imported before tracemalloc starts, which would slow the imports down many times over
    # and count them in the fit.
    import sklearn.svm  # noqa: F401

    import s3vm.estimator  # noqa: F401
    import s3vm.formulations.primal_tsvm  # noqa: F401
    tracemalloc.start()
    t0 = time.perf_counter()
    if method == "primal-tsvm-defaults":
        out = run_defaults(X, y, truth)
    elif method == "primal-tsvm":
        out = run_primal(X, y, truth, C, C_star)
    elif method == "linearsvc-labeled":
        out = run_labeled(X, y, truth, 1.0)
    elif method == "linearsvc-all":
        out = run_all(X, y, truth, 1.0)
    else:
        out = run_switching(X, y, truth, 1.0)
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"method": method, "n": n, "p": X.shape[1], "nnz": int(X.nnz), "labeled": 100,
            "seed": seed, "seconds": round(seconds, 3), "corpus_seconds": round(made, 3),
            "fit_peak_mib": round(peak / 2 ** 20, 1),
            "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "corpus_mib": round((X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2 ** 20,
                                1),
            **out}


def _commit() -> str:
    """The checkout's commit, marked ``+changes`` when the tracked files other than the data
    files (which the runs append to) differ from it."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ":/", ":(exclude,top)benchmarks/*.jsonl"],
                               cwd=here, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


LABELS = {"primal-tsvm-defaults": "`S3VMClassifier(kernel=\"linear\")` (C = C* = 10)",
          "primal-tsvm": "`primal-tsvm`, C = 1, C* = 10 C l / u",
          "linearsvc-labeled": "LinearSVC, labeled rows only",
          "linearsvc-all": "LinearSVC, every true label",
          "linearsvc-switching": "LinearSVC label-switching loop"}


def table(path: str, commit: str) -> str:
    """The markdown table of the records run at ``commit`` in ``path`` (the last record of
    each size and method), as docs/benchmarks/scale.md shows it."""
    rows = {}
    with open(path) as fh:
        for line in fh:
            record = json.loads(line)
            if record.get("commit") == commit:
                rows[(record["n"], METHODS.index(record["method"]))] = record
    out = ["| n | nonzeros | method | seconds | error % | J | peak RSS MiB | fit peak MiB "
           "| load before / after | trainings / rounds |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    shown = set()
    for (n, _), r in sorted(rows.items()):
        size = f"10^{round(np.log10(n))}" if n == 10 ** round(np.log10(n)) else f"{n:,}"
        first = n not in shown
        shown.add(n)
        J = f"{r['objective']:.2f}" if r.get("objective") is not None else ""
        work = (f"{r['trainings']} MFN solves" if r.get("trainings") else
                str(r["rounds"]) if r.get("rounds") else "")
        nnz = f"{r['nnz']:,}" if first else ""
        out.append(f"| {size if first else ''} | {nnz} "
                   f"| {LABELS[r['method']]} | {r['seconds']:.1f} | {r['error']:.2f} | {J} "
                   f"| {r['max_rss_mib']:.0f} | {r['fit_peak_mib']:.0f} "
                   f"| {r['load_before'][0]} / {r['load_after'][0]} | {work} |")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100_000])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--C-star", type=float, default=None,
                        help="default: 10 C l / u (the unlabeled rows' total weight 10 times "
                             "the labeled rows', SVMlin's 1/l and lambda'/u scaling with "
                             "lambda' = 10)")
    parser.add_argument("--method", help=argparse.SUPPRESS)   # one run, in this process
    parser.add_argument("--out", default=None)
    parser.add_argument("--table", metavar="COMMIT",
                        help="print the markdown table of the records of --out run at COMMIT")
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.out, args.table))
        return 0
    if args.method:
        n = args.n[0]
        C_star = args.C_star if args.C_star is not None else 10 * args.C * 100 / (n - 100)
        print(json.dumps(one(args.method, n, args.seed, args.C, C_star)))
        return 0
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[:3]
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    commit = _commit()
    for n in args.n:
        for method in args.methods:
            cmd = [sys.executable, os.path.abspath(__file__), "--method", method, "--n", str(n),
                   "--seed", str(args.seed), "--C", str(args.C)]
            if args.C_star is not None:
                cmd += ["--C-star", str(args.C_star)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr)
                return proc.returncode
            record = json.loads(proc.stdout.strip().splitlines()[-1])
            record.update({"date": stamp, "commit": commit, "load_before": load, "machine":
                           f"{platform.node()}: {os.cpu_count()} cores (shared), "
                           f"{platform.processor() or platform.machine()}",
                           "threads": os.environ.get("OMP_NUM_THREADS")})
            with open("/proc/loadavg") as fh:
                record["load_after"] = fh.read().split()[:3]
            line = json.dumps(record)
            print(line, flush=True)
            if args.out:
                with open(args.out, "a") as fh:
                    fh.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
