"""Checked keys: every environment variable and every entry of a solver profile, with its type
and range, in one declarative table each (the suite file's table, :data:`s3vm.bench.spec.SUITE`,
is made of the same :class:`Key`).

A reader never checks a value by hand: it asks the key (:meth:`Key.check` for a value read
from a TOML file, :func:`environment_value` for an environment variable), so that a value of
the wrong type or out of its range is one :class:`~s3vm.solvers.errors.InputError` naming the
key (exit status 2 and one line on the command line), whoever reads it. The command line checks
every variable of :data:`ENVIRONMENT` before it starts (:func:`check_environment`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Optional

from s3vm.solvers.errors import InputError

#: The kinds of value a key holds.
#: ``number``: a finite real; ``integer``; ``bool``; ``name``: a non-empty string; ``text``:
#: any string; ``choice``: one of ``choices``; ``size``: bytes as ``8G``, ``512M`` or a count;
#: ``folder``: an existing directory; ``table``: a TOML table; ``scalars``: a table of strings,
#: numbers and booleans, or of tables of them (a solver's options; MOSEK takes a table of its
#: parameters); ``list``: a non-empty list of ``item`` values;
#: ``tables``: a non-empty list of tables.
KINDS = ("number", "integer", "bool", "name", "text", "choice", "size", "folder", "table",
         "scalars", "list", "tables")

_SIZE_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass(frozen=True)
class Key:
    """One key of a file or of the environment: its kind, range and meaning.

    Parameters
    ----------
    name : str
        As the user writes it (``time_limit``, ``S3VM_MEMORY_LIMIT``).
    kind : str
        One of :data:`KINDS`.
    help : str
        One line for the documentation.
    example : object
        A valid value (for the documentation; the tests start from it).
    minimum, maximum : float, optional
        Bounds of a number, an integer or a size, inclusive unless ``open_min``/``open_max``.
    choices : tuple of str
        The admissible values of a ``choice``.
    item : str, optional
        The kind of a ``list``'s items (``name`` or ``integer``, with the key's range).
    what : str, optional
        What a value must be, for messages, when the kind's words say too little (``a file
        stem``).
    """

    name: str
    kind: str
    help: str
    example: Any = None
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    open_min: bool = False
    open_max: bool = False
    choices: tuple = ()
    item: Optional[str] = None
    what: Optional[str] = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"key {self.name}: unknown kind {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"key {self.name}: a choice needs choices")
        if self.kind == "list" and self.item not in ("name", "integer"):
            raise ValueError(f"key {self.name}: a list needs an item kind (name or integer)")

    @property
    def has_range(self) -> bool:
        """Whether some value of the right type is still refused (a bound, a choice, a
        non-empty name, an existing folder, a flat table)."""
        return (self.minimum is not None or self.maximum is not None
                or self.kind in ("choice", "name", "folder", "scalars", "list", "tables"))

    # -- checks ----------------------------------------------------------------------------
    def check(self, value: Any, where: str = "") -> Any:
        """``value`` (as TOML gives it) checked and normalised, else InputError naming the
        key; ``where`` prefixes the message (``"p.toml: "``)."""
        kind = self.kind
        if kind == "list":
            if not isinstance(value, list) or not value:
                self._refuse(where, "a non-empty list", value)
            return [self._scalar(self.item, v, where) for v in value]
        if kind == "tables":
            if not isinstance(value, list) or not value or \
                    not all(isinstance(v, dict) for v in value):
                self._refuse(where, "a non-empty list of tables", value)
            return value
        if kind in ("table", "scalars"):
            if not isinstance(value, dict):
                self._refuse(where, "a table", value)
            if kind == "scalars":
                for entry, inner in value.items():
                    if isinstance(inner, dict):  # one level: MOSEK's mosek_params table
                        bad = [k for k, v in inner.items() if isinstance(v, (dict, list))]
                        if not bad:
                            continue
                        entry, inner = f"{entry}.{bad[0]}", inner[bad[0]]
                    if isinstance(inner, (dict, list)):
                        raise InputError(f"{where}{self.name}.{entry} must be a string, a "
                                         f"number or true/false (a solver option), got "
                                         f"{_shown(inner)}")
            return value
        return self._scalar(kind, value, where)

    def parse(self, text: str, where: str = "") -> Any:
        """The value of an environment variable's ``text``, checked as :meth:`check` does."""
        kind = self.kind
        stripped = text.strip()
        if kind in ("number", "integer"):
            try:
                value = int(stripped) if kind == "integer" else float(stripped)
            except ValueError:
                self._refuse(where, self._wanted(kind), text)
            return self._scalar(kind, value, where)
        if kind == "bool":
            if stripped.lower() not in ("true", "false", "1", "0"):
                self._refuse(where, "true or false (1 or 0)", text)
            return stripped.lower() in ("true", "1")
        if kind == "size":
            return self._scalar(kind, _parse_size(stripped, self, where), where)
        return self._scalar(kind, stripped if kind != "text" else text, where)

    def _scalar(self, kind: str, value: Any, where: str) -> Any:
        if kind == "bool":
            if not isinstance(value, bool):
                self._refuse(where, "true or false", value)
            return value
        if kind in ("name", "text", "choice", "folder"):
            if not isinstance(value, str):
                self._refuse(where, self._wanted(kind), value)
            if kind == "name" and not value.strip():
                self._refuse(where, "a non-empty name", value)
            if kind == "choice" and value not in self.choices:
                self._refuse(where, "one of " + ", ".join(repr(c) for c in self.choices), value)
            if kind == "folder" and not os.path.isdir(value):
                self._refuse(where, "an existing folder", value)
            return value.strip() if kind == "name" else value
        if kind in ("number", "integer", "size"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self._refuse(where, self._wanted(kind), value)
            if kind == "integer" and not isinstance(value, int):
                self._refuse(where, "an integer", value)
            if not math.isfinite(value):
                self._refuse(where, f"a finite {self._wanted(kind)[2:]}", value)
            low, high = self.minimum, self.maximum
            if (low is not None and (value < low or (self.open_min and value == low))) or \
                    (high is not None and (value > high or (self.open_max and value == high))):
                self._refuse(where, f"{self._wanted(kind)} {self.range_text()}", value)
            return value
        raise ValueError(f"key {self.name}: no scalar kind {kind!r}")  # pragma: no cover

    def _wanted(self, kind: str) -> str:
        if self.what is not None and kind == self.kind:
            return self.what
        return {"number": "a number", "integer": "an integer", "size": "a size (8G, 512M or "
                "bytes)", "name": "a name", "text": "a string",
                "choice": "a string", "folder": "a folder (a string)"}.get(kind, kind)

    def _refuse(self, where: str, wanted: str, value: Any):
        raise InputError(f"{where}{self.name} must be {wanted}, got {_shown(value)}")

    def range_text(self) -> str:
        """``> 0``, ``in [0, 1)``, ... for messages."""
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            left, right = "(" if self.open_min else "[", ")" if self.open_max else "]"
            return f"in {left}{low:g}, {high:g}{right}"
        if low is not None:
            return f"{'>' if self.open_min else '>='} {low:g}"
        if high is not None:
            return f"{'<' if self.open_max else '<='} {high:g}"
        return ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _parse_size(text: str, key: Key, where: str) -> float:
    """Bytes of ``8G``, ``512M``, ``1.5GiB`` or ``1500000``."""
    upper = text.upper().removesuffix("B").removesuffix("I")
    unit = upper[-1:] if upper[-1:] in _SIZE_SUFFIX and upper[-1:] else ""
    number = upper[:-1] if unit else upper
    try:
        return float(number) * _SIZE_SUFFIX[unit]
    except ValueError:
        key._refuse(where, "a size such as 8G or 512M", text)


def table(*keys: Key) -> dict:
    """name -> Key."""
    return {key.name: key for key in keys}


# -- the environment -------------------------------------------------------------------------
#: Every environment variable s3vm reads.
ENVIRONMENT = table(
    Key("S3VM_ISOLATE", "choice", "0: the command line runs each solve in a thread instead of "
        "a child process", example="0", choices=("0", "1")),
    Key("S3VM_PROGRESS_SECONDS", "number", "seconds between progress lines (default 5)",
        example="0.5", minimum=0.01, maximum=86400.0),
    Key("S3VM_MEMORY_LIMIT", "size", "the memory a solve may use (8G, 512M), when less than "
        "the machine's", example="8G", minimum=1, maximum=float(1 << 60)),
    Key("S3VM_DEBUG", "choice", "1: an internal error prints its traceback", example="1",
        choices=("0", "1")),
    Key("S3VM_DATA_DIR", "folder", "the folder of the bundled data sets (default: the "
        "package's)", example="."),
    Key("S3VM_FUZZ", "choice", "long: the long profile of the fuzz campaign (tests only)",
        example="long", choices=("long", "normal")),
    Key("S3VM_EXACT", "choice", "long: more instances per scale in "
        "tests/test_exactness_scales.py (tests only)", example="long",
        choices=("long", "normal")),
)


def environment_value(name: str, default: Any = None) -> Any:
    """The checked value of environment variable ``name`` (one of :data:`ENVIRONMENT`), or
    ``default`` when it is unset or empty; InputError naming it when it is out of its range."""
    key = ENVIRONMENT[name]
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    return key.parse(text)


def check_environment() -> None:
    """Check every variable of :data:`ENVIRONMENT` that is set (the command line's first
    step: a wrong value is refused before anything runs, not when it is first read)."""
    for name in ENVIRONMENT:
        environment_value(name)


# -- solver profiles --------------------------------------------------------------------------
#: Every entry of a solver profile file (:mod:`s3vm.solvers.profiles`).
PROFILE = table(
    Key("solver", "name", "a solver name from `s3vm list`", example="highs"),
    Key("time_limit", "number", "seconds", example=600, minimum=0.0, open_min=True),
    Key("mip_rel_gap", "number", "relative optimality gap at which a MIP solve may stop",
        example=1e-6, minimum=0.0, maximum=1.0, open_max=True),
    Key("threads", "integer", "threads of the solver", example=1, minimum=1, maximum=4096),
    Key("verbose", "bool", "the solver's log on stderr", example=False),
    Key("options", "scalars", "passed to the solver unchanged (each a string, a number or "
        "true/false)", example={"presolve": "on"}),
    Key("description", "text", "what the profile is for", example="HiGHS, one thread"),
)
