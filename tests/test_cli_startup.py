"""The command line's start: building its parser imports no formulation and none of their
libraries, its table of the shipped formulations' options (:mod:`s3vm.core.catalog`) agrees
with the formulation classes, and a command's time limit counts from the process's start,
importing the solver library included.

:mod:`s3vm.core.catalog` is written by ``make catalog`` (:mod:`s3vm.core.catalog_writer`); this
file only compares it with the classes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time

import pytest

from s3vm import api
from s3vm.core import catalog, catalog_writer, registry
from s3vm.core.catalog_writer import drift as _drift
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


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("argv", [["--help"], ["solve", "--help"], ["compare", "--help"],
                                  ["--version"]])
def test_help_imports_no_formulation_nor_solver_library(argv):
    code = ("from s3vm.cli import main\nimport contextlib, io\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({argv!r}) == 0")
    assert _heavy_after(code) == []


@pytest.mark.subprocess
@pytest.mark.slow
def test_parsing_a_solve_imports_no_formulation():
    code = ("from s3vm.cli.parser import build_parser\n"
            "args = build_parser().parse_args(['solve', 'x.csv', '-f', 'bb-sdp', '--gap', "
            "'0.1', '--no-mean-products', '--dim', '3'])\n"
            "assert args.rel_gap == 0.1 and args.mean_products is False and args.dim == 3")
    assert _heavy_after(code) == []


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_solve_imports_only_its_own_formulation():
    code = ("from s3vm.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['solve', 'blobs_small', '-f', 'rlp', '-q', '--json']) == 0")
    loaded = _heavy_after(code)
    formulations = [m for m in loaded if m.startswith("s3vm.formulations.")
                    and not m.startswith("s3vm.formulations.families")]
    assert formulations == ["s3vm.formulations.rlp"]


# -- the command's clock counts from the process's start ---------------------------------------
@pytest.mark.subprocess
@pytest.mark.slow
def test_process_start_is_before_the_package_was_imported():
    code = ("import time; time.sleep(0.5)\n"
            "from s3vm.solvers.runtime.clock import process_start\n"
            "print(time.perf_counter() - process_start())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert 0.5 <= float(proc.stdout) < 60, proc.stderr


@pytest.mark.subprocess
@pytest.mark.slow
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
    assert result["message"].split(";")[0] == "time limit reached while reading the data"
    # labels at every limit (issue 38): the supervised SVM's, though the limit was spent
    assert result["labels"] is not None and result["info"]["labels_from"] == "supervised SVM"
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


@pytest.mark.wallclock
@pytest.mark.solver
@pytest.mark.slow
def test_a_charged_import_that_uses_the_limit_up_returns_at_once(monkeypatch):
    _slow_backend(monkeypatch, 0.6)
    monkeypatch.setattr(clock, "_charge_imports", [True])
    begun = time.perf_counter()
    result = api.solve("blobs_small", "rlp", time_limit=0.5, started=begun)
    assert result.status == "time_limit"
    assert result.message.startswith("time limit reached while importing the solver library")
    assert result.info["seconds_before_step"] >= 0.6
    assert result.labels is not None  # the supervised SVM's, as at any limit
    # Wall clock: the slow import plus 1 s of tolerance for a loaded machine (no retry).
    assert time.perf_counter() - begun < 0.6 + 1.0


@pytest.mark.wallclock
@pytest.mark.solver
@pytest.mark.slow
def test_the_api_clock_skips_the_import_unless_charged(monkeypatch):
    _slow_backend(monkeypatch, 0.6)
    assert not clock.imports_charged()
    result = api.solve("blobs_small", "rlp", time_limit=0.5)
    assert result.status == "optimal"
    # Wall clock: checking the input before the step, well under the limit on a loaded
    # machine (the 0.6 s import is not on the clock); no retry.
    assert result.info["seconds_before_step"] < 0.5


@pytest.mark.solver
@pytest.mark.slow
def test_the_fallback_labels_are_ready_before_the_step(monkeypatch):
    # Computed after the grace period, they took 0.08 to 0.15 s at 20,000 columns (load 6).
    from s3vm.core import pipeline

    calls = []
    scores = pipeline.supervised_scores
    supervise = pipeline.supervise
    monkeypatch.setattr(pipeline, "supervised_scores",
                        lambda *a: calls.append("scores") or scores(*a))
    monkeypatch.setattr(pipeline, "supervise",
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
def test_the_catalog_agrees_with_every_shipped_formulation_class():
    drift = _drift(catalog.SHIPPED)
    assert not drift, ("s3vm/core/catalog.py is out of date (" + "; ".join(drift) + "): "
                       "make catalog")


def test_the_catalog_file_is_what_its_writer_renders():
    # The drift test compares values; this one the text, so that `make catalog` on a clean
    # tree changes nothing.
    with open(catalog_writer.CATALOG_PATH, encoding="utf-8") as fh:
        assert fh.read() == catalog_writer.render(), "s3vm/core/catalog.py: run make catalog"



def test_the_writer_replaces_the_file_only_with_a_checked_catalog(tmp_path, monkeypatch):
    target = tmp_path / "catalog.py"
    target.write_text("old", encoding="utf-8")
    assert catalog_writer.write(str(target)) is True
    assert target.read_text(encoding="utf-8") == catalog_writer.render()
    assert catalog_writer.write(str(target)) is False  # agrees already: nothing written
    # A rendering that drifts from the classes, or is no Python: the old file stays.
    for broken, error in ((catalog_writer.HEADER + "SHIPPED = {}\n", RuntimeError),
                          ("SHIPPED = (\n", SyntaxError)):
        target.write_text("old", encoding="utf-8")
        monkeypatch.setattr(catalog_writer, "render", lambda text=broken: text)
        with pytest.raises(error):
            catalog_writer.write(str(target))
        assert target.read_text(encoding="utf-8") == "old"
    assert sorted(os.listdir(tmp_path)) == ["catalog.py"]  # no temporary file left


@pytest.mark.subprocess
@pytest.mark.slow
def test_the_writer_checks_the_shipped_catalog_from_the_command_line():
    proc = subprocess.run([sys.executable, "-m", "s3vm.core.catalog_writer", "--check"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0 and "up to date" in proc.stderr, proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("stale", [False, True])
def test_check_says_out_of_date_for_a_stale_catalog_and_writes_nothing(tmp_path, monkeypatch,
                                                                        capsys, stale):
    # A --check that always said "up to date" passed every test: plant a stale file (the
    # default of one option changed, as an edit of its class would leave the catalog), and a
    # fresh one, in place of the catalog it reads.
    text = catalog_writer.render()
    if stale:
        fresh = '"heuristic", "choice", "switching",'
        assert text.count(fresh) == 1
        text = text.replace(fresh, '"heuristic", "choice", "none",')
    target = tmp_path / "catalog.py"
    target.write_text(text, encoding="utf-8")
    monkeypatch.setattr(catalog_writer, "CATALOG_PATH", str(target))
    assert catalog_writer.main(["--check"]) == int(stale)
    err = capsys.readouterr().err
    assert ("out of date" in err) == stale and ("up to date" in err) != stale
    assert target.read_text(encoding="utf-8") == text  # --check wrote nothing


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
