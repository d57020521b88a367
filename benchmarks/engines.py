"""Benchmark: private plots of a Parquet table beyond memory.

Generates a Parquet table of ``--rows`` records (default 10^8) with DuckDB
into a scratch directory (``--dir``, default the system's temporary
directory; never the repository), then times each private plot through
DuckDB, Polars (lazy scan) and Spark (local mode), and through the
in-memory pandas path on the first ``--pandas-rows`` records (default
10^7, read into pandas first; the read is timed apart). Each case runs in
a fresh Python process, so its figure is the wall time from
``pp.source(...)`` to a drawn matplotlib figure and the peak resident
memory (``ru_maxrss``) of that Python process. Spark's JVM is a separate
process: its memory is not in the figure (its ``spark.driver.memory`` is
set by ``--spark-memory``).

Each engine case also times its *floor* in the same process: the
engine's own GROUP BY of the same file on the same keys, without privacy
(``GROUP BY g``; ``GROUP BY floor((x - lo) / w)`` for bins, both axes for
2-D bins and hexagons; ``GROUP BY g`` with ``sum(rkey)`` for CKM key
sums), and prints the ratio private / floor. A hexagon case also times
an exact hexagon count written by hand in the engine (both candidate
centres, the nearer one, ``GROUP BY row, col``: ``hex_floor_s``), with
``hex_query_ratio``, the private query over it: the arithmetic any exact
hexagon count pays, which the rectangular floor leaves out. ``query_s``
is the part of the private figure spent in the engine's group-by (the
rest is Python: noise, shaping, drawing), with its own ratio
``query_ratio``, and
``query_cpu_ratio`` the same ratio in CPU seconds of the process (DuckDB
and Polars; a figure a loaded machine moves less). Each repeat (of
``--repeats``, default 3) times the plot and the floor twice each, in
the order plot, floor, floor, plot, and the minimum of each is kept; the
load average at the end of the case is printed with it (the machine may
be shared: one floor or plot that alone has both cores of a loaded
machine moves a ratio of minima, which more runs of each side steady).

Columns: ``id`` (0..n-1), ``g`` (8 categories, declared on the source),
``x`` and ``y`` (normal, by Box-Muller on DuckDB's ``random()``) and
``rkey`` (record keys from the row identifier,
:func:`plotnine_private.engines.record_keys_sql`).

Run: ``python benchmarks/engines.py [--rows 1e8] [--dir DIR] [--engines
duckdb,polars,spark,pandas] [--stats count_dp,bin_dp,bin2d_dp,binhex_dp,
count_ckm] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

LEVELS = [f"g{i}" for i in range(8)]
STATS = ("count_dp", "bin_dp", "bin2d_dp", "binhex_dp", "count_ckm")
#: the public domains of the plots (and of their floors)
BIN = (-5.0, 5.0, 30)
BOX = ((-5.0, 5.0), (-9.0, 11.0))


def generate(path: str, rows: int) -> float:
    """Write the table (if absent); returns seconds spent."""
    import duckdb

    from plotnine_private.engines import record_keys_sql

    if os.path.exists(path):
        return 0.0
    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    keys = record_keys_sql("id", seed=2026)
    con.execute(
        f"""
        COPY (
          SELECT id,
                 'g' || CAST(id * 7919 % 8 AS VARCHAR) AS g,
                 sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())
                   AS x,
                 sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())
                   * 2 + 1 AS y,
                 {keys} AS rkey
          FROM (SELECT range AS id FROM range({rows}))
        ) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)
        """
    )
    return time.perf_counter() - t0


def _plot(data, stat: str):
    from plotnine import aes, geom_bar, geom_bin_2d, geom_histogram, ggplot

    import plotnine_private as pp
    from plotnine_private import geom_hex

    if stat == "count_dp":
        return ggplot(data, aes("g")) + geom_bar(
            stat="count_dp", eps=1, seed=1
        )
    if stat == "count_ckm":
        return ggplot(data, aes("g", rkey="rkey")) + geom_bar(
            stat="count_ckm", ptable=pp.create_cnt_ptable(D=3, V=2, js=1)
        )
    if stat == "bin_dp":
        return ggplot(data, aes("x")) + geom_histogram(
            stat="bin_dp", eps=1, seed=1, limits=BIN[:2], bins=BIN[2]
        )
    if stat == "binhex_dp":
        return ggplot(data, aes("x", "y")) + geom_hex(
            stat="binhex_dp", eps=1, seed=1, limits=BOX, bins=30
        )
    return ggplot(data, aes("x", "y")) + geom_bin_2d(
        stat="bin2d_dp", eps=1, seed=1, limits=BOX, bins=30
    )


def _floor_keys(stat: str) -> tuple[list[tuple[str, float, float]], bool]:
    """(column, lo, width) of each floor key (none: group by g), and
    whether the key sum is aggregated."""
    (x0, x1), (y0, y1) = BOX
    if stat == "bin_dp":
        return [("x", BIN[0], (BIN[1] - BIN[0]) / BIN[2])], False
    if stat == "bin2d_dp":
        return [("x", x0, (x1 - x0) / 30), ("y", y0, (y1 - y0) / 30)], False
    if stat == "binhex_dp":
        # the hexagons' scaled coordinates (rows sqrt(3) apart)
        w = (x1 - x0) / 30
        h = (y1 - y0) / 30 * 3**0.5
        return [("x", x0, w), ("y", y0, h)], False
    return [], stat == "count_ckm"


def floor_query(path: str, engine: str, stat: str, spark=None) -> float:
    """Seconds for the engine's own GROUP BY on the case's keys."""
    keys, ksum = _floor_keys(stat)
    t0 = time.perf_counter()
    if engine == "duckdb":
        import duckdb

        cols = [f"floor(({c} - ({lo})) / {w})" for c, lo, w in keys] or ["g"]
        agg = "count(*)" + (", sum(rkey)" if ksum else "")
        sel = ", ".join(f"{e} AS k{i}" for i, e in enumerate(cols))
        by = ", ".join(f"k{i}" for i in range(len(cols)))
        duckdb.sql(
            f"SELECT {sel}, {agg} FROM '{path}' GROUP BY {by}"
        ).fetchall()
    elif engine == "polars":
        import polars as pl

        exprs = [
            ((pl.col(c) - lo) / w).floor().alias(f"k{i}")
            for i, (c, lo, w) in enumerate(keys)
        ] or [pl.col("g")]
        aggs = [pl.len()] + ([pl.col("rkey").sum()] if ksum else [])
        pl.scan_parquet(path).group_by(exprs).agg(aggs).collect()
    else:
        from pyspark.sql import functions as F

        exprs = [
            F.floor((F.col(c) - lo) / w).alias(f"k{i}")
            for i, (c, lo, w) in enumerate(keys)
        ] or [F.col("g")]
        aggs = [F.count("*")] + ([F.sum("rkey")] if ksum else [])
        spark.read.parquet(path).groupBy(*exprs).agg(*aggs).collect()
    return time.perf_counter() - t0


def _hex_parts() -> tuple[float, float, float, float]:
    """(ox, oy, bwx, row step) of the hexagon floor's lattice: the
    box's corner and the plot's binwidths (rows sqrt(3) * bwy apart)."""
    (x0, x1), (y0, y1) = BOX
    return x0, y0, (x1 - x0) / 30, (y1 - y0) / 30 * 3**0.5


def hex_floor_query(path: str, engine: str, spark=None) -> float:
    """Seconds for a hexagon GROUP BY as one would write it by hand in
    the engine: records in the box, the two candidate centres, the nearer
    one under ``dx**2 + 3 dy**2`` (ties to the first, as hexbin), grouped
    by (row, col). The rectangular floor leaves out this arithmetic,
    which any exact hexagon count pays."""
    (x0, x1), (y0, y1) = BOX
    ox, oy, w, h = _hex_parts()
    t0 = time.perf_counter()
    if engine == "duckdb":
        import duckdb

        duckdb.sql(
            f"""
            WITH s AS (
              SELECT (x - ({ox})) / {w} AS sx, (y - ({oy})) / {h} AS sy
              FROM '{path}'
              WHERE x BETWEEN {x0} AND {x1} AND y BETWEEN {y0} AND {y1}),
            c AS (
              SELECT floor(sx + 0.5) AS ja, floor(sy + 0.5) AS ia,
                     floor(sx) AS jb, floor(sy) AS ib, sx, sy FROM s),
            e AS (
              SELECT ja, ia, jb, ib, sx - ja AS ua, sy - ia AS va,
                     sx - jb - 0.5 AS ub, sy - ib - 0.5 AS vb FROM c),
            d AS (
              SELECT ja, ia, jb, ib,
                ua * ua + 3 * (va * va) <= ub * ub + 3 * (vb * vb) AS a
              FROM e)
            SELECT CASE WHEN a THEN 2 * ia ELSE 2 * ib + 1 END AS r,
                   CASE WHEN a THEN ja ELSE jb END AS c, count(*)
            FROM d GROUP BY r, c"""
        ).fetchall()
    elif engine == "polars":
        import polars as pl

        sx = (pl.col("x") - ox) / w
        sy = (pl.col("y") - oy) / h
        ja, ia = (sx + 0.5).floor(), (sy + 0.5).floor()
        jb, ib = sx.floor(), sy.floor()
        ua, va, ub, vb = sx - ja, sy - ia, sx - jb - 0.5, sy - ib - 0.5
        a = ua * ua + 3 * (va * va) <= ub * ub + 3 * (vb * vb)
        (
            pl.scan_parquet(path)
            .filter(
                pl.col("x").is_between(x0, x1), pl.col("y").is_between(y0, y1)
            )
            .group_by(
                pl.when(a).then(2 * ia).otherwise(2 * ib + 1).alias("r"),
                pl.when(a).then(ja).otherwise(jb).alias("c"),
            )
            .agg(pl.len())
            .collect()
        )
    else:
        from pyspark.sql import functions as F

        sx = (F.col("x") - ox) / w
        sy = (F.col("y") - oy) / h
        ja, ia = F.floor(sx + 0.5), F.floor(sy + 0.5)
        jb, ib = F.floor(sx), F.floor(sy)
        ua, va, ub, vb = sx - ja, sy - ia, sx - jb - 0.5, sy - ib - 0.5
        a = ua * ua + 3 * (va * va) <= ub * ub + 3 * (vb * vb)
        (
            spark.read.parquet(path)
            .where(F.col("x").between(x0, x1) & F.col("y").between(y0, y1))
            .groupBy(
                F.when(a, 2 * ia).otherwise(2 * ib + 1).alias("r"),
                F.when(a, ja).otherwise(jb).alias("c"),
            )
            .agg(F.count("*"))
            .collect()
        )
    return time.perf_counter() - t0


def _cpu() -> float:
    """CPU seconds of this process, every thread (DuckDB's and Polars'
    included; Spark's JVM is another process)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one_case(
    path: str,
    engine: str,
    stat: str,
    pandas_rows: int,
    spark_memory: str,
    repeats: int = 3,
) -> dict:
    """Run in a child process: time source -> drawn figure, and the
    engine's floor (minimum of ``2 * repeats`` each)."""
    import resource
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import plotnine_private as pp

    warnings.simplefilter("ignore")
    extra = {}
    spark = None
    t0 = time.perf_counter()
    if engine == "duckdb":
        data = pp.source(path, levels={"g": LEVELS})
    elif engine == "polars":
        import polars as pl

        data = pp.source(pl.scan_parquet(path), levels={"g": LEVELS})
    elif engine == "spark":
        from pyspark.sql import SparkSession

        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", spark_memory)
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        extra["spark_start_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        data = pp.source(spark.read.parquet(path), levels={"g": LEVELS})
    else:
        import duckdb
        import pandas as pd

        frame = duckdb.sql(
            f"SELECT * FROM '{path}' WHERE id < {pandas_rows}"
        ).df()
        frame["g"] = pd.Categorical(frame["g"], categories=LEVELS)
        extra["read_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        data = frame
    import matplotlib.pyplot as plt

    from plotnine_private.engines import push

    spent = [0.0, 0.0]
    group_by = push.grouped

    def timed(*args, **kwargs):
        t, c = time.perf_counter(), _cpu()
        try:
            return group_by(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t
            spent[1] += _cpu() - c

    push.grouped = timed
    times, floors, queries, floor_cpu, query_cpu = [], [], [], [], []
    hex_floors: list[float] = []
    hex_cpu: list[float] = []

    def plot_once(start: float) -> None:
        spent[0] = spent[1] = 0.0
        fig = _plot(data, stat).draw()
        times.append(time.perf_counter() - start)
        queries.append(spent[0])
        query_cpu.append(spent[1])
        plt.close(fig)

    def floor_once() -> None:
        if engine == "pandas":
            return
        c = _cpu()
        floors.append(floor_query(path, engine, stat, spark))
        floor_cpu.append(_cpu() - c)
        if stat == "binhex_dp":
            c = _cpu()
            hex_floors.append(hex_floor_query(path, engine, spark))
            hex_cpu.append(_cpu() - c)

    for _ in range(repeats):
        # plot, floor, floor, plot: two of each per repeat, the second
        # pair reversed, so that a spell of free cores (a shared
        # machine) is as likely to fall on either side
        plot_once(t0)
        floor_once()
        floor_once()
        plot_once(time.perf_counter())
        t0 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if floors:
        extra["floor_s"] = round(min(floors), 2)
        extra["ratio"] = round(min(times) / min(floors), 2)
        extra["query_s"] = round(min(queries), 2)
        extra["query_ratio"] = round(min(queries) / min(floors), 2)
        if engine != "spark":
            # the engine's threads run in this process: CPU seconds,
            # which a machine shared with other work inflates less
            extra["query_cpu_ratio"] = round(
                min(query_cpu) / min(floor_cpu), 2
            )
    if hex_floors:
        # against an exact hexagon count written by hand
        extra["hex_floor_s"] = round(min(hex_floors), 2)
        extra["hex_query_ratio"] = round(min(queries) / min(hex_floors), 2)
        if engine != "spark":
            extra["hex_query_cpu_ratio"] = round(
                min(query_cpu) / min(hex_cpu), 2
            )
    extra["load"] = "/".join(f"{v:.1f}" for v in os.getloadavg())
    return {
        "engine": engine,
        "stat": stat,
        "seconds": round(min(times), 2),
        "peak_rss_mb": round(peak),
        **extra,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=float, default=1e8)
    ap.add_argument("--pandas-rows", type=float, default=1e7)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--engines", default="duckdb,polars,spark,pandas")
    ap.add_argument("--stats", default=",".join(STATS))
    ap.add_argument("--spark-memory", default="4g")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    rows = int(args.rows)
    path = os.path.join(args.dir, f"pnp_engines_{rows}.parquet")
    if args.child:
        engine, stat = args.child.split(":")
        print(
            json.dumps(
                one_case(
                    path,
                    engine,
                    stat,
                    int(args.pandas_rows),
                    args.spark_memory,
                    args.repeats,
                )
            )
        )
        return
    spent = generate(path, rows)
    size = os.path.getsize(path) / 2**30
    print(
        f"table: {rows:.0e} rows, {size:.2f} GiB Parquet at {path}"
        + (f" (generated in {spent:.0f} s)" if spent else "")
    )
    print(
        f"{'engine':8} {'stat':10} {'rows':>6} {'seconds':>8} "
        f"{'peak RSS MB':>12}  notes"
    )
    for engine in args.engines.split(","):
        for stat in args.stats.split(","):
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    f"{engine}:{stat}",
                    "--rows",
                    str(rows),
                    "--pandas-rows",
                    str(int(args.pandas_rows)),
                    "--dir",
                    args.dir,
                    "--spark-memory",
                    args.spark_memory,
                    "--repeats",
                    str(args.repeats),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            lines = [
                ln for ln in out.stdout.splitlines() if ln.startswith("{")
            ]
            if out.returncode or not lines:
                print(
                    f"{engine:8} {stat:10} failed: "
                    f"{out.stderr.strip().splitlines()[-1:]}"
                )
                continue
            r = json.loads(lines[-1])
            n = int(args.pandas_rows) if engine == "pandas" else rows
            notes = ", ".join(
                f"{k}={v}"
                for k, v in r.items()
                if k not in ("engine", "stat", "seconds", "peak_rss_mb")
            )
            print(
                f"{engine:8} {stat:10} {n:6.0e} {r['seconds']:8.2f} "
                f"{r['peak_rss_mb']:12d}  {notes}",
                flush=True,
            )


if __name__ == "__main__":
    main()
