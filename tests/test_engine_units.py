"""A declared privacy unit in DuckDB, Polars and Spark: each unit keeps
its ``max_records`` records with the smallest public keyed hash of (unit,
record) inside the engine, before the group-by, and the released numbers
equal those of the same figure on a pandas or polars frame in memory;
what an engine cannot bound is refused before any query runs."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from engine_tables import duckdb_table
from plotnine import (
    aes,
    facet_wrap,
    geom_bar,
    geom_bin_2d,
    geom_boxplot,
    geom_count,
    geom_density,
    geom_histogram,
    geom_step,
    ggplot,
)

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.door import layer_build, layer_releases
from plotnine_private.engines import Source, source
from plotnine_private.engines.bounding import order_key_stages
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.mechanisms.release.bounding import (
    bounded_mask,
    order_keys,
)
from plotnine_private.units import Unit

duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")
nw = pytest.importorskip("narwhals")

N = 3000
K = 2
COLOURS = ["red", "green", "blue", "none"]
FACETS = ["u", "v"]
PTABLE = pp.create_cnt_ptable(D=3, V=2.0, js=1)
#: eps so large that the noise is zero: released counts are true counts
HUGE = 1e9


def _records(n: int = N, seed: int = 20261201) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    # units of very different sizes (1 to ~40 records), record ids that
    # are not row positions
    person = np.minimum(rng.zipf(1.6, n), 400) + 10 * rng.integers(0, 60, n)
    # negative ids among the others: units like any other, everywhere
    person = np.where(person % 3 == 0, -person, person)
    d = pd.DataFrame(
        {
            "person": person.astype(np.int64),
            "rid": (rng.permutation(n) * 3 + 7).astype(np.int64),
            "c": rng.choice(COLOURS[:3], n),
            "f": rng.choice(FACETS, n),
            "x": rng.normal(5, 2, n),
            "y": rng.gamma(2, 2, n),
            "xr": np.round(rng.uniform(0, 4, n) * 2) / 2,
            "yr": np.round(rng.uniform(0, 3, n) * 2) / 2,
        }
    )
    # missing positions are dropped after bounding, in memory as in the
    # engines (a filter must not move below the window)
    d.loc[:40, "x"] = np.nan
    return pp.add_record_keys(d, rng_seed=3, row_id="rid")


RECORDS = _records()
UNIT = {"unit": "person", "max_records": K, "record_id": "rid"}


def _declared(d: pd.DataFrame) -> pd.DataFrame:
    out = d.copy()
    out["c"] = pd.Categorical(out["c"], categories=COLOURS)
    out["f"] = pd.Categorical(out["f"], categories=FACETS)
    return out


def _polars(d: pd.DataFrame):
    return pl.from_pandas(d).with_columns(
        pl.col("c").cast(pl.Enum(COLOURS)), pl.col("f").cast(pl.Enum(FACETS))
    )


def _duckdb(d: pd.DataFrame, **unit):
    return duckdb_table(d, {"c": COLOURS, "f": FACETS}, **unit)


def _source(kind: str, request, d: pd.DataFrame = RECORDS, **unit):
    unit = unit or UNIT
    if kind == "pandas":
        return pp.source(_declared(d), **unit)
    if kind == "polars":
        return pp.source(_polars(d), **unit)
    if kind == "polars_lazy":
        return source(_polars(d).lazy(), **unit)
    if kind == "duckdb":
        return _duckdb(d, **unit)
    spark = request.getfixturevalue("spark")
    return source(
        spark.createDataFrame(d),
        levels={"c": COLOURS, "f": FACETS},
        **unit,
    )


def _plots(eps: float):
    return {
        "count_dp": lambda d: (
            ggplot(d, aes("c"))
            + geom_bar(stat="count_dp", eps=eps, seed=5)
            + facet_wrap("f")
        ),
        "bin_dp": lambda d: (
            ggplot(d, aes("x", fill="c"))
            + geom_histogram(
                stat="bin_dp", eps=eps, seed=7, limits=(0, 10), bins=12
            )
        ),
        "bin2d_dp": lambda d: (
            ggplot(d, aes("x", "y"))
            + geom_bin_2d(
                stat="bin2d_dp",
                eps=eps,
                seed=8,
                limits=((0, 10), (0, 12)),
                bins=(10, 8),
            )
        ),
        "binhex_dp": lambda d: (
            ggplot(d, aes("x", "y"))
            + pp.geom_hex(
                stat="binhex_dp",
                eps=eps,
                seed=9,
                limits=((0, 10), (0, 12)),
                bins=9,
            )
        ),
        "sum_dp": lambda d: (
            ggplot(d, aes("xr", "yr"))
            + geom_count(
                stat="sum_dp",
                eps=eps,
                seed=10,
                limits=((0, 4), (0, 3)),
                resolution=(0.5, 0.5),
            )
        ),
        "density_dp": lambda d: (
            ggplot(d, aes("x", colour="c"))
            + geom_density(
                stat="density_dp", eps=eps, seed=12, limits=(1, 9), bins=64
            )
        ),
        "boxplot_dp": lambda d: (
            ggplot(d, aes("c", "y"))
            + geom_boxplot(stat="boxplot_dp", eps=eps, seed=13, limits=(0, 12))
        ),
        "count_ckm": lambda d: (
            ggplot(d, aes("c", rkey="rkey"))
            + geom_bar(stat="count_ckm", ptable=PTABLE)
        ),
        "ecdf_ckm": lambda d: (
            ggplot(d, aes("x", rkey="rkey"))
            + geom_step(
                stat="ecdf_ckm", ptable=PTABLE, limits=(0, 10), outside="drop"
            )
        ),
    }


PLOTS = _plots(1.0)
TRUE = _plots(HUGE)


def _built(plot):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(plot).layers[0]


def _released(plot) -> pd.DataFrame:
    return _built(plot).data.reset_index(drop=True)


#: the layer of each plot on the default records and unit, by (eps
#: "true" or "released", plot, source kind): built once for every check
#: that reads it (same data, seed and key: the same release)
_LAYERS: dict[tuple[str, str, str], object] = {}


def _layer(which: str, name: str, kind: str, request=None):
    if (which, name, kind) not in _LAYERS:
        plots = TRUE if which == "true" else PLOTS
        _LAYERS[which, name, kind] = _built(
            plots[name](_source(kind, request))
        )
    return _LAYERS[which, name, kind]


def _default(which: str, name: str, kind: str, request=None) -> pd.DataFrame:
    """The released layer data of a plot on the default source."""
    return _layer(which, name, kind, request).data.reset_index(drop=True)


def _kept(d: pd.DataFrame, k: int = K, salt=None) -> pd.DataFrame:
    """The records each unit keeps, computed here from the definition
    (numpy), independently of any engine."""
    return d[
        bounded_mask(d["person"].to_numpy(), d["rid"].to_numpy(), k, salt)
    ]


# --------------------------------------------------------------------------
# the hash and the window
# --------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["duckdb", "polars_lazy"])
def test_engine_order_keys_equal_numpy(kind, request):
    check_order_keys_equal_numpy(kind, request)


def check_order_keys_equal_numpy(kind, request):
    """The staged keyed hash in each engine is the numpy one, salted or
    not, up to identifiers near 2**62."""
    ids = pd.DataFrame(
        {
            "person": np.array([0, 1, 5, 2**40 + 3, 2**62 - 1], np.int64),
            "rid": np.array([2**62 - 1, 0, 99, 12345, 7], np.int64),
        }
    )
    # one engine frame for both salts (a Spark frame costs a conversion)
    if kind == "duckdb":
        ids_frame = nw.from_native(duckdb.from_df(ids))
    elif kind == "polars_lazy":
        ids_frame = nw.from_native(pl.from_pandas(ids).lazy())
    else:
        ids_frame = nw.from_native(
            request.getfixturevalue("spark").createDataFrame(ids)
        )
    for salt in (None, "wave 2"):
        frame = ids_frame
        for stage in order_key_stages(
            nw.col("person"), nw.col("rid"), salt, "k"
        ):
            frame = frame.with_columns(**stage)
        got = frame.select("person", "k").collect().to_pandas()
        got = got.sort_values("person")["k"].to_numpy()
        ids_sorted = ids.sort_values("person")
        want = order_keys(
            ids_sorted["person"].to_numpy(), ids_sorted["rid"].to_numpy(), salt
        )
        assert got.tolist() == want.tolist()


# --------------------------------------------------------------------------
# identical numbers
# --------------------------------------------------------------------------
def test_engine_counts_are_the_bounded_true_counts():
    """At a huge eps the released counts through DuckDB are the counts of
    the records each unit keeps (computed here from the definition), and
    not the counts of all records."""
    out = _default("true", "count_dp", "duckdb")
    kept = _kept(RECORDS).groupby(["f", "c"]).size()
    every = RECORDS.groupby(["f", "c"]).size()
    assert len(kept) < len(RECORDS)
    got = {
        (FACETS[int(p) - 1], COLOURS[int(x) - 1]): int(n)
        for p, x, n in out[["PANEL", "x", "count"]].itertuples(index=False)
    }
    assert {k: v for k, v in got.items() if v} == kept.to_dict()
    assert kept.to_dict() != every.to_dict()


KINDS = ["polars", "duckdb", "polars_lazy"]
#: colours mapped from a declared column (not released numbers)
SCALED = ["fill", "colour", "color"]


# CKM has no eps: its one case is the released one
SAME = [("true", n) for n in sorted(TRUE) if n.endswith("_dp")] + [
    ("released", n) for n in sorted(PLOTS)
]


@pytest.mark.parametrize(("which", "name"), SAME)
def test_same_numbers_in_memory_and_in_engines(which, name):
    """The same figure with unit= and record_id= gives identical numbers
    through a pandas frame, a polars frame, DuckDB and a Polars LazyFrame:
    the bounded true counts (huge eps) and the released values at an
    ordinary eps."""
    expected = _default(which, name, "pandas")
    assert len(expected) > 0
    for kind in KINDS:
        got = _default(which, name, kind)
        want = expected
        if kind == "polars":
            # a polars Enum reaches plotnine as an ordered Categorical
            # (an ordinal colour scale): the numbers are what must agree
            want, got = (
                f.drop(columns=SCALED, errors="ignore") for f in (want, got)
            )
        pd.testing.assert_frame_equal(got, want, obj=kind)


# Spark's checks run from tests/test_engines.py, on the worker whose
# Spark session is already started (its start-up is the cost): the order
# keys and one family, the hexagon lattice, the most arithmetic of them;
# the families are compared in DuckDB and Polars above
def check_same_numbers_through_spark(name, request):
    """Spark bounds with its own window: the same numbers (one plot per
    kind of cell expression: raw categories, hexagons, a grid)."""
    spark = _source("spark", request)  # one Spark frame for both plots
    for which, plots in (("true", TRUE), ("released", PLOTS)):
        expected = _default(which, name, "pandas")
        got = _released(plots[name](spark))
        pd.testing.assert_frame_equal(got, expected)


def test_salt_changes_the_records_kept_in_every_engine():
    """``salt`` picks other records, the same ones in memory and in the
    engine, and the counts follow the records kept."""
    salted = {**UNIT, "salt": "s1"}
    make = TRUE["count_dp"]
    plain = _default("true", "count_dp", "pandas")
    a = _released(make(_source("pandas", None, **salted)))
    b = _released(make(_source("duckdb", None, **salted)))
    pd.testing.assert_frame_equal(a, b)
    assert not a["count"].equals(plain["count"])
    kept = _kept(RECORDS, salt="s1").groupby("c").size()[COLOURS[:3]]
    got = a.groupby("x")["count"].sum()
    assert got.tolist()[:3] == kept.tolist()


def test_engine_layer_door_carries_the_unit():
    """The engine path's door carries the source's unit to the stat, and
    the release's public identity equals the in-memory one."""
    lyr = _layer("released", "count_dp", "duckdb")
    assert layer_build(lyr).unit == _source("duckdb", None).unit
    assert layer_build(lyr).unit.max_records == K
    mem = _layer("released", "count_dp", "pandas")
    assert [r.identity for r in layer_releases(lyr)] == [
        r.identity for r in layer_releases(mem)
    ]


