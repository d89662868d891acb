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
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from s3vm import api
from s3vm.core.kernels import kernel_matrix
from s3vm.core.problems import INDUCTIVE_RULES
from s3vm.core.registry import formulation_class
from s3vm.core.settings import Settings
from s3vm.data.instance import Instance, is_sparse
from s3vm.inductive import predictor
from s3vm.models.conic import problem2_penalties
from s3vm.models.l2_svm import squared_hinge_svm
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


def _unlabeled_mask(y: np.ndarray, marker) -> np.ndarray:
    """Rows of ``y`` equal to ``marker`` (a string array simply has no numeric marker)."""
    if y.dtype.kind in "iufb":
        if isinstance(marker, numbers.Number):
            return y == marker
        return np.zeros(y.shape, dtype=bool)
    if y.dtype.kind in "US":
        return y == marker if isinstance(marker, str) else np.zeros(y.shape, dtype=bool)
    return np.fromiter((v == marker for v in y), dtype=bool, count=y.size)


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
    """scikit-learn's ConvergenceWarning for a fit its time limit cut short: the model is the
    best labeling found by then (or the labeled rows' supervised problem), not the optimum."""
    if result.status != "time_limit":
        return
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    what = result.info.get("estimator_fallback") or (
        "the model is the best labeling found by then" + (f" ({result.message})"
                                                         if result.message else ""))
    warnings.warn(f"{result.formulation} stopped at its time limit of "
                  f"{limit} s before it finished: {what}; "
                  "raise time_limit for a better fit", ConvergenceWarning, stacklevel=3)


