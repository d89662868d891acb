"""The node bound of ``bb-sdp``: SDP-S3VM's cutting-plane loop on the output-space Shor relaxation
(Piccialli, Schwiddessen and Sudoso 2024; docs/formulations.md#bb-sdp).

A node of the driver is a partial labeling of U; here it also carries a box L <= v <= U on the
outputs (inherited from its parent, tightened at the node), a list of RLT cuts (inherited,
re-instantiated with the node's box) and the rows V_ii <= umd_i shown to the SDP (hidden until a
solution violates one). Its evaluation (their ``sdp_cut_and_tighten``) repeats:

1. build the relaxation's rows (:mod:`s3vm.models.shor_relaxation`) and solve it (a standard-form
   SDP backend: SDPA, SCS, Clarabel);
2. certify: the bound of the round is the value of a dual feasible point rebuilt from the
   solver's multipliers (never the solver's primal value), the larger of the trace bound's and
   the incumbent-relative one (:func:`s3vm.models.shor_relaxation.incumbent_certificate`); with SCS
   also a certificate with the diagonal multipliers refitted
   (:func:`s3vm.models.shor_relaxation.repair_diagonal`); a solve whose certificate loses much of
   b'y is repeated more accurately (:class:`ShorOptions`);
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

**Children.** A node hands its children its box, cuts, diagonal bounds lmd <= V_ii <= umd (all
tightened relative to the incumbent, so valid in its subtree) and its last round's multipliers y
(:class:`DualSeed`). A child is first bounded without an SDP (``cheap``): its rows rebuilt at its
box, the RLT rows kept as the products of the round's box (valid on the smaller box: re-instantiated
with the child's box the same multipliers lost far more than they gained), the rows V_ii >= lmd_i
kept for points whose sign the box now fixes (valid: |v_i| >= 1), each row with the parent's
multiplier of the same row (:func:`row_keys`; 0 for a new row), and a few multipliers tried for
the new sign rows (the branching row x_i >= 1 or -x_i >= 1); the certificate b'y + T min(0,
lambda_min(Z)) (or the incumbent-relative one) holds for any multipliers of the right signs, so
this is a valid bound (:meth:`NodeSDP.certify`: eigenvalues, no SDP). A child it prunes logs
ended "cheap"; otherwise the child's rounds start from max(parent bound, cheap bound), with at most
``child_max_rounds`` rounds. SDPA cannot be warm-started from the parent's solution: sdpa-python's
``sedumiwrap`` takes no initial point (only ``lambdaStar``, a scale), and an interior-point method
gains little from one; SCS could, but its rows change between parent and child.

**Labels fixed.** A free point whose box excludes one sign (the incumbent's box, the dual
tightening, probing) has its label fixed for the subtree; :class:`NodeLog` counts them
(``fixed``) and branching never picks one. Probing (``probe`` points a node, default off: on art150
its certificates cost more than the SDPs they save) tries the cheap certificate of the node's last
round with the point's box on the other side of x_i; one that reaches the incumbent fixes the
point. A fixed point does not leave the SDP: v_i stays a variable of the output-space matrix, only
its box (and so its rows) changes; the order of the SDP is that of the root at every node.

The pieces: this module runs the cut loop (:meth:`ShorBoundProblem._evaluate`) and the driver's
interface; the certified node SDP (rows, solve, escalation, product-row retry, certificate) is
:class:`s3vm.bounds.node_sdp.NodeSDP`, the incumbent search
:class:`s3vm.bounds.shor_incumbent.IncumbentSearch`, branching and the dual tightening
:mod:`s3vm.bounds.shor_branching`.

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

from s3vm.bounds.node_sdp import FINEST_TOLERANCE, NodeSDP
from s3vm.bounds.shor_branching import (
    branch_point,
    dual_tightening,
    first_free,
)
from s3vm.bounds.shor_children import TOL_D, ChildBounds, DualSeed
from s3vm.bounds.shor_copies import PoolCopies
from s3vm.bounds.shor_incumbent import IncumbentSearch
from s3vm.bounds.shor_proof import ShorProofs
from s3vm.bounds.shor_values import LabelingValues
from s3vm.models.output_space import BOX_TOL, OutputSpaceData, compute_box, project_box
from s3vm.models.shor_relaxation import rlt_array, separate_rlt
from s3vm.solvers.bnb.problem import LabelingProblem, NodeBound

BRANCHINGS = ("rank", "fractional", "strong")
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
    cert_gap_share : float
        The share of the gap UB - certificate that a certificate's loss must exceed to be
        escalated (above).
    hide_upper : bool
        Leave out the rows V_ii <= umd_i until the solution violates one (they are almost
        never active; they only bound the trace).
    lambda_star : bool
        Start SDPA at lambdaStar = max(1, mean diag Cm) instead of its default 100 (off: on
        the benchmark's nodes it saved iterations on some instances and cost them, or failed,
        on others; docs/benchmarks/sdp.md).
    incumbent_certificate : bool
        Certify also by the incumbent-relative bound
        (:func:`s3vm.models.shor_relaxation.incumbent_certificate`) and keep the larger.
    branching : {"rank", "fractional", "strong"}
        Their rule 2, the most fractional free point (their rule 0), or strong branching on
        the cheap certificate: of the ``strong_candidates`` best points of rule 2, the one
        whose worse child has the largest cheap bound (module docstring, "Children").
    child_max_rounds : int, optional
        The rounds of a node other than the root (None: ``max_rounds``).
    cheap : bool
        Bound a child first by its parent's last multipliers at the child's box (module
        docstring, "Children"): a child that this prunes costs no SDP. Off by default: on
        art150 (mean balance, product rows) it pruned no child and cost about as much as a
        child's SDPs (the rows' facial reduction and generalised eigenvalues at n = 150).
    probe : int
        At the end of a node's rounds, probe this many free points (those of largest
        |x_i|): the cheap certificate with the point's box on the side opposite to x_i; when
        it reaches the incumbent, the point's label is fixed for the subtree (its box).
    strong_candidates : int
        The candidates of ``branching = "strong"``.
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
    cert_gap_share: float = 0.1
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
    child_max_rounds: Optional[int] = None
    cheap: bool = False
    probe: int = 0
    strong_candidates: int = 4


@dataclass
class ShorState:
    """What a node hands its children: the box, the cuts and its best feasible outputs."""

    L: np.ndarray
    U: np.ndarray
    cuts: np.ndarray
    vbest: Optional[np.ndarray] = None
    bound: float = -math.inf
    upper: Optional[np.ndarray] = None     # the rows V_ii <= umd_i shown (hide_upper)
    lmd: Optional[np.ndarray] = None       # the bounds lmd <= V_ii <= umd tightened so far
    umd: Optional[np.ndarray] = None
    seed: Optional[DualSeed] = None        # the last round's multipliers (cheap certificate)


@dataclass
class NodeLog:
    """One evaluated node (for tests and the result's statistics): ``dual`` is the largest
    solver's dual value b'y of its rounds (the certificate's loss is dual - bound), ``ended``
    why its rounds stopped: "gap" (closed), "progress" (b'y rose by less than ``rel_tol``),
    "max_rounds", "time" (the clock), "failed" (no SDP solution), "pruned" (empty box),
    "no SDP" (decided without one), "cheap" (pruned by the cheap certificate of its parent's
    multipliers, no SDP). ``seconds``: the node's time; ``fixed``: its free points whose label
    its box fixes at its end (the dual tightening, the incumbent's box, probing)."""

    partial: np.ndarray
    bound: float
    incumbent: float
    rounds: int
    dual: float = -math.inf
    ended: str = "no SDP"
    seconds: float = 0.0
    fixed: int = 0
    root: bool = False
    cheap: float = -math.inf


class ShorBoundProblem(ChildBounds, LabelingValues, PoolCopies, LabelingProblem):
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
    links : s3vm.solvers.bnb.links.Links, optional
        Groups: the driver branches on whole groups, the heuristics keep them, and a labeling
        that breaks them is worth inf (a box that forces one holds no labeling of the node).
    k_best : int
        The driver's pool size: above 1, UB (the box, the pruning) is the K-th best value.
    record_proof : bool
        Keep each node's proof (:class:`s3vm.bounds.shor_proof.ShorProofs`) for a certificate.

    Attributes
    ----------
    stats : dict
        Counts and seconds: ``sdp`` (solves), ``sdp_seconds``, ``sdp_cpu``, ``box_seconds``,
        ``heuristic_seconds``, ``cuts`` (added), ``root_bound``, ``root_seconds``,
        ``root_rounds``, ``root_ended`` (why the root's rounds stopped, :class:`NodeLog`),
        ``root_finished`` (False when the clock or the solver cut them off),
        ``products_dropped`` (rounds whose product rows the solver failed on); the node
        seconds and fixed labels come from the log (:meth:`node_statistics`).
    log : list of NodeLog
    clock : s3vm.solvers.runtime.clock.Clock, optional
        The solve's clock: rounds stop, and SDPs are cut off, when it expires.
    """

    def __init__(self, K, label, C, balance: str, positives: Optional[int], objective, backend,
                 profile, options: Optional[ShorOptions] = None, rel_gap: float = 0.0,
                 abs_gap: float = 0.0, links=None, k_best: int = 1, record_proof: bool = False,
                 clock=None):
        self.data = OutputSpaceData(K, label, C, balance, positives)
        self.u = self.data.u
        self.positives = self.data.positives
        self.links = links
        self.k_best = int(k_best)
        self.proofs = ShorProofs(objective) if record_proof else None
        self._objective = objective
        self.backend, self.profile = backend, profile
        self.options = options or ShorOptions()
        self.rel_gap, self.abs_gap = float(rel_gap), float(abs_gap)
        self.UB = math.inf            # the best value handed to the driver (its incumbent)
        self.vbest: Optional[np.ndarray] = None
        self.box_ub = math.inf        # the UB the current root box was computed with
        self._values: dict = {}
        self.log: list = []
        self.stats = {"sdp": 0, "sdp_seconds": 0.0, "sdp_cpu": 0.0, "box_seconds": 0.0,
                      "heuristic_seconds": 0.0, "cuts": 0, "rounds": 0, "root_bound": None,
                      "root_seconds": None, "root_rounds": None, "sdp_failures": 0,
                      "sdp_escalations": 0, "upper_rows_shown": 0, "products_dropped": 0,
                      "root_ended": None, "root_finished": False,
                      "cheap": 0, "cheap_pruned": 0,
                      "cheap_seconds": 0.0, "probes": 0, "probe_fixed": 0,
                      "strong_evaluations": 0}
        self.clock = clock
        self.sdp = NodeSDP(self.data, self._lifted, backend, profile, self.options, self.stats,
                           clock)
        self.incumbents = IncumbentSearch(self.data, self._offer, self.stats, links)
        self._start = time.perf_counter()

    @property
    def _lifted(self) -> bool:
        d = self.data
        return (d.positives is not None and self.options.count_bound == "lifted"
                and 0 < d.positives < d.u)


    def _prune_at(self) -> float:
        """The bound at which a node's gap to the incumbent is closed (inf without one)."""
        if not math.isfinite(self.UB):
            return math.inf
        slack = max(self.abs_gap, self.rel_gap * abs(self.UB), 1e-9 * max(1.0, abs(self.UB)))
        return self.UB - slack

    def _gap_closed(self, bound: float) -> bool:
        return math.isfinite(self.UB) and bound >= self._prune_at()

    def run_on(self, clock) -> None:
        self.clock = self.sdp.clock = clock

    # -- the starting incumbent --------------------------------------------------------------------
    def initial_incumbent(self):
        """(labels, value, "svm-rounding") of their start (:meth:`IncumbentSearch.initial`), or
        None when no labeling has a finite value."""
        found: dict = {}
        self.incumbents.initial(found)
        if "labels" not in found or not math.isfinite(found["value"]):
            return None
        return found["labels"], found["value"], "svm-rounding"

    def _expired(self) -> bool:
        return self.clock is not None and self.clock.expired()

    # -- the driver's interface --------------------------------------------------------------------
    def bound(self, partial: np.ndarray, parent_state: Any = None) -> NodeBound:
        t0, logged = time.perf_counter(), len(self.log)
        node = self._bound(np.asarray(partial, dtype=int), parent_state)
        seconds = time.perf_counter() - t0
        if len(self.log) > logged:
            entry = self.log[-1]
            entry.seconds = seconds
            entry.root = parent_state is None
        return node


    def _bound(self, partial: np.ndarray, parent_state: Any = None) -> NodeBound:
        d, opt = self.data, self.options
        root = parent_state is None
        lmd = umd = None
        seed = None
        if root:
            if not math.isfinite(self.UB):
                self.initial_incumbent()
            if not math.isfinite(self.UB) and self.k_best > 1 and self.data.rhs is None:
                # The pool is not full yet: every labeling has J <= J at w = 0, sum of C
                self.UB = float(np.sum(self.data.C))
            if not math.isfinite(self.UB):
                # No labeling has a finite value (the mean balance with u = 1 out of reach).
                self.stats.update(root_ended="no SDP", root_finished=True)
                return NodeBound(value=math.inf)
            L, U = self._root_box()
            cuts = np.zeros((0, 3), dtype=np.int64)
            vbest = self.vbest
            parent_bound = -math.inf
        else:
            L, U = parent_state.L.copy(), parent_state.U.copy()
            cuts, vbest, parent_bound = parent_state.cuts, parent_state.vbest, parent_state.bound
            if parent_state.lmd is not None:
                lmd, umd = parent_state.lmd.copy(), parent_state.umd.copy()
            seed = parent_state.seed
        fixed = np.flatnonzero(partial != 0)
        pts = d.l + fixed
        L[pts] = np.where(partial[fixed] > 0, np.maximum(L[pts], 1.0), L[pts])
        U[pts] = np.where(partial[fixed] < 0, np.minimum(U[pts], -1.0), U[pts])
        found: dict = {}
        rounds_before = self.stats["rounds"]
        free = first_free(partial)
        cheap = -math.inf
        if not root and free is not None and opt.cheap and seed is not None:
            # The parent's multipliers at the child's box: a valid bound for any multipliers.
            cheap = self._cheap(seed, L, U, lmd, umd)
            self.stats["cheap"] += 1
            if cheap >= self._prune_at():
                self.stats["cheap_pruned"] += 1
                self.log.append(NodeLog(partial.copy(), cheap, self.UB, 0, ended="cheap",
                                        cheap=cheap, fixed=self._fixed(partial, L, U)))
                return NodeBound(value=cheap)
        floor = max(parent_bound, cheap)
        if not root and free is not None and self._expired():
            # Out of time: no SDP for this child (the driver bounds both children of a node it
            # expands); its parent's bound (or the cheap one) holds for its subtree.
            state = ShorState(L, U, cuts, vbest, bound=floor, upper=parent_state.upper,
                              lmd=lmd, umd=umd, seed=seed)
            node = NodeBound(value=floor, state=state)
            node.branch_index, node.first_label = self._first_open(partial, L, U)
            self.log.append(NodeLog(partial.copy(), floor, self.UB, 0, ended="time",
                                    cheap=cheap, fixed=self._fixed(partial, L, U)))
            return node
        upper = None if root else parent_state.upper
        if self.proofs is not None:
            self.proofs.begin()
        value, state, branch = self._evaluate(partial, L, U, cuts, vbest, found,
                                              None if upper is None else upper.copy(),
                                              lmd=lmd, umd=umd, floor=floor, root=root)
        proof = None if self.proofs is None else self.proofs.node(
            value, state, self._completion(partial, state.L, state.U))
        value = max(value, floor)
        state.bound = value
        node = NodeBound(value=value, state=state, proof=proof)
        if "labels" in found:
            node.labels, node.labels_value = found["labels"], found["value"]
        if branch is not None:
            node.branch_index, node.first_label = branch
        rounds = self.stats["rounds"] - rounds_before
        end = self._node_end
        self.log.append(NodeLog(partial.copy(), value, self.UB, rounds, end["dual"],
                                end["ended"], cheap=cheap,
                                fixed=self._fixed(partial, state.L, state.U)))
        if root:
            # The root finished unless the clock or the solver cut its rounds off.
            self.stats.update(root_bound=value, root_seconds=time.perf_counter() - self._start,
                              root_rounds=rounds, root_incumbent=self.UB,
                              root_ended=end["ended"],
                              root_finished=end["ended"] not in ("time", "failed"))
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

    def _evaluate(self, partial, L, U, cuts, vbest, found, upper=None, lmd=None, umd=None,
                  floor=-math.inf, root=True):
        """Their sdp_cut_and_tighten for one node: (bound, state, (branch index, first label)).
        ``lmd``, ``umd``: the parent's diagonal bounds (None: from the box); ``floor``: a bound
        the node has already (its parent's, the cheap one)."""
        d, opt = self.data, self.options
        n = d.n
        max_rounds = opt.max_rounds if root or opt.child_max_rounds is None \
            else opt.child_max_rounds
        self._node_end = {"ended": "no SDP", "dual": -math.inf}
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
        lmd = np.ones(n) if lmd is None else lmd
        umd = np.maximum(L ** 2, U ** 2) if umd is None else np.minimum(umd, np.maximum(L ** 2,
                                                                                        U ** 2))
        kept = {tuple(int(v) for v in c): None for c in cuts}
        if not opt.hide_upper:
            upper = None
        elif upper is None:
            upper = np.zeros(n, dtype=bool)
        lb = floor
        dual = -math.inf          # the largest b'y of the node's rounds (the stop test's number)
        last = None
        rounds = 0
        ended = "rounds"
        while True:
            rounds += 1
            self.stats["rounds"] += 1
            L, U = project_box(L, U)
            umd = np.minimum(umd, np.maximum(L ** 2, U ** 2))
            T = 1.0 + float(np.sum(umd)) + (d.u if self._lifted else 0.0)
            near = math.isfinite(lb) and self.UB - lb <= opt.near * abs(self.UB)
            tolerance = min(opt.tolerance, opt.tolerance_near) if near else opt.tolerance
            shown = None if upper is None else int(upper.sum())
            drops = self.stats["products_dropped"]
            cert, X, rows, upper = self.sdp.solve_node(L, U, lmd, umd, rlt_array(kept), upper, T,
                                                       tolerance, self.UB, self._prune_at())
            grew = upper is not None and int(upper.sum()) > shown
            # A round whose relaxation lost the product rows is weaker than the last: its b'y
            # is no measure of the cuts' progress.
            dropped = self.stats["products_dropped"] > drops
            if cert is None:
                ended = "time" if self._expired() else "failed"
                break
            value = cert.value if math.isfinite(cert.value) else -math.inf
            lb = max(lb, value)
            if self.proofs is not None:
                self.proofs.round(value, cert, rows, T, L, U, lmd, umd)
            # Progress is read on the solver's dual value b'y, not on the certificate: a round's
            # certificate may lose up to a tenth of the node's gap to b'y (NodeSDP.solve keeps
            # such a loss), and a certificate that fell while b'y rose (GunPoint's root: b'y
            # 765.0 -> 766.7, certificate 751.1 -> 724.0) stopped the rounds where the cuts
            # were still working.
            previous = dual
            if math.isfinite(cert.dual):
                dual = cert.dual if dropped else max(dual, cert.dual)
            x = X[0, 1:n + 1]
            last = (X, cert, rows, L.copy(), U.copy())
            if opt.heuristic and not self._gap_closed(lb):
                improved, v = self.incumbents.run(x, found)
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
                L, U, lmd, umd = dual_tightening(rows, cert.y, X, L, U, lmd, umd, self.UB - value)
            L, U = project_box(L, U)
            if np.any(((L > -1.0 + BOX_TOL) & (U < 1.0 - BOX_TOL)) | (L > U + BOX_TOL)):
                self._node_end = {"ended": "pruned", "dual": dual}
                return math.inf, ShorState(L, U, rlt_array(kept), vbest), None
            # cut management: drop the inactive, add the most violated
            kinds = np.asarray(rows.kind)
            cut_rows = np.flatnonzero(kinds == "cut")
            for k in cut_rows:
                if abs(cert.y[k]) < TOL_D:
                    kept.pop(rows.ij[k], None)
            if self._gap_closed(lb) or self._expired():
                ended = "gap" if self._gap_closed(lb) else "time"
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
            rel = (dual - previous) / previous if previous > 0 and math.isfinite(previous) \
                else math.inf
            # A round whose SDP missed violated rows, or lost the product rows, is not a reason
            # to stop.
            if rel < opt.rel_tol and not grew and not dropped:
                ended = "progress"
                break
            if rounds >= max_rounds:
                ended = "max_rounds"
                break
        self._node_end = {"ended": ended, "dual": dual}
        seed = None if last is None else self._seed(last)
        state = ShorState(L, U, rlt_array(kept), vbest, upper=upper, lmd=lmd, umd=umd, seed=seed)
        if last is None:
            return lb, state, self._first_open(partial, L, U)
        if ended not in ("time", "gap") and opt.probe > 0:
            L, U, closed = self._probe(partial, last, seed, L, U, lmd, umd)
            state.L, state.U = L, U
            if closed is not None:
                # both sides of a point reach the incumbent: so does the node
                self._node_end["ended"] = "pruned"
                return max(lb, closed), state, None
        done = self._completion(partial, L, U)
        if done is not None:
            value = self.objective(done)
            if value < found.get("value", math.inf):
                found.update(labels=done, value=value)
            return max(lb, value), state, None
        if opt.branching == "strong":
            branch, best = self._strong_branch(partial, last, seed, L, U, lmd, umd, vbest)
            if best >= self._prune_at():
                # both children of the chosen point reach the incumbent: so does the node
                self._node_end["ended"] = "pruned"
                return max(lb, best), state, None
            return lb, state, branch
        return lb, state, branch_point(self.data, self.options.branching, partial, last, L, U,
                                       vbest)


    def certificate_losses(self) -> dict:
        """:func:`certificate_losses` of the nodes evaluated so far."""
        return certificate_losses(self.log)

    # -- the root relaxation alone (export, the formulation's CVXPY model) -------------------------
    def root_rows(self):
        """(rows, C~, facial reduction or None) of the root relaxation without cuts, with the
        box of the starting incumbent (no heuristic rounds)."""
        if not math.isfinite(self.UB):
            self.initial_incumbent()
        L, U = self._root_box()
        umd = np.maximum(L ** 2, U ** 2)
        return (self.sdp.rows(L, U, np.ones(self.data.n), umd, np.zeros((0, 3))), self.sdp.Ct,
                self.sdp.fr)


def certificate_losses(log: list) -> dict:
    """The certificates' loss per evaluated node (:class:`NodeLog`), as a fraction of the
    node's gap: (b'y - bound) / (UB - bound) with b'y the largest dual value of its rounds,
    over the nodes with an SDP and an open gap; ``nodes``, ``median``, ``max`` and
    ``over_1pct`` (how many lost more than 1% of their gap)."""
    fractions = [(node.dual - node.bound) / (node.incumbent - node.bound)
                 for node in log
                 if math.isfinite(node.dual) and math.isfinite(node.bound)
                 and math.isfinite(node.incumbent) and node.incumbent > node.bound]
    if not fractions:
        return {"nodes": 0, "median": None, "max": None, "over_1pct": 0}
    f = np.maximum(np.asarray(fractions), 0.0)
    return {"nodes": int(f.size), "median": float(np.median(f)), "max": float(f.max()),
            "over_1pct": int(np.sum(f > 0.01))}


__all__ = ["ShorBoundProblem", "ShorOptions", "ShorState", "NodeLog", "BRANCHINGS",
           "COUNT_BOUNDS", "FINEST_TOLERANCE"]
