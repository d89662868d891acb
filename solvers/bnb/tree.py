"""The explored branch-and-bound tree as a networkx DiGraph, and writing it as GraphML.

Each node of the graph is one node of the search, keyed by its creation number (the root is 0),
with an edge from parent to child. Node attributes:

``depth``
    Number of labels fixed by branching (the root has depth 0).
``index``, ``label``
    The unlabeled position fixed by the branch into this node and its label (absent at the root).
``bound``
    The node's lower bound (the objective for a leaf); absent when the node was never evaluated.
``status``
    ``branched``, ``pruned``, ``leaf``, ``infeasible`` or ``open`` (left unexplored at a limit).
``order``
    The node's place in the sequence of evaluations (1 for the root); absent when it was never
    evaluated (cut by the balance count, or pruned on its parent's bound).
``expanded``
    For a branched node, its place in the sequence of expansions (the node selection's order).

Both children of a node are created (and evaluated) together, the one with the node's first
label first, so the first child is the one with the smaller key.

networkx is imported only when the graph is made: a search without a tree must not pay for it.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from s3vm.solvers.runtime.files import atomic_output

#: Attributes only a proof keeps (arrays and the problem's data, not for a GraphML file).
PROOF_ONLY = ("partial", "proof")


class TreeRecorder:
    """Collects the nodes as the driver creates and settles them; :attr:`graph` builds the DiGraph.

    Attributes live in plain dicts during the search (a networkx update per node would double
    the driver's own cost per node); the graph is made once, at the end.
    """

    def __init__(self):
        self.attrs: list[dict] = []
        self.parents: list[Optional[int]] = []

    def add(self, node_id: int, parent: Optional[int], depth: int, index: Optional[int],
            label: Optional[int]) -> None:
        """A new node, numbered in creation order, as the child of ``parent`` (None: the root)."""
        self.attrs.append({"depth": depth, "index": index, "label": label, "status": "open"})
        self.parents.append(parent)

    def set(self, node_id: int, **attrs: Any) -> None:
        """Update the attributes of a node (its bound, status, order); a proof's own
        attributes (:data:`PROOF_ONLY`) are not the tree's."""
        for key in PROOF_ONLY:
            attrs.pop(key, None)
        self.attrs[node_id].update(attrs)

    @property
    def graph(self):
        """The tree as a networkx DiGraph, edges from parent to child."""
        import networkx as nx

        graph = nx.DiGraph()
        graph.add_nodes_from(enumerate(self.attrs))
        graph.add_edges_from((parent, child) for child, parent in enumerate(self.parents)
                             if parent is not None)
        return graph


class NoTree:
    """The recorder used when no tree is kept: every call does nothing."""

    graph = None

    def add(self, node_id, parent, depth, index, label) -> None:
        pass

    def set(self, node_id, **attrs) -> None:
        pass


class ProofRecorder:
    """Every node of a search with what proves its fate, for a certificate: its partial
    labeling (the labels it fixes, a count-forced completion included), status, bound and the
    problem's proof data (:attr:`s3vm.solvers.bnb.problem.NodeBound.proof`, or
    :meth:`~s3vm.solvers.bnb.problem.LabelingProblem.leaf_proof` of a leaf). It stands where
    the driver keeps its tree and forwards the tree's attributes to ``tree``.
    """

    def __init__(self, tree):
        self.tree = tree
        self.nodes: list[dict] = []

    @property
    def graph(self):
        return self.tree.graph

    def add(self, node_id: int, parent: Optional[int], depth: int, index: Optional[int],
            label: Optional[int]) -> None:
        self.tree.add(node_id, parent, depth, index, label)
        self.nodes.append({"id": node_id, "parent": parent, "index": index, "label": label,
                           "status": "open"})

    def set(self, node_id: int, **attrs: Any) -> None:
        self.nodes[node_id].update(attrs)
        shown = {key: value for key, value in attrs.items() if key not in PROOF_ONLY}
        if shown:
            self.tree.set(node_id, **shown)

    def record(self) -> list:
        """The nodes in creation order, JSON-ready (partial labelings as lists; a bound that
        is not finite as None with ``bound_inf`` true for +inf)."""
        out = []
        for node in self.nodes:
            entry = {key: value for key, value in node.items() if key not in ("order",
                                                                              "expanded")}
            if "partial" in entry:
                entry["partial"] = [int(v) for v in entry["partial"]]
            bound = entry.get("bound")
            if bound is not None:
                bound = float(bound)
                entry["bound"] = bound if math.isfinite(bound) else None
                if bound == math.inf:
                    entry["bound_inf"] = True
            out.append(entry)
        return out


def write_graphml(tree, path: str) -> None:
    """Write ``tree`` to ``path`` as GraphML, whole or not at all.

    GraphML has no null and no numpy types: None-valued attributes are left out and numpy
    scalars become Python numbers. Infinite bounds are kept (GraphML doubles read back as inf).

    Parameters
    ----------
    tree : networkx.DiGraph
        The tree of :attr:`s3vm.solvers.bnb.driver.SearchResult.tree`.
    path : str
        The file to write; its folder must exist (:class:`s3vm.solvers.errors.InputError`
        otherwise).
    """
    import networkx as nx

    clean = nx.DiGraph()
    clean.graph.update(_clean_attrs(tree.graph))
    clean.add_nodes_from((node, _clean_attrs(attrs)) for node, attrs in tree.nodes(data=True))
    clean.add_edges_from((a, b, _clean_attrs(attrs)) for a, b, attrs in tree.edges(data=True))
    with atomic_output(path, suffix=".graphml") as tmp:
        nx.write_graphml(clean, tmp)


def _clean_attrs(attrs: dict) -> dict:
    return {str(key): _graphml_value(value) for key, value in attrs.items()
            if value is not None and not (isinstance(value, float) and math.isnan(value))}


def _graphml_value(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str):
        return value
    return str(value)
