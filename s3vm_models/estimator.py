"""A scikit-learn estimator over any S3VM formulation: fit on partially labeled data, predict new
points with the formulation's own decision function.

    from s3vm import S3VMClassifier
    clf = S3VMClassifier(formulation="switching", kernel="rbf", sigma=0.5, C=10.0)
    clf.fit(X, y)            # scikit-learn's convention: y = -1 marks an unlabeled row
    clf.transduction_        # the labels of every training row
    clf.predict(X_new)       # the kernel expansion of the solution, on new points

The targets follow scikit-learn's semi-supervised estimators (``SelfTrainingClassifier``,
``LabelSpreading``): any two class labels, and ``-1`` (the parameter ``unlabeled``) on the rows
without a label. The CSV files of s3vm keep their own convention (+1/-1, 0 unlabeled): pass
``unlabeled=0`` to fit such labels as they are.

Every formulation has an inductive rule, derived from what it solves (:mod:`s3vm.inductive`):
the LP/MIP family's w and b, the S3VM-L2 family's kernel expansion beta and b, the SDP family's
supervised SVM at its rounded labels.

With no unlabeled row the semi-supervised problem is the supervised one of its family (Problem 3
without unlabeled terms: svm1, or rlp for rlp; the squared-hinge SVM; the SVM dual of Problem 2),
which ``fit`` then solves, so that the estimator is a classifier on fully labeled data too.

Notes on :class:`S3VMClassifier`
--------------------------------
**Parameters a formulation does not read are ignored.** The settings parameters (``kernel``
to ``nu``) and ``seed`` are shared by all formulations, so that one parameter set serves
a grid over ``formulation`` (``GridSearchCV(S3VMClassifier(C=10), {"formulation":
["switching", "vs3vm"]})``). Each family reads its own: the S3VM-L2 family (switching,
bb, l2-miqp, bb-sdp) ``kernel, sigma, C, C_star, bias, balance, positives``; the SDP
family ``kernel, sigma, C, C_star, hard_margin, balance, positives`` (no bias); the LP/MIP
family ``kernel, sigma, mu, nu`` (and the balance where it has one); ``seed`` only where
the formulation has a randomised step. A parameter given another value than its default
that the formulation does not read is left out of the fit and named in
``ignored_params_``; the settings that were used are in ``result_.info["settings"]``.
(:func:`s3vm.solve`, by contrast, refuses a keyword that does not apply.) ``options`` are
the formulation's own and are not shared: an option it does not take is an error.

**predict on the training rows vs transduction_.** ``transduction_`` holds the labels the
formulation chose; :meth:`predict` scores with its inductive rule (:mod:`s3vm.inductive`).
They may differ on training rows:

- every family: a labeled row keeps its given label in ``transduction_``; ``predict``
  may misclassify it (a training error);
- the S3VM-L2 family (``expansion``) and the LP/MIP family (``linear``): without a count,
  an unlabeled row's label is the sign of f (a label against its output would lower the
  objective), so both agree up to f = 0; under ``balance="count"`` the count can put a
  row on the other side of f = 0, and they differ there;
- the SDP family (``dual``): ``transduction_`` is the SDP's rounded labeling and
  ``predict`` the supervised SVM without bias trained at it, which can differ on rows
  inside its margin (two moons, 80 unlabeled rows: 1 to 3 rows). For the training rows
  of the SDP family, use ``transduction_``.

**The defaults** (rbf kernel at the median distance, C = C* = 10, the count balance at
the labeled ratio, ``switching`` with ``search="best"``) were chosen on the SSL book's
benchmark (Chapelle, Schölkopf and Zien 2006, ch. 21; docs/changelog.md, "The
estimator's defaults"), as a practitioner meets it: the features as given, nothing tuned
on labels one does not have. Evidence (splits 0 and 1 of the six binary sets, l = 10 and
100): scikit-learn's ``gamma="scale"`` was measured first and had a higher error than the
median distance on 10 of 12 rows (Digit1 l = 100: 9.9% against 6.0%; BCI l = 100: 39.3%
against 33.0%), so it is an option, not the default. C = 100 was worse than C = 10 on 7
of 12 rows; C = 1 was better on 6 but let the unlabeled term win elsewhere, with
near-chance labelings of lower objective (g241d l = 100: 47.7% against 17.7%), a failure a
user cannot see. The count at the labeled ratio is Joachims' (1999) and the book's TSVM's
balance: without one, the objective's lowest values put nearly every unlabeled row in
one class. ``search="best"`` starts label switching both from Joachims' annealing and
from the continuation of ∇S3VM (Chapelle and Zien 2005) and keeps the labeling of lower
objective J (never of lower error, which a user cannot see); the gradient start was kept
on half of those fits. The errors beside the book's TSVM, and the rows where they fall
short of it, are in docs/benchmarks/practitioner.md.

Tried against these defaults on the rows where they fall short of the book's TSVM, and not
taken (``benchmarks/ssl_book_variants.py``; docs/benchmarks/practitioner.md): a
narrower or wider width (0.7 and 1.4 times the median distance) and C = 100 helped one row
and hurt another; C* = 1 lowered BCI l = 100 by 1.3 points but raised Text l = 10 by 2.1,
above the book; width and C chosen by cross-validating an SVM on the labeled rows (where each
class has 5 of them) raised g241d l = 100 from 22.0% to 26.0%; a third start (SVMlight's
annealing), all three kept by their J, changed no row's mean by more than 0.1 points; the
exact kernel instead of the Nystroem factor moved the errors by under a point either way at 4
times the CPU time. For the balance, the labeled ratio was nearer the unlabeled rows' true
share than the share an SVM on the labeled rows predicts, on each of the five sets tried at
l = 10. On BCI l = 100 the gradient start's labeling has the lower J on every split and the
higher error: the objective, not the search, prefers it, so no start picked by J avoids it.

**More than two classes: one-vs-rest**, as scikit-learn's ``LinearSVC``: one binary
S3VM a class, that class against the others, on the same rows and unlabeled rows; the
count balance of each (``balance="count"`` with ``positives`` None) is its own class's
labeled ratio. :meth:`decision_function` has one column a class and :meth:`predict` takes
the largest. A given ``positives`` applies to every binary problem alike, which is rarely
what one wants: leave it None.

**Probabilities.** With ``probability=True``, ``fit`` calibrates Platt's sigmoid (Platt
2000, with the targets and the Newton method of Lin, Lin and Weng 2007, libsvm's) for each
binary problem on the labeled rows, as ``SVC(probability=True)`` does: the labeled rows
are split into ``min(5, m)`` stratified folds (m: the labeled count of the rarest class,
shuffled by ``seed``); each fold's labels are withheld, the fold fitted again with those
rows unlabeled, and its decision values of them kept; the sigmoid is fitted to these
held-out values. With m = 1 no fold can hold every class: the sigmoid is then fitted on
the final model's own values of the labeled rows (optimistic), and ``probability_cv_`` is
None. One-vs-rest probabilities are normalized to sum to 1. As for SVC, the most
probable class can differ from :meth:`predict` near the boundary.

**Scoring a grid search.** :meth:`score` (accuracy) leaves the unlabeled rows of a test
fold out; a scorer named by a string (``scoring="roc_auc"``) does not, and scores NaN.
Wrap it: ``GridSearchCV(..., scoring=s3vm.labeled_scorer("roc_auc"))``
(:func:`s3vm.scoring.labeled_scorer`).
"""

