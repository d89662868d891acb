"""The readers of the data contract: CSV files, LIBSVM/svmlight files, pandas frames and arrays,
each into a validated :class:`~s3vm.data.instance.Instance` (whose checks they rely on; the
checks particular to a format, its header, columns and compression, are here).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Optional

import numpy as np

from s3vm.data.instance import RESERVED_COLUMNS, Instance, check_groups, group_ids
from s3vm.solvers.errors import InputError


def _renamed_repeats(columns) -> bool:
    """Whether pandas may have renamed a repeated column name (a second 'x' becomes 'x.1'):
    a name 'x.k' next to a name 'x'. Only then is the header read again as written (a read
    that takes seconds on a file of 20,000 columns)."""
    names = {str(c) for c in columns}
    for name in names:
        stem, dot, k = name.rpartition(".")
        if dot and k.isdigit() and stem in names:
            return True
    return False


def _raw_header(path: str) -> Optional[list]:
    """The header's names as written (pandas renames a repeated name 'x' to 'x.1')."""
    import pandas as pd

    try:
        row = pd.read_csv(path, header=None, nrows=1, dtype=str, skipinitialspace=True,
                          keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return None
    return [str(v).strip() for v in row.iloc[0].tolist()] if len(row) else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _compression_errors() -> tuple:
    """The exceptions of the decompressors pandas picks from a file's extension (.gz, .xz,
    .zip, .tar, .zst) on data that is not what the extension says, or is cut short."""
    import gzip
    import lzma
    import tarfile
    import zipfile
    import zlib

    errors = [EOFError, gzip.BadGzipFile, lzma.LZMAError, zlib.error, zipfile.BadZipFile,
              tarfile.TarError]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errors)


def _compression_name(path: str) -> str:
    """How the extension of ``path`` says the file is compressed ('CSV' when it says nothing)."""
    names = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zip": "zip", ".tar": "tar",
             ".tgz": "tar", ".zst": "zstd"}
    lower = os.fspath(path).lower()
    for ext, name in names.items():
        if lower.endswith(ext):
            return f"{name}-compressed CSV"
    return "CSV"


def _column_error(frame, j: int, path: str):
    """The error of column ``j`` (non-numeric, missing or non-finite values), else None and
    its float values."""
    import pandas as pd

    column = frame.columns[j]
    raw = frame.iloc[:, j]
    values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna() & raw.notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        return InputError(f"{path}: non-numeric value {raw.iloc[row]!r} in column '{column}', "
                          f"row {row + 1}"), None
    missing = values.isna()
    if missing.any():
        row = int(np.flatnonzero(missing.to_numpy())[0])
        return InputError(f"{path}: missing value in column '{column}', row {row + 1}"), None
    arr = values.to_numpy(dtype=float)
    if not np.all(np.isfinite(arr)):
        row = int(np.flatnonzero(~np.isfinite(arr))[0])
        return InputError(f"{path}: value {arr[row]} in column '{column}', row {row + 1}: "
                          "values must be finite"), None
    return None, arr


def _numeric_block(frame, path: str) -> np.ndarray:
    """The frame's values as one float matrix, every column checked: the first column in
    file order with a non-numeric, missing or non-finite value is the error.

    Columns that pandas read as numbers are converted and checked together, in one array
    operation (a column at a time took seconds per thousand columns); only the others
    (text, nullable types) go through :func:`pandas.to_numeric` one by one.
    """
    n, c = frame.shape
    values = np.empty((n, c))
    plain = np.array([isinstance(t, np.dtype) and t.kind in "biuf" for t in frame.dtypes],
                     dtype=bool)
    first_bad = c
    if plain.any():
        cols = np.flatnonzero(plain)
        block = frame.iloc[:, cols].to_numpy(dtype=float)
        values[:, cols] = block
        bad_cols = np.flatnonzero(~np.isfinite(block).all(axis=0))
        if bad_cols.size:
            first_bad = int(cols[bad_cols[0]])
    for j in np.flatnonzero(~plain):
        if j > first_bad:
            break
        error, arr = _column_error(frame, int(j), path)
        if error is not None:
            raise error
        values[:, j] = arr
    if first_bad < c:
        error, _ = _column_error(frame, first_bad, path)
        raise error
    return values


