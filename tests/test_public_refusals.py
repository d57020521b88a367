"""Errors, warnings and domains depend on public facts only (issue 18,
item 6 and its "Also" paragraph).

Each test uses the public API and failed on the code before the fix:
an error or a domain that changed with one record, a summary that hung,
an out-of-level count that left the engine, a bundle without the review
row of an unprotected layer, ``str()`` of a column subset that raised.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    geom_bar,
    geom_blank,
    geom_histogram,
    geom_point,
    ggplot,
)
from plotnine.data import mpg

import plotnine_private as pp
from plotnine_private import layer_data
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.mechanisms.release.magnitudes import laplace_halfwidth
from plotnine_private.stats.summary.stat import exact_totals

PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)
CLASSES = sorted(mpg["class"].unique())


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _declared() -> pd.DataFrame:
    d = pp.add_record_keys(mpg.copy(), name="rk", seed=3)
    d["class"] = pd.Categorical(d["class"], categories=CLASSES)
    return d


# -- weights --------------------------------------------------------------
def test_dp_refuses_a_mapped_weight_even_when_every_weight_is_one():
    d = _declared()
    d["w"] = 1.0
    plot = ggplot(d, aes("class", weight="w")) + geom_bar(
        stat="count_dp", eps=1, seed=1
    )
    with pytest.raises(PlotninePrivateError, match="weight aesthetic"):
        _quiet(layer_data, plot)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_ckm_leaves_out_records_with_invalid_weights(bad):
    d = _declared()
    d["w"] = 2.0
    d.loc[0, "w"] = bad

    def counts(frame):
        plot = ggplot(frame, aes("class", rkey="rk", weight="w")) + geom_bar(
            stat="count_ckm", ptable=PTAB
        )
        return _quiet(layer_data, plot)[["x", "count"]]

    pd.testing.assert_frame_equal(counts(d), counts(d.iloc[1:]))


# -- tiny and odd inputs --------------------------------------------------
@pytest.mark.parametrize("adjacency", ["replace", "add_remove"])
@pytest.mark.parametrize("rows", [0, 1])
def test_zero_or_one_record_builds(rows, adjacency):
    d = pd.DataFrame({"x": ["a"] * rows})
    plot = ggplot(d, aes("x")) + geom_bar(
        stat="count_dp", eps=1, seed=1, adjacency=adjacency
    )
    out = _quiet(layer_data, plot)
    assert len(out) == 0  # undeclared: below the threshold, nothing shown


def test_an_undeclared_x_whose_only_value_is_missing_builds():
    d = pd.DataFrame({"x": [np.nan, np.nan, 3.0]})
    plot = ggplot(d.iloc[:2], aes("x")) + geom_bar(
        stat="count_dp", eps=1, seed=1
    )
    assert len(_quiet(layer_data, plot)) == 0


# -- bool columns ---------------------------------------------------------
@pytest.mark.parametrize("kind", ["bool", "object", "boolean"])
def test_a_bool_column_with_a_missing_value_keeps_its_declared_domain(kind):
    d = mpg.copy()
    d["big"] = d["displ"] > 3
    if kind != "bool":
        d["big"] = d["big"].astype(object if kind == "object" else kind)
        d.loc[0, "big"] = None
    plot = ggplot(d, aes("big")) + geom_bar(stat="count_dp", eps=1, seed=2)
    report = _quiet(pp.privacy_report, plot)
    row = report.table.iloc[0]
    assert row["domain"] == "public: declared levels"
    assert row["delta"] == 0
    assert len(_quiet(layer_data, plot)) == 2  # both levels, always


# -- summary --------------------------------------------------------------
def test_summary_refuses_bounds_beyond_its_grid_with_the_limit():
    # it used to hang computing the noise interval
    with pytest.raises(PlotninePrivateError, match=r"2\*\*31"):
        plot = ggplot(mpg, aes("class", "hwy")) + geom_point(
            stat="summary_dp",
            fun="sum",
            bounds=(0, 1e12),
            resolution=1,
            eps=1,
        )
        _quiet(layer_data, plot)


def test_noise_halfwidth_is_found_at_any_scale():
    # at scale 1e12 the old search stepped through trillions of values
    for scale in (1e6, 1e12, 1e15):
        h = laplace_halfwidth(scale, "discrete_laplace", 0.05)
        assert abs(h - scale * np.log(1 / 0.05)) <= 1e-6 * scale


def test_summary_totals_are_exact_for_any_number_of_records():
    from plotnine_private.cells import categorical_dimension

    n = 2**23 + 3  # float64 running sums of these values lose units
    dim = categorical_dimension("g", pd.Series(np.zeros(n, int)), [0])
    k = np.full(n, 2**31 - 1, dtype=np.int64)
    k[:3] = [-(2**31), 5, 7]
    idx = np.zeros((1, 1), dtype=np.int64)
    total = exact_totals([dim], idx, k, -(2**31))
    assert int(total[0]) == int(sum(k[:3].tolist())) + (n - 3) * (2**31 - 1)


# -- engines --------------------------------------------------------------
def test_a_value_outside_the_declared_levels_stays_in_the_engine():
    duckdb = pytest.importorskip("duckdb")
    from plotnine_private.engines import push, source

    d = pd.DataFrame({"g": ["a"] * 50 + ["b"] * 40 + ["zzz"] * 3})
    con = duckdb.connect()
    con.register("t", d)
    src = source(con.table("t"), levels={"g": ["a", "b"]})
    left: list[pd.DataFrame] = []
    grouped = push.grouped

    def spy(*args, **kwargs):
        out = grouped(*args, **kwargs)
        left.append(out)
        return out

    push.grouped = spy
    try:
        plot = ggplot(src, aes("g")) + geom_bar(stat="count_dp", eps=1, seed=1)
        _quiet(layer_data, plot)
        _quiet(pp.dp_table, src, "g", eps=1, seed=2)
    finally:
        push.grouped = grouped
    assert len(left) == 2
    for out in left:
        assert set(out.iloc[:, 0]) == {"a", "b"}


# -- bundle and intervals -------------------------------------------------
def test_an_unprotected_blank_layer_is_a_review_row_with_its_axis(
    tmp_path, key_file
):
    plot = ggplot(mpg, aes("hwy")) + geom_histogram(
        stat="bin_dp", limits=(0, 50), bins=10, eps=1, seed=1
    )
    plot = plot + geom_blank(aes(x="displ"))
    _quiet(pp.save_release, plot, tmp_path / "b", code="plot")
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    rows = list(results["results"].values())
    assert [r["status"] for r in rows] == ["pass", "review"]
    assert rows[1]["properties"]["trains"] == ["x"]
    assert "trains the x axis" in rows[1]["summary"]


def test_str_of_a_column_subset_of_noise_intervals():
    plot = ggplot(_declared(), aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=1
    )
    intervals = _quiet(pp.noise_interval, plot)
    text = str(intervals[["low", "high"]])
    assert "low" in text and "noise:" not in text
    assert str(intervals).startswith("noise: ")
