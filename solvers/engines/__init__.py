"""Numerical engines that need no modelling layer: the barrier method for a convex function of a
small PSD matrix (:mod:`~s3vm.solvers.engines.psd_barrier`), the box-constrained QP by projected
Newton (:mod:`~s3vm.solvers.engines.box_qp`) and the successive-LP driver
(:mod:`~s3vm.solvers.engines.slp`).

May import: :mod:`s3vm.solvers.runtime`, :mod:`s3vm.solvers.errors`. Nothing of S3VM.
"""
