"""The one Result type every formulation, backend and driver returns."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

STATUSES = ("optimal", "feasible", "time_limit", "infeasible", "error")


@dataclass
class Result:
    """The outcome of solving one formulation on one instance.

    Attributes
    ----------
    formulation, solver : str
    status : {"optimal", "feasible", "time_limit", "infeasible", "error"}
    objective : float or None
        The objective at the returned solution (for transductive problems: at the labeling).
    lower_bound : float or None
        What the solver proved; None when it proved nothing.
    labels : ndarray of shape (u,), optional
        +1/-1 for every unlabeled row, in file order.
    decision_values : ndarray of shape (u,), optional
        A real score per unlabeled row, larger meaning +1.
    primal : dict
        Named parts of the primal solution (``w``, ``b``, ...), arrays or floats.
    seconds : float
        Wall-clock time of the solve, model building included.
    iterations, nodes : int, optional
    message : str
        A short note from the solver (why it stopped), empty when nothing to say.
    info : dict
        Formulation-specific extras (iterate history, settings used, ...), JSON-serialisable.
    pool : list of dict, optional
        The K best labelings a search kept when asked for them (``k_best``), the best first:
        each ``{"labels": ndarray of +1/-1 (u,), "objective": float}``. None when not asked.
    pool_bound : float, optional
        With ``pool``: a proven lower bound on the objective of every labeling not in it
        (``inf`` when the search closed with no other labeling left; None when nothing was
        proven, as when stopped before the pool's bound).
    certified_labels : ndarray of bool, shape (u,), optional
        From the exact searches (bb, bb-mip, bb-sdp): per unlabeled row, in file order, whether
        its label in :attr:`labels` is proven, i.e. every labeling that gives the row the
        opposite label has an objective strictly above :attr:`objective` (so every labeling as
        good as the answer shares it); False: open. None where nothing was certified (another
        formulation, no labels). See :mod:`s3vm.solvers.bnb.certified`.
    """

    formulation: str
    solver: str
    status: str
    objective: Optional[float] = None
    lower_bound: Optional[float] = None
    labels: Optional[np.ndarray] = None
    decision_values: Optional[np.ndarray] = None
    primal: dict = field(default_factory=dict)
    seconds: float = 0.0
    iterations: Optional[int] = None
    nodes: Optional[int] = None
    message: str = ""
    info: dict = field(default_factory=dict)
    pool: Optional[list] = None
    pool_bound: Optional[float] = None
    certified_labels: Optional[np.ndarray] = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")

    @property
    def gap(self) -> Optional[float]:
        """Relative gap (objective - lower_bound) / max(1, |objective|), None without both."""
        if self.objective is None or self.lower_bound is None:
            return None
        return max(0.0, self.objective - self.lower_bound) / max(1.0, abs(self.objective))

    def __repr__(self) -> str:
        """A one-line summary, as scipy's OptimizeResult and Pyomo's results print one: the
        arrays and ``info`` stay out of it (they are attributes; ``to_dict()`` has them all)."""
        parts = [f"formulation={self.formulation!r}", f"solver={self.solver!r}",
                 f"status={self.status!r}", f"objective={_short(self.objective)}",
                 f"lower_bound={_short(self.lower_bound)}", f"gap={_short(self.gap)}"]
        if self.labels is None:
            parts.append("labels=None")
        else:
            labels = np.asarray(self.labels)
            parts.append(f"labels=<{labels.size} labels, {int(np.sum(labels > 0))} of them +1>")
        for name in ("iterations", "nodes"):
            if getattr(self, name) is not None:
                parts.append(f"{name}={getattr(self, name)}")
        parts.append(f"seconds={float(self.seconds):.3g}")
        if self.message:
            message = self.message if len(self.message) <= 80 else self.message[:77] + "..."
            parts.append(f"message={message!r}")
        return f"Result({', '.join(parts)})"

    def to_dict(self, primal: bool = False) -> dict:
        """A JSON-ready dict with the fields of the command-line contract."""
        out: dict[str, Any] = {
            "formulation": self.formulation,
            "solver": self.solver,
            "status": self.status,
            "objective": _num(self.objective),
            "lower_bound": _num(self.lower_bound),
            "gap": _num(self.gap),
            "labels": None if self.labels is None else [int(v) for v in self.labels],
            "decision_values": None if self.decision_values is None
            else [_num(v) for v in self.decision_values],
            "seconds": round(float(self.seconds), 6),
        }
        if self.iterations is not None:
            out["iterations"] = int(self.iterations)
        if self.nodes is not None:
            out["nodes"] = int(self.nodes)
        if self.message:
            out["message"] = self.message
        if self.pool is not None:
            out["pool"] = [{"labels": [int(v) for v in entry["labels"]],
                            "objective": _num(entry["objective"])} for entry in self.pool]
            # JSON has no infinity: "exhaustive" says that no labeling lies outside the pool
            exhaustive = self.pool_bound is not None and self.pool_bound == math.inf
            out["pool_bound"] = None if exhaustive else _num(self.pool_bound)
            out["pool_exhaustive"] = exhaustive
        if self.certified_labels is not None:
            out["certified_labels"] = [bool(v) for v in self.certified_labels]
        if self.info:
            out["info"] = _jsonable(self.info)
        if primal:
            out["primal"] = _jsonable(self.primal)
        return out

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(**kwargs))


def _short(value) -> str:
    """A number in 8 significant digits (None as None)."""
    return "None" if value is None else f"{float(value):.8g}"


def _num(value) -> Optional[float]:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _num(value)
    return value
