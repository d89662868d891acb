"""Solver backends, one module per solver behind one interface (:mod:`~s3vm.solvers.backends.base`):
Pyomo models (:mod:`~s3vm.solvers.backends.pyomo`), CVXPY problems
(:mod:`~s3vm.solvers.backends.cvxpy`), standard-form conic programs handed to SCS, Clarabel or
SDPA directly (:mod:`~s3vm.solvers.backends.conic_standard`), MOSEK Fusion models
(:mod:`~s3vm.solvers.backends.mosek_fusion`) and the PSD barrier engine
(:mod:`~s3vm.solvers.backends.psd_barrier`). :mod:`s3vm.solvers.registry` maps solver names to
them as strings, so listing solvers imports none.

May import: :mod:`s3vm.solvers.engines`, :mod:`s3vm.solvers.runtime`, :mod:`s3vm.solvers.errors`.
"""