from __future__ import annotations

import numbers
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if

from s3vm import api
from s3vm.core.kernels import kernel_matrix
from s3vm.core.problems import INDUCTIVE_RULES
from s3vm.core.registry import formulation_class
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance, is_sparse
from s3vm.data.targets import unlabeled_mask
from s3vm.inductive import predictor
from s3vm.models.conic import problem2_penalties
from s3vm.models.l2_svm import squared_hinge_svm
from s3vm.models.platt import fit_sigmoid, sigmoid_probability
from s3vm.models.svm_dual import svm_dual_value
from s3vm.solvers.errors import InputError
from s3vm.solvers.results import Result

#: The settings the estimator takes as parameters, with the class defaults of :class:`Settings`.
_SETTING_PARAMS = ("kernel", "sigma", "C", "C_star", "bias", "hard_margin", "balance",
                   "positives", "mu", "nu")
_PARAM_ORDER = (*_SETTING_PARAMS, "seed")


def _validate_data(estimator, X, y=None, reset=True):
    """scikit-learn's input validation (n_features_in_, feature_names_in_), across versions."""
    # Sparse X stays sparse, as CSR (the primal solver's row slices), never densified here.
    kwargs = dict(dtype=np.float64, ensure_all_finite=True, accept_sparse="csr")
    try:
        from sklearn.utils.validation import validate_data
    except ImportError:  # scikit-learn < 1.6
        kwargs.pop("ensure_all_finite")
        kwargs["force_all_finite"] = True
        if y is None:
            return estimator._validate_data(X, reset=reset, **kwargs)
        return estimator._validate_data(X, y, reset=reset, y_numeric=False, **kwargs)
    if y is None:
        return validate_data(estimator, X, reset=reset, **kwargs)
    return validate_data(estimator, X, y, reset=reset, **kwargs)


