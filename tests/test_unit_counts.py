"""Counts of units (``count="units"``) and bounds per cell
(``max_cells`` with ``max_records_per_cell``).

``count="units"``: each cell counts the distinct privacy units with a
kept record in it; one unit adds 1 to at most ``max_cells`` cells (else
``max_records``, and never more than a public domain has), which is the
sensitivity. CKM: a cell's key sum adds each unit's smallest key there.
The same numbers in memory, DuckDB and Polars.

``max_records_per_cell=m`` with ``max_cells=c``: a unit keeps at most
``m`` records in each of at most ``c`` cells of a count layer, the first
in its public keyed order; sensitivity ``min(k, c * m)``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from neighbours import differences, snapshot
from plotnine import (
    aes,
    facet_null,
    facet_wrap,
    geom_bar,
    geom_bin_2d,
    ggplot,
)
from test_unit_neighbours_counts import BASE, LEVELS, neighbour

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.door import layer_releases
from plotnine_private.exceptions import PlotninePrivateError

HUGE = 1e9  # noise rounds to zero: released counts are true counts
PTABLE = pp.create_cnt_ptable(D=3, V=2.0, js=1)


def _data(n: int = 1500, seed: int = 5) -> pd.DataFrame:
    """People with 1 to ~60 records (text ids), record ids, per-record
    CKM keys (not per unit: the smallest key of a unit in a cell is then
    not its only one)."""
    rng = np.random.default_rng(seed)
    pid = np.minimum(rng.zipf(1.7, n), 60) + 7 * rng.integers(0, 40, n)
    d = pd.DataFrame(
        {
            "pid": np.array([f"p{p}" for p in pid], dtype=object),
            "rid": rng.permutation(n).astype(np.int64),
            "c": rng.choice(["a", "b", "c", "d"], n),
            "x": rng.uniform(0, 10, n),
            "y": rng.uniform(0, 10, n),
        }
    )
    return pp.add_record_keys(d, rng_seed=2, row_id="rid")


DATA = _data()
UNIT = {"unit": "pid", "max_records": 4, "record_id": "rid"}


def _count(src, **kw):
    return ggplot(src, aes("c")) + geom_bar(
        stat="count_dp", levels=["a", "b", "c", "d"], seed=1, **kw
    )


def _counts(p) -> list:
    return pp.layer_data(p)["count"].tolist()


def _release(p):
    return layer_releases(build(p).layers[0])[0]


def test_units_counts_are_the_distinct_units_each_cell_keeps():
    src = pp.source(DATA, **UNIT)
    kept = pp.layer_data(_count(src, eps=HUGE))  # records kept: bounded
    units = _counts(_count(src, eps=HUGE, count="units"))
    # the bounded rows, counted by distinct person (independent of the
    # package's code path: the bounded rows are those a layer keeps)
    from plotnine_private.door import bound_rows

    rows = DATA[bound_rows("t", DATA, src.unit)]
    truth = rows.groupby("c")["pid"].nunique().reindex(list("abcd"))
    assert units == truth.tolist()
    assert units != kept["count"].tolist()  # records are not units
    assert sum(units) < sum(kept["count"])


def test_units_sensitivity_is_the_cells_one_unit_reaches():
    src = pp.source(DATA, **UNIT)
    # four records reach at most four cells, and the domain has four
    assert _release(_count(src, eps=1, count="units")).sensitivity == 8
    # a domain of two cells: one unit adds to at most two
    two = ggplot(src, aes("c")) + geom_bar(
        stat="count_dp", levels=["a", "b"], eps=1, seed=1, count="units"
    )
    assert _release(two).sensitivity == 4
    # max_cells=1: one cell per unit, whatever the domain
    one = pp.source(DATA, **UNIT, max_cells=1)
    assert _release(_count(one, eps=1, count="units")).sensitivity == 2
    # records: k per unit, as before
    assert _release(_count(src, eps=1)).sensitivity == 8
    big = pp.source(DATA, **{**UNIT, "max_records": 40})
    assert _release(_count(big, eps=1)).sensitivity == 80
    assert _release(_count(big, eps=1, count="units")).sensitivity == 8


def test_units_count_is_part_of_the_release_identity():
    src = pp.source(DATA, **UNIT)
    a = _release(_count(src, eps=1))
    b = _release(_count(src, eps=1, count="units"))
    assert a.identity != b.identity
    # records, said or not, is the query it always was
    assert _release(_count(src, eps=1, count="records")).identity == (
        a.identity
    )


def _plots(src):
    return {
        "count_dp": _count(src, eps=1, count="units"),
        "count_ckm": ggplot(src, aes("c", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTABLE, count="units"),
        "bin_dp": ggplot(src, aes("x"))
        + geom_bar(
            stat="bin_dp",
            breaks=np.linspace(0, 10, 6),
            eps=1,
            seed=1,
            count="units",
        ),
        "bin2d_ckm": ggplot(src, aes("x", "y", rkey="rkey"))
        + geom_bin_2d(
            stat="bin2d_ckm",
            limits=((0, 10), (0, 10)),
            bins=3,
            ptable=PTABLE,
            count="units",
        ),
        "hex_dp": ggplot(src, aes("x", "y"))
        + pp.geom_hex(
            stat="binhex_dp",
            limits=((0, 10), (0, 10)),
            bins=3,
            eps=1,
            seed=1,
            count="units",
        ),
    }


def test_units_counts_equal_in_memory_duckdb_and_polars():
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    con = duckdb.connect()
    got = _equal_in_memory_and(
        {
            "duckdb": pp.source(con.from_df(DATA), **UNIT),
            "duckdb kept": pp.source(
                con.from_df(DATA), **UNIT, keep_bounded=True
            ),
            "polars": pp.source(pl.from_pandas(DATA).lazy(), **UNIT),
        }
    )
    # the CKM key of a unit count is each unit's smallest key in a cell:
    # the per-record keys here make that differ from the records' sums
    records = ggplot(pp.source(DATA, **UNIT), aes("c", rkey="rkey"))
    records += geom_bar(stat="count_ckm", ptable=PTABLE)
    assert _counts(records) != got["count_ckm"]


def _equal_in_memory_and(engines: dict) -> dict:
    """Every plot's counts from each engine's source equal memory's;
    memory's counts by plot."""
    sources = {"memory": pp.source(DATA, **UNIT), **engines}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = {
            k: {n: _counts(p) for n, p in _plots(s).items()}
            for k, s in sources.items()
        }
    for k in sources:
        assert got[k] == got["memory"], k
    return got["memory"]


