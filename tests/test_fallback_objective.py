"""The labels of a stopped solve that had none of its own (the supervised SVM's) carry the
formulation's objective at those labels, checked against an independent computation
(tests/reference.py): scipy's L-BFGS-B for J (Problem 1), CVXPY and Clarabel for D(y) (Problem
2), scipy's linprog for the Bennett-Demiriz LP (Problem 3). Issue 29: l2-miqp at a limit reached
while its model was built returned the supervised SVM's labels without their objective."""

from __future__ import annotations

import numpy as np
import pytest

import s3vm
from s3vm.api import load
from s3vm.core.registry import formulation_class, formulation_names
from s3vm.core.settings import Settings
from s3vm.solvers.runtime.clock import Stopped

from reference import labeling_objective_reference

# No term of the unlabeled rows: no labeling has an objective of its own.
SUPERVISED = {"rlp", "svm1"}


def independent_objective(name, instance, settings, labels):
    return labeling_objective_reference(formulation_class(name).problem, instance, settings,
                                        labels)


@pytest.mark.solver
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
