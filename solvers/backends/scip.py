"""SCIP through pyscipopt and Pyomo's direct interface (LP, MIP and MIQP)."""

from __future__ import annotations

from .pyomo_contrib import PyomoContribBackend


class ScipBackend(PyomoContribBackend):
    name = "scip"
    extra = "scip"
    provides_duals = False  # Pyomo's SCIP interface does not return duals
    solver_class_path = "pyomo.contrib.solver.solvers.scip.scip_direct:ScipDirect"

    def counts(self, results):
        # extra_info is a ConfigDict: a missing entry is an "uninitialized" object, not None.
        nodes = getattr(results.extra_info, "NNodes", None)
        return None, nodes if isinstance(nodes, int) else None
