"""Constrained spectral transduction (De Bie and Cristianini 2006, section 7.2.2; 2003, section
4.1): the subspace V of ``sdp-subspace`` and ``sdp-lowrank`` (docs/formulations.md#spectral).

With an affinity matrix A (its own rbf, apart from the SVM kernel: a linear kernel's row sums can
be negative, which breaks the degree matrix D = diag(A 1)), the label-constraint matrix

    L = [[1_{l+},  1_{l+}, 0],
         [1_{l-}, -1_{l-}, 0],
         [1_u,     0,      I_u]]        (n x (2 + u), rows in the instance's order)

parametrises the vectors v = L z that give every labeled positive one value and every labeled
negative another. The constrained problem (7.6) is

    L'(D - A) L z = lambda L'D L z,

and V stacks v_i = L z_i for the d smallest eigenvalues other than the trivial one (the constant
vector 1 = L e_0, eigenvalue 0), each with the constant-column rule: the first entry of z_i (the
coefficient of the constant column) is set to 0 before forming v_i. Then every column of V is
+c on the labeled positives and -c on the labeled negatives, so the columns of Gamma = V M V' of
opposite labeled points are opposite.

With the groups of De Bie and Cristianini (2006, section 7.3.1; signed ``group`` ids,
:class:`s3vm.data.instance.LabelMap`), L = [1, E] where E holds s_i at (i, r_i): column 1 is the
labeled class (and the unlabeled rows a group ties to it), then one column per free group. Without
groups E = [[y_L, 0], [0, I_u]] and L is the L of the chapter's (7.6). Each column of V is then s_i
times one value on every group, so Gamma = V M V' meets the groups whatever M is.

Two paths: ``dense`` (the rbf affinity on all points, ``scipy.linalg.eigh`` on L'(D - A)L,
L'DL) for small n, and ``sparse`` (a symmetric k-nearest-neighbour rbf graph in ``scipy.sparse``,
Lanczos ``eigsh``): no dense n x n matrix is ever formed on that path. The sparse path solves
(7.6) on the complement of the constant, where it is a standard symmetric problem needing only
sparse products (:func:`_sparse_nontrivial`). Both graphs keep the rbf's self-similarity 1 on the
diagonal (the chapter's (7.6) has diag(K 1) - K); the sparse path with ``neighbors = n - 1`` is
the dense graph.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from s3vm.core.kernels import kernel_matrix
from s3vm.data.instance import label_map
from s3vm.solvers.errors import InputError

METHODS = ("auto", "dense", "sparse")
RULES = ("nips", "book")   # the spectral problem: 2003 section 4.1, or 2006 (7.6)
DENSE_GRAPH_MAX_N = 1000        # "auto" takes the dense path up to this many points
DEFAULT_NEIGHBORS = 10    # k of the sparse k-nearest-neighbour graph


class SpectralResult(NamedTuple):
    """The outcome of :func:`constrained_spectral`.

    Attributes
    ----------
    V : ndarray (n, d)
        The subspace basis, v_i = L z_i with z_i[0] = 0, each column scaled to norm sqrt(n) and
        signed positive on the labeled positives.
    Z : ndarray (2 + m, d)
        The coefficients z_i of V in the columns of L (first row 0), scaled as V.
    values : ndarray (d,)
        The generalized eigenvalues lambda_i, ascending.
    eigenvectors : ndarray (2 + m, d)
        The generalized eigenvectors before the constant-column rule (L'D L-orthonormal).
    L : scipy.sparse.csr_matrix (n, 2 + m)
        The label-constraint matrix (m = u without groups, else the number of free groups).
    """

    V: np.ndarray
    Z: np.ndarray
    values: np.ndarray
    eigenvectors: np.ndarray
    L: sp.csr_matrix


def label_constraint_matrix(label, group=None) -> sp.csr_matrix:
    """The label-constraint matrix L (n x (2 + m)) of De Bie and Cristianini (2006), (7.6), rows
    in the order of ``label``.

    Parameters
    ----------
    label : array_like (n,)
        +1/-1 on labeled rows, 0 on unlabeled rows (labeled and unlabeled rows may interleave).
    group : array_like (n,), optional
        Signed group ids (:class:`s3vm.data.instance.Instance`): equivalence and inequivalence
        constraints (De Bie and Cristianini 2006, section 7.3.1).

    Returns
    -------
    scipy.sparse.csr_matrix
        Column 0 is all ones; column 1 + k is the signed indicator of representative k of
        :func:`s3vm.data.instance.label_map` (s_i on its rows): column 1 is the label on the
        labeled rows (and on the unlabeled rows tied to them by a group), column 2 + k the k-th
        free group. Without groups m = u and column 2 + k is the indicator of the k-th unlabeled
        row (in row order): the chapter's L.

    Raises
    ------
    InputError
        When a class has no labeled point (L would lose full column rank).
    """
    label = np.asarray(label)
    n = label.shape[0]
    if not (np.any(label == 1) and np.any(label == -1)):
        raise InputError("the spectral subspace needs a labeled point of each class")
    E = label_map(label, group).matrix()
    return sp.hstack([sp.csr_matrix(np.ones((n, 1))), E], format="csr")


def _neighbours(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices of the k nearest other points of every row (self excluded)."""
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k).fit(X)
    dist, ind = nn.kneighbors()  # no argument: each point's own row is left out
    return dist, ind


