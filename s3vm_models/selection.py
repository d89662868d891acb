"""The parameter selection of SDP-S3VM (Piccialli, Schwiddessen and Sudoso 2024): kernel and C by
cross-validation on the labeled points, and their penalty convention C* = C l / u
(docs/formulations.md#selection).

What their code does (``run_tests`` and ``find_best_penalty_parameter`` in their sdp_s3vm.jl),
reproduced here:

- order: their ``read_data`` shuffles the rows with the run's seed and labels the first of each
  class, so the folds see the labeled points in a shuffled order, never in the file's (a file
  sorted by class, as connectionist's, would otherwise give each fold one class's block). Here
  the labeled points are permuted by ``numpy.random.default_rng(seed)`` before the folds
  (``seed=None``: file order, what this module did before); Julia's shuffle itself cannot be
  reproduced in numpy, so the order, and with a flat CV curve the chosen C, is the seed's own;
- folds: scikit-learn 0.17's ``StratifiedKFold(y_L, n_folds=10)`` without shuffling (the version
  ScikitLearn.jl ports) over that order: per class, a KFold over that class's positions in order
  (:func:`stratified_folds`; later scikit-learn releases assign folds differently);
- grid: C = 0.01 f^k, f = (100 / 0.01)^(1/20), while C <= 100: 21 values;
- model per fold: the L2-SVM without bias on the fold's training points (hard margin on
  K + I / (2C), the squared hinge), prediction sign(sum_j beta_j k(x, x_j)) with the plain kernel;
  sign 0 counts as an error; accuracy = the mean over folds of the fold's accuracy;
- kernels: linear, and rbf with gamma = 1/p (p features) in exp(-gamma |x - z|^2), i.e.
  sigma = sqrt(p / 2) here; for each the smallest C of the best accuracy (strict '>'), and
  linear only when its accuracy is strictly larger than rbf's (ties go to rbf);
- the unlabeled penalty C* = f C l / u, f their ``penalty_factor_unlabeled``, under one of two
  named conventions (:data:`CONVENTIONS`): ``paper``, their published parameters.txt (f = 1, no
  product rows), and ``code``, the defaults of their ``get_parameters`` (f = 0.5 and
  ``add_product_constraints`` true: the mean balance's product rows, ``bb-sdp
  --mean-products``).

Their split (a seeded Julia shuffle, then the first floor(0.3 n_c) points of each class) cannot
be reproduced in numpy; :func:`s3vm.data.loaders.load_sdp_instance` draws ours
(``per_class="floor"`` for their count per class).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from s3vm.core.kernels import kernel_matrix
from s3vm.core.settings import Settings
from s3vm.core.supervised import l2svm_no_bias
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.memory import check_dense_memory

#: Peak bytes per entry of the l x l kernel of the labeled points (l of them): the kernel, a
#: fold's training block, K + I/2C scaled by y y', its Cholesky factor and NNLS's copy of it;
#: measured by ``benchmarks/peak_memory.py --runs estimates`` (docs/changelog.md).
SELECT_BYTES = 64

#: name -> (unlabeled penalty factor f in C* = f C l / u, product rows of the mean balance):
#: ``paper`` is their parameters.txt, ``code`` the defaults of their get_parameters.
CONVENTIONS = {"paper": (1.0, False), "code": (0.5, True)}


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
        f C l / u (f = 1 under ``paper``, 0.5 under ``code``).
    accuracy : dict
        kernel -> (best cross-validated accuracy, its smallest C).
    grid : tuple of float
        The penalties tried.
    convention : {"paper", "code"}
        Whose defaults (:data:`CONVENTIONS`).
    seed : int or None
        The seed of the labeled points' order before the folds (None: file order).
    folds : int
        The folds of the cross-validation: those asked for, or fewer when a class has fewer
        labeled points than that.
    curves : dict
        kernel -> the cross-validated accuracy at each C of the grid.
    """

    kernel: str
    sigma: float
    C: float
    C_star: float
    accuracy: dict = field(default_factory=dict)
    grid: tuple = ()
    convention: str = "paper"
    seed: Optional[int] = 0
    folds: int = 10
    curves: dict = field(default_factory=dict)

    @property
    def products(self) -> bool:
        """Whether the convention has the mean balance's product rows (bb-sdp's
        ``mean_products``)."""
        return CONVENTIONS[self.convention][1]

    def options(self) -> dict:
        """The ``bb-sdp`` options of the convention (``{"mean_products": True}`` for code)."""
        return {"mean_products": True} if self.products else {}

    def edge_note(self) -> "str | None":
        """A sentence when the chosen C is the smallest or largest of the grid (the best C
        may lie beyond it, as on unscaled features), or when every C of the grid scores the
        same (the labeled points do not tell them apart); else None."""
        if not self.grid or self.C not in (self.grid[0], self.grid[-1]):
            return None
        curve = self.curves.get(self.kernel)
        if curve is not None and min(curve) == max(curve):
            return (f"every C of the grid ({self.grid[0]:.6g} to {self.grid[-1]:.6g}) has the "
                    f"same cross-validated accuracy ({curve[0]:.4f}) with the {self.kernel} "
                    f"kernel: C = {self.C:.6g} is the smallest, not a choice the labeled "
                    "points made")
        side, beyond = (("smallest", "below") if self.C == self.grid[0] else
                        ("largest", "above"))
        return (f"C = {self.C:.6g} is the {side} value of the grid ({self.grid[0]:.6g} to "
                f"{self.grid[-1]:.6g}): the best C may lie {beyond} it; scale the features "
                "(--scale standard) or check the choice")

    def settings(self) -> dict:
        """The settings of SDP-S3VM's problem: these and no bias, the mean balance."""
        return {"kernel": self.kernel, "sigma": self.sigma, "C": self.C, "C_star": self.C_star,
                "bias": False, "balance": "mean"}

    def flags(self) -> str:
        """The same as command-line flags."""
        text = (f"--kernel {self.kernel} --sigma {self.sigma:.17g} --C {self.C:.17g} "
                f"--C-star {self.C_star:.17g} --no-bias --balance mean")
        return text + (" --mean-products" if self.products else "")


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


