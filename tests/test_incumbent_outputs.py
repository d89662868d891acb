"""A search publishes its incumbent's decision values with it, whatever found it.

Under heavy load, bb-sdp stopped during its root answered labels without decision values: the
driver's incumbent reached the clock bare (the Shor problem published none, unlike bb-mip's LP
relaxation), and a worker that could not return within its grace period left only the clock's
snapshot. These tests stop the search at a point that does not depend on the load: a root bound
that stops the clock itself and then cannot be cut short (as an SDP solve in C).

The decision values are checked independently: for S3VM-L2 (bb, bb-sdp) against the primal of
the squared-hinge SVM at the incumbent's labels by scipy's L-BFGS-B (linear kernel: f = X w + b);
for bb-mip through the Bennett-Demiriz labeling LP at those labels (scipy's linprog): its w need
not be unique, so the outputs are checked by the LP's value with them fixed, which equals the
optimum only for the outputs of an optimal solution.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import s3vm
from s3vm.api import load
from s3vm.core.registry import formulation_class
from s3vm.core.settings import Settings
from s3vm.solvers.runtime.clock import TIME_LIMIT

from reference import problem3_columns, problem3_labeling_lp, svm_by_lbfgs

pytestmark = [pytest.mark.slow, pytest.mark.solver]

SEARCHES = ("bb", "bb-mip", "bb-sdp")


def problem3_value_at_outputs(A, d, B, labels, f_unlabeled, mu, nu):
    """The labeling LP's objective with the unlabeled outputs B w - g fixed at ``f_unlabeled``:
    the cheapest labeled slack and mu-weighted 1-norm of w meeting them (scipy's linprog over
    w, g, y, z), plus nu times the unlabeled rows' hinge at those outputs. It equals the LP's
    optimum exactly when the outputs are those of an optimal solution."""
    from scipy.optimize import linprog

    l, p = A.shape
    u = B.shape[0]
    c = np.concatenate([np.zeros(p + 1), np.ones(l), mu * np.ones(p)])
    rows = [np.hstack([-d[:, None] * A, d[:, None], -np.eye(l), np.zeros((l, p))]),
            np.hstack([np.eye(p), np.zeros((p, 1 + l)), -np.eye(p)]),
            np.hstack([-np.eye(p), np.zeros((p, 1 + l)), -np.eye(p)])]
    b = np.concatenate([-np.ones(l), np.zeros(2 * p)])
    A_eq = np.hstack([B, -np.ones((u, 1)), np.zeros((u, l + p))])
    bounds = [(None, None)] * (p + 1) + [(0, None)] * (l + p)
    res = linprog(c, A_ub=np.vstack(rows), b_ub=b, A_eq=A_eq, b_eq=f_unlabeled, bounds=bounds,
                  method="highs")
    assert res.status == 0, res.message
    return float(res.fun) + nu * float(np.maximum(0.0, 1.0 - labels * f_unlabeled).sum())


def stop_at_the_root(monkeypatch, name, release: threading.Event):
    """Make the root bound of ``name``'s problem stop the clock itself (the time limit) and then
    hold its worker until ``release`` is set, as an SDP solve in C that no stop reaches."""
    cls = formulation_class(name)
    made = cls.labeling_problem

    def labeling_problem(self, instance, settings, backend, profile, clock=None):
        problem = made(self, instance, settings, backend, profile, clock)

        def bound(partial, parent_state=None):
            clock.stop(TIME_LIMIT)
            release.wait(60)
            raise RuntimeError("released")

        problem.bound = bound
        return problem

    monkeypatch.setattr(cls, "labeling_problem", labeling_problem)


@pytest.mark.parametrize("name", SEARCHES)
def test_a_search_stopped_in_its_root_answers_its_incumbents_decision_values(name, monkeypatch):
    release = threading.Event()
    stop_at_the_root(monkeypatch, name, release)
    try:
        # a limit far away: the stop is the root's own, the worker abandoned after its grace
        result = s3vm.solve("blobs_small", name, kernel="linear", time_limit=20)
    finally:
        release.set()
    assert result.status == "time_limit", result.message
    assert result.message.startswith("time limit reached while bounding the root node"), \
        result.message
    assert result.info.get("labels_from") is None  # the search's incumbent, not a fallback
    assert result.labels is not None and result.objective is not None
    assert result.decision_values is not None, result.message
    instance, _ = load("blobs_small")
    settings = Settings(**result.info["settings"])
    labels = np.asarray(result.labels, dtype=float)
    f = np.asarray(result.decision_values, dtype=float)
    if formulation_class(name).problem == 1:
        X = np.asarray(instance.X, dtype=float)
        y = instance.label.astype(float)
        y[instance.unlabeled] = labels
        C = np.where(instance.label != 0, settings.C, settings.C_unlabeled)
        value, outputs = svm_by_lbfgs(X, y, C, settings.bias)
        assert result.objective == pytest.approx(value, rel=1e-5, abs=1e-7)
        np.testing.assert_allclose(f, outputs[instance.unlabeled], rtol=1e-4, atol=1e-5)
    else:
        A, d, B = problem3_columns(instance, settings.kernel, settings.sigma)
        optimum = problem3_labeling_lp(A, d, B, labels, settings.mu, settings.nu)[0]
        assert result.objective == pytest.approx(optimum, rel=1e-6, abs=1e-7)
        at_f = problem3_value_at_outputs(A, d, B, labels, f, settings.mu, settings.nu)
        assert at_f == pytest.approx(optimum, rel=1e-5, abs=1e-6)
