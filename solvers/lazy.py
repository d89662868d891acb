"""Registries map names to "module:Class" strings, imported on first use, so that listing names
never imports an optional package. An entry may also be the object itself (a class registered at
run time by code outside the package)."""

from __future__ import annotations

import importlib

from s3vm.solvers.errors import InputError


def lookup(table: dict, name: str, kind: str):
    """The object ``table[name]`` points to; an unknown name is an InputError listing the known."""
    if not isinstance(name, str) or name not in table:
        raise InputError(f"unknown {kind} {name!r}: choose one of {', '.join(table)}")
    target = table[name]
    if not isinstance(target, str):
        return target
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)
