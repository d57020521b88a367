"""Per-build state lives on the layer, never on the stat object: one stat
object in two layers or two plots gives each its own release."""

from __future__ import annotations

import pandas as pd
from plotnine import aes, geom_bar, geom_point, ggplot

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.door import layer_build, layer_releases

LEVELS = ["a", "b", "c"]


def _frame(values: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"k": pd.Categorical(values, categories=LEVELS)})


ONE = _frame(["a", "a", "b"] * 20)
TWO = _frame(["c"] * 50 + ["b"] * 3)


def _data_digests(releases) -> list:
    return [r.identity for r in releases]


def test_a_stat_shared_by_two_layers_reports_each_layer():
    # layers added together keep one stat object, and plotnine's copy
    # of the plot keeps it shared: the second layer's build must not
    # overwrite the first's releases (a report would count one twice)
    shared = pp.stat_count_dp(eps=1, seed=5)
    p = ggplot(ONE, aes("k")) + [
        geom_bar(stat=shared),
        geom_point(aes(x="k"), data=TWO, stat=shared),
    ]
    built = build(p)
    assert built.layers[0].stat is built.layers[1].stat
    first, second = (layer_releases(lyr) for lyr in built.layers)
    assert len(first) == len(second) == 1
    # two data sources: two queries, each counted in the report
    assert first[0].identity != second[0].identity
    assert first[0].source != second[0].source
    report = pp.privacy_report(p)
    assert report.total_eps == 2


def test_the_same_stat_in_two_plots_built_alternately():
    shared = pp.stat_count_dp(eps=1, seed=5)
    p1 = ggplot(ONE, aes("k")) + geom_bar(stat=shared)
    p2 = ggplot(TWO, aes("k")) + geom_bar(stat=shared)
    alone1 = build(
        ggplot(ONE, aes("k")) + geom_bar(stat="count_dp", eps=1, seed=5)
    )
    alone2 = build(
        ggplot(TWO, aes("k")) + geom_bar(stat="count_dp", eps=1, seed=5)
    )
    b1, b2, b1_again = build(p1), build(p2), build(p1)
    for one, alone in ((b1, alone1), (b2, alone2), (b1_again, alone1)):
        counts = one.layers[0].data["count"].tolist()
        assert counts == alone.layers[0].data["count"].tolist()
        assert _data_digests(layer_releases(one.layers[0])) == _data_digests(
            layer_releases(alone.layers[0])
        )
    # the user's stat object holds nothing of any build
    assert not hasattr(shared, "build")
    assert not {"releases", "door", "axis_cache", "layer_records"} & set(
        vars(shared)
    )


def test_the_layer_keeps_no_rows():
    built = build(ggplot(ONE, aes("k")) + geom_bar(stat="count_dp", eps=1))
    kept = layer_build(built.layers[0])
    assert kept is not None
    assert set(vars(kept)) == {
        "releases",
        "axis_cache",
        "fine",
        "hidden_cells",
        "marks",
        "unit",
        "ptable",  # public: the p-table of a CKM layer from a synopsis
    }
    assert not any(isinstance(v, pd.DataFrame) for v in vars(kept).values())