def _sigma_from(nearest: np.ndarray) -> float:
    """Mean nearest-neighbour distance, falling back to the positive ones (duplicate points)."""
    sigma = float(np.mean(nearest))
    if sigma <= 0:
        positive = nearest[nearest > 0]
        sigma = float(np.mean(positive)) if positive.size else 1.0
    return sigma


def nearest_neighbour_sigma(X: np.ndarray) -> float:
    """The rbf width for the affinity: mean distance of a point to its nearest neighbour (the
    width rule of De Bie and Cristianini 2006, section 7.4.1; 2003, section 5).

    Parameters
    ----------
    X : ndarray (n, p)

    Returns
    -------
    float
        > 0 (duplicate points fall back to the mean of the positive distances, then to 1).
    """
    X = np.asarray(X, dtype=float)
    if X.shape[0] < 2:
        return 1.0
    dist, _ = _neighbours(X, 1)
    return _sigma_from(dist[:, 0])


def rbf_affinity(X: np.ndarray, sigma: float) -> np.ndarray:
    """Dense rbf affinity exp(-|x_i - x_j|^2 / (2 sigma^2)) on all pairs (diagonal 1)."""

    return kernel_matrix(np.asarray(X, dtype=float), None, "rbf", sigma)


def knn_affinity(X: np.ndarray, sigma: Optional[float] = None,
                 neighbors: int = DEFAULT_NEIGHBORS) -> tuple[sp.csr_matrix, float]:
    """Sparse symmetric k-nearest-neighbour rbf graph (never a dense n x n matrix).

    An edge joins i and j when either is among the other's ``neighbors`` nearest points; its
    weight is the rbf of their distance. The diagonal holds the rbf's self-similarity 1.

    Parameters
    ----------
    X : ndarray (n, p)
    sigma : float, optional
        rbf width; default the mean nearest-neighbour distance (from the same neighbour search).
    neighbors : int
        k, capped at n - 1.

    Returns
    -------
    (scipy.sparse.csr_matrix (n, n), float)
        The affinity and the sigma used.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    k = int(min(max(neighbors, 1), n - 1))
    dist, ind = _neighbours(X, k)
    if sigma is None:
        sigma = _sigma_from(dist[:, 0])
    w = np.exp(-(dist.ravel() ** 2) / (2.0 * sigma * sigma))
    A = sp.csr_matrix((w, (np.repeat(np.arange(n), k), ind.ravel())), shape=(n, n))
    A = A.maximum(A.T) + sp.identity(n, format="csr")
    return A.tocsr(), float(sigma)


def _remove_trivial(Z: np.ndarray, P, Q, const: np.ndarray, d: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """From d + 1 of the smallest eigenvectors, the d eigenpairs other than the constant one.

    ``const`` holds the coordinates of the constant vector 1 (an exact eigenvector, eigenvalue
    0). Its Q-component is taken out of all d + 1 vectors, and a Rayleigh-Ritz step on the
    d-dimensional span left gives d eigenpairs in ascending order. This also holds when the
    eigenvalue 0 is multiple (a disconnected graph), where a solver returns an arbitrary basis of
    the null space.
    """
    Qc = Q @ const
    Z = Z - np.outer(const, (Qc @ Z) / (const @ Qc))
    S = Z.T @ (Q @ Z)
    s, U = np.linalg.eigh((S + S.T) / 2.0)
    U, s = U[:, -d:], s[-d:]                       # the d directions that survived
    if s[0] <= 1e-12 * max(1.0, s[-1]):
        raise InputError("the spectral subspace is degenerate: ask for a smaller dim")
    Y = Z @ (U / np.sqrt(s))                       # Q-orthonormal basis of the span
    H = Y.T @ (P @ Y)
    lam, W = np.linalg.eigh((H + H.T) / 2.0)
    return lam, Y @ W


def _sparse_nontrivial(A, E: sp.csr_matrix, deg: np.ndarray, d: int, seed: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The d smallest nontrivial eigenpairs of (7.6) with sparse products only: (values, Z), Z
    ((1 + M) x d) in the coordinates of L = [1, E].

    E has one entry +-1 per row, so E'DE = diag(q) is diagonal. The nontrivial eigenvectors are
    D-orthogonal to the constant, so v = E z - (e'z / s) 1 with e = E'D1, s = 1'D1, and (7.6)
    becomes E'(D - A)E z = lambda (diag(q) - e e'/s) z (since (D - A)1 = 0). With
    diag(q) - e e'/s = R'R, R = (I - c w w') q^(1/2), w = q^(-1/2) e / sqrt(s), this is the
    standard symmetric problem of R^-T E'(D - A)E R^-1, solved by Lanczos (``eigsh``) with O(M)
    work per product beyond the sparse E'AE. A shift-invert solve would factor the matrix, and
    k-nearest-neighbour graphs of high-dimensional data fill an LU factor almost completely.
    The right-hand side is definite because the labeled class holds both signs, so w'w < 1.
    """
    from scipy.sparse.linalg import LinearOperator, eigsh

    M = E.shape[1]
    q = np.asarray(abs(E).T @ deg).ravel()
    e = np.asarray(E.T @ deg).ravel()
    AE = (E.T @ sp.csr_matrix(A) @ E).tocsr()
    AE = (AE + AE.T) / 2.0
    w = e / np.sqrt(q) / np.sqrt(deg.sum())
    ww = float(w @ w)
    c = (1.0 - np.sqrt(1.0 - ww)) / ww if ww > 0 else 0.0
    c_inv = c / (1.0 - c * ww)                    # (I - c ww')^-1 = I + c_inv ww'
    root = np.sqrt(q)

    # Dot products as sums, not BLAS calls: the operator is applied hundreds of times to one
    # vector, and on a busy machine a threaded BLAS call costs far more than its arithmetic.
    def matvec(y):                                 # (I - S) y with S = R^-T E'(D - A)E R^-1
        y = np.asarray(y, dtype=float).reshape(M)
        z = (y + (c_inv * (w * y).sum()) * w) / root          # R^-1 y
        x = (q * z - AE @ z) / root
        return y - x - (c_inv * (w * x).sum()) * w

    # The largest eigenvalues 1 - lambda of I - S, near 1: eigsh's tolerance is relative to the
    # eigenvalue, so the smallest lambda of S itself (near 0) would take far more iterations.
    shifted = LinearOperator((M, M), matvec=matvec, dtype=float)
    v0 = np.random.default_rng(seed).uniform(0.5, 1.5, M)
    mu, Y = eigsh(shifted, k=d, which="LA", v0=v0)
    order = np.argsort(-mu)
    values = 1.0 - mu[order]
    Y = Y[:, order]
    Z = (Y + c_inv * np.outer(w, w @ Y)) / root[:, None]     # R^-1 Y
    z0 = -(e @ Z) / deg.sum()
    return values, np.vstack([z0, Z])


