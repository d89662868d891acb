"""Lower bounds for S3VM-L2 without bias from the SDP relaxation of Problem 2.

docs/formulations.md#no-bias gives the mapping, docs/formulations.md#bb-sdp the use.

Without a bias, the squared-hinge S3VM objective of a full labeling y is

    J(y) = D(y) / 2,   D(y) = max_{a >= 0} 2 1'a - a'(K' o yy')a,   K' = K + diag(1 / (2 C_i))

(C_i = C on labeled points, C* on unlabeled ones): a hard-margin SVM on K'. A node fixes the
labels of some unlabeled points; they join the labeled block. With S the labeled and fixed
points (labels y_S), F the f free ones, and points ordered S then F, every completion y_F gives

    Gamma = yy' = T H T',   T = [[y_S, 0], [0, I_f]],   H = [1; y_F][1; y_F]'.

Relaxing H to {H PSD, diag(H) = 1, sum_k H_0k = 2P' - f} (the last constraint is the count
balance with P' positives still to place; absent without balance) gives the reduced SDP of De
Bie and Cristianini (2006), Propositions 7.3/7.4 (the form of :class:`s3vm.sdp.SDPRelaxation`
with T made explicit)::

    min t   s.t.  [[K'_node o (T H T'), 1 + nu], [(1 + nu)', t]] PSD,   nu >= 0,   H in the set,

whose optimum is min over relaxed H of D, hence a lower bound on min D over the subtree;
the node's bound on J is half of it.

A certified bound, whatever the solver's accuracy
---------------------------------------------------
The SDP is solved approximately (SCS to about 1e-4, Clarabel to about 1e-8), and an approximate
optimum can exceed the true one and prune the optimal labeling. The bound returned is therefore
not the solver's value but one that weak duality proves from the solver's output: for any
a >= 0 and every feasible H,

    D_relaxed(H) >= 2 1'a - <H, M~(a)>,    M~(a) = T' (K'_node o aa') T,

and for any (lambda, eta), with  S = Diag(lambda) + eta E - M~(a)  and E = (e_0 1_F' + 1_F e_0')/2
(so that <H, E> = sum_k H_0k),

    <H, M~(a)> <= 1'lambda + eta (2P' - f) + (f + 1) max(0, -lambda_min(S))

(add the shift to every lambda_i and S becomes PSD; then <H, S> >= 0). So

    bound = [2 1'a - 1'lambda - eta (2P' - f) - (f + 1) max(0, -lambda_min(S))] / 2

is a valid lower bound on J for any a >= 0, lambda, eta; only its tightness depends on them. Two
choices are tried at every node and the larger bound kept:

- the solver's: a from the dual matrix Z of the big LMI (a = -Z[:n, n] / Z[n, n], clipped at 0:
  the SVM dual of the relaxation), lambda fitted by least squares to the complementary slackness
  S H* = 0 at the solver's H* (affine in eta), and eta by a 1-D concave maximisation of the bound;
- the rounded labeling's: a the exact SVM dual at the node's rounded labeling y (from the Newton
  solver) and H = zz', z = [1; y_F]. When the relaxation is tight at the node (its optimum is
  that rank-one matrix) this certificate is exact to rounding, so the node is pruned against an
  incumbent equal to it, where the solver's certificate, some 1e-7 below, would let the search
  explore the whole subtree for want of the solver's last digits.

lambda_min is computed by a dense eigensolver, with a margin for its rounding. The solver's
certificate lies within about 1e-6 (relative) of the SDP value with Clarabel or SCS: an inexact
solve costs tightness of that size instead of overshooting the optimum by it. So every SDP backend
is safe here; SCS (the sdp class's default) and Clarabel reached the same node counts on two-moons
instances with u = 14, Clarabel in less time per node at these sizes (``--solver clarabel``).
A child's feasible set lies in its parent's, so the parent's bound is also kept when larger.

Two accuracies
--------------
Since any solver output gives a valid bound, SCS first solves each node at a loose accuracy
(LOOSE_EPS), several times faster than at CVXPY's default 1e-4. When that certificate prunes
the node (it reaches the driver's cutoff, :meth:`notify_cutoff`), the node is done. Otherwise
SCS solves it again at the profile's accuracy (CVXPY's warm start from the loose point saved no
iterations in a check, so the second solve starts afresh), and the node's bound, rounded labels
and branching come from that second solve (of the two rounded labelings, the better is offered
as an incumbent). The tree is therefore the one tight solves give; only pruned nodes are
cheaper. (Branching and bounds from loose solves alone were tried: the search then grew up to
13 times larger on two moons with u = 40 and exploded at eps 3e-2.) A profile that sets SCS's ``eps_abs``/``eps_rel`` (or any other solver) disables
this: each node is solved once, as the profile says.

Candidate incumbent at every node: the free points' relaxed labels H_0k rounded (the P' largest to
+1 under the count balance), scored exactly by the squared-hinge SVM without bias
(:func:`s3vm.l2_svm.squared_hinge_svm`, finite Newton), each labeling once.
Branching: the free point with the smallest |H_0k| (the one the relaxation is least sure of),
the child with the label sign(H_0k) first.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .solvers.bnb.problem import LabelingProblem, NodeBound, labels_by_outputs

EIG_SAFETY = 64 * np.finfo(float).eps  # times |S|_F: rounding of the computed lambda_min
MODEL_CACHE = 64  # compiled node SDPs kept (one per number of free points)
# SCS's accuracy for the first solve of a node (see "Two accuracies" in the module docstring).
LOOSE_EPS = 1e-2


def loose_profile(backend, profile):
    """The profile of a node's first solve: SCS at ``LOOSE_EPS`` unless the user set its
    accuracy; None for other solvers (each node is then solved once, as the profile says)."""
    if getattr(backend, "name", None) != "scs":
        return None
    if {"eps", "eps_abs", "eps_rel"} & set(profile.options):
        return None
    return profile.updated(options={**profile.options, "eps_abs": LOOSE_EPS, "eps_rel": LOOSE_EPS})


def l2_kernel(K: np.ndarray, C: np.ndarray) -> np.ndarray:
    """K' = K + diag(1 / (2 C_i)): the squared hinge as a hard margin
    (docs/formulations.md#problem-1-dual)."""
    C = np.broadcast_to(np.asarray(C, dtype=float), (K.shape[0],))
    if np.any(C <= 0):
        raise ValueError("C and C* must be > 0 for S3VM-L2")
    return K + np.diag(0.5 / C)


class SDPRelaxationProblem(LabelingProblem):
    """S3VM-L2 without bias as a :class:`LabelingProblem`, bounded by the SDP relaxation.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The kernel matrix of all points (instance order).
    label : ndarray of shape (n,)
        +1/-1 on labeled points, 0 on unlabeled ones.
    C : float or ndarray of shape (n,)
        Per-point penalties C_i (C on labeled, C* on unlabeled points).
    backend : s3vm.solvers.backends.cvxpy_conic.CvxpyBackend
        The SDP solver of every node.
    profile : s3vm.solvers.profiles.SolverProfile
    positives : int, optional
        The balance count: exactly P unlabeled points labeled +1.

    Attributes
    ----------
    sdp_solves, sdp_seconds : int, float
        SDPs solved and the solver's time on them.
    relaxation_values : list of float
        The solver's raw SDP value / 2 at each node solved (for comparison with the certified
        bounds; never used as a bound).
    """

    def __init__(self, K: np.ndarray, label: np.ndarray, C, backend, profile,
                 positives: Optional[int] = None):
        self.K = np.asarray(K, dtype=float)
        self.C = np.broadcast_to(np.asarray(C, dtype=float), (self.K.shape[0],)).copy()
        self.Kp = l2_kernel(self.K, self.C)
        label = np.asarray(label, dtype=int)
        self.lab = np.flatnonzero(label != 0)
        self.unl = np.flatnonzero(label == 0)
        self.yL = label[self.lab].astype(float)
        self.n, self.u = len(label), len(self.unl)
        self.positives = positives
        self.backend, self.profile = backend, profile
        # J of every labeling scored (bytes of the labels -> value), and the last SVM trained.
        self._values: dict = {}
        self._last = None
        self.sdp_solves = 0
        self.tight_solves = 0
        self.sdp_seconds = 0.0
        self.loose_profile = loose_profile(backend, profile)
        self.cutoff = np.inf
        self.relaxation_values: list[float] = []
        self._models: dict[int, NodeSDP] = {}

    @classmethod
    def from_instance(cls, instance, settings, backend, profile) -> "SDPRelaxationProblem":
        """The problem of ``instance`` with ``settings`` (kernel, C, C*, balance)."""
        from .kernels import kernel_matrix

        K = kernel_matrix(instance.X, None, settings.kernel, settings.sigma)
        C = np.full(instance.n, float(settings.C))
        C[instance.unlabeled] = settings.C_unlabeled
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        return cls(K, instance.label, C, backend, profile, positives)

    # -- exact values ---------------------------------------------------------------------
    def _full_labels(self, labels: np.ndarray) -> np.ndarray:
        y = np.zeros(self.n)
        y[self.lab] = self.yL
        y[self.unl] = labels
        return y

    def _solve_labeling(self, labels: np.ndarray):
        from .l2_svm import squared_hinge_svm

        key = np.asarray(labels, dtype=np.int8).tobytes()
        if self._last is None or self._last[0] != key:
            solution = squared_hinge_svm(self.K, self._full_labels(labels), self.C, bias=False)
            self._last = (key, solution)
            self._values[key] = float(solution.value)
        return self._last[1]

    def objective(self, labels: np.ndarray) -> float:
        """J(y): the squared-hinge SVM without bias, trained exactly (each labeling once).

        It equals D(y) / 2 of the hard-margin dual on K' (docs/formulations.md#no-bias),
        computed here by finite Newton steps rather than by a conic solver, so incumbents are
        exact.
        """
        key = np.asarray(labels, dtype=np.int8).tobytes()
        if key not in self._values:
            self._solve_labeling(labels)
        return self._values[key]

    def decision_values(self, labels: np.ndarray) -> np.ndarray:
        """f(x_j) = sum_i beta_i k(x_i, x_j) on the unlabeled points (no bias)."""
        return self._solve_labeling(labels).outputs[self.unl].copy()

    def primal(self, labels: np.ndarray) -> dict:
        """The SVM at ``labels``: expansion coefficients ``beta`` over all points, ``b`` = 0."""
        return {"beta": self._solve_labeling(labels).beta.copy(), "b": 0.0}

    def notify_cutoff(self, cutoff: float) -> None:
        """Keep the driver's cutoff: it decides whether a loose solve is redone tightly."""
        self.cutoff = float(cutoff)

    # -- the node SDP ---------------------------------------------------------------------
    def _remaining(self, partial: np.ndarray) -> Optional[int]:
        if self.positives is None:
            return None
        return self.positives - int(np.count_nonzero(partial > 0))

    def bound(self, partial: np.ndarray, parent_state: Any = None) -> NodeBound:
        """The certified SDP bound at the node (module docstring); ``state`` is that bound."""
        partial = np.asarray(partial, dtype=int)
        free = np.flatnonzero(partial == 0)
        remaining = self._remaining(partial)
        if remaining is not None and not 0 <= remaining <= free.size:
            return NodeBound(value=float("inf"))
        if remaining is not None and remaining in (0, free.size) or not free.size:
            # One completion only: its exact value is the bound (and an SDP with a forced
            # +-1 row has no strictly feasible point, which interior-point solvers dislike).
            labels = partial.copy()
            labels[free] = 1 if remaining == free.size and free.size else -1
            value = self.objective(labels)
            return NodeBound(value=value, state=value, labels=labels, labels_value=value,
                             branch_index=int(free[0]) if free.size else None)
        parent = -np.inf if parent_state is None else float(parent_state)
        fixed = np.flatnonzero(partial != 0)
        S = np.concatenate([self.lab, self.unl[fixed]])
        yS = np.concatenate([self.yL, partial[fixed].astype(float)])
        order = np.concatenate([S, self.unl[free]])
        Kn = self.Kp[np.ix_(order, order)]
        count = None if remaining is None else 2 * remaining - free.size
        data = (partial, free, remaining, order, Kn, yS, count)
        loose = self.loose_profile is not None
        solved = self._solve_node(Kn, yS, count, self.loose_profile) if loose else None
        if solved is None:
            loose = False
            solved = self._solve_node(Kn, yS, count, self.profile)
        if solved is None:  # the solver failed: the parent's bound still holds
            return NodeBound(value=parent, state=parent, branch_index=int(free[0]))
        certified, labels, labels_value, gamma = self._certify(data, solved)
        if loose and max(certified / 2.0, parent) < self.cutoff:
            tight = self._solve_node(Kn, yS, count, self.profile)
            if tight is not None:
                self.tight_solves += 1
                again, labels_t, value_t, gamma = self._certify(data, tight)
                certified = max(certified, again)
                if value_t <= labels_value:  # offer the better of the two rounded labelings
                    labels, labels_value = labels_t, value_t
        value = max(certified / 2.0, parent)
        node = NodeBound(value=value, state=value, labels=labels, labels_value=labels_value)
        k = int(np.argmin(np.abs(gamma)))
        node.branch_index = int(free[k])
        node.first_label = 1 if gamma[k] >= 0 else -1
        return node

    def _certify(self, data, solved):
        """The certified bound on the node's relaxed D from one solve, with the rounded labeling
        (labels, its J) and the relaxed labels gamma."""
        partial, free, remaining, order, Kn, yS, count = data
        a, H = solved
        gamma = H[0, 1:].copy()
        labels = partial.copy()
        labels[free] = labels_by_outputs(gamma, remaining)
        labels_value = self.objective(labels)
        # Two certificates, both valid whatever their inputs: the solver's (a from the LMI's
        # dual, (lambda, eta) fitted to its H), and the rounded labeling's (its exact SVM dual
        # and H = zz'), which is exact to rounding when the relaxation is tight at the node, so
        # that such a node is pruned instead of explored for want of the solver's last digits.
        z = np.concatenate([[1.0], labels[free].astype(float)])
        a_labels = (self._solve_labeling(labels).beta * self._full_labels(labels))[order]
        certified = max(certified_value(Kn, yS, a, H, count),
                        certified_value(Kn, yS, np.maximum(a_labels, 0.0), np.outer(z, z), count))
        if not np.isfinite(certified):
            certified = -np.inf
        return certified, labels, labels_value, gamma

    def _node_model(self, f: int) -> "NodeSDP":
        """The parametrised SDP for nodes with ``f`` free points (built once per f, LRU)."""
        model = self._models.pop(f, None)
        if model is None:
            model = NodeSDP(self.n, f, self.positives is not None)
        self._models[f] = model  # most recently used last
        while len(self._models) > MODEL_CACHE:
            self._models.pop(next(iter(self._models)))
        return model

    def _solve_node(self, Kn: np.ndarray, yS: np.ndarray, count: Optional[int],
                    profile) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """Solve the node's SDP with ``profile``: (a, H) as :meth:`NodeSDP.solution`, or None
        on failure."""
        model = self._node_model(Kn.shape[0] - len(yS))
        model.set(Kn, yS, count)
        outcome = self.backend.solve(model.problem, profile)
        self.sdp_solves += 1
        self.sdp_seconds += outcome.seconds
        solution = model.solution() if outcome.has_solution else None
        if solution is not None:
            self.relaxation_values.append(float(model.problem.value) / 2.0)
        return solution


class NodeSDP:
    """The reduced SDP of a node with f free points out of n, as one DPP CVXPY problem.

    Points are ordered S (labeled and fixed) then F (free). With H = [[1, g'], [g, G]] the blocks
    of K'_node o (T H T') are  K'_SS o y_S y_S'  (constant),  (K'_FS o 1 y_S') o (g 1')  and
    K'_FF o G: each a parameter times an affine expression of H, so the problem is DPP and
    CVXPY compiles it once; a node only sets the parameters (the compilation costs about twice
    the solve here, so this halves the time per node against rebuilding).

    Parameters
    ----------
    n, f : int
        Number of points and of free points (s = n - f fixed ones).
    balance : bool
        Whether the count constraint sum_k H_0k = 2P' - f is present.
    """

    def __init__(self, n: int, f: int, balance: bool):
        import cvxpy as cp

        s = n - f
        self.n, self.f = n, f
        self.K_SS = cp.Parameter((s, s), symmetric=True, name="K_SS_yy")
        self.K_FS = cp.Parameter((f, s), name="K_FS_y")
        self.K_FF = cp.Parameter((f, f), symmetric=True, name="K_FF")
        self.count = cp.Parameter(name="count") if balance else None
        self.H = cp.Variable((f + 1, f + 1), symmetric=True, name="H")
        t = cp.Variable(name="t")
        nu = cp.Variable(n, nonneg=True, name="nu")
        g = cp.reshape(self.H[1:, 0], (f, 1), order="F")
        cross = cp.multiply(self.K_FS, g @ np.ones((1, s)))
        block = cp.bmat([[self.K_SS, cross.T], [cross, cp.multiply(self.K_FF, self.H[1:, 1:])]])
        v = cp.reshape(1 + nu, (n, 1), order="F")
        self.lmi = cp.bmat([[block, v], [v.T, cp.reshape(t, (1, 1), order="F")]]) >> 0
        constraints = [self.lmi, self.H >> 0, cp.diag(self.H) == 1]
        if balance:
            constraints.append(cp.sum(self.H[0, 1:]) == self.count)
        self.problem = cp.Problem(cp.Minimize(t), constraints)

    def set(self, Kn: np.ndarray, yS: np.ndarray, count: Optional[float]) -> None:
        """Load a node: K' in the order S then F, the labels of S, and 2P' - f."""
        s = len(yS)
        self.K_SS.value = Kn[:s, :s] * np.outer(yS, yS)
        self.K_FS.value = Kn[s:, :s] * yS[None, :]
        self.K_FF.value = Kn[s:, s:]
        if self.count is not None:
            self.count.value = float(count)

    def solution(self) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """(a, H) of the last solve: the SVM dual read from the LMI's dual matrix Z as
        a = -Z[:n, n] / Z[n, n] clipped at 0, and H symmetrised; None when missing."""
        Z, H = self.lmi.dual_value, self.H.value
        if Z is None or H is None:
            return None
        Z, H = np.asarray(Z, dtype=float), np.asarray(H, dtype=float)
        n = self.n
        if not (Z[n, n] > 0 and np.isfinite(Z).all() and np.isfinite(H).all()):
            return None
        return np.maximum(0.0, -Z[:n, n] / Z[n, n]), (H + H.T) / 2.0


def certified_value(Kn: np.ndarray, yS: np.ndarray, a: np.ndarray, H: np.ndarray,
                    count: Optional[float]) -> float:
    """A proven lower bound on the node's relaxed D from any a >= 0 (module docstring).

    Parameters
    ----------
    Kn : ndarray of shape (n, n)
        K' with the points ordered S then F.
    yS : ndarray of shape (s,)
        Labels of S.
    a : ndarray of shape (n,)
        A nonnegative dual vector (same order).
    H : ndarray of shape (f + 1, f + 1)
        An approximate optimum of the relaxation, used only to choose (lambda, eta).
    count : float, optional
        2P' - f under the count balance, None without it.
    """
    s = len(yS)
    f = H.shape[0] - 1
    M = Kn * np.outer(a, a)
    # M~ = T' M T, T = [[y_S, 0], [0, I]].
    Mt = np.empty((f + 1, f + 1))
    Mt[0, 0] = yS @ M[:s, :s] @ yS
    Mt[0, 1:] = Mt[1:, 0] = yS @ M[:s, s:]
    Mt[1:, 1:] = M[s:, s:]
    MH = Mt @ H
    E = np.zeros((f + 1, f + 1))
    E[0, 1:] = E[1:, 0] = 0.5
    # lambda(eta) by least squares on the complementary slackness Diag(lambda) H + eta E H =
    # M~ H: lambda_i touches row i only, so each is a ratio of row sums, affine in eta.
    rows = np.maximum(np.einsum("ik,ik->i", H, H), 1e-300)
    lam0 = np.einsum("ik,ik->i", H, MH) / rows
    two_sum_a = 2.0 * float(a.sum())
    if count is None:
        return two_sum_a - _inner_bound(np.diag(lam0) - Mt, lam0.sum())
    lam1 = np.einsum("ik,ik->i", H, E @ H) / rows
    S0, S1 = np.diag(lam0) - Mt, E - np.diag(lam1)
    slope = float(count) - float(lam1.sum())

    def value(eta):
        return two_sum_a - _inner_bound(S0 + eta * S1, lam0.sum() + eta * slope)

    # value(eta) is concave (an affine term less a convex penalty): a 1-D maximisation. Any eta
    # gives a valid bound, so a search that stops early costs tightness, never validity.
    from scipy.optimize import minimize_scalar

    scale = 1.0 + float(np.abs(Mt).max())
    try:
        found = minimize_scalar(lambda e: -value(e), bracket=(0.0, 0.1 * scale),
                                options={"xtol": 1e-12, "maxiter": 200})
        best = -float(found.fun) if np.isfinite(found.fun) else -np.inf
    except (ValueError, RuntimeError, np.linalg.LinAlgError):  # no bracket, or no finite S
        best = -np.inf
    return max(best, value(0.0))


def _inner_bound(S: np.ndarray, linear: float) -> float:
    """1'lambda + eta (2P' - f) made valid: ``linear`` plus (f + 1) times the shift that makes
    S = Diag(lambda) + eta E - M~ PSD, with a margin for the eigensolver's rounding."""
    lowest = float(np.linalg.eigvalsh(S)[0])
    shift = max(0.0, -lowest) + EIG_SAFETY * float(np.linalg.norm(S))
    return linear + S.shape[0] * shift
