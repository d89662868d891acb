"""CPLEX through the `cplex` Python package and Pyomo's direct interface."""

from s3vm.solvers.backends.pyomo.legacy import PyomoLegacyBackend


class CplexBackend(PyomoLegacyBackend):
    name = "cplex"
    extra = "cplex"
    factory_name = "cplex_direct"
    time_limit_option = "timelimit"
    gap_option = "mip_tolerances_mipgap"
    threads_option = "threads"
