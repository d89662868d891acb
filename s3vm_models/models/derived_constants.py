"""The constants a model derives from a bound on its objective, kept valid for a changed model.

The Bennett-Demiriz MIP (:func:`s3vm.models.problem3.build_problem3`, used by bd-mip and bb-mip)
and S3VM-L2's MIQP (:func:`s3vm.models.l2_miqp.build_l2_miqp`) switch each unlabeled point's
row with a big-M term, and l2-miqp also bounds v, b and the slacks. All these constants come
from an upper bound U on the optimum: every optimum has mu |w|_1 <= U (Problem 3), or
|v|^2 / 2 <= U and C xi^2 <= U (S3VM-L2), hence |f_j| <= M_j - 1 on every unlabeled point, and
the relaxed side of a point never binds. U is computed at build time for the model as built; a
side constraint a user adds can raise the optimum above it, and then the constants cut the
changed problem's optimum off (docs/models.md, "Changes the framework keeps exact").

The check here makes the constants valid again. Read each big-M pair as its disjunction
(d_j = 1: the +1 row holds; d_j = 0: the -1 row holds; the other row absent). The model with
finite constants is a restriction of that problem (a larger M only relaxes a row), so the value
V of any point it returns, at integral labels, is the value of a feasible point of the changed
problem: U = V bounds the changed optimum above. The derivation of the constants uses only the
objective's form (the same function, nonnegative terms) and the labeled rows, which a side
constraint leaves as they are; so the constants computed from V hold at every optimum of the
changed problem. If the model's constants are at least those, every optimum of the changed
problem is feasible in the model with the same value, and the model's optimum is the changed
problem's optimum. If not, the constants are raised to them and the model solved again; its
new value V' <= V (the earlier point stays feasible), so the constants from V' are no larger
and the second solve passes the check (:func:`needed_constants`, :func:`raise_constants`).

The argument needs the objective and the labeled rows as built and mu > 0, costs >= 0 and the
slacks' lower bounds >= 0: :func:`assumption_broken` says which of these a change broke, and
then no such guarantee is given.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from s3vm.models.l2_miqp import big_m
from s3vm.models.problem3 import big_m_from_upper

#: Relative room on top of the needed constants, so that a solver's feasibility tolerance at a
#: row exactly at its M never decides.
_ROOM = 1e-6


def kind_of(model) -> Optional[str]:
    """``"problem3"`` (bd-mip, bb-mip), ``"l2"`` (l2-miqp) or None for a model without
    bound-derived constants."""
    if hasattr(model, "l2_bounds"):
        return "l2"
    if hasattr(model, "problem_data") and hasattr(model, "d"):
        return "problem3"
    return None


def label_variables(model):
    """The binary label variables (``d`` or ``z``; 1 labels the point +1)."""
    return model.z if kind_of(model) == "l2" else model.d


def baseline(model) -> dict:
    """What :func:`assumption_broken` compares a model against later: its objective as built."""
    return {"objective": model.obj.expr}


def assumption_broken(model, base: dict) -> Optional[str]:
    """Why the derivation of the constants does not hold for ``model`` as changed, or None."""
    from pyomo.environ import Objective, value

    active = list(model.component_data_objects(Objective, active=True))
    if len(active) != 1 or active[0] is not model.obj or model.obj.expr is not base["objective"]:
        return "the objective was changed"
    rows = ["labeled_margin"] + (["norm_upper", "norm_lower"] if kind_of(model) == "problem3"
                                 else [])
    for name in rows:
        if not all(row.active for row in getattr(model, name).values()):
            return f"rows of {name} were deactivated"
    if kind_of(model) == "l2":
        return None
    if not value(model.mu) > 0:
        return "mu is not > 0"
    if any(value(c) < 0 for c in (*model.cost_r.values(), *model.cost_s.values())):
        return "a cost of r or s is negative"
    for name in ("y", "z", "r", "s"):
        if any(var.lb is None or var.lb < 0 for var in getattr(model, name).values()):
            return f"a lower bound of {name} is below 0"
    return None


def needed_constants(model, upper: float, room: bool = False) -> dict:
    """The constants the derivation asks for when ``upper`` bounds the optimum: name -> array
    (``M`` per unlabeled point; for l2 also the bounds ``v``, ``b``, ``xi_L``, ``xi_U``).
    ``room`` adds a relative 1e-6 to ``upper`` (the values :func:`raise_constants` sets)."""
    from pyomo.environ import value

    upper = float(upper) * (1.0 + _ROOM) + _ROOM if room else float(upper)
    if kind_of(model) == "problem3":
        return {"M": big_m_from_upper(model.problem_data, value(model.mu), upper)}
    bounds = big_m(model.l2_data, upper)
    return {"M": bounds.M, "v": np.array([bounds.v]), "b": np.array([bounds.b]),
            "xi_L": np.array([bounds.xi_labeled]), "xi_U": np.array([bounds.xi_unlabeled])}


def current_constants(model) -> dict:
    """The model's constants now, in the shape of :func:`needed_constants`."""
    if kind_of(model) == "problem3" or hasattr(model, "big_m"):
        M = np.array([float(p.value) for p in model.big_m.values()])
    else:
        M = None
    if kind_of(model) == "problem3":
        return {"M": M}
    bounds = model.l2_bounds
    out = {"v": np.array([bounds.v]), "b": np.array([bounds.b]),
           "xi_L": np.array([bounds.xi_labeled]), "xi_U": np.array([bounds.xi_unlabeled])}
    if M is not None:
        out["M"] = M
    return out


