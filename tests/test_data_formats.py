"""Data in the field's formats and in memory: LIBSVM/svmlight files, (X, y) arrays and pandas
DataFrames, checked once at the boundary; every result records where its data came from."""

import numpy as np
import pandas as pd
import pytest

import s3vm
from s3vm.cli import main
from s3vm.data.generators import gaussian_blobs
from s3vm.data.readers import read_svmlight
from s3vm.solvers.errors import InputError


@pytest.fixture(scope="module")
def blobs():
    return gaussian_blobs(n=30, p=3, separation=4.0, n_labeled_per_class=3, seed=2)


def _write_svmlight(path, X, labels):
    with open(path, "w") as fh:
        for row, lab in zip(X, labels):
            pairs = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
            fh.write(f"{lab:g} {pairs}\n")


@pytest.mark.solver
def test_a_libsvm_file_reads_as_the_same_instance(tmp_path, blobs):
    path = tmp_path / "blobs.svm"
    _write_svmlight(path, blobs.X, blobs.label)
    inst = read_svmlight(str(path))
    assert inst.X.format == "csr"  # kept sparse (primal-tsvm reads it so; svm1 densifies it)
    np.testing.assert_allclose(inst.X.toarray(), blobs.X, rtol=0, atol=0)
    np.testing.assert_array_equal(inst.label, blobs.label)
    a = s3vm.solve(str(path), "svm1")
    b = s3vm.solve(blobs, "svm1")
    assert a.objective == pytest.approx(b.objective)
    assert a.info["data"]["format"] == "svmlight"


@pytest.mark.solver
def test_the_unlabeled_marker_and_class_labels_are_configurable(tmp_path, blobs, capsys):
    # UniverSVM-style classes 1 and 2 with -3 on the unlabeled rows.
    labels = np.select([blobs.label > 0, blobs.label < 0], [2, 1], -3)
    path = tmp_path / "u.libsvm"
    _write_svmlight(path, blobs.X, labels)
    inst = read_svmlight(str(path), unlabeled=-3)
    np.testing.assert_array_equal(inst.label, blobs.label)  # the larger class is +1
    assert inst.meta["classes"] == [1.0, 2.0]
    assert main(["solve", str(path), "-f", "svm1", "--unlabeled-marker", "-3", "--json",
                 "--quiet"]) == 0
    capsys.readouterr()
    # Without the marker, -3 is a third class: refused in one line.
    assert main(["solve", str(path), "-f", "svm1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "3 classes (-3, 1, 2) besides the unlabeled marker 0" in err[0]


@pytest.mark.solver
def test_an_instance_file_may_point_to_a_libsvm_file(tmp_path, blobs):
    _write_svmlight(tmp_path / "d.svmlight", blobs.X, np.where(blobs.label == 0, 9, blobs.label))
    (tmp_path / "i.toml").write_text('data = "d.svmlight"\nunlabeled = 9\nseed = 2\nmu = 0.5\n')
    result = s3vm.solve(str(tmp_path / "i.toml"), "svm1")
    assert result.info["settings"]["mu"] == 0.5
    assert result.info["seed"] == {"data": 2, "formulation": None}


@pytest.mark.solver
@pytest.mark.slow
def test_arrays_and_data_frames_everywhere_the_api_takes_data(blobs):
    frame = pd.DataFrame(blobs.X, columns=["a", "b", "c"])
    frame["label"] = blobs.label
    frame["truth"] = blobs.truth
    reference = s3vm.solve(blobs, "switching")
    for data in ((blobs.X, blobs.label), (blobs.X.tolist(), list(blobs.label)),
                 (frame[["a", "b", "c"]], frame["label"], frame["truth"]), frame):
        assert s3vm.solve(data, "switching").objective == pytest.approx(reference.objective)
    rows = s3vm.compare(frame, ["switching", "svm1"])
    assert rows[0][1]["error"] is not None  # truth came along
    assert s3vm.load((blobs.X, blobs.label))[0].feature_names == ("x0", "x1", "x2")


@pytest.mark.parametrize("data,message", [
    (lambda b: (b.X + 1j, b.label), "features must be real numbers, not complex"),
    (lambda b: b.X, "a bare array has no labels"),
    (lambda b: (b.X, b.label[:-1]), "one value per row"),
    (lambda b: (b.X, np.where(b.label == 0, -1, b.label) * 2), "allowed values are -1, 0, 1"),
    (lambda b: pd.DataFrame({"a": ["x"] * 3, "label": [1, -1, 0]}), "non-numeric"),
    (lambda b: {"X": b.X}, "got dict"),
])
def test_bad_in_memory_data_is_one_clear_error(blobs, data, message):
    with pytest.raises(InputError, match=message):
        s3vm.solve(data(blobs), "switching")


@pytest.mark.solver
def test_results_record_the_seed_of_the_labeled_draw_and_of_the_formulation():
    heart = s3vm.load_dataset("heart", labeled_fraction=0.1, seed=3)
    result = s3vm.solve(heart, "svm1")
    assert result.info["seed"] == {"data": 3, "formulation": None}
    assert result.info["data"]["labeled_fraction"] == 0.1
    moons = s3vm.solve("two_moons", "switching")
    assert moons.info["seed"]["data"] == 0 and moons.info["s3vm_version"] == s3vm.__version__
    small = gaussian_blobs(n=40, p=2, n_labeled_per_class=4, seed=5)
    lowrank = s3vm.solve(small, "cvs3vm", options={"seed": 7, "clusters": 3})
    assert lowrank.info["seed"] == {"data": 5, "formulation": 7}
