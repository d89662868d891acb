"""Seeded synthetic problems and the stratified choice of labeled points.

Every function here is deterministic given its ``seed`` (``numpy.random.default_rng(seed)``) and
returns an :class:`~s3vm.data.instance.Instance` with the hidden class of every point in ``truth``,
``label`` = ``truth`` on the labeled points and 0 elsewhere. Each class has at least one labeled
point.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from s3vm.data.instance import Instance
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.memory import check_array_memory

__all__ = ["two_moons", "gaussian_blobs", "noisy_linear", "select_labeled"]


#: Peak bytes per drawn value: the draws, their shuffled copy, the Instance's checked copy and
#: the temporaries of scaling (noisy_linear holds about six n x p arrays at once).
DRAWN_BYTES = 48


def _check_size(generator: str, rows: int, columns: int) -> None:
    """Refuse a draw that would not fit in memory before drawing it."""
    check_array_memory(rows, columns, DRAWN_BYTES, generator,
                       "draw fewer points or features")


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _check_float(value, name: str, low: float = 0.0, low_open: bool = False,
                 high: Optional[float] = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < low or (low_open and value == low) or \
            (high is not None and value > high):
        interval = f"{'(' if low_open else '['}{low:g}, {'inf)' if high is None else f'{high:g}]'}"
        raise InputError(f"{name} must lie in {interval}, got {value}")
    return value


def _class_counts_from_total(sizes: np.ndarray, total: int) -> np.ndarray:
    """Split ``total`` labeled points over classes proportionally (largest remainder), >= 1 each."""
    share = total * sizes / sizes.sum()
    k = np.floor(share).astype(int)
    rest = total - int(k.sum())
    # largest remainders first; ties go to the earlier class (+1 before -1)
    order = np.argsort(-(share - k), kind="stable")
    k[order[:rest]] += 1
    # every class needs one labeled point: take it from the class with most labeled points
    for c in np.flatnonzero(k == 0):
        donor = int(np.argmax(k))
        k[donor] -= 1
        k[c] += 1
    return k


def random_generator(seed) -> np.random.Generator:
    """``seed`` itself when it is a Generator, else ``numpy.random.default_rng(seed)``; a seed
    that numpy refuses (a negative integer, text) is an InputError, not numpy's ValueError."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (bool, np.bool_)) or (isinstance(seed, (int, np.integer)) and seed < 0):
        raise InputError(f"seed must be an integer >= 0, got {seed!r}")
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise InputError(f"seed must be an integer >= 0, got {seed!r}") from None


def select_labeled(truth, labeled_fraction: Optional[float] = None,
                   n_labeled: Optional[int] = None, n_labeled_per_class: Optional[int] = None,
                   seed=0, rounding: str = "half-up") -> np.ndarray:
    """Choose a seeded, stratified random set of labeled points.

    Exactly one of the three size arguments may be given; with none, every point is labeled.

    Parameters
    ----------
    truth : array_like of shape (n,)
        The class (+1/-1) of every point; both classes must occur.
    labeled_fraction : float in (0, 1], optional
        Per class, ``max(1, floor(fraction * n_c + 0.5))`` points of the n_c points of that class
        are labeled (the fraction is taken per class, so the class ratio is kept); with
        ``rounding="floor"``, ``max(1, floor(fraction * n_c))`` (SDP-S3VM's count).
    n_labeled : int, optional
        Total number of labeled points (>= 2), split over the classes in proportion to their
        sizes by the largest-remainder rule, at least one per class.
    n_labeled_per_class : int, optional
        The same number (>= 1) of labeled points in each class.
    seed : int or numpy.random.Generator
        Seed of ``numpy.random.default_rng``. Class +1 is drawn first, then class -1.
    rounding : {"half-up", "floor"}
        How ``labeled_fraction`` times a class size becomes a count.

    Returns
    -------
    label : ndarray of shape (n,), int8
        ``truth`` on the chosen points, 0 elsewhere.

    Raises
    ------
    InputError
        On more than one size argument, a size out of range, or a class that is missing.
    """
    truth = np.asarray(truth)
    if truth.ndim != 1 or not np.isin(truth, (-1, 1)).all():
        raise InputError("truth must be a vector of +1/-1")
    given = [a for a in (labeled_fraction, n_labeled, n_labeled_per_class) if a is not None]
    if len(given) > 1:
        raise InputError("give at most one of labeled_fraction, n_labeled, n_labeled_per_class")
    classes = (1, -1)
    members = [np.flatnonzero(truth == c) for c in classes]
    sizes = np.array([m.size for m in members])
    if (sizes == 0).any():
        missing = "+1" if sizes[0] == 0 else "-1"
        raise InputError(f"class {missing} has no point: both classes are needed")
    if not given:
        return truth.astype(np.int8)
    if labeled_fraction is not None:
        f = _check_float(labeled_fraction, "labeled_fraction", 0.0, low_open=True, high=1.0)
        if rounding not in ("half-up", "floor"):
            raise InputError(f"rounding must be half-up or floor, got {rounding!r}")
        k = np.maximum(1, np.floor(f * sizes + (0.5 if rounding == "half-up" else 0.0))
                       .astype(int))
    elif n_labeled is not None:
        total = _check_int(n_labeled, "n_labeled", 2)
        if total > truth.size:
            raise InputError(f"n_labeled = {total} exceeds the number of points ({truth.size})")
        k = _class_counts_from_total(sizes, total)
    else:
        per = _check_int(n_labeled_per_class, "n_labeled_per_class", 1)
        if per > sizes.min():
            raise InputError(f"n_labeled_per_class = {per} exceeds the size of the smaller class "
                             f"({sizes.min()})")
        k = np.array([per, per])
    rng = random_generator(seed)
    label = np.zeros(truth.size, dtype=np.int8)
    for c, m, kc in zip(classes, members, k):
        label[rng.choice(m, size=int(kc), replace=False)] = c
    return label


