"""A Griffe extension for the API reference: Sphinx roles in the docstrings become inline code.

The docstrings are numpydoc, whose cross-references are Sphinx roles (``:meth:`Built.solve```,
``:class:`~s3vm.solvers.results.Result```). mkdocstrings renders Markdown and would show them
raw; this extension (``extensions`` in mkdocs.yml) rewrites each one, as the docstring is read,
into the inline code Sphinx itself would show: the target, or its last part after ``~``, or the
title of ``:role:`title <target>```. The source keeps its numpydoc form, which ``help()`` and
Sphinx read as they always did.
"""

from __future__ import annotations

import re

import griffe

#: ``:role:`text``` with an optional domain (``:py:meth:``); the roles of Sphinx's Python
#: domain and the general ones a docstring may hold.
ROLE = re.compile(r":(?:py:)?(?:meth|func|class|mod|attr|data|exc|obj|const|ref|term|doc)"
                  r":`(?P<body>[^`]+)`")
TITLED = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")


def as_code(body: str) -> str:
    """The inline code a role's ``body`` shows: ``~a.b.c`` as ``c``, ``title <target>`` as
    ``title``, anything else as written."""
    titled = TITLED.match(body)
    if titled:
        return f"`{titled.group('title')}`"
    if body.startswith("~"):
        return f"`{body[1:].rsplit('.', 1)[-1]}`"
    return f"`{body.lstrip('!')}`"


def without_roles(text: str) -> str:
    """``text`` with every Sphinx role replaced by inline code (see :func:`as_code`)."""
    return ROLE.sub(lambda match: as_code(match.group("body")), text)


class SphinxRolesAsCode(griffe.Extension):
    """Rewrite the roles of every docstring as it is read (modules, classes, functions,
    attributes)."""

    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = without_roles(obj.docstring.value)
