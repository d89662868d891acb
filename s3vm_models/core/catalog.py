"""The options of the shipped formulations, declared here as well as on their classes,
so that the command line builds its parser without importing a formulation (each imports its
family, and with it scipy.optimize and the kernels: half a second of the command's start on a
loaded machine). A solve imports its own formulation only.

:func:`s3vm.core.registry.formulation_options` reads :data:`SHIPPED` while the registry still
names the shipped class and its module is not imported yet; otherwise it asks the class.

Generated from the classes by :mod:`s3vm.core.catalog_writer` (``make catalog``); do not edit
by hand. tests/test_cli_startup.py fails when the two drift apart.
"""

from __future__ import annotations

from s3vm.core.options import Option

LP_FORM = Option(
    "lp_form", "choice", "auto",
    "solve the LP dual (auto: when the solver gives duals) or the primal",
    choices=("auto", "dual", "primal"))

HEURISTIC = Option(
    "heuristic", "choice", "switching",
    "starting incumbent from label switching, or none",
    choices=("switching", "none"), group="branch and bound (bb, bb-mip, bb-sdp)")

NODE_SELECTION = Option(
    "node_selection", "choice", "depth",
    "depth-first (default, as Chapelle et al.), best-first, or best-bound with diving",
    choices=("depth", "best", "best-dive"), group="branch and bound (bb, bb-mip, bb-sdp)")

REL_GAP = Option(
    "rel_gap", "float", 0.0,
    "stop when the relative gap is at most this (0: prove optimality)",
    minimum=0.0, maximum=1.0, open_max=True, flag="--gap",
    group="branch and bound (bb, bb-mip, bb-sdp)")

ABS_GAP = Option(
    "abs_gap", "float", 0.0,
    "stop when objective - bound is at most this",
    minimum=0.0, group="branch and bound (bb, bb-mip, bb-sdp)")

NODE_LIMIT = Option(
    "node_limit", "int", None,
    "stop after this many nodes",
    minimum=1, group="branch and bound (bb, bb-mip, bb-sdp)")

LOG_EVERY = Option(
    "log_every", "int", 1000,
    "a log line every N nodes on stderr (0: none)",
    minimum=0, group="branch and bound (bb, bb-mip, bb-sdp)")

TREE_FILE = Option(
    "tree_file", "file", None,
    "write the explored tree as GraphML",
    flag="--tree", group="branch and bound (bb, bb-mip, bb-sdp)")

K_BEST = Option(
    "k_best", "int", 1,
    "return the K best labelings (pool) and a proven bound on every other labeling (pool_bound)",
    minimum=1, group="branch and bound (bb, bb-mip, bb-sdp)")

LABEL_FIXING = Option(
    "label_fixing", "choice", "off",
    "fix at the root the labels whose opposite child cannot beat the incumbent (root), or not "
    "(off)",
    choices=("off", "root"), group="branch and bound (bb, bb-mip, bb-sdp)")

CERTIFY = Option(
    "certify", "choice", "tree",
    "certify labels from the tree's nodes (tree), or also by one bound per open label after the"
    " search (probe)",
    choices=("tree", "probe"), group="branch and bound (bb, bb-mip, bb-sdp)")

CERTIFICATE = Option(
    "certificate", "file", None,
    "write the proof of optimality (JSON) for s3vm check-certificate (bb-mip: each node's LP "
    "duals)",
    group="branch and bound (bb, bb-mip, bb-sdp)")

MAX_LPS = Option(
    "max_lps", "int", 50,
    "cap on the number of LPs",
    minimum=1)

TOL = Option(
    "tol", "float", 1e-09,
    "relative tolerance of the stopping condition",
    minimum=0.0, cli=False)

WARM_START = Option(
    "warm_start", "bool", True,
    "re-solve each LP from the last basis",
    cli=False)

SEARCH = Option(
    "search", "choice", "anneal",
    "switching: the starts of the label switching, kept by their J: anneal (Joachims' annealing"
    " of C* from the labeled rows' SVM, and from the labeled ratio), gradient (the labeling of "
    "∇S3VM's continuation, Chapelle and Zien 2005), or best (both)",
    choices=("anneal", "gradient", "best"))

LOSS = Option(
    "loss", "choice", "squared",
    "switching: the loss of the retrainings: squared (Problem 1's squared hinge, exact Newton) "
    "or hinge (SVMlight's TSVM, Joachims 1999: libsvm on the exact kernel matrix)",
    choices=("squared", "hinge"))

ANNEAL = Option(
    "anneal", "choice", "halving",
    "switching: the schedule of C*: halving (2^-10 C* to C*, 11 stages) or joachims "
    "(SVMlight's: 10^-5 C* up by factors of 1.5, 30 stages)",
    choices=("halving", "joachims"))

