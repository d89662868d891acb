"""s3vm: semi-supervised support vector machines as mathematical programs.

The public API is importable from here; each name is loaded on first use, so that ``import s3vm``
(and the command line) stay fast and no solver library is imported before it is needed::

    import s3vm

    result = s3vm.solve("two_moons", "bb")                # a shipped instance, or a file path
    table = s3vm.compare("two_moons", ["vs3vm", "sdp", "bb"])
    s3vm.export("two_moons", "bd-mip", "model.mps")
    built = s3vm.build("two_moons", "bd-mip")             # its Pyomo model, to change
    result = built.solve(solver="highs")
    heart = s3vm.load_dataset("heart", labeled_fraction=0.1, seed=0)
    g241c = s3vm.load_ssl_split("g241c", n_labeled=10, split=0)   # a published SSL-book split
    clf = s3vm.S3VMClassifier(formulation="vs3vm").fit(X, y)

Layers: :mod:`s3vm.solvers` (engines, backends, the Result type and the errors; it knows nothing
of S3VM) below the model layer (data, settings, one module per formulation) below the API
(:mod:`s3vm.api`, :mod:`s3vm.estimator`) and the command line (:mod:`s3vm.cli`).
"""

from __future__ import annotations

import importlib

from s3vm._version import __version__

_PUBLIC = {
    "solve": "s3vm.api",
    "compare": "s3vm.api",
    "export": "s3vm.api",
    "evaluate": "s3vm.api",
    "check_certificate": "s3vm.api",
    "load": "s3vm.api",
    "build": "s3vm.built",
    "Built": "s3vm.built",
    "load_instance": "s3vm.core.settings",
    "load_dataset": "s3vm.data.loaders",
    "load_ssl_split": "s3vm.data.loaders",
    "S3VMClassifier": "s3vm.estimator",
    "UnlabeledDataWarning": "s3vm.estimator",
    "labeled_scorer": "s3vm.scoring",
    "Instance": "s3vm.data.instance",
    "Settings": "s3vm.core.settings",
    "Result": "s3vm.solvers.results",
    "S3VMError": "s3vm.solvers.errors",
    "InputError": "s3vm.solvers.errors",
    "SolverUnavailableError": "s3vm.solvers.errors",
    "formulation_names": "s3vm.core.registry",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 's3vm' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