def _check_convention(y: np.ndarray, marker) -> None:
    """Warn when numeric targets look like s3vm's file convention (+1/-1 labels, 0 unlabeled)
    read with scikit-learn's marker -1.

    Targets in {-1, 0, +1} are valid in both conventions; read with ``unlabeled=-1`` they are
    the classes 0 and 1 with the -1 rows unlabeled. Semi-supervised data has more unlabeled
    rows than rows of one class, so when the rows of 0 outnumber the rows marked -1 the targets
    are more likely s3vm's, whose -1 class would then be trained on as unlabeled.
    """
    if y.dtype.kind not in "iuf" or not isinstance(marker, numbers.Number) or marker != -1:
        return
    values, counts = np.unique(y, return_counts=True)
    if values.size != 3 or not np.array_equal(values, [-1, 0, 1]):
        return
    count = dict(zip(values.tolist(), counts.tolist()))
    if count[0] > count[-1]:
        import warnings

        warnings.warn(
            f"the targets look like s3vm's convention (+1/-1 labels, 0 unlabeled): {count[0]} "
            f"rows are 0 and {count[-1]} are -1; with unlabeled=-1 (scikit-learn's convention) "
            "the -1 rows are fitted as unlabeled and 0 is a class. Pass unlabeled=0 if 0 marks "
            "the unlabeled rows", UserWarning, stacklevel=3)


def scale_sigma(X: np.ndarray) -> float:
    """scikit-learn's ``gamma="scale"`` as a width: gamma = 1 / (p Var X), over every entry of
    X (1 when that variance is 0), and sigma = sqrt(1 / (2 gamma))."""
    if is_sparse(X):  # the variance over every entry, zeros included, without densifying
        count = X.shape[0] * X.shape[1]
        mean = float(X.sum()) / count
        var = max(float(X.multiply(X).sum()) / count - mean * mean, 0.0)
    else:
        var = float(X.var())
    gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return float(np.sqrt(0.5 / gamma))


#: Rows the median distance is taken over (a fixed sample beyond): 1,000 rows, 499,500 pairs
MEDIAN_ROWS = 1000


def median_sigma(X: np.ndarray) -> float:
    """The median distance between distinct rows (Schölkopf and Smola's heuristic; over
    :data:`MEDIAN_ROWS` rows drawn with seed 0 beyond that many); 1 when it is 0."""
    if X.shape[0] > MEDIAN_ROWS:
        X = X[np.sort(np.random.default_rng(0).choice(X.shape[0], MEDIAN_ROWS, replace=False))]
    if is_sparse(X):
        # The Gram matrix of the (at most MEDIAN_ROWS) sampled rows is small and dense; X
        # itself is never densified.
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        gram = sp.csr_array(X @ X.T).toarray()
    else:
        sq = np.einsum("ij,ij->i", X, X)
        gram = X @ X.T
    D = sq[:, None] + sq[None, :] - 2.0 * gram
    d = np.sqrt(np.maximum(D[np.triu_indices_from(D, k=1)], 0.0))
    value = float(np.median(d)) if d.size else 0.0
    return value if value > 0 else 1.0


#: The data-driven widths ``sigma`` may name.
SIGMA_RULES = {"scale": scale_sigma, "median": median_sigma}


def _same(value, default) -> bool:
    """Whether a parameter is at its default (the same object, or an equal value of its type)."""
    return value is default or (value is not None and type(value) is type(default)
                                and value == default)


def _has_solution(result, rule: str) -> bool:
    """Whether ``result`` holds the labels and the primal part the inductive rule reads."""
    key = INDUCTIVE_RULES[rule]
    return result.labels is not None and (result.primal or {}).get(key) is not None


def _raise_for_failure(result) -> None:
    """A result without a solution that no time limit explains: infeasible settings are the
    user's to change (ValueError); a solver failure is a RuntimeError."""
    why = f"status {result.status}" + (f": {result.message}" if result.message else "")
    if result.status == "infeasible":
        raise InputError(f"formulation {result.formulation!r} has no solution under these "
                         f"settings ({why})")
    if result.status != "time_limit":
        raise RuntimeError(f"formulation {result.formulation!r} returned no solution ({why})")


def _warn_if_stopped(result, limit) -> None:
    """scikit-learn's ConvergenceWarning for a fit its time limit cut short: what the model is
    (the best labeling found by then, or the labeled rows' supervised problem when the
    formulation had no solution yet), and what to change, in one sentence as scikit-learn's
    own ("... failed to converge ... Increase the number of iterations")."""
    if result.status != "time_limit":
        return
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    fallback = result.info.get("estimator_fallback")
    if fallback:
        what = f"it had no solution yet, so the model is {fallback}"
    else:
        what = "the model is the best labeling found by then" + (
            f" ({result.message})" if result.message else "")
    warnings.warn(f"{result.formulation} stopped at its time limit of {limit} s before it "
                  f"finished: {what}. Increase time_limit for a better fit.",
                  ConvergenceWarning, stacklevel=5)


