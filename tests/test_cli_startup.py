"""The command line's start: building its parser imports no formulation and none of their
libraries, its table of the shipped formulations' options (:mod:`s3vm.core.catalog`) agrees
with the formulation classes, and a command's time limit counts from the process's start,
importing the solver library included.

Run as a script, this file prints :mod:`s3vm.core.catalog` afresh from the classes::

    .venv/bin/python tests/test_cli_startup.py > s3vm_models/core/catalog.py
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from s3vm import api
from s3vm.core import catalog, registry
from s3vm.core.options import Option
from s3vm.solvers.runtime import clock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: What the parser must not import: the formulations and what they pull in.
HEAVY = ("pyomo", "cvxpy", "scipy.optimize", "sklearn", "mosek", "highspy", "pyscipopt",
         "matplotlib", "dask", "s3vm.formulations", "s3vm.core.formulation", "s3vm.selection")


def _heavy_after(code: str, *args: str) -> list:
    """The HEAVY modules loaded once ``code`` ran in a fresh interpreter."""
    probe = (f"import sys, json\n{code}\n"
             f"sys.stderr.write('\\nMODULES ' + json.dumps(sorted(m for m in sys.modules "
             f"if m.startswith({HEAVY!r}))) + '\\n')\n")
    env = dict(os.environ)
    env.pop("S3VM_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES ")]
    assert line, proc.stderr
    return json.loads(line[-1][len("MODULES "):])


@pytest.mark.parametrize("argv", [["--help"], ["solve", "--help"], ["compare", "--help"],
                                  ["--version"]])
def test_help_imports_no_formulation_nor_solver_library(argv):
    code = ("from s3vm.cli import main\nimport contextlib, io\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({argv!r}) == 0")
    assert _heavy_after(code) == []


def test_parsing_a_solve_imports_no_formulation():
    code = ("from s3vm.cli.parser import build_parser\n"
            "args = build_parser().parse_args(['solve', 'x.csv', '-f', 'bb-sdp', '--gap', "
            "'0.1', '--no-mean-products', '--dim', '3'])\n"
            "assert args.rel_gap == 0.1 and args.mean_products is False and args.dim == 3")
    assert _heavy_after(code) == []


def test_a_solve_imports_only_its_own_formulation():
    code = ("from s3vm.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['solve', 'blobs_small', '-f', 'rlp', '-q', '--json']) == 0")
    loaded = _heavy_after(code)
    formulations = [m for m in loaded if m.startswith("s3vm.formulations.")
                    and not m.startswith("s3vm.formulations.families")]
    assert formulations == ["s3vm.formulations.rlp"]


# -- the command's clock counts from the process's start ---------------------------------------
def test_process_start_is_before_the_package_was_imported():
    code = ("import time; time.sleep(0.5)\n"
            "from s3vm.solvers.runtime.clock import process_start\n"
            "print(time.perf_counter() - process_start())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert 0.5 <= float(proc.stdout) < 60, proc.stderr


def test_a_commands_clock_counts_from_the_process_start():
    # A process that started 100 s ago (as process_start() reads it): its 50 s limit is spent
    # before the data is read (it counted from after the parsing before).
    code = ("import sys, time\nimport s3vm.cli\nm = sys.modules['s3vm.cli.main']\n"
            "m.process_start = lambda: time.perf_counter() - 100\n"
            "sys.argv = ['s3vm', 'solve', 'blobs_small', '-f', 'rlp', '--json', '-q', "
            "'--time-limit', '50']\nm.console_main()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "time_limit", result
    assert result["message"] == "time limit reached while reading the data"
    assert result["seconds"] >= 100


def _slow_backend(monkeypatch, seconds: float):
    """Resolving rlp's backend takes ``seconds`` more, as a slow import of its library would
    (after a first solve that imported the rest)."""
    api.solve("blobs_small", "rlp")
    cls = registry.formulation_class("rlp")
    resolve = cls.backend

    def slow(self, profile):
        time.sleep(seconds)
        return resolve(self, profile)

    monkeypatch.setattr(cls, "backend", slow)


def test_a_charged_import_that_uses_the_limit_up_returns_at_once(monkeypatch):
    _slow_backend(monkeypatch, 0.6)
    monkeypatch.setattr(clock, "_charge_imports", [True])
    begun = time.perf_counter()
    result = api.solve("blobs_small", "rlp", time_limit=0.5, started=begun)
    assert result.status == "time_limit"
    assert result.message.startswith("time limit reached while importing the solver library")
    assert result.info["seconds_before_step"] >= 0.6
    assert result.labels is not None  # the supervised SVM's, as at any limit
    assert time.perf_counter() - begun < 0.6 + 1.0


def test_the_api_clock_skips_the_import_unless_charged(monkeypatch):
    _slow_backend(monkeypatch, 0.6)
    assert not clock.imports_charged()
    result = api.solve("blobs_small", "rlp", time_limit=0.5)
    assert result.status == "optimal"
    assert result.info["seconds_before_step"] < 0.5


def test_the_fallback_labels_are_ready_before_the_step(monkeypatch):
    # Computed after the grace period, they took 0.08 to 0.15 s at 20,000 columns (load 6).
    from s3vm.core import formulation

    calls = []
    scores = formulation.Formulation._supervised_scores
    supervise = formulation.supervise
    monkeypatch.setattr(formulation.Formulation, "_supervised_scores",
                        lambda self, *a: calls.append("scores") or scores(self, *a))
    monkeypatch.setattr(formulation, "supervise",
                        lambda *a, **k: calls.append("step") or supervise(*a, **k))
    api.solve("blobs_small", "bd-mip")  # its imports done: the step starts within the limit
    cls = registry.formulation_class("bd-mip")
    monkeypatch.setattr(cls, "run", lambda *args: time.sleep(2.0))  # no labeling by the limit
    calls.clear()
    result = api.solve("blobs_small", "bd-mip", time_limit=0.5)
    assert result.status == "time_limit" and result.labels is not None
    assert result.info["labels_from"] == "supervised SVM"
    assert calls == ["scores", "step"]


# -- the catalog against the classes ----------------------------------------------------------
def _drift(shipped: dict) -> list:
    """Where ``shipped`` (a catalog's SHIPPED) and the registry's classes disagree."""
    out = []
    names = [n for n, t in registry.FORMULATIONS.items()
             if isinstance(t, str) and t.startswith("s3vm.formulations.")]
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


def test_the_catalog_agrees_with_every_shipped_formulation_class():
    drift = _drift(catalog.SHIPPED)
    assert not drift, ("s3vm/core/catalog.py is out of date (" + "; ".join(drift) + "): "
                       "python tests/test_cli_startup.py > s3vm_models/core/catalog.py")


def test_drift_between_catalog_and_classes_is_caught():
    target, options = catalog.SHIPPED["vs3vm"]
    changed = dataclasses.replace(options[0], default=options[0].default + 1)
    assert _drift({**catalog.SHIPPED, "vs3vm": (target, (changed,) + options[1:])}) \
        == ["vs3vm: options differ"]
    reordered = (target, options[::-1])
    assert _drift({**catalog.SHIPPED, "vs3vm": reordered}) == ["vs3vm: options differ"]
    fewer = {k: v for k, v in catalog.SHIPPED.items() if k != "vs3vm"}
    assert len(_drift(fewer)) == 1


def test_options_come_from_the_class_once_it_is_imported(monkeypatch):
    cls = registry.formulation_class("svm1")  # imported: the class answers from now on
    extra = Option("planted", "int", 1, "a planted option")
    monkeypatch.setattr(cls, "options", cls.options + (extra,))
    assert registry.formulation_options("svm1")["planted"] is extra
    assert "planted" in registry.all_options()


# -- the renderer of s3vm/core/catalog.py ------------------------------------------------------
# The module's own docstring and imports head the text it is rendered to: written once, there.
_HEADER = ('"""' + catalog.__doc__ + '"""\n\n'
           "from __future__ import annotations\n\n"
           "from s3vm.core.options import Option\n\n")


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
    names = [n for n, t in registry.FORMULATIONS.items()
             if isinstance(t, str) and t.startswith("s3vm.formulations.")]
    tables = {name: registry.formulation_class(name).option_table() for name in names}
    consts: dict = {}
    for options in tables.values():
        for option in options.values():
            if option not in consts.values():
                const, i = option.name.upper(), 2
                while const in consts:
                    const, i = f"{option.name.upper()}_{i}", i + 1
                consts[const] = option
    out = [_HEADER]
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


if __name__ == "__main__":
    sys.stdout.write(render())
