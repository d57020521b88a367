"""No raw layer on a private source (issue "People with many rows,
honestly", part 4).

A layer that is not private (plotnine's own stat, or ``stat="identity"``)
on data from ``pp.source(...)`` would draw the records themselves: the
build refuses it before any layer releases anything, naming the private
twin from the registry. Numbers already released, given as a layer's own
plain ``data=``, stay drawable; a plain frame (not a source) is plotnine
as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from plotnine import (
    aes,
    geom_bar,
    geom_hline,
    geom_point,
    geom_text,
    ggplot,
)

import plotnine_private as pp
from plotnine_private._compat import registered as plotnine_stat
from plotnine_private.declarations import registered, twin
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.mechanisms.release.engine import set_charge_hook

CATS = ["a", "b", "c"]


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        {
            "person": np.arange(n) % 10,
            "cat": pd.Categorical(rng.choice(CATS, n), categories=CATS),
            "num": rng.uniform(10, 45, n),
            "num2": rng.uniform(5, 35, n),
        }
    )


def _counterparts() -> dict[str, tuple[str, str]]:
    """plotnine counterpart -> (DP twin, CKM twin), from the registry."""
    out = {}
    for e in registered(aliases=False):
        decl = e.declaration
        dp, ckm = twin(decl.family, "dp"), twin(decl.family, "ckm")
        names = tuple(t.name for t in (dp, ckm) if t is not None)
        out.setdefault(decl.counterpart, names)
    return out


SOURCES = {
    "pandas with a unit": lambda: pp.source(
        _frame(), unit="person", max_records=2
    ),
    "pandas, one row a unit": lambda: pp.source(_frame()),
    "polars lazy (engine)": lambda: pp.source(pl.from_pandas(_frame()).lazy()),
}


def test_the_registry_has_the_counterparts_tested_here():
    # a new family's counterpart is tested below without a new line;
    # this pins that the loop reaches the plotnine stats the issue names
    cps = _counterparts()
    for name in ("count", "bin", "boxplot", "density", "ydensity"):
        assert name in cps
    # compare's own unperturbed PCA panel is no plotnine stat
    assert plotnine_stat("stat_pca_score_plain") is None


@pytest.mark.parametrize("kind", list(SOURCES))
@pytest.mark.parametrize(
    "counterpart", sorted(c for c in _counterparts() if c != "pca_score_plain")
)
def test_every_plain_counterpart_is_refused_naming_its_twins(
    counterpart, kind
):
    cls = plotnine_stat(f"stat_{counterpart}")
    assert cls is not None, counterpart
    twins = _counterparts()[counterpart]
    plot = ggplot(SOURCES[kind](), aes("num", "num2")) + cls()
    with pytest.raises(PlotninePrivateError) as err:
        pp.layer_data(plot)
    msg = str(err.value)
    assert f"stat={counterpart!r}" in msg
    for name in twins:
        assert f"stat={name!r}" in msg
    assert "Nothing was released or drawn" in msg


@pytest.mark.parametrize(
    "layer, words",
    [
        (geom_bar(), "stat='count_dp'"),
        (geom_point(aes(y="num")), "stat='identity' would draw the records"),
    ],
)
def test_the_issue_geoms_are_refused(layer, words):
    src = pp.source(_frame(), unit="person", max_records=2)
    with pytest.raises(PlotninePrivateError, match=words):
        pp.layer_data(ggplot(src, aes("cat")) + layer)


def test_a_plain_layer_after_a_private_one_releases_nothing():
    # refused when the build lays out panels: the private layer 0 has
    # not been released (nor charged) when layer 1 is refused
    src = pp.source(_frame(), unit="person", max_records=2)
    charged: list = []
    previous = set_charge_hook(charged.extend)
    try:
        plot = (
            ggplot(src, aes("cat"))
            + geom_bar(stat="count_dp", eps=1, seed=1)
            + geom_point(aes(y="num"))
        )
        with pytest.raises(PlotninePrivateError, match="layer 1"):
            pp.layer_data(plot)
    finally:
        set_charge_hook(previous)
    assert charged == []


def test_a_layer_whose_own_data_is_a_source_is_refused():
    src = pp.source(_frame(), unit="person", max_records=2)
    plot = ggplot(_frame(), aes("cat")) + geom_bar(data=src)
    with pytest.raises(PlotninePrivateError, match="stat='count_dp'"):
        pp.layer_data(plot)


def test_a_layer_data_function_of_a_source_is_refused():
    src = pp.source(_frame(), unit="person", max_records=2)
    plot = ggplot(src, aes("cat")) + geom_bar(data=lambda d: d[d.num > 20])
    with pytest.raises(PlotninePrivateError, match="stat='count_dp'"):
        pp.layer_data(plot)


def test_released_numbers_with_stat_identity_stay_allowed():
    # a geom_text of a released table (its own plain data=) and a public
    # reference line on a plot of a private source
    src = pp.source(_frame(), unit="person", max_records=2)
    table = pp.dp_table(src, "cat", eps=1, seed=3)
    plot = (
        ggplot(src, aes("cat"))
        + geom_bar(stat="count_dp", eps=1, seed=3)
        + geom_text(
            aes("cat", "count", label="count"),
            data=table,
            inherit_aes=False,
        )
        + geom_hline(yintercept=2)
    )
    built = pp._compat.build(plot)
    bars, labels = built.layers[0].data, built.layers[1].data
    # the labels are the released table's numbers, drawn as they are
    assert labels["label"].tolist() == table["count"].tolist()
    assert sorted(bars["count"]) == sorted(table["count"])
    assert built.layers[2].data["yintercept"].tolist() == [2]


def test_a_plain_frame_is_plotnine_as_before():
    # not a source: plotnine's own stats count the rows, as without the
    # package (no refusal, no release)
    frame = _frame()
    charged: list = []
    previous = set_charge_hook(charged.extend)
    try:
        out = pp.layer_data(ggplot(frame, aes("cat")) + geom_bar())
        pts = pp.layer_data(ggplot(frame, aes("num", "num2")) + geom_point())
    finally:
        set_charge_hook(previous)
    counts = frame["cat"].value_counts().reindex(CATS)
    assert out["count"].tolist() == counts.tolist()
    assert out["x"].tolist() == [1, 2, 3]
    np.testing.assert_array_equal(pts["x"], frame["num"])
    np.testing.assert_array_equal(pts["y"], frame["num2"])
    assert charged == []


def test_compare_keeps_its_unperturbed_panel_on_a_source():
    # compare's unperturbed panel is plotnine's stat on the raw rows by
    # design (never released); the refusal leaves it alone
    src = pp.source(_frame(), unit="person", max_records=2)
    plot = ggplot(src, aes("cat")) + geom_bar(stat="count_dp", eps=1, seed=4)
    comp = pp.compare(plot, ckm=False)
    plain = pp.layer_data(comp.plots["unperturbed"])
    assert plain["count"].sum() > 0
