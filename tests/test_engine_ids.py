"""Identifiers of any kind in DuckDB, Polars and Spark: text, non-whole
and negative numbers, missing ones, and records without a ``record_id``
(named by their content) are named as memory names them, so an engine
keeps the very records memory keeps and releases the same numbers; one
whole person changed moves nothing but noisy numbers; and a source with
``keep_bounded=True`` bounds once for many figures.

Spark's checks run from tests/test_engines.py, where its session is
already started (:func:`check_ids_through_spark`)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from engine_tables import duckdb_table
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.door import bound_rows
from plotnine_private.engines import Source, source
from plotnine_private.engines import bounding as engine_bounding
from plotnine_private.engines.bounding import check_unit_columns
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.units import Unit

duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from neighbours import differences, snapshot  # noqa: E402

N = 900
K = 2
COLOURS = ["red", "green", "blue"]
PTABLE = pp.create_cnt_ptable(D=3, V=2.0, js=1)
HUGE = 1e9


def _records(seed: int = 20260611) -> pd.DataFrame:
    """People with 1 to ~30 records each; ``tag`` tells the rows apart
    (it is content like any other column)."""
    rng = np.random.default_rng(seed)
    pid = np.minimum(rng.zipf(1.5, N), 60) + 7 * rng.integers(0, 40, N)
    d = pd.DataFrame(
        {
            "pid": pid,
            "rid": rng.permutation(N) * 5 + 11,
            "tag": np.arange(N),
            "c": rng.choice(COLOURS, N, p=[0.5, 0.3, 0.2]),
            "x": rng.normal(0, 1, N),
        }
    )
    return pp.add_record_keys(d, rng_seed=5)


BASE = _records()


def _ids(kind: str, d: pd.DataFrame = BASE) -> pd.DataFrame:
    """``d`` with a person column ``person`` of the kind and (but for
    ``content``) a record identifier ``rec``."""
    pid = d["pid"].to_numpy()
    out = d.drop(columns=["pid", "rid"])
    rec = [f"r{v}" for v in d["rid"]]
    if kind == "text":
        person = pd.Series([f"person {p}" for p in pid], dtype=object)
        person[pid == pid.max()] = None  # left out, as in memory
    elif kind == "mixed":
        # whole, negative, non-whole and missing numbers in one column
        person = pd.Series(pid.astype(float))
        person[pid % 3 == 1] = -pid[pid % 3 == 1]
        person[pid % 3 == 2] = pid[pid % 3 == 2] + 0.25
        person[pid == pid.max()] = np.nan
        rec = d["rid"].to_numpy() * 0.5  # whole and non-whole ids
    else:
        person = pd.Series([f"p{p}" for p in pid], dtype=object)
    out.insert(0, "person", person.to_numpy())
    if kind != "content":
        out.insert(1, "rec", rec)
    return out


def _unit(kind: str) -> dict:
    unit = {"unit": "person", "max_records": K}
    return unit if kind == "content" else {**unit, "record_id": "rec"}


def _frame(kind: str, engine: str, d: pd.DataFrame, request=None, **extra):
    unit = {**_unit(kind), **extra}
    if engine == "pandas":
        declared = d.assign(c=pd.Categorical(d["c"], categories=COLOURS))
        return pp.source(declared, **unit)
    if engine == "duckdb":
        return duckdb_table(d, {"c": COLOURS}, **unit)
    if engine == "polars":
        frame = pl.from_pandas(d).with_columns(
            pl.col("c").cast(pl.Enum(COLOURS))
        )
        return source(frame.lazy(), **unit)
    spark = request.getfixturevalue("spark")
    return source(spark.createDataFrame(d), levels={"c": COLOURS}, **unit)


PLOTS = {
    "true": lambda s: (
        ggplot(s, aes("c")) + geom_bar(stat="count_dp", eps=HUGE, seed=3)
    ),
    "released": lambda s: (
        ggplot(s, aes("c")) + geom_bar(stat="count_dp", eps=1.0, seed=4)
    ),
    "ckm": lambda s: (
        ggplot(s, aes("c", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTABLE)
    ),
}


def _layer(plot) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(plot).layers[0].data.reset_index(drop=True)


def _kept_tags(src) -> list[int]:
    """The rows the engine's units keep (by their tag)."""
    rows = src.bounded_rows().select("tag").collect().to_pandas()
    return sorted(rows["tag"].astype(int).tolist())


def _memory_tags(kind: str, d: pd.DataFrame) -> list[int]:
    """The rows memory's units keep (the door's own bounding)."""
    unit = _frame(kind, "pandas", d).unit
    mask = bound_rows("test", d, unit)
    return sorted(d["tag"][mask].astype(int).tolist())


KINDS = ["text", "mixed", "content"]


