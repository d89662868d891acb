"""The API reference shows no raw Sphinx role.

The docstrings are numpydoc, whose cross-references are Sphinx roles; mkdocstrings renders
Markdown, and the reference page showed 88 of them raw (":meth:`Built.solve`"). The Griffe
extension docs/hooks/sphinx_roles.py, named in mkdocs.yml, rewrites them as inline code while
the docstrings are read: here every docstring of the package, read as mkdocs reads it, must
come out without one.
"""

from __future__ import annotations

import os
import re

import pytest
from script_modules import script_module

griffe = pytest.importorskip("griffe")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXTENSION = "docs/hooks/sphinx_roles.py:SphinxRolesAsCode"
#: Any Sphinx role, whatever its name (written apart from the extension's own pattern).
RAW_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`")


def test_roles_become_inline_code():
    roles = script_module("sphinx_roles", "docs/hooks/sphinx_roles.py")
    text = (":meth:`Built.solve` and :class:`~s3vm.solvers.results.Result`, "
            ":func:`the solver <s3vm.api.solve>`, :py:data:`s3vm.PROBLEMS` and ``literal``")
    assert roles.without_roles(text) == ("`Built.solve` and `Result`, `the solver`, "
                                         "`s3vm.PROBLEMS` and ``literal``")


def test_mkdocs_reads_the_docstrings_through_the_extension():
    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as fh:
        config = fh.read()
    assert re.search(r"^\s*extensions:\s*\n\s*-\s*" + re.escape(EXTENSION), config, re.M), \
        "mkdocs.yml no longer names the extension"


@pytest.mark.subprocess
@pytest.mark.slow
def test_no_docstring_keeps_a_raw_role_as_the_reference_reads_it():
    # the source tree as mkdocs lays it out (docs/hooks/site.py: s3vm/ as installed)
    site = script_module("site_hook", "docs/hooks/site.py")
    cwd = os.getcwd()
    os.chdir(ROOT)  # Griffe finds the extension by its path from the root, as mkdocs does
    try:
        extensions = griffe.load_extensions(EXTENSION)
    finally:
        os.chdir(cwd)
    package = griffe.load("s3vm", search_paths=[site.API_SOURCE], extensions=extensions,
                          docstring_parser="numpy", resolve_aliases=False)
    raw, seen = [], 0

    def walk(obj):
        nonlocal seen
        if obj.is_alias:
            return
        if obj.docstring is not None:
            seen += 1
            for match in RAW_ROLE.finditer(obj.docstring.value):
                raw.append(f"{obj.path}: {obj.docstring.value[match.start():match.end() + 30]}")
        for member in obj.members.values():
            walk(member)

    walk(package)
    assert seen > 500, seen  # the whole package was read
    assert raw == [], raw[:10]
