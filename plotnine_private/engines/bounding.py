"""Bounded contributions inside an engine (DuckDB, Polars, Spark).

The engine twin of :mod:`plotnine_private.mechanisms.release.bounding`: before
a
private layer or table groups a :class:`~.source.Source`'s records into
cells, each privacy unit keeps its ``max_records`` records with the
smallest public keyed hash of (unit, record). The hash is the very
integer arithmetic of :func:`~plotnine_private.mechanisms.release.bounding.
order_keys` (:func:`~plotnine_private.mechanisms.naming.idhash.key_ints` is
duck-typed), so the engine keeps the records the in-memory path keeps;
the choice is a window (row number over the unit, ordered by the hash)
and a filter, and only the cells leave the engine.

Identifiers are named as memory names them
(:mod:`plotnine_private.identifiers`): an integer column names itself in
the query (negative values too); any other column (text, non-whole
floats, dates) is named through a table of its distinct values computed
by memory's own function and joined back, and a record without a
``record_id`` by its content (:mod:`.id_tables`). A record whose unit or
record identifier is missing is left out. The window partitions by the
unit's name and orders by the keyed hash of the (unit, record) names,
so a unit's kept records depend on its own records only.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import PlotninePrivateError
from ..mechanisms.naming.idhash import SPAN, key_ints, pair_keys
from ..mechanisms.release.bounding import labels, pair_seed
from ..units import Unit
from .id_tables import TABLE_ENGINES, coded, content_codes

__all__ = [
    "DERIVED",
    "RECORD_CODE",
    "UNIT_CODE",
    "bound",
    "bounded_frame",
    "check_unit_columns",
    "order_key_stages",
]

#: the prefix of the columns a query adds to a source (a date axis's days
#: since 1970): functions of a record, not its content, which is named
#: by the source's own columns as memory names it
DERIVED = "__pnp_"

_KEY = "_uord"
#: the column of a record's keyed order within its unit
KEY = _KEY
_RANK = "_urank"


class _Stages:
    """Projections a keyed hash is computed in (the ``stage`` hook of
    :func:`~plotnine_private.mechanisms.naming.idhash.key_ints`): each call
    becomes one projection of fresh columns, so every intermediate value
    is computed once per record."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.stages: list[dict[str, Any]] = []

    def __call__(self, values: dict) -> dict:
        import narwhals as nw

        i = len(self.stages)
        names = {k: f"{self.prefix}{i}_{k}" for k in values}
        self.stages.append({names[k]: v for k, v in values.items()})
        return {k: nw.col(n) for k, n in names.items()}

    def add(self, name: str, expr: Any) -> Any:
        import narwhals as nw

        self.stages.append({name: expr})
        return nw.col(name)


def order_key_stages(
    unit: Any,
    record: Any,
    salt: int | str | None,
    name: str,
    bounding: str = "v2",
) -> list[dict[str, Any]]:
    """Projections (applied in turn) ending with the column ``name``:
    :func:`~plotnine_private.mechanisms.release.bounding.order_keys` of two
    narwhals integer expressions (int64 identifiers of any sign).

    >>> import narwhals as nw, polars as pl, numpy as np
    >>> from plotnine_private.mechanisms.release.bounding import order_keys
    >>> lf = nw.from_native(pl.LazyFrame({"u": [3, 3], "r": [0, 1]}))
    >>> for st in order_key_stages(nw.col("u"), nw.col("r"), None, "k"):
    ...     lf = lf.with_columns(**st)
    >>> lf.collect()["k"].to_list() == order_keys(
    ...     np.array([3, 3]), np.array([0, 1])).tolist()
    True
    """
    staged = _Stages("_ub")
    if bounding == "v2":
        seed = pair_seed(salt)
        staged.add(name, pair_keys(unit, record, seed, stage=staged))
        return staged.stages
    unit_label, record_label = labels(salt)
    hu = staged.add("_ubhu", key_ints(unit, unit_label, stage=staged))
    # both terms are below SPAN < 2**62: the sum stays below 2**63
    mixed = staged.add("_ubmix", (hu + record % SPAN) % SPAN)
    staged.add(name, key_ints(mixed, record_label, stage=staged))
    return staged.stages


