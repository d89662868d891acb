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

import math
import os
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Optional

from s3vm.solvers.errors import InputError
from s3vm.solvers.registry import DEFAULT_SOLVERS
from s3vm.solvers.runtime.files import read_toml

PROFILE_KEYS = ("solver", "time_limit", "mip_rel_gap", "threads", "verbose", "options",
                "description")


@dataclass(frozen=True)
class SolverProfile:
    """A solver name and the options to run it with.

    Parameters
    ----------
    solver : str, optional
        Backend name (``highs``, ``scip``, ``cbc``, ``glpk``, ``gurobi``, ``cplex``, ``mosek``, ...);
        None means the default solver of the problem class (:data:`s3vm.solvers.registry.DEFAULT_SOLVERS`).
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

    def __post_init__(self):
        if self.solver is not None and (not isinstance(self.solver, str) or not self.solver):
            raise InputError(f"a solver name must be a non-empty string, got {self.solver!r}")
        if self.time_limit is not None:
            if isinstance(self.time_limit, bool) or not isinstance(self.time_limit, (int, float)) \
                    or not math.isfinite(self.time_limit) or self.time_limit <= 0:
                raise InputError(f"time limit must be a number of seconds > 0, got {self.time_limit}")
        if self.mip_rel_gap is not None and not (
                isinstance(self.mip_rel_gap, (int, float)) and 0 <= self.mip_rel_gap < 1):
            raise InputError(f"mip_rel_gap must lie in [0, 1), got {self.mip_rel_gap}")
        if self.threads is not None and not (isinstance(self.threads, int) and self.threads >= 1):
            raise InputError(f"threads must be a positive integer, got {self.threads}")
        if not isinstance(self.options, dict):
            raise InputError("profile 'options' must be a table")

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
    return SolverProfile(**spec)


def get_profile(solver: Optional[str] = None, profile_path: Optional[str] = None,
                problem_class: str = "lp") -> SolverProfile:
    """The profile for ``--profile FILE`` or ``--solver NAME`` (the shipped one when it exists).

    ``--solver`` given with ``--profile`` replaces the profile's solver but keeps its options.
    With neither, the shipped profile of the problem class's default solver.
    """
    if profile_path is not None:
        profile = read_profile(profile_path)
        return profile if solver is None else replace(profile, solver=solver)
    if solver is None:
        solver = DEFAULT_SOLVERS[problem_class]
    name = solver
    shipped = shipped_profiles()
    if name in shipped:
        return read_profile(shipped[name])
    return SolverProfile(solver=name)
