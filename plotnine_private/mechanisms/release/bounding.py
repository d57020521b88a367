"""Bounded contributions: each privacy unit keeps at most ``k`` records.

A privacy unit (a person, a household, a firm) may own many rows. Before
any aggregation, each unit keeps at most ``max_records`` of its records:
those with the smallest keyed hash of (unit, record), where the record is
named by a record identifier (a column, or in memory a hash of the
record's content; never its position, which removing another unit's
rows would shift). The choice of unit ``u``'s records depends on ``u``'s
records only, so on two data sets that differ in one unit the bounded
data differ in at most ``k`` records of that unit (add/remove) or ``k``
removed and ``k`` added (replace). Every mechanism then scales its
sensitivity by ``k``: that is the whole privacy argument, and it needs no
secret in the hash (the hash is public and fixed, which makes the
choice reproducible by anyone with the data, e.g. an output checker).

The order (``pnp-bounding-v2``, the default): ``pair_keys(unit, record)``
of :mod:`.idhash`, one keyed chain of five rounds over the words of the
unit and the record, with the record's low 32 bits behind it as a tie
break; the key is the public label :data:`LABEL` (optionally extended by
a user's ``salt``). Integer arithmetic only, so numpy and every engine
keep the same records. The earlier order ``pnp-bounding-v1`` (two nested
eight-round hashes, ``key_ints((key_ints(unit) + record) mod SPAN)``)
stays selectable with ``bounding="v1"``; it keeps other records (each
order is a release's own: a bounded query names its order). Ties (two
records of one unit with one identifier) keep the one an engine meets
first, which differs between engines: record identifiers must be unique
within a unit for identical numbers.

Only numpy here; the engines' expression twin is in
:mod:`plotnine_private.engines.bounding`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterError
from ..naming.idhash import (
    SPAN,
    key_ints_array,
    pair_keys_array,
    unit_parts_array,
)

__all__ = [
    "BOUNDINGS",
    "LABEL",
    "bounded_mask",
    "cells_mask",
    "labels",
    "order_keys",
    "pair_seed",
]

#: the public labels of the orders a unit's records are kept in, by the
#: name ``pp.source(bounding=...)`` takes
BOUNDINGS = {"v1": "pnp-bounding-v1", "v2": "pnp-bounding-v2"}
#: the label of the default order
LABEL = BOUNDINGS["v2"]


def labels(salt: int | str | None = None) -> tuple[str, str]:
    """The two hash labels (unit, then record) of ``pnp-bounding-v1``
    for ``salt``."""
    base = BOUNDINGS["v1"]
    base = base if salt is None else f"{base}:{salt}"
    return base + ":unit", base + ":record"


def pair_seed(salt: int | str | None = None, what: str = "record") -> str:
    """The key of ``pnp-bounding-v2``'s hash of (unit, ``what``)."""
    base = LABEL if salt is None else f"{LABEL}:{salt}"
    return f"{base}:{what}"


def _check_bounding(bounding: str) -> None:
    if bounding not in BOUNDINGS:
        raise ParameterError(
            f"bounding={bounding!r} is not an order of records; use one "
            f"of {sorted(BOUNDINGS)} (default 'v2')."
        )


def order_keys(
    units: np.ndarray,
    records: np.ndarray,
    salt: int | str | None = None,
    bounding: str = "v2",
) -> np.ndarray:
    """Each record's place in its unit's keyed order (int64, in
    ``[0, 2**63)`` for ``v2``, ``[0, SPAN)`` for ``v1``); ``units`` and
    ``records`` int64 codes (:func:`plotnine_private.identifiers.
    id_codes`)."""
    _check_bounding(bounding)
    if bounding == "v2":
        seed = pair_seed(salt)
        return pair_keys_array(unit_parts_array(units, seed), records, seed)
    unit_label, _ = labels(salt)
    hu = key_ints_array(np.asarray(units, dtype=np.int64), unit_label)
    return _record_keys(hu, np.asarray(records, dtype=np.int64), salt)


def _record_keys(hu: np.ndarray, records: np.ndarray, salt) -> np.ndarray:
    """The order keys from the units' hashes ``hu`` (one per record)."""
    _, record_label = labels(salt)
    mixed = records % SPAN
    mixed += hu
    mixed %= SPAN
    return key_ints_array(mixed, record_label)


#: unit identifiers below this many times the rows are counted with a
#: bincount (no sort); larger ones go through np.unique
_COMPACT = 4


