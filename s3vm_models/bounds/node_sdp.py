"""The certified node SDP of ``bb-sdp``: one round's relaxation built, solved and certified
(:mod:`s3vm.bounds.shor` runs the rounds around it).

A round's SDP is the output-space Shor relaxation at the node's box with its RLT cuts
(:mod:`s3vm.models.shor_relaxation`), written in the reduced coordinates X = Q Xr Q' when a facial
reduction holds (the lifted count, the mean balance's product rows), handed to a standard-form
SDP backend (SDPA, SCS, Clarabel) and certified: the bound is the value of a dual feasible point
rebuilt from the solver's multipliers (never its primal value), the larger of the trace bound's
and the incumbent-relative one. Three repairs keep a round useful:

- **escalation**: a solve whose certificate loses much of the solver's dual value b'y, where the
  loss could change the node's fate, is repeated 100 times more accurately (:meth:`NodeSDP.solve`);
- **product-row retry**: when the solver fails on the mean balance's product rows, they are
  dropped for the rest of the instance and the round solved again (:meth:`NodeSDP.products_failed`);
- **hidden upper rows**: the rows V_ii <= umd_i are shown only once a solution violates one
  (:meth:`NodeSDP.solve_node`).
"""

from __future__ import annotations

import math
import time

import numpy as np

from s3vm.models.output_space import OutputSpaceData
from s3vm.models.shor_relaxation import (
    FacialReduction,
    IncumbentScale,
    RowList,
    add_rlt,
    base_rows,
    certified_value,
    incumbent_certificate,
    repair_diagonal,
    standard_form,
)
from s3vm.solvers.backends.conic_standard import StandardConic

TOL_P = 1e-5   # primal activity of a row (their TOL_P)
#: The finest accuracy a solve is escalated to: SDPA in double precision stops short of 1e-9
#: (status pdFEAS after its iteration limit, 10 s an SDP at n = 100 where 1e-7 takes 1-4 s).
FINEST_TOLERANCE = 1e-8


