"""The documentation site builds strictly (broken links and unresolvable API references fail),
and every suite file shipped with the benchmarks is a valid suite."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _build(config: Path, site: Path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(config), "-d", str(site)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


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


# -- benchmark tables and their generators ------------------------------------------------------
#: The benchmark tables a script prints from its data file, each command as the page states it
#: (docs/benchmarks.md): every table it prints must stand in the page as printed.
GENERATED_TABLES = {
    "ssl-book table 1": ["benchmarks/ssl_book.py", "--summary", "benchmarks/ssl_book.jsonl"],
    "ssl-book table 2": ["benchmarks/ssl_book.py", "--summary", "benchmarks/ssl_book.jsonl",
                         "--common"],
    "ssl-book defaults": ["benchmarks/ssl_book.py", "--versus-book", "defaults", "--summary",
                          "benchmarks/ssl_book_defaults.jsonl"],
    "ssl-book defaults and peers": [
        "benchmarks/ssl_book.py", "--summary", "benchmarks/ssl_book.jsonl",
        "benchmarks/ssl_book_defaults.jsonl", "--sets", "g241c", "g241d", "digit1", "usps-ssl",
        "bci", "text", "--methods", "defaults", "qn-s3vm", "label-spreading", "self-training",
        "svmlight-tsvm"],
    "ssl-book settings tried": ["benchmarks/ssl_book_variants.py", "--summary",
                                "benchmarks/ssl_book_variants.jsonl"],
    "ssl-book balance estimates": ["benchmarks/ssl_book_variants.py", "--balance"],
    "sdp-s3vm mean": ["benchmarks/sdp_s3vm.py", "table", "--out",
                      "benchmarks/sdp_s3vm-mean.jsonl"],
    "sdp-s3vm 60 s": ["benchmarks/sdp_s3vm.py", "table", "--out",
                      "benchmarks/sdp_s3vm-60.jsonl"],
    "sdp-s3vm 600 s": ["benchmarks/sdp_s3vm.py", "table", "--out",
                       "benchmarks/sdp_s3vm-600.jsonl"],
    "sdp-s3vm eleven": ["benchmarks/sdp_s3vm.py", "compare-table", "--out",
                        "benchmarks/sdp_s3vm-eleven.jsonl"],
    "sdp-s3vm compare": ["benchmarks/sdp_s3vm.py", "compare-table", "--out",
                         "benchmarks/sdp_s3vm-compare.jsonl"],
    "sdp-s3vm eleven summary": ["benchmarks/sdp_s3vm.py", "compare-summary", "--out",
                                "benchmarks/sdp_s3vm-eleven.jsonl"],
    "cs3vm setting": ["benchmarks/cs3vm_setting.py", "--summary",
                      "benchmarks/cs3vm_setting.jsonl"],
    "wide csv 20k": ["benchmarks/wide_csv.py", "table", "benchmarks/wide_csv-20k.jsonl"],
    "wide csv 5k": ["benchmarks/wide_csv.py", "table", "benchmarks/wide_csv-5k.jsonl"],
    "interrupts": ["benchmarks/interrupt_latency.py", "table",
                   "benchmarks/interrupt_latency.jsonl"],
    "sparse scale": ["benchmarks/sparse_scale.py", "--out", "benchmarks/sparse_scale.jsonl",
                     "--table", "b314d2c"],
}


def _tables(text: str) -> list:
    """The markdown tables in ``text``: runs of lines that start with '|'."""
    blocks, block = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            block.append(line)
        elif block:
            blocks.append("\n".join(block))
            block = []
    return blocks + (["\n".join(block)] if block else [])


def _generated(command: list) -> list:
    done = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return _tables(done.stdout)


@pytest.mark.parametrize("name", list(GENERATED_TABLES))
def test_a_benchmark_table_is_what_its_generator_prints_from_its_data(name):
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    tables = _generated(GENERATED_TABLES[name])
    assert tables, f"{name}: the generator printed no table"
    for table in tables:
        assert table in page, (f"{name}: docs/benchmarks.md differs from "
                               f"`{' '.join(GENERATED_TABLES[name])}`:\n{table[:600]}")


#: The tables of docs/reliability.md that a script prints from its data file, each between the
#: markers <!-- table: NAME --> and <!-- end table: NAME --> of the page.
RELIABILITY_TABLES = {
    "solve loops": ["benchmarks/solve_loop.py", "table", "benchmarks/solve_loop.jsonl"],
}


def _between_markers(text: str, name: str) -> str:
    start, end = f"<!-- table: {name} -->\n", f"\n<!-- end table: {name} -->"
    assert start in text and end in text, f"no markers for the table {name!r}"
    return text.split(start, 1)[1].split(end, 1)[0].strip()


@pytest.mark.parametrize("name", list(RELIABILITY_TABLES))
def test_a_reliability_table_is_what_its_generator_prints_from_its_data(name):
    page = (ROOT / "docs" / "reliability.md").read_text()
    done = subprocess.run([sys.executable, *RELIABILITY_TABLES[name]], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _between_markers(page, name) == done.stdout.strip(), \
        f"docs/reliability.md differs from `{' '.join(RELIABILITY_TABLES[name])}`"


def test_the_loop_table_follows_its_data(tmp_path):
    # One run's count changed in a copy of the data: the table printed from it is not the page's.
    import json

    lines = (ROOT / "benchmarks" / "solve_loop.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["survived"] += 1
    copy = tmp_path / "solve_loop.jsonl"
    copy.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    done = subprocess.run([sys.executable, "benchmarks/solve_loop.py", "table", str(copy)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    page = (ROOT / "docs" / "reliability.md").read_text()
    assert done.returncode == 0 and done.stdout.strip() != _between_markers(page, "solve loops")


def test_a_changed_data_file_changes_the_table(tmp_path):
    # The comparison can fail: one fit's error changed in a copy of the data, and the table
    # printed from it is no longer in the page.
    import json

    lines = (ROOT / "benchmarks" / "ssl_book.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["error"] = 1.0 - first["error"]
    copy = tmp_path / "ssl_book.jsonl"
    copy.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    tables = _generated(["benchmarks/ssl_book.py", "--summary", str(copy)])
    assert tables and tables[0] not in page


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
