"""violin_dp / violin_ckm: per discrete x, a kernel density of y smoothed
from a private fine histogram, shaped as plotnine's stat_ydensity."""

from __future__ import annotations

import warnings

import neighbours
import numpy as np
import pandas as pd
import polars as pl
import pytest
from fine_common import (
    FINE_NOISY,
    PTAB,
    built,
    cars,
    ckm_cells_by_table,
    draws,
    fine_of,
    synthetic,
)
from keyfile import using_key
from plotnine import (
    aes,
    facet_wrap,
    geom_boxplot,
    geom_violin,
    ggplot,
    scale_y_continuous,
    stat_ydensity,
)
from plotnine._utils.registry import Registry

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private.door import layer_build
from plotnine_private.smoothing import kernel_smooth

LIM = (0, 40)


@pytest.fixture
def no_intervals(monkeypatch):
    """The violins alone: their interval variables (a simulation over the
    fine bins, as the density's; tested in test_intervals and below) are
    not computed, nor those of a box plot sharing the release."""
    for stat in (
        pp.stat_violin_dp,
        pp.stat_violin_ckm,
        pp.stat_boxplot_dp,
    ):
        monkeypatch.setattr(stat, "add_intervals", lambda self, out, rel: None)


def test_registered_and_exported():
    assert Registry["stat_violin_dp"] is pp.stat_violin_dp
    assert Registry["stat_violin_ckm"] is pp.stat_violin_ckm
    row = pp.stats().set_index("name").loc["violin_dp"]
    assert (row["family"], row["query_family"], row["counterpart"]) == (
        "violin",
        "fine",
        "ydensity",
    )


def _violin(d, stat="violin_dp", **params):
    kw = {"eps": 1e6, "seed": 1} if stat.endswith("dp") else {"ptable": PTAB}
    mapping = aes("g", "v", rkey="rk") if stat.endswith("ckm") else None
    return ggplot(d, mapping or aes("g", "v")) + geom_violin(
        stat=stat, **{**kw, **params}
    )


def test_converges_to_plotnines_ydensity_with_the_same_bw_and_kernel(
    no_intervals,
):
    d = synthetic(3000)
    common = {"bw": 1.5, "n": 81, "trim": False}
    plain = layer_data(
        ggplot(d, aes("g", "v"))
        + geom_violin(**common)
        + scale_y_continuous(limits=LIM)
    )
    ours = layer_data(_violin(d, limits=LIM, bins=2000, **common))
    assert len(ours) == len(plain) == 3 * 81
    for col in ("x", "y", "n", "width"):
        assert np.allclose(ours[col], plain[col]), col
    peak = plain["density"].max()
    for col in ("density", "scaled", "violinwidth"):
        top = 1.0 if col != "density" else peak
        err = np.abs(ours[col] - plain[col]).max() / top
        assert err < 0.01, (col, err)
    # a bandwidth 10% off is seen at this tolerance
    off = layer_data(
        _violin(d, limits=LIM, bins=2000, **{**common, "bw": 1.65})
    )
    assert np.abs(off["density"] - plain["density"]).max() / peak > 0.01


def test_each_violin_is_the_smooth_of_its_released_counts(no_intervals):
    d = cars()
    p = ggplot(d, aes("drv", "hwy")) + geom_violin(
        stat="violin_dp",
        limits=(0, 50),
        bins=64,
        bw=2.0,
        eps=0.5,
        seed=3,
        n=90,
    )
    lyr = built(p)
    hist, out = layer_build(lyr).fine, lyr.data
    assert hist.values.shape == (3, 64)
    assert np.array_equal(hist.values, np.clip(hist.noisy, 0, None))
    grid = np.linspace(0, 50, 90)
    expect = kernel_smooth(hist.centres, hist.values, grid, 2.0, "gau")
    for k in range(3):
        o = out[out["group"] == k + 1]
        assert np.allclose(o["y"], grid)
        assert (o["x"] == k + 1).all()
        assert np.allclose(o["density"], expect[k])
        n = max(round(hist.noisy[k].sum()), 0)
        assert (o["n"] == n).all()
        assert np.allclose(o["count"], o["density"] * n)
        assert np.isclose(o["scaled"].max(), 1.0)
        assert np.allclose(o["ndensity"], o["scaled"])