def test_one_whole_person_in_duckdb_changes_only_noisy_numbers():
    """The harness on a DuckDB source counting units: the person with
    40 rows removed."""
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()

    def plot(d):
        src = pp.source(con.from_df(d), unit="pid", max_records=3)
        return ggplot(src, aes("c")) + geom_bar(
            stat="count_dp", eps=1, seed=8, count="units"
        )

    base = BASE.assign(pid=BASE["pid"].astype(str))
    other = neighbour("removed").assign(pid=lambda d: d["pid"].astype(str))
    a, b = snapshot(plot(base)), snapshot(plot(other))
    assert "error" not in a, a.get("error")
    assert differences(a, b) == []


# -- one whole person changed ------------------------------------------
def _neighbour_plots(d):
    src = pp.source(d, unit="pid", max_records=3)
    cells = pp.source(
        d, unit="pid", max_records=6, max_cells=2, max_records_per_cell=2
    )
    return {
        "count units": ggplot(src, aes("c"))
        + geom_bar(stat="count_dp", eps=1, seed=8, count="units"),
        "bin2d units": ggplot(src, aes("x", "y"))
        + geom_bin_2d(
            stat="bin2d_dp",
            limits=((0, 10), (0, 10)),
            bins=4,
            drop=False,
            eps=1,
            seed=8,
            count="units",
        )
        + facet_null(shrink=False),
        "count per cell": ggplot(cells, aes("c"))
        + geom_bar(stat="count_dp", eps=1, seed=8),
        "undeclared units per cell": ggplot(cells, aes("u"))
        + geom_bar(stat="count_dp", eps=1, seed=8, count="units"),
    }


_AXES = {
    "count units": (("y",), False),
    "bin2d units": ((), False),
    "count per cell": (("y",), False),
    "undeclared units per cell": (("y",), True),
}
_BASE: dict = {}


@pytest.mark.parametrize("change", ["removed", "more rows", "moved"])
@pytest.mark.parametrize("name", list(_AXES))
def test_one_whole_person_changes_only_noisy_numbers(name, change):
    axes, hidden = _AXES[name]
    if name not in _BASE:
        _BASE[name] = snapshot(_neighbour_plots(BASE)[name], axes, hidden)
    a = _BASE[name]
    b = snapshot(_neighbour_plots(neighbour(change))[name], axes, hidden)
    assert "error" not in a, a.get("error")
    assert differences(a, b) == []


