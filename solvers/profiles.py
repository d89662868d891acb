"""Solver profiles: which solver, with which options, from a TOML file.

A profile file::

    solver = "highs"        # a name from `s3vm list`
    time_limit = 600        # seconds, optional
    mip_rel_gap = 1e-6      # optional
    threads = 1             # optional
    verbose = false         # solver log on stderr
    [options]               # passed to the solver unchanged
    presolve = "on"

The shipped profiles live in ``solvers/profiles/NAME.toml``; ``--solver NAME`` loads the shipped
profile of that name, ``--profile FILE`` a file of the user's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Optional

from s3vm.solvers.errors import InputError
from s3vm.solvers.registry import DEFAULT_SOLVERS
from s3vm.solvers.runtime.files import read_toml
from s3vm.solvers.runtime.keys import PROFILE

PROFILE_KEYS = tuple(PROFILE)


@dataclass(frozen=True)
class SolverProfile:
    """A solver name and the options to run it with.

    Parameters
    ----------
    solver : str, optional
        Backend name (``highs``, ``scip``, ``cbc``, ``glpk``, ``gurobi``, ``cplex``, ``mosek``,
        ...); None means the default solver of the problem class
        (:data:`s3vm.solvers.registry.DEFAULT_SOLVERS`).
    time_limit : float, optional
        Seconds; None for no limit.
    mip_rel_gap : float, optional
        Relative optimality gap at which a MIP solve may stop.
    threads : int, optional
    verbose : bool
        Stream the solver's log to stderr.
    options : dict
        Solver-specific options passed through unchanged.
    by_default : bool
        No solver or profile was named: the solver is a default (see the field's note).
    """

    solver: Optional[str] = None
    time_limit: Optional[float] = None
    mip_rel_gap: Optional[float] = None
    threads: Optional[int] = None
    verbose: bool = False
    options: dict = field(default_factory=dict)
    description: str = ""
    #: True when no solver or profile was named and the caller took a default: a formulation may
    #: then answer with another solver when the default fails (never read from a file).
    by_default: bool = False
    #: The file the profile was read from (a shipped profile's path, or the user's), "" for one
    #: made in code: a result records it (what applied; never read from a file).
    source: str = ""

    def __post_init__(self):
        # Each entry checked by its key (s3vm.solvers.runtime.keys.PROFILE): the same type and
        # range whether the profile comes from a file or from the Python API.
        for name, key in PROFILE.items():
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, key.check(value))

    def updated(self, **changes) -> "SolverProfile":
        """A copy with the given fields replaced; ``None`` values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def shipped_profiles() -> dict[str, str]:
    """Names of the profiles shipped with the package, mapped to their paths."""
    folder = resources.files("s3vm.solvers") / "profiles"
    return {entry.name[:-5]: str(entry) for entry in folder.iterdir()
            if entry.name.endswith(".toml")}


def read_profile(path: str) -> SolverProfile:
    """Read a profile file; unknown keys are an error (a typo must not pass silently)."""
    if not os.path.isfile(path):
        raise InputError(f"profile file not found: {path}")
    spec = read_toml(path)
    unknown = sorted(set(spec) - set(PROFILE_KEYS))
    if unknown:
        raise InputError(f"{path}: unknown profile entries {', '.join(unknown)}")
    if "solver" not in spec:
        raise InputError(f"{path}: a profile needs a 'solver' entry")
    checked = {name: PROFILE[name].check(value, f"{path}: ") for name, value in spec.items()}
    return SolverProfile(**checked, source=str(path))


def get_profile(solver: Optional[str] = None, profile_path: Optional[str] = None,
                problem_class: str = "lp") -> SolverProfile:
    """The profile for ``--profile FILE`` or ``--solver NAME`` (the shipped one when it exists).

    ``--solver`` given with ``--profile`` must name the profile's own solver: another solver
    would run with options meant for the profile's (refused, not chosen silently). With
    neither, the shipped profile of the problem class's default solver.
    """
    if profile_path is not None:
        profile = read_profile(profile_path)
        if solver is not None and solver != profile.solver:
            raise InputError(f"--solver {solver} and --profile {profile_path} (solver "
                             f"{profile.solver!r}) name two solvers: give one of them")
        return profile
    if solver is None:
        solver = DEFAULT_SOLVERS[problem_class]
    name = solver
    shipped = shipped_profiles()
    if name in shipped:
        return read_profile(shipped[name])
    return SolverProfile(solver=name)
