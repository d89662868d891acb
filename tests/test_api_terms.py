"""The Python API speaks Python: messages name keywords (``kernel=``), not the command line's
flags; unknown keywords get a hint; a Result prints as a one-line summary."""

from __future__ import annotations

import numpy as np
import pytest

import s3vm
from s3vm.cli import main
from s3vm.data.generators import gaussian_blobs


@pytest.fixture(scope="module")
def blobs():
    return gaussian_blobs(n=24, p=2, seed=0)


def test_messages_name_keywords_not_flags(blobs):
    with pytest.raises(s3vm.InputError) as bad_kernel:
        s3vm.solve(blobs, "vs3vm", kernel="poly")
    assert str(bad_kernel.value).startswith("kernel= must be one of linear, rbf")
    with pytest.raises(s3vm.InputError) as not_read:
        s3vm.solve(blobs, "vs3vm", C=10)
    assert str(not_read.value) == "C= does not apply to vs3vm"
    with pytest.raises(s3vm.InputError) as direct:
        s3vm.Settings(sigma=-1.0)
    assert "--" not in str(direct.value) and "sigma=" in str(direct.value)


def test_the_command_line_still_names_its_flags(capsys, blobs):
    status = main(["solve", "two_moons", "-f", "vs3vm", "--C", "10"])
    assert status == 2
    assert capsys.readouterr().err.strip() == "s3vm: error: --C does not apply to vs3vm"
    # and the API afterwards speaks keywords again
    with pytest.raises(s3vm.InputError, match="^C= does not apply"):
        s3vm.solve(blobs, "vs3vm", C=10)


@pytest.mark.parametrize("keyword, hint", [
    ("gamma", "use sigma"),
    ("node_limit", "options={'node_limit': ...}"),
    ("C_start", "did you mean C_star"),
    ("Kernel", "did you mean kernel"),
])
def test_keyword_mistakes_get_a_hint(blobs, keyword, hint):
    with pytest.raises(s3vm.InputError) as caught:
        s3vm.solve(blobs, "bb", **{keyword: 1})
    assert hint in str(caught.value)


def test_an_option_of_another_formulation_says_whose_it_is(blobs):
    with pytest.raises(s3vm.InputError, match=r"node_limit is an option of bb, bb-mip, bb-sdp, "
                                              r"not of vs3vm"):
        s3vm.solve(blobs, "vs3vm", node_limit=10)
    with pytest.raises(s3vm.InputError, match="did you mean node_limit"):
        s3vm.solve(blobs, "bb", options={"nodelimit": 10})


def test_result_repr_is_a_short_summary(blobs):
    result = s3vm.solve(blobs, "bb")
    text = repr(result)
    assert len(text) < 300, text
    labels = np.asarray(result.labels)
    assert text.startswith("Result(formulation='bb', solver='builtin', status='optimal'")
    assert f"<{labels.size} labels, {int((labels == 1).sum())} of them +1>" in text
    assert f"objective={result.objective:.8g}" in text
    assert "array" not in text and "info" not in text


@pytest.mark.slow
@pytest.mark.solver
def test_the_documented_loggers_carry_progress(blobs, monkeypatch):
    import logging
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parent.parent / "docs" / "user-guide.md").read_text()
    documented = set(re.findall(r"^\| `(s3vm\.[a-z]+)` \|", guide, re.M))
    assert documented == {"s3vm.progress", "s3vm.bnb"}

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.name)

    monkeypatch.setenv("S3VM_PROGRESS_SECONDS", "0.01")
    logger = logging.getLogger("s3vm")
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)  # what the guide says turns progress on
    try:
        s3vm.solve(blobs, "bb", options={"log_every": 1})
        s3vm.solve(blobs, "sdp")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert documented <= set(records)