def read_csv(path: str, name: Optional[str] = None) -> Instance:
    """Read a data file of the CSV contract into an :class:`Instance`.

    Raises
    ------
    InputError
        On a missing file, a missing ``label`` column, non-numeric, NaN or infinite values,
        or labels outside {-1, 0, +1}. The message names the column and row.
    """
    import pandas as pd

    if os.path.isdir(path):
        raise InputError(f"data file {path} is a directory")
    if not os.path.isfile(path):
        raise InputError(f"data file not found: {path}")
    try:
        # The group ids as text, so that ids beyond 2^53 are read exactly (group_ids); in one
        # piece (low_memory=False): pandas' default parses in chunks and concatenates them
        # column by column, 2.5 times slower on a file of 20,000 columns.
        frame = pd.read_csv(path, skipinitialspace=True, dtype={"group": str}, low_memory=False)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the file is empty") from None
    except ImportError:
        # pandas reads .zst through the optional zstandard package.
        raise InputError(f"cannot read {path}: its extension asks for a decompressor that is "
                         f"not installed (pip install zstandard for .zst), or give the file "
                         f"uncompressed") from None
    except _compression_errors() as exc:
        raise InputError(f"{path}: not a readable {_compression_name(path)} file "
                         f"({_first_line(exc)})") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        # pandas' ParserError, and its refusal of an archive of several members, are
        # ValueErrors: the file's contents, not a fault of this program.
        raise InputError(f"{path}: not a readable CSV file ({_first_line(exc)})") from None
    header = _raw_header(path) if _renamed_repeats(frame.columns) else None
    if header is not None:
        seen, twice = set(), {}
        for column in header:
            if column in seen:
                twice.setdefault(column)
            seen.add(column)
        if twice:
            raise InputError(f"{path}: column {', '.join(repr(t) for t in twice)} appears more "
                             "than once in the header: every column needs its own name")
    return frame_instance(frame, name or os.path.splitext(os.path.basename(path))[0],
                          where=f"{path}: ")


def frame_instance(frame, name: str = "frame", where: str = "") -> Instance:
    """An :class:`Instance` from a pandas DataFrame of the CSV contract: feature columns, a
    ``label`` column (+1/-1, 0 unlabeled), optional ``truth`` and ``group`` columns.

    Rows are numbered from 1 in messages, as the data rows of a file; ``where`` names the
    source in them (``"data.csv: "``).
    """
    path = where[:-2] if where.endswith(": ") else "the data frame"
    frame = frame.copy(deep=False)  # only the names change here
    frame.columns = [str(c).strip() for c in frame.columns]
    # Counted once (a Counter): a count per column was quadratic in the number of columns,
    # minutes for a file of 20,000 features before any time limit ran.
    twice = sorted(c for c, k in Counter(frame.columns).items() if k > 1)
    if twice:
        raise InputError(f"{path}: column {', '.join(repr(t) for t in twice)} appears more than "
                         "once: every column needs its own name")
    if "label" not in frame.columns:
        hint = ""
        if len(frame.columns) == 1 and any(sep in frame.columns[0] for sep in ";\t|"):
            hint = " (the file seems to use another separator than ',': s3vm reads CSV)"
        raise InputError(f"{path}: no 'label' column (header: {', '.join(frame.columns[:8])})"
                         + hint)
    values = _numeric_block(frame, path)
    numeric = {c: values[:, j] for j, c in enumerate(frame.columns) if c in RESERVED_COLUMNS}
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
    if "group" in numeric:
        # The cells themselves, not their float values: a float merges ids beyond 2^53.
        group = group_ids(frame["group"].to_numpy(), first_row=1, where=f"{path}: ")
        numeric["group"] = group
        check_groups(numeric["label"], group, first_row=1, where=f"{path}: ")
    keep = [j for j, c in enumerate(frame.columns) if c not in RESERVED_COLUMNS]
    if not keep:
        raise InputError(f"{path}: no feature column besides {', '.join(RESERVED_COLUMNS)}")
    features = [frame.columns[j] for j in keep]
    X = np.ascontiguousarray(values[:, keep])
    try:
        return Instance(
            X=X,
            label=numeric["label"],
            truth=numeric.get("truth"),
            group=numeric.get("group"),
            feature_names=tuple(features),
            name=name,
        )
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


#: File name endings read as LIBSVM/svmlight files (any other file is CSV).
SVMLIGHT_SUFFIXES = (".svm", ".libsvm", ".svmlight")