def check_unit_columns(name: str, src: Any, cells: bool = True) -> None:
    """Refuse, from the table's schema alone (before any query), a unit
    an engine cannot bound: ``max_cells`` where a layer's cells cannot be
    named in it (an engine that cannot join a table of names,
    :data:`~.id_tables.TABLE_ENGINES`: Ibis; ``cells=False``: a private
    table), and in an engine that cannot join a table of names,
    identifiers that are not integer columns or no ``record_id``."""
    unit: Unit = src.unit
    if not unit.bounded:
        return
    if unit.max_cells is not None and (
        not cells or src.engine not in TABLE_ENGINES
    ):
        raise PlotninePrivateError(
            f"{name}(): max_cells={unit.max_cells} is not supported for "
            + (
                f"a table in the {src.engine} engine (its cells cannot be "
                "named by a table joined in the query; DuckDB, Polars and "
                "Spark can), "
                if cells
                else "a private table of a table in an engine (the "
                "layers of a plot bound cells there), "
            )
            + "nor max_records_per_cell with it. Leave max_cells out (a unit "
            f"then reaches at most max_records={unit.max_records} cells), "
            "or collect the rows into a pandas or polars DataFrame."
        )
    if src.engine in TABLE_ENGINES:
        return
    if unit.record_id is None:
        raise PlotninePrivateError(
            f"{name}(): a table in the {src.engine} engine with "
            f"unit={unit.column!r} needs record_id='<column>': a column "
            "of whole numbers naming each record within its unit (only "
            "DuckDB, Polars and Spark name records by their content). "
            "Add one in the engine, e.g. SQL 'row_number() OVER () AS "
            "rid' stored once with the table, and pass record_id='rid'."
        )
    schema = src.schema
    for what, col in (("unit", unit.column), ("record_id", unit.record_id)):
        dtype = schema[col]
        if not dtype.is_integer():
            raise PlotninePrivateError(
                f"{name}(): {what}={col!r} is a column of {dtype}; in the "
                f"{src.engine} engine the unit and the record identifier "
                "must be whole-number (integer) columns (DuckDB, Polars "
                "and Spark take any). Derive an integer id in the engine, "
                "e.g. join a lookup table (SELECT DISTINCT "
                f"{col}, row_number() OVER () AS {col}_id) and pass "
                f"{what}='{col}_id'."
            )


#: the columns of a record's unit code and record code in a bounded frame
UNIT_CODE = "_ucode"
RECORD_CODE = "_rcode"


def _ids(src: Any, frame: Any, column: str, code: str) -> Any:
    """``frame`` with ``code``, memory's int64 name of ``column``'s values,
    records whose value is missing left out: an integer column names
    itself (cast in the query), any other is named through a table of
    its distinct values (:func:`~.id_tables.coded`)."""
    import narwhals as nw

    if src.schema[column].is_integer():
        named = frame.filter(~nw.col(column).is_null())
        return named.with_columns(**{code: nw.col(column).cast(nw.Int64)})
    return coded(frame, src.engine, column, code)


def bounded_frame(src: Any) -> Any:
    """``src.frame`` with each unit's records bounded (the frame itself
    when the unit is one row); with ``keep_bounded`` the rows bounded by
    the first call, kept in the engine (:meth:`~.source.Source.
    bounded_rows`).

    A record whose unit or record identifier is missing (NULL, or NaN in
    a float column) is left out, as in memory: it belongs to no unit the
    bound could count. Every other identifier, negative ones and text
    too, is named as memory names it (:mod:`.id_tables`)."""
    if not src.unit.bounded:
        return src.frame
    return src.bounded_rows()


def bound(src: Any) -> Any:
    """The bounded rows of ``src`` as a lazy query (:func:`bounded_frame`
    without the kept rows)."""
    import narwhals as nw

    unit: Unit = src.unit
    assert unit.column is not None  # a bounded unit names its column
    frame = _ids(src, src.frame, unit.column, UNIT_CODE)
    u = nw.col(UNIT_CODE)
    if unit.record_id is not None:
        frame = _ids(src, frame, unit.record_id, RECORD_CODE)
    else:
        # named by content, for the units over the bound only
        over = nw.col(UNIT_CODE).count().over(UNIT_CODE) > unit.max_records
        if unit.max_records_per_cell is not None:
            # a unit within the bound still ranks its records per cell
            over = nw.lit(True)
        frame = content_codes(
            frame,
            src.engine,
            [c for c in src.columns if not c.startswith(DERIVED)],
            over,
            RECORD_CODE,
            unit.bounding,
        )
    r = nw.col(RECORD_CODE)
    for stage in order_key_stages(u, r, unit.salt, _KEY, unit.bounding):
        frame = frame.with_columns(**stage)
    rank = nw.col(_KEY).rank("ordinal").over(UNIT_CODE)
    return frame.with_columns(**{_RANK: rank}).filter(
        nw.col(_RANK) <= unit.max_records
    )
