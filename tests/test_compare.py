"""compare(): the unperturbed, DP and CKM versions of one plot on shared
scales, marked and captioned."""

from __future__ import annotations

import warnings
from copy import deepcopy

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    after_stat,
    geom_bar,
    geom_bin_2d,
    geom_count,
    geom_histogram,
    geom_text,
    ggplot,
    position_stack,
)

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private._compat import build
from plotnine_private.compare import MARKER

PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)
CKM = {"ptable": PTAB, "rkey": "rk"}
BOX = ((8, 38), (10, 45))


@pytest.fixture
def cars(mpg_cat):
    return pp.add_record_keys(mpg_cat, name="rk", rng_seed=2024)


#: one build per panel plot (the plot object held, so its id is not
#: reused): the range checks and the layer reads of a panel share it
_BUILDS: dict[int, tuple] = {}


def _built(plot):
    """``build(plot)``, once per plot object: a panel's build is the same
    whenever it is built (one seed, one session key)."""
    if id(plot) not in _BUILDS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _BUILDS[id(plot)] = (plot, build(plot))
    return _BUILDS[id(plot)][1]


def _layer(plot, i: int = 0) -> pd.DataFrame:
    """Layer ``i``'s data from the plot's one build."""
    return _built(plot).layers[i].data


def _panel_ranges(plot):
    b = _built(plot)
    b.layout.setup_panel_params(b.plot.coordinates)
    pp_ = b.layout.panel_params[0]
    scales = {
        s.aesthetics[0]: tuple(s.final_limits)
        for s in b.scales
        if s.aesthetics[0] not in ("x", "y")
    }
    return tuple(pp_.x.range), tuple(pp_.y.range), scales


def _check_shared(c, aesthetics):
    """The private panels share their scales; the unperturbed panel has
    exactly the scales of its own plot (compare adds nothing to it)."""
    private = [k for k in c.plots if k != "unperturbed"]
    ranges = [_panel_ranges(c.plots[k]) for k in private]
    assert len(ranges) == 2
    for r in ranges[1:]:
        assert r[0] == pytest.approx(ranges[0][0])
        assert r[1] == pytest.approx(ranges[0][1])
        for ae in aesthetics:
            assert r[2][ae] == ranges[0][2][ae]
    plain = c.plots["unperturbed"]
    bare = deepcopy(plain)
    bare.labels.title = bare.labels.caption = None
    assert len(plain.layers) == len(bare.layers)
    assert _panel_ranges(plain) == _panel_ranges(bare)
    return ranges


def _check_marked(c):
    titles = {k: p.labels.title for k, p in c.plots.items()}
    assert titles["unperturbed"] == MARKER
    assert titles["dp"].startswith("DP: ")
    assert titles["ckm"].startswith("CKM: ")
    for k in ("dp", "ckm"):
        cap = c.plots[k].labels.caption
        assert cap == c.captions[k] == c.intervals[k].caption()
        assert cap.startswith("noise: ±")


def test_count_stacked_shares_fill_and_position(cars):
    lab = {"position": position_stack(vjust=0.5)}
    p = (
        # drop=False: every declared cell is drawn, so the discrete axes
        # of the two private panels are the same (with zero cells dropped
        # they may differ, and compare says so in its notes)
        ggplot(cars, aes("class", fill="drv"))
        + geom_bar(stat="count_dp", eps=1, seed=42, drop=False)
        + geom_text(
            aes(label=after_stat("count_label")),
            stat="count_dp",
            eps=1,
            seed=42,
            drop=False,
            **lab,
        )
    )
    c = pp.compare(p, ckm=CKM)
    _check_shared(c, ["fill"])
    _check_marked(c)
    assert c.captions["dp"] == (
        "noise: ±6 (95%) for count_dp eps=1\n"
        "count_dp: 14 of 24 marks are within noise (drawn faded)"
    )
    assert "count_ckm" in c.captions["ckm"]
    # the y range is the union of the two private stacks (each panel's
    # bars built once for both checks)
    bars = {k: _layer(c.plots[k], 0) for k in ("dp", "ckm")}
    tops = [bars[k].groupby("x")["ymax"].max().max() for k in bars]
    assert c.limits["y"][1] == pytest.approx(max(tops))
    assert c.limits["fill"] == ["4", "f", "r"]
    # the DP panel shows the user's numbers, unchanged
    pd.testing.assert_series_equal(
        bars["dp"]["count"], layer_data(p, 0)["count"]
    )
    # the unperturbed panel has the true counts and labels them as well
    plain = _layer(c.plots["unperturbed"], 1)
    assert plain["count"].sum() == len(cars)
    assert (plain.loc[plain["count"] == 0, "label"] == "").all()


def test_histogram_from_ckm_with_dp_twin(cars):
    p = ggplot(cars, aes("hwy", rkey="rk")) + geom_histogram(
        stat="bin_ckm", breaks=np.arange(10, 46, 5.0), ptable=PTAB
    )
    c = pp.compare(p, dp={"eps": 0.5, "seed": 3})
    _check_shared(c, [])
    _check_marked(c)
    assert "eps=0.5" in c.captions["dp"]
    # every panel bins on the same public edges
    for q in c.plots.values():
        d = _layer(q, 0)
        assert np.allclose(
            np.r_[d["xmin"], d["xmax"].iloc[-1]], np.arange(10, 46, 5.0)
        )
    # the DP twin does not count record keys
    assert "rkey" not in c.plots["dp"].mapping