def test_huge_eps_releases_the_true_fine_counts():
    d = synthetic(600)
    hist = fine_of(_violin(d, limits=LIM, bins=20))
    for k, g in enumerate("abc"):
        truth = np.histogram(d.loc[d["g"] == g, "v"], np.linspace(0, 40, 21))
        assert np.array_equal(hist.values[k], truth[0])


@pytest.mark.parametrize("scale", ["area", "count", "width"])
def test_scale_sets_violinwidth_per_panel_from_released_values(
    scale, no_intervals
):
    d = cars()
    p = ggplot(d, aes("drv", "hwy")) + geom_violin(
        stat="violin_dp", limits=(0, 50), bins=50, eps=1, seed=4, scale=scale
    )
    out = layer_data(p + facet_wrap("year"))
    for _, panel in out.groupby("PANEL", observed=True):
        dens, n = panel["density"], panel["n"]
        if scale == "area":
            expect = dens / dens.max()
        elif scale == "count":
            expect = dens / dens.max() * n / n.max()
        else:
            expect = panel["scaled"]
        assert np.allclose(panel["violinwidth"], expect)
    widths = {
        s: layer_data(
            ggplot(d, aes("drv", "hwy"))
            + geom_violin(
                stat="violin_dp",
                limits=(0, 50),
                bins=50,
                eps=1,
                seed=4,
                scale=s,
            )
        )["violinwidth"].to_numpy()
        for s in ("area", "count", "width")
    }
    assert not np.allclose(widths["area"], widths["width"])
    assert not np.allclose(widths["area"], widths["count"])


def test_width_parameter_and_its_default(no_intervals):
    d = synthetic(300)
    assert (layer_data(_violin(d, limits=LIM, bins=20))["width"] == 0.9).all()
    out = layer_data(_violin(d, limits=LIM, bins=20, width=0.5))
    assert (out["width"] == 0.5).all()
    assert np.allclose(out["xmax"] - out["xmin"], 0.5)


def test_trim_follows_the_released_range_of_each_violin(no_intervals):
    # three groups on disjoint public-edge ranges: with a huge eps the
    # released range of each is the fine bins holding its records
    rng = np.random.default_rng(5)
    parts = {"a": (2, 8), "b": (10, 20), "c": (24, 38)}
    d = pd.DataFrame(
        {
            "g": pd.Categorical(np.repeat(list(parts), 200), list(parts)),
            "v": np.concatenate(
                [
                    rng.uniform(lo + 0.01, hi - 0.01, 200)
                    for lo, hi in parts.values()
                ]
            ),
        }
    )
    out = layer_data(_violin(d, limits=LIM, bins=40, n=50, trim=True))
    for k, (lo, hi) in enumerate(parts.values()):
        o = out[out["group"] == k + 1]
        assert np.isclose(o["y"].min(), lo) and np.isclose(o["y"].max(), hi)
    whole = layer_data(_violin(d, limits=LIM, bins=40, n=50))
    assert np.isclose(whole["y"].min(), 0) and np.isclose(whole["y"].max(), 40)


def test_kernel_adjust_and_bw_rules(no_intervals):
    d = cars()

    def dens(**kw):
        p = ggplot(d, aes("drv", "hwy")) + geom_violin(
            stat="violin_dp",
            limits=(0, 48),
            bins=96,
            n=64,
            eps=1e6,
            seed=2,
            **kw,
        )
        return layer_data(p)["density"].to_numpy()

    assert np.allclose(dens(), dens(bw=48 / 32))
    assert np.allclose(dens(bw="bins"), dens(bw=2.0))
    assert np.allclose(dens(bw=1.0, adjust=2), dens(bw=2.0))
    assert not np.allclose(dens(kernel="epanechnikov"), dens())


