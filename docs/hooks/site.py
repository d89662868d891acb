"""mkdocs hook: the README is the site's home page, and links to files outside docs/ become text.

The README links to docs/ pages as ``docs/NAME.md``; on the site those are ``NAME.md``. A link to
a file that is not part of the site (``LICENSE``, ``instances/data/README.md``) is turned into
the link text followed by the file's repository path, so that ``mkdocs build --strict`` fails
only on links that are really broken.
"""

from __future__ import annotations

import os
import re


def _api_source_tree() -> str:
    """A folder holding ``s3vm/`` as the installed package lays it out (setup.cfg's package_dir
    maps s3vm to s3vm_models/, s3vm.solvers to solvers/, s3vm.instances to instances/), made of
    symbolic links, for mkdocstrings to read the sources of the whole namespace statically."""
    base = os.path.join(ROOT, "build", "api-src")
    package = os.path.join(base, "s3vm")
    os.makedirs(package, exist_ok=True)
    wanted = {name: os.path.join(ROOT, "s3vm_models", name)
              for name in os.listdir(os.path.join(ROOT, "s3vm_models"))
              if name != "__pycache__"}
    wanted.update({"solvers": os.path.join(ROOT, "solvers"),
                   "instances": os.path.join(ROOT, "instances")})
    for name in os.listdir(package):
        if name not in wanted or os.readlink(os.path.join(package, name)) != wanted[name]:
            os.unlink(os.path.join(package, name))
    for name, target in wanted.items():
        if not os.path.lexists(os.path.join(package, name)):
            os.symlink(target, os.path.join(package, name))
    return base


LINK = re.compile(r"\[([^\]]+)\]\(([^)#\s]+)(#[^)\s]*)?\)")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "index.md":
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
            markdown = fh.read()
        source_dir = ROOT
    else:
        source_dir = os.path.dirname(os.path.join(config["docs_dir"], page.file.src_uri))
    docs_dir = os.path.abspath(config["docs_dir"])
    page_dir = os.path.dirname(os.path.join(docs_dir, page.file.src_uri))

    def fix(match):
        text, target, anchor = match.group(1), match.group(2), match.group(3) or ""
        if re.match(r"^[a-z]+:", target):
            return match.group(0)
        path = os.path.normpath(os.path.join(source_dir, target))
        if path == docs_dir or path.startswith(docs_dir + os.sep):
            return f"[{text}]({os.path.relpath(path, page_dir)}{anchor})"
        return f"{text} (`{os.path.relpath(path, ROOT)}` in the repository)"

    return LINK.sub(fix, markdown)


# mkdocs imports this hook while it reads mkdocs.yml, before mkdocstrings collects anything.
API_SOURCE = _api_source_tree()
