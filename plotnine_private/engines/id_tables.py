"""Identifiers of any kind inside an engine, named as memory names them.

In memory (:mod:`plotnine_private.identifiers`) a whole number names
itself and any other value (a string, a non-whole float, a date) is
named by a 62-bit blake2b hash of its typed text; a record without a
``record_id`` is named by a hash of its content
(:func:`~plotnine_private.identifiers.content_ids`). Neither hash can be
written in SQL, Polars and Spark expressions alike (their built-in hashes
differ, and none of them is blake2b). So an engine does not recompute
them: the *distinct* values are read once, named in Python by the very
functions memory uses, and the small table (value, code) is joined back
in the engine (:func:`coded`). The codes are then memory's codes, and
the keyed order of :mod:`.bounding` keeps the records memory keeps.

* A unit or record identifier that is not an integer column: the table
  has one row per distinct value (a missing value gets no row, so its
  records are left out by the inner join, as memory leaves them out).
  Distinct units are 10**6 to 10**7 at most in practice: about four
  seconds per million (reading them, blake2b of each value's text, the
  join; ``benchmarks/bound_once.py``).
* No ``record_id``: a record is named by its content. The engine
  fingerprints each row with its own 64-bit hash of every column (DuckDB
  ``hash``, Polars ``struct().hash``, Spark ``xxhash64``; used only to
  join within that engine, never as a name), reads the distinct
  (fingerprint, row) pairs of the units over the bound (the others keep
  every record, so their records need no name), names them with
  :func:`~plotnine_private.identifiers.content_ids` and joins the
  (fingerprint, name) table back. Two different rows with one
  fingerprint (a chance of about ``n**2 / 2**64`` for ``n`` distinct
  rows) are detected and refused.

Tables are uploaded to the engine of the source: an Arrow table
scanned by the relation's own connection, a Polars LazyFrame, a Spark
DataFrame of the frame's session. Other narwhals backends (Ibis) keep
the rule that identifiers be integer columns and a ``record_id`` given.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import PlotninePrivateError
from ..identifiers import content_ids, id_codes

__all__ = ["TABLE_ENGINES", "coded", "content_codes", "upload"]

#: engines that can join a table of names computed in Python
TABLE_ENGINES = ("duckdb", "polars", "pyspark")


def upload(frame: Any, engine: str, table: pd.DataFrame, like: Any) -> Any:
    """``table`` (pandas) as a narwhals LazyFrame of ``engine``, joinable
    with ``frame`` (its connection, its session); ``like`` is the native
    eager frame the table's key columns were read from (their types)."""
    import narwhals as nw

    native = frame.to_native()
    if engine == "duckdb":
        import pyarrow as pa

        arrow = pa.Table.from_pandas(table, preserve_index=False)
        if like is not None:
            # the key columns keep the engine's own types
            for name in like.column_names:
                i = arrow.schema.get_field_index(name)
                arrow = arrow.set_column(i, name, like.column(name))
        # scanned by the relation's own connection (a relation of another
        # connection cannot be joined with it), which holds the table
        # for as long as the relation lives: nothing is left behind
        _pnp_names = arrow  # noqa: F841 (read by DuckDB's scan)
        return nw.from_native(
            native.query("_pnp_src", "SELECT * FROM _pnp_names")
        )
    if engine == "polars":
        import polars as pl

        out = pl.from_pandas(table)
        if like is not None:
            out = out.with_columns(like.get_columns())
        return nw.from_native(out.lazy())
    session = native.sparkSession
    schema = None
    if like is not None:
        from pyspark.sql.types import LongType, StructField, StructType

        fields = [f for f in like if f.name in table.columns]
        extra = [
            StructField(c, LongType(), False)
            for c in table.columns
            if c not in like.fieldNames()
        ]
        schema = StructType(fields + extra)
    return nw.from_native(session.createDataFrame(table, schema=schema))


def _distinct(frame: Any, engine: str, columns: list[str]) -> tuple:
    """The distinct rows of ``columns`` as pandas, and a native record of
    their types for :func:`upload`."""
    part = frame.select(*columns).unique()
    if engine == "duckdb":
        arrow = part.to_native().to_arrow_table()
        return arrow.to_pandas(), arrow
    if engine == "polars":
        eager = part.to_native().collect()
        return eager.to_pandas(), eager
    native = part.to_native()
    return native.toPandas(), native.schema


