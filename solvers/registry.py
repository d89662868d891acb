"""Solver name -> backend class, and which of them can run here.

A solver name may stand for different backends per problem class: ``mosek`` solves LPs and MIPs
through Pyomo and SDPs through CVXPY. Backends are imported lazily: listing solvers must not
import every optional package.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from s3vm.solvers.errors import InputError, SolverUnavailableError
from s3vm.solvers.lazy import lookup

_PYOMO = ("lp", "mip")
# name -> {problem class -> "module:Class"}
BACKENDS = {
    "highs": dict.fromkeys(_PYOMO, "s3vm.solvers.backends.pyomo.highs:HighsBackend"),
    "scip": dict.fromkeys(_PYOMO + ("miqp",), "s3vm.solvers.backends.pyomo.scip:ScipBackend"),
    "cbc": dict.fromkeys(_PYOMO, "s3vm.solvers.backends.pyomo.cbc:CbcBackend"),
    "glpk": dict.fromkeys(_PYOMO, "s3vm.solvers.backends.pyomo.glpk:GlpkBackend"),
    "gurobi": dict.fromkeys(_PYOMO + ("miqp",), "s3vm.solvers.backends.pyomo.gurobi:GurobiBackend"),
    "cplex": dict.fromkeys(_PYOMO + ("miqp",), "s3vm.solvers.backends.pyomo.cplex:CplexBackend"),
    "mosek": {**dict.fromkeys(_PYOMO, "s3vm.solvers.backends.pyomo.mosek:MosekBackend"),
              "sdp": "s3vm.solvers.backends.cvxpy.mosek:CvxpyMosekBackend"},
    "scs": {"sdp": "s3vm.solvers.backends.cvxpy.scs:ScsBackend",
            "conic": "s3vm.solvers.backends.conic_standard:ScsDirectBackend"},
    "clarabel": {"sdp": "s3vm.solvers.backends.cvxpy.clarabel:ClarabelBackend",
                 "conic": "s3vm.solvers.backends.conic_standard:ClarabelDirectBackend"},
    "cvxopt": {"sdp": "s3vm.solvers.backends.cvxpy.cvxopt:CvxoptBackend"},
    "sdpa": {"sdp": "s3vm.solvers.backends.cvxpy.sdpa:SdpaBackend",
             "conic": "s3vm.solvers.backends.conic_standard:SdpaDirectBackend"},
    "mosek-fusion": {"sdp": "s3vm.solvers.backends.mosek_fusion:MosekFusionBackend"},
    # A convex function of a small PSD matrix through an oracle (the subspace SDPs' own method).
    "psd-barrier": {"sdp": "s3vm.solvers.backends.psd_barrier:PsdBarrierBackend"},
    # The branch-and-bound driver itself, for bb: its SVM bounds need no external solver.
    "builtin": {"svm": "s3vm.solvers.bnb.driver:BuiltinBackend"},
}

# The solver used when none is named, per problem class. ``conic``: standard-form conic programs
# (SeDuMi's form, backends/conic_standard.py) handed to the solver without a modelling layer.
DEFAULT_SOLVERS = {"lp": "highs", "mip": "highs", "miqp": "scip", "sdp": "scs", "svm": "builtin",
                   "conic": "scs"}


def problem_classes(name: str) -> tuple:
    """The problem classes solver ``name`` takes."""
    if name not in BACKENDS:
        raise InputError(f"unknown solver {name!r}: choose one of {', '.join(BACKENDS)}")
    return tuple(BACKENDS[name])


def backend_class(name: str, problem_class: Optional[str] = None):
    """The backend class of solver ``name`` for ``problem_class`` (default: its first class)."""
    classes = problem_classes(name)
    key = problem_class if problem_class is not None else classes[0]
    if key not in classes:
        fit = [n for n in BACKENDS if key in BACKENDS[n]]
        raise InputError(f"solver {name!r} does not solve {key.upper()} models; "
                         f"solvers that do: {', '.join(fit)}")
    return lookup(BACKENDS[name], key, "problem class")


@lru_cache(maxsize=None)
def unavailable_reason(name: str, problem_class: Optional[str] = None) -> Optional[str]:
    """None when solver ``name`` can run here (for ``problem_class``), else why not.

    Cached: licence checks are slow.
    """
    try:
        return backend_class(name, problem_class).unavailable_reason()
    except ImportError as exc:
        return f"not installed ({exc})"


def installed_solvers(problem_class: Optional[str] = None) -> list[str]:
    """Names of the solvers that can run here, optionally only those for ``problem_class``."""
    names = []
    for name, classes in BACKENDS.items():
        if problem_class is not None and problem_class not in classes:
            continue
        if unavailable_reason(name, problem_class) is None:
            names.append(name)
    return names


def get_backend(name: Optional[str], problem_class: str):
    """A fresh backend instance of solver ``name`` (None: the class's default) for a model of
    ``problem_class``.

    Raises
    ------
    InputError
        Unknown solver name, or a solver that does not take this kind of problem.
    SolverUnavailableError
        The solver is known but not installed or not licensed here.
    """
    if name is None:
        name = DEFAULT_SOLVERS[problem_class]
    cls = backend_class(name, problem_class)
    reason = unavailable_reason(name, problem_class)
    if reason is not None:
        here = installed_solvers(problem_class)
        hint = f" (pip install s3vm[{cls.extra}])" if cls.extra else ""
        raise SolverUnavailableError(
            f"solver {name!r} cannot run here: {reason}{hint}; installed solvers for "
            f"{problem_class.upper()}: {', '.join(here) or 'none'}")
    return cls()
