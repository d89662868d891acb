"""Comparing across families: an instance file's settings are defaults, a typed option is meant
and named as typed, and results record what was used."""

import json

import pytest

from s3vm.cli import main


def _one_error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("s3vm: error:"), err
    return err[0]


def test_an_option_of_another_formulation_is_refused_by_the_flag_typed(capsys):
    assert main(["solve", "blobs_small", "-f", "bd-mip", "--gap", "0.5"]) == 2
    line = _one_error_line(capsys)
    assert "--gap does not apply to formulation 'bd-mip'" in line and "--rel-gap" not in line


@pytest.mark.solver
@pytest.mark.slow
def test_families_compare_on_a_shipped_instance_with_its_defaults(capsys):
    # blobs_small sets balance = "count" and bias = true: vs3vm has no balance, bb-sdp no bias.
    assert main(["compare", "blobs_small", "--formulations", "bb,vs3vm,bb-sdp",
                 "--set", "vs3vm.nu=0.5", "--json", "--quiet"]) == 0
    rows = {r["formulation"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["vs3vm"]["info"]["settings"]["nu"] == 0.5
    assert "balance" not in rows["vs3vm"]["info"]["settings"] or \
        rows["vs3vm"]["info"]["settings"]["balance"] == "none"
    assert rows["bb-sdp"]["info"]["settings"]["bias"] is False
    assert rows["bb"]["info"]["settings"]["bias"] is True
    for row in rows.values():
        assert row["info"]["instance"] and row["info"]["s3vm_version"]
        assert row["info"]["seed"]["data"] == 0  # the shipped file's draw
