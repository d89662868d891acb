"""``sdp``: De Bie and Cristianini's SDP relaxation of transductive SVM (Problem 2).

De Bie and Cristianini (2006), (7.4)-(7.5), and (2003), (9)-(10); docs/formulations.md#sdp. The
reduced form of the chapter's Propositions 7.3 and 7.4, with the equivalence and inequivalence
constraints of its section 7.3.1 (docs/formulations.md#groups). Every point's label is a signed
copy of a representative's, y_i = s_i z_(r_i) (:class:`s3vm.data.instance.LabelMap`): representative
0 is the labeled class (z_0 = +1), the others are the free groups (without groups: the unlabeled
points). So the label matrix is Gamma = L Gamma_c L' with L (n x (1 + m)) holding s_i at
(i, r_i), and

    Gamma_c = [[1, g'], [g, G]]        (g: relaxed labels of the m free representatives, G: m x m)

is the label matrix of the representatives: the labeled block and every pair within a group are
fixed, and a group of k points costs one row and column instead of k. The relaxation is

    min  t
    s.t. Gamma_c PSD,   diag(G) = 1,   mu >= 0,  nu >= 0,
         [[K o (L Gamma_c L'), 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD

(hard margin: mu = 0 and no C term). Gamma_c PSD is Gamma PSD (Proposition 7.4 with L for the
block diag(y_L, I)), and diag(Gamma) = 1 since every row of L has one entry +-1. Without groups,
L = [[y_L, 0], [0, I_u]] and this is the form of Propositions 7.3/7.4. Its optimum is a lower
bound on min_y D(y) over the labelings that meet the groups; D at the rounded labels is an upper
bound.
The count balance sum_(j in U) y_j = 2P - u is linear in g: e_U'L[U] (1, g) = 2P - u.

Two CVXPY forms of this one relaxation (option ``sdp_form``):

- ``dual`` (default): the low-rank dual of :mod:`s3vm.models.lowrank_dual` with V = L and an exact
  kernel factor K = G G' (docs/formulations.md#low-rank-dual): 2n scalar variables and one LMI of
  size (1 + m) + rank(K), against about m^2/2 variables above. Interior-point solvers (SDPA,
  Clarabel, MOSEK) spend their time on a Schur complement of the number of scalar variables, so
  this form is one to two orders of magnitude faster; Gamma_c is the dual matrix of its LMI, and
  every solve gives a certified lower bound (:func:`s3vm.models.lowrank_dual.certified_value`).
- ``primal``: the model above, as written by De Bie and Cristianini (and as the MOSEK Fusion
  model exports it).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from s3vm.core.options import Option
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance
from s3vm.formulations.families.conic import ConicFormulation
from s3vm.models.conic import ConicModel, balance_coefficients, problem2_penalties, svm_lmi
from s3vm.models.fusion.sdp import build_sdp
from s3vm.models.kernel_factor import dual_scale, kernel_factor
from s3vm.models.lowrank_dual import COMPONENTS, lowrank_dual_model


class SDPRelaxation(ConicFormulation):
    """The full SDP relaxation (``--C``/``--C-star`` soft margin or ``--hard-margin``), with the
    data's groups (``group`` column) as equivalence and inequivalence constraints.

    Parameters
    ----------
    rounding : {"gamma", "eigenvector"}
        Labels from sign(g) (section 7.1.3) or from the dominant eigenvector of Gamma.
    """

    name: ClassVar[str] = "sdp"
    components: ClassVar[dict] = {
        **COMPONENTS,
        "V": "the label map L (sdp_form='dual', the default); with sdp_form='primal' the "
             "variables are 'gamma_u' (g, the free representatives' relaxed labels), "
             "'Gamma_uu' (G), 't', 'nu', 'mu', and Gamma_c = [[1, g'], [g, G]] >> 0, "
             "diag(G) = 1"}
    #: peak bytes per n^2 entry (linear, rbf), measured: the PSD block of size n + 1 and the
    #: solver's copies; rbf 1,180 to 1,290 at n = 600 and 900 (a full-rank K o Gamma in CVXPY)
    dense_bytes: ClassVar[tuple] = (400, 1400)
    summary: ClassVar[str] = "SDP relaxation of the transductive SVM (De Bie-Cristianini)"
    # SDPA (extra ``sdpa``) is several times faster than SCS on this model and accurate;
    # Clarabel's dense KKT system of the PSD block makes it the slowest here.
    preferred_solvers: ClassVar[tuple] = ("sdpa", "scs")
    options: ClassVar[tuple] = ConicFormulation.options + (
        Option("sdp_form", "choice", "dual", "sdp: the CVXPY model as the low-rank dual (fast, "
               "certified bound) or as the primal of De Bie and Cristianini",
               choices=("dual", "primal")),)

    def build_cvxpy(self, instance: Instance, settings: Settings) -> ConicModel:
        if self.sdp_form == "dual":
            return self.build_cvxpy_dual(instance, settings)
        return self.build_cvxpy_primal(instance, settings)

    def build_cvxpy_dual(self, instance: Instance, settings: Settings) -> ConicModel:
        """The low-rank dual with V = L (sparse) and an exact factor of K."""

        C = problem2_penalties(instance, settings)
        lm = instance.label_map()
        L = lm.matrix()
        G, _ = kernel_factor(instance, settings, rank=instance.n)
        built = lowrank_dual_model(G, L, C, self._balance(instance, settings, lm),
                                   dual_scale(G, instance, C))
        unl = instance.unlabeled
        rep_u, sign_u = lm.rep[unl], lm.sign[unl]
        dual_m = built.read["M"]

        def m_value():
            # The dual's M meets diag <= 1; raising a diagonal entry to 1 adds a PSD term, which
            # keeps M optimal (it can only lower the inner maximum), and gives Gamma_c of the
            # primal (unit diagonal: the fixed labels read as +-1).
            M = dual_m()
            return M + np.diag(np.maximum(1.0 - np.diag(M), 0.0))

        built.read["M"] = m_value
        built.read["gamma_u"] = lambda: sign_u * m_value()[rep_u, 0]
        Ld = L.toarray()
        built.read["gamma_full"] = lambda: Ld @ m_value() @ Ld.T
        built.info["lmi_sizes"] = [lm.size + G.shape[1]]
        return built

    @staticmethod
    def _balance(instance: Instance, settings: Settings, lm) -> "tuple | None":
        """(s, v+, rhs) of the count balance for V = L: s = L_U'1, v+ = e_0 (the row of a labeled
        positive point), rhs = 2P - u."""
        if settings.balance != "count":
            return None
        unl = instance.unlabeled
        s = np.zeros(lm.size)
        np.add.at(s, lm.rep[unl], lm.sign[unl])
        vp = np.zeros(lm.size)
        vp[0] = 1.0
        return s, vp, float(2 * settings.positive_count(instance) - instance.u)

    def build_cvxpy_primal(self, instance: Instance, settings: Settings) -> ConicModel:
        """The primal of Propositions 7.3/7.4 with Gamma_c a matrix variable."""
        import cvxpy as cp

        K = self.kernel(instance, settings)
        C = problem2_penalties(instance, settings)
        n = instance.n
        lm = instance.label_map()
        m = lm.size - 1
        L = lm.matrix()

        col = lambda v, k: cp.reshape(v, (k, 1), order="F")  # noqa: E731
        constraints = []
        if m:
            G = cp.Variable((m, m), symmetric=True, name="Gamma_uu")
            g = cp.Variable(m, name="gamma_u")
            head = cp.bmat([[np.ones((1, 1)), col(g, m).T], [col(g, m), G]])
            constraints += [head >> 0, cp.diag(G) == 1]
        else:
            # Every unlabeled point is tied to a labeled one: Gamma is fixed, the SVM is supervised.
            g, head = None, cp.Constant(np.ones((1, 1)))
        # L Gamma_c L' selects and signs Gamma_c's entries (one entry per row of L).
        Gamma = (cp.Constant(L) @ head) @ cp.Constant(L.T)
        t, lmi = svm_lmi(K, Gamma, C)
        constraints.append(lmi)
        if settings.balance == "count":
            c, fixed = balance_coefficients(instance)
            rhs = 2 * settings.positive_count(instance) - instance.u + fixed
            constraints.append((c @ g if m else cp.Constant(0.0)) == rhs)
        problem = cp.Problem(cp.Minimize(t), constraints)
        unl = instance.unlabeled
        rep_u, sign_u = lm.rep[unl], lm.sign[unl]

        def gamma_u():
            # Gamma[U, i+] for a labeled positive i+: s_j (1, g)[r_j].
            free = np.zeros(0) if g is None else np.asarray(g.value, dtype=float)
            return sign_u * np.concatenate([[1.0], free])[rep_u]

        def gamma_full():
            return np.asarray(Gamma.value, dtype=float)

        return ConicModel(problem, read={"gamma_u": gamma_u, "gamma_full": gamma_full},
                          info={"lmi_sizes": [n + 1, m + 1]})

    def build_fusion(self, instance: Instance, settings: Settings) -> ConicModel:
        return build_sdp(self.kernel(instance, settings), problem2_penalties(instance, settings),
                         instance, settings)
