"""Warm starts (issue 37 item 2): ``start=`` gives bb, bb-mip and bb-sdp a first incumbent. The
start is used (the optimum as a start is the incumbent the search keeps, from the start), and a
worse start never changes the optimum (checked against the solve without one and against an
enumeration); the others refuse it, and a start that breaks the count or the groups is bad
input."""

from __future__ import annotations

import numpy as np
import pytest

import s3vm
from s3vm.core.settings import Settings
from s3vm.data.generators import gaussian_blobs
from s3vm.data.instance import Instance
from s3vm.solvers.errors import InputError

from reference import L2Reference, labelings, problem3_columns, problem3_labeling_lp

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")


@pytest.fixture(scope="module")
def inst():
    base = gaussian_blobs(n=11, p=2, separation=1.0, n_labeled_per_class=2, seed=5)
    return Instance(base.X, base.label, base.truth, name="start")


def enumerated(inst, name):
    if name == "bb-mip":
        A, d, B = problem3_columns(inst, "linear", 1.0)
        return {tuple(s): problem3_labeling_lp(A, d, B, s, 0.1, 1.0)[0]
                for s in labelings(inst.u)}
    settings = Settings(kernel="linear", C=1.0, C_star=1.0, bias=name == "bb")
    return L2Reference(inst, settings).all_values()


KEYWORDS = {"bb": {}, "bb-mip": {"mu": 0.1, "nu": 1.0}, "bb-sdp": {"bias": False}}
OPTIONS = {"bb": {"heuristic": "none"}, "bb-mip": {}, "bb-sdp": {"workers": 1}}


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("name", ["bb", "bb-mip", "bb-sdp"])
def test_the_start_is_used_and_a_worse_one_changes_nothing(inst, name):
    values = enumerated(inst, name)
    ranked = sorted(values, key=values.get)
    best, worst = np.array(ranked[0]), np.array(ranked[-1])
    plain = s3vm.solve(inst, name, kernel="linear", options=OPTIONS[name], **KEYWORDS[name])
    started = s3vm.solve(inst, name, kernel="linear", start=best, options=OPTIONS[name],
                         **KEYWORDS[name])
    assert started.info["incumbent_source"] == "start"
    assert np.array_equal(started.labels, best)
    for result in (plain, started, s3vm.solve(inst, name, kernel="linear", start=worst,
                                              options=OPTIONS[name], **KEYWORDS[name])):
        assert result.status == "optimal"
        assert result.objective == pytest.approx(values[ranked[0]], rel=1e-5, abs=1e-7)
    if name == "bb":
        # without its heuristic, the optimum as a start proves itself in fewer nodes
        assert started.nodes <= plain.nodes


def test_a_start_is_checked_and_refused_where_not_taken(inst):
    with pytest.raises(InputError, match="one label"):
        s3vm.solve(inst, "bb", start=np.ones(inst.u + 1))
    with pytest.raises(InputError, match="balance count"):
        s3vm.solve(inst, "bb", balance="count", positives=2, start=np.ones(inst.u))
    unl = [int(r) for r in inst.unlabeled]
    labels = np.ones(inst.u)
    labels[1] = -1
    with pytest.raises(InputError, match="breaks the groups"):
        s3vm.solve(inst, "bb", pairs={"must": [(unl[0], unl[1])]}, start=labels)
    with pytest.raises(InputError, match="takes no start labeling"):
        s3vm.solve(inst, "bd-mip", start=np.ones(inst.u))
