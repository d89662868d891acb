"""The wheel, as a user gets it: built from a copy of the source tree, installed into a fresh
virtual environment, and used from another directory (no clone in sight).

Marked ``packaging``: ``pytest -m "not packaging"`` leaves it out; it runs in the normal suite
(about 20 s on one core).

By default the fresh environment gets the wheel alone (``pip install --no-deps``) and sees the
dependencies of the environment running the tests through a ``.pth`` file that lists its
site-packages folders as plain paths (so none of their ``.pth`` files, such as an editable
install's import hook, is run: ``s3vm`` can only come from the wheel). A full install with its
dependencies writes about 700 MB and takes about a minute here; set ``S3VM_TEST_FULL_INSTALL=1``
to do that instead (resolved against ``constraints.txt``).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parent.parent

#: source folder -> folder in the wheel (setup.cfg's package_dir)
PACKAGE_DIRS = {"s3vm_models": "s3vm", "solvers": "s3vm/solvers", "instances": "s3vm/instances"}

#: left out of the copy the wheel is built from: environments, build output, caches
IGNORE = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__",
                                "*.pyc", ".pytest_cache", ".hypothesis", "probe")


def _run(args, cwd, env=None, check=True):
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {proc.returncode}\n"
                    f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc


def _source_files():
    """Every file of the three package folders, as its path in the wheel."""
    files = set()
    for folder, target in PACKAGE_DIRS.items():
        for path in (ROOT / folder).rglob("*"):
            rel = path.relative_to(ROOT / folder)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix != ".pyc":
                files.add(f"{target}/{rel.as_posix()}")
    return files


def _build_wheel(tmp_path: Path) -> Path:
    """Build the wheel from a clean copy of the tree (a stale build/ folder cannot leak in) and
    check that setuptools warned about nothing."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=IGNORE)
    out = tmp_path / "wheelhouse"
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else distutils warns that it skips byte-compiling
    proc = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--verbose",
                 "--wheel-dir", out, src], cwd=tmp_path, env=env)
    log = proc.stdout + proc.stderr
    backend = [line for line in log.splitlines()
               if re.search(r"warning|deprecat|!!", line, re.IGNORECASE)
               and "is ignored: it is neither a file nor a directory" not in line]  # pip's mirrors
    assert not backend, "the build printed warnings:\n" + "\n".join(backend)
    wheels = list(out.glob("s3vm-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _check_wheel_contents(wheel: Path, version: str) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = {n for n in zf.namelist() if not n.endswith("/")}
    dist_info = f"s3vm-{version}.dist-info"
    assert {n.split("/")[0] for n in names} == {"s3vm", dist_info}, "top-level entries"
    package_files = {n for n in names if not n.startswith(dist_info + "/")}
    expected = _source_files()
    assert sorted(expected - package_files) == [], "source files missing from the wheel"
    assert sorted(package_files - expected) == [], "files in the wheel that are not in the source"
    for kind in (".toml", ".csv", "SOURCE.md", ".mat", ".data", ".txt"):
        assert any(n.endswith(kind) for n in package_files), kind
    assert any(n.startswith(dist_info) and n.endswith("LICENSE") for n in names), "LICENSE"


def _venv(tmp_path: Path, wheel: Path) -> Path:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=tmp_path).stdout.strip())
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet"]
    if os.environ.get("S3VM_TEST_FULL_INSTALL"):
        _run(pip + ["--constraint", ROOT / "constraints.txt", wheel], cwd=tmp_path)
    else:
        _run(pip + ["--no-deps", wheel], cwd=tmp_path)
        dirs = [p for p in site.getsitepackages() + [site.getusersitepackages()]
                if os.path.isdir(p)]
        (purelib / "zz_s3vm_test_dependencies.pth").write_text("\n".join(dirs) + "\n")
    return purelib


SNIPPET = """
import json, sys
import s3vm
from s3vm.instances import shipped_instances
from importlib.resources import files

result = s3vm.solve("two_moons", "rlp")
sonar = s3vm.load_dataset("sonar", labeled_fraction=0.1, seed=0)
print(json.dumps({"file": s3vm.__file__, "instances": str(files("s3vm.instances")),
                  "shipped": shipped_instances(), "status": result.status,
                  "objective": result.objective, "n_labels": len(result.labels),
                  "sonar": [sonar.n, sonar.p, sonar.l]}))
"""


def test_wheel_installs_and_runs_from_another_directory(tmp_path):
    from s3vm import __version__
    from s3vm.instances import shipped_instances

    wheel = _build_wheel(tmp_path)
    _check_wheel_contents(wheel, __version__)
    purelib = _venv(tmp_path, wheel)

    # nothing but s3vm at top level: RECORD lists every file the wheel installed
    record = (purelib / f"s3vm-{__version__}.dist-info" / "RECORD").read_text()
    tops = {line.split(",")[0].split("/")[0] for line in record.splitlines() if line}
    assert {t for t in tops if t != ".."} == {"s3vm", f"s3vm-{__version__}.dist-info"}
    assert not (purelib / "solvers").exists() and not (purelib / "s3vm_models").exists()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "S3VM_DATA_DIR", "PYTHONHOME")}
    bindir = purelib.parents[2] / "bin"
    s3vm = bindir / "s3vm"

    listing = _run([s3vm, "list"], cwd=elsewhere, env=env).stdout
    assert "formulations:" in listing and "bd-mip" in listing and "highs" in listing

    _run([s3vm, "dataset", "sonar", "-o", "sonar.csv"], cwd=elsewhere, env=env)
    with open(elsewhere / "sonar.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 1 + 208 and {"label", "truth"} <= set(rows[0])

    out = _run([s3vm, "solve", "two_moons", "-f", "rlp", "--json"], cwd=elsewhere, env=env).stdout
    # the last line: a native library's banner on stdout is another test's business
    solved = json.loads(out.strip().splitlines()[-1])
    assert solved["status"] == "optimal" and len(solved["labels"]) == 96

    missing = _run([s3vm, "solve", "no_such_instance", "-f", "rlp"], cwd=elsewhere, env=env,
                   check=False)
    assert missing.returncode == 2 and "two_moons" in missing.stderr

    got = json.loads(_run([bindir / "python", "-c", SNIPPET], cwd=elsewhere,
                          env=env).stdout.strip().splitlines()[-1])
    assert Path(got["file"]).is_relative_to(purelib), "s3vm was not imported from the wheel"
    assert Path(got["instances"]).is_relative_to(purelib)
    assert got["shipped"] == shipped_instances()
    assert got["status"] == "optimal" and got["n_labels"] == 96
    assert got["sonar"] == [208, 60, 21]

    version = _run([s3vm, "--version"], cwd=elsewhere, env=env, check=False)
    assert version.returncode == 0 and __version__ in version.stdout, (
        f"s3vm --version: exit {version.returncode}, stdout {version.stdout!r}, "
        f"stderr {version.stderr[-500:]!r}")
