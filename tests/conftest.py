"""Marks given from outside a test file (docs/contributing.md, "Test markers")."""

import pytest


def pytest_collection_modifyitems(items):
    # TODO: estimator rewrite. tests/test_estimator*.py are being rewritten and take no edits
    # until then: their tests are marked slow here (189 of their 193 took 0.2 s or more, 189 s in
    # all, on the shared machine). Once the rewrite lands, its files carry their own marks and
    # this hook goes.
    for item in items:
        if item.path.name.startswith("test_estimator"):
            item.add_marker(pytest.mark.slow)