def isolated_points(A) -> np.ndarray:
    """Rows of the affinity with no positive weight off the diagonal (points linked to no other
    point: an rbf that underflowed, or an outlier far beyond the graph's width)."""
    # Count the positive weights rather than subtract the diagonal from the row sum: an outlier
    # linked by a weight of 1e-27 next to its self-similarity 1 would round to a sum of 0.
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        linked = np.asarray((A > 0).sum(axis=1)).ravel() - (A.diagonal() > 0)
    else:
        A = np.asarray(A, dtype=float)
        linked = np.count_nonzero(A > 0, axis=1) - (np.diag(A) > 0)
    return np.flatnonzero(linked <= 0)


def _check_graph(A) -> np.ndarray:
    """The degrees d = A 1, after refusing isolated points: an isolated point makes the graph
    disconnected, its indicator is an eigenvector of both rules (eigenvalue 0 of (7.6), 1 of the
    normalised affinity), and V then spends a column on that one point."""
    deg = np.asarray(A.sum(axis=1)).ravel()
    if np.any(deg <= 0):
        raise InputError("the spectral affinity has a row with no positive weight")
    alone = isolated_points(A)
    if alone.size:
        rows = ", ".join(str(int(i)) for i in alone[:5]) + (", ..." if alone.size > 5 else "")
        raise InputError(f"the spectral graph has {alone.size} isolated point(s) (no affinity to "
                         f"any other point; rows {rows}): widen the graph (a larger sigma or "
                         "more neighbours) or remove them")
    return deg