def check_same_records_and_numbers(
    kind: str, engine: str, request=None, plots=tuple(PLOTS)
):
    d = _ids(kind)
    src = _frame(kind, engine, d, request)
    want = _memory_tags(kind, d)
    # some units are over the bound and the missing ones are left out
    assert 0 < len(want) < d["person"].notna().sum()
    assert _kept_tags(src) == want
    for name in plots:
        make = PLOTS[name]
        expected = _layer(make(_frame(kind, "pandas", d)))
        pd.testing.assert_frame_equal(_layer(make(src)), expected, obj=name)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
@pytest.mark.parametrize("kind", KINDS)
def test_engine_keeps_memory_records_and_numbers(kind, engine):
    """Text, mixed-number and content-named ids: the engine keeps the
    records memory keeps, and releases memory's numbers (true counts,
    noisy counts, CKM)."""
    check_same_records_and_numbers(kind, engine)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_a_persons_records_depend_on_that_person_only(engine):
    """Which records a person keeps (named by content) depends on that
    person's records and the key alone: the same with every other person
    gone but one."""
    d = _ids("content")
    mine = d["person"] == d["person"].value_counts().index[0]
    other = d["person"] == d["person"].value_counts().index[1]
    alone = _kept_tags(_frame("content", engine, d[mine | other]))
    every = _kept_tags(_frame("content", engine, d))
    tags = set(d["tag"][mine])
    assert mine.sum() > K
    assert [t for t in alone if t in tags] == [t for t in every if t in tags]
    assert len([t for t in every if t in tags]) == K


def _neighbour(d: pd.DataFrame) -> pd.DataFrame:
    """``d`` with one whole person (a text id) replaced: other records,
    as many again plus three, in other colours."""
    who = d["person"].value_counts().index[0]
    theirs = d[d["person"] == who]
    new = pd.concat([theirs, theirs.iloc[:3]], ignore_index=True)
    new["c"] = "blue"
    new["x"] = np.linspace(-1, 1, len(new))
    new["tag"] = np.arange(len(new)) + 10**6
    if "rec" in new:
        new["rec"] = [f"n{i}" for i in range(len(new))]
    return pd.concat([d[d["person"] != who], new], ignore_index=True)


def check_neighbour(
    engine: str, request=None, kind: str = "text", moves: bool = True
):
    d = _ids(kind)
    other = _neighbour(d)
    make = PLOTS["released"]
    a = snapshot(make(_frame(kind, engine, d, request)), ("y",))
    b = snapshot(make(_frame(kind, engine, other, request)), ("y",))
    assert differences(a, b) == []
    assert a["report"] and a["layer 0"]
    if not moves:  # shown where the same data and seed give these numbers
        return
    # the released numbers do move
    ya = _layer(make(_frame(kind, engine, d, request)))["count"]
    yb = _layer(make(_frame(kind, engine, other, request)))["count"]
    assert ya.tolist() != yb.tolist()


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
@pytest.mark.parametrize("kind", ["text", "content"])
def test_one_person_changed_moves_only_noisy_numbers(engine, kind):
    check_neighbour(engine, kind=kind)


# --------------------------------------------------------------------------
# bound once, draw many
# --------------------------------------------------------------------------
def _counting(monkeypatch) -> list:
    calls: list = []
    real = engine_bounding.bound

    def bound(src):
        calls.append(src)
        return real(src)

    monkeypatch.setattr(engine_bounding, "bound", bound)
    return calls


def check_kept_rows(engine: str, monkeypatch, request=None):
    d = _ids("text")
    plain = _layer(PLOTS["true"](_frame("text", engine, d, request)))
    calls = _counting(monkeypatch)
    src = _frame("text", engine, d, request, keep_bounded=True)
    first = _layer(PLOTS["true"](src))
    later = [_layer(PLOTS[n](src)) for n in ("true", "ckm")]
    table = pp.dp_table(src, "c", eps=HUGE, seed=9)
    assert len(calls) == 1  # one bounding for three figures and a table
    pd.testing.assert_frame_equal(first, plain)
    pd.testing.assert_frame_equal(later[0], plain)
    assert table["count"].tolist() == plain["count"].tolist()
    src.invalidate()
    pd.testing.assert_frame_equal(_layer(PLOTS["true"](src)), plain)
    assert len(calls) == 2  # bounded again after invalidate()
    return src


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_keep_bounded_bounds_once(engine, monkeypatch):
    """With keep_bounded=True the first figure bounds and keeps the rows;
    later figures and tables read them (the same numbers), and
    invalidate() makes the next figure bound again."""
    check_kept_rows(engine, monkeypatch)


