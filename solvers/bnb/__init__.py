"""Branch and bound over partial labelings of the unlabeled points (Chapelle, Sindhwani and
Keerthi 2006, sections 3-6 and Algorithm 1, generalised; docs/formulations.md#bnb-driver).

:mod:`.problem` is the interface a bound provider implements; :mod:`.driver` is the search engine,
which knows nothing of SVMs, LPs or SDPs.
"""

from s3vm.solvers.bnb.problem import LabelingProblem, NodeBound

__all__ = ["NodeBound", "LabelingProblem"]