def _nips_subspace(A, label, d: int, deg: np.ndarray, method: str, seed: int, group
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rule of De Bie and Cristianini (2003), section 4.1: (values, H, Z, V).

    max v'D^-1/2 A D^-1/2 v s.t. v'v = 1, v in range(L) (their Proposition 4.1: the dominant
    eigenvectors of Lo'D^-1/2 A D^-1/2 Lo h = lambda h with Lo an orthonormal basis of range(L)
    and v = Lo h), the d largest eigenvalues, the first one included, each eigenvector
    "centred" (a constant added so that the labeled positive entries equal minus the negative
    ones). With L = [1, E] (E: one signed entry per row, :func:`s3vm.data.instance.label_map`), an
    orthonormal basis is Lo = [E diag(q)^-1/2, w/|w|] with q the column sizes of E and
    w = 1 - E diag(q)^-1 E'1 (the constant's part outside range(E)); writing v = c 1 + E z, the
    centring is dropping c, the constant-column rule of (7.6). Without groups, range(Lo) is the
    range of the paper's [e+/sqrt(l+), e-/sqrt(l-), I_u].
    """
    E = label_map(label, group).matrix().tocsc()
    n = E.shape[0]
    q = np.asarray(abs(E).sum(axis=0)).ravel()
    e = np.asarray(E.sum(axis=0)).ravel()
    w = 1.0 - E @ (e / q)
    wn = float(np.linalg.norm(w))
    has_w = wn > 1e-12 * np.sqrt(n)
    root = np.sqrt(q)
    s = 1.0 / np.sqrt(deg)
    width = E.shape[1] + int(has_w)

    def Lo(H):
        out = E @ (H[:E.shape[1]] / root[:, None])
        return out + np.outer(w / wn, H[-1]) if has_w else out

    def LoT(Y):
        top = (E.T @ Y) / root[:, None]
        return np.vstack([top, (w / wn) @ Y]) if has_w else top

    def T(H):
        H = np.asarray(H, dtype=float)
        one = H.ndim == 1
        H = H.reshape(width, -1)
        Y = s[:, None] * Lo(H)
        Y = np.asarray(A @ Y)
        out = LoT(s[:, None] * Y)
        return out.ravel() if one else out

    if method == "dense" or width <= d + 3:
        Tm = T(np.eye(width))
        values, H = np.linalg.eigh((Tm + Tm.T) / 2.0)
    else:
        from scipy.sparse.linalg import LinearOperator, eigsh

        op = LinearOperator((width, width), matvec=T, matmat=T, dtype=float)
        v0 = np.random.default_rng(seed).uniform(0.5, 1.5, width)
        values, H = eigsh(op, k=d, which="LA", v0=v0)
    order = np.argsort(-values)[:d]
    values, H = values[order], H[:, order]
    c = H[-1] / wn if has_w else np.zeros(d)
    Z = H[:E.shape[1]] / root[:, None] - np.outer(e / q, c)
    V = np.asarray(E @ Z)
    sv = np.linalg.svd(V, compute_uv=False)
    if sv[-1] <= 1e-10 * max(sv[0], 1e-300):
        raise InputError("the spectral subspace is degenerate: ask for a smaller dim")
    return values, H, np.vstack([np.zeros((1, d)), Z]), V


def constrained_spectral(A, label, d: int, method: str = "dense", seed: int = 0,
                         group=None, rule: str = "book") -> SpectralResult:
    """Solve the constrained spectral problem for a given affinity and build V with the
    constant-column rule.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix (n, n)
        Symmetric nonnegative affinity with positive row sums.
    label : array_like (n,)
        +1/-1 on labeled rows, 0 on unlabeled rows.
    d : int
        Number of columns, 1 <= d <= m + 1 (the dimension of range(L) less the constant; m = u
        without groups).
    method : {"dense", "sparse"}
        ``dense``: ``scipy.linalg.eigh`` on the (2 + m)-square matrices L'(D - A)L, L'DL.
        ``sparse``: Lanczos (``eigsh``) on an equivalent standard problem with sparse products
        only (:func:`_sparse_nontrivial`); no dense n x n or (2 + m)-square matrix.
    seed : int
        Seed of ``eigsh``'s starting vector.
    group : array_like (n,), optional
        Signed group ids (equivalence and inequivalence constraints), see
        :func:`label_constraint_matrix`.
    rule : {"book", "nips"}
        ``book``: (7.6) of De Bie and Cristianini (2006), the d smallest nontrivial eigenvalues.
        ``nips``: their 2003 paper's section 4.1, the d dominant eigenvectors of the normalised
        affinity D^-1/2 A D^-1/2 restricted to range(L) (:func:`_nips_subspace`); the rule of
        their USPS experiment.

    Returns
    -------
    SpectralResult
        ``values`` ascending for ``book``, descending for ``nips``.

    Raises
    ------
    InputError
        d out of range, a graph with isolated points, or a degenerate subspace.
    """
    L = label_constraint_matrix(label, group)
    n, width = L.shape
    m = width - 2
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise InputError(f"dim must be an integer >= 1 (d < 1 is not allowed), got {d!r}")
    if d > m + 1:
        raise InputError(f"d larger than u + 1: dim = {d}, but the label-constrained subspace "
                         f"has dimension {m + 1}" + ("" if group is None else
                                                     " (1 + the number of free groups)"))
    if rule not in RULES:
        raise InputError(f"unknown spectral rule {rule!r}: choose {', '.join(RULES)}")
    if method not in ("dense", "sparse"):
        raise InputError(f"unknown spectral method {method!r}: choose dense or sparse")
    deg = _check_graph(A)
    if rule == "nips":
        values, eigenvectors, Zc, V = _nips_subspace(A, label, d, deg, method, seed, group)
        return SpectralResult(*_scaled(V, Zc, label, n), values=values,
                              eigenvectors=eigenvectors, L=L)
    if method == "dense" or width <= d + 3:
        # Only the (2 + m)-square projections are dense (m may be tiny while n is large).
        AB = L.T @ (A @ L) if sp.issparse(A) else L.T @ np.asarray(np.asarray(A, float) @ L)
        AB = AB.toarray() if sp.issparse(AB) else np.asarray(AB)
        Q = (L.T @ sp.diags(deg) @ L).toarray()
        P = Q - AB
        P, Q = (P + P.T) / 2.0, (Q + Q.T) / 2.0
        _, Z = scipy.linalg.eigh(P, Q, subset_by_index=[0, d])
        const = np.zeros(width)
        const[0] = 1.0                             # 1 = L e_0
        values, eigenvectors = _remove_trivial(Z, P, Q, const, d)
    else:
        values, eigenvectors = _sparse_nontrivial(A, L[:, 1:], deg, d, seed)
    # The constant-column rule: z0 = 0, i.e. v_i = L z_i - z0 1.
    V = np.asarray(L[:, 1:] @ eigenvectors[1:])
    Zc = eigenvectors.copy()
    Zc[0] = 0.0
    return SpectralResult(*_scaled(V, Zc, label, n), values=values, eigenvectors=eigenvectors,
                          L=L)


def _scaled(V: np.ndarray, Z: np.ndarray, label, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(V, Z) with each column scaled to norm sqrt(n) (entries of order 1, which the SDP solvers
    like) and signed positive on the labeled positives (on its largest entry when that value is
    0)."""
    ip = int(np.flatnonzero(np.asarray(label) == 1)[0])
    norms = np.linalg.norm(V, axis=0)
    biggest = np.abs(V).max(axis=0)
    fallback = V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])]
    ref = np.where(np.abs(V[ip]) > 1e-9 * biggest, V[ip], fallback)
    scale = np.where(ref < 0, -1.0, 1.0) * np.sqrt(n) / norms
    return V * scale, Z * scale


