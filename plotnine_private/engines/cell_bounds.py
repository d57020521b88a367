"""``max_cells`` and ``max_records_per_cell`` inside an engine.

The engine twin of :func:`~plotnine_private.unit_cells.limit_cells` and
:func:`~plotnine_private.unit_cells.limit_per_cell`: each unit keeps the
records of its ``max_cells`` cells with the smallest keyed hash of
(unit, cell), a cell named by its content, and in each of them its
``max_records_per_cell`` records first in the keyed order of (unit,
record).

A cell's name (:func:`~plotnine_private.unit_cells.cell_ids`) is a hash
of its content that no engine computes alike. So, as with text ids
(:mod:`.id_tables`), the layer's distinct cells are grouped in the engine
first (one row per cell: few), named in Python by memory's own function,
and the small table (cell keys, name) is joined back to the records.
Then two windows over the unit (a dense rank of the hash of (unit, cell),
a row number within (unit, cell) by the record's order key) and a
filter, all in the engine; only the cells leave it. The numbers equal
memory's (``tests/test_unit_counts.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..cells import Dimension, combined_codes
from ..mechanisms.naming.idhash import pair_keys
from ..mechanisms.release.bounding import pair_seed
from ..unit_cells import cell_ids
from .id_tables import upload

__all__ = ["limit_cells_in_engine"]

_CELL = "_pnp_cell"
_CELL_KEY = "_pnp_cellkey"
_CELL_RANK = "_pnp_cellrank"
_PER_CELL = "_pnp_percell"


def limit_cells_in_engine(
    frame: Any,
    src: Any,
    *,
    keys: dict[str, Any],
    stages: Sequence[dict[str, Any]],
    where: Any,
    distinct: pd.DataFrame,
    dims: Callable[[pd.DataFrame], list[Dimension]],
) -> Any:
    """``frame`` (bounded rows of ``src``, with the unit's code and the
    records' order keys) without the records its units do not keep.

    ``keys`` and ``stages``: the layer's cell keys (as for
    :func:`~.push.grouped`); ``where``: its filter of the records;
    ``distinct``: its grouped rows, every cell inside the domain once;
    ``dims(rows)``: the layer's dimensions of grouped rows (memory's:
    their content names the cells)."""
    import narwhals as nw

    from .bounding import KEY, UNIT_CODE

    unit = src.unit
    names = [*keys, *(stages[-1] if stages else {})]
    d = dims(distinct)
    code, bad = combined_codes(d)
    inside = np.flatnonzero(~bad)
    table = distinct.loc[inside, names].reset_index(drop=True)
    table[_CELL] = (
        cell_ids(d, code[inside])
        if len(inside)
        else np.zeros(0, dtype=np.int64)
    )
    lf = frame if where is None else frame.filter(where)
    lf = lf.with_columns(**keys, **(stages[0] if stages else {}))
    for projection in list(stages)[1:]:
        lf = lf.with_columns(**projection)
    schema = lf.collect_schema()
    named = upload(lf, src.engine, table, None)
    # the keys joined in the engine's own types
    named = named.with_columns(**{n: nw.col(n).cast(schema[n]) for n in names})
    lf = lf.join(named, on=names, how="left")
    staged: list[dict[str, Any]] = []

    def stage(values: dict) -> dict:
        i = len(staged)
        cols = {f"_pnp_ch{i}_{k}": v for k, v in values.items()}
        staged.append(cols)
        return {k: nw.col(f"_pnp_ch{i}_{k}") for k in values}

    seed = pair_seed(unit.salt, "cells")
    cell = nw.col(_CELL).fill_null(0)
    h = pair_keys(nw.col(UNIT_CODE), cell, seed, stage=stage)
    staged.append({_CELL_KEY: h})
    for st in staged:
        lf = lf.with_columns(**st)
    # a record outside the domain opens no cell (and is not counted)
    lf = lf.with_columns(
        **{
            _CELL_KEY: nw.when(nw.col(_CELL).is_null())
            .then(nw.lit(None, dtype=nw.Int64))
            .otherwise(nw.col(_CELL_KEY))
        }
    )
    rank = nw.col(_CELL_KEY).rank("dense").over(UNIT_CODE)
    lf = lf.with_columns(**{_CELL_RANK: rank})
    keep = nw.col(_CELL_RANK).is_null() | (
        nw.col(_CELL_RANK) <= unit.max_cells
    )
    if unit.max_records_per_cell is not None:
        within = nw.col(KEY).rank("ordinal").over(UNIT_CODE, _CELL)
        lf = lf.with_columns(**{_PER_CELL: within})
        keep = keep & (
            nw.col(_CELL).is_null()
            | (nw.col(_PER_CELL) <= unit.max_records_per_cell)
        )
    return lf.filter(keep)
