"""``switching``: S3VM-L2 by annealed label switching, the local method the exact solvers start
from.

The transductive SVM of Joachims (1999) for the squared hinge (Problem 1,
docs/formulations.md#problem-1): train on the labeled points, label the unlabeled points by their
outputs, then alternate retraining and switching labels while that lowers the objective, with
the weight of the unlabeled points annealed up to C* (:mod:`s3vm.models.label_switching`). It
returns a local minimum of J with no bound: status ``feasible``. ``bb`` starts from the same
labeling and proves or improves it.

Each retraining is an exact squared-hinge SVM, solved in one of two ways:

- on the kernel matrix (Chapelle's primal Newton method in the expansion coefficients,
  :func:`s3vm.models.l2_svm.squared_hinge_svm`): rbf kernel up to :data:`EXACT_MAX_N` points, or a
  linear kernel with more features than points;
- in the primal of features G with K = G G' (Keerthi and DeCoste's 2005 finite Newton method,
  the inner solver of Sindhwani and Keerthi's 2006 large-scale TSVM,
  :func:`s3vm.models.l2_svm.squared_hinge_primal`): the linear kernel's G = X (exact), or for rbf
  beyond :data:`EXACT_MAX_N` points the Nystroem factor on ``rank`` landmarks (Williams and
  Seeger 2001). Its cost is linear in n (no n x n matrix): 10^4 points take seconds. With
  Nystroem, J and the decision function are those of the approximate kernel, as
  ``result.info["kernel"]`` says.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import ClassVar, Optional

import numpy as np

from s3vm.core.formulation import Formulation
from s3vm.core.kernels import nystroem
from s3vm.core.options import Option
from s3vm.models.gradient_s3vm import balance_target, kernel_root, smoothed_outputs
from s3vm.models.hinge_svm import HingeObjective
from s3vm.models.l2_svm import FactorObjective, S3VMObjective
from s3vm.models.label_switching import ANNEAL, label_switching, polish
from s3vm.solvers.bnb.links import round_scores
from s3vm.solvers.errors import InputError

#: rbf kernel: the exact kernel matrix up to this many points, the Nystroem factor beyond
#: (at 2,000 points the exact path took 4 s to 14 s on a loaded 2-core machine, Nystroem 0.6 s)
EXACT_MAX_N = 1000
#: Nystroem landmarks beyond EXACT_MAX_N (two moons, 10^4 points: the same labels as 300)
DEFAULT_RANK = 500
LANDMARK_SEED = 0
#: SVMlight's schedule of C* (Joachims 1999, Fig. 2: C*_tmp = 10^-5, then x 1.5 while below C*)
JOACHIMS_ANNEAL = tuple(min(1e-5 * 1.5 ** k, 1.0) for k in range(29)) + (1.0,)


class LabelSwitchingS3VM(Formulation):
    """A local minimum of S3VM-L2 (kernel, bias or not, C and C*, count balance or none)."""

    problem: ClassVar[int] = 1

    name: ClassVar[str] = "switching"
    local: ClassVar[bool] = True
    no_model: ClassVar[str] = "a local search over labelings (label switching)"
    #: peak bytes per n^2 entry (linear, rbf), measured: K and the active sets' factors (on
    #: the paths that form K; see :meth:`dense_bytes_per_entry`)
    dense_bytes: ClassVar[tuple] = (48, 48)
    summary: ClassVar[str] = ("S3VM-L2 by annealed label switching (Joachims' TSVM, squared "
                              "hinge): a local minimum, no bound")
    problem_class: ClassVar[str] = "svm"
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "bias", "balance",
                                      "positives")
    #: Groups by construction: every labeling visited moves a group together (loss squared)
    uses_groups: ClassVar[bool] = True
    #: S3VMClassifier's default: both searches, the lower J kept (docs/changelog.md, the
    #: SSL book: the gradient start had the lower J on half the fits)
    estimator_options: ClassVar[dict] = {"search": "best"}
    sparse_linear: ClassVar[Optional[str]] = "primal-tsvm"
    options: ClassVar[tuple] = (
        Option("search", "choice", "anneal", "switching: the starts of the label switching, "
               "kept by their J: anneal (Joachims' annealing of C* from the labeled rows' SVM, "
               "and from the labeled ratio), gradient (the labeling of ∇S3VM's continuation, "
               "Chapelle and Zien 2005), or best (both)", choices=("anneal", "gradient", "best")),
        Option("loss", "choice", "squared", "switching: the loss of the retrainings: squared "
               "(Problem 1's squared hinge, exact Newton) or hinge (SVMlight's TSVM, Joachims "
               "1999: libsvm on the exact kernel matrix)", choices=("squared", "hinge")),
        Option("anneal", "choice", "halving", "switching: the schedule of C*: halving (2^-10 "
               "C* to C*, 11 stages) or joachims (SVMlight's: 10^-5 C* up by factors of 1.5, "
               "30 stages)", choices=("halving", "joachims")),
        Option("rank", "int", None, "rbf kernel: Nystroem landmarks r (switching: default "
               f"the exact kernel up to {EXACT_MAX_N} points, {DEFAULT_RANK} beyond; "
               "sdp-lowrank: default 100; at most n)", minimum=1),
    )

    def check(self, instance, settings):
        self._n, self._p = instance.n, instance.p
        super().check(instance, settings)
        if self.loss == "hinge" and not settings.bias:
            raise InputError("switching with loss hinge needs a bias (libsvm fits b)")
        if self.loss == "hinge" and instance.has_groups:
            raise InputError("switching with loss hinge does not take groups or pairs (its "
                             "switches are SVMlight's, point by point): use loss squared")
        if self.loss == "hinge" and self.rank is not None:
            raise InputError("switching with loss hinge runs on the exact kernel: rank does "
                             "not apply")
        if settings.C <= 0 or settings.C_unlabeled <= 0:
            raise InputError("switching needs C > 0 and C* > 0")
        if self.rank is not None and self.rank > instance.n:
            raise InputError(f"rank larger than n: rank = {self.rank}, n = {instance.n}")

    def takes_sparse(self, settings) -> bool:
        # rbf: the kernel matrix and the Nystroem factor are formed from sparse products (dense
        # n x n or n x r); the linear kernel's primal reads X dense (primal-tsvm does not).
        return settings.kernel == "rbf"

    def uses_factor(self, n: int, p: int, kernel: str) -> bool:
        """Whether the retrainings run in the primal of a factor (no n x n matrix)."""
        if self.loss == "hinge":
            return False
        if kernel == "linear":
            return p < n
        return self.rank is not None or n > EXACT_MAX_N

    def dense_bytes_per_entry(self, settings, backend=None) -> float:
        n, p = getattr(self, "_n", None), getattr(self, "_p", None)
        if n is not None and self.uses_factor(n, p, settings.kernel):
            return 0.0
        return super().dense_bytes_per_entry(settings, backend)

    @contextmanager
    def environment(self):
        # The systems are r x r (factor) or the active set's (kernel): BLAS threads only
        # contend on a loaded machine (2,000 points: 47 s with them, 4 s without).
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            yield

    def build(self, instance, settings):
        """The objective J of the instance (the model a local search evaluates): on the kernel
        matrix, or on a factor of it (see the module's notes)."""
        if self.loss == "hinge":
            return HingeObjective(instance, settings)
        if not self.uses_factor(instance.n, instance.p, settings.kernel):
            return S3VMObjective(instance, settings)
        if settings.kernel == "linear":
            return FactorObjective(instance, settings, instance.X, exact=True)

        rank = min(self.rank or DEFAULT_RANK, instance.n)
        # Fixed landmarks (seed 0): a seed option would make bench suites repeat every
        # switching run per seed, also on the exact path where it changes nothing.
        G, landmarks, V = nystroem(instance.X, settings.sigma, rank, LANDMARK_SEED)
        return FactorObjective(instance, settings, G, exact=rank >= instance.n,
                               landmarks=landmarks, V=V)

    @staticmethod
    def _stop_in_time(clock):
        """The search's stop test: the clock expired, or what it has left is less than the
        last round took. A round (one SVM training, a few tenths of a second at 15,000
        points) cannot be cut short, and the search ends with one more training at the labels
        found (their value J): a round that would end past the limit is not begun, so that
        this last training, about a round, ends within a round of the limit instead of after
        a round begun just before it."""
        last = [None]

        def stop() -> bool:
            now = clock.now()  # the clock's time: a round's length and the limit on one timer
            took = 0.0 if last[0] is None else now - last[0]
            last[0] = now
            left = clock.remaining()
            return clock.expired() or (left is not None and left < took)

        return stop

    @staticmethod
    def _gradient_start(objective, instance, settings, positives, stop, clock, links=None):
        """∇S3VM's labeling (:mod:`s3vm.models.gradient_s3vm`) improved by label switching at
        C*: (labels, J, finished, solution)."""
        clock.report(phase="gradient continuation (∇S3VM start)")
        G = getattr(objective, "G", None)
        if G is None:
            G = kernel_root(objective.K)
        U = instance.unlabeled
        target = balance_target(positives, instance.label[instance.labeled], U.size)
        f = smoothed_outputs(G, instance.label, instance.labeled, U, objective.C, target,
                             bool(settings.bias))
        return polish(objective, positives, round_scores(f[U], positives, links), stop, links)

    def run(self, instance, settings, backend, profile, clock, result):
        objective = self.build(instance, settings)
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        anneal = ANNEAL if self.anneal == "halving" else JOACHIMS_ANNEAL

        def on_stage(stage, labels):
            clock.report(phase=f"label switching, stage {stage + 1} of {len(anneal)}",
                         labels=labels)

        stop = self._stop_in_time(clock)
        links = instance.unlabeled_links()
        if links is not None and links.best(np.zeros(links.u), np.zeros(links.u),
                                            positives) is None:
            result.status, result.labels = "infeasible", None
            result.message = (f"no labeling of the {instance.u} unlabeled points keeps the "
                              f"groups with {positives} labeled +1 (the balance count)")
            return
        if self.search == "gradient":
            labels, value, finished, solution = self._gradient_start(
                objective, instance, settings, positives, stop, clock, links)
        else:
            labels, value, finished, solution = label_switching(
                objective, positives, anneal=anneal, stop=stop, on_stage=on_stage,
                with_solution=True, links=links)
        if self.search == "best" and finished:
            other = self._gradient_start(objective, instance, settings, positives, stop, clock,
                                         links)
            result.info["starts"] = {"anneal": value, "gradient": other[1]}
            if other[1] < value:
                labels, value, finished, solution = other
        result.status = "feasible" if finished else "time_limit"
        result.message = "" if finished else "time limit reached during label switching"
        result.objective = value
        result.labels = labels
        result.decision_values = solution.outputs[instance.unlabeled]
        if isinstance(objective, FactorObjective):
            result.primal = {"beta": objective.beta(solution), "b": solution.b}
            result.info["kernel"] = (
                "exact (primal in the features)" if objective.exact else
                f"Nystroem, {objective.G.shape[1]} of {objective.landmarks.size} landmarks: "
                "J and the decision function are the approximate kernel's")
        else:
            result.primal = {"beta": solution.beta, "b": solution.b}
