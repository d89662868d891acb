"""`s3vm dataset`: bundled data sets written as CSV data files of the contract."""

import numpy as np
import pandas as pd
import pytest

from s3vm.cli import main
from s3vm.data.readers import read_csv


def test_dataset_list_names_the_bundled_sets(capsys):
    assert main(["dataset"]) == 0
    out = capsys.readouterr().out
    for name in ("sonar", "heart", "wdbc", "musk1"):
        assert name in out


def test_dataset_writes_a_csv_that_round_trips(tmp_path, capsys):
    path = tmp_path / "heart.csv"
    assert main(["dataset", "heart", "--labeled-fraction", "0.1", "--seed", "3",
                 "-o", str(path)]) == 0
    inst = read_csv(str(path))
    raw = pd.read_csv(path)
    # 297 complete rows of 13 features (the SOURCE note), both classes labeled, labels = truth.
    assert inst.X.shape == (297, 13)
    lab = inst.labeled
    np.testing.assert_array_equal(inst.label[lab], inst.truth[lab])
    assert set(inst.label[lab]) == {-1, 1}
    assert abs(inst.l - 0.1 * 297) <= 2
    np.testing.assert_array_equal(raw["truth"].to_numpy(), inst.truth)


def test_dataset_bad_input_writes_nothing(tmp_path, capsys):
    target = tmp_path / "x.csv"
    for argv in (["dataset", "nope", "-o", str(target)],
                 ["dataset", "heart", "-o", str(tmp_path / "no" / "x.csv")],
                 ["dataset", "heart"],
                 ["dataset", "heart", "--labeled-fraction", "0.1", "--n-labeled", "5",
                  "-o", str(target)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("s3vm: error:")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.solver
@pytest.mark.slow
def test_dataset_is_semi_supervised_by_default_and_says_how(tmp_path, capsys):
    path = tmp_path / "wdbc.csv"
    assert main(["dataset", "wdbc", "-o", str(path)]) == 0
    err = capsys.readouterr().err
    assert "labeled fraction 0.1 of each class, seed 0" in err
    inst = read_csv(str(path))
    assert inst.l == 57 and inst.u == 569 - 57
    # The file solves as it is (it used to be all labeled, and the solve failed).
    assert main(["solve", str(path), "-f", "svm1", "--quiet"]) == 0
    assert main(["dataset", "wdbc", "--all-labeled", "-o", str(path)]) == 0
    assert "every row labeled" in capsys.readouterr().err
    assert read_csv(str(path)).u == 0
