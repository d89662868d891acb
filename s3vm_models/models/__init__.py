"""The mathematics, stated once: the models of Problems 1, 2 and 3 of docs/formulations.md and
the computations on them, with no solve pipeline and no formulation class.

- Problem 3 (S3VM-1, linear programs): :mod:`~s3vm.models.problem3` (the Pyomo model),
  :mod:`~s3vm.models.pyomo_tools` (large models without Python loops),
  :mod:`~s3vm.models.kmedian` (CVS3VM's clustering).
- Problem 1 (S3VM-L2, squared hinge): :mod:`~s3vm.models.l2_svm` (the exact L2 SVM),
  :mod:`~s3vm.models.label_switching`, :mod:`~s3vm.models.output_space` (the output-space form,
  balances, box, 2-opt), :mod:`~s3vm.models.shor_relaxation` (its Shor relaxation as rows),
  :mod:`~s3vm.models.l2_miqp` (the MIQP).
- Problem 2 (TSVM-H, SDP relaxations): :mod:`~s3vm.models.conic` (the built conic model and the
  SVM LMI), :mod:`~s3vm.models.svm_dual`, :mod:`~s3vm.models.lowrank_dual`,
  :mod:`~s3vm.models.kernel_factor`, :mod:`~s3vm.models.spectral`,
  :mod:`~s3vm.models.subspace`, :mod:`~s3vm.models.subspace_oracle`, and
  :mod:`~s3vm.models.fusion` (the MOSEK Fusion twins).

May import: :mod:`s3vm.core`, :mod:`s3vm.data`, :mod:`s3vm.solvers`. Never: bounds,
formulations or a face.
"""
