"""Backends for CVXPY problems (SDP), one module per solver over the shared
:mod:`~s3vm.solvers.backends.cvxpy.conic`: SCS, Clarabel, CVXOPT, SDPA and MOSEK.

May import: :mod:`s3vm.solvers.backends.base`, :mod:`s3vm.solvers.runtime`,
:mod:`s3vm.solvers.errors`.
"""
