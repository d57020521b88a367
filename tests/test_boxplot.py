"""boxplot_dp / boxplot_ckm: quartiles and whiskers from a private fine
histogram, never any outlier."""

from __future__ import annotations

import neighbours
import numpy as np
import pandas as pd
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
from plotnine import (
    aes,
    coord_flip,
    facet_wrap,
    geom_boxplot,
    ggplot,
    stat_boxplot,
)
from plotnine._utils.registry import Registry

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private.door import layer_build, layer_releases
from plotnine_private.smoothing import monotone_cdf, quantiles

LIM = (0, 40)
BINS = 800  # fine bins of 0.05
STEP = 0.05


@pytest.fixture
def no_intervals(monkeypatch):
    """The boxes alone: their interval variables (a simulation of 400
    noisy copies of every box, tested in test_intervals) are not
    computed."""
    for stat in (pp.stat_boxplot_dp, pp.stat_boxplot_ckm):
        monkeypatch.setattr(stat, "add_intervals", lambda self, out, rel: None)


def test_registered_and_exported():
    assert Registry["stat_boxplot_dp"] is pp.stat_boxplot_dp
    assert Registry["stat_boxplot_ckm"] is pp.stat_boxplot_ckm
    assert Registry["stat_boxplot"] is stat_boxplot


def test_converges_to_plotnines_boxplot(no_intervals):
    d = synthetic()
    ours = layer_data(
        ggplot(d, aes("g", "v"))
        + geom_boxplot(
            stat="boxplot_dp", limits=LIM, bins=BINS, eps=1e6, seed=1
        )
    )
    ref = layer_data(ggplot(d, aes("g", "v")) + geom_boxplot())
    assert list(ours["x"]) == list(ref["x"]) == [1, 2, 3]
    for col in (
        "lower",
        "middle",
        "upper",
        "ymin",
        "ymax",
        "notchlower",
        "notchupper",
    ):
        assert np.allclose(ours[col], ref[col], atol=2 * STEP), col
    assert list(ours["n"]) == list(ref["n"])
    assert np.allclose(ours["relvarwidth"], np.sqrt(ref["n"]))
    # the whiskers bind here: plotnine draws outliers, we never do
    assert any(len(o) for o in ref["outliers"])
    assert all(len(o) == 0 for o in ours["outliers"])


def test_quartiles_invert_the_released_cdf(no_intervals):
    d = cars()
    lyr = built(
        ggplot(d, aes("drv", "hwy"))
        + geom_boxplot(
            stat="boxplot_dp", limits=(0, 50), bins=50, eps=0.5, seed=3
        )
    )
    hist, out = layer_build(lyr).fine, lyr.data
    cdf, total = monotone_cdf(hist.noisy)
    q = quantiles(cdf, hist.edges, np.array([0.25, 0.5, 0.75]))
    assert np.allclose(out[["lower", "middle", "upper"]].to_numpy(), q)
    assert np.array_equal(out["n"], np.rint(total))
    iqr = q[:, 2] - q[:, 0]
    assert np.allclose(
        out["notchupper"] - out["middle"],
        1.58 * iqr / np.sqrt(np.maximum(out["n"], 1)),
    )
    assert (out["ymin"] <= out["lower"]).all()
    assert (out["ymax"] >= out["upper"]).all()
    assert (out["ymin"] >= 0).all() and (out["ymax"] <= 50).all()


def test_whisker_parameters(no_intervals):
    d = synthetic()
    base = {"limits": LIM, "bins": BINS, "eps": 1e6, "seed": 1}

    def box(**kw):
        return layer_data(
            ggplot(d, aes("g", "v"))
            + geom_boxplot(stat="boxplot_dp", **base, **kw)
        )

    # quantile whiskers converge to the sample quantiles
    out = box(whiskers=(0.05, 0.95))
    for k, g in enumerate(["a", "b", "c"]):
        v = d.loc[d["g"] == g, "v"]
        assert np.isclose(out["ymin"].iloc[k], v.quantile(0.05), atol=2 * STEP)
        assert np.isclose(out["ymax"].iloc[k], v.quantile(0.95), atol=2 * STEP)
    # coef=0: whiskers at the hinges; a larger coef reaches further
    zero = box(coef=0)
    assert np.allclose(zero["ymin"], zero["lower"])
    assert np.allclose(zero["ymax"], zero["upper"])
    wide = box(coef=3)
    tukey = box()
    assert (wide["ymax"] >= tukey["ymax"]).all()
    assert (wide["ymax"] > tukey["ymax"]).any()