def two_moons(n_per_class_labeled: int = 1, n_unlabeled_per_class: int = 50,
              noise: float = 0.1, seed=0) -> Instance:
    """Two interleaved half circles, the toy problem of Chapelle, Sindhwani & Keerthi.

    The +1 moon is the upper half of the unit circle centred at (0, 0); the -1 moon is the lower
    half of the unit circle centred at (1, 0.5) (the layout of scikit-learn's ``make_moons``).
    Angles are drawn uniformly on [0, pi] and isotropic Gaussian noise of standard deviation
    ``noise`` is added to both coordinates. In each moon ``n_per_class_labeled`` points, chosen at
    random, keep their label. Rows are in a random order (classes interleaved).

    Parameters
    ----------
    n_per_class_labeled : int, default 1
        Labeled points per moon (>= 1).
    n_unlabeled_per_class : int, default 50
        Unlabeled points per moon (>= 0).
    noise : float, default 0.1
        Standard deviation of the Gaussian noise (>= 0).
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    Instance
        ``2 * (n_per_class_labeled + n_unlabeled_per_class)`` points in R^2, features ``x1, x2``,
        ``truth`` for all points.
    """
    nl = _check_int(n_per_class_labeled, "n_per_class_labeled", 1)
    nu = _check_int(n_unlabeled_per_class, "n_unlabeled_per_class", 0)
    noise = _check_float(noise, "noise")
    _check_size("two_moons", 2 * (nl + nu), 4)  # angles, two moons and the noise: 4 columns
    rng = random_generator(seed)
    m = nl + nu
    t = rng.uniform(0.0, np.pi, size=(2, m))
    upper = np.column_stack([np.cos(t[0]), np.sin(t[0])])
    lower = np.column_stack([1.0 - np.cos(t[1]), 0.5 - np.sin(t[1])])
    X = np.vstack([upper, lower]) + noise * rng.standard_normal((2 * m, 2))
    truth = np.repeat(np.array([1, -1], dtype=np.int8), m)
    perm = rng.permutation(2 * m)
    X, truth = X[perm], truth[perm]
    label = select_labeled(truth, n_labeled_per_class=nl, seed=rng)
    return Instance(X, label, truth, feature_names=("x1", "x2"),
                    name=f"two_moons_l{nl}_u{nu}_seed{seed if isinstance(seed, int) else 'rng'}",
                    meta=_meta("two_moons", seed))


