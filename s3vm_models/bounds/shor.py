"""The node bound of ``bb-sdp``: SDP-S3VM's cutting-plane loop on the output-space Shor relaxation
(Piccialli, Schwiddessen and Sudoso 2024; docs/formulations.md#bb-sdp).

A node of the driver is a partial labeling of U; here it also carries a box L <= v <= U on the
outputs (inherited from its parent, tightened at the node), a list of RLT cuts (inherited,
re-instantiated with the node's box) and the rows V_ii <= umd_i shown to the SDP (hidden until a
solution violates one). Its evaluation (their ``sdp_cut_and_tighten``) repeats:

1. build the relaxation's rows (:mod:`s3vm.models.shor_relaxation`) and solve it (a standard-form SDP backend:
   SDPA, SCS, Clarabel);
2. certify: the bound of the round is the value of a dual feasible point rebuilt from the
   solver's multipliers (never the solver's primal value), the larger of the trace bound's and
   the incumbent-relative one (:func:`s3vm.models.shor_relaxation.incumbent_certificate`); with SCS also a
   certificate with the diagonal multipliers refitted (:func:`s3vm.models.shor_relaxation.repair_diagonal`); a
   solve whose certificate loses much of b'y is repeated more accurately (:class:`ShorOptions`);
3. heuristic: round the relaxed outputs, solve the labeling's QP, improve by 2-opt moves that
   keep the balance (their ``run_heuristic``), then by single label flips (swaps under the
   count) with the QP re-solved (:func:`s3vm.models.output_space.flip_search`), from each of a few
   roundings; a better labeling lowers the incumbent UB and the box is recomputed from it (2n
   convex QCQPs, :func:`s3vm.models.output_space.compute_box`);
4. dual box tightening (reduced-cost fixing with this round's certificate: an active row with
   multiplier d bounds its slack by (UB - bound) / d for every labeling better than UB);
5. cuts: drop those with |multiplier| < 1e-4, add at most ``cut_factor`` n of the most violated
   RLT rows (violation below -1e-2);

and stops when the bound improved by less than ``rel_tol`` (relative), the gap to UB is below the
driver's tolerance, ``max_rounds`` rounds ran, or the clock ran out.

**Validity is relative to the incumbent.** The box holds every labeling with J <= UB, so the bound
of a node is a lower bound on the J of those of its labelings that are better than the incumbent
it was computed with; a node whose labelings are all worse may get any value (it is pruned, as it
should be). Every box contains the optimal labeling's outputs (J* <= UB always), so the bound
along the optimum's path is valid and the driver's lower bound stays a proven one.

Branching: their rule 2 (ten criteria ranked over the free points on the margin of the rounded
solution whose V_ii >= 1 row is active; the smallest sum of ranks), else the most fractional free
point; the child on the side of the relaxed output first.

The count balance (``--balance count``): the driver enforces the count on the labels; the
relaxation in v has no term for it. ``count_bound = "lifted"`` adds the labels to the matrix,
X of order 1 + n + u over (1, v, y_U): Y_kk = 1, sum y = 2P - u and its products
sum_k X_{m, y_k} = (2P - u) X_{0m} (as X a = 0, by facial reduction), and per free point the
couplings y v >= 1, (U - v)(1 + y) >= 0, (v - L)(1 - y) >= 0, v^2 >= y v and the disjunctive
products (v - 1)(1 + y) >= 0, (-1 - v)(1 - y) >= 0 (y = 1 forces v >= 1, y = -1 forces v <= -1).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from s3vm.models.output_space import (BOX_TOL, OutputSpaceData, compute_box, flip_search,
                                      labeling_qp, labels_count, project_box, two_opt)
from s3vm.models.shor_relaxation import (FacialReduction, IncumbentScale, RowList, add_rlt,
                                         base_rows, certified_value, incumbent_certificate,
                                         repair_diagonal, rlt_array, separate_rlt, standard_form)
from s3vm.solvers.backends.conic_standard import StandardConic
from s3vm.solvers.bnb.problem import LabelingProblem, NodeBound

TOL_P = 1e-5   # primal activity of a row in the dual tightening (their TOL_P)
#: The finest accuracy a solve is escalated to: SDPA in double precision stops short of 1e-9
#: (status pdFEAS after its iteration limit, 10 s an SDP at n = 100 where 1e-7 takes 1-4 s).
FINEST_TOLERANCE = 1e-8
TOL_D = 1e-4   # dual activity: tightening and cut removal (their TOL_D)

BRANCHINGS = ("rank", "fractional")
COUNT_BOUNDS = ("none", "lifted")


@dataclass
class ShorOptions:
    """The knobs of the node loop (their parameters.txt in brackets).

    cut_factor : float
        At most cut_factor * n RLT rows added a round [factor_maximum_cuts_dualbound = 3].
    min_violation : float
        A cut is a candidate when its value is below this [minimum_violation = -1e-2].
    rel_tol : float
        Stop the rounds when the bound improves by less than this, relatively
        [rel_tol_cutting_plane_approach = 1e-3].
    max_rounds : int
        [max_cutting_plane_iter = 30].
    tolerance : float
        The SDP solver's accuracy (SDPA's epsilonStar/epsilonDash, SCS's eps) away from the
        incumbent.
    tolerance_near : float
        The accuracy once the node's bound is within ``near`` (relative) of the incumbent,
        where the bound's last digits decide whether the node is pruned.
    near : float
    cert_loss : float
        A solve is repeated 100 times more accurately (twice at most, never finer than 1e-8)
        when its certificate falls short of the dual value b'y by more than this fraction of
        |b'y| and by more than a tenth of the gap UB - certificate, and does not prune the node
        already (a loss that cannot change a decision is kept); the instance's later solves
        start at that accuracy, unless the solver could not reach it.
    hide_upper : bool
        Leave out the rows V_ii <= umd_i until the solution violates one (they are almost
        never active; they only bound the trace).
    lambda_star : bool
        Start SDPA at lambdaStar = max(1, mean diag Cm) instead of its default 100 (off: on
        the benchmark's nodes it saved iterations on some instances and cost them, or failed,
        on others; docs/benchmarks.md).
    incumbent_certificate : bool
        Certify also by the incumbent-relative bound (:func:`s3vm.models.shor_relaxation.incumbent_certificate`)
        and keep the larger.
    branching : {"rank", "fractional"}
        Their rule 2, or the most fractional free point (their rule 0).
    heuristic, tighten, box, cuts : bool
        Switch the parts of the loop off (for experiments).
    products : bool
        The mean balance's products sum_U X_ij = rhs x_j by facial reduction
        [add_product_constraints, false in parameters.txt]; dropped for the rest of the
        instance when the solver fails on them (the round is solved again without them).
    count_bound : {"none", "lifted"}
        The count balance in the relaxation (module docstring).
    """

    cut_factor: float = 3.0
    min_violation: float = -1e-2
    rel_tol: float = 1e-3
    max_rounds: int = 30
    tolerance: float = 1e-5
    tolerance_near: float = 1e-7
    near: float = 1e-2
    cert_loss: float = 1e-4
    hide_upper: bool = True
    lambda_star: bool = False
    incumbent_certificate: bool = True
    branching: str = "rank"
    heuristic: bool = True
    tighten: bool = True
    box: bool = True
    cuts: bool = True
    products: bool = False
    count_bound: str = "lifted"


@dataclass
class ShorState:
    """What a node hands its children: the box, the cuts and its best feasible outputs."""

    L: np.ndarray
    U: np.ndarray
    cuts: np.ndarray
    vbest: Optional[np.ndarray] = None
    bound: float = -math.inf
    upper: Optional[np.ndarray] = None     # the rows V_ii <= umd_i shown (hide_upper)


@dataclass
class NodeLog:
    """One evaluated node (for tests and the result's statistics)."""

    partial: np.ndarray
    bound: float
    incumbent: float
    rounds: int


class ShorBoundProblem(LabelingProblem):
    """S3VM-L2 without bias for the branch-and-bound driver, bounded by the output-space Shor
    relaxation with SDP-S3VM's cutting-plane loop (module docstring).

    Parameters
    ----------
    K : ndarray (n, n)
        Kernel matrix in the instance's row order.
    label : ndarray (n,)
        +1/-1 on labeled rows, 0 on unlabeled ones.
    C : ndarray (n,)
        Per-point penalties (C on L, C* on U).
    balance : {"none", "count", "mean"}
    positives : int, optional
        The count P (balance ``count``).
    objective : callable
        labels_U -> J(labels_U), the exact value of a full labeling (each called once per
        labeling; the problem caches).
    backend, profile
        A standard-form SDP backend (:mod:`s3vm.solvers.backends.conic_standard`) and its
        profile.
    options : ShorOptions
    rel_gap, abs_gap : float
        The driver's tolerances (a node stops its rounds once its bound is within them).

    Attributes
    ----------
    stats : dict
        Counts and seconds: ``sdp`` (solves), ``sdp_seconds``, ``sdp_cpu``, ``box_seconds``,
        ``heuristic_seconds``, ``cuts`` (added), ``root_bound``, ``root_seconds``,
        ``root_rounds``.
    log : list of NodeLog
    clock : s3vm.solvers.runtime.clock.Clock, optional
        Set by the formulation; rounds stop when it expires.
    """

    def __init__(self, K, label, C, balance: str, positives: Optional[int], objective, backend,
                 profile, options: Optional[ShorOptions] = None, rel_gap: float = 0.0,
                 abs_gap: float = 0.0):
        self.data = OutputSpaceData(K, label, C, balance, positives)
        self.u = self.data.u
        self.positives = self.data.positives
        self._objective = objective
        self.backend, self.profile = backend, profile
        self.options = options or ShorOptions()
        self.rel_gap, self.abs_gap = float(rel_gap), float(abs_gap)
        self.clock = None
        self.UB = math.inf            # the best value handed to the driver (its incumbent)
        self.vbest: Optional[np.ndarray] = None
        self.box_ub = math.inf        # the UB the current root box was computed with
        self._values: dict = {}
        self._searched: dict = {}     # start labeling -> (value, v) of the local search
        self.log: list = []
        self.stats = {"sdp": 0, "sdp_seconds": 0.0, "sdp_cpu": 0.0, "box_seconds": 0.0,
                      "heuristic_seconds": 0.0, "cuts": 0, "rounds": 0, "root_bound": None,
                      "root_seconds": None, "root_rounds": None, "sdp_failures": 0,
                      "sdp_escalations": 0, "upper_rows_shown": 0, "products_dropped": 0}
        d = self.data
        N = d.n + 1 + (d.u if self._lifted else 0)
        self.Ct = np.zeros((N, N))
        self.Ct[1:d.n + 1, 1:d.n + 1] = d.Cm
        self.fr = None
        if self._lifted:
            a = np.zeros(N)
            a[0] = -float(2 * d.positives - d.u)
            a[d.n + 1:] = 1.0
            self.fr = FacialReduction.for_vector(a)
        elif self.options.products and d.rhs is not None:
            a = np.zeros(N)
            a[0] = -d.rhs
            a[1 + d.l:d.n + 1] = 1.0
            self.fr = FacialReduction.for_vector(a)
        self._finest = math.inf      # the finest accuracy a solve of this instance needed
        self._last_status = None     # the solver's status of the last SDP
        self.scale = None
        if self.options.incumbent_certificate:
            # B = C~ + E_00 (+ the labels' diagonal, lifted): factored once per instance.
            fixed = np.r_[0, np.arange(d.n + 1, N)] if self._lifted else np.array([0])
            self.scale = IncumbentScale.build(self.Ct, fixed, self.fr)
        self.hints = {}
        if self.options.lambda_star:
            self.hints = {"sdpa": {"lambdaStar": max(1.0, float(np.mean(np.diag(d.Cm))))}}
        self._start = time.perf_counter()

    @property
    def _lifted(self) -> bool:
        d = self.data
        return d.positives is not None and self.options.count_bound == "lifted" and 0 < d.positives < d.u

    # -- values ------------------------------------------------------------------------------------
    def objective(self, labels: np.ndarray) -> float:
        labels = np.asarray(labels)
        key = labels.astype(np.int8).tobytes()
        value = self._values.get(key)
        if value is None:
            value = float(self._objective(labels))
            self._values[key] = value
        if value < self.UB:
            self.UB = value
        return value

    def decision_values(self, labels: np.ndarray) -> Optional[np.ndarray]:
        """f on the unlabeled rows at ``labels`` (the exact objective's classifier)."""
        solve = getattr(self._objective, "solve", None)
        if solve is None:
            return None
        return np.asarray(solve(np.asarray(labels)).outputs)[self.data.unl].copy()

    def _offer(self, labels_U: np.ndarray, v: Optional[np.ndarray], found: dict) -> bool:
        """A labeling found by a heuristic: its exact value; kept for the driver when better."""
        labels = np.where(np.asarray(labels_U) > 0, 1, -1).astype(int)
        if self.positives is not None and int(np.sum(labels == 1)) != self.positives:
            return False
        before = self.UB
        value = self.objective(labels)
        if value < found.get("value", math.inf):
            found.update(labels=labels, value=value)
        if value < before:
            self.vbest = None if v is None else np.asarray(v, dtype=float).copy()
            return True
        return False

    # -- a pool's copies of the problem (s3vm.solvers.bnb.pool) ------------------------------------
    _COUNTERS = ("sdp", "sdp_seconds", "sdp_cpu", "box_seconds", "heuristic_seconds", "cuts",
                 "rounds", "sdp_failures", "sdp_escalations", "upper_rows_shown")

    def notify_incumbent(self, labels: np.ndarray, value: float) -> None:
        """The driver's incumbent (found by another worker): its value is the UB of the box
        and of the heuristic's comparisons here too."""
        self._values.setdefault(np.asarray(labels).astype(np.int8).tobytes(), float(value))
        self.UB = min(self.UB, float(value))

    def worker_begin(self) -> None:
        for key in self._COUNTERS:
            self.stats[key] = type(self.stats[key])(0)
        self.log = []

    def worker_report(self) -> dict:
        return {"stats": {key: self.stats[key] for key in self._COUNTERS}, "log": self.log}

    def merge_worker_report(self, report: dict) -> None:
        for key, value in report["stats"].items():
            self.stats[key] += value
        self.log.extend(report["log"])

    def _gap_closed(self, bound: float) -> bool:
        if not math.isfinite(self.UB):
            return False
        slack = max(self.abs_gap, self.rel_gap * abs(self.UB), 1e-9 * max(1.0, abs(self.UB)))
        return bound >= self.UB - slack

    def _expired(self) -> bool:
        return self.clock is not None and self.clock.expired()

    # -- the starting incumbent --------------------------------------------------------------------
    def initial_incumbent(self):
        """Their start: the SVM on the labeled points labels U (the P largest outputs under a
        count), then the labeling's QP and 2-opt."""
        d = self.data
        l = d.l
        Kll = d.Kp[:l, :l]
        Cl = np.linalg.inv(Kll)
        Cl = 0.25 * (Cl + Cl.T)
        _, vl = labeling_qp(Cl, d.yL)
        found: dict = {}
        if vl is not None:
            f = (d.Kp[l:, :l] @ np.linalg.solve(Kll, vl))
            self._heuristic(np.r_[vl, f], found)
        if "labels" not in found:
            # Any feasible labeling: alternating signs (both signs meet any mean in reach).
            y = np.where(np.arange(d.u) % 2 == 0, 1.0, -1.0)
            if d.positives is not None:
                y = labels_count(-np.arange(d.u, dtype=float), d.positives)
            self._offer(y, None, found)
        if "labels" not in found or not math.isfinite(found["value"]):
            return None
        return found["labels"], found["value"], "svm-rounding"

    def _starts(self, x: np.ndarray) -> list:
        """Labelings of U to search from, given relaxed (or SVM) outputs x: under the count its
        P largest; else the signs, and under the mean balance also the labeling with the count
        the balance would have at |v| = 1 (the (rhs + u) / 2 largest), which lets the rounding
        reach another count than the signs'."""
        d = self.data
        xu = x[d.l:]
        if d.positives is not None:
            return [labels_count(xu, d.positives)]
        starts = [np.where(xu >= 0, 1.0, -1.0)]
        if d.rhs is not None:
            P = int(round(0.5 * (d.rhs + d.u)))
            if 0 < P < d.u:
                starts.append(labels_count(xu, P))
        return starts

    def _search_from(self, y_u: np.ndarray):
        """(value, v) of the local optimum reached from the labeling y_u of U (cached by the
        start: roundings repeat from round to round): 2-opt (their run_heuristic) then
        single flips, or swaps under the count (:func:`s3vm.models.output_space.flip_search`)."""
        d = self.data
        key = np.asarray(y_u > 0).tobytes()
        hit = self._searched.get(key)
        if hit is not None:
            return hit
        movable = np.r_[np.zeros(d.l, dtype=bool), np.ones(d.u, dtype=bool)]
        a = d.a if d.rhs is not None else None
        y = d.full(y_u)
        if d.positives is None:
            _, v = d.qp(y)
            if v is not None:
                v = two_opt(d.Cm, v, movable, d.qp)
                y = d.full(np.where(v[d.l:] >= 0, 1.0, -1.0))
        value, v, y = flip_search(d.Cm, d.Mdiag, y, movable, a, d.rhs,
                                  keep_count=d.positives is not None)
        if len(self._searched) > 10000:
            self._searched.clear()
        self._searched[key] = (value, v)
        return value, v

    def _heuristic(self, x: np.ndarray, found: dict):
        """The incumbent heuristic from relaxed outputs x: a local search from each of
        :meth:`_starts` (:meth:`_search_from`); (whether UB fell, the outputs v of the best
        labeling reached, or None)."""
        d = self.data
        t0 = time.perf_counter()
        improved, v_out, best = False, None, math.inf
        for y_u in self._starts(x):
            value, v = self._search_from(y_u)
            if v is None:
                continue
            improved |= self._offer(np.where(v[d.l:] >= 0, 1, -1), v, found)
            if value < best:
                best, v_out = value, v
        self.stats["heuristic_seconds"] += time.perf_counter() - t0
        return improved, v_out

    # -- the driver's interface ---------------------------------------------------------------------
    def bound(self, partial: np.ndarray, parent_state: Any = None) -> NodeBound:
        d = self.data
        partial = np.asarray(partial, dtype=int)
        root = parent_state is None
        t_node = time.perf_counter()
        if root:
            if not math.isfinite(self.UB):
                self.initial_incumbent()
            if not math.isfinite(self.UB):
                # No labeling has a finite value (the mean balance with u = 1 out of reach).
                return NodeBound(value=math.inf)
            L, U = self._root_box()
            cuts = np.zeros((0, 3), dtype=np.int64)
            vbest = self.vbest
            parent_bound = -math.inf
        else:
            L, U = parent_state.L.copy(), parent_state.U.copy()
            cuts, vbest, parent_bound = parent_state.cuts, parent_state.vbest, parent_state.bound
        fixed = np.flatnonzero(partial != 0)
        pts = d.l + fixed
        L[pts] = np.where(partial[fixed] > 0, np.maximum(L[pts], 1.0), L[pts])
        U[pts] = np.where(partial[fixed] < 0, np.minimum(U[pts], -1.0), U[pts])
        found: dict = {}
        rounds_before = self.stats["rounds"]
        first_free = self._first_free(partial)
        if not root and first_free is not None and self._expired():
            # Out of time: no SDP for this child (the driver bounds both children of a node it
            # expands); its parent's bound holds for its subtree.
            state = ShorState(L, U, cuts, vbest, bound=parent_bound, upper=parent_state.upper)
            node = NodeBound(value=parent_bound, state=state)
            node.branch_index, node.first_label = first_free
            self.log.append(NodeLog(partial.copy(), parent_bound, self.UB, 0))
            return node
        upper = None if root else parent_state.upper
        value, state, branch = self._evaluate(partial, L, U, cuts, vbest, found,
                                              None if upper is None else upper.copy())
        value = max(value, parent_bound)
        state.bound = value
        node = NodeBound(value=value, state=state)
        if "labels" in found:
            node.labels, node.labels_value = found["labels"], found["value"]
        if branch is not None:
            node.branch_index, node.first_label = branch
        rounds = self.stats["rounds"] - rounds_before
        self.log.append(NodeLog(partial.copy(), value, self.UB, rounds))
        if root:
            self.stats.update(root_bound=value, root_seconds=time.perf_counter() - self._start,
                              root_rounds=rounds, root_incumbent=self.UB)
        return node

    def _root_box(self) -> tuple[np.ndarray, np.ndarray]:
        d = self.data
        L, U = d.initial_box()
        t0 = time.perf_counter()
        if self.options.box:
            L, U = compute_box(d.M, d.a if d.rhs is not None else None, d.rhs, L, U, self.UB,
                               self._deadline())
        # Every labeling with J <= UB has v'Cm v <= UB, hence |v_i| <= sqrt(UB M_ii): a finite
        # box whatever the QCQPs reached (the trace bound needs one).
        r = np.sqrt(self.UB * np.diag(d.M)) + BOX_TOL
        L, U = project_box(np.maximum(L, -r), np.minimum(U, r))
        self.box_ub = self.UB
        self.stats["box_seconds"] += time.perf_counter() - t0
        return L, U

    def _deadline(self) -> float:
        return math.inf if self.clock is None else self.clock.deadline

    def _completion(self, partial, L, U):
        """The labels the box forces on the free points (None if some point is still free)."""
        d = self.data
        free = np.flatnonzero(partial == 0)
        Lf, Uf = L[d.l + free], U[d.l + free]
        if np.any((Lf < 0) & (Uf > 0)):
            return None
        labels = partial.copy()
        labels[free] = np.where(Lf > 0, 1, -1)
        return labels

    # -- one node -----------------------------------------------------------------------------------
    def _rows(self, L, U, lmd, umd, cuts, upper=None) -> RowList:
        d = self.data
        N = self.Ct.shape[0]
        use_bal = d.rhs is not None and self.fr is None
        rows = base_rows(N, d.n, np.arange(d.l, d.n), d.rhs if use_bal else None, L, U, lmd, umd,
                         upper)
        add_rlt(rows, cuts, L, U)
        if self._lifted:
            self._lift_rows(rows, L, U)
        return rows

    def _lift_rows(self, rows: RowList, L, U) -> None:
        """The label block of ``count_bound = "lifted"`` (module docstring; the count and its
        products are X a = 0, imposed by facial reduction)."""
        d = self.data
        ky = d.n + 1 + np.arange(d.u)          # X index of y_k
        kv = 1 + d.l + np.arange(d.u)          # X index of v of the same point
        rows.add("ydiag", ky[:, None], ky[:, None], 1.0, np.ones(d.u), True, i=d.l + np.arange(d.u))
        Lu, Uu = L[d.l:], U[d.l:]
        plus, minus = np.flatnonzero(Lu >= 1.0), np.flatnonzero(Uu <= -1.0)
        rows.add("yfix", 0, ky[plus][:, None], 1.0, np.ones(plus.size), True, i=d.l + plus)
        rows.add("yfix", 0, ky[minus][:, None], 1.0, -np.ones(minus.size), True, i=d.l + minus)
        free = np.flatnonzero((Lu < 1.0) & (Uu > -1.0))
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
                 np.ones(free.size), False, i=i)                                    # (v-1)(1+y) >= 0
        rows.add("yv", np.hstack([p, z, z]), np.hstack([q, p, q]), np.array([[1.0, -1.0, 1.0]]),
                 np.ones(free.size), False, i=i)                                    # (-1-v)(1-y) >= 0

    def _solve(self, rows: RowList, T: float, tolerance: float):
        """Solve the rows' SDP and certify: (certificate, X in full coordinates) or (None, None).
        The certificate is the larger of the trace bound's and the incumbent-relative one; when
        it loses more than ``cert_loss`` of b'y and a tenth of the node's gap, and does not
        prune the node already, the SDP is solved again, more accurately (never finer than
        :data:`FINEST_TOLERANCE`). The larger certificate of the attempts is kept."""
        opt = self.options
        # An instance whose SDPs needed a finer accuracy once needs it again: start there.
        tolerance = min(tolerance, self._finest)
        best = (None, None)
        for attempt in range(3):
            cert, X = self._solve_once(rows, T, tolerance)
            if cert is None or not math.isfinite(cert.value):
                return best if best[0] is not None else (cert, X)
            unreached = attempt and self._last_status != "optimal"
            if unreached:
                # The solver did not reach the finer accuracy (SDPA's pdFEAS: it ran to its
                # iteration limit): that accuracy costs more than it buys on this instance.
                self._finest = min(self._finest * 1e2, opt.tolerance_near)
            if best[0] is None or cert.value > best[0].value:
                best = (cert, X)
            cert = best[0]
            loss = cert.dual - cert.value
            gap = self.UB - cert.value
            if loss <= opt.cert_loss * max(abs(cert.dual), 1e-12) or loss <= 0.1 * gap \
                    or self._gap_closed(cert.value) \
                    or tolerance <= FINEST_TOLERANCE or unreached:
                break
            tolerance = max(tolerance * 1e-2, FINEST_TOLERANCE)
            self._finest = tolerance
            self.stats["sdp_escalations"] += 1
        return best

    def _products_failed(self, cert) -> bool:
        """Whether the mean balance's product rows made the solver fail (no solution, or a
        status of infeasible or error: SDPA on wdbc, rbf, called the root SDP with the product
        rows infeasible, and every later round's an error with certificates of -3e7, where
        the same SDP without them solves); if so, drop them for the rest of the instance (the
        relaxation without them is weaker, so every bound stays valid) and say so in
        ``stats["products_dropped"]``: the caller solves the round again."""
        if self.fr is None or self._lifted:
            return False
        if cert is not None and math.isfinite(cert.value) \
                and self._last_status not in ("infeasible", "error"):
            return False
        self.fr = None
        if self.options.incumbent_certificate:
            self.scale = IncumbentScale.build(self.Ct, np.array([0]), None)
        self.stats["products_dropped"] += 1
        return True

    def _solve_rows(self, L, U, lmd, umd, cuts, upper, T: float, tolerance: float):
        """The round's rows and their SDP solved: (certificate, X, rows); once more without
        the product rows when the solver failed on them (:meth:`_products_failed`)."""
        rows = self._rows(L, U, lmd, umd, cuts, upper)
        cert, X = self._solve(rows, T, tolerance)
        if self._products_failed(cert):
            rows = self._rows(L, U, lmd, umd, cuts, upper)
            cert, X = self._solve(rows, T, tolerance)
        return cert, X, rows

    def _solve_node(self, L, U, lmd, umd, cuts, upper, T: float, tolerance: float):
        """One round's SDP: (certificate, X, rows, upper) with ``upper`` (the rows
        V_ii <= umd_i shown; None: all) grown by those the solution violates, for the next
        round. The round's certificate is valid either way (module docstring of
        :mod:`s3vm.models.shor_relaxation`: T bounds the trace of every X of the full relaxation, and the hidden
        rows' multipliers are zero); a violated row only means this round's SDP was weaker."""
        if len(cuts) == 0:
            # Without RLT rows nothing else bounds V_ii, and such an SDP is cheap: all shown.
            cert, X, rows = self._solve_rows(L, U, lmd, umd, cuts, None, T, tolerance)
            return cert, X, rows, upper
        cert, X, rows = self._solve_rows(L, U, lmd, umd, cuts, upper, T, tolerance)
        if cert is None or upper is None:
            return cert, X, rows, upper
        diag = np.diag(X)[1:self.data.n + 1]
        over = ~upper & (diag > umd + TOL_P * np.maximum(1.0, umd))
        self.stats["upper_rows_shown"] += int(np.sum(over))
        return cert, X, rows, upper | over

    def _solve_once(self, rows: RowList, T: float, tolerance: float):
        A, b, eq = rows.arrays()
        Ct = self.Ct
        G = None
        if self.fr is not None:
            A, Ct = self.fr.reduce(A, self.Ct)
            G = self.fr.G
        c, A_std, b_std, nl = standard_form(A, b, eq, Ct)
        problem = StandardConic(c, A_std, b_std, l=nl, s=(Ct.shape[0],), tolerance=tolerance,
                                hints=self.hints)
        profile = self.profile
        remaining = None if self.clock is None else self.clock.remaining()
        if remaining is not None:
            profile = profile.updated(time_limit=remaining)
        t0, c0 = time.perf_counter(), time.process_time()
        outcome = self.backend.solve(problem, profile)
        self._last_status = outcome.status
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
            cert.value = max(cert.value, incumbent_certificate(cert.Z, cert.dual, self.UB,
                                                               self.scale))
        X = self.fr.lift(Xs) if self.fr is not None else Xs
        if self.fr is not None:
            Qd = self.fr.Q.toarray()
            cert.Z = Qd @ cert.Z @ Qd.T
        return cert, X

    def _evaluate(self, partial, L, U, cuts, vbest, found, upper=None):
        """Their sdp_cut_and_tighten for one node: (bound, state, (branch index, first label))."""
        d, opt = self.data, self.options
        n = d.n
        L, U = project_box(L, U)
        if np.any(L > U + BOX_TOL):
            # No labeling of the node is better than the incumbent the box came from.
            return math.inf, ShorState(L, U, cuts, vbest), None
        done = self._completion(partial, L, U)
        if done is not None:
            value = self.objective(done)
            if value < found.get("value", math.inf):
                found.update(labels=done, value=value)
            return value, ShorState(L, U, cuts, vbest), None
        lmd = np.ones(n)
        umd = np.maximum(L ** 2, U ** 2)
        kept = {tuple(int(v) for v in c): None for c in cuts}
        if not opt.hide_upper:
            upper = None
        elif upper is None:
            upper = np.zeros(n, dtype=bool)
        lb = -math.inf
        last = None
        rounds = 0
        while True:
            rounds += 1
            self.stats["rounds"] += 1
            L, U = project_box(L, U)
            umd = np.minimum(umd, np.maximum(L ** 2, U ** 2))
            T = 1.0 + float(np.sum(umd)) + (d.u if self._lifted else 0.0)
            near = math.isfinite(lb) and self.UB - lb <= opt.near * abs(self.UB)
            tolerance = min(opt.tolerance, opt.tolerance_near) if near else opt.tolerance
            shown = None if upper is None else int(upper.sum())
            cert, X, rows, upper = self._solve_node(L, U, lmd, umd, rlt_array(kept), upper, T,
                                                    tolerance)
            grew = upper is not None and int(upper.sum()) > shown
            if cert is None:
                break
            value = cert.value if math.isfinite(cert.value) else -math.inf
            improvement = value - lb
            previous = lb
            lb = max(lb, value)
            x = X[0, 1:n + 1]
            last = (X, cert, rows, L.copy(), U.copy())
            if opt.heuristic and not self._gap_closed(lb):
                improved, v = self._heuristic(x, found)
                if v is not None and np.all((L <= 0) | (v > 0)) and np.all((U >= 0) | (v < 0)):
                    # the node's best feasible outputs (their v in the branching rule)
                    if vbest is None or float(v @ d.Cm @ v) < float(vbest @ d.Cm @ vbest):
                        vbest = v
                if improved and opt.box and self.UB < self.box_ub and not self._gap_closed(lb):
                    t0 = time.perf_counter()
                    L, U = compute_box(d.M, d.a if d.rhs is not None else None, d.rhs, L, U,
                                       self.UB, self._deadline())
                    self.stats["box_seconds"] += time.perf_counter() - t0
            if opt.tighten and math.isfinite(value):
                L, U, lmd, umd = self._tighten(rows, cert.y, X, L, U, lmd, umd, self.UB - value)
            L, U = project_box(L, U)
            if np.any(((L > -1.0 + BOX_TOL) & (U < 1.0 - BOX_TOL)) | (L > U + BOX_TOL)):
                return math.inf, ShorState(L, U, rlt_array(kept), vbest), None
            # cut management: drop the inactive, add the most violated
            kinds = np.asarray(rows.kind)
            cut_rows = np.flatnonzero(kinds == "cut")
            for k in cut_rows:
                if abs(cert.y[k]) < TOL_D:
                    kept.pop(rows.ij[k], None)
            if self._gap_closed(lb) or self._expired():
                break
            if opt.cuts:
                added = 0
                cap = int(opt.cut_factor * n)
                for c in separate_rlt(X, L, U, n, opt.min_violation):
                    key = (int(c[0]), int(c[1]), int(c[2]))
                    if key not in kept:
                        kept[key] = None
                        added += 1
                        if added >= cap:
                            break
                self.stats["cuts"] += added
            rel = improvement / previous if previous > 0 and math.isfinite(previous) else math.inf
            # A round whose SDP missed violated rows is not a reason to stop.
            if (rel < opt.rel_tol and not grew) or rounds >= opt.max_rounds:
                break
        state = ShorState(L, U, rlt_array(kept), vbest, upper=upper)
        if last is None:
            return lb, state, self._first_free(partial)
        done = self._completion(partial, L, U)
        if done is not None:
            value = self.objective(done)
            if value < found.get("value", math.inf):
                found.update(labels=done, value=value)
            return max(lb, value), state, None
        return lb, state, self._branch(partial, last, L, U, vbest)

    def _tighten(self, rows: RowList, y, X, L, U, lmd, umd, diff):
        """Their dual box tightening, with this round's certificate (diff = UB - bound)."""
        if not (diff > 0 and math.isfinite(diff)):
            return L, U, lmd, umd
        L, U, lmd, umd = L.copy(), U.copy(), lmd.copy(), umd.copy()
        kinds = np.asarray(rows.kind)
        for k in np.flatnonzero(np.isin(kinds, ("xL", "xU", "dL", "dU"))):
            dk = y[k]
            if dk <= TOL_D:
                continue
            i = rows.ij[k][0]
            p = i + 1
            kind = kinds[k]
            if kind == "xL" and X[0, p] <= L[i] + TOL_P:
                U[i] = min(U[i], L[i] + diff / dk + BOX_TOL)
            elif kind == "xU" and X[0, p] >= U[i] - TOL_P:
                L[i] = max(L[i], U[i] - diff / dk - BOX_TOL)
            elif kind == "dL" and X[p, p] <= lmd[i] + TOL_P:
                umd[i] = min(umd[i], lmd[i] + diff / dk + BOX_TOL)
                s = math.sqrt(lmd[i] + diff / dk)
                L[i] = max(L[i], -s - BOX_TOL)
                U[i] = min(U[i], s + BOX_TOL)
            elif kind == "dU" and X[p, p] >= umd[i] - TOL_P:
                lmd[i] = max(lmd[i], umd[i] - diff / dk - BOX_TOL)
                if umd[i] - diff / dk >= 1.0:
                    if L[i] > -math.sqrt(umd[i] - diff / dk + BOX_TOL):
                        L[i] = max(L[i], 1.0)
                    if U[i] < math.sqrt(umd[i] - diff / dk - BOX_TOL):
                        U[i] = min(U[i], -1.0)
        return L, U, lmd, umd

    # -- branching ----------------------------------------------------------------------------------
    def _first_free(self, partial):
        free = np.flatnonzero(partial == 0)
        return (int(free[0]), 1) if free.size else None

    def _branch(self, partial, last, L, U, vbest):
        """Their rule 2 (module docstring) over the free unlabeled points, or the most
        fractional; returns (position in U, first label)."""
        d = self.data
        X, cert, rows, _, _ = last
        n = d.n
        x = X[0, 1:n + 1]
        V = X[1:n + 1, 1:n + 1]
        free_u = np.flatnonzero((partial == 0) & (L[d.l:] < 0) & (U[d.l:] > 0))
        if free_u.size == 0:
            return self._first_free(partial)
        free = d.l + free_u
        kinds = np.asarray(rows.kind)
        dual_lm = np.zeros(n)
        rlt_sum = np.zeros(n)
        for k in np.flatnonzero(kinds == "dL"):
            dual_lm[rows.ij[k][0]] = cert.y[k]
        for k in np.flatnonzero(kinds == "cut"):
            i, j, _ = rows.ij[k]
            rlt_sum[i] += abs(cert.y[k])
            rlt_sum[j] += abs(cert.y[k])

        def pick(i):
            return int(i - d.l), (1 if x[i] >= 0 else -1)

        if self.options.branching == "fractional":
            return pick(free[np.argmin(np.abs(x[free]))])
        if d.positives is not None:
            _, best = d.qp(d.full(labels_count(x[d.l:], d.positives)))
        else:
            _, best = d.qp(d.full(np.where(x[d.l:] >= 0, 1.0, -1.0)))
        cand = np.array([i for i in free if abs(dual_lm[i]) > TOL_D and best is not None
                         and abs(abs(best[i]) - 1.0) < 1e-4], dtype=int)
        if cand.size == 0:
            with_dual = free[dual_lm[free] > 1e-5]
            pool = with_dual if with_dual.size else free
            return pick(pool[np.argmin(np.abs(x[pool]))])
        vb = vbest if vbest is not None else np.zeros(n)
        Cm, Z = d.Cm, cert.Z
        E = np.outer(x, x) - V
        crit = [
            (np.abs(x[cand]), False),
            (np.abs(x[cand] - vb[cand]), True),
            (rlt_sum[cand], True),
            (np.abs(Z[cand + 1, :]).sum(axis=1), True),
            (np.abs(Cm[cand]).sum(axis=1), True),
            (np.abs((Cm[cand] * E[cand]).sum(axis=1)), True),
            (np.abs(E[cand].sum(axis=1)), True),
            (np.abs(Cm[cand] * E[cand]).sum(axis=1), True),
            (np.abs(E[cand]).sum(axis=1), True),
            (np.abs((Cm[cand] * (np.outer(vb, vb)[cand] - V[cand])).sum(axis=1)), True),
        ]
        score = np.zeros(cand.size)
        for vals, desc in crit:
            order = np.argsort(-vals if desc else vals, kind="stable")
            pos = np.empty(cand.size)
            pos[order] = np.arange(1, cand.size + 1)
            score += pos
        return pick(cand[int(np.argmin(score))])

    # -- the root relaxation alone (export, the formulation's CVXPY model) ----------------------------
    def root_rows(self):
        """(rows, C~, facial reduction or None) of the root relaxation without cuts, with the
        box of the starting incumbent (no heuristic rounds)."""
        if not math.isfinite(self.UB):
            self.initial_incumbent()
        L, U = self._root_box()
        umd = np.maximum(L ** 2, U ** 2)
        return self._rows(L, U, np.ones(self.data.n), umd, np.zeros((0, 3))), self.Ct, self.fr