def _units_and_counts(units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A dense index per record and the records per index: the unit
    itself where identifiers are small non-negative integers (the common
    case of person numbers), else the unit's rank among the units."""
    lo, hi = int(units.min()), int(units.max())
    if lo >= 0 and hi < max(_COMPACT * len(units), 1 << 16):
        return units, np.bincount(units)
    _, inverse, counts = np.unique(
        units, return_inverse=True, return_counts=True
    )
    return inverse.ravel(), counts


def bounded_mask(
    units: np.ndarray,
    records: Any,
    max_records: int,
    salt: int | str | None = None,
    bounding: str = "v2",
) -> np.ndarray:
    """Which records their unit keeps: the ``max_records`` with the
    smallest :func:`order_keys` (all of them where the unit has no more;
    of two records with equal keys, the first).

    ``records`` is an int64 array of record identifiers, or a function
    that gives them for the positions it is passed (called for the
    records of units over the bound only: a content hash need not be
    computed for every record).

    Only records of units over the bound are hashed and sorted, and the
    units' own hashes are computed once per unit; small integer units are
    counted without a sort (``tests/test_bounding.py`` checks the result
    against a direct lexsort).

    >>> int(bounded_mask(np.array([1, 1, 1, 2]), np.arange(4), 2).sum())
    3
    """
    _check_bounding(bounding)
    units = np.asarray(units, dtype=np.int64)
    n = len(units)
    keep = np.ones(n, dtype=bool)
    if n == 0:
        return keep
    dense, counts = _units_and_counts(units)
    over_units = np.flatnonzero(counts > max_records)
    if not len(over_units):
        return keep
    is_over = np.zeros(len(counts), dtype=bool)
    is_over[over_units] = True
    rows = np.flatnonzero(is_over[dense])
    d = dense[rows]
    # each over-bound unit hashed once, then looked up per record
    hu_of = np.zeros(len(counts), dtype=np.int64)
    first = np.zeros(len(counts), dtype=np.int64)
    first[d] = rows  # any record of each unit: its unit value
    over_values = units[first[over_units]]
    ids = records(rows) if callable(records) else np.asarray(records)[rows]
    ids = np.asarray(ids, dtype=np.int64)
    if bounding == "v2":
        seed = pair_seed(salt)
        hu_of[over_units] = unit_parts_array(over_values, seed)
        h = pair_keys_array(hu_of[d], ids, seed)
        bits = 63
    else:
        unit_label, _ = labels(salt)
        hu_of[over_units] = key_ints_array(over_values, unit_label)
        h = _record_keys(hu_of[d], ids, salt)
        bits = 62
    kept = _smallest_per_unit(d, h, over_units, counts, max_records, bits)
    keep[rows[~kept]] = False
    return keep


def _smallest_per_unit(
    d: np.ndarray,
    h: np.ndarray,
    over_units: np.ndarray,
    counts: np.ndarray,
    k: int,
    key_bits: int = 62,
) -> np.ndarray:
    """For records of units over the bound (unit index ``d``, key ``h``),
    whether each is among its unit's ``k`` smallest keys (the first of
    equal keys).

    One value sort of a packed key (the unit's rank in the high bits, the
    key's top bits below; faster than an argsort) gives each unit's
    ``k``-th smallest packed key, and a record is kept if its own is not
    larger. Two equal packed keys (a truncated collision, or records with
    one identifier) take the exact path: a lexsort and ranks."""
    pos = np.zeros(len(counts), dtype=np.int64)
    pos[over_units] = np.arange(len(over_units))
    bits = max(1, int(len(over_units) - 1).bit_length())
    room = 63 - bits  # bits left for the key
    if room >= 24:
        rank_of = pos[d]
        packed = rank_of << room
        packed |= h >> max(0, key_bits - room)
        ordered = np.sort(packed)
        if not (ordered[1:] == ordered[:-1]).any():
            first = np.cumsum(counts[over_units]) - counts[over_units]
            return packed <= ordered[first + k - 1][rank_of]
    order = np.lexsort((h, d))
    grp = d[order]
    start = np.r_[True, grp[1:] != grp[:-1]]
    place = np.arange(len(order))
    rank = place - np.maximum.accumulate(np.where(start, place, 0))
    kept = np.empty(len(d), dtype=bool)
    kept[order] = rank < k
    return kept


def cells_mask(
    units: np.ndarray,
    cells: np.ndarray,
    max_cells: int,
    salt: int | str | None = None,
    bounding: str = "v2",
) -> np.ndarray:
    """Which records their unit keeps when it may fall in at most
    ``max_cells`` cells: those in the ``max_cells`` cells with the
    smallest keyed hash of (unit, cell) among the unit's cells.

    ``cells`` identifies each record's cell by its content (int64 in
    ``[0, 2**62)``, never a code that depends on which cells other units
    occupy), so unit ``u``'s choice depends on ``u``'s records only, as
    :func:`bounded_mask`'s does.

    >>> units, cells = np.array([1, 1, 1, 2]), np.array([5, 6, 5, 7])
    >>> int(cells_mask(units, cells, 1).sum())
    2
    """
    units = np.asarray(units, dtype=np.int64)
    cells = np.asarray(cells, dtype=np.int64)
    keep = np.ones(len(units), dtype=bool)
    if len(units) == 0:
        return keep
    _check_bounding(bounding)
    if bounding == "v2":
        seed = pair_seed(salt, "cells")
        h = pair_keys_array(unit_parts_array(units, seed), cells, seed)
    else:
        unit_label, cell_label = labels(salt)
        hu = key_ints_array(units, unit_label + ":cells")
        h = key_ints_array((hu + cells % SPAN) % SPAN, cell_label + ":cells")
    order = np.lexsort((h, units))
    u, hs = units[order], h[order]
    first = np.r_[True, u[1:] != u[:-1]]
    # a new cell of its unit wherever the unit starts or the hash changes
    new = first | np.r_[True, hs[1:] != hs[:-1]]
    distinct = np.cumsum(new)
    start = np.maximum.accumulate(np.where(first, distinct, 0))
    keep[order] = distinct - start < max_cells
    return keep
