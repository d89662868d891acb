"""``bb-sdp``: S3VM-L2 without bias by branch and bound on SDP-S3VM's bound (Piccialli,
Schwiddessen and Sudoso 2024): the Shor relaxation in output space with an incumbent-driven box,
RLT cuts, dual box tightening, best-first search, their branching rule and their balance-keeping
heuristic (docs/formulations.md#bb-sdp; the node loop is :mod:`s3vm.bounds.shor`, the model
:mod:`s3vm.models.shor_relaxation`).

Every bound handed to the driver is the value of a dual feasible point of the node's relaxation,
rebuilt from the SDP solver's multipliers (the trace-bound correction), never the solver's primal
value: an inexact solve weakens a bound but cannot push it above the optimum. The node SDPs are
standard-form conic programs solved by SDPA directly (``--solver sdpa``, the default where the
``sdpa`` extra is installed), SCS (``--solver scs``, the fallback) or Clarabel; the problem class
is ``conic`` (:mod:`s3vm.solvers.backends.conic_standard`).

Full labelings are scored exactly: the squared-hinge SVM without bias (:mod:`s3vm.models.l2_svm`)
under ``none`` and ``count``, the labeling's QP under ``mean`` (:mod:`s3vm.models.output_space`).
``s3vm export -f bb-sdp`` writes the root relaxation (the box of the starting incumbent, no cuts) as
CBF or PTF through its MOSEK Fusion twin (:mod:`s3vm.models.fusion.shor`);
:meth:`BranchAndBoundSDP.build_cvxpy` gives the same model in CVXPY. With facial reduction (the
lifted count, the mean balance's product rows) both are written in the reduced coordinates X = Q Xr
Q', as the search solves them.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import ClassVar

import numpy as np

from s3vm.bounds.shor import BRANCHINGS, COUNT_BOUNDS, ShorBoundProblem, ShorOptions
from s3vm.bounds.shor_proof import CERTIFIED_OPTIONS, certificate_document, write_certificate
from s3vm.core.formulation import GivenModel
from s3vm.core.kernels import kernel_matrix
from s3vm.core.options import Option
from s3vm.formulations.families.branch_and_bound import BNB_GROUP, BranchAndBoundFormulation
from s3vm.formulations.families.conic import ConicFormulation, given_step
from s3vm.models.conic import ConicModel
from s3vm.models.fusion.shor import build_shor
from s3vm.models.output_space import s3vm_objective
from s3vm.models.shor_relaxation import RowList, cvxpy_problem
from s3vm.solvers.bnb.pool import make_pool
from s3vm.solvers.errors import InputError
from s3vm.solvers.profiles import get_profile
from s3vm.solvers.runtime.files import atomic_output

SDP_GROUP = "bb-sdp (SDP-S3VM's node loop)"


class BranchAndBoundSDP(BranchAndBoundFormulation):
    """S3VM-L2 without bias by branch and bound on the output-space Shor relaxation.

    Parameters
    ----------
    cut_factor : float
        At most cut_factor * n RLT cuts added a round (theirs: 3).
    max_rounds : int
        Cutting-plane rounds at a node (theirs: 30).
    round_tol : float
        A node stops its rounds when its bound improves by less than this, relatively (1e-3).
    branching : {"rank", "fractional", "strong"}
        Their rule 2 (ten ranked criteria), the most fractional point, or strong branching on
        the cheap certificate (the best of rule 2's first four by its worse child's bound).
    child_max_rounds : int, optional
        Cutting-plane rounds at a node other than the root (None: ``max_rounds``).
    cheap_bound : bool
        Bound each child first by its parent's multipliers (:class:`s3vm.bounds.shor.ShorOptions`).
    probe : int
        Free points probed at a node's end by the cheap certificate (0: none).
    count_bound : {"lifted", "none"}
        Under ``--balance count``: the labels lifted into the SDP with the count and its
        products, or the count left to the driver (docs/formulations.md#bb-sdp).
    mean_products : bool
        Under ``--balance mean``: the balance's products with every output, by facial reduction
        (default; their code's ``add_product_constraints``).
    sdp_tol : float
        The SDP solver's accuracy away from the incumbent (:class:`s3vm.bounds.shor.ShorOptions`
        tightens it near the incumbent and where the certificate loses).
    workers : int, optional
        Node SDPs solved at once, each in a forked process (:mod:`s3vm.solvers.bnb.pool`; the
        children of ``workers // 2`` nodes a step). None: every core, fewer when ``workers``
        times the formulation's memory estimate (:attr:`dense_bytes` n^2) would not fit; 1:
        in this process, one after the other. The result is the same for the same number.
    scheduler : str, optional
        A ``dask.distributed`` scheduler's address: the nodes are bounded on its workers
        (``workers`` bounds at once, default its threads), the root here.
    certificate : str, optional
        Write the search's proof there (JSON, :mod:`s3vm.bounds.shor_proof`), for ``s3vm
        check-certificate``. The search then runs with the bounds a checker can recompute
        (:data:`s3vm.bounds.shor_proof.CERTIFIED_OPTIONS`: no QCQP boxes, dual tightening,
        incumbent-relative certificate or lifted count), so it is slower.
    node_selection, rel_gap, abs_gap, node_limit, log_every, tree_file
        See :class:`BranchAndBoundFormulation`; node selection defaults to best-first.
    """

    problem: ClassVar[int] = 1

    name: ClassVar[str] = "bb-sdp"
    #: peak bytes per n^2 entry (linear, rbf), measured at n = 300 and 600 (docs/changelog.md,
    #: "Peak memory"): the node SDP's data and certificate in this process (~180), SDPA's
    #: matrices of order n + 1 in its child (~310) and its dense Schur complement, 8 m^2 for m
    #: rows, up to 5.5 n rows seen with the RLT cuts (~250)
    dense_bytes: ClassVar[tuple] = (800, 800)
    summary: ClassVar[str] = ("S3VM-L2 without bias by branch and bound on SDP-S3VM's bound "
                              "(Shor relaxation, box, RLT cuts; --no-bias, --balance mean|count)")
    problem_class: ClassVar[str] = "conic"
    preferred_solvers: ClassVar[tuple] = ("sdpa", "scs")
    export_formats: ClassVar[tuple] = ("cbf", "ptf")
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "balance", "positives")
    settings_fixed: ClassVar[dict] = {
        "bias": (False, "bb-sdp solves S3VM-L2 without bias (bb takes both)")}
    balances: ClassVar[tuple] = ("none", "count", "mean")
    #: Groups: the search branches on whole groups; the heuristics keep them
    uses_groups: ClassVar[bool] = True
    #: The declarative model is the root relaxation (the box of the starting incumbent, no
    #: cuts); the Fusion one is for export and inspection.
    modelers: ClassVar[tuple] = ("cvxpy", "fusion")
    components: ClassVar[dict] = {
        "X": "the (n + 1) x (n + 1) PSD matrix [[1, x'], [x, V]] of the Shor relaxation in "
             "output space, points labeled first (variable 'X')",
        "constraints": "[the equality rows, the inequality rows] of the root node"}

    options: ClassVar[tuple] = BranchAndBoundFormulation.options + (
        Option("node_selection", "choice", "best", "depth-first, best-first (default for "
               "bb-sdp), or best-bound with diving", choices=("depth", "best", "best-dive"),
               group=BNB_GROUP),
        Option("cut_factor", "float", 3.0, "at most this times n RLT cuts a round",
               minimum=0.0, group=SDP_GROUP),
        Option("max_rounds", "int", 30, "cutting-plane rounds at a node", minimum=1,
               group=SDP_GROUP),
        Option("round_tol", "float", 1e-3, "stop a node's rounds below this relative "
               "improvement", minimum=0.0, group=SDP_GROUP),
        Option("branching", "choice", "rank", "SDP-S3VM's ranked rule, the most "
               "fractional point, or strong branching on the cheap certificate",
               choices=BRANCHINGS, group=SDP_GROUP),
        Option("child_max_rounds", "int", None, "cutting-plane rounds at a node other than "
               "the root (default: max_rounds)", minimum=1, group=SDP_GROUP),
        Option("cheap_bound", "bool", False, "bound each child first by its parent's "
               "multipliers at its box (an eigenvalue, no SDP; prunes it when that suffices)",
               group=SDP_GROUP),
        Option("probe", "int", 0, "free points probed at a node's end by the cheap "
               "certificate of its multipliers (fixes their labels; 0: none)", minimum=0,
               group=SDP_GROUP),
        Option("count_bound", "choice", "lifted", "with --balance count: labels lifted "
               "into the SDP, or the count left to the search", choices=COUNT_BOUNDS,
               group=SDP_GROUP),
        Option("mean_products", "bool", True, "with --balance mean: the balance times "
               "every output, by facial reduction (--no-mean-products: the balance's row "
               "alone)", group=SDP_GROUP),
        Option("sdp_tol", "float", 1e-5, "the SDP solver's accuracy away from the incumbent "
               "(1e-7 near it, finer where the certificate loses)", minimum=0.0,
               open_min=True, maximum=0.1, group=SDP_GROUP),
        Option("workers", "int", None, "bound the children of nodes in this many processes "
               "at once (default: all cores, fewer when memory is short; 1: one after the "
               "other)", minimum=1, group=SDP_GROUP),
        Option("scheduler", "text", None, "bound the nodes on a Dask cluster: the address of "
               "its dask.distributed scheduler", group=SDP_GROUP),
        Option("certificate", "file", None, "write the proof of optimality (JSON) for s3vm "
               "check-certificate (bounds a checker can recompute: slower)", group=BNB_GROUP),
    )

    def check(self, instance, settings):
        super().check(instance, settings)
        if settings.C <= 0 or settings.C_unlabeled <= 0:
            raise InputError("bb-sdp needs C > 0 and C* > 0 (the squared hinge on K + "
                             "diag(1/(2C)))")
        if self.certificate is not None and settings.balance == "mean":
            raise InputError("bb-sdp's certificate needs --balance none or count (a checker "
                             "cannot recompute the mean balance's leaf values from alpha alone)")
        if self.k_best > 1 and self.certificate is not None:
            raise InputError("bb-sdp writes a certificate of the best labeling: give "
                             "certificate or k_best, not both")
        if self.k_best > 1 and settings.balance == "mean":
            # the box of a node needs a value every labeling in the pool lies below; under the
            # mean balance no such value is known before the pool fills
            raise InputError("bb-sdp's k_best needs --balance none or count (the mean "
                             "balance's box has no bound before K labelings are found)")

    def shor_options(self) -> ShorOptions:
        options = ShorOptions(cut_factor=self.cut_factor, max_rounds=self.max_rounds,
                              rel_tol=self.round_tol, branching=self.branching,
                              child_max_rounds=self.child_max_rounds, probe=self.probe,
                              cheap=self.cheap_bound,
                              count_bound=self.count_bound, products=self.mean_products,
                              tolerance=self.sdp_tol,
                              tolerance_near=min(self.sdp_tol, ShorOptions.tolerance_near))
        if self.certificate is not None:
            options = replace(options, **CERTIFIED_OPTIONS)
        return options

    def labeling_problem(self, instance, settings, backend, profile, clock=None):
        """A :class:`s3vm.bounds.shor.ShorBoundProblem` for ``instance``."""

        objective = s3vm_objective(instance, settings)
        positives = settings.positive_count(instance) if settings.balance == "count" else None
        K = kernel_matrix(instance.X, None, settings.kernel, settings.sigma)
        C = np.where(instance.label != 0, float(settings.C), float(settings.C_unlabeled))
        problem = ShorBoundProblem(K, instance.label, C, settings.balance, positives, objective,
                                   backend, profile, self.shor_options(), rel_gap=self.rel_gap,
                                   abs_gap=self.abs_gap, links=instance.unlabeled_links(),
                                   k_best=self.k_best, record_proof=self.certificate is not None,
                                   clock=clock)
        problem.exact = objective
        return problem

    def write_certificate(self, instance, settings, problem, found) -> None:
        """The search's proof as a certificate file (:mod:`s3vm.bounds.shor_proof`)."""
        write_certificate(self.certificate, certificate_document(
            instance, settings, found, problem.proofs, self.abs_gap, self.rel_gap))

    def node_pool(self, instance, settings):
        """Processes (``workers``) or a Dask cluster (``scheduler``) for the node SDPs."""

        per_worker = self.dense_bytes_per_entry(settings) * float(instance.n) ** 2
        return make_pool(self.workers, self.scheduler, per_worker)

    def result_primal(self, problem, labels) -> dict:
        """The SVM at the final labeling: expansion coefficients beta (f = K beta) and b = 0."""
        return {"beta": problem.exact.solve(labels).beta.copy(), "b": 0.0}

    def result_info(self, problem) -> dict:
        """SDP solves and their time, the root's bound, rounds, incumbent and whether it
        finished (``root_finished``); ``product_rows``: "kept", "dropped" (the solver failed
        on them) or "off" (not asked for, or no mean balance); ``certificate_loss``
        (:meth:`s3vm.bounds.shor.ShorBoundProblem.certificate_losses`)."""
        stats = dict(problem.stats)
        asked = problem.options.products and problem.data.rhs is not None and not problem._lifted
        rows = "off" if not asked else "dropped" if stats["products_dropped"] else "kept"
        return {"sdp_solves": stats.pop("sdp"), "sdp_seconds": stats.pop("sdp_seconds"),
                **stats, **problem.node_statistics(), "product_rows": rows,
                "certificate_loss": problem.certificate_losses()}

    @contextmanager
    def environment(self):
        # One BLAS thread: the node systems are small and the SDPs are solved one at a time
        # (threads only contend on a loaded machine, and results stay bit-identical).
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            yield

    # -- the root relaxation as a model (export, CVXPY) ----------------------------------------
    def _root(self, instance, settings):
        profile = get_profile("scs", None, "conic")
        problem = self.labeling_problem(instance, settings, None, profile)
        rows, Ct, fr = problem.root_rows()
        if fr is not None:
            # X a = 0 leaves no interior: the model is written in the reduced coordinates
            # X = Q Xr Q', as the search solves it.
            A, b, eq = rows.arrays()
            A_r, Ct = fr.reduce(A, Ct)
            rows = RowList.from_matrix(Ct.shape[0], A_r, b, eq, like=rows)
        return rows, Ct

    def build_cvxpy(self, instance, settings):
        """The root relaxation as a CVXPY problem
        (:func:`s3vm.models.shor_relaxation.cvxpy_problem`): a :class:`s3vm.models.conic.ConicModel`
        with readers ``X``."""

        self.check(instance, settings)
        rows, Ct = self._root(instance, settings)
        problem, X, _, _ = cvxpy_problem(rows, Ct)
        return ConicModel(problem, read={"X": lambda: X.value},
                          info={"rows": len(rows), "order": rows.N})

    def _export_model(self, instance, settings):
        rows, Ct = self._root(instance, settings)
        return build_shor(rows, Ct)

    def declarative_model(self, instance, settings, modeler):
        """The root relaxation in its :class:`ConicModel`, the CVXPY one with a reader of the
        unlabeled outputs x_U (row 0 of X) where X is written in full coordinates."""

        if modeler == "fusion":
            built = self._export_model(instance, settings)
            return built if isinstance(built, ConicModel) else ConicModel(built)
        built = self.build_cvxpy(instance, settings)
        # X's indices 1..n are the points, labeled first, then the unlabeled in file order.
        unlabeled_at = np.arange(1 + instance.l, 1 + instance.n)
        read_x = built.read["X"]
        rows = built.info.get("order")
        if rows is not None and rows != instance.n + 1:
            built.read["gamma_u"] = None  # reduced coordinates: no x to read (solving_given)
        else:
            built.read["gamma_u"] = lambda: np.asarray(read_x(), dtype=float)[0, unlabeled_at]
        return built

    def solving_given(self, given: GivenModel):
        """The root relaxation solved once: labels by the sign of the relaxed outputs x_U,
        scored by S3VM-L2's J (the objective bb-sdp minimises)."""

        if given.modeler == "fusion":
            raise InputError("bb-sdp's MOSEK Fusion root model is for export and inspection: "
                             "build the CVXPY one (modeler='cvxpy') to solve it here")
        if given.conic is None or given.conic.read.get("gamma_u") is None:
            raise InputError("this bb-sdp root model is lifted (the count's labels) or written "
                             "in reduced coordinates (facial reduction), so its outputs cannot "
                             "be read: build it with balance='none', count_bound='none' or "
                             "mean_products=False to solve it here")
        own = type(self)

        class Given(ConicFormulation):
            name = own.name
            settings_used = own.settings_used
            settings_fixed = own.settings_fixed
            balances = own.balances
            dense_bytes = own.dense_bytes
            uses_groups = False
            run_model = given_step(given)

            def supervised_value(self, instance, settings, y):
                solution = s3vm_objective(instance, settings).solve(
                    np.asarray(y[instance.unlabeled], dtype=int))
                return solution.value, None, "J of S3VM-L2 at the rounded labels"

            def run(self, instance, settings, backend, profile, clock, result):
                super().run(instance, settings, backend, profile, clock, result)
                built_as = (given.baseline or {}).get("problem")
                if given.model is not built_as and result.lower_bound is not None:
                    # The root's box comes from an incumbent of the unchanged problem: a change
                    # that raises the optimum above that incumbent can leave the changed
                    # optimum outside the box, so the relaxation bounds only the labelings
                    # inside it.
                    result.info["lower_bound_of_box"] = result.lower_bound
                    result.info["lower_bound_note"] = (
                        "the model was changed: its box comes from the unchanged problem's "
                        "incumbent, so the relaxation's value bounds the changed problem only "
                        "over the box (lower_bound_of_box), not as a whole")
                    result.lower_bound = None

        return Given()

    def _write(self, built, path: str, fmt: str) -> None:
        try:
            with atomic_output(path, suffix="." + fmt) as tmp:
                built.model.writeTask(tmp)
        finally:
            built.model.dispose()
