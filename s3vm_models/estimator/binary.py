"""One binary problem of the estimator: its class prior, its transductive solve, and the
decision function it leaves on the estimator (two classes, or one class of one-vs-rest)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from s3vm import api
from s3vm.core.problems import INDUCTIVE_RULES
from s3vm.data.instance import Instance
from s3vm.estimator.prior import ClassPrior, estimate_prior
from s3vm.estimator.supervised import family_supervised
from s3vm.inductive import predictor
from s3vm.solvers.errors import InputError

#: The values ``class_prior`` may name (besides a share in (0, 1)).
PRIOR_RULES = ("auto", "labeled")


def check_class_prior(value, n_classes: int) -> None:
    """Refuse a ``class_prior`` that is neither a rule nor a share in (0, 1) for two classes."""
    if isinstance(value, str):
        if value not in PRIOR_RULES:
            raise InputError(f"class_prior must be 'auto', 'labeled' or a share in (0, 1), "
                             f"got {value!r}")
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise InputError(f"class_prior must be 'auto', 'labeled' or a share in (0, 1), got "
                         f"{value!r}")
    if n_classes != 2:
        raise InputError("a class_prior share is that of classes_[1]: two classes only "
                         "(use 'auto' or 'labeled' with more)")


def class_prior(clf, X, label: np.ndarray, instance, cls, settings) -> ClassPrior:
    """The positive share of the unlabeled rows the count balance will use (see
    :mod:`s3vm.estimator.prior` and the ``class_prior`` parameter)."""
    labeled = label[instance.labeled]
    ratio = float(np.mean(labeled > 0))
    if clf.positives is not None:
        share = float(clf.positives) / instance.u if isinstance(clf.positives, int) else ratio
        return ClassPrior(share, "given", why="positives")
    if not isinstance(clf.class_prior, str):
        return ClassPrior(float(clf.class_prior), "given", why="class_prior")
    if "positives" not in cls.settings_used or settings.balance != "count":
        return ClassPrior(ratio, "labeled ratio", why=f"{cls.name} under balance="
                          f"{settings.balance!r} reads no count")
    if clf.class_prior == "labeled":
        return ClassPrior(ratio, "labeled ratio", why="class_prior='labeled'")
    if getattr(clf, "one_vs_rest_", False):
        # Measured: digits (600 rows, 5 labels a class, one-vs-rest problems of 1:9), the
        # estimate's one-vs-rest shares gave 16.9% error where the labeled ratio gave 10.5%.
        return ClassPrior(ratio, "labeled ratio", why="one-vs-rest: the estimators are for "
                          "two classes")
    return estimate_prior(X[instance.labeled], labeled, X[instance.unlabeled],
                          settings.kernel, clf.supervised_C, clf.seed)


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


def warn_if_stopped(result, limit) -> None:
    """scikit-learn's ConvergenceWarning for a fit its time limit cut short: what the model is
    (the best labeling found by then, or the labeled rows' supervised problem when the
    formulation had no solution yet), and what to change, in one sentence as scikit-learn's
    own ("... failed to converge ... Increase the number of iterations")."""
    if result.status != "time_limit":
        return
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


def adopt(clf, decision) -> None:
    """Set ``clf``'s decision function from a :class:`~s3vm.inductive.Predictor`."""
    clf._kernel_ = (decision.kernel, decision.sigma)
    clf.intercept_ = decision.intercept
    for attr in ("coef_", "dual_coef_", "X_fit_"):
        clf.__dict__.pop(attr, None)
    if decision.coef is not None:
        clf.coef_ = decision.coef
        clf.decision_rule_ = decision.rule
    else:
        clf.dual_coef_ = decision.dual_coef
        clf.X_fit_ = decision.basis
        clf.decision_rule_ = decision.rule