def is_svmlight(path) -> bool:
    return os.fspath(path).lower().endswith(SVMLIGHT_SUFFIXES)


def read_svmlight(path: str, unlabeled: float = 0, name: Optional[str] = None) -> Instance:
    """Read a LIBSVM/svmlight file (``label index:value ...`` per line, as SVMlight, SVMlin and
    UniverSVM take) through scikit-learn's :func:`~sklearn.datasets.load_svmlight_file`.

    The labels other than ``unlabeled`` must be two classes: +1/-1 as given, any other pair
    mapped in sorted order (the smaller to -1, the larger to +1, recorded in
    ``meta["classes"]``). The features stay sparse (a ``scipy.sparse`` CSR matrix): see
    :meth:`s3vm.core.formulation.Formulation.dense_instance`.

    Parameters
    ----------
    path : str
    unlabeled : float, default 0
        The label that marks an unlabeled row (SVMlin's 0; UniverSVM's files may use another).
    name : str, optional

    Raises
    ------
    InputError
        On a missing or unreadable file, or labels of more than two classes.
    """
    from sklearn.datasets import load_svmlight_file

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(f"data file not found: {path}")
    try:
        X, y = load_svmlight_file(path, dtype=np.float64)
    except OverflowError:
        # scikit-learn keeps feature indices in 32-bit integers.
        raise InputError(f"{path}: a feature index is too large (LIBSVM indices must be below "
                         f"2^31)") from None
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable LIBSVM/svmlight file ({_first_line(exc)})") \
            from None
    if X.shape[1] == 0 or X.nnz == 0:
        # scikit-learn reads a file of labels only as one column of zeros.
        raise InputError(f"{path}: no feature value: every line holds a label only (LIBSVM "
                         "lines are 'label index:value ...')")
    unl = y == unlabeled
    classes = np.unique(y[~unl])
    spelled = ", ".join(f"{c:g}" for c in classes[:6])
    if classes.size > 2:
        raise InputError(f"{path}: {classes.size} classes ({spelled}) besides the unlabeled "
                         f"marker {unlabeled:g}: s3vm separates two classes")
    if classes.size == 2:
        low, high = classes
    elif classes.size == 1 and abs(classes[0]) == 1:
        low, high = -1.0, 1.0
    else:
        raise InputError(f"{path}: the labeled rows hold {classes.size} class(es) ({spelled}); "
                         f"two are needed (is {unlabeled:g} the unlabeled marker?)")
    label = np.where(unl, 0, np.where(y == high, 1, -1))
    stem = name or os.path.splitext(os.path.basename(path))[0]
    # Kept sparse (CSR): primal-tsvm and switching's rbf path read it as it is; a formulation
    # that reads dense features densifies it when that fits in memory, and refuses it otherwise
    # (an index of 10^9 would ask for terabytes).
    try:
        return Instance(X.tocsr(), label, name=stem,
                        meta={"file": os.path.basename(path), "format": "svmlight",
                              "classes": [float(low), float(high)],
                              "unlabeled_marker": float(unlabeled)})
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def as_instance(data, name: str = "arrays") -> Instance:
    """The :class:`Instance` of in-memory data: an Instance, a pandas DataFrame of the CSV
    contract (a ``label`` column), or a tuple ``(X, y)`` / ``(X, y, truth)`` of arrays or frames
    with y in s3vm's convention (+1/-1, 0 unlabeled). None for anything else (a path)."""
    if isinstance(data, Instance):
        return data
    if hasattr(data, "columns") and hasattr(data, "iloc"):
        return frame_instance(data, name=name)
    if isinstance(data, tuple):
        if len(data) not in (2, 3):
            raise InputError(f"give data as (X, y) or (X, y, truth), got a tuple of {len(data)}")
        X, y = data[0], data[1]
        truth = data[2] if len(data) == 3 else None
        names = tuple(str(c) for c in X.columns) if hasattr(X, "columns") else ()
        y = np.asarray(y)
        if y.ndim == 2 and 1 in y.shape:
            y = y.ravel()
        return Instance(X, y, truth, feature_names=names, name=name)
    if isinstance(data, np.ndarray):
        raise InputError("a bare array has no labels: give (X, y), y = +1/-1 and 0 for "
                         "unlabeled rows")
    return None
