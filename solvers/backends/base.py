"""The interface every backend implements, and the outcome of one solve.

A backend is one module in ``solvers/backends``; the registry (``solvers/registry.py``) maps a
solver name to it. All backends of a problem class take the same arguments: a model built by a
formulation, a :class:`~s3vm.solvers.profiles.SolverProfile` (the solver's options) and the
solve's :class:`~s3vm.solvers.runtime.clock.Clock`, whose time left the backend turns into its
solver's own time-limit option at the call (and whose stop it passes on to the solver's
interrupt). Solution values are loaded into the model; the returned :class:`Outcome` carries
status and the solver's numbers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Optional

from s3vm.solvers.errors import InputError


@dataclass
class Outcome:
    """What a backend reports after one solve.

    status is one of the Result statuses (``optimal``, ``feasible``, ``time_limit``,
    ``infeasible``, ``error``); ``has_solution`` says whether values were loaded into the model.
    """

    status: str
    objective: Optional[float] = None
    bound: Optional[float] = None
    iterations: Optional[int] = None
    nodes: Optional[int] = None
    seconds: float = 0.0
    message: str = ""
    has_solution: bool = False


class Backend(ABC):
    """A solver behind one signature.

    Class attributes
    ----------------
    name : str
        The name users give (``--solver NAME``); the registry says which problem classes
        (``lp``, ``mip``, ``miqp``, ``sdp``) it serves.
    extra : str
        The pip extra that installs it (``pip install s3vm[extra]``), for messages.
    provides_duals : bool
        Whether an LP solve fills the model's ``dual`` Suffix (formulations that read their
        primal from a dual model need it).
    model_kind : str
        What the backend solves: ``pyomo`` (a Pyomo model), ``cvxpy`` (a cvxpy.Problem) or
        ``fusion`` (a MOSEK Fusion Model); a formulation builds the kind its backend takes.
    """

    name: ClassVar[str]
    #: The options a profile may give this solver, name -> type of value (None: the solver
    #: library checks its options itself and refuses what it does not know; ``{}``: none).
    #: For a library that ignores what it does not know (SDPA), or a solver of ours.
    option_types: ClassVar[Optional[dict]] = None
    extra: ClassVar[str] = ""
    provides_duals: ClassVar[bool] = True
    model_kind: ClassVar[str] = "pyomo"

    @classmethod
    @abstractmethod
    def unavailable_reason(cls) -> Optional[str]:
        """None when the solver can run here, else why not (one short phrase)."""

    @abstractmethod
    def solve(self, model, profile, clock=None) -> Outcome:
        """Solve ``model`` with the options of ``profile`` and load the solution into it.

        ``clock`` (:class:`~s3vm.solvers.runtime.clock.Clock`) is the solve's: the call gets
        the time it has left, and its stop cancels the call. None for a backend called on its
        own: the call then gets the profile's ``time_limit``, counted from the call
        (:func:`~s3vm.solvers.runtime.clock.time_left`).
        """

    def session(self, model, profile, clock=None) -> "Session":
        """A handle for solving ``model`` repeatedly after small changes, every solve under
        ``clock`` (see :meth:`solve`).

        The default re-solves from scratch; persistent backends override it to keep the solver's
        model and warm start from the last basis.
        """
        return Session(self, model, profile, clock)


def check_options(backend, profile) -> None:
    """Raise InputError for an option of ``profile`` that ``backend`` does not take, or of the
    wrong type (when the backend says which it takes: :attr:`Backend.option_types`), before
    anything is built: a library that ignores an unknown option would run without a word."""
    types = getattr(backend, "option_types", None)
    if types is None:
        return
    for key, value in profile.options.items():
        if key not in types:
            known = ", ".join(sorted(types)) or "none"
            raise InputError(f"solver {backend.name!r} has no option {key!r} (its options: "
                             f"{known})")
        wanted = types[key]
        fits = (isinstance(value, (int, float)) and not isinstance(value, bool)
                if wanted is float else isinstance(value, wanted)
                and (wanted is bool or not isinstance(value, bool)))
        if not fits:
            raise InputError(f"solver {backend.name!r}: option {key} must be "
                             f"{'a number' if wanted is float else wanted.__name__}, got "
                             f"{value!r}")


class Session:
    """Repeated solves of one model: change mutable parameters or fix variables, then resolve.

    ``warm = False`` makes every solve start from scratch (for measuring what warm starts save).
    """

    warm: bool = True

    def __init__(self, backend: Backend, model, profile, clock=None):
        self.backend, self.model, self.profile = backend, model, profile
        self.clock = clock

    def resolve(self) -> Outcome:
        return self.backend.solve(self.model, self.profile, self.clock)