def gaussian_blobs(n: int = 100, p: int = 2, separation: float = 3.0,
                   labeled_fraction: Optional[float] = None,
                   n_labeled_per_class: Optional[int] = None, seed=0) -> Instance:
    """Two spherical Gaussian classes, linearly separable for a large ``separation``.

    Class +1 is N(+separation/2 e_1, I_p) and class -1 is N(-separation/2 e_1, I_p), so the
    distance between the means is ``separation`` (in units of the standard deviation) and the
    Bayes rule is the sign of the first coordinate. Class +1 has ceil(n/2) points, class -1
    floor(n/2). Rows are in a random order.

    Parameters
    ----------
    n : int, default 100
        Number of points (>= 2).
    p : int, default 2
        Dimension (>= 1).
    separation : float, default 3.0
        Distance between the two means (>= 0).
    labeled_fraction : float in (0, 1], optional
        Stratified fraction of labeled points (see :func:`select_labeled`).
    n_labeled_per_class : int, optional
        Labeled points per class. Give at most one of the two; with neither, one point per class
        is labeled.
    seed : int or numpy.random.Generator, default 0

    Returns
    -------
    Instance
        n points in R^p, features ``x1..xp``, ``truth`` for all points.
    """
    n = _check_int(n, "n", 2)
    p = _check_int(p, "p", 1)
    separation = _check_float(separation, "separation")
    if labeled_fraction is not None and n_labeled_per_class is not None:
        raise InputError("give labeled_fraction or n_labeled_per_class, not both")
    if labeled_fraction is None and n_labeled_per_class is None:
        n_labeled_per_class = 1
    _check_size("gaussian_blobs", n, p)
    rng = random_generator(seed)
    n_pos = (n + 1) // 2
    truth = np.where(np.arange(n) < n_pos, 1, -1).astype(np.int8)
    X = rng.standard_normal((n, p))
    X[:, 0] += 0.5 * separation * truth
    perm = rng.permutation(n)
    X, truth = X[perm], truth[perm]
    label = select_labeled(truth, labeled_fraction=labeled_fraction,
                           n_labeled_per_class=n_labeled_per_class, seed=rng)
    return Instance(X, label, truth, feature_names=tuple(f"x{j + 1}" for j in range(p)),
                    name=f"gaussian_blobs_n{n}_p{p}_seed{seed if isinstance(seed, int) else 'rng'}",
                    meta=_meta("gaussian_blobs", seed))


def noisy_linear(per_class: int = 2, u: int = 10, p: int = 3, noise: float = 1.0,
                 seed: Optional[int] = 0) -> Instance:
    """Two overlapping classes split by a noisy random hyperplane.

    Features have unequal scales and offsets (so that methods sensitive to scaling differ), the
    class is the sign of a random linear function plus Gaussian noise of standard deviation
    ``noise``, and rows are shuffled with the labeled ones among them.

    Parameters
    ----------
    per_class : int
        Labeled points of each class (>= 1).
    u : int
        Unlabeled points (>= 1).
    p : int
        Features (>= 1).
    noise : float
        Noise added to the linear score before taking its sign (>= 0).
    seed : int, optional

    Returns
    -------
    Instance
    """
    per_class = _check_int(per_class, "per_class", 1)
    u = _check_int(u, "u", 1)
    p = _check_int(p, "p", 1)
    noise = _check_float(noise, "noise")
    _check_size("noisy_linear", 2 * (per_class + u) + 40, p)
    rng = random_generator(seed)
    while True:  # redraw until both classes have enough points to choose from
        n = 2 * (per_class + u) + 40
        X = rng.standard_normal((n, p)) * rng.uniform(0.5, 3.0, p) + rng.uniform(-2, 2, p)
        score = (X - X.mean(0)) @ rng.standard_normal(p) + noise * rng.standard_normal(n)
        truth = np.where(score >= 0, 1, -1)
        pos, neg = np.flatnonzero(truth == 1), np.flatnonzero(truth == -1)
        if pos.size > per_class + u and neg.size > per_class + u:
            break
    lab = np.concatenate([pos[:per_class], neg[:per_class]])
    rest = rng.permutation(np.setdiff1d(np.arange(n), lab))[:u]
    rows = rng.permutation(np.concatenate([lab, rest]))
    label = np.where(np.isin(rows, lab), truth[rows], 0)
    return Instance(X[rows], label, truth[rows], name=f"noisy_linear_seed{seed}",
                    meta=_meta("noisy_linear", seed))


def _meta(generator: str, seed) -> dict:
    """What an instance records of its making: the generator and its seed (one seed draws both
    the points and the labeled subset; None for a Generator object)."""
    return {"generator": generator,
            "seed": int(seed) if isinstance(seed, (int, np.integer)) else None}