def test_one_person_moves_a_unit_count_by_at_most_its_cells():
    """The sensitivity stated is the true one: removing the person with
    40 rows moves the true unit counts (eps huge) by at most its cells."""

    def counts(d):
        src = pp.source(d, unit="pid", max_records=3)
        return np.array(
            _counts(
                ggplot(src, aes("c"))
                + geom_bar(stat="count_dp", eps=HUGE, seed=1, count="units")
            )
        )

    a, b = counts(BASE), counts(neighbour("removed"))
    assert 1 <= np.abs(a - b).sum() <= 3
    assert len(a) == len(LEVELS)


# -- bounds per cell ------------------------------------------------------
def test_per_cell_bound_keeps_at_most_m_records_of_a_unit_in_a_cell():
    src = pp.source(DATA, **{**UNIT, "max_records": 40})
    cells = pp.source(
        DATA,
        **{**UNIT, "max_records": 40},
        max_cells=4,
        max_records_per_cell=2,
    )
    from plotnine_private.door import bound_rows

    rows = DATA[bound_rows("t", DATA, src.unit)]
    # every unit keeps all its cells (four cells, max_cells=4): each
    # (unit, cell) keeps min(records there, 2)
    truth = rows.groupby(["pid", "c"]).size().clip(upper=2).groupby("c").sum()
    assert _counts(_count(cells, eps=HUGE)) == truth.tolist()
    rel = _release(_count(cells, eps=1))
    assert rel.sensitivity == 2 * 4 * 2  # replace: 2 * min(40, 4 * 2)


def test_per_cell_bound_keeps_the_first_records_in_the_keyed_order():
    """Which records: those with the smallest keyed hash of (unit,
    record), the order of max_records; never values. Ordering the
    records differently or changing their other columns' values keeps
    the same counts."""
    kw = {**UNIT, "max_records": 12, "max_cells": 4, "max_records_per_cell": 1}
    a = _counts(_count(pp.source(DATA, **kw), eps=HUGE))
    shuffled = DATA.sample(frac=1, random_state=3).reset_index(drop=True)
    b = _counts(_count(pp.source(shuffled, **kw), eps=HUGE))
    other = DATA.assign(x=DATA["x"] + 1)
    c = _counts(_count(pp.source(other, **kw), eps=HUGE))
    assert a == b == c


def test_max_records_defaults_to_cells_times_records_per_cell():
    u = pp.source(
        DATA, unit="pid", record_id="rid", max_cells=3, max_records_per_cell=2
    ).unit
    assert (u.max_records, u.cell_records) == (6, 6)
    assert "in at most 3 cells, at most 2 per cell" in u.describe()
    small = pp.source(DATA, **UNIT, max_cells=2, max_records_per_cell=5)
    assert small.unit.cell_records == 4  # max_records=4 is smaller


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"max_records_per_cell": 2}, "needs max_cells=c"),
        ({"max_cells": 2, "max_records_per_cell": 0}, "whole number >= 1"),
        ({"max_cells": 2, "max_records_per_cell": 1.5}, "whole number"),
        (
            {"max_records": "auto", "auto_eps": 0.1, "max_cells": 2},
            "give max_records=k",
        ),
    ],
)
def test_bad_per_cell_bounds_are_refused_at_the_source(kw, match):
    base = {"unit": "pid", "record_id": "rid", "max_records": 4}
    with pytest.raises(PlotninePrivateError, match=match):
        pp.source(DATA, **{**base, **kw})


def test_per_cell_bound_needs_a_unit():
    with pytest.raises(PlotninePrivateError, match="needs a privacy unit"):
        pp.source(DATA, max_records_per_cell=2)


def test_bad_count_choices_are_refused_before_plotting():
    # refused when the layer is made (plotnine 0.15) or added (0.16)
    with pytest.raises(PlotninePrivateError, match="count must be one of"):
        ggplot() + geom_bar(stat="count_dp", eps=1, count="people")
    plain = ggplot(DATA, aes("c")) + geom_bar(
        stat="count_dp", eps=1, seed=1, count="units"
    )
    with pytest.raises(PlotninePrivateError, match="declare none"):
        build(plain)
    weighted = ggplot(
        pp.source(DATA, **UNIT), aes("c", weight="x", rkey="rkey")
    ) + geom_bar(stat="count_ckm", ptable=PTABLE, count="units")
    with pytest.raises(PlotninePrivateError, match="remove aes\\(weight"):
        build(weighted)


def test_the_report_states_the_bound_per_cell():
    cells = pp.source(DATA, **UNIT, max_cells=2, max_records_per_cell=1)
    line = pp.privacy_report(_count(cells, eps=1)).unit_line
    words = "at most 4 records each in at most 2 cells of a layer"
    assert f"{words}, at most 1 in each" in line
    assert _release(_count(cells, eps=1)).sensitivity == 4  # 2 min(4, 2)


