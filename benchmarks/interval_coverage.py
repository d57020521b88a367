"""Coverage and width of the curve intervals (density, ECDF, box plot).

Each draw adds exact discrete Laplace noise (scale 2 / eps with replace
adjacency: 2 at eps 1; drawn by numpy's geometric sampler, independent
of the code under test) to a known fine histogram of three groups, and runs the
stat's own curve and interval code on it. Printed per column:

* ``coverage``: share of (draw, group, point) whose interval holds the
  noise-free value, over the *interior* points: those whose interval is
  cut by what the variable can be (a density at 0, an ECDF at 0 or 1)
  in under 1% of the draws (at a cut point only one side can fail, so
  its coverage is higher by construction); for ``band="simultaneous"``
  the share of (draw, group) curves held at every point;
* ``width/oracle``: over the same interior points, the mean interval
  width over the width of the central ``level`` interval of the
  estimate's own deviation from the truth (simulated at the truth: the
  exact quantile an interval that knew the truth's noise would use).
  1.0 is that quantile; above it, wider than needed (for
  ``band="simultaneous"`` the band is wider than a pointwise oracle by
  design);
* ``width``: the mean interval width over every point, in data units
  (the box plot's whiskers: a Tukey whisker's interval is often cut at
  the limits, so its coverage is over every point too).

The box plot runs on a second data shape as well (``skewed``: a long
right tail, a uniform block and a narrow group with far outliers).

The box plot runs at eps 1 and 0.5 (``--eps``; discrete Laplace of
scale ``2 / eps``), the curves at eps 1.

Run: ``python benchmarks/interval_coverage.py [--draws 400]`` (about a
minute at 400 draws).
"""

from __future__ import annotations

import argparse
import types
import warnings

import numpy as np
import pandas as pd

from plotnine_private.stats.boxplot import stat_boxplot_dp
from plotnine_private.stats.density import stat_density_dp
from plotnine_private.stats.ecdf import stat_ecdf_dp
from plotnine_private.stats.fine import FineHistogram

LEVEL = 0.9
SCALE = 2.0
BINS = 64
LIMITS = (0.0, 10.0)


def true_histogram(
    records: int = 600, seed: int = 7, shape: str = "normal"
) -> FineHistogram:
    """Three groups of about ``records / 3`` records each, normal around
    3, 5 and 6.5 (sd 1), clipped to the limits; ``shape="skewed"``:
    1 + exponential (mean 1.2), uniform on [2, 8], and normal (5, 0.6)
    with 5% spread uniformly over the limits."""
    rng = np.random.default_rng(seed)
    if shape == "normal":
        g = rng.choice(3, records)
        v = np.array([3.0, 5.0, 6.5])[g] + rng.normal(0, 1, records)
    else:
        n = records // 3
        tail = n // 20
        v = np.r_[
            1 + rng.exponential(1.2, n),
            rng.uniform(2, 8, n),
            rng.normal(5, 0.6, n - tail),
            rng.uniform(*LIMITS, tail),
        ]
        g = np.repeat([0, 1, 2], n)
    v = np.clip(v, *LIMITS)
    edges = np.linspace(*LIMITS, BINS + 1)
    counts = np.vstack(
        [np.histogram(v[g == i], edges)[0] for i in range(3)]
    ).astype(float)
    info = pd.DataFrame(
        {
            "PANEL": pd.Categorical([1, 1, 1]),
            "group": [1, 2, 3],
            "x": pd.Categorical(["a", "b", "c"]),
        }
    )
    return FineHistogram(edges, counts, counts.copy(), info)


def discrete_laplace(rng, shape, scale: float = SCALE) -> np.ndarray:
    """Exact discrete Laplace: a difference of two geometric variables."""
    p = 1 - np.exp(-1 / scale)
    return rng.geometric(p, shape) - rng.geometric(p, shape)


def _released(scale: float):
    """What ``add_intervals`` reads of a release: its noise."""
    rel = types.SimpleNamespace(
        mechanism="discrete_laplace", details={"scale": scale}
    )
    return types.SimpleNamespace(release=rel)


def stats(band: str, eps: float = 1.0) -> dict:
    kw = {"limits": LIMITS, "bins": BINS, "level": LEVEL, "eps": eps}
    return {
        "density": (
            stat_density_dp(n=64, band=band, **kw),
            ("density",),
        ),
        "ecdf": (stat_ecdf_dp(band=band, **kw), ("ecdf",)),
        "boxplot": (
            # held to the noise-free estimate of the fine histogram, which
            # this benchmark measures (the records: interval_cover.py)
            stat_boxplot_dp(covers="histogram", **kw),
            ("ymin", "lower", "middle", "upper", "ymax"),
        ),
    }


