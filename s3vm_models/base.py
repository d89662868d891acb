"""What every formulation provides: checks, a model, a solve that returns a Result."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from .data import Instance
from .solvers.errors import InputError
from .solvers.files import check_writable
from .settings import Settings


class Formulation(ABC):
    """A named S3VM formulation.

    Subclasses state the problem once, in :meth:`build`, and turn a solved model into a
    :class:`s3vm.solvers.results.Result` in :meth:`solve`. ``solve`` is the only entry point the
    command line uses; drivers call ``build`` and work on the model themselves.

    Class attributes
    ----------------
    name : str
        The registry name (``--formulation NAME``).
    summary : str
        One line for ``s3vm list``.
    problem_class : str
        ``"lp"``, ``"mip"``, ``"sdp"`` or ``"driver"``: which solvers may take it.
    export_formats : tuple of str
        Formats ``s3vm export`` can write.
    needs_labels : bool
        Whether both classes must have a labeled point.
    needs_unlabeled : bool
        Whether there must be an unlabeled point.
    settings_used : tuple of str
        The :class:`Settings` fields the formulation reads; a setting given explicitly to a
        formulation that ignores it is an error, not silently dropped.
    unmeetable_count_is_infeasible : bool
        Whether a balance count outside 0..u is a problem without feasible labelings (status
        ``infeasible``) rather than bad input.
    uses_groups : bool
        Whether the formulation honours the data's ``group`` column (equivalence and
        inequivalence constraints); a formulation that does not refuses data that has groups.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    problem_class: ClassVar[str]
    export_formats: ClassVar[tuple] = ()
    needs_labels: ClassVar[bool] = True
    needs_unlabeled: ClassVar[bool] = True
    uses_groups: ClassVar[bool] = False
    unmeetable_count_is_infeasible: ClassVar[bool] = False
    settings_used: ClassVar[tuple] = ("kernel", "sigma", "C", "C_star", "bias", "hard_margin",
                                      "balance", "positives", "mu", "nu")

    def check(self, instance: Instance, settings: Settings) -> None:
        """Raise :class:`InputError` when the instance or settings do not fit the formulation."""
        if self.needs_labels:
            instance.require_both_classes_labeled()
        if self.needs_unlabeled:
            instance.require_unlabeled()
        if not self.uses_groups and instance.group is not None and np.any(instance.group != 0):
            # Dropping the constraints silently would solve another problem than the data states.
            raise InputError(f"formulation {self.name!r} does not take the 'group' column "
                             "(equivalence constraints): use sdp, sdp-subspace or sdp-lowrank, "
                             "or drop the column")
        if settings.balance == "count":
            settings.positive_count(instance, in_range=not self.unmeetable_count_is_infeasible)

    @abstractmethod
    def build(self, instance: Instance, settings: Settings):
        """Return the model of this formulation for ``instance`` (not solved)."""

    @abstractmethod
    def solve(self, instance: Instance, settings: Settings, profile):
        """Solve and return a :class:`s3vm.solvers.results.Result`."""

    def export(self, instance: Instance, settings: Settings, path: str, fmt: str) -> None:
        """Write the model to ``path`` in format ``fmt`` (one of :attr:`export_formats`)."""
        if fmt not in self.export_formats:
            spelled = ", ".join(self.export_formats) or "none"
            raise InputError(f"formulation {self.name!r} cannot be exported as {fmt!r} "
                             f"(formats: {spelled})")
        check_writable(path)
        self.check(instance, settings)
        self._write(self._export_model(instance, settings), path, fmt)

    def _export_model(self, instance: Instance, settings: Settings):
        """The model :meth:`export` writes (the conic family builds its MOSEK Fusion model)."""
        return self.build(instance, settings)

    def _write(self, model, path: str, fmt: str) -> None:  # pragma: no cover - per family
        raise NotImplementedError


class Stopwatch:
    """Wall-clock seconds since creation (``time.perf_counter``)."""

    def __init__(self):
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start