def coded(frame: Any, engine: str, column: str, code: str) -> Any:
    """``frame`` with the int64 column ``code``: memory's name of each
    value of ``column`` (:func:`~plotnine_private.identifiers.id_codes`);
    records whose value is missing are left out (an inner join)."""
    import narwhals as nw

    key = f"{code}_v"
    dtype = frame.collect_schema()[column]
    value = nw.col(column)
    if isinstance(dtype, (nw.Enum, nw.Categorical)):
        # joined as text: a category's name is its value's
        value = value.cast(nw.String)
    keyed = frame.with_columns(**{key: value})
    distinct, like = _distinct(
        keyed.filter(~nw.col(key).is_null()), engine, [key]
    )
    codes, missing = id_codes(distinct[key])
    keep = np.ones(len(codes), dtype=bool) if missing is None else ~missing
    table = pd.DataFrame({key: distinct[key][keep], code: codes[keep]})
    like = _subset(like, engine, keep)
    names = upload(frame, engine, table, like)
    return keyed.join(names, on=key, how="inner").drop(key)


def _subset(like: Any, engine: str, keep: np.ndarray) -> Any:
    """The rows ``keep`` of a native eager frame (its types for
    :func:`upload`; Spark's is a schema, kept whole)."""
    if keep.all() or engine == "pyspark":
        return like
    if engine == "duckdb":
        import pyarrow as pa

        return like.filter(pa.array(keep))
    return like.filter(keep)


def _fingerprint(frame: Any, engine: str, columns: list[str], name: str):
    """``frame`` with ``name``: the engine's own 64-bit hash of the row's
    ``columns`` (int64), null flags included."""
    import narwhals as nw

    native = frame.to_native()
    if engine == "duckdb":
        args = ", ".join(f'"{c}"' for c in columns)
        sql = f"SELECT *, CAST(hash({args}) >> 1 AS BIGINT) AS {name} FROM _t"
        return nw.from_native(native.query("_t", sql))
    if engine == "polars":
        import polars as pl

        h = pl.struct([pl.col(c) for c in columns]).hash(seed=20260601)
        return nw.from_native(
            native.with_columns((h // 2).cast(pl.Int64).alias(name))
        )
    from pyspark.sql import functions as F

    parts = []
    for c in columns:
        # xxhash64 skips nulls: the flags tell (null, 1) from (1, null)
        parts += [F.col(f"`{c}`"), F.col(f"`{c}`").isNull()]
    return nw.from_native(native.withColumn(name, F.xxhash64(*parts)))


def content_codes(
    frame: Any,
    engine: str,
    columns: list[str],
    over: Any,
    code: str,
    bounding: str,
) -> Any:
    """``frame`` with ``code``: each record's name by its content
    (:func:`~plotnine_private.identifiers.content_ids` of ``columns``, in
    that order) where ``over`` (a boolean expression: its unit has more
    records than the bound) holds, and 0 elsewhere (a unit that keeps all
    its records needs no order)."""
    import narwhals as nw

    fp = f"{code}_fp"
    printed = _fingerprint(frame, engine, columns, fp)
    marked = printed.with_columns(_pnp_over=over)
    part = marked.filter(nw.col("_pnp_over"))
    rows, _ = _distinct(part, engine, [fp, *columns])
    names = content_ids(rows[columns].reset_index(drop=True), None, bounding)
    table = pd.DataFrame({fp: rows[fp].to_numpy(np.int64), code: names})
    table = table.drop_duplicates()
    if table[fp].duplicated().any():
        raise PlotninePrivateError(
            f"source(): two different records share the {engine} engine's "
            "64-bit fingerprint, which names records without a "
            "record_id there. Give record_id='<column>' (a column naming "
            "each record within its unit)."
        )
    if not len(table):
        return marked.with_columns(**{code: nw.lit(0, dtype=nw.Int64)})
    names_frame = upload(frame, engine, table, None)
    joined = marked.join(names_frame, on=fp, how="left")
    return joined.with_columns(
        **{code: nw.col(code).fill_null(0).cast(nw.Int64)}
    ).drop(fp)
