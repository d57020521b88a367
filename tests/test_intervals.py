"""Interval variables of every family: at the stated level the interval
holds the noise-free value (coverage over seeds and cells), and where the
noise has an exact quantile the interval is that quantile (within 10%).

Coverage bounds are binomial at ``ALPHA = 1e-6`` (tests/alpha): for
counts the sample is the cells (each has its own noise), for curves the
builds (the points of a curve share noise). A negative control shows the
count bound fails for an interval of half the width.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from alpha import z_two_sided
from keyfile import fixed_key_file, using_key
from plotnine import (
    aes,
    geom_bar,
    geom_bin_2d,
    geom_boxplot,
    geom_density,
    geom_histogram,
    geom_point,
    geom_step,
    ggplot,
)
from plotnine.data import mpg

import plotnine_private as pp
from plotnine_private.noise import dlap_interval
from plotnine_private.noise_bounds import ckm_interval

LEVEL = 0.9
Z = z_two_sided()


@pytest.fixture(autouse=True, scope="module")
def _fixed_key():
    """Seeds are labels under a fixed key: the coverage loops draw under
    twenty seeds, each of which would pay scrypt stretching without one;
    the noise is as fixed as without a key."""
    with using_key(fixed_key_file("test_intervals")):
        yield


LEVELS = sorted(mpg["class"].unique())
MODELS = sorted(mpg["model"].unique())
SEEDS = range(1, 41)


def lower_bound(level: float, n: int) -> float:
    return level - Z * math.sqrt(level * (1 - level) / n)


def built(plot) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pp.layer_data(plot)


#: builds shared by the tests of this module: the same plot at the same
#: seed is one build (the coverage loops and their spot checks repeat them)
_BUILDS: dict[tuple, pd.DataFrame] = {}


def build_of(name: str, make, **kw) -> pd.DataFrame:
    """``built(make(**kw))``, built once per module under ``name``."""
    key = (name, *sorted(kw.items()))
    if key not in _BUILDS:
        _BUILDS[key] = built(make(**kw))
    return _BUILDS[key].copy()


def _truth(make, name: str | None = None) -> pd.DataFrame:
    if name is None:
        return built(make(eps=1e7, seed=0))
    return build_of(name, make, eps=1e7, seed=0)


# --------------------------------------------------------------------------
# counts: exact
# --------------------------------------------------------------------------
#: bars and histograms unstacked: the intervals are the stat's, and
#: plotnine's position_stack (a pandas pass per bar) took most of a build
COUNTS = {
    "count": lambda **kw: (
        ggplot(mpg, aes("model"))
        + geom_bar(
            stat="count_dp",
            levels=MODELS,
            level=LEVEL,
            drop=False,
            position="identity",
            **kw,
        )
    ),
    "bin": lambda **kw: (
        ggplot(mpg, aes("hwy"))
        + geom_histogram(
            stat="bin_dp",
            limits=(10, 45),
            bins=35,
            level=LEVEL,
            position="identity",
            **kw,
        )
    ),
    "bin2d": lambda **kw: (
        ggplot(mpg, aes("displ", "hwy"))
        + geom_bin_2d(
            stat="bin2d_dp",
            limits=((1, 7), (10, 45)),
            bins=8,
            drop=False,
            level=LEVEL,
            **kw,
        )
    ),
    "hex": lambda **kw: (
        ggplot(mpg, aes("displ", "hwy"))
        + pp.geom_hex(
            stat="binhex_dp",
            limits=((1, 7), (10, 45)),
            bins=8,
            drop=False,
            level=LEVEL,
            **kw,
        )
    ),
    "sum": lambda **kw: (
        ggplot(mpg, aes("cty", "hwy"))
        + geom_point(
            stat="sum_dp",
            limits=((8, 36), (12, 44)),
            resolution=(2, 2),
            level=LEVEL,
            **kw,
        )
    ),
}
#: the released count of each family
COLUMN = {"sum": "n"}


#: the columns that place a cell
KEYS = {"count": ["x"], "bin": ["x"]}
#: builds per family: each build's cells are the sample (at least as many
#: cells as 40 builds of a coarser plot gave: 280 for count and bin, 1,000
#: for bin2d, 1,160 for hex, 1,320 for sum), fewer builds to make
COVERAGE_SEEDS = {"count": 8, "bin": 8, "bin2d": 13, "hex": 13, "sum": 12}


def _covered(family, col, eps, keys=("x", "y")):
    """Per build and cell: the true count (0 where the noise-free build
    shows no cell) inside the interval."""
    keys = list(keys)
    make = COUNTS[family]
    truth = _truth(make, family)[[*keys, col]]
    truth = truth.rename(columns={col: "_true"})
    hits = []
    for seed in SEEDS[: COVERAGE_SEEDS[family]]:
        d = build_of(family, make, eps=eps, seed=seed)
        d = d.merge(truth, on=keys, how="left")
        t = d["_true"].fillna(0).to_numpy(dtype=float)
        hits.append(
            (d[f"{col}_low"] <= t + 1e-12) & (t <= d[f"{col}_high"] + 1e-12)
        )
    return np.concatenate(hits)


@pytest.mark.parametrize("family", sorted(COUNTS))
def test_count_intervals_hold_the_true_count(family):
    make = COUNTS[family]
    col = COLUMN.get(family, "count")
    d = build_of(family, make, eps=1, seed=3)
    k = dlap_interval(2.0, LEVEL)[0]
    # the exact quantile: cells away from 0 are released +- k
    away = d[f"{col}_low"] > 0
    assert away.any()
    half = (d.loc[away, f"{col}_high"] - d.loc[away, f"{col}_low"]) / 2
    assert np.allclose(half, k)
    hits = _covered(family, col, eps=1, keys=KEYS.get(family, ("x", "y")))
    # each cell has its own noise: the cells are the sample
    assert hits.mean() >= lower_bound(LEVEL, hits.size), hits.mean()


def test_scaled_columns_share_the_count_interval():
    d = build_of("bin", COUNTS["bin"], eps=1, seed=3)
    total = d["count"].abs().sum()
    width = d["xmax"] - d["xmin"]
    assert np.allclose(d["density_low"] * width * total, d["count_low"])
    # a count over the largest count, at most 1
    assert np.allclose(
        d["ncount_high"], np.minimum(d["count_high"] / d["count"].max(), 1)
    )


CARS = mpg.assign(
    maker=pd.Categorical(mpg["manufacturer"]),
    drv=pd.Categorical(mpg["drv"], ["4", "f", "r"]),
)


def _shares(**kw):
    # 15 makers x 3 drives: 45 shares a build
    return built(
        ggplot(CARS, aes("maker", fill="drv"))
        + geom_bar(
            stat="count_dp",
            level=LEVEL,
            drop=False,
            position="identity",
            **kw,
        )
    )


def _class_bars(**kw):
    return ggplot(mpg, aes("class")) + geom_bar(
        stat="count_dp", levels=LEVELS, level=LEVEL, drop=False, **kw
    )


def test_a_one_bar_group_has_the_share_interval_one():
    # aes("class") alone: every bar is its own group, its share is 1
    c = build_of("class", _class_bars, eps=1, seed=3)
    assert (c["prop"] == 1).all()
    sure = c["count_low"] > 0
    assert sure.sum() >= 5
    assert (c.loc[sure, "prop_low"] == 1).all()
    assert (c["prop_high"] == 1).all()
    # a bar that may be empty: its share is 0 (no records) or 1
    assert (c.loc[~sure, "prop_low"] == 0).all()


def test_share_intervals_stay_in_0_1_and_hold_the_share():
    exact = _shares(eps=1e7, seed=0)[["x", "fill", "prop"]]
    exact = exact.rename(columns={"prop": "_true"})
    hits = []
    for seed in SEEDS[:19]:  # 855 shares (40 builds of 21 gave 840)
        d = _shares(eps=0.5, seed=seed)
        assert d["prop_low"].between(0, 1).all()
        assert d["prop_high"].between(0, 1).all()
        assert (d["prop_low"] <= d["prop_high"]).all()
        m = d.merge(exact, on=["x", "fill"])
        hits.append(
            (m["prop_low"] <= m["_true"] + 1e-12)
            & (m["_true"] <= m["prop_high"] + 1e-12)
        )
    hits = np.concatenate(hits)
    # the other bars of a group are noisy too: a loose floor
    assert hits.mean() >= lower_bound(LEVEL, hits.size) - 0.05, hits.mean()


def test_half_as_wide_fails_the_same_bound():
    make = COUNTS["count"]
    truth = _truth(make, "count")["count"].to_numpy(dtype=float)
    hits = []
    for seed in SEEDS[:4]:  # 152 cells
        d = build_of("count", make, eps=1, seed=seed)
        mid = (d["noisy_count"]).to_numpy()
        half = (d["count_high"] - d["count_low"]).to_numpy() / 4
        hits.append(np.abs(truth - mid) <= half)
    hits = np.concatenate(hits)
    assert hits.mean() < lower_bound(LEVEL, hits.size)


def test_level_parameter_is_checked():
    with pytest.raises(pp.PlotninePrivateError, match="level must be"):
        ggplot() + geom_bar(stat="count_dp", eps=1, level=1.5)


# --------------------------------------------------------------------------
# curves: simulated
# --------------------------------------------------------------------------
RNG = np.random.default_rng(7)
#: six groups of about 200 records: each build gives six curves with
#: their own noise (the curves are the sample)
CENTRES = {"a": 3.0, "b": 5.0, "c": 6.5, "d": 2.0, "e": 4.0, "f": 8.0}
GROUPS = pd.Categorical(RNG.choice(list(CENTRES), 1200), categories=CENTRES)
DATA = pd.DataFrame(
    {
        "v": np.clip(
            pd.Series(GROUPS).map(CENTRES).to_numpy() + RNG.normal(0, 1, 1200),
            0,
            10,
        ),
        "g": GROUPS,
    }
)
#: builds per coverage check: 13 x 6 curves (25 builds of 3 gave 75)
CURVE_SEEDS = SEEDS[:13]
CURVES = {
    "density": (
        lambda band="pointwise", **kw: (
            ggplot(DATA, aes("v", fill="g"))
            + geom_density(
                stat="density_dp",
                limits=(0, 10),
                bins=64,
                n=64,
                level=LEVEL,
                band=band,
                **kw,
            )
        ),
        ("density",),
    ),
    "ecdf": (
        lambda band="pointwise", **kw: (
            ggplot(DATA, aes("v", colour="g"))
            + geom_step(
                stat="ecdf_dp",
                limits=(0, 10),
                bins=64,
                level=LEVEL,
                band=band,
                **kw,
            )
        ),
        ("ecdf",),
    ),
    "boxplot": (
        lambda band="pointwise", **kw: (
            ggplot(DATA, aes("g", "v"))
            + geom_boxplot(
                stat="boxplot_dp", limits=(0, 10), bins=64, level=LEVEL, **kw
            )
        ),
        ("lower", "middle", "upper"),
    ),
}


def _curve_hits(family, eps, band="pointwise"):
    make, cols = CURVES[family]
    # the noise-free curve is the same whatever the band
    truth = build_of(family, make, eps=1e7, seed=0)
    per_build = []
    for seed in CURVE_SEEDS:
        d = build_of(family, make, band=band, eps=eps, seed=seed)
        inside = np.ones(len(d), dtype=bool)
        for col in cols:
            t = truth[col].to_numpy(dtype=float)
            inside &= (d[f"{col}_low"].to_numpy() <= t + 1e-9) & (
                t <= d[f"{col}_high"].to_numpy() + 1e-9
            )
        per_build.append(inside)
    return np.asarray(per_build)


@pytest.mark.parametrize("family", sorted(CURVES))
def test_curve_intervals_hold_the_noise_free_curve(family):
    cols = CURVES[family][1]
    hits = _curve_hits(family, eps=1)
    # pointwise: each point's coverage, on average over the curve; the
    # curves (groups of each build) have their own noise, so the bound
    # counts curves: 78 (0.73; half-wide density and ECDF bands hold
    # 0.34 and 0.61)
    per_col = hits.mean() ** (1 / len(cols))
    curves = len(CURVE_SEEDS) * DATA["g"].nunique()
    assert per_col >= lower_bound(LEVEL, curves), per_col


@pytest.mark.parametrize("family", ["density", "ecdf"])
def test_simultaneous_band_holds_whole_curves(family):
    make, cols = CURVES[family]
    hits = _curve_hits(family, eps=1, band="simultaneous")
    d = build_of(family, make, band="simultaneous", eps=1, seed=1)
    groups = d["group"].nunique()
    whole = hits.reshape(len(hits), groups, -1).all(axis=2)
    assert whole.mean() >= lower_bound(LEVEL, whole.size)
    # and it is wider than the pointwise band
    p = build_of(family, make, band="pointwise", eps=1, seed=1)
    col = cols[0]
    assert (d[f"{col}_high"] - d[f"{col}_low"]).mean() > (
        p[f"{col}_high"] - p[f"{col}_low"]
    ).mean()


def test_band_parameter_is_checked():
    with pytest.raises(pp.PlotninePrivateError, match="band must be"):
        ggplot() + geom_density(
            stat="density_dp", limits=(0, 1), eps=1, band="both"
        )


# --------------------------------------------------------------------------
# summaries and PCA
# --------------------------------------------------------------------------
def test_summary_intervals_hold_the_mean_and_total():
    def make(fun, **kw):
        return ggplot(mpg, aes("model", "hwy")) + geom_point(
            stat="summary_dp",
            bounds=(10, 45),
            levels=MODELS,
            fun=fun,
            level=LEVEL,
            errorbar=None,
            drop=False,
            **kw,
        )

    for fun in ("mean", "sum"):
        truth = _truth(lambda **kw: make(fun, **kw))["y"].to_numpy()
        hits = []
        # 38 models: 190 cells in 5 builds (25 builds of 7 classes gave
        # 175); the bound keeps its 25
        for seed in SEEDS[:5]:
            d = built(make(fun, eps=1, seed=seed))
            # errorbar=None draws no bars; the variables are still there
            drawn = d["y"].notna()
            assert (d.loc[drawn, "ymin"] == d.loc[drawn, "y"]).all()
            hits.append((d["y_low"] <= truth) & (truth <= d["y_high"]))
        assert np.mean(hits) >= lower_bound(LEVEL, 25)


def test_pca_tile_intervals_are_the_exact_noise_quantile():
    rng = np.random.default_rng(2)
    x = pd.DataFrame(rng.normal(size=(400, 3)), columns=list("abc"))
    for method in ("sparse", "add"):
        p = ggplot(x) + geom_point(
            stat="dp_pca_score",
            columns=list("abc"),
            eps=4,
            delta=1e-5,
            seed=1,
            bins=(6, 6),
            method=method,
            level=LEVEL,
        )
        d = built(p)
        row = pp.noise_interval(p, level=LEVEL).iloc[0]
        away = d["count_low"] > 0
        half = (d.loc[away, "count_high"] - d.loc[away, "count_low"]) / 2
        assert np.allclose(half, row["high"])
        # prob is a share of the released total: the other tiles held
        rest = d["count"].sum() - d["count"]
        assert np.allclose(
            d["prob_high"], d["count_high"] / (d["count_high"] + rest)
        )
        assert d["prob_low"].between(0, 1).all()


def test_a_released_ckm_zero_may_hide_a_small_count():
    """A p-table moves small counts to 0 (1 -> 0 with probability 0.67
    for D=5, V=2.01, js=2), so a released 0 is no proof of a true 0: its
    interval is [0, -low] like any count's, and it holds the true count
    of the cells that were zeroed. (It was [0, 0].)"""
    pt = pp.create_cnt_ptable(D=5, V=2.01, js=2)
    k = -ckm_interval(pt, 0.95)[0]  # the noise's 95% bound of large cells
    # ten levels holding 0, 1, 2, ... 9 records
    data = pd.DataFrame({"g": np.repeat(list("abcdefghij"), range(10))})
    levels = list("abcdefghij")
    true = np.arange(10)
    zeroed = high_of_zero = 0
    for rng_seed in range(12):
        keyed = pp.add_record_keys(data, name="rk", rng_seed=rng_seed)
        d = pp.layer_data(
            ggplot(keyed, aes("g"))
            + geom_bar(
                aes(rkey="rk"), stat="count_ckm", ptable=pt, levels=levels
            )
        )
        t = true[d["x"].to_numpy(dtype=int) - 1]
        zero = d["count"].to_numpy() == 0
        zeroed += int((zero & (t > 0)).sum())
        high_of_zero = max(high_of_zero, d.loc[zero, "count_high"].max())
        # every released 0 has the same interval as a count released 0
        assert (d.loc[zero, "count_low"] == 0).all()
        assert (d.loc[zero, "count_high"] == high_of_zero).all()
        # a true 0 is released as 0 (an empty cell has no key)
        assert (d["count"].to_numpy()[t == 0] == 0).all()
        covered = (d["count_low"] <= t) & (t <= d["count_high"])
        assert covered[zero & (t > 0) & (t <= k)].all()
    assert zeroed >= 6  # small counts were zeroed: the case is tested
    assert high_of_zero == k == 3
