"""Gurobi through gurobipy and Pyomo's persistent interface (needs a Gurobi licence for
models beyond the size limit of the pip package's trial licence)."""

from __future__ import annotations

from s3vm.solvers.backends.pyomo.contrib import PyomoContribBackend


class GurobiBackend(PyomoContribBackend):
    name = "gurobi"
    extra = "gurobi"
    solver_class_path = "pyomo.contrib.solver.solvers.gurobi.gurobi_persistent:GurobiPersistent"

    def counts(self, results):
        info = results.extra_info
        iterations = getattr(info, "IterCount", None)
        nodes = getattr(info, "NodeCount", None)
        return (None if iterations is None else int(iterations),
                None if nodes is None else int(nodes))
