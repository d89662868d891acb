"""Solver name -> backend class, and which of them can run here.

Backends are imported lazily: listing solvers must not import every optional package.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from s3vm_models.errors import InputError, SolverUnavailableError
from s3vm_models.lazy import lookup

BACKENDS = {
    "highs": "solvers.backends.highs:HighsBackend",
    "scip": "solvers.backends.scip:ScipBackend",
    "cbc": "solvers.backends.cbc:CbcBackend",
    "glpk": "solvers.backends.glpk:GlpkBackend",
    "gurobi": "solvers.backends.gurobi:GurobiBackend",
    "cplex": "solvers.backends.cplex:CplexBackend",
    "mosek": "solvers.backends.mosek:MosekBackend",
}


def backend_class(name: str):
    """The backend class registered as ``name``."""
    return lookup(BACKENDS, name, "solver")


@lru_cache(maxsize=None)
def unavailable_reason(name: str) -> Optional[str]:
    """None when solver ``name`` can run here, else why not (cached: licence checks are slow)."""
    try:
        return backend_class(name).unavailable_reason()
    except ImportError as exc:
        return f"not installed ({exc})"


def installed_solvers(problem_class: Optional[str] = None) -> list[str]:
    """Names of the solvers that can run here, optionally only those for ``problem_class``."""
    names = []
    for name in BACKENDS:
        if unavailable_reason(name) is not None:
            continue
        if problem_class is None or problem_class in backend_class(name).problem_classes:
            names.append(name)
    return names


def get_backend(name: str, problem_class: str):
    """A fresh backend instance of solver ``name`` for a model of ``problem_class``.

    Raises
    ------
    InputError
        Unknown solver name, or a solver that does not take this kind of problem.
    SolverUnavailableError
        The solver is known but not installed or not licensed here.
    """
    cls = backend_class(name)
    if problem_class not in cls.problem_classes:
        fit = [n for n in BACKENDS if problem_class in backend_class(n).problem_classes]
        raise InputError(f"solver {name!r} does not solve {problem_class.upper()} models; "
                         f"solvers that do: {', '.join(fit)}")
    reason = unavailable_reason(name)
    if reason is not None:
        here = installed_solvers(problem_class)
        hint = f" (pip install s3vm[{cls.extra}])" if cls.extra else ""
        raise SolverUnavailableError(
            f"solver {name!r} cannot run here: {reason}{hint}; installed solvers for "
            f"{problem_class.upper()}: {', '.join(here) or 'none'}")
    return cls()
