"""The command line's parser: one-line errors, the flag groups commands share, and the reading
of parsed flags back into the API's arguments. Each command adds its own parser
(:mod:`s3vm.cli.commands`)."""

from __future__ import annotations

import argparse

from s3vm._version import __version__
from s3vm.cli.commands import COMMANDS, command_module
from s3vm.core.options import Option, add_flags
from s3vm.core.registry import all_options, formulation_options
from s3vm.core.settings import SETTING_OPTIONS, SETTINGS_TABLE, instance_files, load_instance
from s3vm.data.scaling import scale_instance
from s3vm.solvers.errors import InputError

PROG = "s3vm"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2 (argparse prints the whole usage), and
    an option given twice refused (argparse would keep the last silently: ``--C 1 --C 2``),
    and no abbreviation of a long flag (``--sig 0.5 --sigma 2`` would give sigma twice, the
    last one winning; a flag added later would change what an abbreviation means)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise InputError(message)

    def parse_known_args(self, args=None, namespace=None):
        seen: dict = {}
        for token in list(args or []):
            if token == "--":
                break
            flag = token.split("=", 1)[0]
            action = self._option_string_actions.get(flag)
            if action is None or isinstance(action, argparse._AppendAction) or \
                    isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            if action.dest in seen:
                raise InputError(f"{flag} is given twice ({seen[action.dest]} and {token}): "
                                 "give each option once")
            seen[action.dest] = token
        return super().parse_known_args(args, namespace)


def number(text: str) -> float:
    """An argparse type: a float, or a one-line error."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def seed(text: str) -> int:
    """An argparse type: a seed, an integer >= 0 (numpy's generators take no negative seed)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def add_problem_options(p: argparse.ArgumentParser) -> None:
    """The settings of the problem (kernel, penalties, balance, ...), and how to read the data."""
    add_flags(p, {opt: [] for opt in SETTING_OPTIONS})
    p.add_argument("--scale", choices=("standard", "minmax"),
                   help="scale features before solving (off by default)")
    p.add_argument("--unlabeled-marker", dest="unlabeled_marker", type=number,
                   help="the label of unlabeled rows in a LIBSVM/svmlight file (default 0)")


def add_solver_options(p: argparse.ArgumentParser) -> None:
    """Which solver, its profile and time limit, and how much is said on stderr."""
    g = p.add_argument_group("solver")
    g.add_argument("--solver", help="solver name (see `s3vm list`)")
    g.add_argument("--profile", help="solver profile file (TOML)")
    g.add_argument("--time-limit", dest="time_limit", type=number,
                   help="seconds, model building included")
    g.add_argument("--quiet", "-q", action="store_true",
                   help="no progress or log lines on stderr")
    g.add_argument("--verbose", action="store_true",
                   help="the solver's own log on stderr (by default solver libraries print "
                        "nothing)")


def add_formulation_options(p: argparse.ArgumentParser) -> None:
    """Every formulation's own options, each flag saying which formulations take it."""
    add_flags(p, {option: owners for option, owners in all_options().values()})


def add_per_formulation(p: argparse.ArgumentParser) -> None:
    """``--set NAME.KEY=VALUE``: a setting or option for one formulation of several."""
    p.add_argument("--set", dest="per_formulation", action="append", default=[],
                   metavar="NAME.KEY=VALUE",
                   help="a setting or option for one formulation only (repeatable), e.g. "
                        "--set vs3vm.balance=none")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command in :data:`s3vm.cli.commands.COMMANDS`, in table order."""
    parser = Parser(prog=PROG, description="Semi-supervised SVMs as mathematical programs.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=Parser, required=True)
    for name in COMMANDS:
        command_module(name).add_parser(sub)
    return parser


# -- flags back into the API's arguments ----------------------------------------------------
def overrides(args) -> dict:
    """The settings typed on the command line."""
    return {k: getattr(args, k) for k in SETTINGS_TABLE if getattr(args, k, None) is not None}


def typed_options(args) -> dict:
    """The formulation options typed on the command line."""
    return {k: getattr(args, k) for k in all_options() if getattr(args, k, None) is not None}


#: ``--set NAME.solver=S``, ``--set NAME.profile=FILE`` and ``--set NAME.time_limit=T``: how one
#: formulation of a comparison is run.
RUN_OPTIONS = {"solver": Option("solver", "choice", None, choices=("any",)),
               "profile": Option("profile", "file", None),
               "time_limit": Option("time_limit", "float", None, minimum=0.0, open_min=True)}


def per_formulation(entries) -> dict:
    """``--set NAME.KEY=VALUE`` entries as {name: {key: value}}, each value parsed by its table."""
    out: dict = {}
    for entry in entries:
        target, sep, text = entry.partition("=")
        name, dot, key = target.partition(".")
        if not (sep and dot and name and key):
            raise InputError(f"--set {entry!r}: expected NAME.KEY=VALUE, e.g. vs3vm.balance=none")
        key = key.replace("-", "_")
        option = SETTINGS_TABLE.get(key) or formulation_options(name).get(key) \
            or RUN_OPTIONS.get(key)
        if option is None:
            raise InputError(f"--set {entry!r}: {key!r} is neither a setting nor an option of "
                             f"{name}")
        try:
            value = option.parse(text)
        except argparse.ArgumentTypeError as exc:
            raise InputError(f"--set {entry!r}: {exc}") from None
        if key in out.setdefault(name, {}):
            raise InputError(f"--set gives {name}.{key} twice")
        out[name][key] = value
    return out


def read_data(args):
    """The instance (scaled when asked) and the file's settings."""
    instance, settings = load_instance(args.data, unlabeled=args.unlabeled_marker)
    if args.scale:
        instance = scale_instance(instance, args.scale)
    return instance, settings


def started(args):
    """When the command began (``time.perf_counter()``): its time limit counts from there, so
    that reading the data, scaling it and checking the input count too."""
    return getattr(args, "started", None)


def inputs(args) -> list:
    """The files a command reads (the data, the CSV an instance file names, the profiles, the
    comparison's and each formulation's own): no output may overwrite them."""
    files = instance_files(args.data)
    if getattr(args, "profile", None):
        files.append(args.profile)
    for entry in getattr(args, "per_formulation", None) or []:
        target, _, text = entry.partition("=")
        if target.rpartition(".")[2].replace("-", "_") == "profile" and text:
            files.append(text)
    return files
