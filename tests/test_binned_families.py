"""bin_dp / bin_ckm, bin2d_dp / bin2d_ckm, sum_dp / sum_ckm."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    after_stat,
    geom_bin_2d,
    geom_count,
    geom_freqpoly,
    geom_histogram,
    geom_text,
    ggplot,
    xlim,
    ylim,
)
from plotnine._utils.registry import Registry

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private._compat import build
from plotnine_private.door import layer_releases

PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)
BREAKS = [0, 10, 15, 20, 25, 30, 40]


def test_registry_has_both_2d_spellings():
    for name in (
        "stat_bin2d_dp",
        "stat_bin_2d_dp",
        "stat_bin2d_ckm",
        "stat_bin_2d_ckm",
        "stat_bin_dp",
        "stat_bin_ckm",
        "stat_sum_dp",
        "stat_sum_ckm",
    ):
        assert name in Registry


def test_histogram_releases_every_public_bin(mpg):
    p = ggplot(mpg, aes("hwy")) + geom_histogram(
        stat="bin_dp", breaks=BREAKS, eps=1, seed=23
    )
    d = layer_data(p)
    assert list(d["xmin"]) == BREAKS[:-1]
    assert list(d["xmax"]) == BREAKS[1:]
    assert np.array_equal(d["count"], np.clip(d["noisy_count"], 0, None))
    # derived variables come from released counts
    total = d["count"].sum()
    assert np.allclose(
        d["density"], d["count"] / (d["xmax"] - d["xmin"]) / total
    )
    assert np.isclose(d["ncount"].max(), 1.0)
    assert np.isclose(d["ndensity"].max(), 1.0)


def test_histogram_and_text_layers_agree(mpg):
    p = (
        ggplot(mpg, aes("hwy"))
        + geom_histogram(
            stat="bin_dp", bins=8, limits=(10, 46), eps=1, seed=23
        )
        + geom_text(
            aes(label=after_stat("count")),
            stat="bin_dp",
            bins=8,
            limits=(10, 46),
            eps=1,
            seed=23,
        )
    )
    built = build(p)  # both layers of one build
    bars, text = built.layers[0].data, built.layers[1].data
    assert list(bars["count"]) == list(text["count"])
    assert len(bars) == 8


def test_scale_limits_are_a_public_range(mpg):
    p = (
        ggplot(mpg, aes("hwy"))
        + geom_freqpoly(stat="bin_dp", bins=5, eps=1, seed=1)
        + xlim(0, 50)
    )
    d = layer_data(p)
    # stat_bin's rule over the limits: 5 bins of 50 / 4, the end bins
    # centred on 0 and 50, as plotnine bins the same call
    plain = layer_data(
        ggplot(mpg, aes("hwy")) + geom_freqpoly(bins=5) + xlim(0, 50)
    )
    np.testing.assert_allclose(d["xmin"], plain["xmin"])
    # (the bin from -6.25 starts outside the scale limits: censored)
    assert np.nanmin(d["xmax"]) == 6.25


def test_bin_counts_follow_closed_side():
    d = pd.DataFrame({"x": [0.0, 1.0, 1.0, 2.0]})
    for closed, expect in (("right", [3, 1]), ("left", [1, 3])):
        out = layer_data(
            ggplot(d, aes("x"))
            + geom_histogram(
                stat="bin_ckm",
                breaks=[0, 1, 2],
                closed=closed,
                ptable=pp.create_cnt_ptable(D=1, V=0.5),
            )
            + aes(rkey=[0.0] * 4)
        )
        # with all keys 0 the p-table row is read at cell key 0: v = -1
        assert list(out["count"]) == [e - 1 for e in expect]


def test_private_range_does_not_follow_an_outlier(mpg):
    far = pd.concat([mpg, mpg.iloc[[0]].assign(hwy=1e9)], ignore_index=True)
    for data in (mpg, far):
        q = build(
            ggplot(data, aes("hwy"))
            + geom_histogram(stat="bin_dp", bins=10, eps=2, seed=4)
        )
        d = q.layers[0].data
        rel = [
            r
            for r in layer_releases(q.layers[0])
            if r.mechanism == "durfee_quantile"
        ]
        assert len(rel) == 1 and rel[0].eps == pytest.approx(0.4)
        assert d["xmax"].max() < 1000  # the range ignores the outlier


def test_public_breaks_output_changes_only_through_noise(mpg):
    far = pd.concat([mpg, mpg.iloc[[0]].assign(hwy=1e9)], ignore_index=True)
    a = layer_data(
        ggplot(mpg, aes("hwy"))
        + geom_histogram(stat="bin_dp", breaks=BREAKS, eps=1, seed=5)
    )
    b = layer_data(
        ggplot(far, aes("hwy"))
        + geom_histogram(stat="bin_dp", breaks=BREAKS, eps=1, seed=5)
    )
    # the outlier lies outside the public breaks: identical release
    assert a[["xmin", "xmax", "count"]].equals(b[["xmin", "xmax", "count"]])


def test_bin_ckm_needs_public_bins(mpg):
    d = pp.add_record_keys(mpg, rng_seed=1)
    p = ggplot(d, aes("hwy", rkey="rkey")) + geom_histogram(
        stat="bin_ckm", bins=10, ptable=PTAB
    )
    with pytest.raises(PlotninePrivateError, match="public bins"):
        layer_data(p)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"breaks": [3, 2, 1]}, "strictly increasing"),
        ({"breaks": [1]}, "at least two"),
        ({"limits": (5, 1)}, "low < high"),
        ({"closed": "both"}, "closed must be one of"),
        ({"center": 1, "boundary": 0}, "only one of center"),
        ({"range_share": 0.5}, "range_share"),
    ],
)
def test_bad_bin_parameters(kwargs, match):
    with pytest.raises(PlotninePrivateError, match=match):
        ggplot() + geom_histogram(stat="bin_dp", eps=1, **kwargs)


def test_bin2d_noises_every_cell_and_gives_centres(mpg):
    p = (
        ggplot(mpg, aes("cty", "hwy"))
        + geom_bin_2d(stat="bin2d_dp", bins=6, eps=0.5, seed=1234, drop=False)
        + geom_text(
            aes(label=after_stat("count")),
            stat="bin2d_dp",
            bins=6,
            eps=0.5,
            seed=1234,
            drop=False,
        )
        + xlim(8, 38)
        + ylim(10, 45)
    )
    built = build(p)  # both layers of one build
    tiles, text = built.layers[0].data, built.layers[1].data
    # stat_bin_2d's grid over the limits: widths 30 / 6 and 35 / 6 from
    # the multiple at or below the low end, 7 x 7 rectangles
    assert len(tiles) == 49 and len(text) == 49
    assert list(tiles["count"]) == list(text["count"])
    # rectangles beyond the scale limits are censored (NaN), as plotnine's
    inside = tiles["xmin"].notna() & tiles["xmax"].notna()
    centre = (tiles["xmin"] + tiles["xmax"]) / 2
    assert np.allclose(tiles["x"][inside], centre[inside])
    assert tiles["noisy_count"].notna().all()


def test_bin2d_drop_hides_only_released_zeros(mpg):
    p = ggplot(mpg, aes("cty", "hwy")) + geom_bin_2d(
        stat="bin_2d_dp",
        bins=6,
        limits=((8, 38), (10, 45)),
        eps=0.5,
        seed=1234,
    )
    d = layer_data(p)
    assert (d["count"] > 0).all()
    assert len(d) <= 36


def test_bin2d_ckm_matches_hand_lookup(mpg):
    d = pp.add_record_keys(mpg, rng_seed=3)
    p = ggplot(d, aes("cty", "hwy", rkey="rkey")) + geom_bin_2d(
        stat="bin2d_ckm",
        breaks=([8, 20, 38], [10, 25, 45]),
        ptable=PTAB,
        drop=False,
    )
    out = layer_data(p)
    assert len(out) == 4
    for _, cell in out.iterrows():
        # right-closed bins, the lowest edge included (as stat_bin_2d)
        inside = d[
            ((d.cty > cell.xmin) | (d.cty == 8))
            & (d.cty <= cell.xmax)
            & ((d.hwy > cell.ymin) | (d.hwy == 10))
            & (d.hwy <= cell.ymax)
        ]
        n = len(inside)
        ks = int(np.round(inside["rkey"] * 1e8).astype(np.int64).sum())
        v = PTAB.noise(np.array([n]), np.array([ks]))[0]
        assert cell["count"] == max(n + v, 0)


def test_sum_dp_public_grid_releases_every_position(mpg):
    p = ggplot(mpg, aes("cty", "hwy")) + geom_count(
        stat="sum_dp",
        eps=0.5,
        seed=1000,
        limits=((8, 38), (10, 45)),
        resolution=1,
    )
    q = build(p)
    rel = layer_releases(q.layers[0])[0]
    assert rel.domain == "public: grid" and rel.delta == 0
    d = q.layers[0].data
    assert (d["n"] > 0).all()
    assert np.isclose(d["prop"].sum(), 1.0)


def test_sum_dp_without_grid_is_thresholded(mpg):
    q = build(
        ggplot(mpg, aes("cty", "hwy"))
        + geom_count(stat="sum_dp", eps=2, seed=1000, adjacency="add_remove")
    )
    rel = layer_releases(q.layers[0])[0]
    assert rel.domain == "thresholded" and rel.delta == 1e-6
    d = q.layers[0].data
    assert (d["n"] >= rel.details["threshold"]).all()


def test_sum_needs_limits_and_resolution_together():
    with pytest.raises(PlotninePrivateError, match="go together"):
        ggplot() + geom_count(stat="sum_dp", eps=1, limits=((0, 1), (0, 1)))


def test_sum_ckm_counts_positions(mpg):
    d = pp.add_record_keys(mpg, rng_seed=2)
    out = layer_data(
        ggplot(d, aes("cty", "hwy", rkey="rkey"))
        + geom_count(stat="sum_ckm", ptable=PTAB)
    )
    true = d.groupby(["cty", "hwy"]).size()
    assert len(out) <= len(true)
    assert (out["n"] > 2).all()  # js = 2: no released count in 1..2


@pytest.mark.parametrize("closed", ["right", "left"])
def test_bin_index_agrees_with_pandas_cut(closed):
    from plotnine_private.stats.domains import bin_index

    rng = np.random.default_rng(0)
    breaks = np.array([0.0, 1.0, 2.5, 4.0])
    values = np.r_[rng.integers(0, 9, 500) / 2, breaks]  # edges included
    ours = bin_index(values, breaks, closed, clamp=False)
    cut = pd.cut(
        values,
        breaks,
        right=closed == "right",
        include_lowest=True,
        labels=False,
    )
    expect = np.where(np.isnan(cut), -1, cut)
    if closed == "left":  # pandas keeps the top edge out; we include it
        expect[values == breaks[-1]] = len(breaks) - 2
    assert np.array_equal(ours, expect)


def test_log_scale_limits_are_used_once_transformed():
    from plotnine import scale_x_log10
    from plotnine.data import diamonds

    d = layer_data(
        ggplot(diamonds, aes("price"))
        + geom_histogram(stat="bin_dp", bins=6, eps=1, seed=1)
        + scale_x_log10(limits=(100, 100000))
    )
    # stat_bin's rule on log10 limits (2, 5): widths 0.6 from 1.5; the
    # first bin lies outside the scale limits and is dropped, as plotnine
    # drops it
    plain = layer_data(
        ggplot(diamonds, aes("price"))
        + geom_histogram(bins=6)
        + scale_x_log10(limits=(100, 100000))
    )
    np.testing.assert_allclose(d["xmin"].dropna(), plain["xmin"].dropna())
    e = layer_data(
        ggplot(diamonds, aes("price"))
        + geom_histogram(
            stat="bin_dp", bins=6, limits=(100, 100000), eps=1, seed=1
        )
        + scale_x_log10()
    )
    assert np.allclose(e["xmin"].dropna().iloc[-5:], d["xmin"].dropna())
