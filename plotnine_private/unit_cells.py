"""Which records a privacy unit keeps when it may open at most
``max_cells`` cells (:func:`limit_cells`), with the cells named by their
content (:func:`cell_ids`), so that the choice does not depend on which
levels other records have; at most ``max_records_per_cell`` records in
each cell (:func:`limit_per_cell`); and one record per unit and cell for
counts of units (:func:`one_per_cell`).

No plotnine here (numpy, and pandas' hash tables).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .cells import Dimension, combined_codes
from .mechanisms.naming.cellnames import cell_words
from .mechanisms.naming.idhash import SPAN
from .mechanisms.naming.idhash import key_ints as id_hash
from .mechanisms.release.bounding import cells_mask

__all__ = ["cell_ids", "limit_cells", "limit_per_cell", "one_per_cell"]

#: the public label of the hash that names a cell by its content
_CELL_LABEL = "pnp-cell-id-v1"


def cell_ids(dims: Sequence[Dimension], codes: np.ndarray) -> np.ndarray:
    """A 62-bit integer naming each combined cell code by the cell's
    content (its noise words, :func:`cell_table`), not by its place in
    the domain: an observed level's place depends on which levels other
    records have, its content does not.

    >>> import pandas as pd
    >>> from plotnine_private.cells import categorical_dimension
    >>> a = categorical_dimension("x", pd.Series(["b", "c"]), None)
    >>> b = categorical_dimension("x", pd.Series(["a", "c"]), None)
    >>> int(cell_ids([a], np.array([1]))[0]) == int(
    ...     cell_ids([b], np.array([1]))[0])
    True
    """
    uniq, inverse = np.unique(np.asarray(codes), return_inverse=True)
    index = (
        np.column_stack(np.unravel_index(uniq, [d.size for d in dims]))
        if len(uniq)
        else np.zeros((0, len(dims)), dtype=np.int64)
    )
    content = [
        np.asarray(col)[index[:, j]]
        for j, d in enumerate(dims)
        for col in d.content
    ]
    words = cell_words(*content) if len(uniq) else np.zeros((0, 1), np.uint64)
    # fold the words up to each row's last non-zero word: the zero words
    # that pad a row to the longest row of the call are not its content
    nonzero = words != 0
    length = np.where(
        nonzero.any(axis=1),
        words.shape[1] - np.argmax(nonzero[:, ::-1], axis=1),
        0,
    )
    h = np.zeros(len(uniq), dtype=np.int64)
    for j in range(words.shape[1]):
        w = words[:, j]
        for half in (w & np.uint64(0xFFFFFFFF), w >> np.uint64(32)):
            mixed = id_hash((h + half.astype(np.int64)) % SPAN, _CELL_LABEL)
            h = np.where(j < length, mixed, h)
    return h[inverse.ravel()]


def limit_cells(
    dims: Sequence[Dimension],
    units: np.ndarray,
    max_cells: int,
    salt: int | str | None = None,
    bounding: str = "v2",
) -> np.ndarray:
    """Which records their privacy unit keeps when it may fall in at most
    ``max_cells`` cells of the domain (``units``: each record's unit as
    an integer;
    :func:`~plotnine_private.mechanisms.release.bounding.cells_mask`
    on the cells' content). Records outside the domain open no cell and
    are kept (they are not counted)."""
    code, bad = combined_codes(dims)
    keep = np.ones(len(code), dtype=bool)
    inside = np.flatnonzero(~bad)
    if len(inside):
        ids = cell_ids(dims, code[inside])
        keep[inside] = cells_mask(
            np.asarray(units)[inside], ids, max_cells, salt, bounding
        )
    return keep


def _groups(
    dims: Sequence[Dimension], units: np.ndarray, keep: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The records inside the domain (and kept), their units and their
    combined cell codes. Codes are compared for equality only: which of
    a unit's records share a cell depends on that unit's records alone."""
    code, bad = combined_codes(dims)
    ok = ~bad if keep is None else ~bad & np.asarray(keep, dtype=bool)
    rows = np.flatnonzero(ok)
    return rows, np.asarray(units, dtype=np.int64)[rows], code[rows]


def _pair_index(units: np.ndarray, code: np.ndarray) -> np.ndarray:
    """One int64 per (unit, cell) pair, equal for equal pairs: the unit's
    place among the units met (a hash table, no sort) times the number
    of cell codes, plus the code."""
    u = pd.factorize(units)[0].astype(np.int64)
    width = int(code.max()) + 1 if len(code) else 1
    if len(u) and int(u.max()) >= (1 << 62) // width:  # pragma: no cover
        # too many (unit, cell) combinations to pack: number the pairs
        pairs = pd.MultiIndex.from_arrays([u, code])
        return pd.factorize(pairs)[0].astype(np.int64)
    return u * width + code


def _ranks(units: np.ndarray, code: np.ndarray, order: np.ndarray | None):
    """Each record's place (0, 1, ...) among its unit's records in its
    cell, by ``order`` (smallest first; equal keys by position; None:
    by position)."""
    pair = _pair_index(units, code)
    if order is None:
        # only the first of each pair matters here: no sort
        return pd.Series(pair).duplicated().to_numpy().astype(np.int64)
    by = np.lexsort((order, pair))
    p = pair[by]
    start = np.r_[True, p[1:] != p[:-1]]
    place = np.arange(len(by))
    rank = np.empty(len(by), dtype=np.int64)
    rank[by] = place - np.maximum.accumulate(np.where(start, place, 0))
    return rank


def limit_per_cell(
    dims: Sequence[Dimension],
    units: np.ndarray,
    order: np.ndarray,
    max_per_cell: int,
    keep: np.ndarray | None = None,
) -> np.ndarray:
    """Which records their unit keeps when it may have at most
    ``max_per_cell`` records in each cell of the domain: the records with
    the smallest ``order`` (the public keyed order of (unit, record),
    :func:`~plotnine_private.mechanisms.release.bounding.order_keys`)
    among the unit's records in that cell, never chosen by a value.
    ``keep``: records already left out stay out. Records outside the
    domain are kept (they are not counted).

    >>> from plotnine_private.cells import categorical_dimension
    >>> import pandas as pd
    >>> d = categorical_dimension("x", pd.Series(list("aaab")), ["a", "b"])
    >>> limit_per_cell([d], np.array([1, 1, 1, 1]), np.array([3, 1, 2, 0]),
    ...                2).tolist()
    [False, True, True, True]
    """
    out = np.ones(len(units), dtype=bool) if keep is None else keep.copy()
    rows, u, c = _groups(dims, units, keep)
    if len(rows):
        order = np.asarray(order, dtype=np.int64)[rows]
        out[rows] = _ranks(u, c, order) < max_per_cell
    return out


def one_per_cell(
    dims: Sequence[Dimension],
    units: np.ndarray,
    key_ints: np.ndarray | None = None,
    keep: np.ndarray | None = None,
) -> np.ndarray:
    """Which records count a unit in its cell when cells count units, not
    records: one record per (unit, cell), the one with the smallest CKM
    key integer (``key_ints``; any record without keys), so that a cell's
    key sum is the sum of its units' smallest keys (their own keys when
    keys are drawn per unit: ``add_record_keys(..., unit=...)``).
    Records outside the domain are left out (they are not counted).

    >>> from plotnine_private.cells import categorical_dimension
    >>> import pandas as pd
    >>> d = categorical_dimension("x", pd.Series(list("aaab")), ["a", "b"])
    >>> one_per_cell([d], np.array([1, 1, 2, 1]), np.array([5, 4, 9, 1])
    ...              ).tolist()
    [False, True, True, True]
    """
    out = np.zeros(len(units), dtype=bool)
    rows, u, c = _groups(dims, units, keep)
    if len(rows):
        order = (
            None
            if key_ints is None
            else np.asarray(key_ints, dtype=np.int64)[rows]
        )
        out[rows] = _ranks(u, c, order) == 0
    return out
