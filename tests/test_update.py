"""Change and re-solve (issue 37 item 1): ``Built.update(**settings)`` changes a built model's
settings, in place where the model holds them as parameters (mu and nu of the Problem 3 models,
C and C* of the low-rank dual's ``cp.Parameter``), else by a rebuild; the next solve answers as a
fresh build with those settings does. The sweep's table in docs/models.md is what
benchmarks/resolve_sweep.py prints from its data file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s3vm
from s3vm.solvers.errors import InputError

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.filterwarnings("ignore:Solution may be inaccurate")

CASES = [
    ("bd-mip", {"mu": 0.5, "nu": 2.0}, "in place"),
    ("bb-mip", {"mu": 0.3}, "in place"),
    ("svm1", {"mu": 0.5}, "in place"),
    ("vs3vm", {"mu": 0.02, "nu": 3.0}, "in place"),
    ("sdp", {"C": 5.0, "C_star": 0.5}, "in place"),
    ("sdp-lowrank", {"C": 5.0}, "in place"),
    ("bd-mip", {"balance": "count", "positives": 3}, "rebuilt"),
    ("sdp", {"kernel": "rbf", "sigma": 2.0}, "rebuilt"),
    ("l2-miqp", {"C": 3.0}, "rebuilt"),
]


@pytest.mark.solver
@pytest.mark.slow
@pytest.mark.parametrize("name, change, how", CASES, ids=lambda v: str(v))
def test_an_updated_model_solves_as_a_fresh_build(name, change, how):
    built = s3vm.build("blobs_small", name)
    before = built.solve()
    assert built.update(**change) == how
    after = built.solve()
    fresh = s3vm.build("blobs_small", name, **change).solve()
    assert after.objective == pytest.approx(fresh.objective, rel=1e-6, abs=1e-8)
    assert np.array_equal(after.labels, fresh.labels)
    if fresh.lower_bound is not None:
        assert after.lower_bound == pytest.approx(fresh.lower_bound, rel=1e-5, abs=1e-7)
    # the change mattered: an update that changed nothing would answer as before
    assert abs(after.objective - before.objective) > 1e-6 or \
        abs((after.info.get("relaxation_value") or 0) - (before.info.get("relaxation_value")
                                                         or 0)) > 1e-6
    assert built.settings == s3vm.build("blobs_small", name, **change).settings


@pytest.mark.solver
@pytest.mark.slow
def test_an_in_place_update_keeps_the_users_changes():
    import pyomo.environ as pyo

    built = s3vm.build("blobs_small", "bd-mip")
    built.model.same = pyo.Constraint(expr=built.model.d[0] == built.model.d[1])
    assert built.update(mu=0.5) == "in place"
    result = built.solve()
    assert result.labels[0] == result.labels[1]
    fresh = s3vm.build("blobs_small", "bd-mip", mu=0.5)
    fresh.model.same = pyo.Constraint(expr=fresh.model.d[0] == fresh.model.d[1])
    assert result.objective == pytest.approx(fresh.solve().objective, rel=1e-6)


@pytest.mark.solver
def test_update_refuses_what_build_refuses_and_leaves_the_model():
    built = s3vm.build("blobs_small", "bd-mip")
    model = built.model
    with pytest.raises(InputError, match="does not apply to bd-mip"):
        built.update(C=2.0)
    with pytest.raises(InputError, match="mu"):
        built.update(mu=-1.0)
    assert built.model is model and built.settings.mu == 0.1
    assert built.update(mu=0.1) == "unchanged"


@pytest.mark.subprocess
@pytest.mark.slow
def test_the_sweep_table_in_the_docs_is_its_data_files():
    command = [sys.executable, "benchmarks/resolve_sweep.py", "table",
               "benchmarks/resolve_sweep.jsonl"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = (ROOT / "docs" / "models.md").read_text()
    assert done.stdout.strip() in page
