"""Declarative option tables: one :class:`Option` per keyword a formulation or the problem takes.

A formulation lists its options once, in its class attribute ``options``; from that table come
its constructor's checks (:meth:`Option.validate`), the command line's flags
(:func:`add_flags`), and which formulations of a comparison an option goes to. The problem
settings shared by all formulations (kernel, C, balance, ...) have a table of the same kind in
:mod:`s3vm.core.settings`. A new option is therefore added in one place.
"""

from __future__ import annotations

import argparse
import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from s3vm.solvers.errors import InputError

KINDS = ("int", "float", "choice", "bool", "file", "positives", "text")


@dataclass(frozen=True)
class Option:
    """One keyword option: its type, default, admissible values and command-line flag.

    Parameters
    ----------
    name : str
        The Python keyword (``max_lps``); the attribute of the formulation that holds it.
    kind : {"int", "float", "choice", "bool", "file", "positives", "text"}
        ``file``: the name of a file to write; ``positives``: an integer or ``"truth"``;
        ``text``: any non-empty string (an address).
    default : object
        The value when the option is not given (None: automatic, the formulation decides).
    help : str
        One line for ``--help``.
    choices : tuple of str
        The admissible values of a ``choice``.
    minimum, maximum : float, optional
        Bounds of a number, inclusive unless ``open_min``/``open_max``.
    flag : str, optional
        The command-line flag; default ``--`` + the name with dashes. A ``bool`` whose default
        is True is switched off by its flag.
    group : str
        The heading of the flag in ``--help``.
    cli : bool
        Whether the command line offers the option (False for tuning knobs of the API).
    """

    name: str
    kind: str
    default: Any = None
    help: str = ""
    choices: tuple = ()
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    open_min: bool = False
    open_max: bool = False
    flag: Optional[str] = None
    group: str = "formulation options"
    cli: bool = True

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name}: unknown kind {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"option {self.name}: a choice needs choices")

    @property
    def flag_name(self) -> str:
        if self.flag:
            return self.flag
        stem = self.name.replace("_", "-")
        if self.kind == "bool" and self.default is True:
            return f"--no-{stem}"
        return f"--{stem}"

    # -- checks ----------------------------------------------------------------------------
    def validate(self, value: Any) -> Any:
        """``value`` checked and normalised (numpy scalars to Python numbers), else InputError
        naming the flag."""
        if value is None:
            if self.default is None:
                return None
            raise InputError(f"{self.flag_name} needs a value")
        what = self.flag_name
        if self.kind == "bool":
            if isinstance(value, bool) or (isinstance(value, numbers.Integral)
                                           and type(value).__name__ == "bool_"):
                return bool(value)
            raise InputError(f"{what} must be true or false, got {value!r}")
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise InputError(f"{what} must be one of {', '.join(self.choices)}, "
                                 f"got {value!r}")
            return value
        if self.kind == "file":
            if not isinstance(value, str) or not value:
                raise InputError(f"{what} must be a file name, got {value!r}")
            return value
        if self.kind == "text":
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{what} must be a non-empty text, got {value!r}")
            return value.strip()
        if self.kind == "positives":
            if value == "truth":
                return value
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise InputError(f"{what} must be an integer or 'truth', got {value!r}")
            if value < 0:
                # A count above u is a problem without feasible labelings (bb reports it so); a
                # negative count is no count at all.
                raise InputError(f"{what} must be a count >= 0, got {value}")
            return int(value)
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                if isinstance(value, numbers.Real) and float(value).is_integer() \
                        and not isinstance(value, bool):
                    value = int(value)
                else:
                    raise InputError(f"{what} must be an integer, got {value!r}")
            value = int(value)
        else:  # float
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise InputError(f"{what} must be a number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise InputError(f"{what} must be a finite number, got {value}")
        self._check_range(value)
        return value

    def _check_range(self, value) -> None:
        low, high = self.minimum, self.maximum
        too_low = low is not None and (value < low or (self.open_min and value == low))
        too_high = high is not None and (value > high or (self.open_max and value == high))
        if too_low or too_high:
            raise InputError(f"{self.flag_name} must be {self.range_text()}, got {value}")

    def range_text(self) -> str:
        """``> 0``, ``>= 1``, ``in [0, 1)`` ... for messages."""
        low, high = self.minimum, self.maximum
        fmt = (lambda v: f"{v:g}") if self.kind == "float" else (lambda v: f"{int(v)}")
        if low is not None and high is not None:
            left, right = "(" if self.open_min else "[", ")" if self.open_max else "]"
            return f"in {left}{fmt(low)}, {fmt(high)}{right}"
        if low is not None:
            return f"{'>' if self.open_min else '>='} {fmt(low)}"
        if high is not None:
            return f"{'<' if self.open_max else '<='} {fmt(high)}"
        return "valid"

    # -- the command line ------------------------------------------------------------------
    def parse(self, text: str) -> Any:
        """The argparse ``type``: the flag's text as a value of this kind (range checked later,
        by :meth:`validate`, with the same message as from the Python API)."""
        if self.kind == "int":
            try:
                return int(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if self.kind == "float":
            try:
                return float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if self.kind == "bool":
            lowered = text.strip().lower()
            if lowered in ("true", "false"):
                return lowered == "true"
            raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
        if self.kind == "positives":
            if text == "truth":
                return text
            try:
                return int(text)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"expected an integer or 'truth', got {text!r}") from None
        return text

    def add_to(self, group, owners: Iterable[str] = ()) -> None:
        """Add this option's flag to an argparse group; ``owners`` name who takes it."""
        owners = list(owners)
        text = self.help
        if owners:
            text = f"{', '.join(owners)}: {text}" if text else ", ".join(owners)
        if self.default is not None and not isinstance(self.default, bool) \
                and self.kind != "file":
            text += f" (default {self.default})"
        text = text.replace("%", "%%")
        if self.kind == "bool":
            group.add_argument(self.flag_name, dest=self.name, action="store_const",
                               const=not self.default, help=text)
            return
        kwargs = {"dest": self.name, "type": self.parse, "help": text}
        if self.kind == "choice":
            kwargs["choices"] = self.choices
        elif self.kind in ("int", "float", "text"):
            kwargs["metavar"] = self.name.upper().replace("_", "-")
        group.add_argument(self.flag_name, **kwargs)


def table(options: Iterable[Option]) -> dict:
    """name -> Option; a later entry of the same name replaces an earlier one (a subclass
    changing its parent's default)."""
    return {opt.name: opt for opt in options}


def flags_of(names: Iterable[str], options: dict) -> str:
    """The flags of option names, for messages (``--max-lps, --seed``); a name no table knows
    (only the Python API can give one) as its keyword, ``name=``."""
    return ", ".join(options[n].flag_name if n in options else n + "=" for n in names)


def add_flags(parser: argparse.ArgumentParser, owners: dict) -> None:
    """Add every command-line option of ``owners`` (option -> names of who takes it), grouped
    by their ``group``, each flag once.

    Parameters
    ----------
    owners : dict
        Option -> list of formulation names (or an empty list for the problem settings).
    """
    groups: dict = {}
    seen: dict = {}
    for opt, who in owners.items():
        if not opt.cli:
            continue
        if opt.flag_name in seen:
            if seen[opt.flag_name].name != opt.name:
                raise ValueError(f"flag {opt.flag_name} names two options: "
                                 f"{seen[opt.flag_name].name} and {opt.name}")
            continue
        seen[opt.flag_name] = opt
        group = groups.get(opt.group)
        if group is None:
            group = groups[opt.group] = parser.add_argument_group(opt.group)
        opt.add_to(group, who)


#: The seed of a formulation's randomised steps (k-median restarts, Nystroem landmarks, the first
#: working set): shared so that one ``--seed`` reaches every formulation that has one.
SEED = Option("seed", "int", 0, "seed of randomised steps (k-median restarts, Nystroem "
              "landmarks, working set)", minimum=0)
