"""Which records a privacy unit keeps when it may open at most
``max_cells`` cells (:func:`limit_cells`), with the cells named by their
content (:func:`cell_ids`), so that the choice does not depend on which
levels other records have.

No plotnine here (numpy only).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .cells import Dimension, combined_codes
from .mechanisms.naming.cellnames import cell_words
from .mechanisms.naming.idhash import SPAN
from .mechanisms.naming.idhash import key_ints as id_hash
from .mechanisms.release.bounding import cells_mask

__all__ = ["cell_ids", "limit_cells"]

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
