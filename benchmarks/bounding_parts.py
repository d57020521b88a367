"""Where the time of bounding in DuckDB goes: the parts of the query.

On a Parquet file (``--file``, with a whole-number ``id`` and a column
``g``, e.g. the one ``benchmarks/engines.py`` writes) and the unit
``person = (id * 2654435761) mod (rows / 4)`` of ``benchmarks/
bounding.py``, it times (best of ``--repeats``, seconds):

* ``cells``: the cells' own ``GROUP BY g`` (what an unbounded count does);
* ``group_by_unit``: a bare ``GROUP BY person`` (a lower bound of any
  exact per-unit choice: every record meets its unit);
* ``window_by_id``: the window over the unit ordered by the identifier
  and the filter ``<= k`` (the bounding without a hash);
* ``hash_v1`` and ``hash_v2``: the order key of each bounding order, as
  the package computes it (narwhals expressions), aggregated so that it
  is computed;
* ``window_hash``, ``qualify_hash`` and ``top_k_hash``: three ways to
  write the bounding itself with DuckDB's own ``hash(person, id)`` as the
  order (the cheapest hash there is, so a lower bound of each form): the
  window and a filter, the same with ``QUALIFY``, and a ``GROUP BY
  person`` keeping the ``k`` smallest with ``arg_min(g, h, k)``.

Run: ``python benchmarks/bounding_parts.py --file PATH --rows N
[--repeats 2] [--k 3]``. The machine may be shared: the load average is
printed with each line.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

SCATTER = 2654435761


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", required=True)
    ap.add_argument("--rows", required=True)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--k", type=int, default=3)
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
    import duckdb
    import narwhals as nw

    from plotnine_private.engines.bounding import order_key_stages

    rows = int(float(args.rows))
    con = duckdb.connect()
    base = (
        f"SELECT *, id * {SCATTER} % {rows // 4} AS person "
        f"FROM read_parquet('{args.file}')"
    )

    hashed_rows = f"SELECT *, hash(person, id) AS h FROM ({base})"

    def sql(query: str):
        return lambda: con.sql(query).fetchall()

    def hashed(bounding: str):
        frame = nw.from_native(con.sql(base))
        for stage in order_key_stages(
            nw.col("person"), nw.col("id"), None, "_k", bounding
        ):
            frame = frame.with_columns(**stage)
        out = frame.group_by("g").agg(nw.col("_k").max())
        return lambda: nw.to_native(out).fetchall()

    parts = {
        "cells": sql(f"SELECT g, count(*) FROM ({base}) GROUP BY g"),
        "group_by_unit": sql(
            f"SELECT count(*) FROM (SELECT person, count(*) FROM ({base}) "
            "GROUP BY person)"
        ),
        "window_by_id": sql(
            "SELECT g, count(*) FROM (SELECT g, row_number() OVER "
            f"(PARTITION BY person ORDER BY id) AS rn FROM ({base})) "
            f"WHERE rn <= {args.k} GROUP BY g"
        ),
        "hash_v1": hashed("v1"),
        "hash_v2": hashed("v2"),
        "window_hash": sql(
            "SELECT g, count(*) FROM (SELECT g, row_number() OVER "
            f"(PARTITION BY person ORDER BY h) AS rn FROM ({hashed_rows})) "
            f"WHERE rn <= {args.k} GROUP BY g"
        ),
        "qualify_hash": sql(
            f"SELECT g, count(*) FROM (SELECT g FROM ({hashed_rows}) "
            "QUALIFY row_number() OVER (PARTITION BY person ORDER BY h) "
            f"<= {args.k}) GROUP BY g"
        ),
        "top_k_hash": sql(
            "SELECT g, count(*) FROM (SELECT unnest(arg_min(g, h, "
            f"{args.k})) AS g FROM ({hashed_rows}) GROUP BY person) "
            "GROUP BY g"
        ),
    }
    print(f"{'part':<16}{'rows':>8}{'seconds':>9}{'x cells':>9}{'load':>6}")
    cells = None
    for name, run in parts.items():
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - t0)
        cells = best if cells is None else cells
        print(
            f"{name:<16}{rows:>8.0e}{best:>9.2f}{best / cells:>9.1f}"
            f"{os.getloadavg()[0]:>6.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