RANK = Option(
    "rank", "int", None,
    "rbf kernel: Nystroem landmarks r (switching: default the exact kernel up to 1000 points, "
    "500 beyond; sdp-lowrank: default 100; at most n)",
    minimum=1)

CLUSTERS = Option(
    "clusters", "int", 2,
    "k of k-median",
    minimum=1)

LABEL_FRACTION = Option(
    "label_fraction", "float", 0.1,
    "share of points the oracle labels",
    minimum=0.0, maximum=1.0, open_min=True)

SEED = Option(
    "seed", "int", 0,
    "seed of randomised steps (k-median restarts, Nystroem landmarks, working set)",
    minimum=0)

ROUNDING = Option(
    "rounding", "choice", "gamma",
    "labels from a column of Gamma or its dominant eigenvector",
    choices=("gamma", "eigenvector"))

SDP_FORM = Option(
    "sdp_form", "choice", "dual",
    "sdp: the CVXPY model as the low-rank dual (fast, certified bound) or as the primal of De "
    "Bie and Cristianini",
    choices=("dual", "primal"))

NODE_SELECTION_2 = Option(
    "node_selection", "choice", "best",
    "depth-first, best-first (default for bb-sdp), or best-bound with diving",
    choices=("depth", "best", "best-dive"), group="branch and bound (bb, bb-mip, bb-sdp)")

CUT_FACTOR = Option(
    "cut_factor", "float", 3.0,
    "at most this times n RLT cuts a round",
    minimum=0.0, group="bb-sdp (SDP-S3VM's node loop)")

MAX_ROUNDS = Option(
    "max_rounds", "int", 30,
    "cutting-plane rounds at a node",
    minimum=1, group="bb-sdp (SDP-S3VM's node loop)")

ROUND_TOL = Option(
    "round_tol", "float", 0.001,
    "stop a node's rounds below this relative improvement",
    minimum=0.0, group="bb-sdp (SDP-S3VM's node loop)")

BRANCHING = Option(
    "branching", "choice", "rank",
    "SDP-S3VM's ranked rule, the most fractional point, or strong branching on the cheap "
    "certificate",
    choices=("rank", "fractional", "strong"), group="bb-sdp (SDP-S3VM's node loop)")

CHILD_MAX_ROUNDS = Option(
    "child_max_rounds", "int", None,
    "cutting-plane rounds at a node other than the root (default: max_rounds)",
    minimum=1, group="bb-sdp (SDP-S3VM's node loop)")

CHEAP_BOUND = Option(
    "cheap_bound", "bool", False,
    "bound each child first by its parent's multipliers at its box (an eigenvalue, no SDP; "
    "prunes it when that suffices)",
    group="bb-sdp (SDP-S3VM's node loop)")

PROBE = Option(
    "probe", "int", 0,
    "free points probed at a node's end by the cheap certificate of its multipliers (fixes "
    "their labels; 0: none)",
    minimum=0, group="bb-sdp (SDP-S3VM's node loop)")

COUNT_BOUND = Option(
    "count_bound", "choice", "lifted",
    "with --balance count: labels lifted into the SDP, or the count left to the search",
    choices=("none", "lifted"), group="bb-sdp (SDP-S3VM's node loop)")

MEAN_PRODUCTS = Option(
    "mean_products", "bool", True,
    "with --balance mean: the balance times every output, by facial reduction "
    "(--no-mean-products: the balance's row alone)",
    group="bb-sdp (SDP-S3VM's node loop)")

SDP_TOL = Option(
    "sdp_tol", "float", 1e-05,
    "the SDP solver's accuracy away from the incumbent (1e-7 near it, finer where the "
    "certificate loses)",
    minimum=0.0, maximum=0.1, open_min=True, group="bb-sdp (SDP-S3VM's node loop)")

WORKERS = Option(
    "workers", "int", None,
    "bound the children of nodes in this many processes at once (default: all cores, fewer when"
    " memory is short; 1: one after the other)",
    minimum=1, group="bb-sdp (SDP-S3VM's node loop)")

SCHEDULER = Option(
    "scheduler", "text", None,
    "bound the nodes on a Dask cluster: the address of its dask.distributed scheduler",
    group="bb-sdp (SDP-S3VM's node loop)")

CERTIFICATE_2 = Option(
    "certificate", "file", None,
    "write the proof of optimality (JSON) for s3vm check-certificate (bounds a checker can "
    "recompute: slower)",
    group="branch and bound (bb, bb-mip, bb-sdp)")

