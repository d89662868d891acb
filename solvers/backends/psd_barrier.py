"""``--solver psd-barrier``: the small-PSD barrier Newton method of
:mod:`s3vm.solvers.engines.psd_barrier`.

It takes a :class:`~s3vm.solvers.engines.psd_barrier.PSDProblem` (a convex function of a small PSD
matrix given by an oracle), not a conic model: formulations that can state themselves that way (the
subspace SDPs) build one when this backend is chosen. The result, certificate included, is left
on the problem (``problem.result``).

Profile options (``[options]`` of a profile file, or ``--solver-option``-style tables): ``tol``
(relative gap target, default 1e-8), ``mu_factor`` (0.3), ``max_iterations`` (300),
``certify`` (true: Clarabel's multipliers for the certificate; false: the barrier's, looser),
``predictor`` (true). ``threads`` caps the BLAS pools during the solve (default 1: every dense
operation is small and repeated hundreds of times, and a multithreaded BLAS spends its time
waiting for its threads on a shared machine: 31.7 s against 0.39 s for one 1000-point solve).
"""

from __future__ import annotations

from typing import Optional

from s3vm.solvers.backends.base import Backend, Outcome
from s3vm.solvers.engines.psd_barrier import PSDProblem, minimize
from s3vm.solvers.errors import InputError
from s3vm.solvers.runtime.clock import time_left

OPTIONS = {"tol": float, "mu_factor": float, "max_iterations": int, "certify": bool,
           "predictor": bool}


def solver_options(options: dict) -> dict:
    """The profile's options checked: known names, values of the right kind and range."""
    out = {}
    for key, value in options.items():
        if key not in OPTIONS:
            raise InputError(f"psd-barrier has no option {key!r}: choose one of "
                             f"{', '.join(OPTIONS)}")
        kind = OPTIONS[key]
        if kind is bool:
            if not isinstance(value, bool):
                raise InputError(f"psd-barrier option {key} must be true or false, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or \
                (kind is int and not float(value).is_integer()):
            raise InputError(f"psd-barrier option {key} must be a number, got {value!r}")
        else:
            value = kind(value)
            if key == "mu_factor" and not 0 < value < 1:
                raise InputError(f"psd-barrier option mu_factor must lie in (0, 1), got {value}")
            if key in ("tol", "max_iterations") and not value > 0:
                raise InputError(f"psd-barrier option {key} must be > 0, got {value}")
        out[key] = value
    return out


class PsdBarrierBackend(Backend):
    name = "psd-barrier"
    provides_duals = False
    model_kind = "psd-oracle"

    @classmethod
    def unavailable_reason(cls) -> Optional[str]:
        return None   # numpy, scipy and Clarabel: all required by the package

    def solve(self, model: PSDProblem, profile, clock=None) -> Outcome:
        from threadpoolctl import threadpool_limits

        options = solver_options(dict(profile.options))
        with threadpool_limits(limits=profile.threads or 1):
            result = minimize(model, time_limit=time_left(clock, profile.time_limit),
                              verbose=profile.verbose,
                              **options)
        model.result = result
        has = result.M is not None
        status = {"optimal": "optimal", "infeasible": "infeasible",
                  "time_limit": "time_limit", "error": "error"}.get(result.status, "feasible")
        message = result.message or ("" if status == "optimal" else result.status)
        return Outcome(status=status, objective=result.primal if has else None,
                       bound=result.dual if has else None, iterations=result.iterations,
                       seconds=result.seconds, message=message, has_solution=has)
