"""Bins under the plot's scale limits (``xlim``/``ylim``), as plotnine
draws them: records outside the limits are censored before the stat,
also where an edge bin reaches past a limit, and the 2-D grid's tiles
are drawn at the grid's own edges (the first of the edges that cut the
records lies one epsilon below a low limit the grid starts on, and the
scale censored those tiles: xmin NaN)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_tables import duckdb_table
from neighbours import differences, snapshot
from plotnine import aes, geom_bin_2d, geom_histogram, ggplot, xlim, ylim

import plotnine_private as pp
from plotnine_private import layer_data

DP = {"eps": 1e9, "seed": 3}
PTAB = pp.create_cnt_ptable(D=1, V=0.0001)


def _edge4() -> pd.DataFrame:
    d = pd.DataFrame({"x": [49.0, 50.0, 51.0, 60.0]})
    return pp.add_record_keys(d, name="rk", rng_seed=1)


@pytest.mark.parametrize("mech", ["dp", "ckm"])
def test_a_record_below_xlim_is_not_counted_in_the_edge_bin(mech):
    # binwidth=2 over xlim(50, 90): plotnine's first bin is [49, 51];
    # the record at 49 is censored by the scale, so it counts 2, not 3
    kw = DP if mech == "dp" else {"ptable": PTAB}
    m = aes("x") if mech == "dp" else aes("x", rkey="rk")
    p = ggplot(_edge4(), m) + geom_histogram(
        stat=f"bin_{mech}", binwidth=2, **kw
    )
    out = layer_data(p + xlim(50, 90))
    assert out["count"].tolist()[:3] == [2, 0, 0]
    assert out["count"].sum() == 3
    # limits= of the stat keep them (plotnine's stat_bin does too)
    kept = layer_data(
        ggplot(_edge4(), m)
        + geom_histogram(stat=f"bin_{mech}", binwidth=2, limits=(50, 90), **kw)
    )
    assert kept["count"].tolist()[0] == 3


def _square(n: int = 300) -> pd.DataFrame:
    rs = np.random.RandomState(4)
    return pd.DataFrame({"x": rs.uniform(3, 11, n), "y": rs.uniform(3, 11, n)})


def test_bin2d_tiles_under_xlim_ylim_start_on_the_limits():
    d = _square()
    p = (
        ggplot(d, aes("x", "y"))
        + geom_bin_2d(stat="bin2d_dp", bins=30, **DP)
        + xlim(4, 10)
        + ylim(4, 10)
    )
    out = layer_data(p)
    # (the top edge, 10.000000000000002 by plotnine's arange, is
    # censored as in plotnine: xmax/ymax NaN there, as plotnine draws)
    assert not out[["xmin", "ymin"]].isna().any().any()
    assert out["xmin"].min() == 4.0 and out["ymin"].min() == 4.0
    inside = d["x"].between(4, 10) & d["y"].between(4, 10)
    assert out["count"].sum() == inside.sum()
    # the tiles are drawn at the grid's edges: multiples of the width
    width = 6 / 30
    assert np.allclose(out["xmin"] / width, np.rint(out["xmin"] / width))


def test_an_engine_censors_at_the_scale_limits_as_memory_does():
    d = pd.DataFrame(
        {"x": [49.0, 50.0, 50.0, 51.0, 60.0, 90.0, 90.5], "y": 5.0}
    )
    d["y"] = [4.0, 4.0, 3.9, 5.0, 9.0, 10.0, 10.0]

    def plots(data):
        one = ggplot(data, aes("x")) + geom_histogram(
            stat="bin_dp", binwidth=2, **DP
        )
        two = ggplot(data, aes("x", "y")) + geom_bin_2d(
            stat="bin2d_dp", binwidth=(2, 0.5), **DP
        )
        return one + xlim(50, 90), two + xlim(50, 90) + ylim(4, 10)

    for mem, eng in zip(plots(d), plots(duckdb_table(d, {}))):
        a, b = layer_data(mem), layer_data(eng)
        assert a["count"].tolist() == b["count"].tolist()
    hist = layer_data(plots(d)[0])
    # 49 and 90.5 censored; 90 is on the limit and counted
    assert hist["count"].sum() == 5


def _neighbours():
    base = _square(120)
    base["pid"] = np.arange(len(base)) // 3  # 40 people, 3 rows each
    one = base.copy()
    one.loc[0, ["x", "y"]] = [3.5, 10.8]  # a record moved outside
    person = base.copy()
    person.loc[person["pid"] == 1, ["x", "y"]] = [4.0, 3.999]
    return base, one, person


@pytest.mark.parametrize("family", ["bin", "bin2d"])
def test_neighbours_under_scale_limits_differ_in_noisy_numbers_only(family):
    # a record, then a whole person, moved across the limits (onto the
    # low limit and just below it): axes, tiles, breaks, legends and
    # warnings stay the same
    def make(data, unit=False):
        src = pp.source(data, unit="pid", max_records=3) if unit else data
        if family == "bin":
            p = ggplot(src, aes("x")) + geom_histogram(
                stat="bin_dp", binwidth=0.5, eps=1, seed=5
            )
            return p + xlim(4, 10)
        p = ggplot(src, aes("x", "y")) + geom_bin_2d(
            stat="bin2d_dp", bins=12, eps=1, seed=5
        )
        return p + xlim(4, 10) + ylim(4, 10)

    base, one, person = _neighbours()
    assert differences(snapshot(make(base)), snapshot(make(one))) == []
    assert (
        differences(
            snapshot(make(base, unit=True)), snapshot(make(person, unit=True))
        )
        == []
    )
