"""Standard-form conic programs handed to SDP solvers directly, without a modelling layer.

The form is SeDuMi's (also SDPA's):

    (P)  min c'x   s.t.  A x = b,   x in K = R+^l x S+^(s_1) x ... x S+^(s_k)
    (D)  max b'y   s.t.  c - A'y in K*  (= K)

where the part of x in a PSD block of order N is the N x N matrix X stored whole, column by
column (N^2 entries; A's columns on X_ij and X_ji may carry any split of a symmetric
coefficient). :class:`StandardConic` holds the data and, after a solve, the primal x and the dual
y (one multiplier per row). A caller that wants a bound it can trust rebuilds the dual slack
c - A'y itself and corrects it (the solver's y is only approximately feasible); the backends
report what the solvers return, nothing more.

Why not through CVXPY: a matrix variable with linear rows reaches SDPA through CVXPY as ~N^2/2
free variables of SDPA's dual form, so SDPA's Schur complement has that order instead of the
number of rows; on an output-space Shor relaxation with n = 100 the direct call was ~600 times
faster (docs/changelog.md). Direct calls also skip CVXPY's compilation, rebuilt at every
solve of a model whose rows change.

Backends (``--solver NAME`` for the problem class ``conic``):

- ``sdpa``: SDPA through the low-level call of ``sdpa-python`` (extra ``sdpa``; GPL), one thread
  unless the profile says otherwise. It has no time limit and holds the GIL: outside an isolated
  solve process each call runs in a forked child that the clock kills
  (:func:`~s3vm.solvers.runtime.processes.call_in_child`).
- ``scs``: SCS 3 on the same data, rewritten in its own form (A x + s = b, s in {0} x R+ x PSD
  in scaled lower-triangular vectors); first-order, so its y can be far from dual feasible.
- ``clarabel``: Clarabel likewise (interior point; accurate but slow on dense PSD blocks).

Options of the profile go to the solver unchanged (SDPA: ``epsilonStar``, ``epsilonDash``,
``maxIteration``, ``lambdaStar``; SCS: ``eps_abs``, ``eps_rel``, ``max_iters``; Clarabel its
settings' names); ``StandardConic.tolerance`` sets each solver's main accuracy and
``StandardConic.hints`` a solver's own options when the profile does not.
"""

from __future__ import annotations

import math
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ClassVar, Optional

import numpy as np
import scipy.sparse as sp

from s3vm.solvers.backends.base import Backend, Outcome
from s3vm.solvers.runtime.clock import time_left
from s3vm.solvers.runtime.processes import (
    ChildCallStopped,
    call_in_child,
    in_solve_process,
    native_threads,
)


@dataclass
class StandardConic:
    """min c'x s.t. A x = b, x in R+^l x S+^(s_1) x ... (module docstring).

    Parameters
    ----------
    c : ndarray (nx,)
    A : scipy.sparse matrix (m, nx)
    b : ndarray (m,)
    l : int
        Size of the nonnegative orthant (the first l entries of x).
    s : tuple of int
        Orders of the PSD blocks that follow, each stored as N^2 entries column-major.
    tolerance : float, optional
        The accuracy asked of the solver (its main stopping tolerance) unless the profile sets
        the solver's own option.
    hints : dict, optional
        Options for one solver, keyed by the backend's name (``{"sdpa": {"lambdaStar": 3.0}}``):
        what the caller knows of the problem's scale; the profile's options override them.

    Attributes (after a solve)
    --------------------------
    x : ndarray or None
        The primal point.
    y : ndarray or None
        The dual multipliers, one per row (SeDuMi's sign: c - A'y in K* at an exact optimum).
    info : dict
        The solver's own report.
    """

    c: np.ndarray
    A: sp.spmatrix
    b: np.ndarray
    l: int = 0
    s: tuple = ()
    tolerance: Optional[float] = None
    hints: dict = field(default_factory=dict)
    x: Optional[np.ndarray] = None
    y: Optional[np.ndarray] = None
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self.c = np.asarray(self.c, dtype=float).ravel()
        self.b = np.asarray(self.b, dtype=float).ravel()
        self.A = sp.csr_matrix(self.A, dtype=float)
        self.s = tuple(int(k) for k in self.s)
        nx = self.l + sum(k * k for k in self.s)
        if self.c.size != nx or self.A.shape != (self.b.size, nx):
            raise ValueError(f"standard form: c has {self.c.size} entries, A is {self.A.shape}, "
                             f"b has {self.b.size}; the cones need {nx} variables")

    @property
    def rows(self) -> int:
        return self.b.size

    def block(self, k: int, x: Optional[np.ndarray] = None) -> np.ndarray:
        """The k-th PSD block of ``x`` (default the solution) as a symmetric matrix."""
        x = self.x if x is None else x
        start = self.l + sum(q * q for q in self.s[:k])
        N = self.s[k]
        X = np.asarray(x[start:start + N * N], dtype=float).reshape(N, N, order="F")
        return 0.5 * (X + X.T)


