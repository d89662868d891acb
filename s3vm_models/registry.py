"""Formulation name -> class. ``s3vm list`` and ``--formulation NAME`` read this table."""

from __future__ import annotations

import inspect

from .solvers.errors import InputError
from .solvers.lazy import lookup

FORMULATIONS = {
    "rlp": "s3vm.rlp:RLP",
    "svm1": "s3vm.svm1:SVM1",
    "bd-mip": "s3vm.bd_mip:BennettDemirizMIP",
    "bb": "s3vm.bb:BranchAndBound",
    "bb-mip": "s3vm.bb_mip:BranchAndBoundMIP",
    "vs3vm": "s3vm.vs3vm:VS3VM",
    "cvs3vm": "s3vm.cvs3vm:CVS3VM",
    "sdp": "s3vm.sdp:SDPRelaxation",
    "bb-sdp": "s3vm.bb_sdp:BranchAndBoundSDP",
    "sdp-subspace": "s3vm.sdp_subspace:SubspaceSDP",
    "sdp-lowrank": "s3vm.sdp_lowrank:LowRankSDP",
    "l2-miqp": "s3vm.l2_miqp:L2MIQP",
}


def formulation_class(name: str):
    return lookup(FORMULATIONS, name, "formulation")


def formulation_options(name: str) -> list[str]:
    """The options (constructor keywords) formulation ``name`` takes."""
    params = inspect.signature(formulation_class(name).__init__).parameters
    return [p for p in params if p != "self"]


def get_formulation(name: str, **options):
    """A new instance of the formulation registered as ``name``, with its own options.

    Options a formulation does not take are an error, not silently dropped.
    """
    cls = formulation_class(name)
    accepted = formulation_options(name)
    unknown = [k for k in options if k not in accepted]
    if unknown:
        spelled = ", ".join("--" + k.replace("_", "-") for k in unknown)
        raise InputError(f"{spelled} does not apply to formulation {name!r}")
    return cls(**options)


def formulation_names() -> list[str]:
    return list(FORMULATIONS)
