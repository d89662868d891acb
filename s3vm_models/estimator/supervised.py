"""The supervised models the estimator stands beside its S3VM.

Two kinds, for two reasons:

- :func:`family_supervised`: the formulation's own problem with no unlabeled row (Problem 3
  without unlabeled terms, the squared-hinge SVM, the SVM dual of Problem 2), which ``fit``
  solves when every row is labeled, so that the estimator is a classifier on fully labeled
  data too;
- :func:`labeled_svm`: the SVM a practitioner would train on the labeled rows instead,
  scikit-learn's ``SVC`` (libsvm) with its own default width (``gamma="scale"``, over the rows
  it is trained on), or ``LinearSVC`` (liblinear) for the linear kernel, which scales to sparse
  input. The class prior's estimate reads its outputs, the safeguard compares the S3VM against
  it, and it is the model where the safeguard sets the S3VM aside: the baseline a user would
  otherwise fit, not a variant of it.
"""

from __future__ import annotations

import numpy as np

from s3vm import api
from s3vm.core.kernels import kernel_matrix, rbf_gamma
from s3vm.data.instance import is_sparse
from s3vm.estimator.widths import scale_sigma
from s3vm.inductive import Predictor
from s3vm.models.conic import problem2_penalties
from s3vm.models.l2_svm import squared_hinge_svm
from s3vm.models.svm_dual import svm_dual_value
from s3vm.solvers.errors import InputError
from s3vm.solvers.results import Result


def labeled_svm(X, y: np.ndarray, kernel: str, C: float) -> Predictor:
    """The SVM on labeled rows ``X`` with labels ``y`` (+1/-1): ``LinearSVC(C)`` for the
    linear kernel (squared hinge, as S3VM-L2), ``SVC(C, gamma="scale")`` for rbf."""
    from sklearn.svm import SVC, LinearSVC

    if kernel == "linear":
        svm = LinearSVC(C=C, dual="auto", max_iter=10_000).fit(X, y)
        return Predictor("linear", "linear", 1.0, float(svm.intercept_[0]),
                         coef=np.asarray(svm.coef_).ravel())
    sigma = scale_sigma(X)   # scikit-learn's gamma="scale" on these rows, as a width
    svm = SVC(C=C, kernel="rbf", gamma=rbf_gamma(sigma)).fit(X, y)
    basis, dual = svm.support_vectors_, svm.dual_coef_
    if is_sparse(basis):  # libsvm on sparse input keeps both sparse
        basis, dual = basis.tocsr(), dual.toarray()
    # SVC's positive side is classes_[1], here +1.
    return Predictor("expansion", "rbf", sigma, float(svm.intercept_[0]),
                     dual_coef=np.asarray(dual).ravel(), basis=basis)


def family_supervised(clf, instance, cls, rule, base, explicit):
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


def labeled_models(X, code: np.ndarray, n_classes: int, kernel: str, C: float) -> list:
    """The labeled rows' SVMs as the estimator arranges its binary problems: one for two
    classes (``classes_[1]`` positive), one a class against the others for more (as
    ``LinearSVC``'s one-vs-rest)."""
    if n_classes == 2:
        return [labeled_svm(X, np.where(code == 1, 1, -1), kernel, C)]
    return [labeled_svm(X, np.where(code == j, 1, -1), kernel, C)
            for j in range(n_classes)]


def stacked(models: list):
    """The decisions of ``models`` side by side: a callable X -> ndarray (n, len(models))."""
    return lambda X: np.column_stack([model(X) for model in models])
