"""pp.geom_noise draws the interval variables of the layer it annotates:
the same release (charged once), the mapped ends equal to the stat's
``*_low``/``*_high`` columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from neighbours import differences, snapshot
from plotnine import (
    aes,
    after_stat,
    geom_area,
    geom_bar,
    geom_boxplot,
    geom_col,
    geom_density,
    geom_histogram,
    geom_line,
    geom_point,
    geom_step,
    ggplot,
    position_dodge,
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


# geom_noise() with no arguments: the previous private layer's release,
# drawn where its marks are (stacked, filled, dodged)

DRV = CARS.assign(cls=pd.Categorical(CARS["class"]))


def _bars(position, kind="count"):
    if kind == "count":
        return ggplot(DRV, aes("cls", fill="drv")) + geom_bar(
            stat="count_dp", eps=1, seed=5, position=position
        )
    if kind == "bin":
        return ggplot(DRV, aes("hwy", fill="drv")) + geom_histogram(
            stat="bin_dp",
            eps=1,
            seed=5,
            bins=8,
            limits=(10, 50),
            position=position,
        )
    return ggplot(DRV, aes("cls", "hwy", fill="drv")) + geom_col(
        stat="summary_dp",
        fun="sum",
        eps=1,
        seed=5,
        bounds=(0, 50),
        position=position,
    )


@pytest.mark.parametrize("kind", ["count", "bin", "sum"])
@pytest.mark.parametrize("position", ["stack", "fill", "dodge"])
def test_no_arguments_draws_on_the_layers_marks(position, kind):
    p = _bars(position, kind) + pp.geom_noise()
    built = build(p)
    bars, noise = built.layers[0].data, built.layers[1].data
    # one row per mark, in the marks' order, on the drawn top of each
    assert len(noise) == len(bars)
    assert noise["group"].tolist() == bars["group"].tolist()
    assert noise["y"].tolist() == bars["ymax"].tolist()
    centre = (noise["xmin"] + noise["xmax"]) / 2
    np.testing.assert_allclose(centre, (bars["xmin"] + bars["xmax"]) / 2)
    report = report_from_built(built)
    assert report.total_eps == 1
    assert "counted once" in " ".join(report.notes)
    # the repeat's notes are said once, at the layer it repeats
    assert not [n for n in report.notes if n.startswith("layer 1 (")]
    # the interval moved with its mark: from the mark's base by its ends
    # in the stat's units (stack, dodge), scaled as the mark is (fill)
    low = bars["y_low" if kind == "sum" else "count_low"]
    value = (bars["y" if kind == "sum" else "count"]).astype(float)
    if position == "fill":
        assert noise["ymin"].min() >= 0 and noise["ymax"].max() <= 1
        if kind == "sum":
            return  # the bars' y is their filled top: no unscaled value
        kept = value > 0
        scale = (bars["ymax"] - bars["ymin"])[kept] / value[kept]
        want = np.clip(bars["ymin"][kept] + low[kept] * scale, 0, 1)
        np.testing.assert_allclose(noise["ymin"][kept], want)
    else:
        np.testing.assert_allclose(noise["ymin"], bars["ymin"] + low)


def test_box_plots_dodged_by_fill_have_their_medians_interval():
    p = (
        ggplot(DRV, aes("cls", "hwy", fill="drv"))
        + geom_boxplot(stat="boxplot_dp", eps=1, seed=5, limits=(10, 50))
        + pp.geom_noise()
    )
    built = build(p)
    boxes, noise = built.layers[0].data, built.layers[1].data
    assert noise["group"].tolist() == boxes["group"].tolist()
    np.testing.assert_allclose(noise["x"], boxes["x"])
    assert noise["ymin"].tolist() == boxes["middle_low"].tolist()
    assert noise["ymax"].tolist() == boxes["middle_high"].tolist()
    assert report_from_built(built).total_eps == 1


def test_the_mapped_variable_is_drawn():
    p = ggplot(DRV, aes("cls")) + geom_bar(
        aes(y=after_stat("prop"), group=1), stat="count_dp", eps=1, seed=5
    )
    data = pp.layer_data(p + pp.geom_noise(), 1)
    assert data["ymax"].tolist() == pp.layer_data(p, 0)["prop_high"].tolist()


def test_another_release_there_is_an_error_naming_the_fix():
    p = _bars("stack")
    with pytest.raises(
        pp.PlotninePrivateError, match=r"seed=6 differs.*seed=5"
    ):
        p + pp.geom_noise(seed=6)
    # the same parameters are the same release: accepted
    p + pp.geom_noise(seed=5, eps=1, width=0.5, colour="red")


def test_without_a_private_layer_before_it_says_how_to_add_it():
    with pytest.raises(pp.PlotninePrivateError, match="after a layer"):
        ggplot(DRV, aes("cls")) + pp.geom_noise()


@pytest.mark.parametrize("position", ["stack", "dodge"])
def test_neighbours_differ_only_in_noisy_numbers(position):
    other = DRV.copy()
    other.loc[7, ["cls", "drv"]] = ["suv", "4"]

    def plot(d):
        return (
            ggplot(d, aes("cls", fill="drv"))
            + geom_bar(stat="count_dp", eps=1, seed=5, position=position)
            + pp.geom_noise()
        )

    assert differences(snapshot(plot(DRV)), snapshot(plot(other))) == []


@pytest.mark.parametrize(
    "layer",
    [
        # points and lines have no width: dodged at their x, the interval
        # no wider than the step between two dodged marks
        lambda: geom_point(
            stat="summary_dp",
            eps=1,
            seed=5,
            bounds=(0, 50),
            position=position_dodge(0.6),
        ),
        lambda: geom_line(
            stat="summary_dp",
            eps=1,
            seed=5,
            bounds=(0, 50),
            position=position_dodge(0.6),
        ),
        # bars dodged by a width of their own
        lambda: geom_col(
            stat="summary_dp",
            eps=1,
            seed=5,
            bounds=(0, 50),
            position=position_dodge(0.7),
        ),
    ],
    ids=["point", "line", "col"],
)
def test_dodged_marks_of_any_width_have_their_intervals_at_their_x(layer):
    p = ggplot(DRV, aes("cls", "hwy", colour="drv", fill="drv")) + layer()
    built = build(p + pp.geom_noise())
    marks, noise = built.layers[0].data, built.layers[1].data
    assert noise["group"].tolist() == marks["group"].tolist()
    np.testing.assert_allclose(noise["x"], marks["x"])
    np.testing.assert_allclose(noise["ymin"], marks["y_low"])
    width = noise["xmax"] - noise["xmin"]
    if type(built.layers[0].geom).__name__ == "geom_col":
        # bars: the share of the bar it had undodged (0.2 of 0.9 wide)
        np.testing.assert_allclose(
            width, (marks.xmax - marks.xmin) * 0.2 / 0.9
        )
    else:  # 0.6 shared by three drives
        np.testing.assert_allclose(width, 0.2)


def test_one_release_in_the_ledger(tmp_path, ledger_key):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="cars", cap_eps=5)
    try:
        p = _bars("stack") + pp.geom_noise()
        p.draw()
        rows = pp.ledger(path).table
        assert len(rows) == 1 and rows["eps"].tolist() == [1.0]
        pp.layer_data(p, 1)  # drawn again: the same release, free
        assert len(pp.ledger(path).table) == 1
    finally:
        pp.use_ledger(None)


def test_stacked_areas_have_their_intervals_on_the_stacked_curves():
    # geom_area stacks by default: the error bars sit on each band's top
    p = ggplot(DRV, aes("hwy", fill="drv")) + geom_area(
        stat="bin_dp", eps=1, seed=5, bins=8, limits=(10, 50)
    )
    built = build(p + pp.geom_noise())
    areas, noise = built.layers[0].data, built.layers[1].data
    assert noise["group"].tolist() == areas["group"].tolist()
    assert noise["y"].tolist() == areas["ymax"].tolist()
    np.testing.assert_allclose(
        noise["ymin"], areas["ymin"] + areas["count_low"]
    )
    assert report_from_built(built).total_eps == 1