def run(
    stat, cols, truth_hist, draws: int, seed: int = 1, scale: float = SCALE
) -> dict:
    """Coverage and width/oracle of each column over ``draws`` draws of
    discrete Laplace noise of ``scale``."""
    rng = np.random.default_rng(seed)
    stat.build = types.SimpleNamespace(fine=truth_hist)
    truth = stat.curve(truth_hist)
    groups = len(truth_hist.info)
    lo_edge, hi_edge = stat.interval_range()
    hits = {c: [] for c in cols}
    whole = {c: [] for c in cols}
    widths = {c: [] for c in cols}
    cut = {c: [] for c in cols}
    ests = {c: [] for c in cols}
    for _ in range(draws):
        noisy = truth_hist.noisy + discrete_laplace(
            rng, truth_hist.noisy.shape, scale
        )
        hist = FineHistogram(
            truth_hist.edges, np.maximum(noisy, 0), noisy, truth_hist.info
        )
        stat.build = types.SimpleNamespace(fine=hist)
        out = stat.curve(hist)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stat.add_intervals(out, _released(scale))
        for c in cols:
            t = truth[c].to_numpy(float)
            lo, hi = out[f"{c}_low"].to_numpy(), out[f"{c}_high"].to_numpy()
            inside = (lo <= t + 1e-12) & (t <= hi + 1e-12)
            hits[c].append(inside)
            whole[c].append(inside.reshape(groups, -1).all(axis=1))
            widths[c].append(hi - lo)
            cut[c].append((lo <= lo_edge + 1e-12) | (hi >= hi_edge - 1e-12))
            ests[c].append(_estimate(stat, c, hist, out) - t)
    res = {}
    for c in cols:
        dev = np.asarray(ests[c])
        alpha = 1 - LEVEL
        q = np.quantile(dev, [alpha / 2, 1 - alpha / 2], axis=0)
        oracle = q[1] - q[0]
        inner = (np.mean(cut[c], axis=0) < 0.01) & (oracle > 0)
        some = bool(inner.any())  # else nan: every point is cut
        res[c] = {
            "pointwise": (
                float(np.mean(np.asarray(hits[c])[:, inner]))
                if some
                else np.nan
            ),
            "whole": float(np.mean(np.concatenate(whole[c]))),
            "width/oracle": (
                float(
                    np.mean(np.asarray(widths[c])[:, inner])
                    / oracle[inner].mean()
                )
                if some
                else np.nan
            ),
            "points": int(inner.sum()),
            "all": float(np.mean(hits[c])),
            "width": float(np.mean(widths[c])),
        }
    return res


def _estimate(stat, col, hist, out) -> np.ndarray:
    """The estimate the interval is built around: the unbiased linear
    form for linear curves (density, ECDF), the released value else."""
    designs = stat.linear_designs(hist)
    if col not in designs:
        return out[col].to_numpy(float)
    design, ratio = designs[col]
    num = hist.noisy @ design.T
    if ratio:
        num = num / np.maximum(hist.noisy.sum(axis=1, keepdims=True), 1)
    low, _ = stat.pad_bounds(num, num)
    return low.ravel()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--only", choices=["density", "ecdf", "boxplot"])
    ap.add_argument(
        "--eps",
        type=float,
        nargs="+",
        default=[1.0, 0.5],
        help="eps of the box plot's runs (the curves run at eps 1)",
    )
    args = ap.parse_args()
    print(f"level {LEVEL}, {args.draws} draws, 3 groups of ~200 records")
    print(
        "| stat | eps | column | band | coverage | width/oracle | points "
        "| coverage, all points | width |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in ("normal", "skewed"):
        truth = true_histogram(shape=shape)
        for eps in args.eps:
            for band in ("pointwise", "simultaneous"):
                for name, (stat, cols) in stats(band, eps).items():
                    if args.only not in (None, name):
                        continue
                    # the curves' bands: the first shape at eps 1
                    if name != "boxplot" and (shape != "normal" or eps != 1):
                        continue
                    if name == "boxplot" and band != "pointwise":
                        continue
                    # replace adjacency: sensitivity 2
                    scale = 2.0 / eps
                    rows = run(stat, cols, truth, args.draws, scale=scale)
                    for c, r in rows.items():
                        cov = r[
                            "pointwise" if band == "pointwise" else "whole"
                        ]
                        label = (
                            name if shape == "normal" else f"{name} ({shape})"
                        )
                        print(
                            f"| {label} | {eps:g} | {c} | {band} | {cov:.3f} "
                            f"| {r['width/oracle']:.2f} | {r['points']} | "
                            f"{r['all']:.3f} | {r['width']:.2f} |"
                        )


if __name__ == "__main__":
    main()