@contextmanager
def _silenced(active: bool):
    """File descriptors 1 and 2 to the null device (SDPA prints from C++ to both)."""
    if not active:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


class StandardConicBackend(Backend):
    """A solver of :class:`StandardConic` problems (the problem class ``conic``)."""

    model_kind: ClassVar[str] = "standard-conic"
    provides_duals: ClassVar[bool] = True
    python_module: ClassVar[str] = ""
    python_package: ClassVar[str] = ""

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        import importlib.util

        if importlib.util.find_spec(cls.python_module) is None:
            return f"the Python package {cls.python_package or cls.python_module} is not installed"
        return None

    def solve(self, problem: StandardConic, profile, clock=None) -> Outcome:
        start = time.perf_counter()
        problem.x = problem.y = None
        try:
            status, message, objective = self._solve(problem, profile, clock,
                                                     time_left(clock, profile.time_limit))
        except (ValueError, RuntimeError, ArithmeticError, np.linalg.LinAlgError,
                ChildCallStopped) as exc:
            text = str(exc).strip().splitlines()
            return Outcome(status="error", seconds=time.perf_counter() - start,
                           message=f"{self.name}: {text[0] if text else type(exc).__name__}")
        ok = problem.x is not None and problem.y is not None \
            and np.all(np.isfinite(problem.x)) and np.all(np.isfinite(problem.y))
        if not ok:
            problem.x = problem.y = None
        return Outcome(status=status if ok or status != "optimal" else "error",
                       objective=objective if ok else None,
                       iterations=problem.info.get("iterations"),
                       seconds=time.perf_counter() - start, message=message, has_solution=ok)

    def _solve(self, problem: StandardConic, profile, clock,
               limit: Optional[float]) -> tuple[str, str, Optional[float]]:
        """(status, message, objective) of one solve of ``problem`` under ``profile``'s
        options and the solve's ``clock`` (None: none), the call's time ``limit`` (what the
        clock has left) in the solver's own option."""
        raise NotImplementedError


#: SDPA's options (sdpap's ``param``, which replaces an unknown or mistyped one by its default
#: without a word), with the type of each value.
SDPA_OPTIONS = {
    **dict.fromkeys(("maxIteration", "mpfPrecision", "numThreads"), int),
    **dict.fromkeys(("epsilonStar", "lambdaStar", "omegaStar", "lowerBound", "upperBound",
                     "betaStar", "betaBar", "gammaStar", "epsilonDash", "rho", "zeroPoint"),
                    float),
    **dict.fromkeys(("isSymmetric", "isDimacs"), bool),
    **dict.fromkeys(("xPrint", "yPrint", "sPrint", "infPrint", "print", "resultFile",
                     "sdpaResult", "frvMethod", "convMethod", "domainMethod", "rangeMethod"),
                    str),
}


def sdpa_options(options: dict) -> dict:
    """``options`` with SDPA's real-valued ones as floats (sdpap drops an integer ``1`` given
    for ``epsilonStar`` in favour of its default)."""
    return {k: float(v) if SDPA_OPTIONS.get(k) is float else v for k, v in options.items()}