@contextmanager
def _quiet_convergence():
    """Silence ConvergenceWarning inside the calibration's refits (the fit itself warned)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


class S3VMClassifier(ClassifierMixin, BaseEstimator):
    """A semi-supervised SVM: fit a formulation on partially labeled rows, predict new points.

    Parameters
    ----------
    formulation : str, default "switching"
        A name of :func:`s3vm.formulation_names`: ``switching`` (Joachims' label switching, a
        local minimum of S3VM-L2, fast: 10^4 points in seconds, on a Nystroem factor of the rbf
        kernel beyond 1,000 points; the estimator runs it with ``search="best"``, see Notes),
        ``bb`` (the same problem solved exactly), ``vs3vm``, ``bd-mip``, ``sdp``, ...; see
        docs/formulations.md.
    kernel : {"linear", "rbf"}, default "rbf"
    sigma : float, "median" or "scale", default "median"
        Width of the rbf kernel exp(-|x - z|^2 / (2 sigma^2)). ``"median"``: the median
        distance between rows (unlabeled rows included; over a fixed sample of 1,000 rows
        beyond that many). ``"scale"``: scikit-learn's ``gamma="scale"``, gamma = 1 /
        (n_features Var X) over every entry of X, so sigma = sqrt(n_features Var X / 2) (about
        half the median distance on features of equal variance). The width used is
        ``sigma_``.
    C : float, default 10.0
        Penalty of the labeled losses (S3VM-L2 and SDP families).
    C_star : float or None, default None
        Penalty of the unlabeled losses (None: C).
    bias : bool, default True
        Whether f has an offset b (bb-sdp and the SDP family solve without one).
    hard_margin : bool, default False
        SDP family: no upper bound on the dual variables.
    balance : {"none", "count"}, default "count"
        ``count``: exactly ``positives`` unlabeled rows in the class ``classes_[1]``; with
        ``positives`` None, the labeled rows' class ratio (per class, one-vs-rest).
    positives : int or None, default None
        The count of ``balance="count"`` (None: the labeled rows' share of ``classes_[1]``).
    mu : float, default 0.1
        Weight of the 1-norm of w (LP/MIP family).
    nu : float, default 1.0
        Weight of the unlabeled losses (LP/MIP family).
    seed : int, default 0
        Seed of the formulation's randomised steps, for the formulations that have one
        (cvs3vm, sdp-lowrank, ...); recorded in
        ``result_.info["options"]``; ignored by the others.
    options : dict or None, default None
        Other options of the formulation (``{"max_lps": 20}`` for vs3vm, ``{"node_limit":
        1000}`` for bb, ...), as in :func:`s3vm.solve`.
    solver : str or None, default None
        A solver name (None: the formulation's default).
    time_limit : float or None, default None
        Seconds for one fit, model building included.
    unlabeled : int, float or str, default -1
        The target value that marks an unlabeled row (0 for s3vm's CSV convention).
    probability : bool, default False
        Calibrate :meth:`predict_proba` at ``fit`` by Platt scaling on the labeled rows, with a
        cross-validation as scikit-learn's ``SVC(probability=True)`` (up to 5 more fits per
        binary problem; see Notes).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted (any labels: numbers or strings; the ``unlabeled`` marker is
        not one); with two, ``classes_[1]`` is the +1 class of the formulation.
    transduction_ : ndarray of shape (n_samples,)
        The label of every training row: the given label of a labeled row, the formulation's
        label of an unlabeled one (one-vs-rest: the class of the largest decision value).
    estimators_ : list of S3VMClassifier
        More than two classes only: the binary problem of each class against the others, in
        the order of ``classes_``; each has its own ``result_``, ``decision_rule_`` and
        decision function attributes.
    probA_, probB_ : ndarray of shape (1,) for two classes, (n_classes,) for more
        With ``probability=True``: Platt's sigmoid 1 / (1 + exp(A f + B)) of each binary
        problem's decision value f.
    probability_cv_ : int or None
        With ``probability=True``: the folds of the calibration (None: the sigmoid was fitted
        on the final model's own decision values, the rarest class having one labeled row).
    sigma_ : float
        The rbf width used (``sigma``, or resolved on X for ``"median"`` and ``"scale"``).
    ignored_params_ : tuple of str
        The parameters given a value other than their default that this formulation does not
        read (or fixes, as bb-sdp fixes ``bias=False``), and so were left out of the fit: a
        parameter set shared across formulations applies where it can (see Notes).
    result_ : s3vm.Result
        Two classes: the solve: status, objective, lower bound, gap, seconds, info (instance,
        settings, options, seed, version). More: in each of ``estimators_``.
    decision_rule_ : {"linear", "expansion", "dual"}
        How new points are scored (see :mod:`s3vm.estimator`).
    coef_ : ndarray of shape (n_features,), or (n_classes, n_features) for more than two
        With the linear kernel: w of f(x) = w'x + b.
    dual_coef_ : ndarray of shape (n_samples,)
        With the rbf kernel: the coefficients c of f(x) = sum_i c_i k(x_i, x) + b over the
        training rows (``X_fit_``).
    intercept_ : float, or ndarray of shape (n_classes,) for more than two
        b.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training rows (rbf kernel only).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When X has column names (a pandas DataFrame).

    Notes
    -----
    The notes of :mod:`s3vm.estimator` say which parameters a formulation reads (the others
    are ignored and named in ``ignored_params_``), how :meth:`predict` on the training rows
    differs from ``transduction_``, why the defaults are what they are (with the evidence of
    docs/benchmarks/practitioner.md), how more than two classes are fitted (one-vs-rest), how
    ``probability=True`` calibrates, and how to score a grid search with a string scorer
    (``s3vm.labeled_scorer``).

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> model = make_pipeline(StandardScaler(), S3VMClassifier(kernel="rbf", C=10.0))
    """

    def __init__(self, formulation="switching", *, kernel="rbf", sigma="median", C=10.0,
                 C_star=None, bias=True, hard_margin=False, balance="count", positives=None,
                 mu=0.1, nu=1.0, seed=0, options=None, solver=None, time_limit=None,
                 unlabeled=-1, probability=False):
        self.formulation = formulation
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.bias = bias
        self.hard_margin = hard_margin
        self.balance = balance
        self.positives = positives
        self.mu = mu
        self.nu = nu
        self.seed = seed
        self.options = options
        self.solver = solver
        self.time_limit = time_limit
        self.unlabeled = unlabeled
        self.probability = probability

    # -- scikit-learn's declarations -------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- fitting ---------------------------------------------------------------------------
    def _sigma(self, X) -> float:
        """The rbf width: ``sigma``, or resolved on X for ``"scale"`` and ``"median"`` (under
        the rbf kernel only: the linear kernel reads no width)."""
        if isinstance(self.sigma, str):
            if self.kernel != "rbf" and self.sigma in SIGMA_RULES:
                return Settings().sigma
            if self.sigma not in SIGMA_RULES:
                raise InputError(f"sigma must be a positive number, 'scale' or 'median', got "
                                 f"{self.sigma!r}")
            return SIGMA_RULES[self.sigma](X)
        return self.sigma

    def _settings(self, X):
        """(base settings, explicit settings): parameters left at the defaults of
        :class:`Settings` are defaults; ``sigma="scale"`` is resolved on X."""

        defaults = Settings()
        given = {name: getattr(self, name) for name in _SETTING_PARAMS}
        given["sigma"] = self.sigma_ = self._sigma(X)
        base = Settings(**given)  # validates every value, with the flags' messages
        explicit = {k: v for k, v in given.items()
                    if not (v is getattr(defaults, k) or (v is not None and
                            type(v) is type(getattr(defaults, k)) and v == getattr(defaults, k)))}
        return base, explicit

    def _formulation_options(self, cls) -> dict:
        options = dict(self.options or {})
        if not isinstance(self.options, (dict, type(None))):
            raise InputError(f"options must be a dict of formulation options, got "
                             f"{type(self.options).__name__}")
        if "seed" in cls.option_table():
            options.setdefault("seed", self.seed)
        for key, value in cls.estimator_options.items():
            options.setdefault(key, value)
        return options

    def fit(self, X, y):
        """Solve the formulation on the rows of X with the targets y.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Numpy array, pandas DataFrame, list of rows, or a ``scipy.sparse`` matrix (kept
            sparse as CSR; ``switching`` with the linear kernel then fits by ``primal-tsvm``,
            SVMlin's primal method, and with rbf through its kernel's Nystroem factor beyond
            1,000 rows); real and finite.
        y : array-like of shape (n_samples,)
            Class labels (two or more, any values), and ``unlabeled`` (default -1) on
            unlabeled rows.

        Returns
        -------
        self

        Warns
        -----
        UserWarning
            Targets in {-1, 0, 1} with more 0 rows than -1 rows under ``unlabeled=-1``: they
            look like s3vm's own convention (0 unlabeled), which needs ``unlabeled=0``.
        sklearn.exceptions.ConvergenceWarning
            The fit was stopped by ``time_limit``: the model is the best labeling found by
            then, or the labeled rows' supervised problem when the formulation had no solution
            yet (``result_.info["estimator_fallback"]``).

        Raises
        ------
        InputError
            Bad parameters or targets (a ``ValueError``), or settings under which the
            formulation has no solution (status ``infeasible``).
        RuntimeError
            The solver failed (status ``error``) without a time limit to explain it.
        """
        from sklearn.utils.multiclass import check_classification_targets

        if not isinstance(self.formulation, str):
            raise InputError(f"formulation must be a name, got {self.formulation!r}")
        cls = formulation_class(self.formulation)  # InputError for an unknown name
        rule = cls.inductive_rule()
        if rule is None:
            raise InputError(f"formulation {self.formulation!r} has no inductive rule: it "
                             "labels the training rows but cannot score new points")
        if y is None:
            raise ValueError("S3VMClassifier requires y to be passed, but the target y is None")
        X, y = _validate_data(self, X, y)
        mask = unlabeled_mask(y, self.unlabeled)
        labeled_targets = y[~mask]
        if labeled_targets.size == 0:
            raise ValueError("no labeled row: every target is the unlabeled marker "
                             f"{self.unlabeled!r}")
        check_classification_targets(labeled_targets)
        classes = np.unique(labeled_targets)
        if classes.size < 2:
            raise ValueError(f"The labeled rows must hold at least 2 classes, got 1 class "
                             f"({classes[0]!r}; {self.unlabeled!r} marks an unlabeled row)")
        _check_convention(y, self.unlabeled)
        self.classes_ = classes
        # Class index of every row, -1 on the unlabeled ones.
        code = np.full(y.shape[0], -1, dtype=np.intp)
        code[~mask] = np.searchsorted(classes, labeled_targets)
        for attr in ("estimators_", "result_", "probA_", "probB_", "probability_cv_"):
            self.__dict__.pop(attr, None)
        self._fit_codes(X, code, classes)
        if self.probability:
            _calibrate(self, X, code)
        return self

    def _fit_codes(self, X, code, classes) -> None:
        """Fit on validated X and class indices ``code`` (-1 unlabeled) into ``classes``."""
        cls = _route(self, formulation_class(self.formulation), X)
        rule = cls.inductive_rule()
        self.classes_ = classes
        if classes.size == 2:
            transduction = self._fit_binary(X, np.where(code < 0, 0, 2 * code - 1), cls, rule)
            self.transduction_ = np.where(transduction > 0, classes[1], classes[0])
        else:
            _fit_one_vs_rest(self, X, code, cls, rule)

    def _binary_clone(self) -> "S3VMClassifier":
        """A copy of the parameters for one binary problem (one-vs-rest, calibration folds)."""
        from sklearn.base import clone

        return clone(self).set_params(probability=False)

    def _fit_binary(self, X, label, cls, rule) -> np.ndarray:
        """Solve the binary problem of ``label`` (+1/-1, 0 unlabeled); set the decision
        function, ``result_`` and ``ignored_params_``; return the labels of every row (+1/-1).
        """
        label = label.astype(np.int8)
        instance = Instance(X, label, name="fit")
        base, explicit = self._settings(X)
        explicit, self.ignored_params_ = _applicable(self, cls, explicit)
        options = self._formulation_options(cls)
        if cls.name != self.formulation:
            # Routed (see _route): the options of the formulation asked for are its rbf path's.
            options = {k: v for k, v in options.items() if k in cls.option_table()}
        if instance.u == 0:
            result, rule = _fit_supervised(self, instance, cls, rule, base, explicit)
        else:
            result = api.solve(instance, cls.name, base, solver=self.solver,
                               time_limit=self.time_limit, options=options, **explicit)
        transduction = label.copy()
        if _has_solution(result, rule):
            _set_decision(self, instance, result, rule)
            if instance.u:
                transduction[instance.unlabeled] = result.labels
        else:
            # Cut short before any solution (a limit inside the model build or the solver's
            # first iterate): the labeled rows' supervised problem stands in, said so.
            _raise_for_failure(result)
            labeled = Instance(X[instance.labeled], label[instance.labeled], name="fit")
            fallback, rule = _fit_supervised(self, labeled, cls, rule, base, explicit)
            _set_decision(self, labeled, fallback, rule)
            if instance.u:
                transduction[instance.unlabeled] = np.where(
                    self._binary_decision(X[instance.unlabeled]) >= 0, 1, -1)
            result.info["estimator_fallback"] = (
                "the supervised problem of the labeled rows alone, " + str(
                    fallback.info.get("supervised_problem", fallback.formulation)))
        self.result_ = result
        _warn_if_stopped(result, self.time_limit)
        return transduction

    # -- probabilities ---------------------------------------------------------------------

    @available_if(lambda self: self.probability)
    def predict_proba(self, X):
        """Class probabilities by Platt scaling of the decision function (``probability=True``).

        Each binary problem's decision value f goes through its sigmoid 1 / (1 + exp(A f + B))
        (``probA_``, ``probB_``), fitted at ``fit`` on the labeled rows (see Notes of the
        class); with more than two classes the one-vs-rest probabilities are normalized to sum
        to 1. As with scikit-learn's SVC, the most probable class can differ from
        :meth:`predict` on points near the boundary.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "probA_")
        f = self.decision_function(X)
        if self.classes_.size == 2:
            p = sigmoid_probability(f, self.probA_[0], self.probB_[0])
            return np.column_stack([1.0 - p, p])
        P = sigmoid_probability(f, self.probA_[None, :], self.probB_[None, :])
        total = P.sum(axis=1, keepdims=True)
        # All k sigmoids at 0 (to rounding): no class is preferred.
        return np.where(total > 0, P / np.where(total > 0, total, 1.0), 1.0 / P.shape[1])

    @available_if(lambda self: self.probability)
    def predict_log_proba(self, X):
        """The logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    # -- prediction ------------------------------------------------------------------------
    def _binary_decision(self, X) -> np.ndarray:
        """f(x) of one binary problem on validated X."""
        kernel, sigma = self._kernel_
        if kernel == "linear":
            return X @ self.coef_ + self.intercept_
        return kernel_matrix(X, self.X_fit_, kernel, sigma) @ self.dual_coef_ + self.intercept_

    def _decisions(self, X) -> np.ndarray:
        """f(x) on validated X: shape (n,) for two classes, (n, k) one-vs-rest."""
        if "estimators_" in self.__dict__:
            return np.column_stack([est._binary_decision(X) for est in self.estimators_])
        return self._binary_decision(X)

    def decision_function(self, X):
        """f(x) of the fitted formulation.

        Two classes: larger means ``classes_[1]``. More: one column a class, f of the binary
        problem of that class against the others (one-vs-rest); the largest wins.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, (n_samples, n_classes) for more
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "decision_rule_")
        X = _validate_data(self, X, reset=False)
        return self._decisions(X)

    def predict(self, X):
        """Two classes: ``classes_[1]`` where the decision function is >= 0, else
        ``classes_[0]``. More: the class of the largest decision value."""
        f = self.decision_function(X)
        if f.ndim == 2:
            return self.classes_[np.argmax(f, axis=1)]
        return np.where(f >= 0, self.classes_[1], self.classes_[0])
    def score(self, X, y, sample_weight=None):
        """Accuracy of :meth:`predict` on the labeled rows of y (rows marked ``unlabeled`` are
        left out, so that a cross-validation over semi-supervised targets scores what it can).

        Raises ValueError when no row of y is labeled.
        """
        from sklearn.metrics import accuracy_score

        y = np.asarray(y)
        keep = ~unlabeled_mask(y.ravel() if y.ndim > 1 else y, self.unlabeled)
        if not keep.any():
            raise ValueError("no labeled row to score: every target is the unlabeled marker "
                             f"{self.unlabeled!r}")
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)[keep]
        from sklearn.utils import _safe_indexing

        X = _safe_indexing(X, np.flatnonzero(keep)) if not keep.all() else X
        return float(accuracy_score(y[keep], self.predict(X), sample_weight=sample_weight))


