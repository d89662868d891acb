"""A box-constrained convex QP by projected Newton: min 1/2 a'Qa - 1'a over 0 <= a <= upper.

This is the dual of an SVM without bias (value 2 1'a - a'Qa at the maximiser), but nothing here
knows that: the caller forms Q. Used by the small-PSD barrier engine's oracles
(:mod:`s3vm.solvers.engines.psd_barrier`), which solve one such QP per evaluation, warm started from
the last solution.

Method (Bertsekas 1982): at each iteration the epsilon-binding set (points at, or within eps of,
a bound whose gradient pushes outward) moves to its bound, the others take the Newton step of the
reduced problem (a Cholesky factor of Q_FF), then an Armijo search along the projected arc. On
the right active set one step is exact, so a warm start from a nearby problem ends in one to
three iterations, and the result is exact (KKT residual at rounding level) rather than to a
first-order tolerance: the Hessian of the outer function, built from the same factor, needs the
exact active set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.linalg as sla

UNBOUNDED = 1e12   # with no upper bound, an a this large means the QP has no minimiser
ACCEPT = 1e-7      # a KKT residual (relative) that still counts as converged at the iteration cap


@dataclass
class BoxQPResult:
    """The outcome of :func:`box_qp`.

    Attributes
    ----------
    a : ndarray (n,)
        The solution.
    value : float
        2 1'a - a'Qa (+inf when unbounded).
    Qa : ndarray (n,)
        Q a.
    chol : tuple, optional
        ``scipy.linalg.cho_factor`` of Q restricted to ``chol_set`` (the free set of the last
        Newton step), for callers that need Q_FF^-1 again.
    chol_set : ndarray, optional
        The indices of ``chol``.
    iterations : int
    kkt : float
        max |projected gradient| at ``a``.
    unbounded : bool
        True when a grew past :data:`UNBOUNDED` without an upper bound.
    converged : bool
        False when ``max_iterations`` ended the search with a KKT residual above
        :data:`ACCEPT` x max(1, max a): ``a`` and ``value`` are then not the optimum (a singular
        Q with a hard margin can do this); callers must not use them as exact.
    """

    a: np.ndarray
    value: float
    Qa: np.ndarray
    chol: Optional[tuple]
    chol_set: Optional[np.ndarray]
    iterations: int
    kkt: float
    unbounded: bool = False
    converged: bool = True


def _project(a: np.ndarray, upper: Optional[np.ndarray]) -> np.ndarray:
    np.maximum(a, 0.0, out=a)
    if upper is not None:
        np.minimum(a, upper, out=a)
    return a


def _factor(QFF: np.ndarray, scale: float):
    """Cholesky of QFF, else of QFF plus a ridge (1e-10, then 1e-6 of the largest diagonal
    entry), else None. Few attempts: a failing Cholesky of a large singular QFF costs nearly a
    whole factorisation, and a singular QFF is common (a low-rank kernel, a hard margin whose
    labels cannot be separated, where the ridge step then runs a to infinity quickly)."""
    for ridge in (0.0, 1e-10 * max(1.0, scale), 1e-6 * max(1.0, scale)):
        try:
            mat = QFF + ridge * np.eye(QFF.shape[0]) if ridge else QFF
            return sla.cho_factor(mat, lower=True, check_finite=False), ridge
        except np.linalg.LinAlgError:
            continue
    return None, ridge


def box_qp(Q: np.ndarray, upper: Optional[np.ndarray] = None, a0: Optional[np.ndarray] = None,
           tol: float = 1e-11, max_iterations: int = 200) -> BoxQPResult:
    """Minimise 1/2 a'Qa - 1'a over 0 <= a <= upper by projected Newton.

    Parameters
    ----------
    Q : ndarray (n, n)
        Symmetric positive semidefinite.
    upper : ndarray (n,), optional
        Upper bounds (None: a >= 0 only).
    a0 : ndarray (n,), optional
        Warm start (projected onto the box).
    tol : float
        Stop when max |projected gradient| <= tol * max(1, max a).
    max_iterations : int

    Returns
    -------
    BoxQPResult
    """
    n = Q.shape[0]
    a = np.zeros(n) if a0 is None else _project(np.array(a0, dtype=float), upper)
    ub = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float)
    Qa = Q @ a
    f = 0.5 * a @ Qa - a.sum()
    diagQ = np.diag(Q).copy()
    scale = float(diagQ.max(initial=0.0))
    last_chol, last_set = None, None
    kkt = np.inf
    it = 0
    for it in range(1, max_iterations + 1):
        grad = Qa - 1.0
        kkt = float(np.abs(a - np.clip(a - grad, 0.0, ub)).max(initial=0.0))
        if kkt <= tol * max(1.0, float(np.abs(a).max(initial=0.0))):
            break
        eps = min(1e-3, kkt)
        low = (a <= eps) & (grad > 0)
        up = (a >= ub - eps) & (grad < 0)
        bound = low | up
        F = np.flatnonzero(~bound)
        step = np.zeros(n)
        step[low] = -a[low]
        step[up] = ub[up] - a[up]
        B = np.flatnonzero(bound & (step != 0))
        rhs = -grad[F]
        if B.size:
            rhs = rhs - Q[np.ix_(F, B)] @ step[B]
        if F.size:
            chol, ridge = _factor(Q[np.ix_(F, F)], scale)
            if chol is not None:
                step[F] = sla.cho_solve(chol, rhs, check_finite=False)
                if ridge == 0.0:
                    last_chol, last_set = chol, F
            else:
                step[F] = rhs / np.maximum(diagQ[F], 1e-12)
        t = 1.0
        accepted = False
        for _ in range(40):
            a_new = _project(a + t * step, upper)
            delta = a_new - a
            Qa_new = Qa + Q @ delta
            f_new = 0.5 * a_new @ Qa_new - a_new.sum()
            if f_new <= f + 1e-4 * (grad @ delta) + 1e-15 * abs(f):
                accepted = True
                break
            t *= 0.5
        if not accepted:
            # a projected gradient step of length 1 / L (L >= the largest eigenvalue of Q: its
            # Frobenius norm) always decreases f; 1 / max diag(Q) need not
            a_new = _project(a - grad / max(float(np.linalg.norm(Q)), 1e-12), upper)
            Qa_new = Q @ a_new
            f_new = 0.5 * a_new @ Qa_new - a_new.sum()
        a, Qa, f = a_new, Qa_new, f_new
        if upper is None and float(np.abs(a).max(initial=0.0)) > UNBOUNDED:
            return BoxQPResult(a, np.inf, Qa, None, None, it, kkt, unbounded=True)
    Qa = Q @ a   # exactly, not accumulated
    kkt = float(np.abs(a - np.clip(a - (Qa - 1.0), 0.0, ub)).max(initial=0.0))
    converged = kkt <= ACCEPT * max(1.0, float(np.abs(a).max(initial=0.0)))
    return BoxQPResult(a, float(2.0 * a.sum() - a @ Qa), Qa, last_chol, last_set, it, kkt,
                       converged=converged)
