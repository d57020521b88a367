"""Medians and quantiles of stat_summary_dp/_ckm: the box plots' fine
histogram, reused (one release), and plotnine's names for them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from neighbours import differences, snapshot
from plotnine import aes, geom_boxplot, geom_point, ggplot, stat_summary
from plotnine.data import mpg as _mpg

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.report import report_from_built

CLASSES = sorted(_mpg["class"].unique())
CNT = pp.create_cnt_ptable(D=3, V=1.5, js=1)
CARS = pp.add_record_keys(
    _mpg.assign(class_=pd.Categorical(_mpg["class"], categories=CLASSES)),
    name="rk",
    rng_seed=5,
)
DP = {"eps": 2, "seed": 9}


def _mechanism(mech: str) -> dict:
    return DP if mech == "dp" else {"ptable": CNT}


def summary(mech="dp", **kw):
    params = {**_mechanism(mech), "bounds": (0, 50), "bins": 100, **kw}
    return geom_point(stat=f"summary_{mech}", **params)


def box(mech="dp", **kw):
    params = {**_mechanism(mech), "limits": (0, 50), "bins": 100, **kw}
    return geom_boxplot(stat=f"boxplot_{mech}", **params)


@pytest.mark.parametrize("mech", ["dp", "ckm"])
def test_the_median_is_the_box_plots_middle_from_one_release(mech):
    plot = (
        ggplot(CARS, aes("class_", "hwy", rkey="rk"))
        + summary(mech, fun_y=np.median)
        + box(mech)
    )
    built = build(plot)
    med, boxes = (lyr.data for lyr in built.layers)
    np.testing.assert_array_equal(med["y"], boxes["middle"])
    np.testing.assert_array_equal(med["y_low"], boxes["middle_low"])
    np.testing.assert_array_equal(med["y_high"], boxes["middle_high"])
    np.testing.assert_array_equal(med["n"], boxes["n"])
    # errorbar="noise": the bars are the median's interval
    np.testing.assert_array_equal(med["ymin"], med["y_low"])
    if mech == "dp":  # the same query: charged once
        # privacy_report(plot) is the report of an equal build: this one
        report = report_from_built(built)
        assert report.total_eps == pytest.approx(2.0)


def test_median_hilow_and_quantiles_are_the_box_plots_quantiles():
    plot = (
        ggplot(CARS, aes("class_", "hwy"))
        + summary(
            fun_data="median_hilow", fun_args={"confidence_interval": 0.8}
        )
        + summary(fun_y=np.quantile, fun_args={"q": 0.9})
        + summary(fun_y=np.percentile, fun_args={"q": 90})
        + summary(fun="median", errorbar=None)
        + box(whiskers=(0.1, 0.9))
    )
    hilow, q90, p90, med, boxes = (lyr.data for lyr in build(plot).layers)
    np.testing.assert_allclose(hilow["ymin"], boxes["ymin"])
    np.testing.assert_allclose(hilow["ymax"], boxes["ymax"])
    np.testing.assert_allclose(hilow["y"], boxes["middle"])
    np.testing.assert_allclose(q90["y"], boxes["ymax"])
    np.testing.assert_allclose(p90["y"], boxes["ymax"])
    np.testing.assert_allclose(q90["y_high"], boxes["ymax_high"])
    np.testing.assert_array_equal(med["ymin"], med["y"])
    np.testing.assert_array_equal(med["ymax"], med["y"])


def test_at_a_huge_eps_the_median_is_plotnines_within_a_unit():
    # hwy is whole miles per gallon; the private median inverts the CDF
    # within a fine bin (0.5 wide), plotnine's averages two records
    p = ggplot(CARS, aes("class_", "hwy"))
    got = pp.layer_data(p + summary(fun_y=np.median, eps=1e9))
    want = pp.layer_data(p + stat_summary(fun_y=np.median, geom="point"))
    assert np.abs(got["y"] - want["y"]).max() <= 1.0


@pytest.mark.parametrize("mech", ["dp", "ckm"])
def test_only_noisy_numbers_differ_on_neighbours(mech):
    other = CARS.assign(hwy=CARS["hwy"].where(CARS.index != 0, 1000))
    kw = {"fun_data": "median_hilow"}

    def make(d):
        return ggplot(d, aes("class_", "hwy", rkey="rk")) + summary(mech, **kw)

    assert differences(snapshot(make(CARS)), snapshot(make(other))) == []


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"fun_y": np.quantile}, "needs fun_args=\\{'q': ...\\}"),
        ({"fun_y": np.quantile, "fun_args": {"q": 2}}, "in \\[0, 1\\]"),
        ({"fun_y": np.percentile, "fun_args": {"q": 101}}, "in \\[0, 100\\]"),
        ({"fun_y": np.median, "fun_args": {"q": 0.5}}, "fun_args key 'q'"),
        ({"fun_y": np.median, "sum_share": 0.5}, "Drop sum_share"),
        (
            {
                "fun_data": "median_hilow",
                "fun_args": {"confidence_interval": 2},
            },
            "confidence_interval",
        ),
    ],
)
def test_bad_quantile_parameters_name_the_fix(kw, words):
    # raised where the layer joins a plot (plotnine 0.16 makes a geom's
    # stat then, 0.15 at once): before anything is built or drawn
    with pytest.raises(pp.PlotninePrivateError, match=words):
        ggplot() + summary(**kw)


@pytest.mark.parametrize("mech", ["dp", "ckm"])
def test_tukey_bounds_are_computed_for_tukey_whiskers_only(mech, monkeypatch):
    # a summary's quantiles and quantile whiskers are inverted from the
    # CDF band: the Tukey whiskers' own bounds are asked for box plots
    # with Tukey whiskers alone
    from plotnine_private.stats import boxplot

    calls = []
    tukey = boxplot.tukey_bounds

    def spy(*args, **kwargs):
        calls.append(1)
        return tukey(*args, **kwargs)

    monkeypatch.setattr(boxplot, "tukey_bounds", spy)
    base = ggplot(CARS, aes("class_", "hwy", rkey="rk"))
    build(base + summary(mech, fun_y=np.median))
    build(base + box(mech, whiskers=(0.05, 0.95)))
    assert calls == []
    d = build(base + box(mech)).layers[0].data
    assert calls == [1]
    assert (d["ymax_low"] <= d["ymax_high"]).all()