# -- the fitting steps, functions of the estimator (its class keeps its interface) -------

def _applicable(clf, cls, explicit: dict) -> tuple[dict, tuple]:
    """(the given settings the formulation reads, the names of those it does not).

    A parameter set is shared across formulations (a grid over ``formulation``): a
    setting, or ``seed``, that the formulation does not read, or that it fixes (bb-sdp's
    bias), is left out rather than refused. Only a parameter given another value than the
    estimator's default is named as ignored.
    """
    import inspect

    own = {name: param.default for name, param in
           inspect.signature(type(clf).__init__).parameters.items()}
    applied = {k: v for k, v in explicit.items()
               if k in cls.settings_used and k not in cls.settings_fixed}
    ignored = []
    for k in _SETTING_PARAMS:
        v = getattr(clf, k)
        if _same(v, own.get(k)) or (k in cls.settings_used and k not in cls.settings_fixed):
            continue
        if k in cls.settings_fixed and v == cls.settings_fixed[k][0]:
            continue
        ignored.append(k)
    if clf.seed != 0 and "seed" not in cls.option_table():
        ignored.append("seed")
    return applied, tuple(name for name in _PARAM_ORDER if name in ignored)


def _fit_one_vs_rest(clf, X, code, cls, rule) -> None:
    """One binary S3VM a class (that class +1, the others -1), as LinearSVC does; the
    balance of each is its class's own labeled ratio (``balance="count"``, ``positives``
    None). An unlabeled row takes the class of the largest decision value."""
    clf.estimators_ = []
    for k in range(clf.classes_.size):
        est = clf._binary_clone()
        est._fit_binary(X, np.where(code < 0, 0, np.where(code == k, 1, -1)), cls, rule)
        clf.estimators_.append(est)
    clf.ignored_params_ = clf.estimators_[0].ignored_params_
    clf.sigma_ = clf.estimators_[0].sigma_
    clf.decision_rule_ = clf.estimators_[0].decision_rule_
    clf.intercept_ = np.array([est.intercept_ for est in clf.estimators_])
    for attr in ("coef_", "dual_coef_", "X_fit_"):
        clf.__dict__.pop(attr, None)
    if all("coef_" in est.__dict__ for est in clf.estimators_):
        clf.coef_ = np.vstack([est.coef_ for est in clf.estimators_])
    transduction = code.copy()
    unlabeled = code < 0
    if unlabeled.any():
        transduction[unlabeled] = np.argmax(clf._decisions(X[unlabeled]), axis=1)
    clf.transduction_ = clf.classes_[transduction]


