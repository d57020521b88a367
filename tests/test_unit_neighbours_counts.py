"""The neighbour test at the level of the privacy unit: the same plot on
two data sets that differ in one whole person (many rows), declared with
``pp.source(data, unit="pid", max_records=3)``, with one seed; everything
but the noisy numbers (axes, breaks, legends, panels, group ids, warnings,
report rows, bundle metadata) must be equal (``tests/neighbours.py``).

The changed person is the one with the most rows (40): removed, given 60
more rows (far outliers included), or all of its rows moved to other
categories and places.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from neighbours import bundle_metadata, differences, mixed_ids, snapshot
from plotnine import (
    aes,
    facet_null,
    geom_bar,
    geom_bin_2d,
    geom_count,
    ggplot,
)

import plotnine_private as pp

LEVELS = ["a", "b", "c", "d", "e"]
K = 3
BIG = 7  # the person with 40 rows


def people(seed: int = 3) -> pd.DataFrame:
    """300 people with 1 to 12 rows each (ids of every kind:
    :func:`mixed_ids`), and person BIG with 40."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 13, 300)
    sizes[BIG] = 40
    pid = np.repeat(np.arange(300), sizes)
    n = len(pid)
    return pd.DataFrame(
        {
            "pid": mixed_ids(pid, BIG),
            "c": pd.Categorical(rng.choice(LEVELS, n), categories=LEVELS),
            "u": rng.choice(["p", "q", "r"], n),  # undeclared
            "x": rng.uniform(0, 10, n),
            "y": rng.uniform(0, 10, n),
        }
    )


BASE = people()


def neighbour(change: str) -> pd.DataFrame:
    d = BASE.copy()
    mine = d["pid"] == BIG
    if change == "removed":
        return d[~mine].reset_index(drop=True)
    if change == "more rows":
        extra = pd.DataFrame(
            {
                "pid": BIG,
                "c": pd.Categorical(["e"] * 60, categories=LEVELS),
                "u": ["zzz-new"] * 60,
                "x": np.r_[np.full(30, 1e4), np.full(30, -5.0)],
                "y": np.r_[np.full(30, -1e4), np.full(30, 9.9)],
            }
        )
        return pd.concat([d, extra], ignore_index=True)
    # moved: every row of the person elsewhere
    d.loc[mine, "c"] = "a"
    d.loc[mine, "u"] = "aaa-never-seen"
    d.loc[mine, ["x", "y"]] = [9.5, 0.5]
    return d


def src(d: pd.DataFrame):
    return pp.source(d, unit="pid", max_records=K)


def count_plot(d):
    return ggplot(src(d), aes("c")) + geom_bar(stat="count_dp", eps=1, seed=8)


def count_undeclared(d):
    return ggplot(src(d), aes("u")) + geom_bar(stat="count_dp", eps=1, seed=8)


def bin_plot(d):
    return ggplot(src(d), aes("x")) + geom_bar(
        stat="bin_dp", breaks=np.linspace(0, 10, 11), eps=1, seed=8
    )


def bin2d_plot(d):
    return (
        ggplot(src(d), aes("x", "y"))
        + geom_bin_2d(
            stat="bin2d_dp",
            limits=((0, 10), (0, 10)),
            bins=5,
            drop=False,  # a cell released as 0 stays: same cells
            eps=1,
            seed=8,
        )
        + facet_null(shrink=False)  # axes from the public limits
    )


def hex_plot(d):
    return (
        ggplot(src(d), aes("x", "y"))
        + pp.geom_hex(
            stat="binhex_dp",
            limits=((0, 10), (0, 10)),
            bins=4,
            drop=False,
            eps=1,
            seed=8,
        )
        + facet_null(shrink=False)
    )


def sum_plot(d):
    return ggplot(src(d), aes("x", "y")) + geom_count(
        stat="sum_dp",
        limits=((0, 10), (0, 10)),
        resolution=(2, 2),
        eps=1,
        seed=8,
    )


def noise_plot(d):
    """Bars with their noise error bars (``geom_noise``)."""
    return (
        ggplot(src(d), aes("c"))
        + geom_bar(stat="count_dp", eps=1, seed=8)
        + pp.geom_noise(stat="count_dp", eps=1, seed=8)
    )


CASES = [
    ("count", count_plot, ("y",), False),
    ("count with geom_noise", noise_plot, ("y",), False),
    ("count undeclared", count_undeclared, ("y",), True),
    ("bin", bin_plot, ("y",), False),
    ("bin2d", bin2d_plot, (), False),
    ("hex", hex_plot, (), False),
    ("sum", sum_plot, (), True),
]


#: snapshots of BASE by case (one seed, one data: the same every time)
_BASE_SNAPSHOTS: dict[str, dict] = {}


@pytest.mark.parametrize("change", ["removed", "more rows", "moved"])
@pytest.mark.parametrize(
    ("name", "make", "count_axes", "hidden"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_one_whole_unit_changes_only_noisy_numbers(
    name, make, count_axes, hidden, change
):
    # the unchanged side is built once for the three changes
    if name not in _BASE_SNAPSHOTS:
        _BASE_SNAPSHOTS[name] = snapshot(make(BASE), count_axes, hidden)
    a = _BASE_SNAPSHOTS[name]
    b = snapshot(make(neighbour(change)), count_axes, hidden)
    assert "error" not in a, a.get("error")
    assert differences(a, b) == []
    # the report names the unit on both
    assert any("pid, at most 3 records each" in n for n in a["notes"])


def test_bundle_metadata_of_one_whole_unit_changed():
    a = bundle_metadata(bin_plot(BASE))
    b = bundle_metadata(bin_plot(neighbour("more rows")))
    assert a == b
    assert a["output_0"]["properties"]["privacy_unit"] == (
        "pid, at most 3 records each; records without an id left out"
    )


@pytest.mark.parametrize("change", ["removed", "more rows", "moved"])
def test_tables_of_one_whole_unit_changed_differ_in_counts_only(change):
    """``dp_table`` and ``ckm_table`` of a bounded source: the same rows
    (levels, order, columns) on both sides; only the counts differ."""
    ptable = pp.create_cnt_ptable(D=3, V=2.0, js=1)

    def tables(d):
        keyed = pp.add_record_keys(d, rng_seed=4, unit="pid")
        return (
            pp.dp_table(src(d), "c", eps=1, seed=8),
            pp.ckm_table(
                pp.source(keyed, unit="pid", max_records=K),
                "c",
                rkey="rkey",
                ptable=ptable,
            ),
        )

    for a, b in zip(tables(BASE), tables(neighbour(change))):
        assert list(a.columns) == list(b.columns)
        fixed = [c for c in a.columns if c != "count"]
        pd.testing.assert_frame_equal(a[fixed], b[fixed])
