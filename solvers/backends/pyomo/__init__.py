"""Backends for Pyomo models (LP, MIP, MIQP), one module per solver: HiGHS through its own
persistent interface, SCIP, Gurobi and CPLEX through ``pyomo.contrib.solver``
(:mod:`~s3vm.solvers.backends.pyomo.contrib`), CBC, GLPK and MOSEK through Pyomo's legacy
interface (:mod:`~s3vm.solvers.backends.pyomo.legacy`).

May import: :mod:`s3vm.solvers.backends.base`, :mod:`s3vm.solvers.runtime`,
:mod:`s3vm.solvers.errors`.
"""
