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
    geom_bin_2d,
    geom_boxplot,
    geom_col,
    geom_count,
    geom_density,
    geom_histogram,
    geom_point,
    geom_step,
    geom_violin,
    ggplot,
)
from plotnine.data import economics, mpg

import plotnine_private as pp
from plotnine_private._compat import build

CARS = mpg.assign(
    cls=pd.Categorical(mpg["class"]), drv=pd.Categorical(mpg["drv"])
)
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


# every other family (and the Cell Key Method) in one composition: one
# bundle, one draw, each output checked against its built plot
PTABLE = pp.create_cnt_ptable(D=3, V=2.0, js=1)
KEYED = pp.add_record_keys(CARS, rng_seed=4)
MORE = {
    "ECDFs": ggplot(CARS, aes("hwy"))
    + geom_step(stat="ecdf_dp", eps=1, seed=2, limits=(0, 50)),
    "quantiles": ggplot(CARS, aes("cls", "hwy"))
    + geom_point(
        stat="summary_dp", fun="median", eps=1, seed=2, bounds=(0, 50)
    ),
    "densities": ggplot(CARS, aes("drv", "hwy"))
    + geom_violin(stat="violin_dp", eps=1, seed=2, limits=(0, 50)),
    "histogram counts": ggplot(CARS, aes("hwy", fill="drv"))
    + geom_histogram(stat="bin_dp", eps=1, seed=2, limits=(0, 50), bins=5),
    "2-D histogram counts": ggplot(CARS, aes("hwy", "cty"))
    + geom_bin_2d(
        stat="bin2d_dp", eps=1, seed=2, limits=((0, 50), (0, 50)), bins=4
    ),
    "hexagon counts": ggplot(CARS, aes("hwy", "cty"))
    + pp.geom_hex(
        stat="binhex_dp", eps=1, seed=2, limits=((0, 50), (0, 50)), bins=4
    ),
    "counts at each point": ggplot(CARS, aes("cls", "drv"))
    + geom_count(stat="sum_dp", eps=1, seed=2),
    "PCA directions, ranges and score counts": ggplot(CARS)
    + pp.stat_dp_pca_score(
        columns=["displ", "cty", "hwy", "cyl"],
        eps=4,
        delta=1e-5,
        seed=1,
        bins=(4, 4),
    ),
}
CKM = ggplot(KEYED, aes("cls", rkey="rkey")) + geom_bar(
    stat="count_ckm", ptable=PTABLE
)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    folder = tmp_path_factory.mktemp("families")
    plots = list(MORE.values())
    composed = (
        (plots[0] | plots[1] | plots[2])
        / (plots[3] | plots[4] | plots[5])
        / (plots[6] | plots[7])
    )
    meta, _ = _save(composed, folder)
    with using_key(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        builts = [build(p) for p in plots]
    return folder, meta, builts


@pytest.mark.parametrize("p", range(len(MORE)), ids=list(MORE))
def test_each_familys_output_is_its_built_layer(bundle, p):
    folder, meta, builts = bundle
    statistic = list(MORE)[p]
    out = meta["results"][f"output_{p + 1}_0"]
    layer = builts[p].layers[0]
    props = out["properties"]
    assert props["statistic"].startswith(statistic)
    assert props["method"] == type(layer.stat).__name__
    assert props["geom"] == type(layer.geom).__name__
    assert props["mitigation"] == "Noise" and out["status"] == "pass"
    assert (
        sum(r["charged_eps"] for r in props["releases"])
        == (layer.stat.params["eps"])
    )
    assert statistic in meta["plotnine_private"]["method_statement"]
    # the CSV holds the drawn values: positions, extents and released
    # numbers of every mark, as the built layer has them
    table = pd.read_csv(folder / out["files"][0]["name"])
    drawn = layer.data.reset_index(drop=True)
    shared = [
        c
        for c in table.columns
        if c in drawn.columns and c not in ("PANEL", "fill", "colour")
    ]
    assert {"x", "y"} <= set(shared) or {"x", "ymin", "ymax"} <= set(shared)
    for c in shared:
        pd.testing.assert_series_equal(
            table[c].astype(float),
            drawn[c].astype(float),
            check_names=False,
        )


def test_the_cell_key_method_is_said_as_such(tmp_path):
    meta, built = _save(CKM, tmp_path)
    out = meta["results"]["output_0"]
    assert out["properties"]["mitigation"] == "CKM"
    assert out["properties"]["statistic"] == "counts"
    statement = meta["plotnine_private"]["method_statement"]
    assert statement == "counts perturbed with the Cell Key Method"
    table = pd.read_csv(tmp_path / out["files"][0]["name"])
    drawn = built.layers[0].data
    for c in ("count", "y", "ymin", "ymax"):
        assert table[c].tolist() == drawn[c].tolist()


def test_each_plots_own_budget_is_recorded(tmp_path):
    # enforced when drawn (one over its own budget is refused), so said:
    # the first plot's is not the figure's, and a list has one per plot
    a, b = (
        FAMILIES["count"][0] + pp.privacy_budget(eps=1.5),
        FAMILIES["mean"][0] + pp.privacy_budget(eps=3),
    )
    meta, _ = _save([a, b], tmp_path / "list")
    assert meta["plotnine_private"]["budget"] == {
        "plots": [
            {"plot": 1, "eps": 1.5, "delta": 0.0},
            {"plot": 2, "eps": 3.0, "delta": 0.0},
        ]
    }
    meta, _ = _save(
        (a | FAMILIES["sum"][0]) + pp.privacy_budget(eps=2), tmp_path / "c"
    )
    assert meta["plotnine_private"]["budget"] == {
        "eps": 2.0,
        "delta": 0.0,
        "of": "composition",
        "plots": [{"plot": 1, "eps": 1.5, "delta": 0.0}],
    }
