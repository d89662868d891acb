"""Must-link and cannot-link pairs of rows, joined into the signed ``group`` column.

``pairs={"must": [(i, j), ...], "cannot": [(i, j), ...]}`` (rows numbered from 0 in the data's
order, labeled rows included) says that rows i and j share a label (must) or have opposite
labels (cannot). These are the equivalence and inequivalence constraints of De Bie and
Cristianini (2006, section 7.3.1), which the ``group`` column states by signed group ids
(docs/data.md): a pair joins the groups of its two rows, the sides related by the pair. The join
is a union-find with parity over the rows, seeded with the column's groups; a pair that closes an
odd cycle (a row that would have to differ from itself) is an :class:`InputError` naming it, and
pairs that contradict the labeled rows are refused by the column's own check
(:func:`s3vm.data.instance.check_groups`).

The result is a group column, so every formulation reads pairs exactly as it reads groups:
honoured where the column is, refused where it is not.
"""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from s3vm.solvers.errors import InputError

__all__ = ["pairs_to_groups", "RELATIONS"]

#: The keys of ``pairs`` and whether the two rows share a label.
RELATIONS = {"must": True, "cannot": False}


def _pair_list(pairs) -> list:
    """[(i, j, same)] from the ``pairs`` argument, its form checked (one line on error)."""
    if not isinstance(pairs, dict):
        raise InputError("pairs must be a dict {'must': [(i, j), ...], 'cannot': [(i, j), ...]} "
                         f"of row pairs, got {type(pairs).__name__}")
    unknown = [key for key in pairs if key not in RELATIONS]
    if unknown:
        raise InputError(f"pairs has the key {unknown[0]!r}: the keys are 'must' (rows that "
                         "share a label) and 'cannot' (rows whose labels differ)")
    out = []
    for key, same in RELATIONS.items():
        for pair in pairs.get(key) or ():
            try:
                i, j = pair
            except (TypeError, ValueError):
                raise InputError(f"pairs[{key!r}] holds {pair!r}: each entry is a pair of row "
                                 "numbers (i, j)") from None
            for row in (i, j):
                if not isinstance(row, numbers.Integral) or isinstance(row, bool):
                    raise InputError(f"pairs[{key!r}] holds {pair!r}: row numbers are integers "
                                     "(rows numbered from 0)")
            out.append((int(i), int(j), same, key))
    return out


def pairs_to_groups(n: int, group: Optional[np.ndarray], pairs) -> Optional[np.ndarray]:
    """The signed group column (int64, length n) that states both ``group`` and ``pairs``.

    Parameters
    ----------
    n : int
        The number of rows.
    group : ndarray of int, optional
        The data's own group column (None: none).
    pairs : dict
        ``{"must": [(i, j), ...], "cannot": [(i, j), ...]}``, rows numbered from 0.

    Returns
    -------
    ndarray or None
        One id per row: rows joined by groups or pairs share |id|, on the same side when they
        share a label; 0 for a row in no relation. None when there are neither groups nor pairs.

    Raises
    ------
    InputError
        A malformed ``pairs``, a row out of range, a row paired with itself, or a pair that
        contradicts the others (an odd cycle of cannot-links), named.
    """
    listed = _pair_list(pairs)
    if not listed:
        return None if group is None else np.asarray(group, dtype=np.int64)
    parent = np.arange(n)
    parity = np.zeros(n, dtype=np.int64)   # label of a row = label of its root x (-1)^parity

    def find(i: int) -> tuple[int, int]:
        path = []
        while parent[i] != i:
            path.append(i)
            i = int(parent[i])
        root, odd = i, 0
        for node in reversed(path):   # compress: parity to the root, nearest node last
            odd ^= int(parity[node])
            parity[node] = odd
            parent[node] = root
        return root, (int(parity[path[0]]) if path else 0)

    def join(i: int, j: int, same: bool, what: str) -> None:
        ri, pi = find(i)
        rj, pj = find(j)
        differ = 0 if same else 1
        if ri == rj:
            if (pi ^ pj) != differ:
                raise InputError(f"pairs contradict each other or the group column: {what} "
                                 f"(rows numbered from 0) closes a cycle that asks a row to "
                                 "differ from itself")
            return
        parent[rj] = ri
        parity[rj] = pi ^ pj ^ differ

    if group is not None:
        g = np.asarray(group, dtype=np.int64)
        first: dict = {}
        for row in np.flatnonzero(g != 0):
            key = abs(int(g[row]))
            if key not in first:
                first[key] = int(row)
            else:
                anchor = first[key]
                join(anchor, int(row), bool(np.sign(g[anchor]) == np.sign(g[row])),
                     f"group {key}")
    related = np.zeros(n, dtype=bool) if group is None else np.asarray(group) != 0
    for i, j, same, key in listed:
        what = f"the {key}-link pair ({i}, {j})"
        for row in (i, j):
            if not 0 <= row < n:
                raise InputError(f"{what} names row {row}, beyond the data's {n} rows "
                                 "(rows numbered from 0)")
        if i == j:
            raise InputError(f"{what} pairs a row with itself")
        join(i, j, same, what)
        related[i] = related[j] = True
    out = np.zeros(n, dtype=np.int64)
    ids: dict = {}
    for row in np.flatnonzero(related):
        root, odd = find(int(row))
        number = ids.setdefault(root, len(ids) + 1)
        out[row] = -number if odd else number
    return out
