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