def test_tables_bound_in_the_engine():
    """``dp_table`` of an engine table counts the records units keep."""
    for kind in ("duckdb", "polars_lazy"):
        out = pp.dp_table(
            _source(kind, None), "c", groups="f", eps=HUGE, seed=3
        )
        got = {
            (str(f), str(c)): int(n)
            for f, c, n in out[["f", "c", "count"]].itertuples(index=False)
            if n
        }
        kept = _kept(RECORDS).groupby(["f", "c"]).size()
        assert got == {(f, c): int(n) for (f, c), n in kept.items()}


def test_neighbouring_units_move_counts_by_at_most_the_bound():
    """A neighbour: one more unit, with 50 records. Through the engine
    the bounded counts differ by at most max_records in total (they
    would by 50 if the unit were not bounded)."""
    extra = RECORDS.iloc[:50].assign(
        person=10**6, rid=np.arange(50) * 3 + 10**7, c="blue"
    )
    other = pd.concat([RECORDS, extra], ignore_index=True)
    assert (RECORDS["person"] == 10**6).sum() == 0

    def counts(d, unit):
        out = _released(TRUE["count_dp"](_source("duckdb", None, d, **unit)))
        return out["count"].to_numpy()

    bounded = _default("true", "count_dp", "duckdb")["count"].to_numpy()
    moved = np.abs(bounded - counts(other, UNIT)).sum()
    assert moved == K
    loose = {**UNIT, "max_records": 50}
    assert np.abs(counts(RECORDS, loose) - counts(other, loose)).sum() == 50


