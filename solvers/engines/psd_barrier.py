"""Minimise a convex function of a small PSD matrix: a primal barrier Newton method with a
certificate (the ``psd-barrier`` solver).

The problem, for a symmetric d x d matrix M (d small: its m = d(d+1)/2 entries are the only
variables, however large the data behind g):

    min  g(M)   s.t.  M PSD,   r_i'M r_i <= 1  (i = 1..p),   <B_k, M> = b_k  (k = 1..q)

g is convex and given by an *oracle* (:class:`Oracle`): at M it returns g(M), a gradient G
(symmetric d x d, so that c + <G, M'> with c = g(M) - <G, M> is an affine minorant of g) and the
Hessian of g in svec coordinates. Nothing here knows what g is; the subspace SDP of
:mod:`s3vm.models.subspace_oracle` is one such g (an SVM dual per evaluation).

Method: Newton steps on the barrier function

    F_mu(M) = g(M) - mu log det M - mu sum_i log(1 - r_i'M r_i)

(the equalities through the KKT system of each step), a fraction-to-the-boundary rule (no
eigenvalue of M and no slack may shrink by more than ``1 / boundary`` in one step: keeps the
iterates near the central path, without which a long step towards a rank-deficient optimum
stalls), an Armijo search on F_mu, and mu multiplied by ``mu_factor`` once the point is centred
(squared Newton decrement <= ``center_tol * mu``, the self-concordant scaling). After each
decrease a predictor step along the central path's tangent is tried. It stops when
mu (p + d) <= tol max(1, |g|) at a centred point: the barrier's duality gap bound.

Certificate (:func:`certificate`): the affine minorant at the final point bounds g from below
everywhere, so its minimum over the feasible set bounds min g from below; by weak duality, any
lam >= 0 and eta with Z = G + sum_i lam_i r_i r_i' + sum_k eta_k B_k PSD give

    dual = c - 1'lam - eta'b  <=  min g.

lam and eta come from that small SDP (one d x d cone, p + q variables) solved by Clarabel, then
are repaired to exact feasibility (lam shifted by lambda_min(Z) / lambda_min(R'R) when Z is not
PSD), so ``dual`` is the value of a feasible dual point. The primal value is g at the returned
M, which is made exactly feasible first. Their difference is the reported gap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

import numpy as np
import scipy.linalg as sla

from s3vm.solvers.runtime.processes import native_threads

__all__ = ["Evaluation", "Oracle", "OracleError", "PSDProblem", "PSDResult", "minimize", "svec",
           "smat", "svec_outer_rows", "certificate"]

BOUNDARY = 0.05     # an eigenvalue of M or a slack may shrink to at most 1/20 in one step
CENTER_TOL = 0.5    # centred when the squared Newton decrement is <= CENTER_TOL * mu


# -- symmetric matrices as vectors -----------------------------------------------------------
# Clarabel's order (upper triangle column by column, off-diagonal entries times sqrt 2), so that
# <A, B> = svec(A)'svec(B) and the certificate's cone is Clarabel's PSDTriangleCone as it is.

def _svec_index(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cols, rows = np.triu_indices(d)[::-1]          # upper triangle, column-major
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    return rows, cols, np.where(rows == cols, 1.0, np.sqrt(2.0))


def svec(A: np.ndarray) -> np.ndarray:
    """The m = d(d+1)/2 vector of a symmetric d x d matrix (Clarabel's triangle order)."""
    r, c, s = _svec_index(A.shape[0])
    return A[r, c] * s


def smat(x: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d x d matrix of an svec vector."""
    r, c, s = _svec_index(d)
    M = np.zeros((d, d))
    M[r, c] = x / s
    M[c, r] = x / s
    return M


def svec_outer_rows(P: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rows svec((p_i r_i' + r_i p_i') / 2) for the rows p_i of P and r_i of R (n x d each), as
    one n x m array (no loop over rows)."""
    r, c, s = _svec_index(P.shape[1])
    return 0.5 * (P[:, r] * R[:, c] + P[:, c] * R[:, r]) * s


# -- the problem -------------------------------------------------------------------------------

@dataclass
class Evaluation:
    """What an oracle returns at M.

    Attributes
    ----------
    value : float
        g(M) (+inf outside g's domain).
    gradient : ndarray (d, d)
        Symmetric G with g(M') >= g(M) + <G, M' - M> for every M'.
    hessian : ndarray (m, m), optional
        The Hessian of g in svec coordinates (None when not asked for).
    state : object
        Whatever the oracle needs to warm start from this point (:meth:`Oracle.accept`).
    info : dict
        Diagnostics the oracle reports (for the final point).
    """

    value: float
    gradient: Optional[np.ndarray] = None
    hessian: Optional[np.ndarray] = None
    state: Any = None
    info: dict = field(default_factory=dict)


class OracleError(ArithmeticError):
    """An oracle could not evaluate g where it should be defined (its inner solve failed);
    :func:`minimize` then stops with status ``error`` and this message, returning nothing it
    could not vouch for."""


class Oracle(Protocol):
    """g: :meth:`evaluate` at M; :meth:`accept` an evaluation as the new warm start."""

    evaluations: int

    def evaluate(self, M: np.ndarray, hessian: bool = True) -> Evaluation: ...

    def accept(self, evaluation: Evaluation) -> None: ...


@dataclass
class PSDProblem:
    """min g(M) s.t. M PSD, r_i'M r_i <= 1, <B_k, M> = b_k (see the module docstring).

    Parameters
    ----------
    oracle : Oracle
    rows : ndarray (p, d)
        The r_i (p >= 1; the set must be bounded: R'R positive definite).
    equalities : list of (ndarray (d, d), float)
        (B_k, b_k); B_k is symmetrised.
    info : dict
        Anything the builder wants to keep with the problem (not read here).
    """

    oracle: Oracle
    rows: np.ndarray
    equalities: list = field(default_factory=list)
    info: dict = field(default_factory=dict)
    result: Optional["PSDResult"] = None     # set by the backend after a solve

    @property
    def dim(self) -> int:
        return int(self.rows.shape[1])


@dataclass
class PSDResult:
    """The outcome of :func:`minimize`.

    Attributes
    ----------
    status : {"optimal", "time_limit", "max_iterations", "line_search_failed", "infeasible"}
        ``infeasible``: no strictly feasible M, or g = +inf at the start.
    M : ndarray (d, d), optional
        Exactly PSD; with no equalities also r_i'M r_i <= 1 exactly (scaled down if needed).
    primal : float
        g(M): attained by the returned M.
    dual : float
        c - 1'lam - eta'b for a feasible (lam, eta): a lower bound on min g (-inf when no
        certificate could be made).
    gap, rel_gap : float
        primal - dual, and that over max(1, |primal|).
    lam : ndarray (p,)
    eta : ndarray (q,)
    iterations : int
        Newton steps (predictor steps included).
    evaluations : int
        Oracle evaluations.
    seconds : float
    message : str
    info : dict
        mu, the final oracle's diagnostics, max r_i'M r_i, min eigenvalue of M, the equality
        residuals, the history of (step, mu, g, decrement^2, step length).
    """

    status: str
    M: Optional[np.ndarray] = None
    primal: float = np.inf
    dual: float = -np.inf
    gap: float = np.inf
    rel_gap: float = np.inf
    lam: Optional[np.ndarray] = None
    eta: Optional[np.ndarray] = None
    iterations: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    message: str = ""
    info: dict = field(default_factory=dict)


# -- pieces --------------------------------------------------------------------------------------

def strictly_feasible_start(rows: np.ndarray, equalities: list, margin: float = 0.5
                            ) -> Optional[np.ndarray]:
    """An M in the interior: c I without equalities, else the phase-1 problem
    max t s.t. M - t tau I PSD, r_i'M r_i + t <= 1, <B_k, M> = b_k (Clarabel). None when the
    interior is empty (an equality unreachable, or reachable only on the boundary)."""
    p, d = rows.shape
    rowsq = (rows * rows).sum(axis=1)
    if not equalities:
        return (margin / rowsq.max()) * np.eye(d)
    import clarabel
    import scipy.sparse as sp

    m = d * (d + 1) // 2
    tau = 1.0 / rowsq.max()
    A_eq = np.array([np.r_[svec(B), 0.0] for B, _ in equalities])
    A_lin = np.c_[svec_outer_rows(rows, rows), np.ones(p)]
    A_psd = -np.c_[np.eye(m), -tau * svec(np.eye(d))[:, None]]
    A = sp.csc_matrix(np.vstack([A_eq, A_lin, A_psd, np.r_[np.zeros(m), 1.0][None, :]]))
    b = np.r_[[rhs for _, rhs in equalities], np.ones(p), np.zeros(m), 1.0]
    cones = [clarabel.ZeroConeT(len(equalities)), clarabel.NonnegativeConeT(p),
             clarabel.PSDTriangleConeT(d), clarabel.NonnegativeConeT(1)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.max_threads = native_threads()
    sol = clarabel.DefaultSolver(sp.csc_matrix((m + 1, m + 1)), np.r_[np.zeros(m), -1.0], A, b,
                                 cones, settings).solve()
    x = np.asarray(sol.x)
    if x.size != m + 1 or not np.isfinite(x[-1]) or x[-1] <= 1e-9:
        return None
    return smat(x[:m], d)


def _clarabel_multipliers(rows: np.ndarray, G: np.ndarray, equalities: list
                          ) -> tuple[np.ndarray, np.ndarray]:
    """min 1'lam + eta'b s.t. G + sum lam_i r_i r_i' + sum eta_k B_k PSD, lam >= 0."""
    import clarabel
    import scipy.sparse as sp

    p, d = rows.shape
    q = len(equalities)
    cols = [svec_outer_rows(rows, rows).T] + [svec(B)[:, None] for B, _ in equalities]
    cost = np.r_[np.ones(p), [rhs for _, rhs in equalities]]
    A = sp.vstack([sp.csc_matrix(-np.hstack(cols)), -sp.eye(p, p + q)]).tocsc()
    b = np.r_[svec(G), np.zeros(p)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.max_threads = native_threads()
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-12
    sol = clarabel.DefaultSolver(sp.csc_matrix((p + q, p + q)), cost, A, b,
                                 [clarabel.PSDTriangleConeT(d), clarabel.NonnegativeConeT(p)],
                                 settings).solve()
    x = np.asarray(sol.x)
    if x.size != p + q or not np.all(np.isfinite(x)):
        raise ArithmeticError("the certificate's SDP failed")
    return np.maximum(x[:p], 0.0), x[p:]


def _repair(rows: np.ndarray, G: np.ndarray, lam: np.ndarray, eta: np.ndarray,
            equalities: list) -> tuple[np.ndarray, float]:
    """(lam', 1'lam' + eta'b) with Z = G + R'diag(lam')R + sum eta_k B_k exactly PSD: lam is
    shifted by delta >= -lambda_min(Z) / lambda_min(R'R) (the shift adds delta R'R to Z). The
    value is +inf when no shift can work (R'R singular and Z not PSD)."""
    lam = np.maximum(lam, 0.0)
    Z = (rows * lam[:, None]).T @ rows + G
    for (B, _), e in zip(equalities, eta):
        Z = Z + e * B
    zmin = float(np.linalg.eigvalsh((Z + Z.T) / 2.0)[0])
    if zmin < 0:
        rmin = float(np.linalg.eigvalsh(rows.T @ rows)[0])
        if rmin <= 0:
            return lam, np.inf
        # the margin covers the rounding of the eigenvalue computations
        lam = lam + (-zmin * (1.0 + 1e-8) / rmin + 1e-15 * (1.0 + float(lam.max(initial=0))))
    return lam, float(lam.sum() + sum(e * rhs for (_, rhs), e in zip(equalities, eta)))


def certificate(rows: np.ndarray, G: np.ndarray, constant: float, equalities: list = (),
                lam: Optional[np.ndarray] = None, eta: Optional[np.ndarray] = None
                ) -> tuple[float, np.ndarray, np.ndarray]:
    """A lower bound on min g over the feasible set from the affine minorant c + <G, M>.

    Parameters
    ----------
    rows, equalities
        As :class:`PSDProblem`.
    G : ndarray (d, d)
        The minorant's slope.
    constant : float
        c.
    lam, eta : ndarray, optional
        Multipliers to start from (say, the barrier's); the better of them and Clarabel's is
        kept.

    Returns
    -------
    (dual, lam, eta)
        dual = c - 1'lam - eta'b with (lam, eta) exactly feasible after the repair.
    """
    equalities = list(equalities)
    best = (-np.inf, np.zeros(rows.shape[0]), np.zeros(len(equalities)))
    candidates = []
    if lam is not None:
        candidates.append((lam, np.zeros(len(equalities)) if eta is None else eta))
    try:
        candidates.append(_clarabel_multipliers(rows, G, equalities))
    except (ArithmeticError, ValueError):
        pass
    for lam_c, eta_c in candidates:
        lam_c, value = _repair(rows, G, np.asarray(lam_c, float), np.asarray(eta_c, float),
                               equalities)
        dual = constant - value
        if dual > best[0]:
            best = (dual, lam_c, np.asarray(eta_c, float))
    return best


def feasible_point(M: np.ndarray, rows: np.ndarray, equalities: list) -> np.ndarray:
    """M made exactly PSD (eigenvalues clipped at 0) and, without equalities, scaled so that
    max r_i'M r_i <= 1 (with equalities a scaling would break them: they are reported)."""
    M = (M + M.T) / 2.0
    w, Q = np.linalg.eigh(M)
    M = (Q * np.maximum(w, 0.0)) @ Q.T
    top = float(np.einsum("ij,jk,ik->i", rows, M, rows).max())
    if top > 1.0 and not equalities:
        M = M / top
    return M


# -- the method ----------------------------------------------------------------------------------

def _log_det_hessian(Minv: np.ndarray, d: int) -> np.ndarray:
    """The Hessian of -log det at M in svec coordinates: svec(M^-1 E M^-1) for each unit E."""
    m = d * (d + 1) // 2
    return np.array([svec(Minv @ smat(e, d) @ Minv) for e in np.eye(m)])


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, b, rcond=None)[0]


def _newton_direction(H: np.ndarray, grad: np.ndarray, Beq: Optional[np.ndarray],
                      residual: Optional[np.ndarray]) -> np.ndarray:
    m = H.shape[0]
    if Beq is not None:
        q = Beq.shape[0]
        KKT = np.block([[H, Beq.T], [Beq, np.zeros((q, q))]])
        # a direct solve: least squares would cut the small singular values of this badly
        # scaled (but nonsingular) matrix and return a direction that is no descent direction
        return _solve(KKT, np.r_[-grad, residual])[:m]
    try:
        return sla.cho_solve(sla.cho_factor(H, lower=True), -grad)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, -grad, rcond=None)[0]


def minimize(problem: PSDProblem, **options) -> PSDResult:
    """Solve a :class:`PSDProblem` (see the module docstring for the method).

    The keywords are those of :func:`_minimize`; an :class:`OracleError` ends the solve with
    status ``error`` and no M.
    """
    t0 = time.perf_counter()
    try:
        return _minimize(problem, **options)
    except OracleError as exc:
        return PSDResult(status="error", message=str(exc),
                         evaluations=problem.oracle.evaluations,
                         seconds=time.perf_counter() - t0)


def _minimize(problem: PSDProblem, tol: float = 1e-8, mu_factor: float = 0.3,
              max_iterations: int = 300, time_limit: Optional[float] = None,
              M0: Optional[np.ndarray] = None, predictor: bool = True,
              certify: bool = True, verbose: bool = False) -> PSDResult:
    """The method behind :func:`minimize`.

    Parameters
    ----------
    problem : PSDProblem
    tol : float
        Target relative gap of the barrier: stop when mu (p + d) <= tol max(1, |g|).
    mu_factor : float
        mu is multiplied by this at each centred point (0 < mu_factor < 1). 0.3 keeps the
        iterates close enough to the central path that a rank-deficient optimum does not stall
        the steps (0.1 did, on one 10^4-point problem).
    max_iterations : int
        Newton steps.
    time_limit : float, optional
        Seconds; the certificate is still made at the point reached.
    M0 : ndarray (d, d), optional
        A strictly feasible start (default :func:`strictly_feasible_start`).
    predictor : bool
        Try a tangent step after each decrease of mu.
    certify : bool
        Make the Clarabel certificate (else only the barrier multipliers, repaired).
    verbose : bool
        A line per Newton step on stdout.

    Returns
    -------
    PSDResult
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    oracle = problem.oracle
    R = np.asarray(problem.rows, dtype=float)
    p, d = R.shape
    eqs = [((np.asarray(B, float) + np.asarray(B, float).T) / 2.0, float(b))
           for B, b in problem.equalities]
    Beq = np.array([svec(B) for B, _ in eqs]) if eqs else None
    beq = np.array([b for _, b in eqs]) if eqs else None
    Rs = svec_outer_rows(R, R)                       # svec(r_i r_i'): slack s = 1 - Rs x

    def finish(status, message=""):
        return PSDResult(status=status, message=message, evaluations=oracle.evaluations,
                         seconds=time.perf_counter() - t0)

    M = strictly_feasible_start(R, eqs) if M0 is None else np.asarray(M0, float)
    if M is None:
        return finish("infeasible", "no M in the interior of the feasible set (an equality "
                      "cannot be met, or only on its boundary)")

    def interior(x):
        Mx = smat(x, d)
        try:
            L = np.linalg.cholesky(Mx)
        except np.linalg.LinAlgError:
            return None
        slack = 1.0 - Rs @ x
        return None if np.any(slack <= 0) else (Mx, L, slack)

    def barrier_value(g, L, slack, mu):
        return g - mu * 2.0 * np.log(np.diag(L)).sum() - mu * np.log(slack).sum()

    def max_step(L, slack, dx):
        """The largest t <= 1 keeping every eigenvalue of M and every slack above BOUNDARY
        times its current value."""
        Li = sla.solve_triangular(L, np.eye(d), lower=True)
        low = float(np.linalg.eigvalsh(Li @ smat(dx, d) @ Li.T)[0])
        t = 1.0 if low >= 0 else min(1.0, (1.0 - BOUNDARY) / -low)
        ds = -(Rs @ dx)
        shrink = ds < 0
        if np.any(shrink):
            t = min(t, float(((1.0 - BOUNDARY) * slack[shrink] / -ds[shrink]).min()))
        return t

    x = svec(M)
    start = interior(x)
    if start is None:
        return finish("infeasible", "the starting M is not strictly feasible")
    M, L, slack = start
    ev = oracle.evaluate(M)
    if not np.isfinite(ev.value):
        return finish("infeasible", "g is +inf at an interior point")
    oracle.accept(ev)
    mu = max(abs(ev.value), 1.0) / (p + d)
    F = barrier_value(ev.value, L, slack, mu)
    steps, predictor_steps = 0, 0
    status, message = "max_iterations", ""
    history = []
    while steps < max_iterations:
        if deadline is not None and time.perf_counter() > deadline:
            status, message = "time_limit", "time limit reached"
            break
        Minv = np.linalg.inv(M)
        Minv = (Minv + Minv.T) / 2.0
        grad = svec(ev.gradient) - mu * svec(Minv) + mu * (Rs.T @ (1.0 / slack))
        H = ev.hessian + mu * _log_det_hessian(Minv, d) + mu * (Rs.T * slack ** -2.0) @ Rs
        H = (H + H.T) / 2.0
        dx = _newton_direction(H, grad, Beq, None if Beq is None else beq - Beq @ x)
        dec2 = float(dx @ H @ dx)
        steps += 1
        t = max_step(L, slack, dx)
        slope = float(grad @ dx)
        accepted = None
        while t >= 1e-10:   # shorter steps only spin in the rounding noise of F
            trial = interior(x + t * dx)
            if trial is not None:
                ev_t = oracle.evaluate(trial[0])
                if np.isfinite(ev_t.value):
                    F_t = barrier_value(ev_t.value, trial[1], trial[2], mu)
                    if F_t <= F + 1e-4 * t * min(slope, 0.0) + 1e-13 * abs(F):
                        accepted = (trial, ev_t, F_t)
                        break
            t *= 0.5
        if accepted is None:
            status, message = "line_search_failed", "no step decreased the barrier function"
            break
        (M, L, slack), ev, F = accepted
        x = x + t * dx
        oracle.accept(ev)
        history.append((steps, mu, ev.value, dec2, t))
        if verbose:
            print(f"step {steps:3d} mu {mu:.2e} g {ev.value:.10g} dec2 {dec2:.2e} t {t:.3g} "
                  f"evaluations {oracle.evaluations} {time.perf_counter() - t0:.1f}s", flush=True)
        if dec2 > CENTER_TOL * mu:
            continue
        if mu * (p + d) <= tol * max(abs(ev.value), 1.0):
            status = "optimal"
            break
        mu_old = mu
        mu = max(mu * mu_factor, 0.5 * tol * max(abs(ev.value), 1.0) / (p + d))
        F = barrier_value(ev.value, L, slack, mu)
        if predictor:
            # The central path's tangent: (Hess g + mu Hess B) x' = grad B, so that
            # x(mu_new) ~ x + (mu_old - mu_new) x' (B the barrier, without mu).
            Minv = np.linalg.inv(M)
            Minv = (Minv + Minv.T) / 2.0
            gB = -svec(Minv) + Rs.T @ (1.0 / slack)
            HB = _log_det_hessian(Minv, d) + (Rs.T * slack ** -2.0) @ Rs
            Hc = ev.hessian + mu_old * HB
            Hc = (Hc + Hc.T) / 2.0
            if Beq is not None:
                q = Beq.shape[0]
                KKT = np.block([[Hc, Beq.T], [Beq, np.zeros((q, q))]])
                dxp = _solve(KKT, np.r_[gB, np.zeros(q)])[:len(x)]
            else:
                dxp = _solve(Hc, gB)
            dxp = dxp * (mu_old - mu)
            tau = max_step(L, slack, dxp)
            trial = interior(x + tau * dxp)
            if trial is not None:
                ev_t = oracle.evaluate(trial[0])
                if np.isfinite(ev_t.value):
                    F_t = barrier_value(ev_t.value, trial[1], trial[2], mu)
                    if F_t < F:
                        oracle.accept(ev_t)
                        x, (M, L, slack), ev, F = x + tau * dxp, trial, ev_t, F_t
                        predictor_steps += 1
    # -- the certificate at the point reached
    M_out = feasible_point(M, R, eqs)
    ev_out = oracle.evaluate(M_out, hessian=False)
    if not np.isfinite(ev_out.value):
        return finish("error", "g is +inf at the returned point")
    oracle.accept(ev_out)   # the oracle's state is then that of the returned point
    G = ev_out.gradient
    constant = ev_out.value - float(np.sum(G * M_out))
    lam_b = mu / slack                                     # the barrier's multipliers
    eta_b = np.zeros(len(eqs))
    if eqs:
        # the equality multipliers from stationarity G - mu M^-1 + R'diag(lam)R + sum eta B = 0
        Z = G - mu * np.linalg.inv(M) + (R * lam_b[:, None]).T @ R
        eta_b = -np.linalg.lstsq(Beq.T, svec(Z), rcond=None)[0]
    if certify:
        dual, lam, eta = certificate(R, G, constant, eqs, lam_b, eta_b)
    else:
        lam, value = _repair(R, G, lam_b, eta_b, eqs)
        dual, eta = constant - value, eta_b
    primal = ev_out.value
    diag = np.einsum("ij,jk,ik->i", R, M_out, R)
    info = {"mu": mu, "predictor_steps": predictor_steps, "history": history,
            "max_row_value": float(diag.max()),
            "min_eigenvalue": float(np.linalg.eigvalsh(M_out)[0]), **ev_out.info}
    if eqs:
        info["equality_residuals"] = (Beq @ svec(M_out) - beq).tolist()
    gap = primal - dual
    return PSDResult(status=status, M=M_out, primal=float(primal), dual=float(dual),
                     gap=float(gap), rel_gap=float(gap / max(abs(primal), 1.0)), lam=lam,
                     eta=eta, iterations=steps + predictor_steps,
                     evaluations=oracle.evaluations, seconds=time.perf_counter() - t0,
                     message=message, info=info)
