"""A scikit-learn style estimator over any formulation with an explicit decision function.

    clf = S3VMClassifier("vs3vm", mu=0.1, nu=1.0).fit(X, y)   # y: +1/-1 labeled, 0 unlabeled
    clf.transduction_        # labels of every training row
    clf.predict(X_new)       # sign of the decision function, ties to +1

The LP/MIP family (Problem 3) decides with f(x) = sum_k w_k phi_k(x) + b, where phi is x itself
(linear kernel) or the kernel values against every training point (rbf).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .data import Instance
from .solvers.errors import InputError
from .kernels import kernel_matrix
from .settings import SETTING_KEYS, Settings


class S3VMClassifier:
    """Fit a formulation on partially labeled data; predict with its decision function.

    Parameters
    ----------
    formulation : str
        A registry name with a linear or kernel-expansion decision function
        (rlp, svm1, bd-mip, vs3vm, cvs3vm).
    solver : str, optional
        Solver name (default: the formulation's default through its profile).
    profile : str, optional
        Solver profile file.
    time_limit : float, optional
    **params
        :class:`Settings` fields (kernel, sigma, mu, nu, balance, ...) and formulation options
        (max_lps, clusters, label_fraction, seed, lp_form, ...).

    Attributes
    ----------
    result_ : s3vm.solvers.results.Result
    transduction_ : ndarray of shape (n,)
        Given labels on labeled rows, the formulation's labels on the others.
    coef_ : ndarray
        w (features for the linear kernel, expansion coefficients for rbf).
    intercept_ : float
        b.
    """

    def __init__(self, formulation: str = "vs3vm", *, solver: Optional[str] = None,
                 profile: Optional[str] = None, time_limit: Optional[float] = None, **params):
        self.formulation = formulation
        self.solver, self.profile, self.time_limit = solver, profile, time_limit
        self.params = params

    def get_params(self, deep: bool = True) -> dict:
        return dict(formulation=self.formulation, solver=self.solver, profile=self.profile,
                    time_limit=self.time_limit, **self.params)

    def set_params(self, **params) -> "S3VMClassifier":
        for key in ("formulation", "solver", "profile", "time_limit"):
            if key in params:
                setattr(self, key, params.pop(key))
        self.params.update(params)
        return self

    def fit(self, X, y, truth=None) -> "S3VMClassifier":
        """Solve the formulation on rows X with labels y (+1/-1, 0 for unlabeled).

        ``truth`` is needed only by formulations that call an oracle (cvs3vm).
        """
        from . import api

        instance = Instance(X, y, truth=truth, name="fit")
        settings = Settings(**{k: v for k, v in self.params.items() if k in SETTING_KEYS})
        options = {k: v for k, v in self.params.items() if k not in SETTING_KEYS}
        result = api.solve(instance, self.formulation, settings, solver=self.solver,
                           profile=self.profile, time_limit=self.time_limit, options=options)
        if "w" not in result.primal:
            raise InputError(f"formulation {self.formulation!r} found no solution "
                             f"(status {result.status}): nothing to predict with")
        self.result_ = result
        self.settings_ = settings
        self.basis_ = None if settings.kernel == "linear" else instance.X
        self.coef_ = np.asarray(result.primal["w"], dtype=float)
        self.intercept_ = float(result.primal["b"])
        transduction = instance.label.astype(int).copy()
        transduction[instance.unlabeled] = result.labels
        self.transduction_ = transduction
        self.classes_ = np.array([-1, 1])
        return self

    def decision_function(self, X) -> np.ndarray:
        """f(x); larger means +1."""
        if not hasattr(self, "coef_"):
            raise InputError("this S3VMClassifier is not fitted yet: call fit first")
        X = Instance(X, np.zeros(len(X))).X  # the same validation as training data
        if self.basis_ is None:
            if X.shape[1] != self.coef_.shape[0]:
                raise InputError(f"X has {X.shape[1]} features, the model {self.coef_.shape[0]}")
            features = X
        else:
            if X.shape[1] != self.basis_.shape[1]:
                raise InputError(f"X has {X.shape[1]} features, the model "
                                 f"{self.basis_.shape[1]}")
            features = kernel_matrix(X, self.basis_, self.settings_.kernel, self.settings_.sigma)
        return features @ self.coef_ + self.intercept_

    def predict(self, X) -> np.ndarray:
        """+1 where the decision function is >= 0, else -1."""
        return np.where(self.decision_function(X) >= 0, 1, -1)

    def score(self, X, y) -> float:
        """Accuracy of :meth:`predict` against y (+1/-1)."""
        return float(np.mean(self.predict(X) == np.asarray(y)))
