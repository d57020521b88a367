"""Test tables in an engine: a DuckDB table whose declared columns are
ENUM types (public levels), as a user would store them."""

from __future__ import annotations

from typing import Any

import pandas as pd

from plotnine_private.engines import Source, source


def duckdb_table(
    d: pd.DataFrame, enums: dict[str, list[str]], **declared: Any
) -> Source:
    """``d`` as a DuckDB table, each column of ``enums`` an ENUM of its
    levels; ``declared`` goes to :func:`source` (e.g. the unit)."""
    import duckdb

    con = duckdb.connect()
    con.register("v", d)
    casts = []
    for col, levels in enums.items():
        con.execute(f"CREATE TYPE {col}_levels AS ENUM {tuple(levels)}")
        casts.append(f"{col}::{col}_levels AS {col}")
    replace = f" REPLACE ({', '.join(casts)})" if casts else ""
    con.execute(f"CREATE TABLE t AS SELECT *{replace} FROM v")
    return source(con, "t", **declared)