def _fit_supervised(clf, instance, cls, rule, base, explicit):
    """The formulation's problem with no unlabeled row: its family's supervised SVM.

    ``result.info["supervised_problem"]`` names that problem; ``info["supervised"]`` says
    why it was solved (a fit without unlabeled rows)."""

    settings = cls.settings_for(base, explicit)  # explicit settings must still apply
    name = cls.supervised_name()
    if name is not None:
        result = api.solve(instance, name, settings, solver=clf.solver,
                           time_limit=clf.time_limit)
        what = f"{name} (Problem {cls.problem} without unlabeled terms)"
        result.info["supervised_problem"] = what
        result.info["supervised"] = f"no unlabeled row: {cls.name} reduces to {what}"
        return result, rule

    K = kernel_matrix(instance.X, None, settings.kernel, settings.sigma)
    y = instance.label.astype(float)
    result = Result(formulation=cls.name, solver="supervised", status="optimal",
                    labels=np.zeros(0, dtype=int), decision_values=np.zeros(0))
    if rule == "expansion":
        sol = squared_hinge_svm(K, y, float(settings.C), bool(settings.bias))
        result.objective = result.lower_bound = float(sol.value)
        result.primal = {"beta": sol.beta, "b": float(sol.b)}
        what = "the squared-hinge SVM (Problem 1 without unlabeled terms)"
    else:
        value, alpha = svm_dual_value(K, y, problem2_penalties(instance, settings))
        if alpha is None:
            raise InputError("the hard-margin SVM cannot separate the labeled rows: "
                             "set hard_margin=False")
        result.objective = result.lower_bound = float(value)
        result.primal = {"alpha": alpha}
        what = "the supervised SVM dual (Problem 2 without unlabeled terms)"
    result.info.update({"supervised": f"no unlabeled row: {cls.name} reduces to {what}",
                        "supervised_problem": what,
                        "settings": settings.to_dict(), "instance": instance.name})
    return result, rule