def test_kept_rows_live_until_invalidated():
    """A DuckDB source keeps its bounded rows in a temporary table: a
    change of the table is seen after invalidate() (which drops it), not
    before."""
    d = _ids("text")
    con = duckdb.connect()
    con.register("v", d)
    con.execute("CREATE TABLE t AS SELECT * FROM v")
    src = source(
        con, "t", keep_bounded=True, levels={"c": COLOURS}, **_unit("text")
    )
    before = _layer(PLOTS["true"](src))["count"].tolist()
    con.execute("DELETE FROM t WHERE c = 'red'")
    assert _layer(PLOTS["true"](src))["count"].tolist() == before
    kept = (
        "SELECT count(*) FROM duckdb_tables() "
        "WHERE table_name LIKE '_pnp_bounded%'"
    )
    assert con.sql(kept).fetchall() == [(1,)]
    src.invalidate()
    assert con.sql(kept).fetchall() == [(0,)]
    after = _layer(PLOTS["true"](src))["count"].tolist()
    fresh = source(con, "t", levels={"c": COLOURS}, **_unit("text"))
    assert after == _layer(PLOTS["true"](fresh))["count"].tolist()
    assert after[0] == 0 and after != before


def test_keep_bounded_needs_a_unit_and_an_engine_that_keeps():
    d = _ids("text")
    with pytest.raises(
        PlotninePrivateError, match="keep_bounded=True .* no unit"
    ):
        source(pl.from_pandas(d).lazy(), keep_bounded=True)
    src = source(pl.from_pandas(d).lazy(), **_unit("text"))
    whole = Unit("tag", K, None, "tag")  # integer ids: Ibis bounds them
    ibis_like = Source(src.frame, src.native, "ibis", {}, whole)
    with pytest.raises(
        PlotninePrivateError,
        match="keep_bounded=True is not supported .* ibis",
    ):
        source(ibis_like, keep_bounded=True)
    # a frame in memory always remembers its bounded rows: accepted
    assert pp.source(d, keep_bounded=True, **_unit("text")).unit.bounded


def test_engines_without_tables_still_need_integer_ids():
    """An engine that cannot join a table of names (here a stand-in for
    Ibis) refuses text ids and a missing record_id before any query,
    naming the parameter and the fix."""
    src = source(pl.from_pandas(_ids("text")).lazy(), **_unit("text"))

    def ibis(unit: Unit) -> Source:
        return Source(src.frame, src.native, "ibis", {}, unit)

    with pytest.raises(
        PlotninePrivateError,
        match=r"unit='person' is a column of String.*person_id",
    ):
        check_unit_columns("source", ibis(Unit("person", K, None, "tag")))
    with pytest.raises(PlotninePrivateError, match="needs record_id="):
        check_unit_columns("source", ibis(Unit("person", K)))


def check_ids_through_spark(request, monkeypatch):
    """Spark: text and content-named ids keep memory's records and
    numbers, a changed person moves only noisy numbers, and kept rows are
    persisted once and unpersisted by invalidate()."""
    # Spark answers a small query in about two seconds: each path once
    # (the id table's join with record keys and noise, the content
    # fingerprints' join); DuckDB and Polars run every plot of every kind
    check_same_records_and_numbers("text", "spark", request, ("ckm",))
    # content: the rows kept are memory's (the fingerprint join); the
    # figures of kept rows are the text path's
    check_same_records_and_numbers("content", "spark", request, ())
    # the numbers equal memory's (above), whose neighbours move them
    check_neighbour("spark", request, moves=False)
    d = _ids("text")
    calls = _counting(monkeypatch)
    src = _frame("text", "spark", d, request, keep_bounded=True)
    first = _layer(PLOTS["true"](src))
    pd.testing.assert_frame_equal(_layer(PLOTS["true"](src)), first)
    assert len(calls) == 1  # kept: the second figure did not bound
    kept = src.bounded_rows().to_native()
    assert kept.is_cached
    src.invalidate()
    assert not kept.is_cached


def test_memory_names_text_units_once_per_frame(monkeypatch):
    """In memory a later figure of one frame compares its text unit
    column with the one remembered instead of hashing every value again;
    a column changed in place is named again (and bounds otherwise)."""
    import plotnine_private.door as door

    calls: list = []
    real = door.id_codes

    def counting(values):
        calls.append(len(values))
        return real(values)

    monkeypatch.setattr(door, "id_codes", counting)
    d = _ids("text").assign(c=lambda f: pd.Categorical(f["c"], COLOURS))
    src = pp.source(d, **_unit("text"))
    first = _layer(PLOTS["true"](src))
    named = len(calls)
    again = _layer(PLOTS["true"](src))
    pd.testing.assert_frame_equal(again, first)
    assert len(calls) == named == 2  # units and records, once
    d.loc[d["c"] == "red", "person"] = "one person"
    changed = _layer(PLOTS["true"](src))
    assert len(calls) == 2 * named
    assert changed["count"].tolist() != first["count"].tolist()
