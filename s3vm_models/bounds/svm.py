"""The SVM lower bound of S3VM-L2 at a node and the branching rule of Chapelle, Sindhwani and
Keerthi (2006): the bound of their section 4, the rule (7) with Proposition 1, eq. (8)
(docs/formulations.md#bb).

A node fixes the labels of some unlabeled points. Its bound is s(L_node), the squared-hinge SVM
trained on the originally labeled points and the fixed unlabeled points only (the free points
drop out, which is C* = 0 for them): every completion's J is at least this, since J adds
nonnegative losses to the same objective. At a leaf s(L_node) = J exactly.

Going down the tree one point joins the training set. The node keeps the Cholesky factor of its
active set's system (:class:`s3vm.models.l2_svm.ActiveFactor`); a child whose new point lies
outside the margin inherits the parent's solution unchanged, otherwise the factor grows by one
row (block formula) and only when the active set changes does a Newton solve run, warm started
from it.

Branching (their rule (7) with their Proposition 1, eq. (8)): if the support vectors do not
change when a point x with label y joins,

    s(L + {x, y}) = s(L) + max(0, 1 - y f(x))^2 / (2 S'_x),
    S'_x = K(x, x) + 1/(2 C*) - v' M^-1 v,   v = (K(sv, x), 1),

M the bordered system of the support vectors (without bias, v = K(sv, x) and M = K_sv + D).
The node branches on the point whose less likely label would raise the objective most, and the
driver explores its likely label, sign f(x), first.

The factors the open nodes keep are capped at :data:`FACTOR_BYTES_PER_ENTRY` bytes per entry of
the n x n kernel matrix. Depth-first, every level of the dive leaves its second child open, each
with its own factor of a^2 doubles (a the active set's size, up to the depth plus the labeled
points): without the cap their sum grows with the cube of the depth (1.9 GiB at n = 1,000 with
the rbf kernel in 45 s, docs/changelog.md, "The memory guard's estimate"). Beyond the
cap the nodes left open longest give up their factors first (depth-first, the ones bounded
last are expanded next) and keep only their active points; such a factor is rebuilt (one
Cholesky factorisation) when the node's children are bounded.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any, Optional

import numpy as np
from scipy.linalg import solve_triangular

from s3vm.models.l2_svm import MARGIN_TOL, ActiveFactor, S3VMObjective, squared_hinge_svm
from s3vm.solvers.bnb.problem import LabelingProblem, NodeBound

#: Bytes of Cholesky factors the open nodes may keep together, per entry of the n x n kernel
#: matrix: one n x n matrix of doubles (bb's dense_bytes counts it).
FACTOR_BYTES_PER_ENTRY = 8


class DroppedFactor:
    """What an open node keeps of its factor beyond the cap: the active points alone, from
    which :meth:`SVMBoundProblem.restored` rebuilds the factor for the node's children."""

    __slots__ = ("rows",)

    def __init__(self, rows):
        self.rows = rows


class SVMNode:
    """What a node hands to its children: its training labels and exact SVM solution.

    Attributes
    ----------
    partial : ndarray of shape (u,)
        The node's partial labeling (+1/-1 fixed, 0 free).
    y : ndarray of shape (n,)
        Labels of the training points (0 on free unlabeled rows).
    factor : ActiveFactor or DroppedFactor
        Factor of the support vectors' system (its rows alone when the open nodes' factors
        would pass :data:`FACTOR_BYTES_PER_ENTRY`).
    beta : ndarray
        Coefficients of the support vectors (``factor.rows``), b the offset.
    f : ndarray of shape (n,)
        Outputs at every point (free points included).
    value : float
        s(L_node).
    """

    __slots__ = ("partial", "y", "factor", "beta", "b", "f", "value", "__weakref__")

    def __init__(self, partial, y, factor, beta, b, f, value):
        self.partial, self.y, self.factor = partial, y, factor
        self.beta, self.b, self.f, self.value = beta, b, f, value