class SdpaDirectBackend(StandardConicBackend):
    """SDPA through ``sdpap.sdpacall.solve_sdpa`` (the SeDuMi form as it is)."""

    name = "sdpa"
    extra = "sdpa"
    python_module = "sdpap"
    python_package = "sdpa-python"
    option_types = SDPA_OPTIONS

    #: In a solve process, an SDPA call runs in place while the clock has at least this many
    #: times the longest call so far left, plus a second (below, in a child killed at the
    #: limit).
    DIRECT_MARGIN = 10.0

    def _call(self, solve, clock, left):
        """``solve()``, in a child process or in place.

        SDPA holds the GIL for a whole solve and has no time limit: in a thread of the caller's
        process (the Python API) the supervisor could neither keep the limit nor answer a
        signal, so it runs in a child process killed when the clock stops. A solve process of
        the command line is itself killed at the end of its grace period, which answers a
        signal, so a call there runs in place (a fork costs tens of milliseconds, bb-sdp makes
        hundreds of calls); but a call still running at the time limit would be killed with the
        whole search (its trace, node count and decision values lost): near the limit, and
        before the first call has shown how long one takes, it runs in a child too.
        """
        longest = getattr(self, "_longest", None)
        direct = in_solve_process() and (
            left is None or (longest is not None and left >= self.DIRECT_MARGIN * longest + 1.0))
        start = time.perf_counter()
        try:
            return solve() if direct else call_in_child(solve, clock=clock)
        finally:
            self._longest = max(longest or 0.0, time.perf_counter() - start)

    def _solve(self, problem, profile, clock, limit):
        from sdpap import SymCone
        from sdpap.param import param
        from sdpap.sdpacall import sdpacall

        options = {"print": "no", "numThreads": int(profile.threads or 1)}
        if problem.tolerance is not None:
            options.update(epsilonStar=float(problem.tolerance),
                           epsilonDash=float(problem.tolerance))
        options.update(problem.hints.get(self.name, {}))
        options.update(sdpa_options(profile.options))
        if profile.verbose:
            options["print"] = "display"
        def solve():
            with _silenced(not profile.verbose):
                opt = param(options, False)
                cone = SymCone(l=problem.l, s=problem.s)
                return sdpacall.solve_sdpa(
                    problem.A.tocsc(), sp.csc_matrix(problem.b.reshape(-1, 1)),
                    sp.csc_matrix(problem.c.reshape(-1, 1)), cone, opt)

        x, y, _, info = self._call(solve, clock, limit)
        problem.x = np.asarray(x.todense(), dtype=float).ravel()
        problem.y = np.asarray(y.todense(), dtype=float).ravel()
        phase = str(info.get("phasevalue", ""))
        problem.info = {"phase": phase, "iterations": info.get("iteration"),
                        "primal": info.get("primalObj"), "dual": info.get("dualObj")}
        status = {"pdOPT": "optimal", "pdFEAS": "feasible", "pFEAS": "feasible",
                  "dFEAS": "feasible", "noINFO": "error"}.get(phase, "error")
        if phase in ("pINF_dFEAS", "pdINF"):
            status = "infeasible"
        objective = info.get("primalObj")
        return status, f"SDPA phase {phase}", None if objective is None else float(objective)


def _svec_map(N: int, upper: bool = False) -> sp.csr_matrix:
    """T with vec(X) = T svec(X) (vec column-major): svec the lower triangle column by column
    (SCS), or with ``upper`` the upper triangle column by column (Clarabel), off-diagonal entries
    times sqrt 2."""
    rows, cols, vals = [], [], []
    k = 0
    r = 1.0 / math.sqrt(2.0)
    pairs = ((i, j) for j in range(N) for i in (range(j + 1) if upper else range(j, N)))
    for i, j in pairs:
        if i == j:
            rows.append(j * N + i)
            cols.append(k)
            vals.append(1.0)
        else:
            rows += [j * N + i, i * N + j]
            cols += [k, k]
            vals += [r, r]
        k += 1
    return sp.csr_matrix((vals, (rows, cols)), shape=(N * N, k))


