"""Benchmark: the cost of a privacy unit pushed down into DuckDB and Polars.

Builds the same private figure of a Parquet table twice per engine: with
the unit one row (``pp.source(table)``), and with a declared unit
(``pp.source(table, unit="person", max_records=k, record_id="id")``),
where the engine first keeps each unit's ``k`` records with the smallest
public keyed hash (a window over the unit) and then groups. Prints the
seconds of each build (``build``: every layer released, nothing drawn)
and the ratio bounded / unbounded. The issue's target: at most 3x through
DuckDB at 10^8 rows.

The table: ``--file`` (a Parquet file with a whole-number ``id`` and
columns ``g`` and ``x``, e.g. the one ``benchmarks/engines.py`` writes;
``{rows}`` in it is replaced by the row count), or one this
script writes into ``--dir`` (default: the system's temporary directory,
never the repository) with ``--rows`` records. The unit is derived in the
engine as ``person = (id * 2654435761) mod (rows / per_unit)``: every
person has ``--per-unit`` records (default 4) scattered over the file,
and ``--k`` (default 3) of them are kept.

Run: ``python benchmarks/bounding.py --rows 1e7,1e8 [--file PATH]
[--dir DIR] [--engines duckdb,polars] [--stats count_dp,bin_dp] [--k 3]
[--per-unit 4] [--repeats 2] [--bounding v1,v2]``. Each order of
``--bounding`` (``pp.source(bounding=...)``) gets its own bounded build,
timed in turn with the unbounded one in the same run, so that a change
of load on a shared machine hits both. The machine may be shared: the
load average is printed with each line.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

#: an odd multiplier prime to 2 and 5: a bijection of the ids mod m
SCATTER = 2654435761
LEVELS = [f"g{i}" for i in range(8)]


def generate(path: str, rows: int) -> float:
    """Write a table of ``rows`` records (if absent); seconds spent."""
    import duckdb

    if os.path.exists(path):
        return 0.0
    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    con.execute(
        f"""
        COPY (
          SELECT id, 'g' || CAST(id * 7919 % 8 AS VARCHAR) AS g,
                 sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())
                   AS x
          FROM (SELECT range AS id FROM range({rows}))
        ) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)
        """
    )
    return time.perf_counter() - t0


def table(engine: str, path: str, units: int):
    """The file with its ``person`` column, lazily, in ``engine``."""
    if engine == "duckdb":
        import duckdb

        return duckdb.connect().sql(
            f"SELECT *, id * {SCATTER} % {units} AS person "
            f"FROM read_parquet('{path}')"
        )
    import polars as pl

    return pl.scan_parquet(path).with_columns(
        person=pl.col("id") * SCATTER % units
    )


def plot(data, stat: str):
    from plotnine import aes, geom_bar, geom_histogram, ggplot

    if stat == "count_dp":
        return ggplot(data, aes("g")) + geom_bar(
            stat="count_dp", eps=1, seed=1
        )
    return ggplot(data, aes("x")) + geom_histogram(
        stat="bin_dp", eps=1, seed=1, limits=(-5, 5), bins=30
    )


def time_build(make, repeats: int) -> tuple[float, int]:
    """Best seconds of ``repeats`` builds, and the released total."""
    from plotnine_private._compat import build

    best, total = float("inf"), 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            built = build(make())
        best = min(best, time.perf_counter() - t0)
        total = int(built.layers[0].data["count"].sum())
    return best, total


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="1e7,1e8")
    ap.add_argument("--file", default=None)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--engines", default="duckdb,polars")
    ap.add_argument("--stats", default="count_dp,bin_dp")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--per-unit", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--bounding", default="v2")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
    import plotnine_private as pp

    print(
        "engine  stat      rows   order  unbounded_s  bounded_s  ratio  "
        "kept_share  load"
    )
    for rows in (int(float(r)) for r in args.rows.split(",")):
        path = (
            args.file.format(rows=rows)
            if args.file
            else os.path.join(args.dir, f"pnp_bounding_{rows}.parquet")
        )
        if args.file is None:
            generate(path, rows)
        units = rows // args.per_unit
        for engine in args.engines.split(","):
            for stat in args.stats.split(","):

                def plain(engine=engine, stat=stat):
                    src = pp.source(
                        table(engine, path, units), levels={"g": LEVELS}
                    )
                    return plot(src, stat)

                def bounded(engine=engine, stat=stat, order="v2"):
                    src = pp.source(
                        table(engine, path, units),
                        levels={"g": LEVELS},
                        unit="person",
                        max_records=args.k,
                        record_id="id",
                        bounding=order,
                    )
                    return plot(src, stat)

                for order in args.bounding.split(","):
                    t0, n0 = time_build(plain, args.repeats)
                    t1, n1 = time_build(
                        lambda o=order: bounded(order=o), args.repeats
                    )
                    load = os.getloadavg()[0]
                    print(
                        f"{engine:7s} {stat:9s} {rows:.0e} {order:>5s} "
                        f"{t0:12.2f} {t1:10.2f} {t1 / t0:6.2f} "
                        f"{n1 / max(n0, 1):10.3f} {load:5.1f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
