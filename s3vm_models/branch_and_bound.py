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
from typing import ClassVar, Optional

from .base import Formulation, Stopwatch
from .solvers.errors import InputError
from .solvers.files import check_writable

BUILTIN = "builtin"


class BranchAndBoundFormulation(Formulation):
    """A formulation solved by the branch-and-bound driver (:mod:`s3vm.solvers.bnb.driver`).

    Parameters
    ----------
    node_selection : {"depth", "best", "best-dive"}
        Which open node to expand next (see :func:`s3vm.solvers.bnb.driver.search`).
    rel_gap, abs_gap : float
        Stop proving once no open node can improve the best labeling by more than
        ``max(abs_gap, rel_gap * |objective|)``; the status is then ``feasible``.
    node_limit : int, optional
        Stop after about this many nodes (status ``feasible``, the best labeling so far).
    log_every : int
        A log line (logger ``s3vm.bnb``) every this many nodes, and at least every 5 s.
    tree_file : str, optional
        Write the explored tree there as GraphML.
    """

    problem_class: ClassVar[str] = "svm"
    export_formats: ClassVar[tuple] = ()
    unmeetable_count_is_infeasible: ClassVar[bool] = True

    def __init__(self, node_selection: str = "depth", rel_gap: float = 0.0, abs_gap: float = 0.0,
                 node_limit: Optional[int] = None, log_every: int = 1000,
                 tree_file: Optional[str] = None):
        from .solvers.bnb.driver import validate_search_options

        validate_search_options(node_selection=node_selection, abs_gap=abs_gap, rel_gap=rel_gap,
                                node_limit=node_limit, log_every=log_every)
        if tree_file is not None:
            if not isinstance(tree_file, str) or not tree_file:
                raise InputError(f"tree_file must be a file name, got {tree_file!r}")
            check_writable(tree_file)
        self.node_selection, self.node_limit, self.log_every = node_selection, node_limit, log_every
        self.rel_gap, self.abs_gap = float(rel_gap), float(abs_gap)
        self.tree_file = tree_file

    @abstractmethod
    def labeling_problem(self, instance, settings, profile):
        """The :class:`~s3vm.solvers.bnb.problem.LabelingProblem` of ``instance`` under ``settings``.

        ``profile`` names the solver of the bounds (for ``problem_class`` lp or sdp) and its
        options; the problem's ``positives`` is the balance count when ``settings.balance`` is
        ``"count"`` (``settings.positive_count(instance)``), else None.
        """

    def build(self, instance, settings):
        """The labeling problem, its bounds using the default solver of the problem class."""
        from .solvers.profiles import get_profile

        return self.labeling_problem(instance, settings,
                                     get_profile(None, None, self.problem_class))

    def solver_name(self, profile) -> str:
        """The solver the bounds use, as the Result names it.

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
            return BUILTIN
        from .solvers.registry import DEFAULT_SOLVERS, backend_class

        name = profile.solver if profile.solver is not None else DEFAULT_SOLVERS[self.problem_class]
        backend_class(name, self.problem_class)  # an unknown or unfit name is an InputError
        return name

    def result_primal(self, problem, labels) -> dict:
        """Named parts of the primal solution at the final labeling (``w``, ``b``, ...).

        The driver knows only labelings, so the base class has none to give; a subclass whose
        problem can return its classifier overrides this.
        """
        return {}

    def result_info(self, problem) -> dict:
        """Formulation-specific entries of ``Result.info`` after the search (none here)."""
        return {}

    def solve(self, instance, settings, profile):
        """Search the labeling problem; the clock (and the time limit) includes building it."""
        from .solvers.bnb.driver import search, write_graphml
        from .solvers.results import Result

        self.check(instance, settings)
        solver = self.solver_name(profile)
        time_limit = _time_limit(profile)
        if self.tree_file is not None:
            check_writable(self.tree_file)
        clock = Stopwatch()
        if settings.balance == "count":
            P = settings.positive_count(instance, in_range=False)
            if not 0 <= P <= instance.u:
                # A well-posed search with an empty feasible set: a result, not bad input.
                return Result(formulation=self.name, solver=solver, status="infeasible",
                              nodes=0, seconds=clock.seconds,
                              message=f"no labeling of the {instance.u} unlabeled points has "
                                      f"{P} labeled +1 (the balance count)")
        problem = self.labeling_problem(instance, settings, profile)
        build_seconds = clock.seconds
        found = search(problem, node_selection=self.node_selection, abs_gap=self.abs_gap,
                       rel_gap=self.rel_gap, time_limit=time_limit, node_limit=self.node_limit,
                       log_every=self.log_every, keep_tree=self.tree_file is not None,
                       start=clock.start)
        if self.tree_file is not None:
            found.tree.graph["formulation"] = self.name
            write_graphml(found.tree, self.tree_file)
        result = Result(formulation=self.name, solver=solver, status=found.status,
                        objective=found.objective, lower_bound=found.lower_bound,
                        nodes=found.nodes, message=found.message)
        if found.labels is not None:
            result.labels = found.labels
            result.decision_values = problem.decision_values(found.labels)
            result.primal = self.result_primal(problem, found.labels)
        result.info = {"incumbent_source": found.incumbent_source,
                       "node_selection": self.node_selection, "open_nodes": found.open_nodes,
                       "build_seconds": build_seconds,
                       "search_seconds": found.seconds - build_seconds, "rel_gap": self.rel_gap,
                       "abs_gap": self.abs_gap, "node_limit": self.node_limit,
                       "positives": problem.positives, **self.result_info(problem)}
        result.seconds = clock.seconds
        return result


def _time_limit(profile) -> Optional[float]:
    limit = profile.time_limit
    if limit is not None and not limit > 0:
        raise InputError(f"time limit must be > 0, got {limit}")
    return limit
