"""``sdp``: De Bie and Cristianini's SDP relaxation of transductive SVM (Problem 2, seed 003).

The reduced form of Propositions 7.3 and 7.4: with the labeled block of the label matrix fixed
to y_L y_L', the matrix is

    Gamma = [[y_L y_L', y_L g'], [g y_L', G]]        (g: relaxed unlabeled labels, G: u x u)

and the relaxation is

    min  t
    s.t. [[1, g'], [g, G]] PSD,   diag(G) = 1,   mu >= 0,  nu >= 0,
         [[K o Gamma, 1 - mu + nu], [(1 - mu + nu)', t - 2 C'mu]] PSD

(hard margin: mu = 0 and no C term). Its optimum is a lower bound on min_y D(y); D at the labels
sign(g) is an upper bound. The count balance is e'g = 2P - u, linear in g.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .conic_formulation import ConicFormulation, ConicModel, problem2_penalties


class SDPRelaxation(ConicFormulation):
    """The full SDP relaxation (``--C``/``--C-star`` soft margin or ``--hard-margin``).

    Parameters
    ----------
    rounding : {"gamma", "eigenvector"}
        Labels from sign(g) (section 7.1.3) or from the dominant eigenvector of Gamma.
    """

    name: ClassVar[str] = "sdp"
    summary: ClassVar[str] = "SDP relaxation of the transductive SVM (De Bie-Cristianini)"

    def build_cvxpy(self, instance, settings) -> ConicModel:
        import cvxpy as cp

        K = self.kernel(instance, settings)
        C = problem2_penalties(instance, settings)
        lab, unl = instance.labeled, instance.unlabeled
        l, u, n = len(lab), len(unl), instance.n
        # Order rows labeled first, as the seed does; K is permuted to match.
        order = np.concatenate([lab, unl])
        Kp = K[np.ix_(order, order)]
        yl = instance.label[lab].astype(float)

        G = cp.Variable((u, u), symmetric=True, name="Gamma_uu")
        g = cp.Variable(u, name="gamma_u")
        t = cp.Variable(name="t")
        nu = cp.Variable(n, nonneg=True, name="nu")
        col = lambda v, m: cp.reshape(v, (m, 1), order="F")  # noqa: E731
        cross = col(g, u) @ yl[None, :]                       # g y_L'
        Gamma = cp.bmat([[np.outer(yl, yl), cross.T], [cross, G]])
        if C is None:
            v, corner = 1 + nu, t
            constraints = []
        else:
            mu = cp.Variable(n, nonneg=True, name="mu")
            Cp = C[order]
            v, corner = 1 - mu + nu, t - 2 * (Cp @ mu)
            constraints = []
        lmi = cp.bmat([[cp.multiply(Kp, Gamma), col(v, n)],
                       [col(v, n).T, cp.reshape(corner, (1, 1), order="F")]])
        head = cp.bmat([[np.ones((1, 1)), col(g, u).T], [col(g, u), G]])
        constraints += [lmi >> 0, head >> 0, cp.diag(G) == 1]
        if settings.balance == "count":
            constraints.append(cp.sum(g) == 2 * settings.positive_count(instance) - u)
        problem = cp.Problem(cp.Minimize(t), constraints)

        def gamma_full():
            full = np.empty((n, n))
            inv = np.empty(n, dtype=int)
            inv[order] = np.arange(n)
            Gv = np.asarray(Gamma.value)
            return Gv[np.ix_(inv, inv)]

        return ConicModel(problem, read={"gamma_u": lambda: g.value, "gamma_full": gamma_full},
                          info={"lmi_sizes": [n + 1, u + 1]})

    def build_fusion(self, instance, settings) -> ConicModel:
        from .fusion.sdp import build_sdp

        return build_sdp(self.kernel(instance, settings), problem2_penalties(instance, settings),
                         instance, settings)