# --------------------------------------------------------------------------
# what an engine refuses, before any query
# --------------------------------------------------------------------------
def _refused(kind: str, d: pd.DataFrame, match: str, **unit) -> None:
    """Refused at the declaration, and by a layer and a table (a source
    whose unit was set without the declaration's check)."""
    declared = {k: v for k, v in unit.items() if k != "column"}
    with pytest.raises(PlotninePrivateError, match=match):
        _source(kind, None, d, unit=unit["column"], **declared)
    good = _source(kind, None, d)
    src = Source(
        good.frame, good.native, good.engine, good.levels, Unit(**unit)
    )
    with pytest.raises(PlotninePrivateError, match=match):
        _released(PLOTS["count_dp"](src))
    with pytest.raises(PlotninePrivateError, match=match):
        pp.dp_table(src, "c", eps=1, seed=1)


def _unit(**kw):
    return {"column": "person", "max_records": K, "record_id": "rid", **kw}


def test_engine_tables_refuse_max_cells_and_layers_bound_it():
    """A layer bounds a unit's cells in DuckDB (the numbers of memory:
    ``tests/test_unit_counts.py``); a private table of an engine's table
    refuses it, naming the fix."""
    src = _source("duckdb", None, RECORDS, **UNIT, max_cells=1)
    kept = _released(PLOTS["count_dp"](src))
    assert len(kept) and kept["count"].sum() > 0
    with pytest.raises(PlotninePrivateError, match="max_cells=1 is not"):
        pp.dp_table(src, "c", eps=1, seed=1)