class NodeSDP:
    """The certified SDP of a node's round, for one instance (module docstring).

    Parameters
    ----------
    data : s3vm.models.output_space.OutputSpaceData
    lifted : bool
        The count balance's labels lifted into X (order 1 + n + u).
    backend, profile
        A standard-form SDP backend (:mod:`s3vm.solvers.backends.conic_standard`) and its profile.
    options : s3vm.bounds.shor.ShorOptions
        Read: ``products``, ``incumbent_certificate``, ``lambda_star``, ``cert_loss``,
        ``tolerance_near``.
    stats : dict
        The problem's counters, updated in place: ``sdp``, ``sdp_seconds``, ``sdp_cpu``,
        ``sdp_failures``, ``sdp_escalations``, ``upper_rows_shown``, ``products_dropped``.

    Attributes
    ----------
    Ct : ndarray
        The objective C~ on X (Cm on the outputs' block).
    fr : s3vm.models.shor_relaxation.FacialReduction or None
    scale : s3vm.models.shor_relaxation.IncumbentScale or None
        The incumbent-relative certificate's factor.
    finest : float
        The finest accuracy a solve of this instance needed (later solves start there).
    last_status : str or None
        The solver's status of the last SDP.
    clock : s3vm.solvers.runtime.clock.Clock, optional
        The solve's: each SDP's time limit is what it leaves (the backend's option at the
        call).
    """

    def __init__(self, data: OutputSpaceData, lifted: bool, backend, profile, options,
                 stats: dict, clock=None):
        self.data, self.lifted = data, bool(lifted)
        self.backend, self.profile = backend, profile
        self.options, self.stats = options, stats
        self.clock = clock
        d = data
        N = d.n + 1 + (d.u if self.lifted else 0)
        self.Ct = np.zeros((N, N))
        self.Ct[1:d.n + 1, 1:d.n + 1] = d.Cm
        self.fr = None
        if self.lifted:
            a = np.zeros(N)
            a[0] = -float(2 * d.positives - d.u)
            a[d.n + 1:] = 1.0
            self.fr = FacialReduction.for_vector(a)
        elif options.products and d.rhs is not None:
            a = np.zeros(N)
            a[0] = -d.rhs
            a[1 + d.l:d.n + 1] = 1.0
            self.fr = FacialReduction.for_vector(a)
        self.finest = math.inf
        self.last_status = None
        self.scale = None
        if options.incumbent_certificate:
            # B = C~ + E_00 (+ the labels' diagonal, lifted): factored once per instance.
            fixed = np.r_[0, np.arange(d.n + 1, N)] if self.lifted else np.array([0])
            self.scale = IncumbentScale.build(self.Ct, fixed, self.fr)
        self.hints = {}
        if options.lambda_star:
            self.hints = {"sdpa": {"lambdaStar": max(1.0, float(np.mean(np.diag(d.Cm))))}}

    # -- the rows ------------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        # Pickled with its problem for a worker in another process: without the solve's clock
        # (see LabelingProblem.__getstate__).
        return {**self.__dict__, "clock": None}

    def rows(self, L, U, lmd, umd, cuts, upper=None, keep_free=None, cut_box=None) -> RowList:
        """The round's rows at the box (L, U), diagonal bounds (lmd, umd), RLT ``cuts`` and
        shown upper rows ``upper`` (None: all); ``keep_free`` (a mask of points) keeps the
        rows of a free point (V_ii >= lmd_i, the lifted label's products) for these points
        also where the box fixed their sign (all valid there); ``cut_box`` (L, U): the box
        the RLT rows are the products of (a larger box's products hold as well)."""
        d = self.data
        N = self.Ct.shape[0]
        use_bal = d.rhs is not None and self.fr is None
        rows = base_rows(N, d.n, np.arange(d.l, d.n), d.rhs if use_bal else None, L, U, lmd, umd,
                         upper, keep_free)
        add_rlt(rows, cuts, *((L, U) if cut_box is None else cut_box))
        if self.lifted:
            self._lift_rows(rows, L, U, keep_free)
        return rows

    def certify(self, rows: RowList, y, T: float, UB: float, direction=None,
                steps=()) -> float:
        """The certificate of :meth:`solve_once` for given multipliers ``y`` of ``rows`` (no
        solve): b'y + T min(0, lambda_min(Z)), or the incumbent-relative bound when larger.
        Valid for any y (clipped at 0 on the inequality rows) whose rows hold on the node
        (:func:`s3vm.models.shor_relaxation.certified_value`): one eigenvalue of an N x N
        matrix (two with the incumbent-relative bound), no SDP. With ``direction`` (a
        vector over the rows, >= 0 on inequality rows), the largest certificate of
        y + t direction over t in {0} and ``steps``."""
        A, b, eq = rows.arrays()
        Ct, G = self.Ct, None
        if self.fr is not None:
            A, Ct = self.fr.reduce(A, self.Ct)
            G = self.fr.G
        y = np.asarray(y, dtype=float)
        best = None
        for t in (0.0,) + (tuple(steps) if direction is not None else ()):
            # the step chosen by the trace bound (one eigenvalue a step), then certified by
            # the incumbent-relative bound as well
            cert = certified_value(Ct, A, b, eq, y + t * direction if t else y, T, G)
            if best is None or cert.value > best.value:
                best = cert
        value = best.value
        if self.scale is not None and best.lmin < 0:
            value = max(value, incumbent_certificate(best.Z, best.dual, UB, self.scale))
        return value if math.isfinite(value) else -math.inf

    def _lift_rows(self, rows: RowList, L, U, keep_free=None) -> None:
        """The label block of ``count_bound = "lifted"`` (:mod:`s3vm.bounds.shor`'s docstring;
        the count and its products are X a = 0, imposed by facial reduction)."""
        d = self.data
        ky = d.n + 1 + np.arange(d.u)          # X index of y_k
        kv = 1 + d.l + np.arange(d.u)          # X index of v of the same point
        rows.add("ydiag", ky[:, None], ky[:, None], 1.0, np.ones(d.u), True, i=d.l + np.arange(d.u))
        Lu, Uu = L[d.l:], U[d.l:]
        plus, minus = np.flatnonzero(Lu >= 1.0), np.flatnonzero(Uu <= -1.0)
        rows.add("yfix", 0, ky[plus][:, None], 1.0, np.ones(plus.size), True, i=d.l + plus)
        rows.add("yfix", 0, ky[minus][:, None], 1.0, -np.ones(minus.size), True, i=d.l + minus)
        free = (Lu < 1.0) & (Uu > -1.0)
        if keep_free is not None:
            free = free | np.asarray(keep_free, dtype=bool)[d.l:]
        free = np.flatnonzero(free)
        if free.size == 0:
            return
        p, q = kv[free][:, None], ky[free][:, None]
        z = np.zeros_like(p)
        Lf, Uf = Lu[free][:, None], Uu[free][:, None]
        i = d.l + free
        rows.add("yv", p, q, 1.0, np.ones(free.size), False, i=i)                   # y v >= 1
        rows.add("yv", np.hstack([p, z, z]), np.hstack([q, p, q]),
                 np.hstack([-np.ones_like(Lf), -np.ones_like(Lf), Uf]), -Uu[free], False, i=i)
        rows.add("yv", np.hstack([p, z, z]), np.hstack([q, p, q]),
                 np.hstack([-np.ones_like(Lf), np.ones_like(Lf), Lf]), Lu[free], False, i=i)
        rows.add("yv", np.hstack([p, p]), np.hstack([p, q]), np.array([[1.0, -1.0]]),
                 np.zeros(free.size), False, i=i)                                   # v^2 >= y v
        rows.add("yv", np.hstack([p, z, z]), np.hstack([q, p, q]), np.array([[1.0, 1.0, -1.0]]),
                 np.ones(free.size), False, i=i)                                # (v-1)(1+y) >= 0
        rows.add("yv", np.hstack([p, z, z]), np.hstack([q, p, q]), np.array([[1.0, -1.0, 1.0]]),
                 np.ones(free.size), False, i=i)                                # (-1-v)(1-y) >= 0

    # -- a round -------------------------------------------------------------------------------
    def solve_node(self, L, U, lmd, umd, cuts, upper, T: float, tolerance: float, UB: float,
                   prune_at: float):
        """One round's SDP: (certificate, X, rows, upper) with ``upper`` (the rows
        V_ii <= umd_i shown; None: all) grown by those the solution violates, for the next
        round. The round's certificate is valid either way (module docstring of
        :mod:`s3vm.models.shor_relaxation`: T bounds the trace of every X of the full relaxation,
        and the hidden rows' multipliers are zero); a violated row only means this round's SDP
        was weaker. ``UB`` is the incumbent's value, ``prune_at`` the bound that closes the
        node's gap."""
        if len(cuts) == 0:
            # Without RLT rows nothing else bounds V_ii, and such an SDP is cheap: all shown.
            cert, X, rows = self.solve_rows(L, U, lmd, umd, cuts, None, T, tolerance, UB,
                                            prune_at)
            return cert, X, rows, upper
        cert, X, rows = self.solve_rows(L, U, lmd, umd, cuts, upper, T, tolerance, UB, prune_at)
        if cert is None or upper is None:
            return cert, X, rows, upper
        diag = np.diag(X)[1:self.data.n + 1]
        over = ~upper & (diag > umd + TOL_P * np.maximum(1.0, umd))
        self.stats["upper_rows_shown"] += int(np.sum(over))
        return cert, X, rows, upper | over

    def solve_rows(self, L, U, lmd, umd, cuts, upper, T: float, tolerance: float, UB: float,
                   prune_at: float):
        """The round's rows and their SDP solved: (certificate, X, rows); once more without
        the product rows when the solver failed on them (:meth:`products_failed`)."""
        rows = self.rows(L, U, lmd, umd, cuts, upper)
        cert, X = self.solve(rows, T, tolerance, UB, prune_at)
        if self.products_failed(cert):
            rows = self.rows(L, U, lmd, umd, cuts, upper)
            cert, X = self.solve(rows, T, tolerance, UB, prune_at)
        return cert, X, rows

    def products_failed(self, cert) -> bool:
        """Whether the mean balance's product rows made the solver fail (no solution, or a
        status of infeasible or error: SDPA on wdbc, rbf, called the root SDP with the product
        rows infeasible, and every later round's an error with certificates of -3e7, where
        the same SDP without them solves); if so, drop them for the rest of the instance (the
        relaxation without them is weaker, so every bound stays valid) and say so in
        ``stats["products_dropped"]``: the caller solves the round again."""
        if self.fr is None or self.lifted:
            return False
        if cert is not None and math.isfinite(cert.value) \
                and self.last_status not in ("infeasible", "error"):
            return False
        if self.last_status == "time_limit" or (self.clock is not None and self.clock.expired()):
            # Cut off by the clock: no verdict on the rows (ionosphere's second root SDP, with
            # 1,000 RLT rows, ran into a 300 s limit and the rows were dropped for nothing).
            return False
        self.fr = None
        if self.options.incumbent_certificate:
            self.scale = IncumbentScale.build(self.Ct, np.array([0]), None)
        self.stats["products_dropped"] += 1
        return True

    def solve(self, rows: RowList, T: float, tolerance: float, UB: float, prune_at: float):
        """Solve the rows' SDP and certify: (certificate, X in full coordinates) or (None, None).
        The certificate is the larger of the trace bound's and the incumbent-relative one; when
        it loses more than ``cert_loss`` of b'y and ``cert_gap_share`` (a tenth) of the node's
        gap UB - bound, and does not reach ``prune_at`` already, the SDP is solved again, more
        accurately (never finer than :data:`FINEST_TOLERANCE`). The larger certificate of the
        attempts is kept."""
        opt = self.options
        # An instance whose SDPs needed a finer accuracy once needs it again: start there.
        tolerance = min(tolerance, self.finest)
        best = (None, None)
        for attempt in range(3):
            cert, X = self.solve_once(rows, T, tolerance, UB)
            if cert is None or not math.isfinite(cert.value):
                return best if best[0] is not None else (cert, X)
            unreached = attempt and self.last_status != "optimal"
            if unreached:
                # The solver did not reach the finer accuracy (SDPA's pdFEAS: it ran to its
                # iteration limit): that accuracy costs more than it buys on this instance.
                self.finest = min(self.finest * 1e2, opt.tolerance_near)
            if best[0] is None or cert.value > best[0].value:
                best = (cert, X)
            cert = best[0]
            loss = cert.dual - cert.value
            gap = UB - cert.value
            if loss <= opt.cert_loss * max(abs(cert.dual), 1e-12) \
                    or loss <= opt.cert_gap_share * gap \
                    or cert.value >= prune_at \
                    or tolerance <= FINEST_TOLERANCE or unreached:
                break
            tolerance = max(tolerance * 1e-2, FINEST_TOLERANCE)
            self.finest = tolerance
            self.stats["sdp_escalations"] += 1
        return best

    def solve_once(self, rows: RowList, T: float, tolerance: float, UB: float):
        """One solve at ``tolerance`` and its certificate: (certificate, X) or (None, None)."""
        A, b, eq = rows.arrays()
        Ct = self.Ct
        G = None
        if self.fr is not None:
            A, Ct = self.fr.reduce(A, self.Ct)
            G = self.fr.G
        c, A_std, b_std, nl = standard_form(A, b, eq, Ct)
        problem = StandardConic(c, A_std, b_std, l=nl, s=(Ct.shape[0],), tolerance=tolerance,
                                hints=self.hints)
        t0, c0 = time.perf_counter(), time.process_time()
        outcome = self.backend.solve(problem, self.profile, self.clock)
        self.last_status = outcome.status
        self.stats["sdp"] += 1
        self.stats["sdp_seconds"] += time.perf_counter() - t0
        self.stats["sdp_cpu"] += time.process_time() - c0
        if not outcome.has_solution:
            self.stats["sdp_failures"] += 1
            return None, None
        Xs = problem.block(0)
        cert = certified_value(Ct, A, b, eq, problem.y, T, G)
        if self.fr is None and self.backend.name != "sdpa":
            # A first-order (or any non-SDPA) solve: refit the diagonal multipliers as well.
            again = repair_diagonal(Ct, A, b, eq, problem.y, Xs, rows, T)
            if again is not None and again.value > cert.value:
                cert = again
        if self.scale is not None and cert.lmin < 0:
            # Valid for the X with <C~, X> <= UB: the labelings the node's box keeps.
            cert.value = max(cert.value, incumbent_certificate(cert.Z, cert.dual, UB,
                                                               self.scale))
        X = self.fr.lift(Xs) if self.fr is not None else Xs
        if self.fr is not None:
            Qd = self.fr.Q.toarray()
            cert.Z = Qd @ cert.Z @ Qd.T
        return cert, X


__all__ = ["NodeSDP", "FINEST_TOLERANCE", "TOL_P"]