def threshold_columns(V: np.ndarray, quantile: float) -> np.ndarray:
    """Each column of V clipped at the ``quantile`` of its absolute values (De Bie and
    Cristianini 2003, footnote 4: "large entries of the v_i can be thresholded"; the rule is not
    given there). Symmetric, so the labeled rows stay +c / -c and group rows keep their signs."""
    c = np.quantile(np.abs(V), quantile, axis=0)
    return np.clip(V, -c, c)


def spectral_subspace(X: np.ndarray, label, d: int, sigma: Optional[float] = None,
                      method: str = "auto", neighbors: int = DEFAULT_NEIGHBORS,
                      dense_max_n: int = DENSE_GRAPH_MAX_N, seed: int = 0,
                      group=None, rule: str = "book",
                      threshold_quantile: Optional[float] = None) -> np.ndarray:
    """The subspace V (n x d) of constrained spectral transduction (De Bie and Cristianini 2006,
    section 7.2.2).

    Parameters
    ----------
    X : ndarray (n, p)
        Features (rows in the instance's order).
    label : array_like (n,)
        +1/-1 on labeled rows, 0 on unlabeled rows.
    d : int
        Number of columns, 1 <= d <= u + 1.
    sigma : float, optional
        Width of the affinity's rbf; default the mean distance to the nearest neighbour.
    method : {"auto", "dense", "sparse"}
        ``auto``: dense up to ``dense_max_n`` points, sparse beyond.
    neighbors : int
        k of the sparse path's k-nearest-neighbour graph.
    dense_max_n : int
        Threshold of ``auto``.
    seed : int
        Seed of the sparse eigensolver's starting vector.
    group : array_like (n,), optional
        Signed group ids: every column of V is then s_i times one value on the rows of a group
        (and on the labeled class), so Gamma = V M V' meets the groups.
    rule : {"book", "nips"}
        The spectral problem (:func:`constrained_spectral`).
    threshold_quantile : float, optional
        Clip each column at this quantile of its absolute values (:func:`threshold_columns`).

    Returns
    -------
    ndarray (n, d)
        See :class:`SpectralResult`.
    """
    X = np.asarray(X, dtype=float)
    if method not in METHODS:
        raise InputError(f"unknown spectral method {method!r}: choose {', '.join(METHODS)}")
    if method == "auto":
        method = "dense" if X.shape[0] <= dense_max_n else "sparse"
    if method == "dense":
        A = rbf_affinity(X, nearest_neighbour_sigma(X) if sigma is None else sigma)
    else:
        A, _ = knn_affinity(X, sigma, neighbors)
    V = constrained_spectral(A, label, d, method=method, seed=seed, group=group, rule=rule).V
    return V if threshold_quantile is None else threshold_columns(V, threshold_quantile)
