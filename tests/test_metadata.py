"""What every installable package has: a LICENSE matching setup.cfg and a CITATION.cff that
names the package's version."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

from s3vm import __version__

ROOT = Path(__file__).resolve().parent.parent


def _metadata():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return cfg["metadata"]


def test_license_file_matches_setup_cfg():
    meta = _metadata()
    assert meta["license"] == "BSD-3-Clause"
    assert meta["license_files"].split() == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Copyright (c) 2026, the s3vm developers" in text
    assert "Neither the name of the copyright holder" in text  # the third clause


def test_citation_cff_names_this_version_and_license():
    text = (ROOT / "CITATION.cff").read_text()
    fields = dict(re.findall(r'^([a-z-]+): "?([^"\n]*)"?$', text, re.MULTILINE))
    assert fields["cff-version"] == "1.2.0"
    assert fields["version"] == __version__, "CITATION.cff's version differs from the package's"
    assert fields["license"] == _metadata()["license"]
    assert fields["title"] and fields["message"]
    assert re.search(r'^authors:\n  - name: "The s3vm developers"$', text, re.MULTILINE)


# --- dependency bounds: setup.cfg, the lower-bound constraints and the lock file agree -------

def _requirements(value: str):
    from packaging.requirements import Requirement

    lines = (line.strip() for line in value.splitlines())
    return [Requirement(line) for line in lines if line and not line.startswith("#")]


def _options():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return cfg["options"], cfg["options.extras_require"]


def _pins(name: str) -> dict:
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            package, version = line.split("==")
            pins[canonicalize_name(package)] = Version(version)
    return pins


def _lower(req):
    from packaging.version import Version

    bounds = [Version(s.version) for s in req.specifier if s.operator == ">="]
    assert len(bounds) == 1, f"{req}: one lower bound (>=) expected"
    return bounds[0]


def test_every_dependency_has_a_lower_bound_pinned_in_constraints_min():
    from packaging.utils import canonicalize_name

    options, _ = _options()
    core = {canonicalize_name(r.name): r for r in _requirements(options["install_requires"])}
    pins = _pins("constraints-min.txt")
    assert set(pins) == set(core)
    for name, req in core.items():
        assert pins[name] == _lower(req), \
            f"{name}: setup.cfg says {req}, the test pins {pins[name]}"


def test_the_scip_run_of_test_oldest_pins_the_scip_extra_lower_bounds():
    from packaging.utils import canonicalize_name

    options, extras = _options()
    core = {canonicalize_name(r.name): r for r in _requirements(options["install_requires"])}
    scip = {canonicalize_name(r.name): r for r in _requirements(extras["scip"])}
    pins = _pins("constraints-min-scip.txt")
    assert set(pins) == set(core) | set(scip)
    for name in pins:
        req = scip.get(name, core.get(name))
        assert pins[name] == _lower(req), \
            f"{name}: {req} but constraints-min-scip pins {pins[name]}"


def test_the_lock_file_pins_every_dependency_within_its_bounds():
    from packaging.utils import canonicalize_name

    options, extras = _options()
    reqs = _requirements(options["install_requires"]) + _requirements(extras["test"]) \
        + _requirements(extras["scip"]) + _requirements(extras["lint"])
    pins = _pins("constraints.txt")
    for req in reqs:
        name = canonicalize_name(req.name)
        assert name in pins, f"constraints.txt does not pin {req.name}"
        assert req.specifier.contains(pins[name]), \
            f"constraints.txt pins {name} {pins[name]}: {req}"


def test_the_pre_commit_hook_runs_the_pinned_linter():
    """The contributors' hook and `make lint` (CI) run the same ruff, so a commit the hook
    passes also passes CI's lint."""
    pins = _pins("constraints.txt")
    hook = re.search(r"repo: https://github.com/astral-sh/ruff-pre-commit\n\s+rev: v(\S+)",
                     (ROOT / ".pre-commit-config.yaml").read_text())
    assert hook, ".pre-commit-config.yaml has no ruff hook"
    assert hook.group(1) == str(pins["ruff"]), \
        f".pre-commit-config.yaml's ruff {hook.group(1)}, constraints.txt's {pins['ruff']}"


def test_every_package_folder_is_listed_in_setup_cfg():
    # A package folder setup.cfg does not list is missing from the wheel (setuptools' explicit
    # ``packages``): the estimator package was, once, and only an installed wheel showed it.
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    listed = set(cfg["options"]["packages"].split())
    roots = {name.strip(): folder.strip() for name, _, folder in
             (line.partition("=") for line in cfg["options"]["package_dir"].splitlines()
              if "=" in line)}
    found = set()
    for name, folder in roots.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            if "__pycache__" not in parts and not any(p.startswith(".") for p in parts):
                found.add(".".join((name, *parts)))
    missing = sorted(found - listed)
    assert not missing, f"package folders missing from setup.cfg's packages: {missing}"
