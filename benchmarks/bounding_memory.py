"""What bounding a privacy unit costs in memory: the build of one figure
on a plain frame next to the same figure on ``pp.source(frame,
unit="person", max_records=k)``.

Run: ``python benchmarks/bounding_memory.py [--rows 1e6,1e7]
[--repeat 3] [--k 3] [--bounding v1,v2]`` (one line per order of records,
``pp.source(bounding=...)``; the orders are timed in turn within each
repeat, so they meet the same load).

The data: ``rows`` records of ``rows / 5`` people (about 5 records each,
Poisson), a declared category (10 levels) and a number binned on public
breaks. For ``count_dp`` and ``bin_dp`` it prints the minimum wall-clock
build time of ``--repeat`` runs (taken in turn, so that a change of load
on a shared machine hits each column): unbounded; bounded on a new source
(the first figure of a source: the mask is computed); bounded again on
the same source (a later figure, the report or the bundle: the mask is
reused, :func:`plotnine_private.door.bound_rows`); the ratios to the
unbounded build, and the 1-minute load average. The issue's target: a
ratio of at most 2 at 10**7 rows.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from plotnine import aes, geom_bar, geom_histogram, ggplot

import plotnine_private as pp
from plotnine_private._compat import build

LEVELS = [f"c{i}" for i in range(10)]


def make_frame(rows: int, seed: int = 1) -> pd.DataFrame:
    """``rows`` records of ``rows // 5`` people."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "person": rng.integers(0, max(rows // 5, 1), rows),
            "category": pd.Categorical.from_codes(
                rng.integers(0, len(LEVELS), rows), categories=LEVELS
            ),
            "value": rng.normal(50, 15, rows),
        }
    )


def figure(data, stat: str):
    """The figure of one stat on ``data`` (a frame or a source)."""
    if stat == "count_dp":
        return ggplot(data, aes("category")) + geom_bar(
            stat="count_dp", eps=1, seed=3
        )
    return ggplot(data, aes("value")) + geom_histogram(
        stat="bin_dp", breaks=np.linspace(0, 100, 41), eps=1, seed=3
    )


def timed(plot) -> float:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build(plot)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="1e6,1e7")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--bounding", default="v2")
    args = parser.parse_args()
    orders = args.bounding.split(",")
    print(
        f"{'stat':<10}{'rows':>12}{'order':>6}{'unbounded s':>13}"
        f"{'first s':>9}{'again s':>9}{'ratio first':>13}"
        f"{'ratio again':>13}{'load':>6}"
    )
    for rows in (int(float(r)) for r in args.rows.split(",")):
        df = make_frame(rows)
        for stat in ("count_dp", "bin_dp"):
            plain: list[float] = []
            first: dict[str, list[float]] = {o: [] for o in orders}
            again: dict[str, list[float]] = {o: [] for o in orders}
            for _ in range(args.repeat):
                plain.append(timed(figure(df, stat)))
                for o in orders:
                    src = pp.source(
                        df, unit="person", max_records=args.k, bounding=o
                    )
                    first[o].append(timed(figure(src, stat)))
                    again[o].append(timed(figure(src, stat)))
            a = min(plain)
            for o in orders:
                b, c = min(first[o]), min(again[o])
                print(
                    f"{stat:<10}{rows:>12,}{o:>6}{a:>13.2f}{b:>9.2f}"
                    f"{c:>9.2f}{b / a:>13.2f}{c / a:>13.2f}"
                    f"{os.getloadavg()[0]:>6.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
