"""A source is filtered and selected as its frame is: ``src[src.x > 0]``,
``src.query(...)``, ``src.filter(...)``, ``src[["a", "b"]]``,
``src.select(...)`` give a source of the same unit and data set, whose
units are bounded on the rows kept; a selection that drops the unit's
column is refused, naming it."""

from __future__ import annotations

import warnings

import narwhals as nw
import numpy as np
import pandas as pd
import polars as pl
import pytest
from neighbours import differences, snapshot
from plotnine import aes, geom_bar, ggplot
from plotnine.data import mpg

import plotnine_private as pp

LEVELS = sorted(mpg["class"].unique())
D = mpg.assign(
    pid=np.arange(len(mpg)) // 3,
    cls=pd.Categorical(mpg["class"], categories=LEVELS),
)
MASK = D["displ"] > 3


def _counts(data) -> list:
    p = ggplot(data, aes("cls")) + geom_bar(stat="count_dp", eps=1, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pp.layer_data(p, 0)["count"].tolist()


@pytest.fixture(scope="module")
def want():
    # the source of the filtered frame: what every way of filtering gives
    return _counts(pp.source(D[MASK], unit="pid", max_records=2))


@pytest.mark.parametrize(
    "how",
    [
        lambda s: s[s.displ > 3],
        lambda s: s[s["displ"] > 3],
        lambda s: s.query("displ > 3"),
        lambda s: s.filter(s["displ"] > 3),
        lambda s: s.filter(lambda f: f["displ"] > 3),
    ],
)
def test_every_way_of_filtering_is_the_filtered_frames_source(how, want):
    src = pp.source(D, unit="pid", max_records=2, dataset="cars")
    got = how(src)
    assert got.unit == src.unit and len(got) == int(MASK.sum())
    assert got.dataset == "cars"  # charged to the same data set
    assert _counts(got) == want


@pytest.mark.parametrize(
    "how",
    [
        lambda s: s[s.displ > 3][["cls", "pid"]],
        lambda s: s[s.displ > 3].select("cls", "pid"),
        lambda s: s.select(["cls", "pid"]).filter(MASK.to_numpy()),
        # pandas' DataFrame.filter: columns by their labels
        lambda s: s.filter(items=["cls", "pid"])[MASK],
        lambda s: s[MASK].filter(items=["cls", "pid"], axis="columns"),
    ],
)
def test_a_selection_is_the_selected_frames_source(how):
    # without record_id a record is named by its content: the columns
    # selected are its content
    src = pp.source(D, unit="pid", max_records=2)
    ref = pp.source(D.loc[MASK, ["cls", "pid"]], unit="pid", max_records=2)
    assert _counts(how(src)) == _counts(ref)


def test_a_polars_frame_and_an_engine_filter_as_polars_and_narwhals_do(want):
    frame = pl.from_pandas(D.drop(columns="cls")).with_columns(
        cls=pl.col("class").cast(pl.Enum(LEVELS))
    )
    eager = pp.source(frame, unit="pid", max_records=2)
    assert _counts(eager.filter(pl.col("displ") > 3)) == want
    lazy = pp.source(frame.lazy(), unit="pid", max_records=2, record_id="pid")
    kept = lazy.filter(nw.col("displ") > 3).select("cls", "pid")
    assert sum(_counts(kept)) > 0
    with pytest.raises(pp.PlotninePrivateError, match=r"nw.col"):
        lazy[lazy.frame]
    with pytest.raises(pp.PlotninePrivateError, match=r"\['pid'\]"):
        lazy.select("cls")


def test_dropping_the_units_column_is_refused_naming_it():
    src = pp.source(D, unit="pid", max_records=2)
    with pytest.raises(pp.PlotninePrivateError, match=r"drops \['pid'\]"):
        src[["cls"]]
    with pytest.raises(pp.PlotninePrivateError, match=r"drops \['pid'\]"):
        src.filter(items=["cls"])
    with pytest.raises(pp.PlotninePrivateError, match="mask or an expr"):
        src.filter(MASK, like="c")
    with pytest.raises(pp.PlotninePrivateError, match="boolean mask"):
        src.filter("displ > 3")
    with pytest.raises(AttributeError, match="neither a column"):
        src.no_such_column  # noqa: B018


def test_a_whole_person_changed_moves_only_noisy_numbers():
    other = D.copy()
    mine = other["pid"] == 5
    other.loc[mine, ["displ", "cls"]] = [5.0, "suv"]

    def plot(d):
        src = pp.source(d, unit="pid", max_records=2)
        return ggplot(src[src.displ > 3], aes("cls")) + geom_bar(
            stat="count_dp", eps=1, seed=4
        )

    assert differences(snapshot(plot(D)), snapshot(plot(other))) == []
