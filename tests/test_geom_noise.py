"""pp.geom_noise draws the interval variables of the layer it annotates:
the same release (charged once), the mapped ends equal to the stat's
``*_low``/``*_high`` columns."""

from __future__ import annotations

import pandas as pd
import pytest
from plotnine import (
    aes,
    geom_bar,
    geom_boxplot,
    geom_density,
    geom_histogram,
    geom_point,
    geom_step,
    ggplot,
)
from plotnine.data import mpg

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.report import report_from_built

CARS = mpg.assign(
    drv=pd.Categorical(mpg["drv"], categories=["4", "f", "r"]),
)
LEVELS = sorted(mpg["class"].unique())

CASES = [
    (aes("class"), geom_bar, {"stat": "count_dp", "levels": LEVELS}, "count"),
    (
        aes("hwy"),
        geom_histogram,
        {"stat": "bin_dp", "limits": (10, 45), "bins": 7},
        "count",
    ),
    (
        aes("hwy"),
        geom_density,
        {"stat": "density_dp", "limits": (10, 50)},
        "density",
    ),
    (aes("hwy"), geom_step, {"stat": "ecdf_dp", "limits": (10, 50)}, "ecdf"),
    (
        aes("drv", "hwy"),
        geom_boxplot,
        {"stat": "boxplot_dp", "limits": (10, 50), "bins": 40},
        "middle",
    ),
    (
        aes("drv", "hwy"),
        geom_point,
        {"stat": "summary_dp", "bounds": (10, 50)},
        "y",
    ),
]


@pytest.mark.parametrize(
    ("mapping", "geom", "params", "var"),
    CASES,
    ids=[c[3] + c[2]["stat"] for c in CASES],
)
def test_draws_the_layers_own_interval(mapping, geom, params, var):
    kw = {**params, "eps": 1, "seed": 5}
    p = ggplot(CARS, mapping) + geom(**kw) + pp.geom_noise(**kw)
    # one build for both layers and the report (layer_data and
    # privacy_report each build the plot again)
    built = build(p)
    base, bars = built.layers[0].data, built.layers[1].data
    assert bars["ymin"].tolist() == base[f"{var}_low"].tolist()
    assert bars["ymax"].tolist() == base[f"{var}_high"].tolist()
    report = report_from_built(built)
    assert "counted once" in " ".join(report.notes)


def test_another_variable():
    kw = {"stat": "count_dp", "levels": LEVELS, "eps": 1, "seed": 5}
    p = ggplot(CARS, aes("class")) + geom_bar(**kw)
    p = p + pp.geom_noise(variable="prop", **kw)
    base, bars = pp.layer_data(p, 0), pp.layer_data(p, 1)
    assert bars["ymax"].tolist() == base["prop_high"].tolist()


def test_a_stat_without_a_drawn_interval_names_the_fix():
    with pytest.raises(pp.PlotninePrivateError, match="count_high"):
        pp.geom_noise(stat="bin2d_dp", eps=1)
