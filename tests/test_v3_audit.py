"""Stream version 3 audited: a domain's digest follows its cells' names
(equal names, equal digest; other names, another digest), whatever
form the levels come in; what names cells by place is a whole domain
of public dimensions only."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import datetime as dt
import pickle
import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from engine_tables import duckdb_table
from neighbours import differences, snapshot
from plotnine import (
    aes,
    facet_grid,
    facet_wrap,
    geom_bar,
    geom_bin_2d,
    geom_count,
    geom_histogram,
    ggplot,
)
from plotnine.data import mpg as _mpg
from test_neighbours import declared

import plotnine_private as pp
from plotnine_private import dp_table
from plotnine_private._compat import build
from plotnine_private.cells import assemble, categorical_dimension, cell_table
from plotnine_private.mechanisms.naming.cellnames import StrLabels, cell_words
from plotnine_private.mechanisms.release import engine
from plotnine_private.mechanisms.release.magnitudes import LaplaceSums
from plotnine_private.mechanisms.release.records import Release
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams.places import column_digest
from plotnine_private.mechanisms.streams.versions import use_stream_version


def _words(column) -> bytes:
    values = column if isinstance(column, np.ndarray) else list(column)
    if not isinstance(values, np.ndarray):
        values = np.array(values + [None], dtype=object)[:-1]
    return cell_words(values).tobytes()


LABELS = [f"L{i}" for i in range(5)] + ["é", "", "a\0b"]
#: columns of the same values in the forms levels arrive in (a numpy
#: array's items are np.str_, a subclass of str)
SAME_STRINGS = {
    "list": LABELS,
    "buffer": StrLabels.of(LABELS),
    "unicode array": np.array(LABELS),
    "np.str_ objects": np.array([np.str_(v) for v in LABELS] + [None])[:-1],
    "np.str_ list": [np.str_(v) for v in LABELS],
    "object array": np.array(LABELS + [None], dtype=object)[:-1],
}


@pytest.mark.parametrize("form", sorted(SAME_STRINGS))
def test_every_form_of_the_same_strings_has_one_digest(form):
    column = SAME_STRINGS[form]
    assert _words(column) == _words(LABELS)  # the same cells' names
    assert column_digest(column) == column_digest(LABELS)


#: columns whose values name other cells than each other's
DISTINCT = {
    "ints": np.array([1, 0]),
    "bools": np.array([True, False]),
    "strings": ["1", "0"],
    "words": ["True", "False"],
    "floats": [1.5, 0.0],
    "none": [None, None],
    "nan": [np.nan, np.nan],
    "nat": [pd.NaT, pd.NaT],
    "dates": [dt.date(2020, 1, 1), dt.date(2020, 1, 2)],
    "times": np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[ns]"),
    "tuples": [("1",), ("0",)],
    "bytes": [b"1", b"0"],
    "mixed": ["1", 0],
    "mixed swapped": [1, "0"],
    "nul": ["1\0", "0"],
    "one": ["10"],
    "none at all": [],
}


def test_columns_of_other_cells_have_other_digests():
    words = {k: _words(v) for k, v in DISTINCT.items()}
    assert len(set(words.values())) == len(words)  # distinct names...
    digests = {k: column_digest(v) for k, v in DISTINCT.items()}
    assert len(set(digests.values())) == len(digests)  # ...and digests


def test_levels_given_as_a_numpy_array_draw_what_a_list_draws():
    # a numpy array of labels (np.str_ items) names the same cells as
    # the list: one release, the same noise (it was drawn afresh, with
    # the same identity, when the domain digest read np.str_ as objects)
    rng = np.random.default_rng(1)
    cats = [f"L{i}" for i in range(100)]
    x = np.array(cats, dtype=object)[rng.integers(0, 100, 500)]
    frame = pd.DataFrame({"x": x})
    out = []
    for levels in (cats, np.array(cats)):
        current_session().sources.clear()
        seen: list = []
        previous = engine.set_charge_hook(seen.extend)
        try:
            table = dp_table(frame, "x", eps=1, seed=3, levels=levels)
        finally:
            engine.set_charge_hook(previous)
        out.append((table["count"].tolist(), seen[0]))
    (a, charge_a), (b, charge_b) = out
    assert charge_a.identity == charge_b.identity
    assert charge_a.digest == charge_b.digest
    assert a == b


def test_only_a_domain_of_public_dimensions_is_named_by_place():
    # the fine bins of the groups a release showed are flagged public
    # (each gets noise) over observed group levels: named by words
    seen = categorical_dimension("g", pd.Series(["b", "a", "b"]), None)
    bins = categorical_dimension("x", pd.Series(["p", "q"]), ["p", "q"])
    cells = np.arange(4)
    n = np.ones(4, dtype=np.int64)
    observed, _ = cell_table([seen, bins], cells, n, None, None, True)
    assert observed.places is None and not observed.by_place()
    assert "words" in vars(observed)
    group = categorical_dimension("g", pd.Series(["b"]), ["a", "b"])
    declared, _ = cell_table([group, bins], cells, n, None, None, True)
    assert declared.by_place()
    assert declared.words.tolist() == observed.words.tolist()


# -- neighbours under version 3, family by family ---------------------------
EPS = {"eps": 0.5, "seed": 7}  # wide noise: fresh draws rarely agree


def _moved(d: pd.DataFrame) -> pd.DataFrame:
    """``d`` with record 0 moved to another class, panel and grid cell."""
    d = d.copy()
    cls = list(d["class"].cat.categories)
    d.loc[0, "class"] = cls[(cls.index(d.loc[0, "class"]) + 1) % len(cls)]
    d.loc[0, "year"] = 2008 if d.loc[0, "year"] == 1999 else 1999
    d.loc[0, ["displ", "hwy", "cty"]] = [6.5, 44.0, 33.0]
    return d


@contextlib.contextmanager
def _noise_seen() -> Iterator[list]:
    """Each DP release's cells while inside: whether they were named by
    place, and their noise (noisy minus true value)."""
    seen: list = []
    count_perturb = engine.LaplaceCounts.perturb
    sum_perturb = LaplaceSums.perturb

    def counts(self, table, key):
        out = count_perturb(self, table, key)
        noise = np.asarray(out[1], float) - np.asarray(table.n, float)
        seen.append((table.by_place(), noise[out[2]]))
        return out

    def sums(self, table, key):
        out = sum_perturb(self, table, key)
        true = np.asarray(table.total, float) * float(self.unit)
        seen.append((table.by_place(), np.asarray(out[1]) - true))
        return out

    engine.LaplaceCounts.perturb = counts  # type: ignore[method-assign]
    LaplaceSums.perturb = sums  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        engine.LaplaceCounts.perturb = count_perturb  # type: ignore
        LaplaceSums.perturb = sum_perturb  # type: ignore


def _engine_source(kind: str, d: pd.DataFrame):
    levels = {c: list(d[c].cat.categories) for c in ("class", "drv")}
    plain = d[["class", "drv"]].astype(str)
    if kind == "duckdb":
        pytest.importorskip("duckdb")
        return duckdb_table(plain, levels)
    pl = pytest.importorskip("polars")
    lf = pl.from_pandas(plain).lazy()
    return pp.source(
        lf.with_columns(
            *(pl.col(c).cast(pl.Enum(v)) for c, v in levels.items())
        )
    )


FAMILIES = {
    "count, facet margins": (
        lambda d: (
            ggplot(d, aes("class", fill="drv"))
            + geom_bar(stat="count_dp", drop=False, **EPS)
            + facet_grid("year ~ drv", margins=True)
        ),
        ("y",),
        True,
    ),
    "bin, public breaks": (
        lambda d: (
            ggplot(d, aes("hwy"))
            + geom_histogram(
                stat="bin_dp", breaks=list(range(0, 51, 5)), **EPS
            )
            + facet_wrap("year")
        ),
        ("y",),
        True,
    ),
    "bin2d, public grid": (
        lambda d: (
            ggplot(d, aes("displ", "hwy"))
            + geom_bin_2d(
                stat="bin2d_dp",
                limits=((0, 8), (0, 50)),
                bins=8,
                drop=False,
                **EPS,
            )
        ),
        (),
        True,
    ),
    "binhex, public grid": (
        lambda d: (
            ggplot(d, aes("displ", "hwy"))
            + pp.geom_hex(
                stat="binhex_dp",
                limits=((0, 8), (0, 50)),
                bins=8,
                drop=False,
                **EPS,
            )
        ),
        (),
        True,
    ),
    "sum, public grid": (
        lambda d: (
            ggplot(d, aes("cty", "hwy"))
            + geom_count(
                stat="sum_dp", limits=((0, 40), (0, 50)), resolution=1, **EPS
            )
        ),
        ("x", "y", "shown by noise"),
        True,  # the counts by place (the totals by words: a SumTable)
    ),
    "count in duckdb": (
        lambda d: (
            ggplot(_engine_source("duckdb", d), aes("class", fill="drv"))
            + geom_bar(stat="count_dp", drop=False, **EPS)
        ),
        ("y",),
        True,
    ),
    "count in polars": (
        lambda d: (
            ggplot(_engine_source("polars", d), aes("class", fill="drv"))
            + geom_bar(stat="count_dp", drop=False, **EPS)
        ),
        ("y",),
        True,
    ),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_v3_neighbours_differ_only_in_fresh_noise(family):
    make, count_axes, by_place = FAMILIES[family]
    base = declared(_mpg)
    shown = "shown by noise" in count_axes
    axes = tuple(a for a in count_axes if a != "shown by noise")
    with _noise_seen() as seen_a:
        a = snapshot(make(base), axes, shown_by_noise=shown)
    with _noise_seen() as seen_b:
        b = snapshot(make(_moved(base)), axes, shown_by_noise=shown)
    assert "error" not in a
    assert differences(a, b) == []
    assert [p for p, _ in seen_a] == [p for p, _ in seen_b]
    assert any(p for p, _ in seen_a) == by_place
    compared = 0
    for (_, za), (_, zb) in zip(seen_a, seen_b, strict=True):
        if len(za) == len(zb) and len(za) >= 5:
            # one record moved changes at most four cells' counts; noise
            # reused on the neighbour would leave the rest equal
            assert np.mean(np.isclose(za, zb)) < 0.5
            compared += 1
    assert compared >= 1


# -- a release's cells_name, made when first read -------------------------
def _release(**more) -> Release:
    return Release(
        identity="i",
        family="count",
        mechanism="discrete_laplace",
        eps=1.0,
        delta=0.0,
        adjacency="replace",
        sensitivity=2.0,
        domain="public: levels",
        cells=3,
        policy="seed-only",
        **more,
    )


class _Namer:
    """A picklable ``name_of`` that counts its calls."""

    calls = 0

    def __call__(self) -> str:
        type(self).calls += 1
        return "named"


def test_a_release_record_reads_like_a_plain_dataclass():
    given = _release(cells_name="given")
    assert given.cells_name == "given"
    assert _release().cells_name == ""
    assert _release() != given
    with pytest.raises(dataclasses.FrozenInstanceError):
        given.cells_name = "other"  # type: ignore[misc]
    _Namer.calls = 0
    lazy = _release(name_of=_Namer())
    assert _Namer.calls == 0  # not named when made
    assert lazy == _release(cells_name="named")  # read by ==: named
    assert _Namer.calls == 1
    assert lazy.cells_name == "named" and _Namer.calls == 1  # once
    assert dataclasses.asdict(lazy)["cells_name"] == "named"
    assert dataclasses.replace(lazy, cells=4).cells_name == "named"
    assert "cells_name='named'" in repr(lazy)
    fresh = _release(name_of=_Namer())
    for copied in (pickle.loads(pickle.dumps(fresh)), copy.deepcopy(fresh)):
        assert copied.cells_name == "named" and copied == lazy
    assert pickle.loads(pickle.dumps(lazy)) == lazy
    assert _release(cells_name="x", name_of=_Namer()).cells_name == "named"
    assert [f.name for f in dataclasses.fields(Release)][-3:] == [
        "cells_name",
        "stream_version",
        "name_of",
    ]


# -- the ledger's hook listens only while a ledger is active ---------------
def _releases_of_a_session(mpg) -> dict:
    """A table, a histogram with a private range and a PCA score on given
    directions, drawn in a fresh session."""
    current_session().sources.clear()
    cols = ["displ", "cty", "hwy"]
    directions = pd.DataFrame(np.eye(3), index=cols, columns=cols)
    table = dp_table(mpg, "class", **EPS)["count"].tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.PrivacyWarning)
        hist = build(
            ggplot(mpg, aes("displ")) + geom_histogram(stat="bin_dp", **EPS)
        )
        score = pp.dp_score(
            mpg, cols, eps=2, delta=1e-5, seed=1, directions=directions
        )
    return {
        "table": table,
        "bins": hist.layers[0].data["count"].tolist(),
        "score": score.histogram.to_numpy().tolist(),
    }


def test_the_noise_is_the_same_whether_a_ledger_listens_or_not(
    tmp_path, mpg, monkeypatch, ledger_key
):
    # no ledger: the engine builds no charge and skips the digests it
    # needs only for one; the digests that key the noise are taken anyway
    pp.use_ledger(None)  # the test's session restores it
    assert not engine.charging()
    without = _releases_of_a_session(mpg)
    with pp.use_ledger(tmp_path / "l.sqlite", dataset="mpg"):
        assert engine.charging()
        with_ledger = _releases_of_a_session(mpg)
        families = pp.ledger(tmp_path / "l.sqlite").table["family"].tolist()
    assert with_ledger == without
    assert families[:3] == ["count", "range", "bin"]
    assert len(families) > 3 and families[3].startswith("pca:")


def test_a_hook_set_by_the_user_is_told_of_every_release(mpg, monkeypatch):
    pp.use_ledger(None)  # the test's session restores it
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)  # no listening()
    try:
        _releases_of_a_session(mpg)
    finally:
        engine.set_charge_hook(previous)
    families = [c.family for c in seen]
    assert families[:3] == ["count", "range", "bin"]
    assert families[3:] and all(f.startswith("pca:") for f in families[3:])


def test_ckm_draws_nothing_and_is_the_same_under_every_stream_version():
    data = declared(_mpg)
    ptable = pp.create_cnt_ptable(D=3, V=1.5, js=1)
    out = {}
    for version in (1, 2, 3):
        with use_stream_version(version):
            current_session().sources.clear()
            table = pp.ckm_table(
                data, "class", rkey="rk", ptable=ptable, groups="drv"
            )
            bars = (
                build(
                    ggplot(data, aes("class", fill="drv", rkey="rk"))
                    + geom_bar(stat="count_ckm", ptable=ptable, drop=False)
                )
                .layers[0]
                .data
            )
        out[version] = (table["count"].tolist(), bars["count"].tolist())
    assert out[1] == out[2] == out[3]
    assert sorted(out[3][0]) == sorted(out[3][1])  # the same cells


def test_a_place_named_tables_words_are_made_when_read_and_once():
    x = categorical_dimension("x", pd.Series(["b"]), ["a", "b", "c"])
    table, _ = assemble([x])
    calls: list = []
    make = table.places.cell_words

    def counted():
        calls.append(1)
        return make()

    table.places.cell_words = counted
    assert table.by_place() and not calls
    assert table.words.tolist() == cell_words(x.content[0]).tolist()
    assert table.words is table.words and len(calls) == 1
    copy_ = dataclasses.replace(table, n=table.n + 1)  # carries them
    assert copy_.words is table.words and copy_.places is None
    given, _ = cell_table(
        [x], np.arange(2), np.ones(2, np.int64), None, None, True
    )
    assert given.places is None and given.words.shape[0] == 2
    with pytest.raises(TypeError):
        engine.CellTable(n=np.ones(3, np.int64))  # words are required


# -- declared levels that name one cell twice --------------------------------
@pytest.mark.parametrize(
    ("column", "levels"),
    [
        ("cyl", [4, 4.0, 5, 6, 8]),  # one number: one cell
        ("class", ["suv", "suv", "compact"]),
        ("class", ["suv", np.str_("suv"), "compact"]),
    ],
)
def test_levels_that_name_one_cell_twice_are_refused(column, levels):
    # two levels with one name share a stream wherever cells are named
    # by words (versions 1 and 2; observed groups and sums under 3): the
    # difference of their released counts was the true count
    for version in (2, 3):
        with (
            use_stream_version(version),
            pytest.raises(pp.PlotninePrivateError, match="twice"),
        ):
            dp_table(_mpg, column, eps=1, seed=1, levels=levels)
    with pytest.raises(pp.PlotninePrivateError, match="levels"):
        build(
            ggplot(_mpg, aes(column, fill="drv"))
            + geom_bar(stat="count_dp", levels=levels, **EPS)
        )


def test_levels_in_an_engine_that_name_one_cell_twice_are_refused():
    pytest.importorskip("duckdb")
    import duckdb

    con = duckdb.connect()
    con.register("v", _mpg[["class", "drv"]])
    con.execute("CREATE TABLE t AS SELECT * FROM v")
    src = pp.source(con, "t", levels={"drv": ["4", "f", "f", "r"]})
    with pytest.raises(pp.PlotninePrivateError, match="drv"):
        dp_table(src, "class", groups="drv", eps=1, seed=1)
