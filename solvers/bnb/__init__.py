"""Branch and bound over partial labelings of the unlabeled points (Chapelle, Sindhwani and
Keerthi 2006, sections 3-6 and Algorithm 1, generalised; docs/formulations.md#bnb-driver).

:mod:`.problem` is the interface a bound provider implements; :mod:`.driver` is the search engine,
which knows nothing of SVMs, LPs or SDPs; :mod:`.queues` holds its open nodes in the order of a
node selection; :mod:`.pool` evaluates a step's bounds in parallel; :mod:`.tree` records the
explored tree.

May import: :mod:`s3vm.solvers.backends` (its built-in backend is one), :mod:`s3vm.solvers.runtime`,
:mod:`s3vm.solvers.engines`, :mod:`s3vm.solvers.errors`. Never the solver registry or profiles
(which name this package), nothing of S3VM.
"""

from s3vm.solvers.bnb.problem import LabelingProblem, NodeBound

__all__ = ["NodeBound", "LabelingProblem"]