def test_bin2d_shares_fill_scale(cars):
    p = ggplot(cars, aes("cty", "hwy")) + geom_bin_2d(
        stat="bin2d_dp", bins=10, limits=BOX, eps=0.5, seed=12
    )
    c = pp.compare(p, ckm=CKM)
    ranges = _check_shared(c, ["fill"])
    fills = [_layer(q, 0)["count"] for q in c.plots.values()]
    lo, hi = ranges[0][2]["fill"]
    assert lo == min(f.min() for f in fills[1:])
    assert hi == max(f.max() for f in fills[1:])
    _check_marked(c)


def test_hex_and_ckm_twin_of_a_private_range():
    rng = np.random.default_rng(4)
    pts = pp.add_record_keys(
        pd.DataFrame(
            {"x": rng.normal(50, 10, 3000), "y": rng.normal(20, 5, 3000)}
        ),
        name="rk",
        seed=1,
    )
    p = ggplot(pts, aes("x", "y")) + pp.geom_hex(
        stat="binhex_dp", bins=12, eps=1, seed=5
    )
    c = pp.compare(p, ckm=CKM)
    _check_shared(c, ["fill"])
    _check_marked(c)
    # the DP layer estimated its box privately; the CKM twin uses that
    # released box as public limits
    d_dp = _layer(c.plots["dp"], 0)
    d_ckm = _layer(c.plots["ckm"], 0)
    assert d_dp["width"].iloc[0] == pytest.approx(d_ckm["width"].iloc[0])


def test_sum_shares_size(cars):
    p = ggplot(cars, aes("cty", "hwy")) + geom_count(
        stat="sum_dp", eps=0.5, seed=1000, limits=BOX, resolution=1
    )
    c = pp.compare(p, ckm=CKM)
    _check_shared(c, ["size"])
    _check_marked(c)
    assert c.limits["size"][1] == max(
        _layer(c.plots[k], 0)["n"].max() for k in ("dp", "ckm")
    )


def test_display_draw_and_save(cars, tmp_path):
    p = ggplot(cars, aes("drv")) + geom_bar(stat="count_dp", eps=1, seed=1)
    c = pp.compare(p, ckm=False)
    assert list(c.plots) == ["unperturbed", "dp"]
    png = c._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    c.save(tmp_path / "c.png", dpi=50)
    assert (tmp_path / "c.png").stat().st_size > 1000
    assert "noise: ±6" in repr(c)


def test_errors_name_the_parameter_and_fix(cars):
    dp = ggplot(cars, aes("drv")) + geom_bar(stat="count_dp", eps=1, seed=1)
    with pytest.raises(PlotninePrivateError, match=r"ckm=dict\(ptable"):
        pp.compare(dp)
    with pytest.raises(PlotninePrivateError, match="does not take eps"):
        pp.compare(dp, ckm={"eps": 1})
    ck = ggplot(cars, aes("drv", rkey="rk")) + geom_bar(
        stat="count_ckm", ptable=PTAB
    )
    with pytest.raises(PlotninePrivateError, match=r"dp=dict\(eps"):
        pp.compare(ck)
    with pytest.raises(PlotninePrivateError, match="no private layer"):
        pp.compare(ggplot(cars, aes("drv")) + geom_bar())
    # every private stat has a comparison now (the PCA score too: see
    # test_compare_families.py)


def test_the_plot_is_not_modified(cars):
    p = ggplot(cars, aes("drv")) + geom_bar(stat="count_dp", eps=1, seed=1)
    before = layer_data(p, 0)
    pp.compare(p, ckm=CKM)
    assert type(p.layers[0].stat).__name__ == "stat_count_dp"
    pd.testing.assert_frame_equal(layer_data(p, 0), before)


def test_a_raw_outlier_never_reaches_the_private_panels(cars):
    # one record far outside the public grid: the unperturbed panel shows
    # it on its own scale, the private panels' limits do not move
    far = cars.copy()
    far.loc[0, "hwy"] = 90

    def limits_of(d):
        p = ggplot(d, aes("cty", "hwy")) + geom_count(
            stat="sum_dp", eps=0.5, seed=1000, limits=BOX, resolution=1
        )
        c = pp.compare(p, ckm=CKM)
        return c, {k: _panel_ranges(c.plots[k])[1] for k in c.plots}

    c_near, near = limits_of(cars)
    c_far, far_ranges = limits_of(far)
    for k in ("dp", "ckm"):
        assert far_ranges[k][1] < 50  # inside the public grid
    assert c_far.limits["y"][1] <= BOX[1][1]
    assert far_ranges["unperturbed"][1] >= 90
    assert near["unperturbed"][1] < 90
    assert c_far.captions["unperturbed"].endswith("on its own scales")


@pytest.mark.parametrize("seed", range(5))
def test_bar_limits_come_from_released_counts_only(cars, seed):
    p = ggplot(cars, aes("class")) + geom_bar(
        stat="count_dp", eps=0.5, seed=seed
    )
    c = pp.compare(p, ckm=False)
    released = layer_data(c.plots["dp"], 0)["count"].max()
    assert c.limits["y"][1] == pytest.approx(released)


def test_save_release_refuses_a_comparison(cars, tmp_path):
    p = ggplot(cars, aes("drv")) + geom_bar(stat="count_dp", eps=1, seed=1)
    c = pp.compare(p, ckm=CKM)
    with pytest.raises(
        PlotninePrivateError,
        match=r"comparison cannot be released.*comparison.plots\['dp'\] or "
        r"comparison.plots\['ckm'\]",
    ):
        pp.save_release(c, tmp_path / "out")
    assert not (tmp_path / "out").exists()
