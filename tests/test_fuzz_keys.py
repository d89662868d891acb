"""Every environment variable, profile entry and suite entry, walked through the command line.

Each key of :data:`s3vm.solvers.runtime.keys.ENVIRONMENT`, :data:`~s3vm.solvers.runtime.keys.
PROFILE` and :data:`s3vm.bench.spec.SUITE` is given its documented example (accepted: exit 0),
a value of the wrong type and, where the key has a range, a value outside it (each refused:
exit 2 and one line naming the key). The wrong values are made here from the key's kind and
bounds, not read from the table. A last check: the package reads no ``S3VM_`` variable but
through the table.
"""

from __future__ import annotations

import os
import re

import pytest

from s3vm import cli
from s3vm.bench.spec import SUITE
from s3vm.solvers.runtime.files import toml_string
from s3vm.solvers.runtime.keys import ENVIRONMENT, PROFILE, Key

from contract import BLOBS, ROOT, check_error_line


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def outside(key: Key):
    """A value of the right type outside the key's range (None: the key has none)."""
    if key.minimum is not None:
        low = key.minimum
        value = low - 1 if key.kind in ("integer", "list") or low <= 0 else low / 10
        return [value] if key.kind == "list" else value
    if key.maximum is not None:
        return key.maximum * 10
    return {"name": "", "choice": "nope", "scalars": {"a": {"b": {"c": 1}}}, "list": [],
            "tables": [], "folder": "/no/such/folder"}.get(key.kind)


def wrong_type(key: Key):
    """A value of another type than the key's."""
    return {"number": "x", "integer": 1.5, "size": "lots", "bool": "yes", "name": 5,
            "text": 5, "choice": 5, "folder": 5, "table": 5, "scalars": 5, "list": 5,
            "tables": 5}[key.kind]


def env_text(key: Key, value, tmp_path) -> str:
    """An environment variable's text for ``value`` (a folder key's wrong type: a file)."""
    if key.kind == "folder" and value == 5:
        path = tmp_path / "a-file"
        path.write_text("")
        return str(path)
    if key.kind == "integer" and value == 1.5:
        return "1.5"
    if key.kind == "choice" and value == 5:
        return "true"
    return str(value)


def cases(keys: dict):
    for key in keys.values():
        yield pytest.param(key, "example", id=f"{key.name}-valid")
        yield pytest.param(key, "wrong-type", id=f"{key.name}-wrong-type")
        if outside(key) is not None:
            yield pytest.param(key, "outside", id=f"{key.name}-out-of-range")


def value_of(key: Key, which: str):
    return {"example": key.example, "wrong-type": wrong_type(key),
            "outside": outside(key)}[which]


def check(capsys, status: int, key: Key, which: str) -> None:
    out, err = capsys.readouterr()
    if which == "example":
        assert status == 0, err[-600:]
        return
    check_error_line(status, out, err)
    assert key.name in err, err


def test_every_key_with_a_range_is_walked_out_of_it():
    for keys in (ENVIRONMENT, PROFILE, SUITE):
        for key in keys.values():
            assert (outside(key) is not None) == key.has_range, key.name


@pytest.mark.solver
@pytest.mark.parametrize("key, which", list(cases(ENVIRONMENT)))
def test_an_environment_variable(capsys, monkeypatch, tmp_path, key, which):
    value = value_of(key, which)
    monkeypatch.setenv(key.name, env_text(key, value, tmp_path))
    status = cli.main(["solve", BLOBS, "-f", "rlp", "-q"])
    check(capsys, status, key, which)


@pytest.mark.solver
@pytest.mark.parametrize("key, which", list(cases(PROFILE)))
def test_a_profile_entry(capsys, tmp_path, key, which):
    entries = {"solver": "highs", key.name: value_of(key, which)}
    profile = tmp_path / "p.toml"
    profile.write_text("".join(f"{k} = {toml_value(v)}\n" for k, v in entries.items()),
                       encoding="utf-8")
    status = cli.main(["solve", BLOBS, "-f", "rlp", "-q", "--profile", str(profile)])
    check(capsys, status, key, which)


@pytest.mark.parametrize("key, which", list(cases(SUITE)))
def test_a_suite_entry(capsys, tmp_path, key, which):
    entries = {"name": "s", "formulations": ["rlp"], "instances": [{"file": "blobs_small"}]}
    entries[key.name] = value_of(key, which)
    suite = tmp_path / "suite.toml"
    suite.write_text("".join(f"{k} = {toml_value(v)}\n" for k, v in entries.items()),
                     encoding="utf-8")
    status = cli.main(["bench", str(suite), "--list"])
    check(capsys, status, key, which)
    assert sorted(os.listdir(tmp_path)) == ["suite.toml"]


def test_the_package_reads_its_variables_through_the_table():
    read = re.compile(r"""(?:environ\.get|environ\[|getenv)\(?\s*["'](S3VM_\w+)""")
    named = re.compile(r"""["'](S3VM_[A-Z_]+)["']""")
    solver_names = {"S3VM_SCS", "S3VM_SDPA"}  # CVXPY solver classes of ours, no variables
    mentioned = set()
    for folder in ("s3vm_models", "solvers"):
        for base, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if not name.endswith(".py"):
                    continue
                text = open(os.path.join(base, name), encoding="utf-8").read()
                direct = read.findall(text)
                assert not direct, f"{name} reads {direct} without its key"
                mentioned |= set(named.findall(text)) - solver_names
    assert mentioned <= set(ENVIRONMENT), mentioned - set(ENVIRONMENT)
