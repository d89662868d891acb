"""The parameter selection of SDP-S3VM (Piccialli, Schwiddessen and Sudoso 2024): kernel and C by
cross-validation on the labeled points, and their penalty convention C* = C l / u
(docs/formulations.md#selection).

What their code does (``run_tests`` and ``find_best_penalty_parameter`` in their sdp_s3vm.jl),
reproduced here:

- folds: scikit-learn 0.17's ``StratifiedKFold(y_L, n_folds=10)`` without shuffling (the version
  ScikitLearn.jl ports): per class, a KFold over that class's positions in order
  (:func:`stratified_folds`; later scikit-learn releases assign folds differently);
- grid: C = 0.01 f^k, f = (100 / 0.01)^(1/20), while C <= 100: 21 values;
- model per fold: the L2-SVM without bias on the fold's training points (hard margin on
  K + I / (2C), the squared hinge), prediction sign(sum_j beta_j k(x, x_j)) with the plain kernel;
  sign 0 counts as an error; accuracy = the mean over folds of the fold's accuracy;
- kernels: linear, and rbf with gamma = 1/p (p features) in exp(-gamma |x - z|^2), i.e.
  sigma = sqrt(p / 2) here; for each the smallest C of the best accuracy (strict '>'), and
  linear only when its accuracy is strictly larger than rbf's (ties go to rbf);
- the unlabeled penalty C* = C l / u (their penalty_factor_unlabeled = 1 times l / (n - l)).

Their split (a seeded Julia shuffle, then the first floor(0.3 n_c) points of each class) cannot
be reproduced in numpy; :func:`s3vm.loaders.load_sdp_instance` draws ours (``per_class="floor"``
for their count per class).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
import numpy as np

from .kernels import kernel_matrix
from .solvers.errors import InputError
from .solvers.memory import check_dense_memory

#: Peak bytes per entry of the l x l kernel of the labeled points (l of them): the kernel, a
#: fold's training block, K + I/2C scaled by y y', its Cholesky factor and NNLS's copy of it;
#: measured by ``benchmarks/peak_memory.py --runs estimates`` (docs/benchmarks.md).
SELECT_BYTES = 64


@dataclass(frozen=True)
class Selection:
    """The outcome of :func:`select_parameters`.

    Attributes
    ----------
    kernel : {"linear", "rbf"}
    sigma : float
        The rbf width (sqrt(p / 2)); also reported for linear.
    C : float
        Penalty of the labeled points.
    C_star : float
        C l / u.
    accuracy : dict
        kernel -> (best cross-validated accuracy, its smallest C).
    grid : tuple of float
        The penalties tried.
    """

    kernel: str
    sigma: float
    C: float
    C_star: float
    accuracy: dict = field(default_factory=dict)
    grid: tuple = ()

    def settings(self) -> dict:
        """The settings of SDP-S3VM's problem: these and no bias, the mean balance."""
        return {"kernel": self.kernel, "sigma": self.sigma, "C": self.C, "C_star": self.C_star,
                "bias": False, "balance": "mean"}

    def flags(self) -> str:
        """The same as command-line flags."""
        return (f"--kernel {self.kernel} --sigma {self.sigma:.17g} --C {self.C:.17g} "
                f"--C-star {self.C_star:.17g} --no-bias --balance mean")


def penalty_grid(cmin: float = 0.01, cmax: float = 100.0, steps: int = 20) -> tuple:
    """C = cmin f^k, f = (cmax / cmin)^(1 / steps), while C <= cmax (+1e-8): steps + 1 values,
    computed by repeated multiplication as their loop does."""
    factor = (cmax / cmin) ** (1.0 / steps)
    grid, c = [], cmin
    while c <= cmax + 1e-8:
        grid.append(c)
        c *= factor
    return tuple(grid)


