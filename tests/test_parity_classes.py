"""One regression test per class of issue 20 (swap for swap, the same
figure as plotnine): each fails on the code before the fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    after_stat,
    facet_grid,
    facet_wrap,
    geom_bar,
    geom_bin_2d,
    geom_histogram,
    ggplot,
)

import plotnine_private as pp
from plotnine_private import layer_data

PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)
CLASSES = [
    "2seater",
    "compact",
    "midsize",
    "minivan",
    "pickup",
    "subcompact",
    "suv",
]


@pytest.fixture
def cars(mpg) -> pd.DataFrame:
    d = mpg.copy()
    d["class"] = pd.Categorical(d["class"], categories=CLASSES)
    d["drv"] = pd.Categorical(d["drv"], categories=["4", "f", "r"])
    d["year"] = pd.Categorical(d["year"], categories=[1999, 2008])
    return pp.add_record_keys(d, name="rk", seed=3)


def _private(stat: str, **kw) -> dict:
    if stat.endswith("_dp"):
        return {"stat": stat, "eps": 1, "seed": 4, **kw}
    return {"stat": stat, "ptable": PTAB, **kw}


def _mapping(stat: str, *args, **kw):
    if stat.endswith("_ckm"):
        kw["rkey"] = "rk"
    return aes(*args, **kw)


# -- class 1: normalised variables per panel -----------------------------
@pytest.mark.parametrize("mech", ["dp", "ckm"])
@pytest.mark.parametrize(
    "facet",
    [facet_wrap("drv"), facet_grid("year ~ drv")],
    ids=["wrap", "grid"],
)
def test_prop_sums_to_one_in_every_panel(cars, mech, facet):
    stat = f"count_{mech}"
    p = (
        ggplot(cars, _mapping(stat, "class", y=after_stat("prop"), group=1))
        + geom_bar(**_private(stat))
        + facet
    )
    d = layer_data(p)
    totals = d.groupby("PANEL", observed=True)["prop"].sum()
    np.testing.assert_allclose(totals, 1.0)
    assert d["PANEL"].nunique() == len(totals) > 1


@pytest.mark.parametrize("mech", ["dp", "ckm"])
def test_histogram_density_and_ncount_per_panel(cars, mech):
    stat = f"bin_{mech}"
    p = (
        ggplot(cars, _mapping(stat, "hwy"))
        + geom_histogram(**_private(stat, breaks=list(range(10, 50, 4))))
        + facet_wrap("drv")
    )
    d = layer_data(p)
    for _, panel in d.groupby("PANEL", observed=True):
        width = panel["xmax"] - panel["xmin"]
        assert (panel["density"] * width).sum() == pytest.approx(1)
        assert panel["ncount"].max() == pytest.approx(1)
        assert panel["ndensity"].max() == pytest.approx(1)


@pytest.mark.parametrize("mech", ["dp", "ckm"])
def test_bin2d_density_per_panel(cars, mech):
    stat = f"bin2d_{mech}"
    p = (
        ggplot(cars, _mapping(stat, "displ", "hwy"))
        + geom_bin_2d(
            **_private(stat, breaks=([1, 3, 5, 7], [10, 20, 30, 45]))
        )
        + facet_wrap("year")
    )
    d = layer_data(p)
    for _, panel in d.groupby("PANEL", observed=True):
        assert panel["density"].sum() == pytest.approx(1)


# -- class 4: the same variable twice --------------------------------------
@pytest.mark.parametrize("mech", ["dp", "ckm"])
def test_fill_on_x_is_one_dimension(cars, mech):
    stat = f"count_{mech}"
    p = ggplot(cars, _mapping(stat, "class", fill="class")) + geom_bar(
        **_private(stat, drop=False)
    )
    d = layer_data(p)
    # 7 bars, one colour each, not 7 x 7 cells
    assert len(d) == 7
    assert d["fill"].nunique() == 7
    assert sorted(d["group"]) == list(range(1, 8))
    assert list(d["count"]) == list(
        layer_data(
            ggplot(cars, _mapping(stat, "class"))
            + geom_bar(**_private(stat, drop=False))
        )["count"]
    )
