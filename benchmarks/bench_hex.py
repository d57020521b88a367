"""Benchmark: hexagon binning against rectangles and matplotlib's hexbin.

For n = 10^4 ... 10^7 standard normal points it times

* ``hex mechanism``: ``hex_assign`` + ``hex_cell_counts`` on numpy arrays;
* ``stat_bin_hex``: our stat, ``bins=30`` (about 1,100 hexagons over the
  data range);
* ``stat_bin_2d``: plotnine's rectangle stat with ``bins=33`` (about 1,100
  cells, i.e. a comparable number of cells);
* ``Axes.hexbin``: matplotlib, ``gridsize=30`` (about 1,070 hexagons),
  binning plus creating the collection (no rendering).

Both plotnine stats are timed the same way: a plot ``ggplot(df, aes("x",
"y")) + geom_*()`` is deep-copied and built (``_build``: aesthetics,
scales, stat, geom setup; no drawing). We report the whole build and,
separately, the time spent inside the stat's ``compute_layer`` (measured
by wrapping it). Each figure is the best of ``repeat`` runs.

Run: ``python benchmarks/bench_hex.py [max_exponent]`` (default 7).
"""

from __future__ import annotations

import sys
import time
from copy import deepcopy

import matplotlib as mpl
import numpy as np
import pandas as pd

mpl.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from plotnine import aes, geom_bin_2d, ggplot  # noqa: E402

import plotnine_private.geoms.hex  # noqa: E402, F401 (registers)
from plotnine_private.geoms.hex import geom_hex  # noqa: E402
from plotnine_private.mechanisms.domains.hexbin import (  # noqa: E402
    hex_assign,
    hex_cell_counts,
)


def best_of(fn, repeat):
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def time_build(plot, repeat):
    """Best (build seconds, compute_layer seconds, cells) of a plot."""
    stat_cls = type(plot.layers[0].stat)
    original = stat_cls.compute_layer
    spent = []

    def timed(self, data, layout):
        t0 = time.perf_counter()
        out = original(self, data, layout)
        spent.append(time.perf_counter() - t0)
        return out

    best = (np.inf, np.inf, 0)
    stat_cls.compute_layer = timed
    try:
        for _ in range(repeat):
            spent.clear()
            q = deepcopy(plot)
            t0 = time.perf_counter()
            q._build()
            total = time.perf_counter() - t0
            if total < best[0]:
                best = (total, spent[0], len(q.layers[0].data))
    finally:
        stat_cls.compute_layer = original
    return best


def time_mechanism(x, y, repeat):
    def run():
        row, col = hex_assign(x, y, (x.min(), y.min()), (0.3, 0.3))
        return hex_cell_counts(row, col)

    seconds, cells = best_of(run, repeat)
    return seconds, len(cells.row)


def time_mpl_hexbin(x, y, repeat):
    fig, ax = plt.subplots()

    def run():
        coll = ax.hexbin(x, y, gridsize=30)
        n = len(coll.get_array())
        coll.remove()
        return n

    seconds, cells = best_of(run, repeat)
    plt.close(fig)
    return seconds, cells


def main(max_exp: int = 7) -> None:
    rng = np.random.default_rng(2026)
    rows = []
    for exp in range(4, max_exp + 1):
        n = 10**exp
        repeat = 5 if exp <= 5 else (3 if exp == 6 else 1)
        x = rng.normal(size=n)
        y = rng.normal(size=n)
        df = pd.DataFrame({"x": x, "y": y})

        mech_s, mech_cells = time_mechanism(x, y, repeat)
        hex_build, hex_stat, hex_cells = time_build(
            ggplot(df, aes("x", "y")) + geom_hex(bins=30), repeat
        )
        rect_build, rect_stat, rect_cells = time_build(
            ggplot(df, aes("x", "y")) + geom_bin_2d(bins=33), repeat
        )
        mpl_s, mpl_cells = time_mpl_hexbin(x, y, repeat)
        rows.append(
            {
                "n": f"1e{exp}",
                "hex mechanism s": mech_s,
                "stat_bin_hex stat s": hex_stat,
                "stat_bin_hex build s": hex_build,
                "stat_bin_2d stat s": rect_stat,
                "stat_bin_2d build s": rect_build,
                "Axes.hexbin s": mpl_s,
                "cells hex/rect/mpl": f"{hex_cells}/{rect_cells}/{mpl_cells}",
            }
        )
        print(pd.DataFrame(rows[-1:]).to_string(index=False), flush=True)

    table = pd.DataFrame(rows)
    print()
    print("non-empty cells: hex / rect / matplotlib (all, incl. empty)")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