def _set_decision(clf, instance, result, rule) -> None:
    found = predictor(result, instance, rule)
    clf._kernel_ = (found.kernel, found.sigma)
    clf.decision_rule_ = rule
    clf.intercept_ = found.intercept
    for attr in ("coef_", "dual_coef_", "X_fit_"):
        clf.__dict__.pop(attr, None)
    if found.coef is not None:
        clf.coef_ = found.coef
    else:
        clf.dual_coef_ = found.dual_coef
        clf.X_fit_ = found.basis


def _calibrate(clf, X, code) -> None:
    """Platt's sigmoid per binary problem, fitted on decision values of the labeled rows
    that the model scoring them was not trained on, where the labeled rows allow.

    As scikit-learn's ``SVC(probability=True)`` (libsvm's internal 5-fold
    cross-validation): the labeled rows are split into ``min(5, m)`` stratified folds, m
    the labeled count of the rarest class; a fold's rows are fitted again as unlabeled
    rows (they stay in the transductive problem, their labels withheld) and scored by
    that fit. With m < 2 no fold holds every class, and the sigmoid is fitted on the final
    model's own decision values of the labeled rows (optimistic: they were trained on).
    """
    from sklearn.model_selection import StratifiedKFold

    labeled = np.flatnonzero(code >= 0)
    k = clf.classes_.size
    binary = k == 2
    scores = np.empty((labeled.size, 1 if binary else k))
    smallest = int(np.bincount(code[labeled], minlength=k).min())
    folds = min(5, smallest)
    if folds >= 2:
        split = StratifiedKFold(folds, shuffle=True, random_state=clf.seed)
        for train, test in split.split(labeled, code[labeled]):
            held = code.copy()
            held[labeled[test]] = -1  # withheld: an unlabeled row of this fit
            fold = clf._binary_clone()
            with _quiet_convergence():
                fold._fit_codes(X, held, clf.classes_)
            scores[test] = fold._decisions(X[labeled[test]]).reshape(test.size, -1)
        clf.probability_cv_ = folds
    else:
        scores[:] = clf._decisions(X[labeled]).reshape(labeled.size, -1)
        clf.probability_cv_ = None
    pairs = [fit_sigmoid(scores[:, j], code[labeled] == (1 if binary else j))
             for j in range(scores.shape[1])]
    clf.probA_ = np.array([a for a, _ in pairs])
    clf.probB_ = np.array([b for _, b in pairs])


def _route(clf, cls, X):
    """The formulation that fits X: ``primal-tsvm`` for ``switching`` with the linear
    kernel on sparse X (the same problem, S3VM-L2, by the same kind of local search, in
    the primal of the sparse features: SVMlin's method, which never densifies X); the
    formulation asked for otherwise (on sparse X it densifies X where that fits in
    memory, or refuses it naming the formulations that take sparse data)."""
    if is_sparse(X) and clf.kernel == "linear" and cls.name == "switching":
        return formulation_class("primal-tsvm")
    return cls
