"""The package's layers, read from its source: the solver layer imports nothing of the model
layer, and no two modules import each other (directly or through others), counting the imports
inside functions too.

The graph is built with ``ast`` from the folders the package is built from (setup.cfg maps
s3vm_models/ to ``s3vm``, solvers/ to ``s3vm.solvers``, instances/ to ``s3vm.instances``), so
the test reads exactly what is shipped and imports none of it.
"""

from __future__ import annotations

import ast
import os

import networkx as nx
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = {"s3vm": "s3vm_models", "s3vm.solvers": "solvers", "s3vm.instances": "instances"}


def _modules() -> dict:
    """module name -> path of every Python file of the package."""
    out = {}
    for package, folder in FOLDERS.items():
        base = os.path.join(ROOT, folder)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "__"))]
            rel = os.path.relpath(dirpath, base)
            parts = [] if rel == "." else rel.split(os.sep)
            for name in filenames:
                if not name.endswith(".py"):
                    continue
                stem = name[:-3]
                mod = ".".join([package, *parts] + ([] if stem == "__init__" else [stem]))
                out[mod] = os.path.join(dirpath, name)
    return out


MODULES = _modules()


def _resolve(module: str, path: str, node: ast.ImportFrom) -> list:
    """Absolute names a ``from ... import`` reaches (the module and, where they are modules,
    the imported names)."""
    if node.level:
        package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
        for _ in range(node.level - 1):
            package = package.rsplit(".", 1)[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    names = [base]
    for alias in node.names:
        candidate = f"{base}.{alias.name}"
        if candidate in MODULES:
            names.append(candidate)
    return names


def _imports(module: str, path: str) -> set:
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), filename=path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.update(_resolve(module, path, node))
    # Only the package's own modules; a package import counts as its __init__.
    return {name for name in found if name in MODULES and name != module}


@pytest.fixture(scope="module")
def graph():
    g = nx.DiGraph()
    for module, path in MODULES.items():
        g.add_node(module)
        for target in _imports(module, path):
            g.add_edge(module, target)
    return g


def _in_solver_layer(module: str) -> bool:
    return module == "s3vm.solvers" or module.startswith("s3vm.solvers.")


def test_the_graph_sees_the_package(graph):
    # A guard against a test that passes because it read nothing.
    assert len(MODULES) > 50
    assert graph.has_edge("s3vm.api", "s3vm.core.registry")
    assert graph.has_edge("s3vm.solvers.bnb.driver", "s3vm.solvers.bnb.problem")


def test_solver_layer_imports_nothing_of_the_model_layer(graph):
    bad = sorted((a, b) for a, b in graph.edges
                 if _in_solver_layer(a) and not _in_solver_layer(b))
    assert not bad, f"solver-layer modules import the model layer: {bad}"


def test_no_import_cycles(graph):
    # The package root only names the API lazily (a table of strings), so it is no edge.
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"
