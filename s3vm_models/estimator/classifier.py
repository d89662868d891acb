"""The estimator's class: parameters, ``fit``, and the scoring methods (see
:mod:`s3vm.estimator` for the notes)."""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if

from s3vm.core.registry import formulation_class
from s3vm.core.settings import SETTING_KEYS, Settings
from s3vm.data.instance import is_sparse
from s3vm.data.targets import unlabeled_mask
from s3vm.estimator import binary, calibration
from s3vm.estimator.decision import decide
from s3vm.estimator.inputs import check_convention, validate_data
from s3vm.estimator.one_vs_rest import fit_one_vs_rest
from s3vm.estimator.widths import resolve_kernel, resolve_sigma
from s3vm.inductive import blocked_expansion
from s3vm.solvers.errors import InputError

#: The settings the estimator takes as parameters, with the class defaults of :class:`Settings`.
SETTING_PARAMS = SETTING_KEYS
SAFEGUARDS = ("cv", None)


def _same(value, default) -> bool:
    """Whether a parameter is at its default (the same object, or an equal value of its type)."""
    return value is default or (value is not None and type(value) is type(default)
                                and value == default)


class S3VMClassifier(ClassifierMixin, BaseEstimator):
    """A semi-supervised SVM, safe by default: fit a formulation on partially labeled rows,
    keep it where held-out evidence says the unlabeled rows help, predict new points.

    Parameters
    ----------
    formulation : str, default "switching"
        A name of :func:`s3vm.formulation_names`: ``switching`` (Joachims' label switching, a
        local minimum of S3VM-L2, fast; with the linear kernel on sparse input it runs as
        ``primal-tsvm``, SVMlin's primal method), ``bb`` (the same problem solved exactly),
        ``vs3vm``, ``bd-mip``, ``sdp``, ...; see docs/formulations.md.
    kernel : {"auto", "linear", "rbf"}, default "auto"
        ``auto``: linear for sparse input or at least as many features as rows (as text
        classifiers and ``LinearSVC``), rbf otherwise. The kernel used is ``kernel_``.
    sigma : float, "median" or "scale", default "median"
        Width of the rbf kernel exp(-|x - z|^2 / (2 sigma^2)). ``"median"``: the median
        distance between rows (unlabeled rows included; over a fixed sample of 1,000 rows
        beyond that many). ``"scale"``: scikit-learn's ``gamma="scale"``. The width used is
        ``sigma_``.
    C : float, default 10.0
        Penalty of the labeled losses (S3VM-L2 and SDP families).
    C_star : float or None, default None
        Penalty of the unlabeled losses (None: C).
    bias : bool, default True
        Whether f has an offset b (bb-sdp and the SDP family solve without one).
    hard_margin : bool, default False
        SDP family: no upper bound on the dual variables.
    balance : {"none", "count", "mean"}, default "count"
        ``count``: the unlabeled rows in the class ``classes_[1]`` number ``positives``, or
        the class prior's share of them (``class_prior``).
    positives : int or None, default None
        The count of ``balance="count"`` (None: from ``class_prior``).
    class_prior : "auto", "labeled" or float, default "auto"
        The share of ``classes_[1]`` among the unlabeled rows, which the count balance fixes.
        ``auto``: estimated from the data (the median of four estimators reading the labeled
        rows' SVM and the unlabeled rows' neighbourhoods; :mod:`s3vm.estimator.prior`), so
        that labels drawn per class do not impose 1:1; the labeled ratio is used instead when
        a class has a single labeled row, and by each problem of one-vs-rest (more than two
        classes). ``labeled``: the labeled rows' ratio (Joachims
        1999; right when the labels were drawn uniformly at random and are many). A float in
        (0, 1): that share (two classes). Recorded in ``class_prior_`` and ``report_``.
    safeguard : {"cv", None}, default "cv"
        ``cv``: cross-validate on the labeled rows (at most 5 stratified folds; a fold's
        labels withheld, the whole fit run again) the S3VM against the SVM on the labeled rows
        alone, and keep the S3VM unless its held-out error, class by class weighted by the
        class prior, is strictly higher, with at least two more held-out rows wrong under the
        S3VM alone than under the SVM alone; otherwise the model is that SVM and an
        :class:`UnlabeledDataWarning` says so. Needs two labeled rows in each class (else the
        S3VM is kept, said in ``report_``). None: always the S3VM.
    supervised_C : float, default 1.0
        C of the SVM on the labeled rows: ``SVC(C=supervised_C)`` with scikit-learn's default
        width (``gamma="scale"``) for the rbf kernel, ``LinearSVC`` for the linear kernel. The
        baseline a user would fit: the class prior reads it, the safeguard compares against it
        and falls back to it.
    mu : float, default 0.1
        Weight of the 1-norm of w (LP/MIP family).
    nu : float, default 1.0
        Weight of the unlabeled losses (LP/MIP family).
    seed : int, default 0
        Seed of the randomised steps: the folds, the samples of large data, and the
        formulation's own (cvs3vm, sdp-lowrank, ...).
    options : dict or None, default None
        Other options of the formulation (``{"max_lps": 20}`` for vs3vm, ...), as in
        :func:`s3vm.solve`.
    solver : str or None, default None
        A solver name (None: the formulation's default).
    time_limit : float or None, default None
        Seconds for each solve: the fit's, and each fold's of the safeguard and calibration.
    unlabeled : int, float or str, default -1
        The target value that marks an unlabeled row (0 for s3vm's CSV convention).
    probability : bool, default False
        Calibrate :meth:`predict_proba` by Platt scaling of held-out decision values of the
        labeled rows (the safeguard's folds).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        The label of every training row: the given label of a labeled row; of an unlabeled
        row, the S3VM's label, or the labeled rows' SVM's when the safeguard chose it.
    kernel_ : str
        The kernel used (``kernel``, or resolved for ``"auto"``).
    sigma_ : float
        The rbf width used.
    class_prior_ : ndarray of shape (n_classes,)
        The share of each class among the unlabeled rows the balance used (two classes: of
        ``classes_[0]`` and ``classes_[1]``; more: each one-vs-rest problem's share of its
        class). How each was obtained is in ``report_["class_prior"]``.
    safeguard_ : {"transductive", "supervised"}
        The model kept: the S3VM's solution, or the SVM on the labeled rows alone.
    certified_labels_ : ndarray of bool, or None
        Two classes and an exact formulation (``bb``, ``bb-mip``, ``bb-sdp``): per unlabeled
        row of X (``y == unlabeled``), in X's order, whether its label in ``transduction_`` is
        proven: every labeling that gives the row the other class has an objective strictly
        above the solution's (so every labeling as good agrees); False: open. Also after a
        ``time_limit`` (the open nodes count). None otherwise: another formulation, more than
        two classes, no solution, or the safeguard kept the labeled rows' SVM
        (docs/models.md#certified-labels).
    report_ : dict
        What the unlabeled rows did: ``kernel`` (and why), ``class_prior`` (the share, its
        source, each estimate and their spread, per binary problem), ``positives`` (the counts
        used), ``objective`` (the S3VM's), ``safeguard`` (folds, the two held-out errors, the
        decision and why), ``changed`` (how many unlabeled rows the S3VM labels otherwise than
        the labeled rows' SVM).
    estimators_ : list of S3VMClassifier
        More than two classes only: the binary problem of each class against the others.
    probA_, probB_ : ndarray
        With ``probability=True``: Platt's sigmoid 1 / (1 + exp(A f + B)) per binary problem.
    probability_cv_ : int or None
        With ``probability=True``: the folds of the calibration (None: fitted on the final
        model's own decision values, a class having one labeled row).
    ignored_params_ : tuple of str
        Parameters given another value than their default that the formulation does not read.
    result_ : s3vm.Result
        Two classes: the S3VM's solve. More: in each of ``estimators_``.
    decision_rule_ : {"linear", "expansion", "dual"}
        How new points are scored (see :mod:`s3vm.inductive`).
    coef_ : ndarray
        With the linear kernel: w of f(x) = w'x + b (one row a class for more than two).
    dual_coef_ : ndarray
        With the rbf kernel: c of f(x) = sum_i c_i k(x_i, x) + b over ``X_fit_``.
    intercept_ : float, or ndarray of shape (n_classes,) for more than two
    X_fit_ : ndarray
        The rows of the kernel expansion (rbf kernel only): those with a nonzero coefficient.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When X has column names (a pandas DataFrame).

    Notes
    -----
    The notes of :mod:`s3vm.estimator` say which parameters a formulation reads, how
    :meth:`predict` on the training rows differs from ``transduction_``, why the defaults are
    what they are (with the evidence of docs/benchmarks/practitioner.md), how more than two
    classes are fitted, and how ``probability=True`` calibrates.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> model = make_pipeline(StandardScaler(), S3VMClassifier())
    """

    def __init__(self, formulation="switching", *, kernel="auto", sigma="median", C=10.0,
                 C_star=None, bias=True, hard_margin=False, balance="count", positives=None,
                 class_prior="auto", safeguard="cv", supervised_C=1.0, mu=0.1, nu=1.0, seed=0,
                 options=None, solver=None, time_limit=None, unlabeled=-1, probability=False):
        self.formulation = formulation
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.bias = bias
        self.hard_margin = hard_margin
        self.balance = balance
        self.positives = positives
        self.class_prior = class_prior
        self.safeguard = safeguard
        self.supervised_C = supervised_C
        self.mu = mu
        self.nu = nu
        self.seed = seed
        self.options = options
        self.solver = solver
        self.time_limit = time_limit
        self.unlabeled = unlabeled
        self.probability = probability

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- the parts of a fit ------------------------------------------------------------------
    def _settings(self, X):
        """(base settings, explicit settings): the kernel and width resolved on X; parameters
        at the defaults of :class:`Settings` are not explicit."""
        defaults = Settings()
        given = {name: getattr(self, name) for name in SETTING_PARAMS}
        given["kernel"] = self.kernel_
        given["sigma"] = self.sigma_
        base = Settings(**given)  # validates every value, with the flags' messages
        explicit = {k: v for k, v in given.items() if not _same(v, getattr(defaults, k))}
        return base, explicit

    def _applicable(self, cls, explicit: dict) -> tuple[dict, tuple]:
        """(the given settings the formulation reads, the names of those it does not).

        A parameter set is shared across formulations (a grid over ``formulation``): a
        setting, or ``seed``, that the formulation does not read, or that it fixes (bb-sdp's
        bias), is left out rather than refused. Only a parameter given another value than
        the estimator's default is named as ignored; ``seed`` never is (the safeguard's folds
        read it).
        """
        own = {name: param.default for name, param in
               inspect.signature(type(self).__init__).parameters.items()}
        applied = {k: v for k, v in cls.applicable(explicit).items()
                   if k not in cls.settings_fixed}
        ignored = []
        for k in SETTING_PARAMS:
            v = getattr(self, k)
            if _same(v, own.get(k)) or (cls.applicable({k: v}) and k not in cls.settings_fixed):
                continue
            if k in cls.settings_fixed and v == cls.settings_fixed[k][0]:
                continue
            ignored.append(k)
        return applied, tuple(name for name in SETTING_PARAMS if name in ignored)

    def _formulation_options(self, cls) -> dict:
        if not isinstance(self.options, (dict, type(None))):
            raise InputError(f"options must be a dict of formulation options, got "
                             f"{type(self.options).__name__}")
        options = dict(self.options or {})
        if "seed" in cls.option_table():
            options.setdefault("seed", self.seed)
        for key, value in cls.estimator_options.items():
            options.setdefault(key, value)
        return options

    def _fold_clone(self) -> "S3VMClassifier":
        """The parameters for a refit inside this fit (one-vs-rest, a fold): no safeguard or
        calibration of its own, the kernel and width already resolved."""
        from sklearn.base import clone

        return clone(self).set_params(probability=False, safeguard=None,
                                      kernel=self.kernel_, sigma=self.sigma_)

    def _fit_codes(self, X, code, classes) -> None:
        """The S3VM on validated X and class indices ``code`` (-1 unlabeled)."""
        self.classes_ = classes
        self.kernel_, self._kernel_why = resolve_kernel(self.kernel, X)
        self.sigma_ = resolve_sigma(self.sigma, self.kernel_, X, Settings().sigma)
        cls = formulation_class(self.formulation)
        if is_sparse(X) and self.kernel_ == "linear" and cls.sparse_linear:
            cls = formulation_class(cls.sparse_linear)
        rule = cls.inductive_rule()
        self.certified_labels_ = None
        if classes.size == 2:
            transduction = binary.fit_binary(self, X, np.where(code < 0, 0, 2 * code - 1),
                                             cls, rule)
            self.transduction_ = np.where(transduction > 0, classes[1], classes[0])
            share = self.prior_.share if self.prior_ is not None else np.nan
            self.class_prior_ = np.array([1.0 - share, share])
        else:
            fit_one_vs_rest(self, X, code, cls, rule)

    def fit(self, X, y):
        """Fit the S3VM on the rows of X with the targets y, and keep it where the labeled
        rows' held-out evidence says the unlabeled rows help (``safeguard``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Real and finite; a ``scipy.sparse`` matrix stays sparse (CSR).
        y : array-like of shape (n_samples,)
            Class labels (two or more, any values), and ``unlabeled`` (default -1) on
            unlabeled rows.

        Returns
        -------
        self

        Warns
        -----
        UnlabeledDataWarning
            The safeguard judged the unlabeled rows harmful: the model is the SVM on the
            labeled rows (``safeguard_ == "supervised"``).
        UserWarning
            Targets in {-1, 0, 1} with more 0 rows than -1 rows under ``unlabeled=-1``: they
            look like s3vm's own convention (0 unlabeled), which needs ``unlabeled=0``.
        sklearn.exceptions.ConvergenceWarning
            A solve was stopped by ``time_limit``.

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
        if formulation_class(self.formulation).inductive_rule() is None:
            raise InputError(f"formulation {self.formulation!r} has no inductive rule: it "
                             "labels the training rows but cannot score new points")
        if self.safeguard not in SAFEGUARDS:
            raise InputError(f"safeguard must be 'cv' or None, got {self.safeguard!r}")
        if y is None:
            raise ValueError("S3VMClassifier requires y to be passed, but the target y is None")
        X, y = validate_data(self, X, y)
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
        binary.check_class_prior(self.class_prior, classes.size)
        check_convention(y, self.unlabeled)
        code = np.full(y.shape[0], -1, dtype=np.intp)  # class index, -1 unlabeled
        code[~mask] = np.searchsorted(classes, labeled_targets)
        for attr in ("estimators_", "result_", "probA_", "probB_", "probability_cv_"):
            self.__dict__.pop(attr, None)
        self._fit_codes(X, code, classes)
        decide(self, X, code)
        return self

    # -- probabilities and prediction -------------------------------------------------------
    @available_if(lambda self: self.probability)
    def predict_proba(self, X):
        """Class probabilities by Platt scaling of the decision function (``probability=True``).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "probA_")
        return calibration.probabilities(self.decision_function(X), self.probA_, self.probB_)

    @available_if(lambda self: self.probability)
    def predict_log_proba(self, X):
        """The logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _binary_decision(self, X) -> np.ndarray:
        """f(x) of one binary problem on validated X."""
        kernel, sigma = self._kernel_
        if "coef_" in self.__dict__:
            return np.asarray(X @ self.coef_).ravel() + self.intercept_
        return blocked_expansion(X, self.X_fit_, kernel, sigma, self.dual_coef_,
                                 self.intercept_)

    def _decisions(self, X) -> np.ndarray:
        """f(x) on validated X: shape (n,) for two classes, (n, k) one-vs-rest."""
        if "estimators_" in self.__dict__:
            return np.column_stack([est._binary_decision(X) for est in self.estimators_])
        return self._binary_decision(X)

    def decision_function(self, X):
        """f(x) of the fitted model.

        Two classes: larger means ``classes_[1]``. More: one column a class (one-vs-rest);
        the largest wins.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, (n_samples, n_classes) for more
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "decision_rule_")
        X = validate_data(self, X, reset=False)
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
        from sklearn.utils import _safe_indexing

        y = np.asarray(y)
        keep = ~unlabeled_mask(y.ravel() if y.ndim > 1 else y, self.unlabeled)
        if not keep.any():
            raise ValueError("no labeled row to score: every target is the unlabeled marker "
                             f"{self.unlabeled!r}")
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)[keep]
        X = _safe_indexing(X, np.flatnonzero(keep)) if not keep.all() else X
        return float(accuracy_score(y[keep], self.predict(X), sample_weight=sample_weight))

