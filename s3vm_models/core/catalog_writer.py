"""Write :mod:`s3vm.core.catalog` from the shipped formulation classes: ``make catalog``, or ::

    .venv/bin/python -m s3vm.core.catalog_writer [--check]

The catalog repeats each shipped formulation's options so that the command line builds its
parser without importing a formulation. This tool renders it from the classes' ``option_table()``
and replaces the file only when the text changed, through a temporary file in the same folder
that is first compiled and executed, its ``SHIPPED`` held equal to the classes (:func:`drift`):
a failure anywhere leaves the old file, and so the package, as it was. Run on a file that agrees
with the classes it changes nothing. ``--check`` writes nothing and exits 1 when the file is out
of date. tests/test_cli_startup.py compares the file with :func:`render` and the classes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import textwrap

from s3vm.core import registry
from s3vm.core.options import Option

#: The file this tool writes (in the source tree under an editable install).
CATALOG_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalog.py")

#: The generated module's docstring and imports: written here once, so that rendering never
#: reads the file it replaces.
HEADER = '''"""The options of the shipped formulations, declared here as well as on their classes,
so that the command line builds its parser without importing a formulation (each imports its
family, and with it scipy.optimize and the kernels: half a second of the command's start on a
loaded machine). A solve imports its own formulation only.

:func:`s3vm.core.registry.formulation_options` reads :data:`SHIPPED` while the registry still
names the shipped class and its module is not imported yet; otherwise it asks the class.

Generated from the classes by :mod:`s3vm.core.catalog_writer` (``make catalog``); do not edit
by hand. tests/test_cli_startup.py fails when the two drift apart.
"""

from __future__ import annotations

from s3vm.core.options import Option
'''


def shipped_names() -> list:
    """The registry names of the formulations shipped in :mod:`s3vm.formulations`."""
    return [n for n, t in registry.FORMULATIONS.items()
            if isinstance(t, str) and t.startswith("s3vm.formulations.")]


def drift(shipped: dict) -> list:
    """Where ``shipped`` (a catalog's SHIPPED) and the registry's classes disagree."""
    out = []
    names = shipped_names()
    if sorted(names) != sorted(shipped):
        out.append(f"names: registry {sorted(names)}, catalog {sorted(shipped)}")
    for name in names:
        if name not in shipped:
            continue
        target, options = shipped[name]
        if target != registry.FORMULATIONS[name]:
            out.append(f"{name}: catalog {target}, registry {registry.FORMULATIONS[name]}")
        declared = list(registry.formulation_class(name).option_table().items())
        if [(o.name, o) for o in options] != declared:
            out.append(f"{name}: options differ")
    return out


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _literal(value) -> str:
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_literal, value)) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def _render_option(const: str, option: Option) -> str:
    defaults = {f.name: f.default for f in dataclasses.fields(Option)}
    keywords = [f"{f.name}={_literal(getattr(option, f.name))}"
                for f in dataclasses.fields(Option)
                if f.name not in ("name", "kind", "default", "help")
                and getattr(option, f.name) != defaults[f.name]]
    lines = [f"{const} = Option(",
             f"    {_quoted(option.name)}, {_quoted(option.kind)}, {_literal(option.default)},"]
    lines += ["    " + _quoted(part) for part in
              textwrap.wrap(option.help, 90, drop_whitespace=False, break_on_hyphens=False)]
    lines[-1] += "," if keywords else ")"
    if keywords:
        lines += _packed(keywords, "    ", ")")
    return "\n".join(lines)


def _packed(items: list, indent: str, end: str) -> list:
    """``items`` joined by commas into lines of at most 99 characters, none split."""
    lines, line = [], indent
    for i, item in enumerate(items):
        piece = item + (end if i == len(items) - 1 else ",")
        if line.strip() and len(line) + len(piece) > 99:
            lines.append(line.rstrip())
            line = indent
        line += piece + " "
    return lines + [line.rstrip()]


def render() -> str:
    """The text of s3vm/core/catalog.py from the registry's shipped formulation classes."""
    names = shipped_names()
    tables = {name: registry.formulation_class(name).option_table() for name in names}
    consts: dict = {}
    for options in tables.values():
        for option in options.values():
            if option not in consts.values():
                const, i = option.name.upper(), 2
                while const in consts:
                    const, i = f"{option.name.upper()}_{i}", i + 1
                consts[const] = option
    out = [HEADER]
    out += [_render_option(c, o) + "\n" for c, o in consts.items()]
    out.append('\n#: registry name -> (the registry\'s "module:Class" of the shipped formulation, '
               'its options in the\n#: order of its ``option_table()``).\nSHIPPED = {')
    for name, options in tables.items():
        refs = [next(c for c, o in consts.items() if o == option) for option in options.values()]
        head = f"    {_quoted(name)}: ({_quoted(registry.FORMULATIONS[name])},"
        body = "(" + ", ".join(refs) + ("," if len(refs) == 1 else "") + ")),"
        if len(head) + 1 + len(body) <= 99:
            out.append(f"{head} {body}")
        else:
            out.append(head)
            lines = _packed(refs, "         ", ")),")
            out += ["        (" + lines[0].lstrip()] + lines[1:]
    out.append("}\n")
    return "\n".join(out)


def _checked(text: str, path: str) -> None:
    """Compile and run ``text`` as the catalog module; raise when its SHIPPED drifts."""
    namespace: dict = {"__name__": "s3vm.core.catalog"}
    exec(compile(text, path, "exec"), namespace)
    wrong = drift(namespace["SHIPPED"])
    if wrong:
        raise RuntimeError("the rendered catalog disagrees with the classes: " + "; ".join(wrong))


def write(path: str = CATALOG_PATH) -> bool:
    """Render the catalog and replace ``path`` with it when its text differs; True when it was
    replaced. The new text is checked (:func:`_checked`) and written to a temporary file in
    the same folder, then moved over ``path`` in one step (:func:`os.replace`)."""
    text = render()
    _checked(text, path)
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return False
    except FileNotFoundError:
        pass
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=".catalog-", suffix=".py.tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m s3vm.core.catalog_writer",
                                     description="write s3vm/core/catalog.py from the classes")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the file is out of date")
    args = parser.parse_args(argv)
    where = os.path.relpath(CATALOG_PATH)
    if args.check:
        with open(CATALOG_PATH, encoding="utf-8") as fh:
            stale = fh.read() != render()
        print(f"{where}: {'out of date (make catalog)' if stale else 'up to date'}",
              file=sys.stderr)
        return int(stale)
    print(f"{where}: {'written' if write() else 'unchanged'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
