"""The family bases the formulations extend, one per way of solving:
:mod:`~s3vm.formulations.families.pyomo` (a Pyomo model handed to an LP/MIP/MIQP backend),
:mod:`~s3vm.formulations.families.supervised_lp` (the supervised LPs of Problem 3),
:mod:`~s3vm.formulations.families.conic` (the SDP relaxations of Problem 2, rounded and scored),
:mod:`~s3vm.formulations.families.subspace` (the subspace SDPs) and
:mod:`~s3vm.formulations.families.branch_and_bound` (a bound provider under the driver).

May import: :mod:`s3vm.bounds`, :mod:`s3vm.models`, :mod:`s3vm.core`, :mod:`s3vm.data`,
:mod:`s3vm.solvers`. Never: a concrete formulation or a face.
"""

# Registers each problem's objective at a labeling with the pipeline (core imports no model).
from s3vm.formulations.families import labeling  # noqa: E402,F401
