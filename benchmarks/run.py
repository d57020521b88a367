"""Benchmarks: each private stat against its plotnine counterpart, and the
core mechanisms, at 10^4 .. 10^7 rows.

Run: ``python benchmarks/run.py [--min-rows 1e6] [--max-rows 1e7]
[--repeat 3]``.

A stat is timed as the whole plot build (``deepcopy`` + ``_build``), which
is what a user waits for, and its stat step alone (a private layer's
release at the door; plotnine's ``compute_statistic``); the ratio private /
plotnine is printed in the same run, on the same data. Times are medians
of ``--repeat`` runs at every size. At the largest size the peak memory of
one build (tracemalloc) is printed next to the size of the columns read.
The versions that change the figures (plotnine, pandas and its string
storage, numpy) are printed first.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import time
import tracemalloc
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
from plotnine_private.cells import Dimension, assemble
from plotnine_private.mechanisms.samplers import laplace as lap
from plotnine_private.mechanisms.streams.randomness import (
    CellStreams,
    cell_words,
    derive_key,
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
    return min(timings(fn, repeat))


def timings(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


class StatTimer:
    """Time spent in the stat step alone: a private layer's release at the
    door, or plotnine's ``layer.compute_statistic``."""

    def __init__(self):
        self.seconds = 0.0
        self._originals = []

    def _wrap(self, owner, name):
        original = getattr(owner, name)
        timer = self

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timer.seconds += time.perf_counter() - t0

        self._originals.append((owner, name, original))
        setattr(owner, name, timed)

    def __enter__(self):
        from plotnine.layer import layer

        from plotnine_private.stats.base import PrivateCountStat

        self._wrap(PrivateCountStat, "release_at_door")
        self._wrap(layer, "compute_statistic")
        return self

    def __exit__(self, *exc):
        for owner, name, original in self._originals:
            setattr(owner, name, original)


def build_time(plot, repeat: int) -> tuple[float, float, float]:
    """(median build, best build, median stat step) over ``repeat``."""
    builds, stats = [], []
    for _ in range(repeat):
        with StatTimer() as st:
            t0 = time.perf_counter()
            deepcopy(plot)._build()
            builds.append(time.perf_counter() - t0)
        stats.append(st.seconds)
    return (float(np.median(builds)), min(builds), float(np.median(stats)))


def peak_memory(plot) -> float:
    """Peak memory allocated during one build (tracemalloc, bytes)."""
    import gc

    gc.collect()
    tracemalloc.start()
    deepcopy(plot)._build()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


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
        ggplot(d, aes("x"))
        + geom_histogram(stat="bin_dp", bins=30, limits=(-4, 4), **dp),
        ggplot(d, aes("x", rkey="rk"))
        + geom_histogram(stat="bin_ckm", bins=30, limits=(-4, 4), **ck),
    )
    yield (
        "bin2d",
        ggplot(d, xy) + geom_bin_2d(bins=30),
        ggplot(d, xy)
        + geom_bin_2d(stat="bin2d_dp", bins=30, limits=lim, **dp),
        ggplot(d, xyk)
        + geom_bin_2d(stat="bin2d_ckm", bins=30, limits=lim, **ck),
    )
    yield (
        "binhex (vs bin_hex)",
        ggplot(d, xy) + pp.geom_hex(bins=30),
        ggplot(d, xy)
        + pp.geom_hex(stat="binhex_dp", bins=30, limits=lim, **dp),
        ggplot(d, xyk)
        + pp.geom_hex(stat="binhex_ckm", bins=30, limits=lim, **ck),
    )
    yield (
        "sum",
        ggplot(d, aes("gx", "gy")) + geom_count(),
        ggplot(d, aes("gx", "gy")) + geom_count(stat="sum_dp", **grid, **dp),
        ggplot(d, aes("gx", "gy", rkey="rk"))
        + geom_count(stat="sum_ckm", **grid, **ck),
    )


COLUMNS = {
    "count": ["cat"],
    "bin": ["x"],
    "bin2d": ["x", "y"],
    "binhex (vs bin_hex)": ["x", "y"],
    "sum": ["gx", "gy"],
}


def bench_stats(sizes, repeat, memory_at):
    print(
        "\n## stats: whole build and stat step, seconds (median of "
        f"{repeat}); ratio private / plotnine"
    )
    print(
        f"{'stat':20s} {'rows':>7s} | {'plotnine':>8s} {'step':>7s} | "
        f"{'DP':>7s} {'ratio':>5s} {'step':>6s} | {'CKM':>7s} "
        f"{'ratio':>5s} {'step':>6s}"
    )
    for n in sizes:
        d = make_data(n)
        for name, base, dp, ckm in stat_pairs(d):
            b_med, _, b_step = build_time(base, repeat)
            p_med, _, p_step = build_time(dp, repeat)
            c_med, _, c_step = build_time(ckm, repeat)
            print(
                f"{name:20s} {n:7.0e} | {b_med:8.3f} {b_step:7.3f} | "
                f"{p_med:7.3f} {p_med / b_med:5.2f} {p_step:6.3f} | "
                f"{c_med:7.3f} {c_med / b_med:5.2f} {c_step:6.3f}",
                flush=True,
            )
            if n == memory_at:
                read = sum(
                    d[c].memory_usage(deep=True, index=False)
                    for c in COLUMNS[name]
                )
                mem = [peak_memory(p) for p in (base, dp, ckm)]
                print(
                    f"{'':20s} peak memory MB: plotnine {mem[0] / 1e6:.0f}, "
                    f"DP {mem[1] / 1e6:.0f} ({mem[1] / read:.1f}x the "
                    f"{read / 1e6:.0f} MB of columns read), CKM "
                    f"{mem[2] / 1e6:.0f} ({mem[2] / (read + 8 * n):.1f}x "
                    "with the keys)",
                    flush=True,
                )


def bench_mechanisms(sizes, repeat):
    print("\n## mechanisms: seconds, and cells (or records) per second")
    key = derive_key(bytes(32), "bench")
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
        dim = Dimension("x", codes, [np.arange(1000)], range(1000), True)
        t_agg = best_of(lambda: assemble([dim], key_ints=sums), repeat)
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
    parser.add_argument("--min-rows", type=float, default=1e4)
    parser.add_argument("--only", choices=["stats", "mechanisms"])
    args = parser.parse_args()
    sizes = [
        10**k for k in range(4, 8) if args.min_rows <= 10**k <= args.max_rows
    ]
    versions = ", ".join(
        f"{m} {importlib.metadata.version(m)}"
        for m in ("plotnine", "pandas", "numpy", "matplotlib")
    )
    strings = pd.Series(["a"]).dtype
    print(
        f"versions: {versions}, python {platform.python_version()}; "
        f"pandas strings: {strings!r}"
    )
    if args.only != "mechanisms":
        bench_stats(sizes, args.repeat, max(sizes))
    if args.only != "stats":
        bench_mechanisms(sizes, args.repeat)


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    main()