def _scs_form(problem: StandardConic, upper: bool = False):
    """The problem in the form min c~'z s.t. G z + s = h, s in {0}^m x R+^l x PSD (svec),
    z = (x_l, svec X_1, ...): returns (G, h, c~, T) with T mapping z back to x."""
    maps = [sp.identity(problem.l, format="csr")] + [_svec_map(N, upper) for N in problem.s]
    T = sp.block_diag(maps, format="csr") if maps else sp.csr_matrix((0, 0))
    nz = T.shape[1]
    G = sp.vstack([problem.A @ T, -sp.identity(nz, format="csr")], format="csc")
    h = np.concatenate([problem.b, np.zeros(nz)])
    return G, h, T.T @ problem.c, T


class ScsDirectBackend(StandardConicBackend):
    """SCS 3 on the standard form (rewritten as its A z + s = b)."""

    name = "scs"
    python_module = "scs"

    def _solve(self, problem, profile, clock, limit):
        import scs

        G, h, c, T = _scs_form(problem)
        settings = {"verbose": bool(profile.verbose)}
        if problem.tolerance is not None:
            settings.update(eps_abs=float(problem.tolerance), eps_rel=float(problem.tolerance))
        if limit is not None:
            settings["time_limit_secs"] = float(limit)
        settings.update(profile.options)
        cone = {"z": problem.rows, "l": problem.l, "s": list(problem.s)}
        with _silenced(not profile.verbose):
            solver = scs.SCS({"A": G, "b": h, "c": c}, cone, **settings)
            sol = solver.solve()
        info = sol["info"]
        problem.x = T @ np.asarray(sol["x"], dtype=float)
        problem.y = -np.asarray(sol["y"][:problem.rows], dtype=float)
        problem.info = {"status": info.get("status"), "iterations": info.get("iter")}
        text = str(info.get("status", ""))
        status = {"solved": "optimal", "solved_inaccurate": "feasible"}.get(text, "error")
        if text.startswith("infeasible"):
            status = "infeasible"
        elif "time" in text or (text == "solved_inaccurate" and limit is not None
                                and info.get("solve_time", 0) / 1e3 >= 0.98 * limit):
            status = "time_limit"
        return status, f"SCS {text}", float(info.get("pobj", np.nan))


class ClarabelDirectBackend(StandardConicBackend):
    """Clarabel on the standard form (its cone PSDTriangleConeT takes the scaled upper
    triangle, column by column)."""

    name = "clarabel"
    python_module = "clarabel"

    def _solve(self, problem, profile, clock, limit):
        import clarabel

        G, h, c, T = _scs_form(problem, upper=True)
        settings = clarabel.DefaultSettings()
        settings.verbose = bool(profile.verbose)
        settings.max_threads = native_threads()
        if problem.tolerance is not None:
            settings.tol_gap_abs = settings.tol_gap_rel = float(problem.tolerance)
            settings.tol_feas = float(problem.tolerance)
        if limit is not None:
            settings.time_limit = float(limit)
        for key, value in profile.options.items():
            setattr(settings, key, value)
        cones = [clarabel.ZeroConeT(problem.rows)]
        if problem.l:
            cones.append(clarabel.NonnegativeConeT(problem.l))
        cones += [clarabel.PSDTriangleConeT(N) for N in problem.s]
        P = sp.csc_matrix((G.shape[1], G.shape[1]))
        with _silenced(not profile.verbose):
            solver = clarabel.DefaultSolver(P, c, G.tocsc(), h, cones, settings)
            sol = solver.solve()
        problem.x = T @ np.asarray(sol.x, dtype=float)
        problem.y = -np.asarray(sol.z, dtype=float)[:problem.rows]
        text = str(sol.status)
        problem.info = {"status": text, "iterations": sol.iterations}
        status = "optimal" if text == "Solved" else "feasible" if "Almost" in text else "error"
        if "Infeasible" in text and "Almost" not in text:
            status = "infeasible"
        elif "MaxTime" in text:
            status = "time_limit"
        return status, f"Clarabel {text}", float(sol.obj_val)
