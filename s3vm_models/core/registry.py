"""Formulation name -> class. ``s3vm list`` and ``--formulation NAME`` read this table.

Adding a formulation is one module in :mod:`s3vm.formulations`, one line here and its options
in :mod:`s3vm.core.catalog` (which the command line's parser reads without importing the
formulations; ``make catalog`` writes it from the classes, tests/test_cli_startup.py holds the
two equal); code outside the
package registers its own with :func:`register_formulation` (docs/extending.md).
"""

from __future__ import annotations

import sys

from s3vm.core.catalog import SHIPPED
from s3vm.core.options import table
from s3vm.solvers.errors import InputError
from s3vm.solvers.lazy import lookup

FORMULATIONS = {
    "rlp": "s3vm.formulations.rlp:RLP",
    "svm1": "s3vm.formulations.svm1:SVM1",
    "bd-mip": "s3vm.formulations.bd_mip:BennettDemirizMIP",
    "bb": "s3vm.formulations.bb:BranchAndBound",
    "bb-mip": "s3vm.formulations.bb_mip:BranchAndBoundMIP",
    "vs3vm": "s3vm.formulations.vs3vm:VS3VM",
    "switching": "s3vm.formulations.switching:LabelSwitchingS3VM",
    "cvs3vm": "s3vm.formulations.cvs3vm:CVS3VM",
    "sdp": "s3vm.formulations.sdp:SDPRelaxation",
    "bb-sdp": "s3vm.formulations.bb_sdp:BranchAndBoundSDP",
    "sdp-subspace": "s3vm.formulations.sdp_subspace:SubspaceSDP",
    "sdp-lowrank": "s3vm.formulations.sdp_lowrank:LowRankSDP",
    "l2-miqp": "s3vm.formulations.l2_miqp:L2MIQP",
    "primal-tsvm": "s3vm.formulations.primal_tsvm:PrimalTSVM",
}


def register_formulation(name: str, target) -> None:
    """Register a formulation under ``name``: its class, or a ``"module:Class"`` string
    imported on first use.

    From then on ``s3vm.solve(data, name)``, ``compare``, the estimator and the command line of
    the same process know it. The class must subclass a family base (or
    :class:`~s3vm.core.formulation.Formulation`) and set ``name`` to ``name``.

    Raises
    ------
    InputError
        ``name`` is taken by another formulation, or the class's ``name`` differs.
    """
    if not isinstance(name, str) or not name:
        raise InputError(f"a formulation name must be a non-empty string, got {name!r}")
    if name in FORMULATIONS and FORMULATIONS[name] is not target:
        raise InputError(f"formulation {name!r} is already registered")
    if not isinstance(target, str) and getattr(target, "name", None) != name:
        raise InputError(f"the class registered as {name!r} must set name = {name!r}, "
                         f"not {getattr(target, 'name', None)!r}")
    FORMULATIONS[name] = target


def formulation_class(name: str):
    return lookup(FORMULATIONS, name, "formulation")


def formulation_options(name: str) -> dict:
    """name -> :class:`~s3vm.core.options.Option`: the options formulation ``name`` takes.

    A shipped formulation not imported yet answers from :data:`s3vm.core.catalog.SHIPPED`,
    without importing it (the command line's parser reads every formulation's options);
    once imported, or replaced, its class answers.
    """
    shipped = SHIPPED.get(name) if isinstance(name, str) else None
    if shipped is not None and FORMULATIONS.get(name) == shipped[0] \
            and shipped[0].split(":")[0] not in sys.modules:
        return table(shipped[1])
    return formulation_class(name).option_table()


def get_formulation(name: str, **options):
    """A new instance of the formulation registered as ``name``, with its own options.

    Options a formulation does not take are an error, not silently dropped.
    """
    return formulation_class(name)(**options)


def all_options() -> dict:
    """option name -> (Option, [names of the formulations that take it]), in registry order."""
    out: dict = {}
    for name in FORMULATIONS:
        for opt_name, option in formulation_options(name).items():
            out.setdefault(opt_name, (option, []))[1].append(name)
    return out


def formulation_names() -> list[str]:
    return list(FORMULATIONS)
