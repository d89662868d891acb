"""A scikit-learn estimator over any S3VM formulation, safe by default: fit on partially
labeled data, keep the S3VM where the labeled rows' held-out evidence says the unlabeled rows
help, predict new points with the model's decision function.

    from s3vm import S3VMClassifier
    clf = S3VMClassifier()   # switching, kernel by the data's form, estimated class prior
    clf.fit(X, y)            # scikit-learn's convention: y = -1 marks an unlabeled row
    clf.transduction_        # the labels of every training row
    clf.report_              # what the unlabeled rows did
    clf.predict(X_new)

The targets follow scikit-learn's semi-supervised estimators (``SelfTrainingClassifier``,
``LabelSpreading``): any two or more class labels, and ``-1`` (the parameter ``unlabeled``) on
the rows without a label. The CSV files of s3vm keep their own convention (+1/-1, 0
unlabeled): pass ``unlabeled=0`` to fit such labels as they are.

Notes on :class:`S3VMClassifier`
--------------------------------
**What a fit does, by default.** (1) The kernel follows the data's form (``kernel="auto"``):
linear for sparse input or at least as many features as rows, rbf at the median distance
otherwise (:mod:`s3vm.estimator.widths`). (2) The share of each class among the unlabeled
rows is estimated from the data (``class_prior="auto"``, :mod:`s3vm.estimator.prior`); where
it differs from the labeled ratio by more than 0.05, the S3VM is solved at both counts and the
labeling of lower objective J kept. (3) The formulation is solved (``switching`` with
``search="best"``; ``primal-tsvm`` on sparse linear input, declared by the formulation as its
``sparse_linear`` path). (4) The safeguard (``safeguard="cv"``,
:mod:`s3vm.estimator.safeguard`) runs steps 2-3 again on up to five folds of the labeled rows,
their labels withheld, and compares the held-out error with that of the SVM on the labeled
rows alone (scikit-learn's ``SVC()``, or ``LinearSVC()`` for the linear kernel): the S3VM
is kept unless it is strictly worse, by at least two held-out rows, and otherwise the model is
that SVM and an :class:`UnlabeledDataWarning` says so. Every decision is in ``report_``. A
fit therefore costs six solves, twelve where the estimated count is arbitrated against the
labeled ratio's (a fold reads at most 5,000 unlabeled rows).

**Why the class prior is estimated.** The labeled rows' ratio (Joachims 1999, the book's
TSVM) is what a count balance classically copies; labels drawn per class carry no ratio,
and a few labels drawn at random a noisy one, which the balance imposes on every unlabeled
row. With the true count the S3VM beats the labeled rows' SVM on sets where the copied ratio
makes it lose (scikit-learn's breast cancer set, 10 labels a class: 5.6% against 8.0%, where
the labeled ratio gives 14.4%). ``class_prior="labeled"`` restores the copy.

**Why a safeguard.** The cluster assumption an S3VM rests on can fail (labels that do not
follow the clusters), and then its solution is worse than the labeled rows' SVM (Li and
Zhou 2011/2015, "S3VMs ... degenerate performance in many cases"). The decision reads the
labeled rows only, never the unlabeled rows' truth; a tie keeps the S3VM, whose gains where
the assumption holds are large and often invisible to a few held-out labels. The evidence,
and where the safe default still loses to the SVM, is in docs/benchmarks/practitioner.md.

**Parameters a formulation does not read are ignored.** The settings parameters (``kernel``
to ``nu``) and ``seed`` are shared by all formulations, so that one parameter set serves a
grid over ``formulation``. Each family reads its own: the S3VM-L2 family (switching, bb,
l2-miqp, bb-sdp) ``kernel, sigma, C, C_star, bias, balance, positives``; the SDP family
``kernel, sigma, C, C_star, hard_margin, balance, positives`` (no bias); the LP/MIP family
``kernel, sigma, mu, nu`` (and the balance where it has one). A parameter given another value
than its default that the formulation does not read is named in ``ignored_params_``; the
settings used are in ``result_.info["settings"]``. ``options`` are the formulation's own and
are not shared: an option it does not take is an error.

**predict on the training rows vs transduction_.** ``transduction_`` holds the labels the
formulation chose; :meth:`predict` scores with its inductive rule (:mod:`s3vm.inductive`):
a labeled row keeps its given label in ``transduction_`` and ``predict`` may misclassify it;
under ``balance="count"`` the count can put an unlabeled row on the other side of f = 0; the
SDP family's ``predict`` is the supervised SVM at its rounded labels, which can differ on
rows inside its margin. When the safeguard keeps the labeled rows' SVM, ``transduction_`` of
an unlabeled row is that SVM's prediction.

**The S3VM's own defaults** (rbf at the median distance, C = C* = 10, ``search="best"``)
were chosen on the SSL book's benchmark (Chapelle, Schölkopf and Zien 2006, ch. 21),
splits 0 and 1 (docs/changelog.md, "The estimator's defaults"); the safe default's evidence
(estimated prior, safeguard, kernel by form) is reported on data sets and splits disjoint from
those (docs/benchmarks/practitioner.md).

**More than two classes: one-vs-rest**, as scikit-learn's ``LinearSVC``: one binary S3VM a
class, that class against the others; each takes its class's labeled ratio as its count
(the prior's estimators are built for two classes: on scikit-learn's digits, 600 rows and 5
labels a class, their one-vs-rest shares gave 16.9% error where the labeled ratio gave 10.5%).
The safeguard compares the whole one-vs-rest model against the labeled rows' one-vs-rest SVMs.

**Probabilities.** With ``probability=True``, Platt's sigmoid of each binary problem is
fitted on the held-out decision values of the safeguard's folds (:mod:`s3vm.estimator.
calibration`), as ``SVC(probability=True)`` cross-validates; one-vs-rest probabilities are
normalized to sum to 1.

**Scoring a grid search.** :meth:`score` (accuracy) leaves the unlabeled rows of a test fold
out; a scorer named by a string (``scoring="roc_auc"``) does not, and scores NaN. Wrap it:
``GridSearchCV(..., scoring=s3vm.labeled_scorer("roc_auc"))``.
"""

from s3vm.estimator.classifier import S3VMClassifier
from s3vm.estimator.safeguard import UnlabeledDataWarning
from s3vm.estimator.widths import MEDIAN_ROWS, SIGMA_RULES, median_sigma, scale_sigma

__all__ = ["S3VMClassifier", "UnlabeledDataWarning", "median_sigma", "scale_sigma",
           "SIGMA_RULES", "MEDIAN_ROWS"]