def check_ids_by_value(bad: str, kinds, request=None) -> None:
    """A negative id is a unit like any other and a record without a unit
    or a record id is left out, in each of ``kinds`` as in memory: the
    same bounded true counts, and nothing refused because of one value."""
    d = RECORDS.copy()
    if bad == "negative":
        d.loc[d["person"] == d.loc[5, "person"], "person"] = -3
    elif bad == "missing unit":
        d["person"] = d["person"].astype("Int64")
        d.loc[[5, 9], "person"] = pd.NA
    else:
        d["rid"] = d["rid"].astype("Int64")
        d.loc[[5, 9], "rid"] = pd.NA
    want = _released(TRUE["count_dp"](_source("pandas", None, d)))
    table = pp.dp_table(_source("pandas", None, d), "c", eps=HUGE, seed=1)
    clean = RECORDS.drop(index=[5, 9]) if bad != "negative" else d
    # the left-out records are as if they were not there
    base = _released(TRUE["count_dp"](_source("pandas", None, clean)))
    if bad != "negative":
        assert want["count"].tolist() == base["count"].tolist()
    for kind in kinds:
        got = _released(TRUE["count_dp"](_source(kind, request, d)))
        assert got["count"].tolist() == want["count"].tolist()
        got_table = pp.dp_table(
            _source(kind, request, d), "c", eps=HUGE, seed=1
        )
        assert got_table["count"].tolist() == table["count"].tolist()


@pytest.mark.parametrize("bad", ["negative", "missing unit", "missing rid"])
def test_engines_name_ids_by_value_as_memory_does(bad):
    """In DuckDB and Polars (Spark reads negative ids with the floor
    division of the others: tests/test_engines.py runs that case where
    Spark is started; its NULL filter is narwhals' own, tested here)."""
    check_ids_by_value(bad, ["duckdb", "polars_lazy"])


@pytest.mark.parametrize("name", ["count_dp", "binhex_dp", "count_ckm"])
def test_neighbouring_units_differ_only_in_noisy_numbers(name):
    """The differential harness on bounded DuckDB sources: one more unit
    (50 records), one seed: everything but the released numbers (axes,
    legends, panels, warnings, report rows) is equal."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from neighbours import differences, snapshot

    extra = RECORDS.iloc[:50].assign(
        person=10**6, rid=np.arange(50) * 3 + 10**7
    )
    other = pd.concat([RECORDS, extra], ignore_index=True)
    make = PLOTS[name]
    axes = ("y",) if name.startswith("count") else ()
    hidden = name != "count_dp"  # hexagons and CKM hide cells by value
    a = snapshot(make(_duckdb(RECORDS, **UNIT)), axes, hidden)
    b = snapshot(make(_duckdb(other, **UNIT)), axes, hidden)
    assert differences(a, b) == []
    assert a["report"] and a["layer 0"]
