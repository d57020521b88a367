"""How often the box plot's intervals hold the statistic of the records
(``covers="data"``, the default) against the noise-free estimate of the
fine histogram (``covers="histogram"``), on whole-number and continuous
data.

Each seed adds exact discrete Laplace noise (numpy's geometric sampler,
independent of the code under test) to the records' true fine histogram
(limits 0-60, 128 bins unless ``discrete=True``: one bin a whole day)
and runs the stat's own curve and interval code on it. The truth is the
records' own: numpy's quartiles (plotnine's), Tukey's whiskers (the most
extreme records within 1.5 IQR) or the 5% and 95% quantiles. Printed per
case and column: the share of seeds whose interval holds it, and the
mean interval width in days.

Data: length of stay in whole days (mostly short, one stay in five
long, 0-60; 2000 and 300 stays, an int64 column), and continuous
lognormal values (2000). Noise scale 2 (eps 1, one record) and 10 (eps
1, up to 5 stays a person).

Run: ``python benchmarks/interval_cover.py [--seeds 1000]`` (about two
minutes at 1000 seeds).
"""

from __future__ import annotations

import argparse
import math
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd

from plotnine_private.stats.boxplot import stat_boxplot_dp
from plotnine_private.stats.fine_histogram import FineHistogram
from plotnine_private.stats.intervals import NoiseModel

LEVEL = 0.95
LIMITS = (0, 60)
COLUMNS = ("lower", "middle", "upper", "ymin", "ymax")


def length_of_stay(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    short = rng.geometric(0.3, n) - 1
    long = (rng.random(n) < 0.2) * rng.geometric(0.05, n)
    return np.minimum(short + long, 60).astype(np.int64)


def lognormal(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.lognormal(1.2, 0.6, n), 0, 60)


def truths(v: np.ndarray, whiskers=None) -> dict[str, float]:
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    iqr = q3 - q1
    inside = v[(v >= q1 - 1.5 * iqr) & (v <= q3 + 1.5 * iqr)]
    out = {"lower": q1, "middle": med, "upper": q3}
    out["ymin"], out["ymax"] = inside.min(), inside.max()
    if whiskers is not None:
        out["ymin"], out["ymax"] = np.quantile(v, whiskers)
    return out


def case(v, scale: float, seeds: int, chunk: int = 250, **kw) -> dict:
    """``{column: (coverage, mean width)}`` over ``seeds`` seeds."""
    stat = stat_boxplot_dp(limits=LIMITS, level=LEVEL, eps=1, **kw)
    limits, k = stat.fine_bins()
    edges = np.linspace(limits[0], limits[1], k + 1)
    cell = np.clip(np.searchsorted(edges, v, "left") - 1, 0, k - 1)
    truth = np.bincount(cell, minlength=k).astype(float)
    true = truths(v, kw.get("whiskers"))
    rng = np.random.default_rng(int(scale * 1000) + len(v) + 7)
    p = 1 - math.exp(-1 / scale)
    hits = {c: [] for c in COLUMNS}
    width = {c: [] for c in COLUMNS}
    for start in range(0, seeds, chunk):
        n = min(chunk, seeds - start)
        noise = rng.geometric(p, (n, k)) - rng.geometric(p, (n, k))
        noisy = truth + noise
        info = pd.DataFrame({"PANEL": pd.Categorical(np.ones(n, int))}).assign(
            group=np.arange(1, n + 1)
        )
        hist = FineHistogram(edges, np.maximum(noisy, 0), noisy, info)
        records = pd.DataFrame({"y": v})
        stat.build = SimpleNamespace(fine=hist, records=records)
        out = stat.curve(hist)
        stat.curve_intervals(out, hist, NoiseModel("discrete_laplace", scale))
        for c in COLUMNS:
            lo, hi = out[f"{c}_low"], out[f"{c}_high"]
            t = true[c]
            hits[c] += list((lo <= t + 1e-9) & (t <= hi + 1e-9))
            width[c] += list(hi - lo)
    return {c: (np.mean(hits[c]), np.mean(width[c])) for c in COLUMNS}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1000)
    args = ap.parse_args()
    data = {
        "stays, 2000": length_of_stay(2000, 1),
        "stays, 300": length_of_stay(300, 2),
        "lognormal, 2000": lognormal(2000, 3),
    }
    modes = {
        "histogram": {"covers": "histogram"},
        "data": {},
        "data, discrete": {"discrete": True},
        "data, 5-95% whiskers": {"whiskers": (0.05, 0.95)},
    }
    print(
        f"level {LEVEL}, {args.seeds} seeds; coverage / mean width (days) "
        f"of {', '.join(COLUMNS)}"
    )
    for name, v in data.items():
        for scale in (2.0, 10.0):
            for mode, kw in modes.items():
                if "discrete" in kw and v.dtype.kind != "i":
                    continue
                t = time.perf_counter()
                got = case(v, scale, args.seeds, **kw)
                cells = "  ".join(
                    f"{c} {cov:.3f}/{w:.2f}" for c, (cov, w) in got.items()
                )
                print(
                    f"{name:16s} scale {scale:4.0f}  {mode:21s} {cells}"
                    f"  ({time.perf_counter() - t:.1f} s)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
