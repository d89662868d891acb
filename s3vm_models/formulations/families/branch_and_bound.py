"""The formulations solved by branch and bound over labelings (bb, bb-mip, bb-sdp).

A subclass states its bound once, as a :class:`~s3vm.solvers.bnb.problem.LabelingProblem` built in
:meth:`BranchAndBoundFormulation.labeling_problem`; this class owns the rest: the options of the
search (node selection, gap tolerances, node limit, log frequency, tree file), the time limit of
the profile, the choice of solver, and the :class:`~s3vm.solvers.results.Result`.

Solvers. ``problem_class`` names the class of solver the bounds use: ``"lp"`` (bb-mip's LP
relaxations), ``"sdp"`` (bb-sdp), or ``"svm"`` (bb, whose SVM bounds are computed in numpy). The
``svm`` class has one solver, ``builtin`` (the default of the class, listed by ``s3vm list``);
naming any other solver for it is an :class:`InputError`, since nothing would use it.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

import numpy as np

from s3vm.core.formulation import Formulation
from s3vm.core.options import Option
from s3vm.solvers.bnb.driver import (
    CERTIFY,
    NODE_SELECTIONS,
    PROBES,
    BuiltinBackend,
    search,
    write_graphml,
)
from s3vm.solvers.errors import InputError
from s3vm.solvers.profiles import get_profile
from s3vm.solvers.runtime.clock import Stopped
from s3vm.solvers.runtime.files import check_writable
from s3vm.solvers.runtime.supervisor import interrupt_grace, time_limit_grace

BUILTIN = "builtin"


BNB_GROUP = "branch and bound (bb, bb-mip, bb-sdp)"


class BranchAndBoundFormulation(Formulation):
    """A formulation solved by the branch-and-bound driver (:mod:`s3vm.solvers.bnb.driver`).

    Parameters
    ----------
    node_selection : {"depth", "best", "best-dive"}
        Which open node to expand next (see :func:`s3vm.solvers.bnb.driver.search`).
    rel_gap, abs_gap : float
        Stop proving once no open node can improve the best labeling by more than
        ``max(abs_gap, rel_gap * |objective|)``; the status is then ``optimal`` (within the
        tolerance) with the gap beside it.
    node_limit : int, optional
        Stop after about this many nodes (status ``feasible``, the best labeling so far).
    log_every : int
        A log line (logger ``s3vm.bnb``) every this many nodes, and at least every 5 s.
    tree_file : str, optional
        Write the explored tree there as GraphML.
    k_best : int
        Return the K best labelings (``Result.pool``, best first) and a proven bound on every
        other (``Result.pool_bound``): the search prunes against the K-th best value found
        instead of the best (:mod:`s3vm.solvers.bnb.kbest`). 1 (default): the best alone.
    label_fixing : {"off", "root"}
        ``root``: once the root is bounded, fix at the root every label whose opposite child
        cannot improve the incumbent (one bound per free point; ``probe`` in
        :func:`s3vm.solvers.bnb.driver.search`); ``Result.info["fixed_at_root"]`` counts them.
    certify : {"tree", "probe"}
        ``probe``: after the search, one bound per label the tree left open (the root's child
        with the opposite label) to certify it (docs/models.md#certified-labels).
    """

    problem_class: ClassVar[str] = "svm"
    export_formats: ClassVar[tuple] = ()
    unmeetable_count_is_infeasible: ClassVar[bool] = True
    options: ClassVar[tuple] = (
        Option("node_selection", "choice", "depth", "depth-first (default, as Chapelle et al.), "
               "best-first, or best-bound with diving", choices=NODE_SELECTIONS, group=BNB_GROUP),
        Option("rel_gap", "float", 0.0, "stop when the relative gap is at most this (0: prove "
               "optimality)", minimum=0.0, maximum=1.0, open_max=True, flag="--gap",
               group=BNB_GROUP),
        Option("abs_gap", "float", 0.0, "stop when objective - bound is at most this",
               minimum=0.0, group=BNB_GROUP),
        Option("node_limit", "int", None, "stop after this many nodes", minimum=1,
               group=BNB_GROUP),
        Option("log_every", "int", 1000, "a log line every N nodes on stderr (0: none)",
               minimum=0, group=BNB_GROUP),
        Option("tree_file", "file", None, "write the explored tree as GraphML",
               flag="--tree", group=BNB_GROUP),
        Option("k_best", "int", 1, "return the K best labelings (pool) and a proven bound on "
               "every other labeling (pool_bound)", minimum=1, group=BNB_GROUP),
        Option("label_fixing", "choice", "off", "fix at the root the labels whose opposite "
               "child cannot beat the incumbent (root), or not (off)", choices=PROBES,
               group=BNB_GROUP),
        Option("certify", "choice", "tree", "certify labels from the tree's nodes (tree), or "
               "also by one bound per open label after the search (probe)", choices=CERTIFY,
               group=BNB_GROUP),
    )

    def check_options(self) -> None:
        for path in (self.tree_file, self.certificate_path()):
            if path is not None:
                check_writable(path)

    @abstractmethod
    def labeling_problem(self, instance, settings, backend, profile, clock=None):
        """The :class:`~s3vm.solvers.bnb.problem.LabelingProblem` of ``instance`` under
        ``settings``.

        ``backend`` and ``profile`` solve the bounds' models (for ``problem_class`` lp or sdp)
        under ``clock``, the solve's (None: no limit), which the problem gets when it is built;
        the problem's ``positives`` is the balance count when ``settings.balance`` is
        ``"count"`` (``settings.positive_count(instance)``), else None.
        """

    def build(self, instance, settings):
        """The labeling problem, its bounds using the default solver of the problem class."""

        profile = get_profile(None, None, self.problem_class)
        return self.labeling_problem(instance, settings, self.backend(profile), profile)

    def backend(self, profile):
        """The backend of the bounds; for ``svm`` the driver itself (``builtin``).

        Raises
        ------
        InputError
            A solver that does not take ``problem_class``; for ``svm``, any solver but
            ``builtin``.
        """
        if self.problem_class == "svm":
            if profile.solver not in (None, BUILTIN):
                raise InputError(f"{self.name} computes its bounds itself and takes no external "
                                 f"solver, got --solver {profile.solver} (omit it, or use "
                                 f"--solver {BUILTIN})")
            return BuiltinBackend()
        return super().backend(profile)

    def node_pool(self, instance, settings):
        """The pool of workers that bounds the nodes (:mod:`s3vm.solvers.bnb.pool`), or None
        to bound them in this process one after the other (the default)."""
        return None

    def result_primal(self, problem, labels) -> dict:
        """Named parts of the primal solution at the final labeling (``w``, ``b``, ...).

        The driver knows only labelings, so the base class has none to give; a subclass whose
        problem can return its classifier overrides this.
        """
        return {}

    def qualify(self, problem, result) -> None:
        """Amend ``result`` after the search where the problem could not value every labeling
        exactly (bb-mip: a labeling LP that failed); nothing here."""

    def result_info(self, problem) -> dict:
        """Formulation-specific entries of ``Result.info`` after the search (none here)."""
        return {}

    #: The start labeling of :meth:`set_start` (None: the problem's own heuristic alone)
    start = None

    def set_start(self, instance, settings, labels) -> None:
        """Start from ``labels`` (+1/-1 per unlabeled row, file order): the search's first
        incumbent, before its own heuristic. A start that breaks the balance count or the
        groups is an :class:`InputError`; a worse start than the heuristic's costs nothing (the
        better one is kept), and the optimum does not depend on it."""
        labels = np.asarray(labels)
        if labels.shape != (instance.u,) or not np.all((labels == 1) | (labels == -1)):
            raise InputError(f"start must hold one label +1/-1 per unlabeled row ({instance.u}), "
                             f"got shape {labels.shape}")
        if settings.balance == "count" and \
                int(np.sum(labels == 1)) != settings.positive_count(instance):
            raise InputError(f"the start labels {int(np.sum(labels == 1))} rows +1, the balance "
                             f"count asks {settings.positive_count(instance)}")
        links = instance.unlabeled_links()
        if links is not None and not links.consistent(labels):
            raise InputError("the start labeling breaks the groups (or pairs)")
        self.start = labels.astype(int)

    def certificate_path(self):
        """Where to write the search's certificate (the ``certificate`` option of bb-sdp and
        bb-mip), None for none: the search then records no proof."""
        return getattr(self, "certificate", None)

    def write_certificate(self, instance, settings, problem, found) -> None:
        """Write the certificate of ``found`` (a search that recorded its proof); the
        formulations that offer one override this."""
        raise NotImplementedError

    def _classifier_at(self, problem, labels, clock, result) -> None:
        """Decision values and primal parts at the best labeling into ``result``.

        After a time limit or a signal these are one more bound-model solve at a fixed labeling
        (an LP for bb-mip): it is given a share of the supervisor's grace period
        (:meth:`s3vm.solvers.runtime.clock.Clock.finishing`), so that a stopped search keeps its
        trace, node count and decision values; when even that is cut short the labels stand
        without decision values.
        """
        if not (clock.stopped or clock.expired()):
            result.decision_values = problem.decision_values(labels)
            result.primal = self.result_primal(problem, labels)
            return

        share = 0.5 * (interrupt_grace(clock) if clock.interrupted
                       else time_limit_grace(clock.limit or 0.0))
        with clock.finishing(share):
            try:
                result.decision_values = problem.decision_values(labels)
                result.primal = self.result_primal(problem, labels)
            except Stopped:
                # the incumbent's decision values its problem published, if any (bb-mip)
                snap = clock.snapshot()
                published = snap.get("labels") is not None and \
                    np.array_equal(snap["labels"], labels)
                result.decision_values = snap.get("decision_values") if published else None
                result.primal = {}

    def run(self, instance, settings, backend, profile, clock, result):
        """Search the labeling problem; the clock (and the time limit) includes building it."""

        for path in (self.tree_file, self.certificate_path()):
            if path is not None:
                check_writable(path)
        if settings.balance == "count":
            P = settings.positive_count(instance, in_range=False)
            if not 0 <= P <= instance.u:
                # A well-posed search with an empty feasible set: a result, not bad input.
                result.status, result.nodes = "infeasible", 0
                result.message = (f"no labeling of the {instance.u} unlabeled points has {P} "
                                  "labeled +1 (the balance count)")
                return
        clock.report(phase="building the bounds")
        problem = self.labeling_problem(instance, settings, backend, profile, clock)
        build_seconds = clock.seconds
        clock.report(phase="starting heuristic")
        pool = self.node_pool(instance, settings)
        try:
            found = search(problem, node_selection=self.node_selection, abs_gap=self.abs_gap,
                           rel_gap=self.rel_gap, node_limit=self.node_limit,
                           log_every=self.log_every, keep_tree=self.tree_file is not None,
                           clock=clock,
                           pool=pool, k_best=self.k_best,
                           record_proof=self.certificate_path() is not None, initial=self.start,
                           probe=self.label_fixing, certify=self.certify)
        finally:
            if pool is not None:
                pool.close()
        if self.tree_file is not None:
            found.tree.graph["formulation"] = self.name
            write_graphml(found.tree, self.tree_file)
        result.status, result.objective, result.lower_bound = (found.status, found.objective,
                                                                found.lower_bound)
        result.nodes, result.message = found.nodes, found.message
        if found.pool is not None:
            result.pool = [{"labels": labels, "objective": value}
                           for labels, value, _ in found.pool]
            result.pool_bound = found.pool_bound
        if found.proof is not None:
            self.write_certificate(instance, settings, problem, found)
        if found.labels is not None:
            result.labels = found.labels
            # the problem's positions are the unlabeled rows in file order, as the labels
            result.certified_labels = found.certified_labels
            self._classifier_at(problem, found.labels, clock, result)
        self.qualify(problem, result)
        result.info.update({
            "incumbent_source": found.incumbent_source, "open_nodes": found.open_nodes,
            "build_seconds": build_seconds, "search_seconds": found.seconds - build_seconds,
            "positives": problem.positives, "trace": found.trace,
            "fixed_at_root": found.fixed_at_root, "probe_nodes": found.probe_nodes,
            **self.result_info(problem)})
