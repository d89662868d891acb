"""Where the resources shipped inside the package are: instance files and bundled data.

Both live in the package :mod:`s3vm.instances` (the repository's ``instances/`` folder) and are
found with :mod:`importlib.resources`, so they are the same for a clone, an editable install and
a wheel. They are read as ordinary files: an installed wheel is unpacked on disk, which is what
:func:`instances_dir` checks.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path
from typing import Optional

from s3vm.instances import shipped_instances
from s3vm.solvers.errors import S3VMError

__all__ = ["instances_dir", "bundled_data_dir", "shipped_instances", "shipped_instance"]

_PACKAGE = "s3vm.instances"


def instances_dir() -> Path:
    """The folder of the shipped instance files (the package :mod:`s3vm.instances`)."""
    root = files(_PACKAGE)
    if not isinstance(root, Path):  # e.g. imported from a zip archive
        raise S3VMError(f"the shipped instances ({root}) are not on the file system; install "
                        "s3vm unpacked (pip does) or set S3VM_DATA_DIR for the bundled data")
    return root


def bundled_data_dir() -> Path:
    """The folder of the bundled data sets and instance CSV files (``s3vm/instances/data``)."""
    return instances_dir() / "data"


def shipped_instance(name: str) -> Optional[Path]:
    """The path of the shipped instance file ``name`` (``"two_moons"`` or ``"two_moons.toml"``),
    or ``None`` if no shipped instance has that name. A path with a folder is never a name."""
    name = os.fspath(name)
    if not name or os.sep in name or (os.altsep and os.altsep in name):
        return None
    stem = name[:-len(".toml")] if name.endswith(".toml") else name
    if stem not in shipped_instances():
        return None
    return instances_dir() / f"{stem}.toml"