def stratified_folds(y: np.ndarray, k: int = 10) -> list:
    """scikit-learn 0.17's StratifiedKFold(y, n_folds=k) without shuffle: for each class, its
    positions in order are split by KFold(max(count, k), k) (the first count % k folds one
    larger) and position r of the class goes to the fold of index r. Returns (train, test) index
    arrays per fold."""
    y = np.asarray(y)
    test_fold = np.zeros(y.size, dtype=int)
    for label in np.unique(y):
        pos = np.flatnonzero(y == label)
        m = pos.size
        size = max(m, k)
        sizes = np.full(k, size // k, dtype=int)
        sizes[: size % k] += 1
        start = 0
        for f, s in enumerate(sizes):
            idx = np.arange(start, start + s)
            idx = idx[idx < m]
            test_fold[pos[idx]] = f
            start += s
    return [(np.flatnonzero(test_fold != f), np.flatnonzero(test_fold == f)) for f in range(k)]


def l2svm_no_bias(K: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """beta with f(x) = sum_j beta_j k(x, x_j): the squared-hinge SVM without bias, exactly.

    Its dual max_{a >= 0} 1'a - 1/2 a'(Y K' Y)a, K' = K + I / (2C), is the nonnegative
    least-squares problem min_{a >= 0} |R a - t|^2 with R'R = Y K' Y and R't = 1 (Lawson and
    Hanson's NNLS is finite); beta = y o a."""
    from scipy.optimize import nnls

    y = np.asarray(y, dtype=float)
    Kp = K + (0.5 / C) * np.eye(y.size)
    R = np.linalg.cholesky(Kp * np.outer(y, y)).T
    t = np.linalg.solve(R.T, np.ones(y.size))
    a, _ = nnls(R, t, maxiter=50 * y.size)
    return y * a


def cross_validated_accuracy(K: np.ndarray, y: np.ndarray, C: float, folds: list) -> float:
    """The mean over folds of the accuracy of sign(K_test,train beta) (0 counts as wrong)."""
    total = 0.0
    for train, test in folds:
        beta = l2svm_no_bias(K[np.ix_(train, train)], y[train], C)
        pred = np.sign(K[np.ix_(test, train)] @ beta)
        total += float(np.mean(pred == y[test]))
    return total / len(folds)


def select_parameters(instance, folds: int = 10, cmin: float = 0.01, cmax: float = 100.0,
                      steps: int = 20, kernels: tuple = ("linear", "rbf")) -> Selection:
    """SDP-S3VM's choice of kernel and C for ``instance`` (module docstring), from its labeled
    points only (their use_everything_for_cross_validation = false).

    Raises
    ------
    InputError
        Fewer labeled points of a class than folds would leave a fold without it: at least two
        labeled points per class are needed, and folds >= 2.
    """
    if folds < 2:
        raise InputError(f"folds must be at least 2, got {folds}")
    lab = instance.labeled
    yL = instance.label[lab].astype(float)
    if min(np.sum(yL > 0), np.sum(yL < 0)) < 2:
        raise InputError("parameter selection needs at least two labeled points of each class")
    check_dense_memory(lab.size, SELECT_BYTES, "select",
                       "select on a sample of the labeled rows (set the label of the others to "
                       "0), which SDP-S3VM's rule needs no more of", unit="labeled points")
    X = np.asarray(instance.X, dtype=float)
    p = X.shape[1]
    sigma = math.sqrt(p / 2.0)
    grid = penalty_grid(cmin, cmax, steps)
    split = stratified_folds(yL, folds)
    accuracy = {}
    for kind in kernels:
        K = kernel_matrix(X[lab], None, kind, sigma)
        best, best_c = -1.0, None
        for c in grid:
            acc = cross_validated_accuracy(K, yL, c, split)
            if acc > best:  # strict: the smallest C of the best accuracy
                best, best_c = acc, c
        accuracy[kind] = (best, best_c)
    kind = "rbf" if "rbf" in accuracy else kernels[0]
    if "linear" in accuracy and "rbf" in accuracy and accuracy["linear"][0] > accuracy["rbf"][0]:
        kind = "linear"
    C = float(accuracy[kind][1])
    u = instance.u
    C_star = C * lab.size / u if u else C
    return Selection(kind, sigma, C, C_star, accuracy, grid)


def sdp_s3vm_settings(instance, base=None, **kwargs):
    """The :class:`~s3vm.settings.Settings` of SDP-S3VM's problem for ``instance``: the selected
    kernel, sigma, C and C* = C l / u, no bias, the mean balance (other fields from ``base``)."""
    from .settings import Settings

    chosen = select_parameters(instance, **kwargs).settings()
    return (base or Settings()).updated(**chosen) if base is not None else Settings(**chosen)


__all__ = ["Selection", "penalty_grid", "stratified_folds", "l2svm_no_bias",
           "cross_validated_accuracy", "select_parameters", "sdp_s3vm_settings"]
