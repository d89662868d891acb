"""The data contract: a validated :class:`Instance`, read from CSV or built from arrays.

A data file is CSV with a header: feature columns (any names), a column ``label`` with +1/-1 for
labeled rows and 0 for unlabeled rows, an optional column ``truth`` (+1/-1, the hidden class, used
only for evaluation) and an optional integer column ``group`` (equivalence constraints). Every
check on the data happens here, once; formulations trust an :class:`Instance`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from .errors import InputError

RESERVED_COLUMNS = ("label", "truth", "group")


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
        Integer group ids for equivalence constraints (negative: no group).
    feature_names : tuple of str
    name : str
    """

    X: np.ndarray
    label: np.ndarray
    truth: Optional[np.ndarray] = None
    group: Optional[np.ndarray] = None
    feature_names: tuple = field(default=())
    name: str = "instance"

    def __post_init__(self):
        X = _as_finite_matrix(self.X)
        n = X.shape[0]
        label = _as_label_vector(self.label, n, "label", allowed=(-1, 0, 1))
        truth = None if self.truth is None else _as_label_vector(self.truth, n, "truth", allowed=(-1, 1))
        group = None
        if self.group is not None:
            group = np.asarray(self.group)
            if group.shape != (n,) or not np.all(np.isfinite(group.astype(float))):
                raise InputError("column 'group' must hold one finite integer per row")
            if np.any(group != np.round(group)):
                raise InputError("column 'group' must hold integers")
            group = group.astype(np.int64)
        names = tuple(self.feature_names) or tuple(f"x{j}" for j in range(X.shape[1]))
        if len(names) != X.shape[1]:
            raise InputError(f"{len(names)} feature names for {X.shape[1]} feature columns")
        for attr, value in (("X", X), ("label", label), ("truth", truth), ("group", group),
                            ("feature_names", names)):
            object.__setattr__(self, attr, value)
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

    def require_truth(self, why: str) -> None:
        if self.truth is None:
            raise InputError(f"{why} needs a 'truth' column in the data")

    def with_labels(self, label: np.ndarray, name: Optional[str] = None) -> "Instance":
        """A copy with another label vector (same features, truth and groups)."""
        return Instance(self.X, label, self.truth, self.group, self.feature_names,
                        name or self.name)

    def to_csv(self, path: str, float_format: Optional[str] = None) -> None:
        """Write the CSV contract of this instance (features, label, truth and group if any).

        By default floats are written in their shortest form that reads back exactly (repr).
        """
        import pandas as pd

        frame = pd.DataFrame(self.X, columns=list(self.feature_names))
        frame["label"] = self.label.astype(int)
        if self.truth is not None:
            frame["truth"] = self.truth.astype(int)
        if self.group is not None:
            frame["group"] = self.group
        frame.to_csv(path, index=False, float_format=float_format, lineterminator="\n")


def _as_finite_matrix(X) -> np.ndarray:
    try:
        X = np.array(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"features must be numeric: {exc}") from None
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
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"column '{column}' must be numeric") from None
    if v.shape != (n,):
        raise InputError(f"column '{column}' must hold one value per row ({n}), got shape {v.shape}")
    ok = np.isin(v, allowed)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        spelled = ", ".join(str(a) for a in allowed)
        raise InputError(f"column '{column}' has {v[i]:g} in row {i}: allowed values are {spelled}")
    return v.astype(np.int8)


def read_csv(path: str, name: Optional[str] = None) -> Instance:
    """Read a data file of the CSV contract into an :class:`Instance`.

    Raises
    ------
    InputError
        On a missing file, a missing ``label`` column, non-numeric, NaN or infinite values,
        or labels outside {-1, 0, +1}. The message names the column and row.
    """
    import pandas as pd

    if not os.path.isfile(path):
        raise InputError(f"data file not found: {path}")
    try:
        frame = pd.read_csv(path, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: not a readable CSV file ({first})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if "label" not in frame.columns:
        raise InputError(f"{path}: no 'label' column (header: {', '.join(frame.columns[:8])})")
    numeric = {}
    for column in frame.columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"{path}: non-numeric value {frame[column].iloc[row]!r} in column '{column}', "
                f"row {row + 1}")
        missing = values.isna()
        if missing.any():
            row = int(np.flatnonzero(missing.to_numpy())[0])
            raise InputError(f"{path}: missing value in column '{column}', row {row + 1}")
        arr = values.to_numpy(dtype=float)
        if not np.all(np.isfinite(arr)):
            row = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise InputError(f"{path}: value {arr[row]} in column '{column}', row {row + 1}: "
                             "values must be finite")
        numeric[column] = arr
    # Check label values here rather than in Instance, so that rows are numbered like the
    # messages above (1-based data rows); Instance numbers array indices from 0.
    for column, allowed in (("label", (-1, 0, 1)), ("truth", (-1, 1))):
        if column in numeric:
            bad = ~np.isin(numeric[column], allowed)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise InputError(
                    f"{path}: column '{column}' has {numeric[column][row]:g} in row {row + 1}: "
                    f"allowed values are {', '.join(str(a) for a in allowed)}")
    features = [c for c in frame.columns if c not in RESERVED_COLUMNS]
    if not features:
        raise InputError(f"{path}: no feature column besides {', '.join(RESERVED_COLUMNS)}")
    X = np.column_stack([numeric[c] for c in features])
    try:
        return Instance(
            X=X,
            label=numeric["label"],
            truth=numeric.get("truth"),
            group=numeric.get("group"),
            feature_names=tuple(features),
            name=name or os.path.splitext(os.path.basename(path))[0],
        )
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
