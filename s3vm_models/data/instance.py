"""The data contract: a validated :class:`Instance` (its readers are :mod:`s3vm.data.readers`).

A data file is CSV with a header: feature columns (any names), a column ``label`` with +1/-1 for
labeled rows and 0 for unlabeled rows, an optional column ``truth`` (+1/-1, the hidden class, used
only for evaluation) and an optional integer column ``group`` (equivalence and inequivalence
constraints, see :class:`Instance`). Every check on the data happens here, once; formulations trust
an :class:`Instance`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Sequence

import numpy as np

from s3vm.data.pairs import pairs_to_groups
from s3vm.solvers.bnb.links import Links
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.memory import check_array_memory

RESERVED_COLUMNS = ("label", "truth", "group")

#: The largest group id magnitude: ids are kept as int64, and two rows share a group exactly when
#: their ids are equal.
GROUP_ID_MAX = 2 ** 63 - 1
#: Every integer up to this magnitude is a float; beyond it neighbouring integers share one.
_FLOAT_EXACT = 2 ** 53


def _group_id(value) -> int:
    """One group id as an exact Python int; ValueError with the reason when it is none."""
    from decimal import Decimal, InvalidOperation

    if isinstance(value, (bool, np.bool_)):
        raise ValueError("group ids are integers")
    if isinstance(value, (int, np.integer)):
        number = int(value)
    elif isinstance(value, (float, np.floating)):
        if not np.isfinite(value) or value != np.round(value):
            raise ValueError("group ids are integers")
        if abs(value) > _FLOAT_EXACT:
            raise ValueError("a float cannot hold a group id beyond 2^53 exactly (neighbouring "
                             "integers share its value): give the ids as integers")
        number = int(value)
    else:
        try:
            exact = Decimal(str(value).strip())
        except InvalidOperation:
            raise ValueError("group ids are integers") from None
        if not exact.is_finite() or exact != exact.to_integral_value():
            raise ValueError("group ids are integers")
        number = int(exact)
    if abs(number) > GROUP_ID_MAX:
        raise ValueError("group ids lie within +-(2^63 - 1), the ids s3vm keeps exactly")
    return number


def group_ids(values, first_row: int = 0, where: str = "") -> np.ndarray:
    """The ``group`` column as int64 ids, each read exactly, or an :class:`InputError`.

    Text (a CSV cell) is read as a decimal number, so ``10000000000000000001`` stays itself;
    integers are taken as they are; a float is taken only up to 2^53, beyond which it cannot
    tell two ids apart. An id beyond int64 is refused rather than wrapped or rounded: 1e19 and
    2e19 once both became the same int64, and two rows that had to take opposite labels took
    the same. Rows are numbered from ``first_row`` in messages.
    """
    arr = np.asarray(values)
    if arr.ndim == 1 and arr.dtype.kind == "i":
        return arr.astype(np.int64)
    flat = arr.ravel().tolist() if arr.dtype.kind != "O" else list(arr.ravel())
    out = np.empty(len(flat), dtype=np.int64)
    for row, value in enumerate(flat):
        try:
            out[row] = _group_id(value)
        except ValueError as exc:
            raise InputError(f"{where}column 'group' has {value!s} in row {row + first_row}: "
                             f"{exc}") from None
    return out.reshape(arr.shape)


@dataclass(frozen=True, eq=False)
class Instance:
    """A partially labeled data set.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Features, used as given (no implicit scaling).
    label : ndarray of shape (n,)
        +1 or -1 for labeled rows, 0 for unlabeled rows.
    truth : ndarray of shape (n,), optional
        The hidden class of every row (+1/-1), for evaluation only.
    group : ndarray of shape (n,), optional
        Signed integer group ids: equivalence and inequivalence constraints (De Bie and
        Cristianini 2006, section 7.3.1; docs/formulations.md#groups).
        0 puts a row in no group. A nonzero value g puts the row in group |g| on side sign(g):
        two rows of one group on the same side share a label, two rows on opposite sides have
        opposite labels, whether they are labeled or not. The sign is the entry of the chapter's
        group label vector Y_i, so a group's relations among unlabeled rows need no ``label``
        (which stays 0 on them). A labeled row of a group fixes the labels of all its members
        (side times label); a group whose labeled rows disagree (two rows labeled alike on
        opposite sides, or labeled differently on one side) is an InputError naming two of them.
        Groups never relate to each other except through labeled rows. See :meth:`label_map`.
    feature_names : tuple of str
    name : str
    meta : dict
        Where the instance comes from, JSON-ready (``{"dataset": "heart", "labeled_fraction":
        0.1, "seed": 0}`` for a drawn labeled subset); every Result records it.
    """

    X: np.ndarray
    label: np.ndarray
    truth: Optional[np.ndarray] = None
    group: Optional[np.ndarray] = None
    feature_names: tuple = field(default=())
    name: str = "instance"
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        X = _as_finite_matrix(self.X)
        n = X.shape[0]
        label = _as_label_vector(self.label, n, "label", allowed=(-1, 0, 1))
        truth = (None if self.truth is None
                 else _as_label_vector(self.truth, n, "truth", allowed=(-1, 1)))
        group = None
        if self.group is not None:
            group = np.asarray(self.group)
            if group.shape != (n,):
                raise InputError("column 'group' must hold one finite integer per row")
            group = group_ids(group)
            check_groups(label, group, first_row=0)
        names = tuple(self.feature_names) or tuple(f"x{j}" for j in range(X.shape[1]))
        if len(names) != X.shape[1]:
            raise InputError(f"{len(names)} feature names for {X.shape[1]} feature columns")
        for attr, value in (("X", X), ("label", label), ("truth", truth), ("group", group),
                            ("feature_names", names)):
            object.__setattr__(self, attr, value)
        if not is_sparse(X):
            # A sparse X is the caller's own matrix, not a copy (10^6 rows): left writable.
            X.setflags(write=False)
        label.setflags(write=False)

    # -- views used by every formulation -------------------------------------------------
    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def p(self) -> int:
        return self.X.shape[1]

    @property
    def labeled(self) -> np.ndarray:
        """Row indices of the labeled points, in file order."""
        return np.flatnonzero(self.label != 0)

    @property
    def unlabeled(self) -> np.ndarray:
        """Row indices of the unlabeled points, in file order."""
        return np.flatnonzero(self.label == 0)

    @property
    def l(self) -> int:  # noqa: E743 - the literature's name
        return int(np.count_nonzero(self.label))

    @property
    def u(self) -> int:
        return self.n - self.l

    @property
    def XL(self) -> np.ndarray:
        return self.X[self.labeled]

    @property
    def yL(self) -> np.ndarray:
        return self.label[self.labeled].astype(float)

    @property
    def XU(self) -> np.ndarray:
        return self.X[self.unlabeled]

    @property
    def truth_U(self) -> Optional[np.ndarray]:
        return None if self.truth is None else self.truth[self.unlabeled]

    def label_map(self) -> "LabelMap":
        """The label-constraint structure of the rows (labels and groups): see :class:`LabelMap`."""
        return label_map(self.label, self.group)

    # -- checks a formulation asks for -----------------------------------------------------
    def require_both_classes_labeled(self) -> None:
        """Raise InputError unless each class has at least one labeled point."""
        for cls, word in ((1, "+1"), (-1, "-1")):
            if not np.any(self.label == cls):
                raise InputError(f"no labeled point of class {word}: each class needs at least one")

    def require_unlabeled(self) -> None:
        """Raise InputError when there is no unlabeled point (label 0)."""
        if self.u == 0:
            raise InputError("no unlabeled point (label 0): nothing to transduce")

    def require_moderate_features(self) -> None:
        """Raise InputError when a feature's magnitude is beyond :data:`FEATURE_LIMIT`, where
        solvers lose every digit (and kernels overflow): the message names the scaling that
        fixes it."""
        if is_sparse(self.X):
            values = np.abs(self.X.data)
            big = values.max(initial=0.0)
            if big > FEATURE_LIMIT:
                k = int(np.argmax(values))
                i = int(np.searchsorted(self.X.indptr, k, side="right") - 1)
                j = int(self.X.indices[k])
                raise InputError(f"feature {self.feature_names[j]!r} of row {i} is "
                                 f"{self.X.data[k]:g}: values beyond {FEATURE_LIMIT:g} in "
                                 "magnitude are out of reach of the solvers; scale the features "
                                 "(--scale standard or minmax)")
            return
        big = np.abs(self.X).max(initial=0.0)
        if big > FEATURE_LIMIT:
            i, j = np.unravel_index(int(np.argmax(np.abs(self.X))), self.X.shape)
            raise InputError(f"feature {self.feature_names[j]!r} of row {i} is {self.X[i, j]:g}: "
                             f"values beyond {FEATURE_LIMIT:g} in magnitude are out of reach of "
                             "the solvers; scale the features (--scale standard or minmax)")

    def require_truth(self, why: str) -> None:
        if self.truth is None:
            raise InputError(f"{why} needs a 'truth' column in the data")

    def with_pairs(self, pairs) -> "Instance":
        """A copy whose ``group`` column also states the must-link and cannot-link ``pairs``
        (``{"must": [(i, j), ...], "cannot": [(i, j), ...]}``, rows numbered from 0;
        :func:`s3vm.data.pairs.pairs_to_groups`); itself when ``pairs`` is None or empty."""
        if pairs is None:
            return self
        group = pairs_to_groups(self.n, self.group, pairs)
        if group is self.group or (group is None and self.group is None):
            return self
        return Instance(self.X, self.label, self.truth, group, self.feature_names, self.name,
                        dict(self.meta))

    @property
    def has_groups(self) -> bool:
        """Whether some row is in a group (equivalence or inequivalence constraints)."""
        return self.group is not None and bool(np.any(self.group != 0))

    def unlabeled_links(self):
        """The groups as they tie the unlabeled rows' labels (a
        :class:`s3vm.solvers.bnb.links.Links` over the unlabeled rows in file order: a row of a
        group that holds a labeled row is fixed, the rows of a free group form one class), or
        None without groups."""
        if not self.has_groups:
            return None
        lm = self.label_map()
        unl = self.unlabeled
        rep, sign = lm.rep[unl], lm.sign[unl]
        return Links(np.where(rep == 0, -1, rep - 1), sign)

    def with_labels(self, label: np.ndarray, name: Optional[str] = None) -> "Instance":
        """A copy with another label vector (same features, truth and groups)."""
        return Instance(self.X, label, self.truth, self.group, self.feature_names,
                        name or self.name, dict(self.meta))

    def to_csv(self, path: str, float_format: Optional[str] = None) -> None:
        """Write the CSV contract of this instance (features, label, truth and group if any).

        By default floats are written in their shortest form that reads back exactly (repr).
        A CSV row holds every feature: a sparse X is written :data:`CSV_BLOCK_ROWS` rows at a
        time, so that only one dense block is in memory.
        """
        import pandas as pd

        rows = np.arange(self.n)
        blocks = [rows[k:k + CSV_BLOCK_ROWS] for k in range(0, self.n, CSV_BLOCK_ROWS)] \
            if is_sparse(self.X) else [rows]
        with open(path, "w", newline="", encoding="utf-8") as out:
            for k, block in enumerate(blocks):
                X = self.X[block].toarray() if is_sparse(self.X) else self.X
                frame = pd.DataFrame(X, columns=list(self.feature_names))
                frame["label"] = self.label[block].astype(int)
                if self.truth is not None:
                    frame["truth"] = self.truth[block].astype(int)
                if self.group is not None:
                    frame["group"] = self.group[block]
                frame.to_csv(out, index=False, header=k == 0, float_format=float_format,
                             lineterminator="\n")


class LabelMap(NamedTuple):
    """Every row's label as a signed copy of a representative's: y_i = sign_i z_(rep_i).

    Representative 0 is the labeled class (z_0 = +1): every labeled row and every unlabeled row
    of a group that holds a labeled row. Representatives 1..size-1 are the free groups (groups
    of unlabeled rows only, and ungrouped unlabeled rows), numbered by their first row in file
    order, each signed +1 on its first row. Without groups, representative 1 + k is the k-th
    unlabeled row. The label matrix is Gamma = L Gamma_c L' with L = :meth:`matrix` and Gamma_c
    the (size x size) label matrix of the representatives (De Bie and Cristianini 2006, section
    7.3.1; docs/formulations.md#groups).

    Attributes
    ----------
    rep : ndarray (n,) of int
    sign : ndarray (n,) of float, +1/-1
    size : int
        The number of representatives, 1 + the number of free groups.
    """

    rep: np.ndarray
    sign: np.ndarray
    size: int

    def matrix(self):
        """L (n x size, scipy.sparse.csr_matrix): sign_i at (i, rep_i), one entry per row."""
        import scipy.sparse as sp

        n = self.rep.shape[0]
        return sp.csr_matrix((self.sign, (np.arange(n), self.rep)), shape=(n, self.size))


def _group_keys(label: np.ndarray, group: Optional[np.ndarray]):
    """(key index per row, side per row, number of keys): rows of one group share a key; an
    ungrouped row (group 0 or no column) has a key of its own."""
    n = label.shape[0]
    g = np.zeros(n, dtype=np.int64) if group is None else np.asarray(group, dtype=np.int64)
    key = np.where(g != 0, np.abs(g), -1 - np.arange(n))
    _, inverse = np.unique(key, return_inverse=True)
    side = np.where(g < 0, -1, 1)
    return inverse.ravel(), side, int(inverse.max()) + 1


def _group_classes(label, group):
    """Per key, the largest and smallest label x side over its labeled rows (-2/+2 when none):
    they differ exactly on a contradictory group."""
    label = np.asarray(label)
    key, side, k = _group_keys(label, group)
    lab = np.flatnonzero(label != 0)
    c = label[lab].astype(np.int64) * side[lab]
    cmax = np.full(k, -2)
    cmin = np.full(k, 2)
    np.maximum.at(cmax, key[lab], c)
    np.minimum.at(cmin, key[lab], c)
    return key, side, cmax, cmin


def check_groups(label, group, first_row: int = 0, where: str = "") -> None:
    """InputError on a group whose labeled rows contradict its sides, naming two of its rows.

    Parameters
    ----------
    label, group : array_like (n,)
    first_row : int
        The number of the first row in the message: 0 for array indices, 1 for the data rows of
        a CSV file (the header not counted). The message says which.
    where : str
        A prefix of the message (the file name).
    """
    if group is None:
        return
    label = np.asarray(label)
    group = np.asarray(group, dtype=np.int64)
    key, side, cmax, cmin = _group_classes(label, group)
    bad = (cmax == 1) & (cmin == -1)
    if not bad.any():
        return
    lab = label != 0
    c = label.astype(np.int64) * side
    rows = np.flatnonzero(lab & bad[key])
    # The first contradictory group in file order, and its first row of either kind.
    k = key[rows[0]]
    a = int(rows[(key[rows] == k) & (c[rows] == 1)][0])
    b = int(rows[(key[rows] == k) & (c[rows] == -1)][0])
    a, b = min(a, b), max(a, b)
    numbering = ("data rows numbered from 1 in file order" if first_row == 1
                 else "rows numbered from 0")
    relation = "alike" if label[a] == label[b] else "differently"
    sides = "opposite sides" if side[a] != side[b] else "the same side"
    raise InputError(
        f"{where}contradictory group constraints: rows {a + first_row} and {b + first_row} "
        f"(group {int(group[a])} label {int(label[a]):+d}, group {int(group[b])} label "
        f"{int(label[b]):+d}) are labeled {relation} but on {sides} of group "
        f"{abs(int(group[a]))} ({numbering})")


def label_map(label, group=None) -> LabelMap:
    """The :class:`LabelMap` of a label vector and signed group ids (no check: see
    :func:`check_groups`, which every :class:`Instance` passes)."""
    label = np.asarray(label)
    n = label.shape[0]
    key, side, cmax, _ = _group_classes(label, group)
    anchored = cmax[key] != -2
    # Free keys numbered 1, 2, ... by their first row.
    first = np.full(cmax.shape[0], n, dtype=np.int64)
    np.minimum.at(first, key, np.arange(n))
    free_keys = np.flatnonzero(cmax == -2)
    number = np.zeros(cmax.shape[0], dtype=np.int64)
    number[free_keys[np.argsort(first[free_keys], kind="stable")]] = 1 + np.arange(free_keys.size)
    rep = np.where(anchored, 0, number[key])
    sign = np.where(anchored, cmax[key] * side, side * side[first[key]]).astype(float)
    return LabelMap(rep=rep, sign=sign, size=1 + int(free_keys.size))


def _real_array(values, what: str) -> np.ndarray:
    """``values`` as a float array; complex numbers and text are refused, not converted (numpy
    would drop an imaginary part with a warning and parse "1.5" as a number)."""
    raw = values if isinstance(values, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(values)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{what} must be numeric: {exc}") from None
    kind = raw.dtype.kind
    if kind == "c" or (kind == "O" and any(isinstance(v, complex) for v in raw.ravel())):
        raise InputError(f"{what} must be real numbers, not complex (take the real part, the "
                         "modulus or both parts explicitly)")
    if kind in "USV":
        raise InputError(f"{what} must be numeric, got {raw.dtype.name} values (text)")
    if kind == "M" or kind == "m":
        raise InputError(f"{what} must be numeric, got {raw.dtype.name} values (dates)")
    try:
        return np.array(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be numeric: {exc}") from None


#: Features beyond this magnitude are refused by the formulations (LP solvers read 1e20 as
#: infinite and lose all precision far below; squares overflow at 1e154): scale them first.
FEATURE_LIMIT = 1e15


#: Rows of a sparse X made dense at a time when it is written as CSV (:meth:`Instance.to_csv`)
CSV_BLOCK_ROWS = 256

#: Bytes a column of sparse features costs whatever its nonzeros: its name and the float
#: vectors of length p a primal solver keeps (w, its gradient, direction and step).
COLUMN_BYTES = 128


def _as_sparse_matrix(X):
    """A ``scipy.sparse`` X as a checked CSR matrix of float64 (kept sparse: the formulations
    that take sparse data form only products with it; the others densify it or refuse it,
    :meth:`s3vm.core.formulation.Formulation.dense_instance`). A CSR float64 matrix is taken
    as it is, without a copy."""
    import scipy.sparse as sp

    if X.ndim != 2:
        raise InputError(f"features must form a 2-D array, got {X.ndim} dimension(s)")
    if X.dtype.kind == "c":
        raise InputError("features must be real numbers, not complex (take the real part, the "
                         "modulus or both parts explicitly)")
    if X.dtype.kind not in "biuf":
        raise InputError(f"features must be numeric, got {X.dtype.name} values")
    # Every column costs a feature name and the solvers' vectors of length p, sparse or not:
    # a LIBSVM index of 10^9 would ask for a hundred gigabytes.
    check_array_memory(1, X.shape[1], COLUMN_BYTES, "a sparse matrix of this width",
                       f"its feature indices run to {X.shape[1]:,}; number the features "
                       "compactly (1 to the number of distinct indices)")
    X = sp.csr_matrix(X, dtype=np.float64)  # no copy for CSR float64
    if X.shape[0] == 0:
        raise InputError("the data has no rows")
    if X.shape[1] == 0:
        raise InputError("the data has no feature column")
    bad = ~np.isfinite(X.data)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        i = int(np.searchsorted(X.indptr, k, side="right") - 1)
        raise InputError(f"feature {int(X.indices[k])} of row {i} is {X.data[k]}: values must "
                         "be finite")
    return X


def is_sparse(X) -> bool:
    """Whether X is a ``scipy.sparse`` matrix or array (without importing scipy for dense X)."""
    import sys

    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def _as_finite_matrix(X) -> np.ndarray:
    if is_sparse(X):
        return _as_sparse_matrix(X)
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # a pandas DataFrame: name the column
        # Columns by position: their labels may be numbers (a frame made from an array), and
        # str(0) names no column. An object column of real numbers is numeric, as an object
        # array is.
        for j, (column, dtype) in enumerate(zip(X.columns, X.dtypes)):
            if dtype.kind in "biuf":
                continue
            values = X.iloc[:, j].to_numpy()
            if dtype.kind != "O" or not all(isinstance(v, numbers.Real) for v in values):
                shown = dtype if dtype.kind != "O" else "object (not all numbers)"
                raise InputError(f"features must be numeric: column {str(column)!r} is {shown}")
        X = X.to_numpy()
    X = _real_array(X, "features")
    if X.ndim != 2:
        raise InputError(f"features must form a 2-D array, got {X.ndim} dimension(s)")
    if X.shape[0] == 0:
        raise InputError("the data has no rows")
    if X.shape[1] == 0:
        raise InputError("the data has no feature column")
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"feature {j} of row {i} is {X[i, j]}: values must be finite")
    return X


def _as_label_vector(values, n: int, column: str, allowed: Sequence[int]) -> np.ndarray:
    v = _real_array(values, f"column '{column}'")
    if v.shape != (n,):
        raise InputError(f"column '{column}' must hold one value per row ({n}), "
                         f"got shape {v.shape}")
    ok = np.isin(v, allowed)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        spelled = ", ".join(str(a) for a in allowed)
        raise InputError(f"column '{column}' has {v[i]:g} in row {i}: allowed values are {spelled}")
    return v.astype(np.int8)
