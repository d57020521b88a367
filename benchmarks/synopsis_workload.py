"""Twelve figures from one synopsis against twelve separate releases.

Run: ``python benchmarks/synopsis_workload.py [--seeds 5] [--eps 1]``
(about 2 s per seed, and as much again for the bootstrap intervals of
the drawn sum and mean: 6.3 s against 3.5 s per seed on a shared 2-core
machine).

The data (generated, seed 0): 20 000 flights with a ``carrier`` of 8
levels, an ``origin`` of 3, a ``month`` of 12, ``dep_delay`` (declared
(-30, 150) at resolution 10) and ``air_time`` ((0, 360) at 20).

The 12 figures: F1 bars by carrier; F2 bars by carrier filled by origin;
F3 bars by month faceted by origin; F4 and F5 histograms of dep_delay at
bin widths 10 and 30; F6 2-D bins of dep_delay x air_time (30 x 60); F7
the sum of air_time by carrier; F8 the mean air_time by origin; F9 a
density of dep_delay; F10 the ECDF of air_time; F11 box plots of
air_time by carrier (the three quartiles); F12 histograms of air_time
(width 40) faceted by origin.

(a) one ``pp.synopsis`` at ``eps`` holding six 2-way marginals (carrier x
origin, month x origin, dep_delay x air_time, carrier x air_time, origin
x dep_delay, origin x air_time), at equal shares and at the shares of
``pp.plan_synopsis``; every figure is post-processing of
``Synopsis.marginal`` / ``Synopsis.histogram`` with numpy here (sums,
means and quartiles from the fine bins, a Gaussian kernel of bandwidth
10 on the fine bins for the density, the cumulated fine bins for the
ECDF).
(b) 12 layers of the package's stats (``count_dp``, ``bin_dp``,
``bin2d_dp``, ``summary_dp``, ``density_dp``, ``ecdf_dp``,
``boxplot_dp``) at ``eps / 12`` each, read with ``layer_data``.

(drawn) the same synopsis (equal shares) drawn by the layers of (b)
with ``ggplot(syn, ...)`` (no eps, seed or limits: its declared grid),
against the same layers drawn from a synopsis at eps 1e6 (the sum and
the mean: ``summary_dp`` on it, from the fine bins).

A figure's error is its relative L1 error against its own noise-free
version: ``sum |released - noise-free| / sum |noise-free|`` over the
figure's numbers (counts, sums, means, curve points, quartiles). The
noise-free version of (a) is the same numpy code on the true marginals;
of (b), the same layer at eps 1e6. So both measure the error the
privacy noise causes (not the binning both share).

Also printed: the coverage of the synopsis's 95% +- (``pp.accuracy``:
exact for a held noisy cell, normal for a sum of cells) around its
consistent bar counts (F1: carrier, summed from carrier x origin; F2:
carrier x origin cells).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    facet_wrap,
    geom_bar,
    geom_bin_2d,
    geom_boxplot,
    geom_density,
    geom_histogram,
    geom_point,
    ggplot,
)

import plotnine_private as pp
from plotnine_private._compat import layer_data

CARRIERS = ["AA", "B6", "DL", "EV", "MQ", "UA", "US", "WN"]
ORIGINS = ["EWR", "JFK", "LGA"]
MONTHS = list(range(1, 13))
DELAY = (-30.0, 150.0, 10.0)
AIR = (0.0, 360.0, 20.0)
DIMS = {
    "carrier": CARRIERS,
    "origin": ORIGINS,
    "month": MONTHS,
    "dep_delay": DELAY,
    "air_time": AIR,
}
WORKLOAD = [
    ("carrier", "origin"),
    ("month", "origin"),
    ("dep_delay", "air_time"),
    ("carrier", "air_time"),
    ("origin", "dep_delay"),
    ("origin", "air_time"),
]
FIGURES = [
    "F1 bars",
    "F2 bars+fill",
    "F3 facets",
    "F4 hist w10",
    "F5 hist w30",
    "F6 2-D bins",
    "F7 sum",
    "F8 mean",
    "F9 density",
    "F10 ECDF",
    "F11 box",
    "F12 hist facets",
]
BW = 10.0  # the synopsis density's kernel bandwidth


def flights(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    carrier = rng.choice(
        CARRIERS, n, p=[0.12, 0.16, 0.15, 0.17, 0.08, 0.18, 0.06, 0.08]
    )
    origin = rng.choice(ORIGINS, n, p=[0.36, 0.33, 0.31])
    # air time depends on the carrier, delay on the origin
    base = 90 + 15 * np.array([CARRIERS.index(c) for c in carrier])
    shift = 5 * np.array([ORIGINS.index(o) for o in origin])
    return pd.DataFrame(
        {
            "carrier": pd.Categorical(carrier, categories=CARRIERS),
            "origin": pd.Categorical(origin, categories=ORIGINS),
            "month": pd.Categorical(rng.integers(1, 13, n), categories=MONTHS),
            "dep_delay": np.clip(rng.gamma(1.5, 15, n) - 20 + shift, -30, 150),
            "air_time": np.clip(rng.normal(base, 50), 0, 360),
        }
    )


# -- (a) the figures from marginals (noisy or true) -----------------------
def _centres(lim: tuple[float, float, float]) -> np.ndarray:
    lo, hi, res = lim
    return np.arange(lo, hi, res) + res / 2


def _quartiles(counts: np.ndarray, lim) -> np.ndarray:
    """The three quartiles of a fine histogram (linear within a bin)."""
    lo, hi, res = lim
    c = np.clip(counts, 0, None)
    cdf = np.concatenate([[0.0], np.cumsum(c)]) / max(c.sum(), 1e-12)
    edges = np.arange(lo, hi + res / 2, res)
    return np.interp([0.25, 0.5, 0.75], cdf, edges)


def figures_from(tab) -> list[np.ndarray]:
    """The 12 figures' numbers from ``tab(marginal)``, the counts of a
    held marginal (or of a sub-marginal of one)."""
    co = tab(("carrier", "origin"))
    mo = tab(("month", "origin"))
    da = tab(("dep_delay", "air_time"))
    ca = tab(("carrier", "air_time"))
    od = tab(("origin", "dep_delay"))
    oa = tab(("origin", "air_time"))
    delay = od.sum(axis=0)
    air = oa.sum(axis=0)
    ac = _centres(AIR)
    dc = _centres(DELAY)
    kernel = np.exp(-0.5 * ((dc[:, None] - dc[None, :]) / BW) ** 2)
    dens = np.clip(delay, 0, None) @ kernel
    dens = dens / max(dens.sum(), 1e-12)
    ecdf = np.cumsum(np.clip(air, 0, None)) / max(air.sum(), 1e-12)
    return [
        co.sum(axis=1),
        co.ravel(),
        mo.ravel(),
        delay,
        delay.reshape(-1, 3).sum(axis=1),
        da.reshape(6, 3, 6, 3).sum(axis=(1, 3)).ravel(),
        ca @ ac,
        (oa @ ac) / np.maximum(oa.sum(axis=1), 1.0),
        dens,
        ecdf,
        np.concatenate([_quartiles(r, AIR) for r in ca]),
        oa.reshape(3, 9, 2).sum(axis=2).ravel(),
    ]


def true_tables(df: pd.DataFrame):
    def code(d: str) -> np.ndarray:
        spec = DIMS[d]
        if isinstance(spec, list):
            return df[d].cat.codes.to_numpy()
        lo, hi, res = spec
        k = np.floor((df[d].to_numpy() - lo) / res).astype(int)
        return np.minimum(k, int(round((hi - lo) / res)) - 1)

    def size(d: str) -> int:
        spec = DIMS[d]
        if isinstance(spec, list):
            return len(spec)
        lo, hi, res = spec
        return int(round((hi - lo) / res))

    def tab(mg):
        out = np.zeros([size(d) for d in mg])
        np.add.at(out, tuple(code(d) for d in mg), 1)
        return out

    return tab


# -- (b) twelve layers at eps / 12 ----------------------------------------
def layers(df, eps: float, seed) -> list[pd.Series | None]:
    """Each layer's numbers, keyed by panel, group and position (a 2-D
    bin layer leaves out cells it does not draw: 0 there). ``df`` may be
    a synopsis: the same layers without eps, seed or limits (its declared
    grid is theirs); a layer it does not draw is None."""
    drawn = isinstance(df, pp.Synopsis)
    kw = {} if drawn else dict(eps=eps, seed=seed)
    delay = {} if drawn else dict(limits=DELAY[:2])
    air = {} if drawn else dict(limits=AIR[:2])
    dbins = {} if drawn else dict(boundary=DELAY[0], **delay)
    abins = {} if drawn else dict(boundary=AIR[0], **air)
    sbounds = {} if drawn else dict(bounds=AIR[:2])
    plots = [
        (
            ggplot(df, aes("carrier")) + geom_bar(stat="count_dp", **kw),
            "count",
        ),
        (
            ggplot(df, aes("carrier", fill="origin"))
            + geom_bar(stat="count_dp", **kw),
            "count",
        ),
        (
            ggplot(df, aes("month"))
            + geom_bar(stat="count_dp", **kw)
            + facet_wrap("origin"),
            "count",
        ),
        (
            ggplot(df, aes("dep_delay"))
            + geom_histogram(stat="bin_dp", binwidth=10, **dbins, **kw),
            "count",
        ),
        (
            ggplot(df, aes("dep_delay"))
            + geom_histogram(stat="bin_dp", binwidth=30, **dbins, **kw),
            "count",
        ),
        (
            ggplot(df, aes("dep_delay", "air_time"))
            + geom_bin_2d(
                stat="bin2d_dp",
                limits=(DELAY[:2], AIR[:2]),
                binwidth=(30, 60),
                **kw,
            ),
            "count",
        ),
        (
            ggplot(df, aes("carrier", "air_time"))
            + geom_point(stat="summary_dp", fun="sum", **sbounds, **kw),
            "y",
        ),
        (
            ggplot(df, aes("origin", "air_time"))
            + geom_point(stat="summary_dp", fun="mean", **sbounds, **kw),
            "y",
        ),
        (
            ggplot(df, aes("dep_delay"))
            + geom_density(stat="density_dp", **delay, **kw),
            "density",
        ),
        (
            ggplot(df, aes("air_time"))
            + geom_point(stat="ecdf_dp", **air, **kw),
            "ecdf",
        ),
        (
            ggplot(df, aes("carrier", "air_time"))
            + geom_boxplot(stat="boxplot_dp", **air, **kw),
            ["lower", "middle", "upper"],
        ),
        (
            ggplot(df, aes("air_time"))
            + geom_histogram(stat="bin_dp", binwidth=40, **abins, **kw)
            + facet_wrap("origin"),
            "count",
        ),
    ]
    out: list[pd.Series | None] = []
    for p, col in plots:
        if p is None:
            out.append(None)
            continue
        try:
            d = layer_data(p)
        except pp.PlotninePrivateError:
            if not drawn:
                raise
            out.append(None)  # not drawn from a synopsis yet
            continue
        keys = ["xmin", "ymin"] if "bin2d" in str(p.layers[0].stat) else []
        keys = keys or ["PANEL", "group", "x"]
        cols = [col] if isinstance(col, str) else col
        out.append(d.set_index(keys)[cols].astype(float).stack())
    return out


def rel_l1(got, true) -> float:
    if isinstance(got, pd.Series):
        got, true = got.align(true, fill_value=0.0)
    got, true = np.asarray(got), np.asarray(true)
    return float(np.abs(got - true).sum() / np.abs(true).sum())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # same-seed and eps > 10 advice
    df = flights()
    eps = args.eps
    t0 = time.perf_counter()
    truth_a = figures_from(true_tables(df))
    truth_b = layers(df, 1e6, "truth")
    plan = pp.plan_synopsis(DIMS, WORKLOAD, eps=eps)
    errs: dict[str, list] = {
        "equal": [],
        "planned": [],
        "drawn": [],
        "separate": [],
    }
    # the synopsis's figures drawn by the same layers as (b), against the
    # same layers drawn from a synopsis at eps 1e6; a layer it does not
    # draw is the numpy figure of (a)
    truth_d = layers(
        pp.synopsis(df, DIMS, eps=1e6, workload=WORKLOAD, seed="truth"),
        eps,
        None,
    )
    cover: dict[str, list] = {"F1": [], "F2": []}
    for seed in range(args.seeds):
        for how, weights in (("equal", None), ("planned", plan.weights)):
            syn = pp.synopsis(
                df,
                DIMS,
                eps=eps,
                workload=WORKLOAD,
                weights=weights,
                seed=seed,
            )
            figs = figures_from(syn.counts)
            errs[how].append([rel_l1(f, t) for f, t in zip(figs, truth_a)])
            if how == "equal":
                drawn = layers(syn, eps, None)
                errs["drawn"].append(
                    [
                        rel_l1(figs[k], truth_a[k])
                        if d is None
                        else rel_l1(d, truth_d[k])
                        for k, d in enumerate(drawn)
                    ]
                )
                for key, mg in (
                    ("F1", "carrier"),
                    ("F2", ("carrier", "origin")),
                ):
                    half = pp.accuracy(syn, mg)["halfwidth"].iloc[0]
                    got = syn.counts(mg).ravel()
                    true = true_tables(df)(
                        (mg,) if isinstance(mg, str) else mg
                    ).ravel()
                    cover[key].extend(np.abs(got - true) <= half)
        sep = layers(df, eps / 12, f"{seed}")
        errs["separate"].append([rel_l1(f, t) for f, t in zip(sep, truth_b)])
    mean = {k: np.mean(v, axis=0) for k, v in errs.items()}
    print(
        f"eps={eps:g} total; {args.seeds} seeds; 20000 rows; synopsis of "
        f"{len(WORKLOAD)} marginals ({sum(plan.table()['cells'])} cells) vs "
        f"12 layers at eps/12={eps / 12:.4g}"
    )
    print(
        "planned shares: "
        + ", ".join(
            f"{'x'.join(mg)} {w:.3f}" for mg, w in plan.weights.items()
        )
    )
    print(
        f"{'figure':<17} {'synopsis':>9} {'planned':>9} {'drawn':>9} "
        f"{'separate':>9} {'ratio':>6} {'drawn/sep':>9}"
    )
    for k, name in enumerate(FIGURES):
        print(
            f"{name:<17} {mean['equal'][k]:9.4f} {mean['planned'][k]:9.4f} "
            f"{mean['drawn'][k]:9.4f} {mean['separate'][k]:9.4f} "
            f"{mean['equal'][k] / mean['separate'][k]:6.2f} "
            f"{mean['drawn'][k] / mean['separate'][k]:9.2f}"
        )
    m = {k: float(np.mean(v)) for k, v in mean.items()}
    print(
        f"{'mean':<17} {m['equal']:9.4f} {m['planned']:9.4f} "
        f"{m['drawn']:9.4f} {m['separate']:9.4f} "
        f"{m['equal'] / m['separate']:6.2f} {m['drawn'] / m['separate']:9.2f}"
    )
    for key, v in cover.items():
        print(
            f"coverage of the 95% +- on {key} bar counts: "
            f"{np.mean(v):.3f} ({len(v)} bars)"
        )
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