class SVMBoundProblem(LabelingProblem):
    """S3VM-L2 (Problem 1) for the branch-and-bound driver with the SVM bound of Chapelle,
    Sindhwani and Keerthi (2006), section 4.

    Parameters
    ----------
    objective : S3VMObjective
        Kernel matrix, penalties and bias of the instance.
    positives : int, optional
        The balance count (exactly this many unlabeled +1), None for none.
    heuristic : callable, optional
        ``heuristic(objective, positives) -> (labels, value)``, the starting incumbent, with its
        ``name`` attribute reported as the incumbent's source.
    links : s3vm.solvers.bnb.links.Links, optional
        Groups of unlabeled points: the driver fixes a whole group when it branches, so a node's
        labeled set holds whole groups and the bound (the SVM on that set) stays a lower bound
        on every completion that keeps them; a completion is offered only when it keeps them.

    Attributes
    ----------
    stats : dict
        Counts of bound computations: ``inherited`` (new point outside the margin),
        ``appended`` (one block update sufficed), ``newton`` (the active set changed),
        ``fresh`` (no usable parent); ``dropped``: nodes left open without their factor (the
        cap on the open nodes' factors), ``rebuilt``: factors factorised again for their
        children.
    factor_budget : int
        Bytes of factors the open nodes may keep together (:data:`FACTOR_BYTES_PER_ENTRY` per
        kernel entry); ``kept_bytes`` is what they keep.
    """

    def __init__(self, objective: S3VMObjective, positives: Optional[int] = None,
                 heuristic=None, links=None):
        self.objective = objective
        self.u = objective.u
        self.positives = positives
        self.heuristic = heuristic
        self.links = links
        self.K = objective.K
        self.bias = objective.bias
        self.unlabeled = objective.unlabeled
        self.inv2c = 0.5 / objective.C
        self.kdiag = np.diag(self.K) + self.inv2c
        self.base_y = objective.y.copy()
        # The mean balance (an objective with a balance row): J_mean >= the SVM of the node's
        # points, so the bound holds, but a completion no longer attains it.
        self.mean = getattr(objective, "rhs", None) is not None
        self.stats = {"inherited": 0, "appended": 0, "newton": 0, "fresh": 0, "dropped": 0,
                      "rebuilt": 0}
        self.factor_budget = FACTOR_BYTES_PER_ENTRY * self.K.shape[0] ** 2
        self.kept_bytes = 0
        # id of each factor matrix counted in kept_bytes -> (its bytes, weak references to the
        # open nodes holding it), oldest first: counted once however many nodes share it,
        # released when the last one lets it go or when evicted
        self._kept: OrderedDict = OrderedDict()
        self.last: Optional[SVMNode] = None
        # The best value of the labelings this problem handed to the driver (its incumbent,
        # since the driver has no other source): branching aims at what can still be pruned.
        self.incumbent = np.inf
        # The starting heuristic's labeling and objective, kept for the result's report.
        self.heuristic_result: Optional[tuple] = None

    # -- the driver's interface ----------------------------------------------------------
    def bound(self, partial: np.ndarray, parent_state: Any = None) -> NodeBound:
        node = self.node(partial, parent_state)
        self.last = node
        free = np.flatnonzero(partial == 0)
        if free.size == 0:
            if self.mean:
                value = self.objective(partial)
                return NodeBound(max(node.value, value), state=None,
                                 labels=partial.astype(int), labels_value=value)
            return NodeBound(node.value, state=None, labels=partial.astype(int),
                             labels_value=node.value)
        result = NodeBound(node.value, state=node)
        fR = node.f[self.unlabeled[free]]
        completion = self.confident_completion(partial, free, fR)
        if completion is not None:
            # Every free point is outside the margin on the side the count allows: they add no
            # loss, so this completion attains the bound and the node is solved. (Under the mean
            # balance it is only a candidate: its outputs need not meet the balance.)
            value = self.objective(completion) if self.mean else node.value
            result.labels, result.labels_value = completion, value
            self.incumbent = min(self.incumbent, value)
        index, label = self.branching(node, free, fR)
        result.branch_index, result.first_label = index, label
        result.state = self.kept_state(node)  # after branching, which reads the factor
        return result

    def objective(self, labels: np.ndarray) -> float:
        labels = np.asarray(labels, dtype=float)
        guess = None
        if self.last is not None:
            # The driver evaluates leaves right after bounding a nearby node: its outputs name
            # the support vectors of the leaf but for a few points, so Newton starts there.
            y = self.objective.full_labels(labels)
            guess = np.flatnonzero(y * self.last.f < 1.0)
        value = self.objective.solve(labels, guess).value
        self.incumbent = min(self.incumbent, value)
        return value

    def initial_incumbent(self):
        if self.heuristic is None:
            return None
        labels, value = self.heuristic(self.objective, self.positives)
        if labels is None:
            return None  # no labeling keeps the groups with the count
        self.heuristic_result = (labels, value)
        if self.positives is None or int(np.sum(labels == 1)) == self.positives:
            self.incumbent = min(self.incumbent, value)
        return labels, value, getattr(self.heuristic, "name", "heuristic")

    def decision_values(self, labels: np.ndarray) -> np.ndarray:
        return self.objective_solution(labels).outputs[self.unlabeled]

    def incumbent_outputs(self, labels: np.ndarray) -> np.ndarray:
        """The new incumbent's decision values (one SVM solve, as a leaf's objective): the
        driver publishes them with it."""
        return self.decision_values(labels)

    def objective_solution(self, labels: np.ndarray):
        return self.objective.solve(np.asarray(labels, dtype=float))

    # -- nodes -----------------------------------------------------------------------------
    def kept_state(self, node: SVMNode) -> SVMNode:
        """The state an open ``node`` hands the driver, its factor counted against
        :attr:`factor_budget`: the nodes holding the oldest factors give them up (keeping
        their active points) until it fits; a factor larger than the whole budget is not
        kept."""
        L = node.factor.L
        key = id(L)
        if key in self._kept:
            self._kept[key][1].append(weakref.ref(node))
            return node
        if L.nbytes > self.factor_budget:
            self.stats["dropped"] += 1
            node.factor = DroppedFactor(node.factor.rows)
            return node
        while self.kept_bytes + L.nbytes > self.factor_budget:
            _, (nbytes, holders) = self._kept.popitem(last=False)
            self.kept_bytes -= nbytes
            for ref in holders:
                holder = ref()
                if holder is not None and not isinstance(holder.factor, DroppedFactor):
                    self.stats["dropped"] += 1
                    holder.factor = DroppedFactor(holder.factor.rows)
        self._kept[key] = (L.nbytes, [weakref.ref(node)])
        self.kept_bytes += L.nbytes
        weakref.finalize(L, self._release, key)
        return node

    def _release(self, key: int) -> None:
        entry = self._kept.pop(key, None)
        if entry is not None:
            self.kept_bytes -= entry[0]

    def restored(self, parent: SVMNode) -> SVMNode:
        """``parent`` with its factor, factorised again from its rows when it was dropped
        (in place: both children of the node use it, then the driver lets it go)."""
        if isinstance(parent.factor, DroppedFactor):
            self.stats["rebuilt"] += 1
            parent.factor = ActiveFactor.build(self.K, np.where(parent.y != 0, parent.y, 1.0),
                                               self.inv2c, parent.factor.rows, self.bias)
        return parent

    def node(self, partial: np.ndarray, parent: Any = None) -> SVMNode:
        """The exact SVM of the node ``partial``, incrementally from ``parent`` when possible."""
        partial = np.array(partial, dtype=int)
        if isinstance(parent, SVMNode):
            changed = np.flatnonzero(partial != parent.partial)
            if changed.size == 1 and parent.partial[changed[0]] == 0:
                return self.child(self.restored(parent), partial, int(changed[0]))
        y = self.base_y.copy()
        y[self.unlabeled] = partial
        guess = parent.factor.rows if isinstance(parent, SVMNode) else None
        self.stats["fresh"] += 1
        return self.solve(partial, y, guess)

    def root(self) -> SVMNode:
        return self.node(np.zeros(self.u, dtype=int))

    def child(self, parent: SVMNode, partial: np.ndarray, j: int) -> SVMNode:
        """The node ``partial``: its parent plus the unlabeled point j."""
        row = self.unlabeled[j]
        label = float(partial[j])
        y = parent.y.copy()
        y[row] = label
        if label * parent.f[row] >= 1.0:
            # Zero loss and zero gradient at the parent's optimum: it stays optimal.
            self.stats["inherited"] += 1
            return SVMNode(partial, y, parent.factor, parent.beta, parent.b, parent.f,
                           parent.value)
        rows = parent.factor.rows
        factor = parent.factor.appended(row, self.K[rows, row], self.kdiag[row], label)
        if factor is not None:
            beta, b = factor.coefficients()
            f = self.K[:, factor.rows] @ beta + b
            if self.consistent(y, f, factor.rows):
                self.stats["appended"] += 1
                return SVMNode(partial, y, factor, beta, b, f, factor.value())
            margin = y * f
            guess = np.flatnonzero((y != 0) & (margin < 1.0))
        else:
            guess = np.append(rows, row)
        self.stats["newton"] += 1
        return self.solve(partial, y, guess)

    def solve(self, partial, y, guess) -> SVMNode:
        """A Newton solve on the node's training set (free points get C = 0)."""
        C = np.where(y != 0, self.objective.C, 0.0)
        sol = squared_hinge_svm(self.K, np.where(y != 0, y, 1.0), C, self.bias, guess)
        factor = sol.factor
        if factor is None:
            # One class only in the training set (bias): w = 0, b = its label, value 0.
            factor = ActiveFactor.build(self.K, y, self.inv2c, np.zeros(0, dtype=int), self.bias)
            return SVMNode(partial, y, factor, np.zeros(0), sol.b, sol.outputs, 0.0)
        beta = sol.beta[factor.rows]
        return SVMNode(partial, y, factor, beta, sol.b, sol.outputs, sol.value)

    @staticmethod
    def consistent(y, f, rows) -> bool:
        """Whether the Newton point on ``rows`` is the SVM optimum on the training points."""
        margin = y * f
        inside = np.zeros(y.size, dtype=bool)
        inside[rows] = True
        return bool(np.all(margin[rows] <= 1.0 + MARGIN_TOL)
                    and np.all(margin[(y != 0) & ~inside] >= 1.0 - MARGIN_TOL))

    # -- branching and completions ---------------------------------------------------------
    def add_one_in(self, node: SVMNode, rows: np.ndarray) -> np.ndarray:
        """S'_x of Proposition 1 for the points ``rows`` (the denominator of eq. 8 over 2)."""
        factor = node.factor
        S = self.kdiag[rows].copy()
        if factor.rows.size:
            W = solve_triangular(factor.L, self.K[np.ix_(factor.rows, rows)], lower=True,
                                 check_finite=False)
            S -= np.einsum("ij,ij->j", W, W)
            if self.bias:
                S += (factor.Le @ W - 1.0) ** 2 / (factor.Le @ factor.Le)
        # S'_x >= 1/(2 C*) in exact arithmetic (a Schur complement plus the ridge).
        return np.maximum(S, self.inv2c[rows])

    def branching(self, node: SVMNode, free: np.ndarray, fR: np.ndarray) -> tuple[int, int]:
        """Rule (7): the free point whose unlikely label raises s most; its likely label first."""
        S = self.add_one_in(node, self.unlabeled[free])
        # (A strong-branching-like product of both rises made the two moons trees 5-20 times
        # larger: Chapelle et al.'s rule (7), whose unlikely child is pruned at once, is kept.)
        rise = (1.0 + np.abs(fR)) ** 2 / (2.0 * S)
        k = int(np.argmax(rise))
        return int(free[k]), (1 if fR[k] >= 0 else -1)

    def confident_completion(self, partial, free, fR) -> Optional[np.ndarray]:
        """The completion by sign f when every free point has |f| >= 1 and the count fits."""
        if np.any(np.abs(fR) < 1.0):
            return None
        signs = np.where(fR > 0, 1, -1)
        labels = partial.astype(int).copy()
        labels[free] = signs
        if self.positives is not None and int(np.sum(labels == 1)) != self.positives:
            return None
        if self.links is not None and not self.links.consistent(labels):
            return None
        return labels
