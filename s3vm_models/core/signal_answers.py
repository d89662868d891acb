"""The answer to a signal that came after the data was read but before the solve held an answer
(importing the formulation, resolving the settings and the profile: milliseconds to a second
under load), for :func:`s3vm.api.solve`: the supervised fallback's labels, as a stopped solve's
(docs/reliability.md, "Signals"). A signal once the pipeline holds its fallback is the
pipeline's to answer (:func:`s3vm.core.pipeline.solve`).
"""

from __future__ import annotations

from typing import Optional

from s3vm.core import pipeline
from s3vm.solvers.errors import S3VMError
from s3vm.solvers.results import Result
from s3vm.solvers.runtime.clock import INTERRUPTED, Clock
from s3vm.solvers.runtime.supervisor import Interrupted


def answer_of_signal(form, instance, settings, solver: str, signum: int) -> Optional[Result]:
    """The answer to a signal that came before the solve held one: the supervised fallback's
    labels, status ``feasible``, or status ``error`` where there are none
    (a class without a labeled row, more than
    :data:`~s3vm.core.pipeline.SUPERVISED_FALLBACK_ROWS` labeled rows); None when the instance
    cannot be checked for the formulation (the signal's answer is then the caller's). The
    labels are not scored: their objective may need Pyomo and HiGHS imported (the
    Bennett-Demiriz labeling LP), 2 s and more under load, which the answer would wait for."""
    clock = Clock(None)
    clock.stop(INTERRUPTED, signum)
    result = Result(formulation=form.name, solver=solver, status="error",
                    message="stopped before the model was built")
    try:
        instance = form.dense_instance(instance, settings)
        form.check(instance, settings)
        scores = pipeline.supervised_scores(instance, settings)
        pipeline.complete_stopped(form, result, instance, settings, clock, scores, (None,), 0.0)
    except Interrupted as exc:  # finish() raises it with the completed result
        return exc.result
    except S3VMError:
        return None
    return result
