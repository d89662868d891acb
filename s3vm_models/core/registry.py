"""Formulation name -> class. ``s3vm list`` and ``--formulation NAME`` read this table."""

from __future__ import annotations

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
}


def formulation_class(name: str):
    return lookup(FORMULATIONS, name, "formulation")


def formulation_options(name: str) -> dict:
    """name -> :class:`~s3vm.core.options.Option`: the options formulation ``name`` takes."""
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
