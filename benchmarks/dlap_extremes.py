"""The exact discrete Laplace over eps 1e-6 to 1e12: 10**8 draws.

Run: ``python benchmarks/dlap_extremes.py [--draws 1e8] [--version 3]``.

The draws are split evenly over a grid of eps (Δ = 2, as under
``adjacency="replace"``), each drawn on real keyed streams of the stream
version asked for (3, the default, names cells by place) in chunks of
10**6 cells. For each eps it prints the sampler's path (CKS, inversion
table and its size, or an empty table), the draws, how many heads fell
in bucket 0 of the inversion index (the heads that raised IndexError on
an empty table before the fix), whether any draw failed, the number of
nonzero draws, and a chi-square test of the whole sample against the
exact pmf (cells: 0 and bands of magnitudes of each sign; where fewer
than 10 nonzero draws are expected, a two-sided Poisson test of their
number), with its p-value.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats

from plotnine_private.mechanisms.samplers import dlap_inversion as inv
from plotnine_private.mechanisms.samplers import laplace as lap
from plotnine_private.mechanisms.streams.places import PlaceStreams
from plotnine_private.mechanisms.streams.randomness import (
    cell_words,
    derive_key,
    master_key,
)
from plotnine_private.mechanisms.streams.versions import cell_streams

EPS = [1e-6, 1e-3, 0.1, 1.0, 10.0, 24.0, 88.0, 100.0, 1e3, 1e6, 1e9, 1e12]
CHUNK = 10**6


def tail(m: int, x: float) -> float:
    """``P(|N| >= m)``, m >= 1, of DLap with ``s/t = x``."""
    return 2 * math.exp(-m * x) / (1 + math.exp(-x))


def law_p_value(hist: dict[int, int], n: int, x: float) -> tuple[str, float]:
    """p-value of the draws (``hist``: counts by value) under DLap."""
    t1 = tail(1, x)
    nonzero = n - hist.get(0, 0)
    if n * t1 < 10:
        mu = n * t1
        lo = stats.poisson.cdf(nonzero, mu)
        hi = stats.poisson.sf(nonzero - 1, mu)
        return "poisson", float(min(1.0, 2 * min(lo, hi)))
    edges = [1]
    for k in range(1, 40):
        m = 1 + math.ceil(-math.log(1 - k / 40) / x)
        if m > edges[-1] and n * tail(m, x) / 2 >= 5:
            edges.append(m)
    vals = np.array(sorted(hist), dtype=np.int64)
    cnts = np.array([hist[v] for v in vals.tolist()], dtype=np.int64)
    obs, exp = [hist.get(0, 0)], [n * (1 - t1)]
    for a, b in zip(edges, [*edges[1:], None]):
        mag = np.abs(vals)
        inside = (mag >= a) if b is None else ((mag >= a) & (mag < b))
        share = tail(a, x) - (0.0 if b is None else tail(b, x))
        for sign in (vals > 0, vals < 0):
            obs.append(int(cnts[inside & sign].sum()))
            exp.append(n * share / 2)
    o, e = np.array(obs, float), np.array(exp)
    chi2 = float(((o - e) ** 2 / e).sum())
    return f"chi2 df={len(o) - 1}", float(stats.chi2.sf(chi2, len(o) - 1))


def streams_for(version: int, eps: float, chunk: int, n: int):
    key = derive_key(master_key(20260), "dlap extremes", eps, chunk)
    if version == 3:
        return PlaceStreams(key, b"dlap extremes domain", n)
    words = cell_words(np.arange(chunk * CHUNK, chunk * CHUNK + n))
    return cell_streams(key, words, version)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=float, default=1e8)
    ap.add_argument("--version", type=int, default=3, choices=(1, 2, 3))
    args = ap.parse_args()
    per_eps = int(args.draws) // len(EPS)
    print(f"{per_eps * len(EPS):,} draws, stream version {args.version}")
    print(
        "eps        t/s               path          draws     bucket0 "
        "failed  nonzero  test          p      seconds"
    )
    total_failed = 0
    for eps in EPS:
        t, s = lap.rational_scale(2, eps)
        table = inv.inversion_table(t, s)
        path = (
            "cks"
            if table is None
            else ("empty table" if table.size == 0 else f"table {table.size}")
        )
        hist: dict[int, int] = {}
        bucket0 = failed = 0
        start = time.perf_counter()
        done, chunk = 0, 0
        while done < per_eps:
            n = min(CHUNK, per_eps - done)
            streams = streams_for(args.version, eps, chunk, n)
            if args.version >= 2:
                heads = streams.heads()
                bucket0 += int(np.count_nonzero((heads >> np.uint64(48)) == 0))
                streams = streams_for(args.version, eps, chunk, n)
            try:
                draws = lap.discrete_laplace(streams, (t, s))
            except Exception as err:  # counted, and the run goes on
                failed += n
                print(f"  chunk {chunk}: {type(err).__name__}: {err}")
            else:
                vals, cnts = np.unique(draws, return_counts=True)
                for v, c in zip(vals.tolist(), cnts.tolist()):
                    hist[v] = hist.get(v, 0) + c
            done += n
            chunk += 1
        seconds = time.perf_counter() - start
        total_failed += failed
        test, p = law_p_value(hist, done - failed, s / t)
        nonzero = done - failed - hist.get(0, 0)
        print(
            f"{eps:<10g} {f'{t}/{s}':<17} {path:<13} {done:<9,} "
            f"{bucket0:<7} {failed:<7} {nonzero:<8,} {test:<13} "
            f"{p:<6.3f} {seconds:.1f}"
        )
    print(f"failed draws: {total_failed}")


if __name__ == "__main__":
    main()
