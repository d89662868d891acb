"""The documentation site builds strictly (broken links and unresolvable API references fail),
every suite file shipped with the benchmarks is a valid suite, the benchmark pages show what their
data files give (tables and plots), and the README's tables are the registry's and setup.cfg's."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from script_modules import script_module

ROOT = Path(__file__).resolve().parent.parent


def _build(config: Path, site: Path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(config), "-d", str(site)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.subprocess
@pytest.mark.slow
def test_the_site_builds_strictly_and_a_broken_link_fails_it(tmp_path):
    pytest.importorskip("mkdocs", reason="make docs installs mkdocs (extra docs)")
    pytest.importorskip("mkdocstrings", reason="make docs installs mkdocstrings (extra docs)")
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    for name in ("S3VMClassifier", "decision_function", "read_suite", "performance_profile",
                 "read_svmlight"):
        assert name in api, f"{name} missing from the API reference"
    home = (tmp_path / "site" / "index.html").read_text()
    assert "Semi-supervised support vector machines" in home  # the README is the home page
    assert 'href="user-guide/' in home  # its docs/ links point into the site
    # The same site with one broken link does not build.
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    page = docs / "bench.md"
    page.write_text(page.read_text() + "\nSee [nowhere](no-such-page.md).\n")
    config = tmp_path / "mkdocs.yml"
    text = (ROOT / "mkdocs.yml").read_text().replace("docs_dir: docs", f"docs_dir: {docs}")
    text = text.replace("  - docs/hooks/site.py", f"  - {ROOT / 'docs' / 'hooks' / 'site.py'}")
    text = text.replace("paths: [build/api-src]", f"paths: [{ROOT / 'build' / 'api-src'}]")
    config.write_text(text)
    broken = _build(config, tmp_path / "broken")
    assert broken.returncode != 0 and "no-such-page.md" in broken.stderr


@pytest.mark.parametrize("suite", sorted((ROOT / "benchmarks" / "suites").glob("*.toml")),
                         ids=lambda p: p.name)
def test_the_benchmark_suite_files_are_valid(suite):
    from s3vm.bench.spec import read_suite

    read = read_suite(str(suite))
    assert read.runs and read.name == suite.stem


@pytest.mark.solver
@pytest.mark.slow
def test_the_models_tutorial_runs_as_written():
    # docs/models.md: every ```python block, in order, in one namespace (its own asserts check
    # that the forced label holds, the solvers agree and the cuts raise the bound).
    import re

    text = (ROOT / "docs" / "models.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(ROOT / "docs" / "models.md"), "exec"), namespace)
    assert namespace["forced"].labels[0] == namespace["other"]


def test_the_models_page_documents_every_component():
    from s3vm.built import documented_components

    text = (ROOT / "docs" / "models.md").read_text()
    for name, components in documented_components().items():
        assert f"#### {name}\n" in text, name
        section = text.split(f"#### {name}\n", 1)[1].split("####", 1)[0]
        for key in components:
            assert f"`{key}`" in section, (name, key)


# -- benchmark pages: tables and plots from their data files ------------------------------------
def _pages():
    """benchmarks/pages.py, which prints the benchmark pages' tables from their data files and
    draws their plots (a script beside the benchmarks, not part of the package)."""
    return script_module("benchmark_pages", "benchmarks/pages.py")


#: The generated tables this test held before the benchmarks became pages by topic (issue 36),
#: each on the page it moved to: none may be dropped from the generator's list.
HELD_SINCE_THE_SINGLE_PAGE = {
    "ssl-book table 1": "changelog.md", "ssl-book table 2": "changelog.md",
    "ssl-book defaults": "benchmarks/practitioner.md",
    "ssl-book defaults and peers": "benchmarks/practitioner.md",
    "ssl-book settings tried": "benchmarks/practitioner.md",
    "ssl-book balance estimates": "benchmarks/practitioner.md",
    "sdp-s3vm mean": "changelog.md", "sdp-s3vm 60 s": "benchmarks/exact.md",
    "sdp-s3vm 600 s": "benchmarks/exact.md", "sdp-s3vm eleven": "changelog.md",
    "sdp-s3vm compare": "changelog.md", "sdp-s3vm eleven summary": "changelog.md",
    "cs3vm setting": "benchmarks/practitioner.md", "wide csv 20k": "benchmarks/limits.md",
    "wide csv 5k": "benchmarks/limits.md", "interrupts": "benchmarks/limits.md",
    "sparse scale": "benchmarks/scale.md",
}
TABLE_NAMES = list(_pages().TABLES)
PLOT_NAMES = list(_pages().PLOTS)


def test_every_table_held_before_is_still_generated_on_its_page():
    pages = _pages()
    for name, page in HELD_SINCE_THE_SINGLE_PAGE.items():
        assert name in pages.TABLES and pages.TABLES[name].page == page, name


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("name", TABLE_NAMES)
def test_a_benchmark_table_is_what_its_generator_prints_from_its_data(name):
    import difflib

    pages = _pages()
    spec = pages.TABLES[name]
    text = (ROOT / "docs" / spec.page).read_text()
    if pages.shows(text, name):
        return
    now = pages.render_table(name)
    held = pages.block_in(text, name) or ""
    diff = "\n".join(difflib.unified_diff(held.splitlines(), now.splitlines(), lineterm=""))
    pytest.fail(f"docs/{spec.page} does not show the table {name!r} as its data prints it now; "
                f"`.venv/bin/python benchmarks/pages.py` rewrites it:\n{diff[:3000]}")


def test_every_generated_block_of_a_page_is_a_registered_table():
    # A block between markers that no generator knows would never be checked.
    import re

    pages = _pages()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for name in re.findall(r"(?m)^<!-- table: (.+?) -->$", page.read_text()):
            assert name in pages.TABLES and not pages.TABLES[name].history, (page.name, name)
            assert (ROOT / "docs" / pages.TABLES[name].page) == page, (page.name, name)


def _changed_copy(tmp_path, data: str, field: str, change, **match) -> str:
    """A copy of a data file whose last record with ``field`` has it changed (the last: where a
    later record replaces an earlier one of the same key, the last is the one shown)."""
    import json

    lines = (ROOT / data).read_text().splitlines()
    for i, line in reversed(list(enumerate(lines))):
        record = json.loads(line)
        if field in record and all(record.get(k) == v for k, v in match.items()):
            record[field] = change(record[field])
            lines[i] = json.dumps(record)
            break
    copy = tmp_path / Path(data).name
    copy.write_text("\n".join(lines) + "\n")
    return str(copy)


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.parametrize("name, data, field, match", [
    ("ssl-book defaults", "benchmarks/ssl_book_defaults.jsonl", "error", {"method": "defaults"}),
    ("ssl-book table 1", "benchmarks/ssl_book.jsonl", "error", {}),
    ("bb scale", "benchmarks/bb_scale.jsonl", "cpu", {}),
])
def test_a_changed_data_file_changes_the_table(tmp_path, name, data, field, match):
    # The comparison can fail: one record changed in a copy of the data, and a table printed
    # from it is no longer in the page (a script's table, a history table, one of pages.py's).
    # Tables only: the line above a table names the data file, which the copy changes anyway.
    pages = _pages()
    text = (ROOT / "docs" / pages.TABLES[name].page).read_text()
    now = pages.tables_of(pages.TABLES[name].make())
    assert now and all(table in text for table in now)
    copy = _changed_copy(tmp_path, data, field, lambda v: 1.0 - v if v < 1 else v / 2, **match)
    changed = pages.tables_of(pages.TABLES[name].make(data=copy))
    assert changed and any(table not in text for table in changed)


@pytest.mark.parametrize("name", PLOT_NAMES)
def test_a_plot_records_the_digest_of_the_numbers_its_data_gives(name):
    pages = _pages()
    spec = pages.PLOTS[name]
    assert pages.recorded_digest(spec.path) == pages.plot_digest(name), (
        f"docs/img/{name}.svg does not show its data now; `.venv/bin/python benchmarks/pages.py` "
        "draws it again")
    for page in spec.pages:
        assert f"../img/{name}.svg" in (ROOT / "docs" / page).read_text(), (page, name)


def test_a_changed_data_file_changes_a_plots_digest(tmp_path):
    pages = _pages()
    copy = _changed_copy(tmp_path, "benchmarks/bb_scale.jsonl", "cpu", lambda v: v * 2)
    assert pages.plot_digest("bb-seconds-vs-u", data=copy) != pages.plot_digest("bb-seconds-vs-u")
    copy = _changed_copy(tmp_path, "benchmarks/ssl_book_defaults.jsonl", "error", lambda v: 1 - v,
                         method="defaults")
    assert (pages.plot_digest("error-vs-labeled", defaults=copy)
            != pages.plot_digest("error-vs-labeled"))


@pytest.mark.slow
def test_the_plots_are_drawn_from_their_data(tmp_path):
    # Drawing each plot anew writes an SVG that records the digest the committed one records.
    pytest.importorskip("matplotlib", reason="the plots need matplotlib (extra plot)")
    pages = _pages()
    for name, spec in pages.PLOTS.items():
        out = tmp_path / f"{name}.svg"
        digest = pages.render_plot(name, out)
        assert out.read_text().lstrip().startswith("<?xml") and "<svg" in out.read_text()
        assert pages.recorded_digest(out) == digest == pages.recorded_digest(spec.path), name


def test_the_overview_page_shows_three_plots_from_the_data():
    import re

    text = (ROOT / "docs" / "benchmarks" / "index.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\(\.\./img/([\w-]+)\.svg\)", text)
    assert len(shown) >= 3 and set(shown) <= set(PLOT_NAMES), shown


# -- the README's tables -------------------------------------------------------------------------
def _readme_table(heading: str) -> list[list[str]]:
    """The rows (cells) of the first table under ``## heading`` in the README."""
    section = (ROOT / "README.md").read_text().split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_the_readme_lists_every_formulation_and_nothing_else():
    from s3vm.core.registry import formulation_names

    listed = [row[0].strip("`") for row in _readme_table("Formulations")]
    assert sorted(listed) == sorted(formulation_names()) and len(set(listed)) == len(listed)


