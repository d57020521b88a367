"""Benchmarks: each private stat against its plotnine counterpart, and the
core mechanisms, at 10^4 .. 10^7 rows.

Run: ``python benchmarks/run.py [--max-rows 1e7] [--repeat 3]``.

A stat is timed as the whole plot build (``deepcopy`` + ``_build``), which
is what a user waits for; the ratio private / plotnine is printed in the
same run, on the same data. Times are the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import time
from copy import deepcopy

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    geom_bar,
    geom_bin_2d,
    geom_count,
    geom_histogram,
    ggplot,
)

import plotnine_private as pp
from plotnine_private.mechanisms import laplace as lap
from plotnine_private.mechanisms.randomness import (
    CellStreams,
    cell_words,
    derive_key,
    master_key,
)

LEVELS = [f"level{i}" for i in range(10)]
PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)


def make_data(n: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "cat": pd.Categorical(
                rng.choice(LEVELS, size=n), categories=LEVELS
            ),
            "x": rng.normal(size=n),
            "y": rng.normal(size=n),
            # point counts need repeated positions
            "gx": rng.integers(0, 40, size=n).astype(float),
            "gy": rng.integers(0, 40, size=n).astype(float),
            "rk": np.round(rng.random(n), 8),
        }
    )


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def build_time(plot, repeat: int) -> float:
    return best_of(lambda: deepcopy(plot)._build(), repeat)


def stat_pairs(d: pd.DataFrame):
    lim = ((-4, 4), (-4, 4))
    grid = {"limits": ((0, 39), (0, 39)), "resolution": 1}
    dp = {"eps": 1, "seed": 1}
    ck = {"ptable": PTAB}
    xy = aes("x", "y")
    xyk = aes("x", "y", rkey="rk")
    yield (
        "count",
        ggplot(d, aes("cat")) + geom_bar(),
        ggplot(d, aes("cat")) + geom_bar(stat="count_dp", **dp),
        ggplot(d, aes("cat", rkey="rk")) + geom_bar(stat="count_ckm", **ck),
    )
    yield (
        "bin",
        ggplot(d, aes("x")) + geom_histogram(bins=30),
        ggplot(d, aes("x")) + geom_histogram(
            stat="bin_dp", bins=30, limits=(-4, 4), **dp),
        ggplot(d, aes("x", rkey="rk")) + geom_histogram(
            stat="bin_ckm", bins=30, limits=(-4, 4), **ck),
    )
    yield (
        "bin2d",
        ggplot(d, xy) + geom_bin_2d(bins=30),
        ggplot(d, xy) + geom_bin_2d(stat="bin2d_dp", bins=30, limits=lim,
                                    **dp),
        ggplot(d, xyk) + geom_bin_2d(stat="bin2d_ckm", bins=30, limits=lim,
                                     **ck),
    )
    yield (
        "binhex (vs bin_hex)",
        ggplot(d, xy) + pp.geom_hex(bins=30),
        ggplot(d, xy) + pp.geom_hex(stat="binhex_dp", bins=30, limits=lim,
                                    **dp),
        ggplot(d, xyk) + pp.geom_hex(stat="binhex_ckm", bins=30,
                                     limits=lim, **ck),
    )
    yield (
        "sum",
        ggplot(d, aes("gx", "gy")) + geom_count(),
        ggplot(d, aes("gx", "gy")) + geom_count(stat="sum_dp", **grid, **dp),
        ggplot(d, aes("gx", "gy", rkey="rk")) + geom_count(
            stat="sum_ckm", **grid, **ck),
    )


def bench_stats(sizes, repeat):
    print("\n## stats: whole build, seconds (ratio to plotnine)")
    print(f"{'stat':22s} {'rows':>9s} {'plotnine':>9s} {'DP':>16s} "
          f"{'CKM':>16s}")
    for n in sizes:
        d = make_data(n)
        reps = repeat if n < 10**7 else 1
        for name, base, dp, ckm in stat_pairs(d):
            t0 = build_time(base, reps)
            t1 = build_time(dp, reps)
            t2 = build_time(ckm, reps)
            print(f"{name:22s} {n:9.0e} {t0:9.3f} {t1:9.3f} "
                  f"({t1 / t0:4.2f}) {t2:9.3f} ({t2 / t0:4.2f})", flush=True)


def bench_mechanisms(sizes, repeat):
    print("\n## mechanisms: seconds, and cells (or records) per second")
    key = derive_key(master_key(1), "bench")
    for n in sizes:
        words = cell_words(np.arange(n))
        streams = CellStreams(key, words)
        t_lap = best_of(
            lambda: lap.discrete_laplace(
                CellStreams(key, words), lap.rational_scale(2, 1.0)
            ),
            1 if n >= 10**6 else repeat,
        )
        counts = np.random.default_rng(1).integers(0, 50, size=n)
        sums = np.random.default_rng(2).integers(0, 10**9, size=n)
        t_ckm = best_of(lambda: PTAB.noise(counts, sums), repeat)
        codes = np.random.default_rng(3).integers(0, 1000, size=n)
        t_agg = best_of(
            lambda: pp.stats.base.aggregate_cells(codes, 1000, None, sums),
            repeat,
        )
        del streams
        print(
            f"rows/cells {n:9.0e}: discrete Laplace {t_lap:7.3f} s "
            f"({n / t_lap:10.0f} cells/s) | p-table lookup {t_ckm:7.3f} s "
            f"({n / t_ckm:10.0f}/s) | aggregation {t_agg:7.3f} s "
            f"({n / t_agg:10.0f} records/s)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-rows", type=float, default=1e6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=["stats", "mechanisms"])
    args = parser.parse_args()
    sizes = [10**k for k in range(4, 8) if 10**k <= args.max_rows]
    if args.only != "mechanisms":
        bench_stats(sizes, args.repeat)
    if args.only != "stats":
        bench_mechanisms(sizes, args.repeat)


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    main()
