"""``primal-tsvm``: the linear S3VM-L2 in the primal on sparse data (SVMlin's TSVM).

It solves Problem 1 of docs/formulations.md (S3VM-L2: squared hinge, C and C*, with bias or
not, the count balance or none) with the **linear kernel only**, for a local minimum of J like
``switching``, in the manner of SVMlin (Sindhwani and Keerthi 2006): every SVM training is
L2-SVM-MFN, the modified finite Newton method whose Newton points come from conjugate
gradients (CGLS) on the active rows, and the labels come from multi-switch label switching
(``--tsvm-search switching``, the default) or deterministic annealing (``annealing``); see
:mod:`s3vm.models.primal_tsvm`.

Only products of X (and of its active rows) and their transposes with vectors are formed: a
``scipy.sparse`` X stays sparse (never densified, no n x n matrix): a 10^6 x 10^5 corpus with
2.8 10^7 nonzeros took 0.47 GiB beyond its 0.32 GiB matrix, the search's float32 copy of X
included (docs/benchmarks/scale.md, "Sparse text"). Its result is the
local minimum's labels, J at them (the value of the SVM at the labels returned, to the
conjugate gradients' tolerance), status ``feasible``, and w and b of f(x) = w'x + b
(``result.primal``, with the expansion coefficients beta of Problem 1's inductive rule, whose
X'beta is w at the optimum).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import ClassVar

from s3vm.core.formulation import Formulation
from s3vm.core.options import Option

# Registers Problem 1's J, which scores the fallback labels of a stopped solve (this class
# extends no family base, whose package would register it).
from s3vm.formulations.families import labeling  # noqa: F401
from s3vm.models.primal_tsvm import primal_tsvm, train_at_labels
from s3vm.solvers.errors import InputError

#: Seconds a stopped search may spend training its labels once more for their objective.
SCORING_SECONDS = 0.2


class PrimalTSVM(Formulation):
    """A local minimum of the linear S3VM-L2 by SVMlin's primal methods, on sparse or dense X."""

    problem: ClassVar[int] = 1
    #: Without unlabeled rows the problem is the labeled rows' squared-hinge SVM, which the same
    #: primal method solves (no kernel matrix on sparse data).
    supervised_formulation: ClassVar[str] = "primal-tsvm"
    needs_unlabeled: ClassVar[bool] = False
    accepts_sparse: ClassVar[bool] = True
    no_model: ClassVar[str] = ("a sequence of primal Newton solves over labelings (SVMlin's "
                               "label switching or annealing), in numpy")

    name: ClassVar[str] = "primal-tsvm"
    local: ClassVar[bool] = True
    summary: ClassVar[str] = ("linear S3VM-L2 in the primal for sparse data (SVMlin: finite "
                              "Newton with CGLS, multi-switch TSVM or deterministic annealing)")
    problem_class: ClassVar[str] = "svm"
    settings_used: ClassVar[tuple] = ("C", "C_star", "bias", "balance", "positives")
    settings_fixed: ClassVar[dict] = {
        "kernel": ("linear", "primal-tsvm solves the linear kernel only (in the primal of the "
                             "features): use switching for rbf")}
    options: ClassVar[tuple] = (
        Option("tsvm_search", "choice", "switching",
               "primal-tsvm: multi-switch label switching or deterministic annealing (SVMlin)",
               choices=("switching", "annealing")),
    )

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.C <= 0 or (instance.u and settings.C_unlabeled <= 0):
            raise InputError("primal-tsvm needs C > 0 and C* > 0")

    @contextmanager
    def environment(self):
        # Vector operations on w (10^5 entries) only: BLAS threads spin against each other on a
        # loaded machine (a dot product 20 times slower with them).
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            yield

    def build(self, instance, settings):
        """The data the solver reads: X (sparse or dense) and the label vector."""
        return instance.X, instance.label

    def run(self, instance, settings, backend, profile, clock, result):
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        u = instance.u
        C_star = settings.C_unlabeled if u else 1.0

        def stop():
            return clock.expired()

        def on_stage(line):
            clock.report(phase=line)

        started = time.perf_counter()
        found = primal_tsvm(instance.X, instance.label, float(settings.C), float(C_star),
                            bool(settings.bias), positives, self.tsvm_search, stop=stop,
                            on_stage=on_stage)
        sol, beta = found.solution, found.beta
        result.status = "feasible" if found.finished else "time_limit"
        result.message = "" if found.finished else "time limit reached during the search"
        # Stopped, the last training was cut short: its value is no J of the labels. One more
        # training at those labels gives it, when it fits in SCORING_SECONDS (the supervisor's
        # grace after a signal is 0.4 s; heart trains in milliseconds, 60,000 sparse rows in
        # seconds, whose labels then stand without their objective).
        result.objective = sol.value if found.finished else None
        if not found.finished and u:
            deadline = time.perf_counter() + SCORING_SECONDS
            scored, scored_beta = train_at_labels(
                instance.X, instance.label, found.labels, float(settings.C), float(C_star),
                bool(settings.bias), sol, stop=lambda: time.perf_counter() > deadline)
            if not scored.stopped:
                sol, beta, result.objective = scored, scored_beta, scored.value
        result.labels = found.labels
        result.decision_values = sol.outputs[instance.unlabeled]
        # Problem 1's inductive rule reads the expansion f(x) = sum_i beta_i x_i.x + b; at the
        # optimum beta_i = 2 (cp_i max(0, 1 - o_i) - cn_i max(0, 1 + o_i)) and w = X'beta (to
        # the conjugate gradients' tolerance); w itself is kept too.
        result.primal = {"beta": beta, "w": sol.w,
                         "b": sol.b if settings.bias else 0.0}
        result.iterations = found.trainings
        result.info["primal_tsvm"] = {
            "search": self.tsvm_search, "trainings": found.trainings,
            "seconds": round(time.perf_counter() - started, 6)}
