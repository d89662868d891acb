"""k-median clustering in the 1-norm (Fung and Mangasarian 2001; docs/formulations.md#cvs3vm):
assign each point to the nearest center in the 1-norm, move each center to the coordinate-wise
median of its points, stop when no center moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

from s3vm.solvers.errors import InputError


@dataclass
class KMedianResult:
    """Centers (k x p), the cluster of every point, the total 1-norm distance, the iterations."""

    centers: np.ndarray
    assignment: np.ndarray
    cost: float
    iterations: int


def _initial_centers(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    # k-means++ seeding in the 1-norm: spread starting centers, each later one drawn with
    # probability proportional to its 1-norm distance to the nearest chosen center.
    n = X.shape[0]
    chosen = [int(rng.integers(n))]
    nearest = cdist(X, X[chosen], "cityblock")[:, 0]
    for _ in range(1, k):
        total = nearest.sum()
        idx = int(rng.choice(n, p=nearest / total)) if total > 0 else int(rng.integers(n))
        chosen.append(idx)
        nearest = np.minimum(nearest, cdist(X, X[idx:idx + 1], "cityblock")[:, 0])
    return X[chosen].copy()


def _one_run(X: np.ndarray, centers: np.ndarray, max_iter: int) -> KMedianResult:
    k = centers.shape[0]
    for iteration in range(1, max_iter + 1):
        dist = cdist(X, centers, "cityblock")
        assignment = dist.argmin(axis=1)
        new = centers.copy()
        for c in range(k):  # k is small; the medians themselves are vectorised
            members = X[assignment == c]
            if members.shape[0]:
                new[c] = np.median(members, axis=0)
            else:  # an empty cluster restarts at the point farthest from its center
                new[c] = X[dist.min(axis=1).argmax()]
        if np.array_equal(new, centers):  # Fung and Mangasarian's rule: C^{j+1} = C^j
            break
        centers = new
    dist = cdist(X, centers, "cityblock")
    assignment = dist.argmin(axis=1)
    return KMedianResult(centers, assignment, float(dist.min(axis=1).sum()), iteration)


def k_median(X: np.ndarray, k: int, *, n_init: int = 10, max_iter: int = 300,
             seed: int = 0) -> KMedianResult:
    """Cluster the rows of X into k groups minimising the sum of 1-norm distances to centers.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    k : int
        Number of clusters, 1 <= k <= n.
    n_init : int
        Seeded restarts; the run with the lowest total distance is kept.
    max_iter : int
        Cap on the iterations of one run (Fung and Mangasarian's rule, stop when no center
        moves, usually stops much earlier).
    seed : int

    Returns
    -------
    KMedianResult
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= n:
        raise InputError(f"k must be an integer in 1..{n} (the number of points), got {k}")
    if n_init < 1:
        raise InputError(f"n_init must be >= 1, got {n_init}")
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(n_init):
        run = _one_run(X, _initial_centers(X, int(k), rng), max_iter)
        if best is None or run.cost < best.cost:
            best = run
    return best


def points_near_centers(X: np.ndarray, result: KMedianResult, count: int) -> np.ndarray:
    """Indices of ``count`` points, shared out over the clusters, each the nearest to its center.

    Cluster c gets its share in proportion to its size (at least one point where it has any);
    within a cluster the points closest to the center in the 1-norm come first.
    """
    n = X.shape[0]
    count = int(min(max(count, 1), n))
    sizes = np.bincount(result.assignment, minlength=result.centers.shape[0])
    share = np.floor(count * sizes / n).astype(int)
    share = np.where(sizes > 0, np.maximum(share, 1), 0)
    # Hand out what rounding left over to the largest clusters first; take back from the
    # largest shares when the one-per-cluster floor overshot.
    for c in np.argsort(-sizes, kind="stable"):
        if share.sum() >= count:
            break
        share[c] = min(sizes[c], share[c] + count - share.sum())
    while share.sum() > count and share.max() > 1:
        share[share.argmax()] -= 1
    dist = cdist(X, result.centers, "cityblock")
    picked = []
    for c in np.flatnonzero(share):
        members = np.flatnonzero(result.assignment == c)
        order = members[np.argsort(dist[members, c], kind="stable")]
        picked.append(order[: share[c]])
    return np.sort(np.concatenate(picked))