class S3VMClassifier(ClassifierMixin, BaseEstimator):
    """A semi-supervised SVM: fit a formulation on partially labeled rows, predict new points.

    Parameters
    ----------
    formulation : str, default "switching"
        A name of :func:`s3vm.formulation_names`: ``switching`` (Joachims' label switching, a
        local minimum of S3VM-L2, fast: 10^4 points in seconds, on a Nystroem factor of the rbf
        kernel beyond 1,000 points), ``bb`` (the same problem solved exactly), ``vs3vm``,
        ``bd-mip``, ``sdp``, ...; see docs/formulations.md.
    kernel : {"linear", "rbf"}, default "linear"
    sigma : float, default 1.0
        Width of the rbf kernel exp(-|x - z|^2 / (2 sigma^2)).
    C : float, default 1.0
        Penalty of the labeled losses (S3VM-L2 and SDP families).
    C_star : float or None, default None
        Penalty of the unlabeled losses (None: C).
    bias : bool, default True
        Whether f has an offset b (bb-sdp and the SDP family solve without one).
    hard_margin : bool, default False
        SDP family: no upper bound on the dual variables.
    balance : {"none", "count"}, default "none"
        ``count``: exactly ``positives`` unlabeled rows in the class ``classes_[1]``.
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

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels; ``classes_[1]`` is the +1 class of the formulation.
    transduction_ : ndarray of shape (n_samples,)
        The label of every training row: the given label of a labeled row, the formulation's
        label of an unlabeled one.
    ignored_params_ : tuple of str
        The parameters given a value other than their default that this formulation does not
        read (or fixes, as bb-sdp fixes ``bias=False``), and so were left out of the fit: a
        parameter set shared across formulations applies where it can (see Notes).
    result_ : s3vm.Result
        The solve: status, objective, lower bound, gap, seconds, info (instance, settings,
        options, seed, version).
    decision_rule_ : {"linear", "expansion", "dual"}
        How new points are scored (see :mod:`s3vm.estimator`).
    coef_ : ndarray of shape (n_features,)
        With the linear kernel: w of f(x) = w'x + b.
    dual_coef_ : ndarray of shape (n_samples,)
        With the rbf kernel: the coefficients c of f(x) = sum_i c_i k(x_i, x) + b over the
        training rows (``X_fit_``).
    intercept_ : float
        b.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training rows (rbf kernel only).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When X has column names (a pandas DataFrame).

    Notes
    -----
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

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> model = make_pipeline(StandardScaler(), S3VMClassifier(kernel="rbf", C=10.0))
    """

    def __init__(self, formulation="switching", *, kernel="linear", sigma=1.0, C=1.0,
                 C_star=None, bias=True, hard_margin=False, balance="none", positives=None,
                 mu=0.1, nu=1.0, seed=0, options=None, solver=None, time_limit=None,
                 unlabeled=-1):
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

    # -- scikit-learn's declarations -------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # a binary classifier (two classes)
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"binary_only": True}

    # -- fitting ---------------------------------------------------------------------------
    def _settings(self):
        """(base settings, explicit settings): parameters left at their defaults are defaults."""

        defaults = Settings()
        given = {name: getattr(self, name) for name in _SETTING_PARAMS}
        base = Settings(**given)  # validates every value, with the flags' messages
        explicit = {k: v for k, v in given.items()
                    if not (v is getattr(defaults, k) or (v is not None and
                            type(v) is type(getattr(defaults, k)) and v == getattr(defaults, k)))}
        return base, explicit

    def _applicable(self, cls, explicit: dict) -> tuple[dict, tuple]:
        """(the given settings the formulation reads, the names of those it does not).

        A parameter set is shared across formulations (a grid over ``formulation``): a
        setting, or ``seed``, that the formulation does not read, or that it fixes (bb-sdp's
        bias), is left out rather than refused.
        """
        applied = {k: v for k, v in explicit.items()
                   if k in cls.settings_used and k not in cls.settings_fixed}
        ignored = [k for k, v in explicit.items() if k not in applied and not (
            k in cls.settings_fixed and v == cls.settings_fixed[k][0])]
        if self.seed != 0 and "seed" not in cls.option_table():
            ignored.append("seed")
        return applied, tuple(name for name in _PARAM_ORDER if name in ignored)

    def _formulation_options(self, cls) -> dict:
        options = dict(self.options or {})
        if not isinstance(self.options, (dict, type(None))):
            raise InputError(f"options must be a dict of formulation options, got "
                             f"{type(self.options).__name__}")
        if "seed" in cls.option_table():
            options.setdefault("seed", self.seed)
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
            Two class labels (any values), and ``unlabeled`` (default -1) on unlabeled rows.

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
        cls = self._route(cls, X)
        rule = cls.inductive_rule()
        mask = _unlabeled_mask(y, self.unlabeled)
        labeled_targets = y[~mask]
        if labeled_targets.size == 0:
            raise ValueError("no labeled row: every target is the unlabeled marker "
                             f"{self.unlabeled!r}")
        check_classification_targets(labeled_targets)
        classes = np.unique(labeled_targets)
        if classes.size != 2:
            plural = "class" if classes.size == 1 else "classes"
            raise ValueError(f"Only binary classification is supported: the labeled rows must "
                             f"hold exactly 2 classes, got {classes.size} {plural} "
                             f"({', '.join(map(repr, classes[:5].tolist()))}; "
                             f"{self.unlabeled!r} marks an unlabeled row)")
        _check_convention(y, self.unlabeled)
        self.classes_ = classes
        label = np.zeros(y.shape[0], dtype=np.int8)
        label[~mask] = np.where(labeled_targets == classes[1], 1, -1)

        instance = Instance(X, label, name="fit")
        base, explicit = self._settings()
        explicit, self.ignored_params_ = self._applicable(cls, explicit)
        options = self._formulation_options(cls)
        if cls.name != self.formulation:
            # Routed (see _route): the options of the formulation asked for are its rbf path's.
            options = {k: v for k, v in options.items() if k in cls.option_table()}
        if instance.u == 0:
            result, rule = self._fit_supervised(instance, cls, rule, base, explicit)
        else:
            result = api.solve(instance, cls.name, base, solver=self.solver,
                               time_limit=self.time_limit, options=options, **explicit)
        transduction = label.copy()
        if _has_solution(result, rule):
            self._set_decision(instance, result, rule)
            if instance.u:
                transduction[instance.unlabeled] = result.labels
        else:
            # Cut short before any solution (a limit inside the model build or the solver's
            # first iterate): the labeled rows' supervised problem stands in, said so.
            _raise_for_failure(result)
            labeled = Instance(X[instance.labeled], label[instance.labeled], name="fit")
            fallback, rule = self._fit_supervised(labeled, cls, rule, base, explicit)
            self._set_decision(labeled, fallback, rule)
            if instance.u:
                transduction[instance.unlabeled] = np.where(
                    self.decision_function(X[instance.unlabeled]) >= 0, 1, -1)
            result.info["estimator_fallback"] = (
                "no solution at the time limit: the model is the supervised problem of the "
                "labeled rows (" + str(fallback.info.get("supervised", fallback.formulation)) +
                ")")
        self.transduction_ = np.where(transduction > 0, classes[1], classes[0])
        self.result_ = result
        _warn_if_stopped(result, self.time_limit)
        return self

    def _route(self, cls, X):
        """The formulation that fits X: ``primal-tsvm`` for ``switching`` with the linear
        kernel on sparse X (the same problem, S3VM-L2, by the same kind of local search, in
        the primal of the sparse features: SVMlin's method, which never densifies X); the
        formulation asked for otherwise (on sparse X it densifies X where that fits in
        memory, or refuses it naming the formulations that take sparse data)."""
        if is_sparse(X) and self.kernel == "linear" and cls.name == "switching":
            return formulation_class("primal-tsvm")
        return cls

    def _fit_supervised(self, instance, cls, rule, base, explicit):
        """The formulation's problem with no unlabeled row: its family's supervised SVM."""

        settings = cls.settings_for(base, explicit)  # explicit settings must still apply
        name = cls.supervised_name()
        if name is not None:
            result = api.solve(instance, name, settings, solver=self.solver,
                               time_limit=self.time_limit)
            result.info["supervised"] = (f"no unlabeled row: {cls.name} reduces to {name} "
                                         f"(Problem {cls.problem} without unlabeled terms)")
            return result, rule

        K = kernel_matrix(instance.X, None, settings.kernel, settings.sigma)
        y = instance.label.astype(float)
        result = Result(formulation=cls.name, solver="supervised", status="optimal",
                        labels=np.zeros(0, dtype=int), decision_values=np.zeros(0))
        if rule == "expansion":
            sol = squared_hinge_svm(K, y, float(settings.C), bool(settings.bias))
            result.objective = result.lower_bound = float(sol.value)
            result.primal = {"beta": sol.beta, "b": float(sol.b)}
            what = "the squared-hinge SVM (Problem 1 with no unlabeled row)"
        else:
            value, alpha = svm_dual_value(K, y, problem2_penalties(instance, settings))
            if alpha is None:
                raise InputError("the hard-margin SVM cannot separate the labeled rows: "
                                 "set hard_margin=False")
            result.objective = result.lower_bound = float(value)
            result.primal = {"alpha": alpha}
            what = "the supervised SVM dual (Problem 2 with no unlabeled row)"
        result.info.update({"supervised": f"no unlabeled row: {cls.name} reduces to {what}",
                            "settings": settings.to_dict(), "instance": instance.name})
        return result, rule

    def _set_decision(self, instance, result, rule) -> None:
        found = predictor(result, instance, rule)
        self._kernel_ = (found.kernel, found.sigma)
        self.decision_rule_ = rule
        self.intercept_ = found.intercept
        for attr in ("coef_", "dual_coef_", "X_fit_"):
            self.__dict__.pop(attr, None)
        if found.coef is not None:
            self.coef_ = found.coef
        else:
            self.dual_coef_ = found.dual_coef
            self.X_fit_ = found.basis

    # -- prediction ------------------------------------------------------------------------
    def decision_function(self, X):
        """f(x) of the fitted formulation; larger means ``classes_[1]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "decision_rule_")
        X = _validate_data(self, X, reset=False)
        kernel, sigma = self._kernel_
        if kernel == "linear":
            return X @ self.coef_ + self.intercept_

        return kernel_matrix(X, self.X_fit_, kernel, sigma) @ self.dual_coef_ + self.intercept_

    def predict(self, X):
        """``classes_[1]`` where the decision function is >= 0, else ``classes_[0]``."""
        return np.where(self.decision_function(X) >= 0, self.classes_[1], self.classes_[0])

    def score(self, X, y, sample_weight=None):
        """Accuracy of :meth:`predict` on the labeled rows of y (rows marked ``unlabeled`` are
        left out, so that a cross-validation over semi-supervised targets scores what it can).

        Raises ValueError when no row of y is labeled.
        """
        from sklearn.metrics import accuracy_score

        y = np.asarray(y)
        keep = ~_unlabeled_mask(y.ravel() if y.ndim > 1 else y, self.unlabeled)
        if not keep.any():
            raise ValueError("no labeled row to score: every target is the unlabeled marker "
                             f"{self.unlabeled!r}")
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)[keep]
        from sklearn.utils import _safe_indexing

        X = _safe_indexing(X, np.flatnonzero(keep)) if not keep.all() else X
        return float(accuracy_score(y[keep], self.predict(X), sample_weight=sample_weight))

