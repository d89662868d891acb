"""The solver layer's two vocabularies, each value named once with what it means.

A *problem class* says what a model is, and so which solvers may take it: the registry
(:mod:`s3vm.solvers.registry`) lists the classes each solver serves, and a formulation declares
the class of the models it hands over (``problem_class``). A *model kind* says which object a
backend takes (its ``model_kind``); a formulation builds the kind its backend takes.
"""

PROBLEM_CLASSES = {
    "lp": "a linear program, as a Pyomo model (HiGHS, CBC, GLPK, SCIP, Gurobi, CPLEX, MOSEK)",
    "mip": "a mixed-integer linear program, as a Pyomo model",
    "miqp": "a mixed-integer program with a convex quadratic objective, as a Pyomo model "
            "(SCIP, Gurobi, CPLEX)",
    "sdp": "a conic program with PSD constraints: a CVXPY problem, a MOSEK Fusion model, or a "
           "convex function of a small PSD matrix given by an oracle",
    "conic": "a standard-form conic program (SeDuMi's form) handed to SCS, Clarabel or SDPA "
             "without a modelling layer",
    "svm": "no external solver: the project's own engines",
}

MODEL_KINDS = {
    "pyomo": "a Pyomo ConcreteModel",
    "cvxpy": "a cvxpy.Problem",
    "fusion": "a MOSEK Fusion Model",
    "psd-oracle": "an oracle for a convex function of a small PSD matrix (psd-barrier)",
    "standard-conic": "a standard-form conic program: A, b, c and the cones",
    "labeling": "a labeling problem of the branch-and-bound driver",
}