def test_whiskers_stop_at_the_released_range(no_intervals):
    # all records in [10, 12]: the fences lie beyond the data, so the
    # whiskers stop at the edges of the outermost bins with mass
    d = pd.DataFrame({"y": np.linspace(10.01, 11.99, 200)})
    out = layer_data(
        ggplot(d, aes(y="y"))
        + geom_boxplot(
            stat="boxplot_dp",
            limits=(0, 20),
            bins=20,
            eps=1e6,
            seed=1,
            coef=5,
        )
    )
    assert out["ymin"].iloc[0] == 10 and out["ymax"].iloc[0] == 12
    assert out["x"].iloc[0] == 0  # no x: one box at 0


def test_width_parameter(no_intervals):
    d = cars()
    out = layer_data(
        ggplot(d, aes("drv", "hwy"))
        + geom_boxplot(
            stat="boxplot_dp", limits=(0, 50), eps=1, seed=1, width=0.4
        )
    )
    assert np.allclose(out["xmax"] - out["xmin"], 0.4)


def test_eps_accounting_boxes_and_facets_are_one_histogram():
    d = cars()
    p = (
        ggplot(d, aes("drv", "hwy"))
        + geom_boxplot(
            stat="boxplot_dp", limits=(0, 50), bins=64, eps=1.5, seed=2
        )
        + facet_wrap("year")
    )
    r = pp.privacy_report(p)
    assert np.isclose(r.total_eps, 1.5)
    row = r.table.iloc[0]
    assert row["cells"] == 2 * 3 * 64
    assert row["composition"] == "sequential (parallel over declared facets)"
    # one box per declared drive and panel, an empty drive included
    out = layer_data(
        ggplot(d[d["drv"] != "r"], aes("drv", "hwy"))
        + geom_boxplot(stat="boxplot_dp", limits=(0, 50), eps=1, seed=2)
        + facet_wrap("year")
    )
    assert len(out) == 6


def test_undeclared_x_is_thresholded_with_a_warning(mpg):
    p = ggplot(mpg, aes("drv", "hwy")) + geom_boxplot(
        stat="boxplot_dp", limits=(0, 50), bins=10, eps=1, seed=1
    )
    with pytest.warns(pp.PrivacyWarning, match="not declared"):
        lyr = pp._compat.build(p).layers[0]
    assert layer_releases(lyr)[0].domain == "thresholded"


@pytest.mark.parametrize(
    "change", ["outlier", "missing", "other panel", "empty level"]
)
@pytest.mark.parametrize("stat", ["boxplot_dp", "boxplot_ckm"])
def test_neighbours_differ_only_in_noisy_numbers(monkeypatch, stat, change):
    monkeypatch.setattr(neighbours, "NOISY", neighbours.NOISY | FINE_NOISY)
    params = {"eps": 2, "seed": 7} if stat.endswith("dp") else {"ptable": PTAB}

    def make(d):
        return (
            ggplot(d, aes("era", "hwy", fill="drv", rkey="rk"))
            + geom_boxplot(stat=stat, limits=(0, 50), bins=40, **params)
            + facet_wrap("year")
        )

    from test_neighbours import BASE, base_snapshot, neighbour

    a = base_snapshot(
        f"boxplot {stat}", lambda: neighbours.snapshot(make(BASE), ("y",))
    )
    b = neighbours.snapshot(make(neighbour(change)), ("y",))
    assert neighbours.differences(a, b) == []


def test_bundle_writes_the_boxes_without_outliers():
    from test_neighbours import BASE, neighbour

    def make(d):
        return ggplot(d, aes("drv", "hwy")) + geom_boxplot(
            stat="boxplot_dp", limits=(0, 50), bins=40, eps=2, seed=7
        )

    assert neighbours.bundle_metadata(make(BASE)) == (
        neighbours.bundle_metadata(make(neighbour("outlier")))
    )


def test_ckm_same_records_same_noise(no_intervals):
    d = cars()
    kw = {"limits": (0, 50), "bins": 25, "ptable": PTAB}
    p = ggplot(d, aes("drv", "hwy", rkey="rk")) + geom_boxplot(
        stat="boxplot_ckm", **kw
    )
    hist = fine_of(p)
    table = ckm_cells_by_table(d, "hwy", hist.edges, "rk", groups="drv")
    for k, drv in enumerate(["4", "f", "r"]):
        t = table[table["drv"] == drv].sort_values("_bin")
        assert np.array_equal(t["count"].to_numpy(), hist.values[k])
    flipped = fine_of(p + coord_flip())
    assert np.array_equal(flipped.values, hist.values)
    only_f = fine_of(
        ggplot(d[d["drv"] == "f"], aes("drv", "hwy", rkey="rk"))
        + geom_boxplot(stat="boxplot_ckm", **kw)
    )
    assert np.array_equal(only_f.values[1], hist.values[1])