def cross_validated_accuracy(K: np.ndarray, y: np.ndarray, C: float, folds: list) -> float:
    """The mean over folds of the accuracy of sign(K_test,train beta) (0 counts as wrong)."""
    total = 0.0
    for train, test in folds:
        beta = l2svm_no_bias(K[np.ix_(train, train)], y[train], C)
        pred = np.sign(K[np.ix_(test, train)] @ beta)
        total += float(np.mean(pred == y[test]))
    return total / len(folds)


def labeled_order(instance, seed: Optional[int] = 0) -> np.ndarray:
    """The labeled rows in the order the folds see them: permuted by
    ``numpy.random.default_rng(seed)`` (their code's shuffled order), or file order for None."""
    lab = np.asarray(instance.labeled)
    if seed is None:
        return lab
    return lab[np.random.default_rng(seed).permutation(lab.size)]


def select_parameters(instance, folds: int = 10, cmin: float = 0.01, cmax: float = 100.0,
                      steps: int = 20, kernels: tuple = ("linear", "rbf"),
                      seed: Optional[int] = 0, convention: str = "paper") -> Selection:
    """SDP-S3VM's choice of kernel and C for ``instance`` (module docstring), from its labeled
    points only (their use_everything_for_cross_validation = false).

    Parameters
    ----------
    seed : int or None
        The labeled points are shuffled with it before the folds, as their code's folds see
        them (default 0); None keeps the file's order.
    convention : {"paper", "code"}
        C* = C l / u (``paper``, their parameters.txt) or 0.5 C l / u with the product rows
        (``code``, their code's defaults); see :data:`CONVENTIONS`.

    With fewer labeled points of a class than ``folds``, as many folds as that class has
    points (each fold then tests a point of each class and trains on both); the
    :class:`Selection` records the number used.

    Raises
    ------
    InputError
        Fewer labeled points of a class than folds would leave a fold without it: at least two
        labeled points per class are needed, and folds >= 2; an unknown convention; a seed
        that is not an integer >= 0.
    """
    if folds < 2:
        raise InputError(f"folds must be at least 2, got {folds}")
    if convention not in CONVENTIONS:
        raise InputError(f"convention must be one of {', '.join(CONVENTIONS)}, "
                         f"got {convention!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise InputError(f"seed must be an integer >= 0, got {seed!r}")
    lab = labeled_order(instance, seed)
    yL = instance.label[lab].astype(float)
    smallest = int(min(np.sum(yL > 0), np.sum(yL < 0)))
    if smallest < 2:
        raise InputError("parameter selection needs at least two labeled points of each class "
                         f"(the smaller class has {smallest})")
    # A fold without a point of a class trained or tested on nothing of it (an accuracy of
    # NaN, and no C chosen): no more folds than the smaller class has points.
    folds = min(int(folds), smallest)
    check_dense_memory(lab.size, SELECT_BYTES, "select",
                       "select on a sample of the labeled rows (set the label of the others to "
                       "0), which SDP-S3VM's rule needs no more of", unit="labeled points")
    X = np.asarray(instance.X, dtype=float)
    p = X.shape[1]
    sigma = math.sqrt(p / 2.0)
    grid = penalty_grid(cmin, cmax, steps)
    split = stratified_folds(yL, folds)
    accuracy, curves = {}, {}
    for kind in kernels:
        K = kernel_matrix(X[lab], None, kind, sigma)
        best, best_c = -1.0, None
        curve = []
        for c in grid:
            acc = cross_validated_accuracy(K, yL, c, split)
            curve.append(acc)
            if acc > best:  # strict: the smallest C of the best accuracy
                best, best_c = acc, c
        accuracy[kind], curves[kind] = (best, best_c), tuple(curve)
    kind = "rbf" if "rbf" in accuracy else kernels[0]
    if "linear" in accuracy and "rbf" in accuracy and accuracy["linear"][0] > accuracy["rbf"][0]:
        kind = "linear"
    C = float(accuracy[kind][1])
    u = instance.u
    factor = CONVENTIONS[convention][0]
    C_star = factor * C * lab.size / u if u else C
    return Selection(kind, sigma, C, C_star, accuracy, grid, convention,
                     None if seed is None else int(seed), folds, curves)


def sdp_s3vm_settings(instance, base=None, **kwargs):
    """The :class:`~s3vm.core.settings.Settings` of SDP-S3VM's problem for ``instance``: the
    selected kernel, sigma, C and C* = C l / u, no bias, the mean balance (other fields from
    ``base``)."""

    chosen = select_parameters(instance, **kwargs).settings()
    return (base or Settings()).updated(**chosen) if base is not None else Settings(**chosen)


__all__ = ["CONVENTIONS", "Selection", "labeled_order", "penalty_grid", "stratified_folds",
           "cross_validated_accuracy", "select_parameters", "sdp_s3vm_settings"]