DIM = Option(
    "dim", "int", 4,
    "columns d of the spectral subspace",
    minimum=1)

SPECTRAL_RULE = Option(
    "spectral_rule", "choice", "nips",
    "the spectral problem of V: nips (De Bie and Cristianini 2003, section 4.1: dominant "
    "eigenvectors of the normalised affinity; their USPS experiment) or book (2006, (7.6))",
    choices=("nips", "book"))

GRAPH = Option(
    "graph", "choice", "auto",
    "the spectral step's affinity: dense rbf on all pairs, a symmetric 10-nearest-neighbour rbf"
    " graph (knn), or auto (dense up to 1000 points)",
    choices=("auto", "dense", "knn"))

THRESHOLD_QUANTILE = Option(
    "threshold_quantile", "float", None,
    "clip each column of V at this quantile of its absolute values (2003, footnote 4; off by "
    "default)",
    minimum=0.0, maximum=1.0, open_min=True)

RANK_2 = Option(
    "rank", "int", None,
    "rbf kernel: Nystroem landmarks r (default 100, at most n)",
    minimum=1)

WORKING_SET = Option(
    "working_set", "int", None,
    "solve over a working set of this many points (0: all at once; default: 1000 beyond 1000 "
    "points)",
    minimum=0)

FORM = Option(
    "form", "choice", "bigm",
    "how the unlabeled losses switch with the labels (big-M rows or SOS1 complementarity)",
    choices=("bigm", "sos1"))

TSVM_SEARCH = Option(
    "tsvm_search", "choice", "switching",
    "primal-tsvm: multi-switch label switching or deterministic annealing (SVMlin)",
    choices=("switching", "annealing"))


#: registry name -> (the registry's "module:Class" of the shipped formulation, its options in the
#: order of its ``option_table()``).
SHIPPED = {
    "rlp": ("s3vm.formulations.rlp:RLP", (LP_FORM,)),
    "svm1": ("s3vm.formulations.svm1:SVM1", (LP_FORM,)),
    "bd-mip": ("s3vm.formulations.bd_mip:BennettDemirizMIP", ()),
    "bb": ("s3vm.formulations.bb:BranchAndBound",
        (HEURISTIC, NODE_SELECTION, REL_GAP, ABS_GAP, NODE_LIMIT, LOG_EVERY, TREE_FILE, K_BEST,
         LABEL_FIXING, CERTIFY)),
    "bb-mip": ("s3vm.formulations.bb_mip:BranchAndBoundMIP",
        (NODE_SELECTION, REL_GAP, ABS_GAP, NODE_LIMIT, LOG_EVERY, TREE_FILE, K_BEST, LABEL_FIXING,
         CERTIFY, CERTIFICATE)),
    "vs3vm": ("s3vm.formulations.vs3vm:VS3VM", (MAX_LPS, TOL, LP_FORM, WARM_START)),
    "switching": ("s3vm.formulations.switching:LabelSwitchingS3VM", (SEARCH, LOSS, ANNEAL, RANK)),
    "cvs3vm": ("s3vm.formulations.cvs3vm:CVS3VM",
        (CLUSTERS, LABEL_FRACTION, SEED, MAX_LPS, TOL, LP_FORM, WARM_START)),
    "sdp": ("s3vm.formulations.sdp:SDPRelaxation", (ROUNDING, SDP_FORM)),
    "bb-sdp": ("s3vm.formulations.bb_sdp:BranchAndBoundSDP",
        (NODE_SELECTION_2, REL_GAP, ABS_GAP, NODE_LIMIT, LOG_EVERY, TREE_FILE, K_BEST,
         LABEL_FIXING, CERTIFY, CUT_FACTOR, MAX_ROUNDS, ROUND_TOL, BRANCHING, CHILD_MAX_ROUNDS,
         CHEAP_BOUND, PROBE, COUNT_BOUND, MEAN_PRODUCTS, SDP_TOL, WORKERS, SCHEDULER,
         CERTIFICATE_2)),
    "sdp-subspace": ("s3vm.formulations.sdp_subspace:SubspaceSDP",
        (DIM, SPECTRAL_RULE, GRAPH, THRESHOLD_QUANTILE, ROUNDING)),
    "sdp-lowrank": ("s3vm.formulations.sdp_lowrank:LowRankSDP",
        (DIM, SPECTRAL_RULE, GRAPH, THRESHOLD_QUANTILE, RANK_2, ROUNDING, SEED, WORKING_SET)),
    "l2-miqp": ("s3vm.formulations.l2_miqp:L2MIQP", (FORM,)),
    "primal-tsvm": ("s3vm.formulations.primal_tsvm:PrimalTSVM", (TSVM_SEARCH,)),
}
