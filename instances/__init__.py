"""The instance files shipped with s3vm, and the bundled data they read (``data/``).

Each ``*.toml`` file here is an instance file (see :func:`s3vm.core.settings.load_instance`); its
name without ``.toml`` is what :func:`shipped_instances` lists and what ``s3vm solve NAME`` and
``s3vm.solve(NAME, ...)`` accept when no file of that name exists in the working directory.
``data/`` holds the CSV files the instance files name and the public data sets read by
:mod:`s3vm.data.loaders`, each folder with its ``SOURCE.md``.
"""

from __future__ import annotations

from importlib.resources import files

__all__ = ["shipped_instances"]


def shipped_instances() -> list[str]:
    """The names of the shipped instance files, sorted (e.g. ``"two_moons"``)."""
    return sorted(entry.name[:-len(".toml")] for entry in files(__name__).iterdir()
                  if entry.name.endswith(".toml") and entry.is_file())
