"""GLPK through Pyomo's shell interface (needs the `glpsol` executable on PATH)."""

from s3vm.solvers.backends.pyomo.legacy import PyomoLegacyBackend


class GlpkBackend(PyomoLegacyBackend):
    name = "glpk"
    factory_name = "glpk"
    time_limit_option = "tmlim"
    gap_option = "mipgap"
