"""Problem settings (kernel, penalties, balance) and TOML instance files.

An instance file names a data file (relative to the TOML file) and the settings of the problem::

    data = "data/two_moons.csv"
    kernel = "rbf"
    sigma = 0.5
    C = 10.0
    C_star = 10.0
    bias = true
    balance = "count"
    mu = 0.1
    nu = 1.0

Command-line options override the file's values.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, fields, replace
from typing import Optional, Union

import numpy as np

from s3vm.core.options import Option, table
from s3vm.core.registry import all_options
from s3vm.data.instance import Instance
from s3vm.data.readers import is_svmlight, read_csv, read_svmlight
from s3vm.data.resources import shipped_instance, shipped_instances
from s3vm.solvers.errors import MESSAGES, InputError
from s3vm.solvers.runtime.files import read_toml

KERNELS = ("linear", "rbf")
BALANCES = ("none", "count", "mean")

#: The problem settings every formulation shares: their checks and command-line flags.
SETTING_OPTIONS = (
    Option("kernel", "choice", "linear", "kernel k(x, z)", choices=KERNELS, group="problem"),
    Option("sigma", "float", 1.0, "rbf width: k(x,z) = exp(-|x-z|^2/(2 sigma^2))", minimum=0.0,
           open_min=True, group="problem"),
    Option("C", "float", 1.0, "penalty of labeled losses", minimum=0.0, flag="--C",
           group="problem"),
    Option("C_star", "float", None, "penalty of unlabeled losses (default: C)", minimum=0.0,
           flag="--C-star", group="problem"),
    Option("bias", "bool", True, "decision function without offset b", group="problem"),
    Option("hard_margin", "bool", False, "no upper bound on the SVM dual variables",
           group="problem"),
    Option("balance", "choice", "none", "balance constraint: count (exactly P unlabeled +1), "
           "mean (unlabeled outputs sum to u x the labeled mean: bb, bb-sdp, l2-miqp), none",
           choices=BALANCES, group="problem"),
    Option("positives", "positives", None, "balance count P of unlabeled +1 points, or "
           "'truth'", group="problem"),
    Option("mu", "float", 0.1, "weight of |w|_1 (LP/MIP family)", minimum=0.0, group="problem"),
    Option("nu", "float", 1.0, "weight of unlabeled losses (LP/MIP family)", minimum=0.0,
           group="problem"),
)
SETTINGS_TABLE = table(SETTING_OPTIONS)


@dataclass(frozen=True)
class Settings:
    """The parameters shared by all formulations (docs/formulations.md fixes their meaning).

    Parameters
    ----------
    kernel : {"linear", "rbf"}
    sigma : float
        Width of the rbf kernel, k(x, z) = exp(-|x - z|^2 / (2 sigma^2)).
    C, C_star : float
        Penalties of labeled and unlabeled losses (``C_star`` defaults to ``C``).
    bias : bool
        Whether the decision function has an offset b.
    hard_margin : bool
        SDP formulations only: no upper bound on the dual variables.
    balance : {"none", "count", "mean"}
        ``count``: exactly ``positives`` unlabeled points labeled +1. ``mean``: the outputs of
        the unlabeled points (clipped at the margin) sum to u times the mean of the labeled
        labels, the balance of Piccialli, Schwiddessen and Sudoso (2024); S3VM-L2 only
        (docs/formulations.md#balance).
    positives : int or "truth", optional
        The count P; ``"truth"`` takes the true count from the ``truth`` column; by default
        round(u * fraction of +1 among labeled points).
    mu : float
        Weight of the 1-norm of w (Problem 3).
    nu : float
        Weight of the unlabeled losses (Problem 3).

    Notes
    -----
    Every value is checked by its entry of :data:`SETTING_OPTIONS` (numpy scalars become Python
    numbers, so float32 and float64 are alike).
    """

    kernel: str = "linear"
    sigma: float = 1.0
    C: float = 1.0
    C_star: Optional[float] = None
    bias: bool = True
    hard_margin: bool = False
    balance: str = "none"
    positives: Optional[Union[int, str]] = None
    mu: float = 0.1
    nu: float = 1.0

    def __post_init__(self):
        for option in SETTING_OPTIONS:
            value = getattr(self, option.name)
            object.__setattr__(self, option.name, option.validate(value))

    @property
    def C_unlabeled(self) -> float:
        return self.C if self.C_star is None else self.C_star

    def updated(self, **changes) -> "Settings":
        """A copy with the given fields replaced; ``None`` values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def positive_count(self, instance: Instance, in_range: bool = True) -> int:
        """The balance count P for ``instance``, checked to lie in 0..u unless ``in_range`` is
        False (a search over labelings reports such a count as infeasible instead)."""
        u = instance.u
        if self.positives == "truth":
            instance.require_truth("--positives truth")
            P = int(np.sum(instance.truth_U == 1))
        elif self.positives is not None:
            P = int(self.positives)
        else:
            yL = instance.label[instance.labeled]
            frac = float(np.mean(yL == 1)) if yL.size else 0.5
            P = int(round(u * frac))
        if in_range and not 0 <= P <= u:
            raise InputError(f"positives must lie in 0..{u} (the number of unlabeled points), "
                             f"got {P}")
        return P

    def differences(self, other: "Settings") -> set:
        """The names of the fields whose values differ in ``other``."""
        return {f.name for f in fields(self) if getattr(self, f.name) != getattr(other, f.name)}

    def to_dict(self, keys=None) -> dict:
        """The settings as a dict (only ``keys`` when given)."""
        names = [f.name for f in fields(self)] if keys is None else list(keys)
        return {name: getattr(self, name) for name in names}


SETTING_KEYS = tuple(f.name for f in fields(Settings))


def _resolve(path) -> str:
    """The file ``path`` names: itself when it is a file, else the shipped instance of that name."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise InputError(f"{path} is a directory, not a data or instance file")
    if not os.path.isfile(path):
        shipped = shipped_instance(path)
        if shipped is None:
            raise InputError(f"file not found: {path} (shipped instances, usable by name: "
                             f"{', '.join(shipped_instances())})")
        path = str(shipped)
    return path


def _data_path(path: str, spec: dict) -> str:
    """The data file an instance file names (relative to the instance file)."""
    if "data" not in spec:
        raise InputError(f"{path}: an instance file needs a 'data' entry naming the data file")
    data = spec["data"]
    if not isinstance(data, str) or not data.strip():
        raise InputError(f"{path}: 'data' must name the data file (a non-empty string), got "
                         f"{data!r}")
    data_path = os.path.join(os.path.dirname(os.path.abspath(path)), data)
    if os.path.abspath(data_path) == os.path.abspath(path):
        raise InputError(f"{path}: 'data' names the instance file itself; it must name the "
                         "data file")
    return data_path


def instance_files(path) -> list:
    """The files :func:`load_instance` reads for ``path`` (the file itself and, for an instance
    file, its data file); as much as can be told, never an error."""
    try:
        path = _resolve(path)
        if not path.lower().endswith(".toml"):
            return [path]
        return [path, _data_path(path, read_toml(path))]
    except (InputError, TypeError, ValueError):
        return [os.fspath(path)] if isinstance(path, (str, os.PathLike)) else []


def _no_marker(data_path: str, marker, what: str) -> None:
    """Refuse an unlabeled marker for a CSV file, whose unlabeled rows are those of label 0:
    a marker there would be ignored without a word."""
    if marker is not None:
        raise InputError(f"{what} applies to LIBSVM/svmlight files only; {data_path} is a CSV "
                         "file, whose unlabeled rows have label 0")


def load_instance(path: str, unlabeled: Optional[float] = None) -> tuple[Instance, Settings]:
    """Load a data file (``.csv``, or LIBSVM/svmlight ``.svm``/``.libsvm``/``.svmlight``) or an
    instance file (``.toml``).

    ``path`` may also name a shipped instance file (``"two_moons"`` or ``"two_moons.toml"``, see
    :func:`s3vm.instances.shipped_instances`) when no file of that name exists: a real file
    always wins.

    An instance file has a ``data`` entry (the data file, relative to the instance file), the
    settings of :class:`Settings`, and optionally ``name``, ``description``, ``unlabeled`` (the
    label marking unlabeled rows of a LIBSVM file, default 0) and ``seed`` (the seed of the
    labeled draw that made the data file, recorded with every result).

    Parameters
    ----------
    path : str or os.PathLike
    unlabeled : float, optional
        The unlabeled marker of a LIBSVM file (default: the instance file's, else 0).

    Returns
    -------
    tuple of (Instance, Settings)
        The instance and the settings the file gives (defaults for a data file).
    """

    path = _resolve(path)
    if not path.lower().endswith(".toml"):
        if is_svmlight(path):
            return read_svmlight(path, 0 if unlabeled is None else unlabeled), Settings()
        _no_marker(path, unlabeled, "--unlabeled-marker")
        return read_csv(path), Settings()
    spec = read_toml(path)
    data_path = _data_path(path, spec)
    if not is_svmlight(data_path):
        _no_marker(data_path, unlabeled, "--unlabeled-marker")
        _no_marker(data_path, spec.get("unlabeled"), f"{path}: 'unlabeled'")
    unknown = set(spec) - set(SETTING_KEYS) - {"data", "name", "description", "unlabeled",
                                               "seed"}
    if unknown:
        raise InputError(f"{path}: unknown entries {', '.join(sorted(unknown))}")
    for key in ("name", "description"):
        if key in spec and not isinstance(spec[key], str):
            raise InputError(f"{path}: '{key}' must be a string, got {spec[key]!r}")
    if is_svmlight(data_path):
        marker = spec.get("unlabeled", 0) if unlabeled is None else unlabeled
        if isinstance(marker, bool) or not isinstance(marker, (int, float)):
            raise InputError(f"{path}: 'unlabeled' must be a number, got {marker!r}")
        instance = read_svmlight(data_path, marker, name=spec.get("name"))
    else:
        instance = read_csv(data_path, name=spec.get("name"))
    meta = {"instance_file": os.path.basename(path)}
    if "seed" in spec:
        if isinstance(spec["seed"], bool) or not isinstance(spec["seed"], int):
            raise InputError(f"{path}: seed must be an integer, got {spec['seed']!r}")
        meta["seed"] = spec["seed"]
    instance.meta.update(meta)
    try:
        settings = Settings(**{k: spec[k] for k in SETTING_KEYS if k in spec})
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    return instance, settings


# -- messages in the caller's terms -------------------------------------------------------------

#: Flags of the command line that are keywords of the Python API's functions (beside the
#: settings and the formulations' options): flag -> keyword.
RUN_FLAGS = {"--solver": "solver", "--time-limit": "time_limit", "--profile": "profile",
             "--format": "fmt", "--verbose": "verbose", "--scale": "scale"}

#: Keywords users bring from other libraries, and what s3vm calls them.
KEYWORD_ADVICE = {
    "gamma": "use sigma: the rbf kernel is exp(-|x - z|^2 / (2 sigma^2)), so "
             "gamma = 1/(2 sigma^2) is sigma = (2 gamma)^-1/2",
    "timeout": "use time_limit (seconds)",
    "max_time": "use time_limit (seconds)",
    "C_u": "use C_star (the penalty of the unlabeled losses)",
    "c_u": "use C_star (the penalty of the unlabeled losses)",
    "lam": "use C (s3vm penalises the losses, not the norm: C is 1/lambda up to scaling)",
    "lambda_": "use C (s3vm penalises the losses, not the norm: C is 1/lambda up to scaling)",
}

_FLAG = re.compile(r"--([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?: ([A-Za-z0-9_.+-]*[A-Za-z0-9]))?")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$")
_FLAGS: dict = {}


def _flag_table() -> dict:
    """flag -> (keyword, Option or None) of every setting, option and run keyword."""
    if not _FLAGS:
        table_ = {flag: (name, None) for flag, name in RUN_FLAGS.items()}
        for option in SETTING_OPTIONS:
            table_[option.flag_name] = (option.name, option)
        for name, (option, _) in all_options().items():
            table_.setdefault(option.flag_name, (name, option))
        _FLAGS.update(table_)
    return _FLAGS


def python_terms(message: str) -> str:
    """``message`` with the command line's flags spelled as the Python API's keywords.

    ``--kernel must be ...`` becomes ``kernel= must be ...``, ``--balance count`` becomes
    ``balance='count'``, ``--no-bias`` ``bias=False``, ``--C 10`` ``C=10``; a flag that is no
    keyword of the API (``--set``) is left as it is.
    """
    if "--" not in message:
        return message
    flags = _flag_table()

    def spell(match) -> str:
        flag, word = "--" + match.group(1), match.group(2)
        entry = flags.get(flag)
        if entry is None:
            return match.group(0)
        name, option = entry
        rest = "" if word is None else " " + word
        if option is not None and option.kind == "bool":
            return f"{name}={option.default is not True}{rest}"
        if word is None:
            return f"{name}="
        if _NUMBER.match(word):
            return f"{name}={word}"
        quoted = (option is None and name != "verbose") or option.kind == "file" \
            or (option.kind == "choice" and word in option.choices) \
            or (option.kind == "positives" and word == "truth")
        return f"{name}={word!r}" if quoted else f"{name}={rest}"

    return _FLAG.sub(spell, message)


def keyword_hint(key: str, formulation: Optional[str] = None) -> str:
    """What the caller may have meant by an unknown keyword ``key`` ("" when nothing fits):
    the s3vm name of another library's keyword, the ``options`` dict for a formulation's option
    given as a keyword, or the closest known names."""

    if key in KEYWORD_ADVICE:
        return f" ({KEYWORD_ADVICE[key]})"
    options = all_options()
    if key in options:
        owners = options[key][1]
        if formulation is None or formulation in owners:
            return (f" ({key} is an option of {', '.join(owners)}: give it as "
                    f"options={{{key!r}: ...}})")
        return f" ({key} is an option of {', '.join(owners)}, not of {formulation})"
    known = [opt.name for opt in SETTING_OPTIONS] + list(options) + list(RUN_FLAGS.values())
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
    if not close:
        lowered = {name.lower(): name for name in known}
        close = [lowered[key.lower()]] if key.lower() in lowered else []
    return f" (did you mean {' or '.join(close)}?)" if close else ""


MESSAGES["translate"] = python_terms
