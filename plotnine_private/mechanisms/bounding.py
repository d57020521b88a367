"""Bounded contributions: each privacy unit keeps at most ``k`` records.

A privacy unit (a person, a household, a firm) may own many rows. Before
any aggregation, each unit keeps at most ``max_records`` of its records:
those with the smallest keyed hash of (unit, record), where the record is
named by a record identifier (a column, or the row's position in an
in-memory frame). The choice of unit ``u``'s records depends on ``u``'s
records only, so on two data sets that differ in one unit the bounded
data differ in at most ``k`` records of that unit (add/remove) or ``k``
removed and ``k`` added (replace). Every mechanism then scales its
sensitivity by ``k``: that is the whole privacy argument, and it needs no
secret in the hash (the hash is public and fixed, which makes the
choice reproducible by anyone with the data, e.g. an output checker).

The order: ``h = key_ints((key_ints(unit) + record) mod SPAN)`` with the
public label :data:`LABEL` (optionally extended by a user's ``salt``),
integer arithmetic only (:mod:`.idhash`), so numpy and every engine keep
the same records. Ties (two records of one unit with one identifier)
keep the one an engine meets first, which differs between engines:
record identifiers must be unique within a unit for identical numbers.

Only numpy here; the engines' expression twin is in
:mod:`plotnine_private.engines.bounding`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from .errors import ParameterError
from .idhash import SPAN, key_ints

__all__ = [
    "LABEL",
    "bounded_mask",
    "cells_mask",
    "labels",
    "order_keys",
    "unit_integers",
]

#: the public label the bounding hash is keyed with (versioned)
LABEL = "pnp-bounding-v1"


def labels(salt: int | str | None = None) -> tuple[str, str]:
    """The two hash labels (unit, then record) for ``salt``."""
    base = LABEL if salt is None else f"{LABEL}:{salt}"
    return base + ":unit", base + ":record"


def unit_integers(values: Any, name: str = "unit") -> np.ndarray:
    """Integer identifiers in ``[0, 2**62)`` for ``values``.

    Whole numbers >= 0 are their own identifier (what an engine computes
    too). Other values (strings, negative numbers) get a 62-bit hash of
    their text, in memory only; missing values are refused.

    >>> unit_integers(np.array([3, 1])).tolist()
    [3, 1]
    """
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        if arr.size and arr.min() < 0:
            return _text_hash(arr)
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ParameterError(
                f"{name} has missing values: every record needs a unit."
            )
        if np.all(arr == np.floor(arr)) and (
            arr.min() >= 0 if arr.size else 1
        ):
            return arr.astype(np.int64)
    return _text_hash(arr, name)


def _text_hash(arr: np.ndarray, name: str = "unit") -> np.ndarray:
    uniq, inverse = np.unique(arr.astype(object), return_inverse=True)
    out = np.empty(len(uniq), dtype=np.int64)
    for i, v in enumerate(uniq):
        if v is None or (isinstance(v, float) and v != v):
            raise ParameterError(
                f"{name} has missing values: every record needs a unit."
            )
        digest = hashlib.blake2b(
            repr(v).encode(), digest_size=8, person=b"pnp-unit-id"
        ).digest()
        out[i] = int.from_bytes(digest, "big") >> 2
    return out[inverse.ravel()]


def order_keys(
    units: np.ndarray, records: np.ndarray, salt: int | str | None = None
) -> np.ndarray:
    """Each record's place in its unit's keyed order (int64 in
    ``[0, SPAN)``); ``units`` and ``records`` from
    :func:`unit_integers`."""
    unit_label, record_label = labels(salt)
    hu = key_ints(np.asarray(units, dtype=np.int64), unit_label)
    mixed = (hu + np.asarray(records, dtype=np.int64) % SPAN) % SPAN
    return key_ints(mixed, record_label)


def bounded_mask(
    units: np.ndarray,
    records: np.ndarray,
    max_records: int,
    salt: int | str | None = None,
) -> np.ndarray:
    """Which records their unit keeps: the ``max_records`` with the
    smallest :func:`order_keys` (all of them where the unit has no more).

    Only records of units over the bound are hashed and sorted.

    >>> int(bounded_mask(np.array([1, 1, 1, 2]), np.arange(4), 2).sum())
    3
    """
    units = np.asarray(units, dtype=np.int64)
    n = len(units)
    keep = np.ones(n, dtype=bool)
    if n == 0:
        return keep
    uniq, inverse, counts = np.unique(
        units, return_inverse=True, return_counts=True
    )
    inverse = inverse.ravel()
    over = counts[inverse] > max_records
    if not over.any():
        return keep
    rows = np.flatnonzero(over)
    h = order_keys(units[rows], np.asarray(records)[rows], salt)
    order = np.lexsort((h, inverse[rows]))
    grp = inverse[rows][order]
    starts = np.r_[0, np.flatnonzero(np.diff(grp)) + 1]
    rank = np.arange(len(order)) - np.repeat(
        starts, np.diff(np.r_[starts, len(order)])
    )
    keep[rows[order[rank >= max_records]]] = False
    return keep


def cells_mask(
    units: np.ndarray,
    cells: np.ndarray,
    max_cells: int,
    salt: int | str | None = None,
) -> np.ndarray:
    """Which records their unit keeps when it may fall in at most
    ``max_cells`` cells: those in the ``max_cells`` cells with the
    smallest keyed hash of (unit, cell) among the unit's cells.

    ``cells`` identifies each record's cell by its content (int64 in
    ``[0, 2**62)``, never a code that depends on which cells other units
    occupy), so unit ``u``'s choice depends on ``u``'s records only, as
    :func:`bounded_mask`'s does.

    >>> cells_mask(np.array([1, 1, 1, 2]), np.array([5, 6, 5, 7]), 1).sum()
    np.int64(3)
    """
    units = np.asarray(units, dtype=np.int64)
    cells = np.asarray(cells, dtype=np.int64)
    keep = np.ones(len(units), dtype=bool)
    if len(units) == 0:
        return keep
    unit_label, cell_label = labels(salt)
    hu = key_ints(units, unit_label + ":cells")
    h = key_ints((hu + cells % SPAN) % SPAN, cell_label + ":cells")
    order = np.lexsort((h, units))
    u, hs = units[order], h[order]
    first = np.r_[True, u[1:] != u[:-1]]
    # a new cell of its unit wherever the unit starts or the hash changes
    new = first | np.r_[True, hs[1:] != hs[:-1]]
    distinct = np.cumsum(new)
    start = np.maximum.accumulate(np.where(first, distinct, 0))
    keep[order] = distinct - start < max_cells
    return keep