def test_the_readmes_dependency_table_is_setup_cfgs():
    # Every core requirement is in the table, and every package the table names is declared
    # (core or an extra).
    import configparser
    import re

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")

    def names(text):
        return {re.split(r"[<>=\[ ;]", line.strip(), maxsplit=1)[0].lower()
                for line in text.splitlines() if line.strip() and not line.strip().startswith("#")}

    core = names(config["options"]["install_requires"])
    declared = core.union(*(names(v) for v in config["options.extras_require"].values()))
    listed = {name.strip().lower()
              for row in _readme_table("Dependencies and what each is for")
              for name in re.sub(r"\(.*?\)", "", row[0]).split(",")}
    assert core <= listed, core - listed
    assert listed <= declared, listed - declared


@pytest.mark.wallclock
@pytest.mark.subprocess
@pytest.mark.slow
def test_the_sdp_cut_example_runs_in_seconds():
    # Issue 25: the cut example of docs/models.md (4 u(u - 1)/2 scalar cuts on the primal
    # form) was the slow way to state it. The section's blocks run here on their own, in a
    # process of their own, within a generous timeout (seconds on an idle machine).
    import re
    import subprocess
    import sys
    import time

    text = (ROOT / "docs" / "models.md").read_text()
    section = text.split("## A cut on the SDP", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2 and "cuts" in blocks[0]
    code = "import s3vm\nfrom s3vm.solvers.registry import installed_solvers\n" + \
        "\n".join(blocks)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert time.perf_counter() - start < 180