def fit_binary(clf, X, label: np.ndarray, cls, rule) -> np.ndarray:
    """Solve the binary problem of ``label`` (+1/-1, 0 unlabeled) on ``clf``; set its decision
    function, ``result_``, ``prior_`` and ``ignored_params_``; return the labels of every row
    (+1/-1)."""
    label = label.astype(np.int8)
    instance = Instance(X, label, name="fit")
    base, explicit = clf._settings(X)
    explicit, clf.ignored_params_ = clf._applicable(cls, explicit)
    options = clf._formulation_options(cls)
    if cls.name != clf.formulation:
        # Routed (the formulation's sparse linear path): the options asked for are its own.
        options = {k: v for k, v in options.items() if k in cls.option_table()}
    clf.prior_ = None
    if instance.u == 0:
        result, rule = family_supervised(clf, instance, cls, rule, base, explicit)
    else:
        settings = cls.settings_for(base, explicit, strict=False)
        clf.prior_ = class_prior(clf, X, label, instance, cls, settings)
        counted = clf.positives is None and "positives" in cls.settings_used \
            and settings.balance == "count"
        if counted:
            explicit["positives"] = int(round(clf.prior_.share * instance.u))
        result = api.solve(instance, cls.name, base, solver=clf.solver, effect=False,
                           time_limit=clf.time_limit, options=options, **explicit)
        if counted and clf.prior_.source == "estimated":
            result = _against_the_labeled_ratio(clf, instance, cls, base, explicit, options,
                                                result)
    transduction = label.copy()
    clf.certified_labels_ = None
    if _has_solution(result, rule):
        adopt(clf, predictor(result, instance, rule))
        clf.decision_rule_ = rule
        if instance.u:
            transduction[instance.unlabeled] = result.labels
            # the instance keeps X's rows in order: its unlabeled rows are X's, in X's order
            clf.certified_labels_ = result.certified_labels
    else:
        # Cut short before any solution (a limit inside the model build or the solver's
        # first iterate): the labeled rows' supervised problem stands in, said so.
        _raise_for_failure(result)
        labeled = Instance(X[instance.labeled], label[instance.labeled], name="fit")
        fallback, rule = family_supervised(clf, labeled, cls, rule, base, explicit)
        adopt(clf, predictor(fallback, labeled, rule))
        clf.decision_rule_ = rule
        if instance.u:
            transduction[instance.unlabeled] = np.where(
                clf._binary_decision(X[instance.unlabeled]) >= 0, 1, -1)
        result.info["estimator_fallback"] = (
            "the supervised problem of the labeled rows alone, " + str(
                fallback.info.get("supervised_problem", fallback.formulation)))
    clf.result_ = result
    warn_if_stopped(result, clf.time_limit)
    return transduction


def _against_the_labeled_ratio(clf, instance, cls, base, explicit, options, result):
    """The S3VM's own arbitration between the estimated count and the labeled ratio's: both
    are solved and the labeling of lower objective J kept (a solution at a count it was never
    asked to meet is the objective's verdict, read from no label a user lacks).

    Why: the estimators read an SVM trained on the labeled rows, and with ten of them can miss
    a balanced set by 10 points (two moons, 5 labels a moon: 0.62 for 0.5, 12.8% error where
    the labeled ratio gives 0.4%); where clusters are clear, the count that cuts through one
    costs J, and the labeled ratio wins.
    """
    ratio = float(np.mean(instance.label[instance.labeled] > 0))
    count = int(round(ratio * instance.u))
    if count == explicit["positives"]:
        return result
    other = api.solve(instance, cls.name, base, solver=clf.solver, time_limit=clf.time_limit,
                      options=options, effect=False, **dict(explicit, positives=count))
    clf.prior_.estimates["objective at the estimate"] = result.objective
    clf.prior_.estimates["objective at the labeled ratio"] = other.objective
    if other.objective is not None and (result.objective is None
                                        or other.objective < result.objective):
        clf.prior_.share, clf.prior_.source = ratio, "labeled ratio"
        clf.prior_.why = "a lower objective J at the labeled ratio's count than at the estimate's"
        return other
    clf.prior_.why += "; a lower objective J there than at the labeled ratio's count"
    return result