def test_outside_the_limits_clamp_or_drop():
    # 90 records at 1..9 and 10 far above the limits
    d = pd.DataFrame(
        {"y": np.r_[np.repeat(np.arange(1.0, 10.0), 10), np.full(10, 1e6)]}
    )

    def box(outside):
        return layer_data(
            ggplot(d, aes(y="y"))
            + geom_boxplot(
                stat="boxplot_dp",
                limits=(0, 20),
                bins=20,
                eps=1e6,
                seed=1,
                outside=outside,
            )
        ).iloc[0]

    clamp, drop = box("clamp"), box("drop")
    assert clamp["n"] == 100 and drop["n"] == 90
    # clamped records still count in the ranks: the median moves up
    assert clamp["middle"] > drop["middle"]
    assert clamp["ymax"] <= 20


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"limits": [0]}, "limits must be a pair"),
        ({"limits": (0, 1), "coef": -1}, "coef must be"),
        ({"limits": (0, 1), "whiskers": 0.05}, "whiskers must be None"),
        ({"limits": (0, 1), "whiskers": (0.3, 0.9)}, "0 <= low <= 0.25"),
        ({"limits": (0, 1), "width": 0}, "width must be > 0"),
        ({"limits": (0, 1), "bins": 2.5}, "bins must be"),
    ],
)
def test_bad_parameters_fail_at_construction(kwargs, match):
    kwargs = {"eps": 1, **kwargs}
    with pytest.raises(PlotninePrivateError, match=match):
        ggplot() + geom_boxplot(stat="boxplot_dp", **kwargs)


def test_continuous_x_and_discrete_y_are_refused(mpg):
    p = ggplot(mpg, aes("displ", "hwy")) + geom_boxplot(
        stat="boxplot_dp", limits=(0, 50), eps=1
    )
    with pytest.raises(PlotninePrivateError, match="x must be discrete"):
        layer_data(p)
    q = ggplot(mpg, aes("drv", "class")) + geom_boxplot(
        stat="boxplot_dp", limits=(0, 50), eps=1
    )
    with pytest.raises(PlotninePrivateError, match="y is discrete"):
        layer_data(q)


def test_geoms_draw_with_notches_and_varwidth():
    d = cars()
    draws(
        ggplot(d, aes("drv", "hwy"))
        + geom_boxplot(
            stat="boxplot_dp",
            limits=(0, 50),
            eps=1,
            seed=1,
            notch=True,
            varwidth=True,
        )
        + facet_wrap("year")
    )
    draws(
        ggplot(d, aes("drv", "hwy", fill="year", rkey="rk"))
        + geom_boxplot(stat="boxplot_ckm", limits=(0, 50), ptable=PTAB)
    )


def test_tukey_whiskers_of_many_boxes_are_the_box_by_box_rule():
    # the whiskers are computed for all boxes at once (the interval
    # simulation has thousands): the numbers are those of one box at a time
    rng = np.random.default_rng(6)
    edges = np.linspace(0.0, 20.0, 41)
    counts = rng.integers(0, 3, size=(500, 40)) * (rng.random((500, 40)) < 0.4)
    counts[:5] = 0  # empty boxes: no mass anywhere
    cdf, _ = monotone_cdf(counts.astype(float))
    q1, q3 = quantiles(cdf, edges, np.array([0.25, 0.75])).T
    for coef in (1.5, 0.0, 4.0):
        stat = pp.stat_boxplot_dp(limits=(0, 20), bins=40, eps=1, coef=coef)
        ymin, ymax = stat.tukey_whiskers(cdf, edges, q1, q3)
        for g in range(len(cdf)):
            iqr = q3[g] - q1[g]
            f_lo, f_hi = q1[g] - coef * iqr, q3[g] + coef * iqr
            mass = np.diff(cdf[g]) > 0
            up = mass & (edges[:-1] < f_hi)
            top = edges[1:][up].max() if up.any() else q3[g]
            down = mass & (edges[1:] > f_lo)
            bottom = edges[:-1][down].min() if down.any() else q1[g]
            assert ymax[g] == max(q3[g], min(f_hi, top)), (coef, g)
            assert ymin[g] == min(q1[g], max(f_lo, bottom)), (coef, g)