def test_one_release_shared_with_the_box_plot(no_intervals):
    d = cars()
    common = {"limits": (0, 50), "bins": 64, "eps": 0.7, "seed": 9}
    p = (
        ggplot(d, aes("drv", "hwy"))
        + geom_violin(stat="violin_dp", **common)
        + geom_boxplot(stat="boxplot_dp", width=0.1, **common)
    )
    r = pp.privacy_report(p)
    assert np.isclose(r.total_eps, 0.7)
    rows = r.table[r.table["layer"] != "total"]
    assert rows.iloc[0]["cells"] == 3 * 64
    assert rows.iloc[1]["composition"] == "duplicate of layer 0"


def test_ckm_same_records_same_noise(no_intervals):
    d = cars()
    p = ggplot(d, aes("drv", "hwy", rkey="rk")) + geom_violin(
        stat="violin_ckm", limits=(0, 50), bins=25, ptable=PTAB
    )
    hist = fine_of(p)
    table = ckm_cells_by_table(d, "hwy", hist.edges, "rk", groups="drv")
    for k, drv in enumerate(["4", "f", "r"]):
        t = table[table["drv"] == drv].sort_values("_bin")
        assert np.array_equal(t["count"].to_numpy(), hist.values[k])


def test_engine_releases_the_numbers_of_the_in_memory_path(no_intervals):
    d = synthetic(800)[["g", "v"]]
    lazy = (
        pl.from_pandas(d)
        .lazy()
        .with_columns(pl.col("g").cast(pl.Enum(["a", "b", "c"])))
    )

    def plot(data):
        return ggplot(data, aes("g", "v")) + geom_violin(
            stat="violin_dp", limits=LIM, bins=32, n=40, eps=1, seed=21
        )

    with using_key():
        memory = layer_data(plot(d))
        engine = layer_data(plot(pp.source(lazy)))
    cols = ["x", "y", "density", "n", "violinwidth"]
    pd.testing.assert_frame_equal(
        memory[cols].reset_index(drop=True),
        engine[cols].reset_index(drop=True),
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scale": "equal"}, "scale must be 'area'.*got 'equal'"),
        ({"width": 0}, "width must be None .* got 0"),
        ({"width": "wide"}, "width must be None"),
        ({"bw": "sj"}, "bw must be a number > 0, one of"),
        ({"kernel": "box"}, "kernel must be one of"),
        ({"trim": "yes"}, "trim must be True or False"),
        ({"n": 1}, "n must be a whole number >= 2"),
        ({"bins": 1}, "bins must be"),
    ],
)
def test_bad_parameters_fail_at_construction(kwargs, match):
    # added to a plot: plotnine 0.16 makes a geom's stat when the layer
    # is made, 0.15 when the geom is
    with pytest.raises(PlotninePrivateError, match=match) as err:
        ggplot() + geom_violin(
            stat="violin_dp", eps=1, limits=(0, 1), **kwargs
        )
    assert "stat_violin_dp" in str(err.value)


def test_continuous_x_and_missing_limits_are_refused(mpg):
    p = ggplot(mpg, aes("displ", "hwy")) + geom_violin(
        stat="violin_dp", limits=(0, 50), eps=1
    )
    with pytest.raises(PlotninePrivateError, match="x must be discrete"):
        layer_data(p)
    q = ggplot(cars(), aes("drv", "hwy")) + geom_violin(
        stat="violin_dp", eps=1
    )
    with pytest.raises(
        PlotninePrivateError, match=r"limits=\(lo, hi\) is required"
    ):
        layer_data(q)


def test_without_x_one_violin_at_zero(no_intervals):
    d = synthetic(300)
    out = layer_data(
        ggplot(d, aes(y="v"))
        + geom_violin(
            stat="violin_dp", limits=LIM, bins=20, n=30, eps=1, seed=2
        )
    )
    assert len(out) == 30 and (out["x"] == 0).all()


def test_intervals_hold_the_released_density(mpg):
    d = cars()
    out = layer_data(
        ggplot(d, aes("drv", "hwy"))
        + geom_violin(stat="violin_dp", limits=(0, 50), bins=32, eps=2, seed=5)
    )
    assert (out["density_low"] <= out["density"] + 1e-12).all()
    assert (out["density"] <= out["density_high"] + 1e-12).all()
    assert (out["density_high"] > out["density_low"]).any()