@pytest.mark.parametrize("record_id", ["rid", None])
def test_tables_bound_per_cell_as_the_plots_do(record_id):
    kw = {"unit": "pid", "max_records": 9, "record_id": record_id}
    cells = pp.source(
        DATA.drop(columns="rkey"), **kw, max_cells=3, max_records_per_cell=2
    )
    table = pp.dp_table(cells, "c", levels=list("abcd"), eps=HUGE, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bars = _counts(_count(cells, eps=HUGE))
    assert table["count"].tolist() == bars
    assert _counts(_count(pp.source(DATA, **kw), eps=HUGE)) != bars


#: bounds per cell, with and without record ids (content-named records)
_CELLS = {"unit": "pid", "max_records": 9, "max_cells": 2}


def _cell_plots(src):
    """The count families, a facet and an undeclared group, under
    bounds per cell (records and units)."""
    plots = {
        "count": _count(src, eps=1),
        "count facets": ggplot(src, aes("c", fill="f"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
        + facet_wrap("g"),
    }
    units = _plots(src)
    return {**plots, **{n: units[n] for n in ("count_ckm", "hex_dp")}}


def _cell_data():
    rng = np.random.default_rng(9)
    return DATA.assign(
        f=rng.choice(["u", "v"], len(DATA)),
        g=pd.Categorical(rng.choice(["s", "t"], len(DATA)), ["s", "t"]),
    )


@pytest.mark.parametrize("record_id", ["rid", None])
def test_cell_bounds_equal_in_memory_duckdb_and_polars(record_id):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    d = _cell_data()
    kw = {**_CELLS, "record_id": record_id, "max_records_per_cell": 2}
    con = duckdb.connect()
    sources = {
        "memory": pp.source(d, **kw),
        "duckdb": pp.source(con.from_df(d), **kw),
        "duckdb kept": pp.source(con.from_df(d), **kw, keep_bounded=True),
        "polars": pp.source(
            pl.from_pandas(d)
            .with_columns(pl.col("g").cast(pl.Enum(["s", "t"])))
            .lazy(),
            **kw,
        ),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = {
            k: {n: _counts(p) for n, p in _cell_plots(s).items()}
            for k, s in sources.items()
        }
        whole = pp.source(d, unit="pid", max_records=9, record_id=record_id)
        plain = {n: _counts(p) for n, p in _cell_plots(whole).items()}
    for k in sources:
        assert got[k] == got["memory"], k
    assert got["memory"]["count"] != plain["count"]


def check_units_and_cell_bounds_through_spark(request):
    """Spark (slow to query: a few plots): counts of units (DP and CKM)
    and bounds per cell (bars in facets, hexagons) equal memory's. Run by
    tests/test_engines.py, on the worker whose Spark is started."""
    spark = request.getfixturevalue("spark")
    d = _cell_data()
    kw = {**_CELLS, "record_id": "rid", "max_records_per_cell": 1}

    def plots(src):
        # records per cell in facets; units (CKM keys) per cell
        return [
            _counts(_cell_plots(src)["count facets"]),
            _counts(_plots(src)["count_ckm"]),
        ]

    frame = spark.createDataFrame(d.assign(g=d["g"].astype(str)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = pp.source(frame, **kw, levels={"g": ["s", "t"]})
        assert plots(src) == plots(pp.source(d, **kw))


@pytest.mark.parametrize("change", ["removed", "more rows", "moved"])
def test_cell_bounds_in_duckdb_one_whole_person(change):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()

    def plot(d):
        src = pp.source(
            con.from_df(d.assign(pid=d["pid"].astype(str))),
            unit="pid",
            max_records=6,
            max_cells=2,
            max_records_per_cell=2,
        )
        return ggplot(src, aes("u")) + geom_bar(stat="count_dp", eps=1, seed=8)

    a = snapshot(plot(BASE), ("y",), True)
    b = snapshot(plot(neighbour(change)), ("y",), True)
    assert "error" not in a, a.get("error")
    assert differences(a, b) == []


def test_engine_tables_refuse_cell_bounds_with_the_fix():
    duckdb = pytest.importorskip("duckdb")
    src = pp.source(duckdb.connect().from_df(DATA), **UNIT, max_cells=2)
    with pytest.raises(PlotninePrivateError, match="layers of a plot"):
        pp.dp_table(src, "c", eps=1, seed=1)
