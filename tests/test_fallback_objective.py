"""The labels of a stopped solve that had none of its own (the supervised SVM's) carry the
formulation's objective at those labels, checked against an independent computation:
scipy's L-BFGS-B for J (Problem 1) and D(y) (Problem 2), scipy's linprog for the
Bennett-Demiriz LP (Problem 3, tests/reference.py). Issue 29: l2-miqp at a limit reached while its model was built
returned the supervised SVM's labels without their objective."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from reference import problem3_columns, problem3_labeling_lp

import s3vm
from s3vm.api import load
from s3vm.core.registry import formulation_class, formulation_names
from s3vm.core.settings import Settings
from s3vm.solvers.runtime.clock import Stopped

# No term of the unlabeled rows: no labeling has an objective of its own.
SUPERVISED = {"rlp", "svm1"}


def j_by_lbfgs(X, y, C, bias):
    """J(y) of the squared-hinge linear SVM (Problem 1), by L-BFGS-B."""
    def fun(x):
        w, b = x[:-1], x[-1] if bias else 0.0
        slack = np.maximum(0.0, 1.0 - y * (X @ w + b))
        grad_f = -2.0 * C * slack * y
        grad_b = grad_f.sum() if bias else 0.0
        return 0.5 * w @ w + C * slack @ slack, np.r_[w + X.T @ grad_f, grad_b]
    res = minimize(fun, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    return res.fun


def d_by_lbfgs(X, y, C):
    """D(y) = max 2 1'a - a'(K o yy')a over 0 <= a <= C, linear K (Problem 2), by L-BFGS-B."""
    Q = (X @ X.T) * np.outer(y, y)
    res = minimize(lambda a: (a @ Q @ a - 2 * a.sum(), 2 * Q @ a - 2), np.zeros(len(y)),
                   jac=True, method="L-BFGS-B", bounds=[(0, c) for c in C],
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    return -res.fun


def independent_objective(name, instance, settings, labels):
    problem = formulation_class(name).problem
    X = np.asarray(instance.X, dtype=float)
    y = instance.label.astype(float)
    y[instance.unlabeled] = labels
    C = np.where(np.isin(np.arange(instance.n), instance.labeled), settings.C,
                 settings.C_unlabeled)
    if problem == 1:
        return j_by_lbfgs(X, y, C, settings.bias)
    if problem == 2:
        return d_by_lbfgs(X, y, C)
    A, d, B = problem3_columns(instance, settings.kernel, settings.sigma)
    return problem3_labeling_lp(A, d, B, labels, settings.mu, settings.nu)[0]


@pytest.mark.parametrize("name", [n for n in formulation_names() if n not in SUPERVISED])
def test_a_stopped_solves_fallback_labels_carry_their_objective(name, monkeypatch):
    cls = formulation_class(name)

    def stopped_at_once(self, instance, settings, backend, profile, clock, result):
        raise Stopped("time limit")  # as a model build cut short by the limit

    monkeypatch.setattr(cls, "run", stopped_at_once)
    result = s3vm.solve("blobs_small", name, time_limit=30)
    assert result.status == "time_limit"
    assert result.info["labels_from"] == "supervised SVM"
    instance, _ = load("blobs_small")
    settings = Settings(**result.info["settings"])  # the settings the solve used
    expected = independent_objective(name, instance, settings, np.asarray(result.labels))
    assert result.objective == pytest.approx(expected, rel=1e-5, abs=1e-7), name
    assert "scored by" in result.message


@pytest.mark.parametrize("name", sorted(SUPERVISED))
def test_a_supervised_lps_fallback_labels_have_no_objective(name, monkeypatch):
    # rlp and svm1 have no term of the unlabeled rows: no labeling has an objective.
    cls = formulation_class(name)
    monkeypatch.setattr(cls, "run", lambda *a: (_ for _ in ()).throw(Stopped("time limit")))
    result = s3vm.solve("blobs_small", name, time_limit=30)
    assert result.status == "time_limit" and result.labels is not None
    assert result.objective is None