#: The integrality tolerance of the MIP solvers that read an exported file by default (HiGHS's
#: ``mip_feasibility_tolerance``, SCIP's ``numerics/feastol``): a binary this close to 0 or 1
#: counts as integral there.
INTEGRALITY_TOLERANCE = 1e-6


def inexact_file_note(model) -> Optional[str]:
    """Why a file of ``model`` may solve below the problem's optimum in another reader, or None.

    The writers lose nothing (Pyomo writes MPS numbers with 17 digits and LP numbers as their
    ``repr``: each reads back as the same double). What a file cannot carry is the check
    :meth:`s3vm.built.Built.solve` makes of its answer: a reader accepts a binary within its
    integrality tolerance of 0 or 1, which relaxes a big-M row by up to that tolerance times M.
    Once that reaches the margin of 1 every row asks for, the reader's optimum may rest on
    relaxed rows and lie below the problem's (``Built.solve`` then says ``inaccurate``;
    docs/reliability.md, the tolerance policy). In a scan of 240 changed bd-mip models of 9
    points at eight scales of mu and nu (HiGHS reading the MPS file), the 11 files that solved
    below the enumerated optimum all had an M of 1.1e7 or more; every file with M up to 2.2e5
    solved to it. The threshold, M times the tolerance at 1, lies between.
    """
    if kind_of(model) is None or not hasattr(model, "big_m"):
        return None
    M = current_constants(model)["M"]
    largest = float(M.max()) if M is not None and M.size else 0.0
    if largest * INTEGRALITY_TOLERANCE < 1.0:
        return None
    return (f"the model's big-M values reach {largest:.3g}: a MIP solver reading this file "
            f"accepts a binary within its integrality tolerance ({INTEGRALITY_TOLERANCE:g} for "
            f"HiGHS and SCIP) of 0 or 1, which relaxes a row by up to "
            f"{largest * INTEGRALITY_TOLERANCE:.3g}, beyond the margin of 1 the rows ask for: "
            f"its optimum may be below the problem's (mu or nu is at an extreme scale; "
            f"Built.solve checks its answer exactly; docs/reliability.md, the tolerance policy)")


def short_constants(model, upper: float) -> list:
    """Names of the constants below what ``upper`` asks for (empty: they are valid)."""
    need, have = needed_constants(model, upper), current_constants(model)
    # (1e-9: the derivation's values carry a 1e-6 margin; rounding must not count as short)
    return [name for name, now in have.items()
            if np.any(np.isfinite(need[name]) & (need[name] > now * (1.0 + 1e-9)))]


def raise_constants(model, upper: float) -> float:
    """Raise the constants to what ``upper`` asks for, in place; the largest M_j after (0.0
    for a model without M).

    Problem 3's and l2-miqp's M are the mutable Params ``big_m``; l2-miqp's bounds on v, b and
    the slacks are raised on the variables that still carry the derived bound (a bound a user
    set stays), and ``model.l2_bounds`` records the new values.
    """
    need, have = needed_constants(model, upper, room=True), current_constants(model)
    return _set_constants(model, {
        name: np.where(np.isfinite(need[name]), np.maximum(need[name], now), now)
        for name, now in have.items()}, upper)


def grow_constants(model, factor: float) -> float:
    """Multiply every constant by ``factor`` (a changed model found infeasible: its optimum may
    need larger |w| than the constants allow); the largest M_j after."""
    have = current_constants(model)
    upper = model.l2_bounds.upper if kind_of(model) == "l2" else 0.0
    return _set_constants(model, {name: now * factor for name, now in have.items()}, upper)


def _set_constants(model, new: dict, upper: float) -> float:
    if "M" in new:
        for j, param in model.big_m.items():
            param.set_value(float(new["M"][j]))
    if kind_of(model) == "l2":
        old = model.l2_bounds
        pairs = [("v", model.v, old.v), ("xi_L", model.xi_L, old.xi_labeled),
                 ("xi_U", model.xi_U, old.xi_unlabeled)]
        if hasattr(model, "b"):
            pairs.append(("b", model.b, old.b))
        for name, var, was in pairs:
            _widen(var, was, float(new[name][0]))
        model.l2_bounds = dataclasses.replace(
            old, upper=max(old.upper, float(upper)), v=float(new["v"][0]),
            b=float(new["b"][0]), xi_labeled=float(new["xi_L"][0]),
            xi_unlabeled=float(new["xi_U"][0]),
            M=new["M"] if "M" in new else old.M)
    return float(new["M"].max()) if "M" in new and new["M"].size else 0.0


def _widen(var, was: float, now: float) -> None:
    """Move the bounds +-``was`` of ``var``'s entries to +-``now`` (others are a user's)."""
    if not np.isfinite(was) or now <= was:
        return
    for entry in (var.values() if var.is_indexed() else [var]):
        if entry.ub is not None and entry.ub == was:
            entry.setub(now)
        if entry.lb is not None and entry.lb == -was:
            entry.setlb(-now)
