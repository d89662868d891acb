"""Branch and bound over partial labelings of the unlabeled points (seed 000, generalised).

:mod:`.problem` is the interface a bound provider implements; :mod:`.driver` is the search engine,
which knows nothing of SVMs, LPs or SDPs.
"""

from .problem import NodeBound, LabelingProblem

__all__ = ["NodeBound", "LabelingProblem"]
