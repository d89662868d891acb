"""CBC through Pyomo's shell interface (needs the `cbc` executable on PATH)."""

from s3vm.solvers.backends.pyomo.legacy import PyomoLegacyBackend


class CbcBackend(PyomoLegacyBackend):
    name = "cbc"
    factory_name = "cbc"
    time_limit_option = "sec"
    gap_option = "ratioGap"
    threads_option = "threads"
