"""The results files of a suite: ``STEM.jsonl`` (one record a line, the file a run is resumed
from), ``STEM.csv`` and ``STEM.parquet`` rebuilt from it, read back, and summarised.

A bench holds an exclusive lock on ``STEM.jsonl`` for its whole run, writes each record with one
``write`` followed by ``fsync``, and repairs a last line cut short by a crash before it resumes
(docs/reliability.md, "Files").
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from typing import Optional

from s3vm.core.settings import SETTING_KEYS
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.files import atomic_output, check_writable

#: The settings a run solved with, one column each (empty where the formulation reads none).
SETTING_COLUMNS = SETTING_KEYS


#: What applied to a run (``info["applied"]`` of its result: s3vm.core.answers), one column each:
#: the profile (a shipped profile's name or the file) and the solver options in force (JSON).
APPLIED_COLUMNS = ("profile", "solver_options")

#: The columns of the CSV results file (and of the summary's source), in order.
COLUMNS = ("suite", "run", "instance", "formulation", "grid", "seed") + SETTING_COLUMNS + (
    "time_limit", "status", "objective", "lower_bound", "gap", "error", "auc", "seconds",
    "nodes", "iterations", "solver", "message") + APPLIED_COLUMNS


NUMERIC_COLUMNS = ("seed", "sigma", "C", "C_star", "mu", "nu", "time_limit", "objective",
                   "lower_bound", "gap", "error", "auc", "seconds", "nodes", "iterations")


# -- the results files ---------------------------------------------------------------------
#: The fields every record holds, with their types: a line without them is not a record.
REQUIRED_FIELDS = {"suite": str, "run": str, "instance": str, "formulation": str, "status": str}


#: The types of the fields a record may hold (or hold as null), read by the summary and plots.
OPTIONAL_FIELDS = {"grid": dict, "settings": dict, "seed": int, "applied": dict,
                   **{k: (int, float) for k in ("objective", "lower_bound", "gap", "error",
                                                 "auc", "seconds", "nodes", "iterations",
                                                 "time_limit")}}


class ResultsFiles:
    """``STEM.jsonl`` (every record, appended as runs finish: the file a suite resumes from),
    ``STEM.csv`` (the scalar columns, appended alike) and ``STEM.parquet`` (written at the end
    when pyarrow is installed).

    One process at a time writes them: :meth:`locked` holds an exclusive ``flock`` on
    ``STEM.jsonl`` while the suite runs, and a second ``s3vm bench`` on the same files is
    refused at once (it would run the same runs again) instead of waiting for the first.
    """

    def __init__(self, stem: str, suite: str):
        self.stem, self.suite = stem, suite
        self.jsonl, self.csv, self.parquet = stem + ".jsonl", stem + ".csv", stem + ".parquet"
        self._fd: Optional[int] = None

    @property
    def paths(self) -> tuple:
        return self.jsonl, self.csv, self.parquet

    def check(self) -> None:
        """InputError unless the files can be written and ``STEM.csv`` is not someone else's."""

        for path in self.paths:
            check_writable(path)
        if not os.path.exists(self.jsonl) and os.path.exists(self.csv):
            raise InputError(f"{self.csv} exists without {os.path.basename(self.jsonl)}: not "
                             f"the results of suite {self.suite!r}; give another --output")

    def read(self) -> list:
        """The records already there, read without writing (a last line cut short, by a stop
        or by a writer now at work, is left out); InputError for another suite's file or a
        file that is not a results file."""
        self.check()
        if not os.path.exists(self.jsonl):
            return []
        return read_records(self.jsonl, suite=self.suite)

    @contextmanager
    def locked(self):
        """Hold the results files for this process; yields the records already there.

        A last line cut short by a crash is repaired first (cut off, or completed with its
        newline when it is a whole record), so that the next append starts a line of its own.
        A block that ends in an exception before anything was recorded in files it created
        (an unreachable cluster) leaves no file behind.
        """
        self.check()
        fresh = not os.path.exists(self.jsonl)
        fd = self._open_locked()
        try:
            _repair_last_line(fd)
            records = read_records(self.jsonl, suite=self.suite)
            self._fd = fd
            if records or os.path.exists(self.csv):
                self._rewrite_csv(records)  # a CSV cut short, or of an older layout, made whole
            yield records
        except BaseException:
            if fresh and os.fstat(fd).st_size == 0:
                for path in (self.jsonl, self.csv):  # before the lock goes: no one has them
                    if os.path.exists(path):
                        os.unlink(path)
            raise
        finally:
            self._fd = None
            os.close(fd)  # releases the lock

    def _open_locked(self) -> int:
        """A descriptor of ``STEM.jsonl`` (created if need be) under an exclusive flock (no
        lock where the system has no flock)."""
        try:
            fd = os.open(self.jsonl, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
        except OSError as exc:
            raise InputError(f"cannot write {self.jsonl}: {exc.strerror or exc}") from None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The holder may have removed the file before letting go: then this lock is on a
            # file no one else will see, and the suite must start again from the path.
            if os.fstat(fd).st_ino != os.stat(self.jsonl).st_ino:
                raise BlockingIOError
        except (BlockingIOError, FileNotFoundError):
            os.close(fd)
            raise InputError(f"{self.jsonl} is being written by another s3vm bench (it holds "
                             "the file's lock): wait for it to end, or give another --output") \
                from None
        return fd

    def append(self, record: dict) -> None:
        """Append one record: one write of one whole line to each file, on disk (fsync) before
        the next run is recorded, so that a crash loses at most the line being written."""
        if self._fd is None:
            raise RuntimeError("ResultsFiles.append outside ResultsFiles.locked")
        line = json.dumps(record, default=_json_default) + "\n"
        _write_all(self._fd, line.encode("utf-8"))
        os.fsync(self._fd)
        row = _csv_text([csv_row(record)])
        fd = os.open(self.csv, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        try:
            if os.fstat(fd).st_size == 0:
                row = _csv_text([COLUMNS]) + row
            _write_all(fd, row.encode("utf-8"))
        finally:
            os.close(fd)

    def _rewrite_csv(self, records: list) -> None:
        with atomic_output(self.csv, suffix=".csv") as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(_csv_text([COLUMNS] + [csv_row(r) for r in records]))

    def finish(self, records: list) -> list:
        """Rewrite the CSV whole from the records (and the Parquet file when pyarrow is
        installed); the names of the files written."""

        self._rewrite_csv(records)
        written = [self.jsonl, self.csv]
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            return written
        frame = records_frame(records)
        with atomic_output(self.parquet, suffix=".parquet") as tmp:
            frame.to_parquet(tmp, index=False)
        written.append(self.parquet)
        return written


def _write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written (a write to a file may be partial)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _csv_text(rows) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(rows)
    return buffer.getvalue()


def _repair_last_line(fd: int) -> None:
    """Cut off a last line that a crash left unfinished (no newline, not a whole record), or
    end a whole last record with its newline; in place, the lock stays on the same file."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    data = os.pread(fd, size, 0)
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    record, why = _parse_line(data[cut:])
    if record is not None and not why:
        _write_all(fd, b"\n")
    else:
        os.ftruncate(fd, cut)
    os.fsync(fd)


def _json_default(value):
    import numpy as np

    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def csv_row(record: dict) -> list:
    settings = record.get("settings") or {}
    applied = record.get("applied") or {}
    row = []
    for column in COLUMNS:
        value = settings.get(column) if column in SETTING_COLUMNS else record.get(column)
        if column in APPLIED_COLUMNS:
            value = applied.get(column)
        if column == "grid" or (column == "solver_options" and value is not None):
            value = json.dumps(value or {}, sort_keys=True)
        row.append("" if value is None else value)
    return row


def _parse_line(line: bytes):
    """(record, None) for a line that holds a whole record; (record, why) for a JSON object of
    a suite's run that lacks another field; (None, why) for anything else."""
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, "not JSON"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    for key, kind in REQUIRED_FIELDS.items():
        if key not in record:
            why = f"no {key!r} field"
        elif not isinstance(record[key], kind):
            why = f"its {key!r} is {record[key]!r}"
        else:
            continue
        return (record if key not in ("suite", "run") else None), why
    for key, kind in OPTIONAL_FIELDS.items():
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
            return record, f"its {key!r} is {value!r}"
    return record, None


def read_records(path: str, suite: Optional[str] = None) -> list:
    """The records of a JSON-lines results file, checked to belong to ``suite`` when given.

    A last line without its newline that is not a whole record was cut short (a run stopped
    while writing it, or one being written now): it is left out. Any other line that is not a
    record (not JSON, or without one of the fields of :data:`REQUIRED_FIELDS`) is an
    InputError naming it.
    """
    if not os.path.isfile(path):
        raise InputError(f"results file not found: {path}")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record, why = _parse_line(line)
        if record is None or why:
            if number == len(lines) and line.lstrip().startswith(b"{"):
                break  # unfinished: the last line, with no newline after it
        if record is not None and suite is not None and record["suite"] != suite:
            raise InputError(f"{path} holds the results of suite {record['suite']!r}, not of "
                             f"{suite!r}: give another --output")
        if why:
            raise InputError(f"{path}: line {number} is not a record of an s3vm results file "
                             f"({why})")
        records.append(record)
    return records


def records_frame(records: list):
    """A pandas DataFrame of the records' scalar columns (grid as JSON text): the numeric
    columns as numbers, ``bias`` and ``hard_margin`` as booleans, every other column as text
    (so that a value of an unexpected type cannot make a column of mixed types)."""
    import pandas as pd

    rows = [dict(zip(COLUMNS, csv_row(r))) for r in records]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in COLUMNS:
        values = frame[column].replace("", None)
        if column in NUMERIC_COLUMNS:
            frame[column] = pd.to_numeric(values, errors="coerce")
        elif column in ("bias", "hard_margin"):
            frame[column] = values.map(lambda v: None if v is None else bool(v)).astype("boolean")
        else:
            frame[column] = values.map(lambda v: None if v is None else str(v))
    return frame


# -- the summary -------------------------------------------------------------------------
def summary(records: list) -> str:
    """One line per instance x formulation x grid point, over its seeds: runs, statuses, and
    the means of objective, gap, error, ROC AUC, seconds and nodes."""
    from tabulate import tabulate

    groups: dict = {}
    for r in records:
        grid = ", ".join(f"{k}={v}" for k, v in (r.get("grid") or {}).items())
        groups.setdefault((r["instance"], r["formulation"], grid), []).append(r)

    def mean(rows, key, spec):
        values = [r[key] for r in rows if r.get(key) is not None]
        return format(sum(values) / len(values), spec) if values else "-"

    body = []
    for (instance, formulation, grid), rows in groups.items():
        counts: dict = {}
        for r in rows:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        status = " ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        body.append([instance, formulation, grid or "-", len(rows), status,
                     mean(rows, "objective", ".6g"), mean(rows, "gap", ".2%"),
                     mean(rows, "error", ".2%"), mean(rows, "auc", ".4f"),
                     mean(rows, "seconds", ".2f"), mean(rows, "nodes", ".0f")])
    header = ["instance", "formulation", "grid", "runs", "status", "objective", "gap", "error",
              "ROC AUC", "seconds", "nodes"]
    return tabulate(body, headers=header, disable_numparse=True)
