"""The bound providers of the branch-and-bound driver, each a
:class:`~s3vm.solvers.bnb.problem.LabelingProblem` over partial labelings: the SVM bound of
Chapelle, Sindhwani and Keerthi (:mod:`~s3vm.bounds.svm`), the LP relaxation of the
Bennett-Demiriz MIP (:mod:`~s3vm.bounds.lp_relaxation`) and the Shor node loop of Piccialli,
Schwiddessen and Sudoso (:mod:`~s3vm.bounds.shor`).

May import: :mod:`s3vm.models`, :mod:`s3vm.core`, :mod:`s3vm.data`, :mod:`s3vm.solvers`. Never:
formulations or a face.
"""
