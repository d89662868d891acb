"""The repository's scripts (benchmarks/, docs/hooks/) as modules for the tests: they sit
beside the package, not in it, so they are loaded from their files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def script_module(name: str, relative: str):
    """The script at ``relative`` (from the repository root) as the module ``name``, loaded once
    per test process. It is registered before it runs: a dataclass of the script looks its
    module up in ``sys.modules``."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / relative)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
