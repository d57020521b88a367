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

Columns: ``id`` (0..n-1), ``g`` (8 categories, declared on the source),
``x`` and ``y`` (normal, by Box-Muller on DuckDB's ``random()``) and
``rkey`` (record keys from the row identifier,
:func:`plotnine_private.engines.record_keys_sql`).

Run: ``python benchmarks/engines.py [--rows 1e8] [--engines duckdb,polars,
spark,pandas] [--stats count_dp,bin_dp,bin2d_dp,count_ckm]``.
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
STATS = ("count_dp", "bin_dp", "bin2d_dp", "count_ckm")


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
            stat="bin_dp", eps=1, seed=1, limits=(-5, 5), bins=30
        )
    return ggplot(data, aes("x", "y")) + geom_bin_2d(
        stat="bin2d_dp",
        eps=1,
        seed=1,
        limits=((-5, 5), (-9, 11)),
        bins=30,
    )


def one_case(
    path: str, engine: str, stat: str, pandas_rows: int, spark_memory: str
) -> dict:
    """Run in a child process: time source -> drawn figure."""
    import resource
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import plotnine_private as pp

    warnings.simplefilter("ignore")
    extra = {}
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
    fig = _plot(data, stat).draw()
    elapsed = time.perf_counter() - t0
    import matplotlib.pyplot as plt

    plt.close(fig)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "engine": engine,
        "stat": stat,
        "seconds": round(elapsed, 2),
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
