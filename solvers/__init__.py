"""The solver layer (``s3vm.solvers``): solvers and engines behind one interface, knowing nothing
of S3VM.

It takes a model (a Pyomo model, a CVXPY problem, a standard-form conic program, a MOSEK Fusion
model, a :class:`~s3vm.solvers.bnb.problem.LabelingProblem`) and a profile, and returns a
:class:`~s3vm.solvers.results.Result`. Its layers, bottom to top (tests/test_layers.py holds
them): the vocabulary (:mod:`.vocabulary`), errors (:mod:`.errors`), the Result type
(:mod:`.results`) and lazy lookups (:mod:`.lazy`); the runtime every solve runs in
(:mod:`.runtime`: clock, supervisor, stdio, memory, files); the engines
(:mod:`.engines`); the backends (:mod:`.backends`); the branch-and-bound engine (:mod:`.bnb`);
and the face that names them all, the solver registry (:mod:`.registry`) and the solver
profiles (:mod:`.profiles`).

May import: the standard library, numpy and scipy, solver libraries. Never anything of
``s3vm`` outside ``s3vm.solvers``.
"""