def test_planning_is_the_density_curve_of_one_violin():
    kw = {"eps": 1, "n": 300, "limits": (0, 10), "bins": 64, "sims": 200}
    assert pp.accuracy("violin_dp", **kw) == pp.accuracy("density_dp", **kw)


def test_compare_swaps_in_stat_ydensity_with_the_private_bandwidth():
    d = cars()
    p = ggplot(d, aes("drv", "hwy")) + geom_violin(
        stat="violin_dp", limits=(0, 48), bins=96, bw="bins", eps=1, seed=3
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = pp.compare(p, ckm={"ptable": PTAB, "rkey": "rk"})
        plain = c.plots["unperturbed"].layers[0].stat
    assert type(plain) is stat_ydensity
    assert plain.params["bw"] == 2.0 and plain.params["trim"] is False
    assert "density band" in c.captions["dp"]


def test_geom_violin_draws_with_quantiles_and_styles(no_intervals):
    d = synthetic(300)
    for style in ("full", "left-right"):
        draws(
            ggplot(d, aes("g", "v"))
            + geom_violin(
                stat="violin_dp",
                limits=LIM,
                bins=20,
                eps=1,
                seed=1,
                draw_quantiles=[0.25, 0.5, 0.75],
                style=style,
            )
        )


@pytest.mark.parametrize(
    "change", ["outlier", "missing", "other panel", "empty level"]
)
@pytest.mark.parametrize("stat", ["violin_dp", "violin_ckm"])
def test_neighbours_differ_only_in_noisy_numbers(monkeypatch, stat, change):
    monkeypatch.setattr(neighbours, "NOISY", neighbours.NOISY | FINE_NOISY)
    params = {"eps": 2, "seed": 7} if stat.endswith("dp") else {"ptable": PTAB}

    def make(d):
        return (
            ggplot(d, aes("era", "hwy", fill="drv", rkey="rk"))
            + geom_violin(
                stat=stat,
                limits=(0, 50),
                bins=40,
                n=32,
                scale="count",
                **params,
            )
            + facet_wrap("year")
        )

    from test_neighbours import BASE, base_snapshot, neighbour

    a = base_snapshot(
        f"violin {stat}", lambda: neighbours.snapshot(make(BASE))
    )
    b = neighbours.snapshot(make(neighbour(change)))
    assert neighbours.differences(a, b) == []


@pytest.mark.parametrize("whole_person", [False, True])
def test_trimmed_neighbours_differ_only_in_noisy_numbers(whole_person):
    import conformance as kit

    def make(d):
        return ggplot(d, aes("cat", "num")) + geom_violin(
            stat="violin_dp",
            limits=(10, 45),
            bins=16,
            n=20,
            trim=True,
            eps=1,
            seed=3,
        )

    a, b = kit.frame(), kit.changed(kit.frame(), whole_person)
    if whole_person:
        a = pp.source(a, unit="pid", max_records=3)
        b = pp.source(b, unit="pid", max_records=3)
    with using_key():
        sa, sb = neighbours.snapshot(make(a)), neighbours.snapshot(make(b))
    assert "error" not in sa
    assert neighbours.differences(sa, sb) == []


def test_bundle_metadata_only_noisy_numbers_differ():
    from test_neighbours import BASE, neighbour

    def make(d):
        return ggplot(d, aes("drv", "hwy")) + geom_violin(
            stat="violin_dp", limits=(0, 50), bins=40, eps=2, seed=7
        )

    assert neighbours.bundle_metadata(make(BASE)) == (
        neighbours.bundle_metadata(make(neighbour("outlier")))
    )


def test_the_axis_keeps_the_declared_order_of_the_levels(no_intervals):
    d = cars()
    d["drv"] = pd.Categorical(d["drv"], categories=["r", "f", "4"])
    b = pp._compat.build(
        ggplot(d, aes("drv", "hwy"))
        + geom_violin(stat="violin_dp", limits=(0, 50), bins=20, eps=1, seed=1)
    )
    assert list(b.layout.panel_params[0].x.labels) == ["r", "f", "4"]
    first = b.layers[0].data.groupby("group")["x"].first()
    assert first.tolist() == [1.0, 2.0, 3.0]
