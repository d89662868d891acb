"""What the unlabeled rows changed, reported by local formulations (issue 34, item 4): in the
API result and in the command line's JSON answer."""

import json

import numpy as np
import pytest
from scipy.optimize import minimize

import s3vm
from s3vm.cli.main import main

#: Each test fits or solves for seconds: left out of make test-fast.
pytestmark = pytest.mark.slow


def _squared_hinge_by_lbfgs(X, y, C):
    """The linear squared-hinge SVM with bias, 0.5 |w|^2 + C sum max(0, 1 - y (w'x + b))^2,
    by L-BFGS on its primal: an independent computation of the supervised counterpart."""
    p = X.shape[1]

    def value(z):
        w, b = z[:p], z[p]
        slack = np.maximum(0.0, 1.0 - y * (X @ w + b))
        grad_f = -2.0 * C * slack * y
        return 0.5 * w @ w + C * slack @ slack, np.r_[w + X.T @ grad_f, grad_f.sum()]

    z = minimize(value, np.zeros(p + 1), jac=True, method="L-BFGS-B",
                 options={"gtol": 1e-10, "maxiter": 10000}).x
    return z[:p], z[p]


def test_switching_reports_the_rows_its_unlabeled_term_changed():
    heart, _ = s3vm.load("heart")
    X = (heart.X - heart.X.mean(axis=0)) / heart.X.std(axis=0)  # L-BFGS needs scaled features
    inst = s3vm.Instance(X, heart.label, name="heart-standardized")
    result = s3vm.solve(inst, "switching", kernel="linear", C=1.0, balance="count")
    effect = result.info["unlabeled_effect"]
    w, b = _squared_hinge_by_lbfgs(inst.X[inst.labeled], inst.label[inst.labeled].astype(float),
                                   1.0)
    supervised = np.where(inst.X[inst.unlabeled] @ w + b >= 0, 1, -1)
    assert effect["changed"] == int(np.sum(supervised != result.labels))
    assert effect["unlabeled"] == inst.u
    assert effect["count"] == {"positives": int(np.sum(result.labels > 0)),
                               "source": "the labeled ratio"}
    assert effect["objective"] == result.objective


@pytest.mark.parametrize("formulation", ["vs3vm", "switching"])
def test_the_json_answer_carries_the_effect_of_local_formulations(formulation, capsys):
    assert main(["solve", "two_moons", "-f", formulation, "--json", "-q"]) == 0
    answer = json.loads(capsys.readouterr().out)
    effect = answer["unlabeled_effect"]
    assert 0 <= effect["changed"] <= effect["unlabeled"] == len(answer["labels"])


def test_exact_formulations_do_not_report_it(capsys):
    assert main(["solve", "blobs_small", "-f", "bb", "--json", "-q"]) == 0
    assert "unlabeled_effect" not in json.loads(capsys.readouterr().out)
