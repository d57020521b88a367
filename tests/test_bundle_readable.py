"""A bundle an output checker can read: each private layer's CSV holds
what the layer draws (an error bar's interval ends included), dates are
ISO 8601 in the column's time zone, a composition records the budget its
drawing enforced, and the method statement names each statistic."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest
from keyfile import using_key
from plotnine import (
    aes,
    geom_bar,
    geom_boxplot,
    geom_col,
    geom_density,
    geom_histogram,
    ggplot,
)
from plotnine.data import economics, mpg

import plotnine_private as pp
from plotnine_private._compat import build

CARS = mpg.assign(cls=pd.Categorical(mpg["class"]))
DAYS = economics.assign(zoned=economics["date"].dt.tz_localize("Europe/Paris"))


def _save(plot, folder):
    with using_key(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pp.save_release(plot, folder, code="test", dpi=20)
        built = build(plot) if hasattr(plot, "layers") else None
    meta = json.loads((folder / "results.json").read_text())
    return meta, built


#: each family, the statistic its statement names
FAMILIES = {
    "count": (
        ggplot(CARS, aes("cls")) + geom_bar(stat="count_dp", eps=1, seed=2),
        "counts",
    ),
    "mean": (
        ggplot(CARS, aes("cls", "hwy"))
        + geom_col(
            stat="summary_dp", fun="mean", eps=1, seed=2, bounds=(0, 50)
        ),
        "means",
    ),
    "sum": (
        ggplot(CARS, aes("cls", "hwy"))
        + geom_col(
            stat="summary_dp", fun="sum", eps=1, seed=2, bounds=(0, 50)
        ),
        "totals",
    ),
    "box": (
        ggplot(CARS, aes("cls", "hwy"))
        + geom_boxplot(stat="boxplot_dp", eps=1, seed=2, limits=(0, 50)),
        "quartiles",
    ),
    "density": (
        ggplot(CARS, aes("hwy"))
        + geom_density(stat="density_dp", eps=1, seed=2, limits=(0, 50)),
        "densities",
    ),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_layers_csv_is_what_it_draws(family, tmp_path):
    plot, statistic = FAMILIES[family]
    meta, built = _save(plot + pp.geom_noise(), tmp_path)
    assert statistic in meta["plotnine_private"]["method_statement"]
    outputs = list(meta["results"].values())
    assert [o["properties"]["statistic"] for o in outputs][0].startswith(
        statistic
    )
    # the noise layer's CSV has the interval ends it draws
    drawn = built.layers[1].data
    table = pd.read_csv(tmp_path / outputs[1]["files"][0]["name"])
    for end in ("ymin", "ymax"):
        pd.testing.assert_series_equal(
            table[end], drawn[end].reset_index(drop=True), check_names=False
        )


@pytest.mark.parametrize(
    ("column", "tz"), [("date", None), ("zoned", "Europe/Paris")]
)
def test_dates_are_iso_8601_in_the_columns_zone(column, tz, tmp_path):
    lo, hi = (pd.Timestamp(d, tz=tz) for d in ("1967-01-01", "2016-01-01"))
    plot = ggplot(DAYS, aes(column)) + geom_histogram(
        stat="bin_dp", eps=1, seed=2, bins=7, limits=(lo, hi)
    )
    meta, _ = _save(plot, tmp_path)
    table = pd.read_csv(tmp_path / "layer_0_stat_bin_dp.csv")
    assert table["xmin"].iloc[0] == lo.isoformat()
    assert table["xmax"].iloc[-1] == hi.isoformat()
    parsed = pd.to_datetime(table["x"], utc=tz is not None, format="ISO8601")
    assert parsed.is_monotonic_increasing


def test_a_compositions_budget_is_recorded(tmp_path):
    plot = FAMILIES["count"][0] | FAMILIES["mean"][0]
    meta, _ = _save(plot + pp.privacy_budget(eps=3), tmp_path)
    assert meta["plotnine_private"]["budget"] == {
        "eps": 3.0,
        "delta": 0.0,
        "of": "composition",
    }
    statement = meta["plotnine_private"]["method_statement"]
    assert statement.startswith("counts and means")
    assert "total eps=2" in statement
