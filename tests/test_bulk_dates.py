"""Declared date-time levels named and looked up in bulk (issue 39): the
words of a datetime64 column (``time_words``), the texts of its
Timestamps in a query (``time_texts``) and each record's level
(``date_codes``) equal the value-by-value definitions byte for byte
(``value_bytes``, ``str(pd.Timestamp)``, ``cells._codes_in``), and the
tables and plots over date levels release the numbers they released
before (pinned: computed before the bulk path existed)."""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp
import plotnine_private.date_levels as date_levels
import plotnine_private.mechanisms.release.engine as engine
import plotnine_private.tables as tables
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private.cells import _codes_in, object_column
from plotnine_private.mechanisms.naming.cell_values import value_bytes
from plotnine_private.mechanisms.naming.cellnames import (
    StrLabels,
    _column_words,
    column_runs,
)
from plotnine_private.mechanisms.naming.time_values import (
    time_ns,
    time_texts,
)
from plotnine_private.mechanisms.release.query import Query
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams.places import column_digest

LOW, HIGH = pd.Timestamp.min.value, pd.Timestamp.max.value


def _edge_ns() -> np.ndarray:
    """Nanoseconds at the edges: int64's ends (1677 and 2262), the
    epoch, a day's and a second's ends, each kind of sub-second part."""
    rng = np.random.default_rng(3)
    ns = rng.integers(LOW, HIGH, size=3000)
    ns[::3] -= ns[::3] % 10**9  # whole seconds
    ns[1::3] -= ns[1::3] % 10**3  # microseconds
    edges = [LOW, LOW + 1, HIGH, HIGH - 1, 0, -1, 1, 999, 1000, 10**9]
    edges += [-(10**9), 86_400 * 10**9 - 1, -86_400 * 10**9, 10**9 - 1000]
    edges += [pd.Timestamp("2000-02-29 23:59:59.999999").value]
    return np.concatenate([ns, edges]).astype(np.int64)


def _in_unit(unit: str) -> np.ndarray:
    """Random and edge date-times in ``unit`` (whole seconds, whole days:
    the int64 range of nanoseconds, as ns values whose unit is coarser)."""
    ns = _edge_ns()
    per = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "D": 86_400e9}
    step = int(per[unit])
    # rounded towards 0: int64's ends stay inside int64's nanoseconds
    whole = np.where(ns < 0, -(-ns // step), ns // step)
    return whole.astype(f"M8[{unit}]")


@pytest.mark.parametrize("unit", ["ns", "us", "ms", "s", "D"])
def test_words_and_digests_of_dates_are_their_value_bytes(unit):
    values = _in_unit(unit)
    words = _column_words(values)
    assert isinstance(words, np.ndarray) and words.shape == (len(values), 3)
    one_by_one = b"".join(value_bytes(v) for v in values)
    assert words.astype("<u8").tobytes() == one_by_one
    stamps = [pd.Timestamp(v) for v in values]
    assert b"".join(map(value_bytes, stamps)) == one_by_one
    # a domain's digest: the bulk words give the Timestamps' digest
    assert column_digest(values) == column_digest(object_column(stamps))
    widths, flat = column_runs(values)
    assert (widths == 3).all() and flat.size == 3 * len(values)


def test_dates_the_bulk_words_cannot_hold_are_named_one_by_one():
    us = np.array([0, 2**62], dtype="M8[us]")  # beyond int64 ns
    nat = np.array([0, "NaT"], dtype="M8[ns]")
    for values in (us, nat):
        assert time_ns(values) is None
        words = _column_words(values)
        assert not isinstance(words, np.ndarray)
        flat = words.flat.astype("<u8").tobytes()
        assert flat == b"".join(value_bytes(v) for v in values)


@pytest.mark.parametrize("unit", ["ns", "us", "s"])
def test_texts_of_dates_are_those_of_their_timestamps(unit):
    values = _in_unit(unit)
    ns = time_ns(values)
    texts = StrLabels(*time_texts(ns))
    assert texts.tolist() == [str(pd.Timestamp(v)) for v in values]
    # one length: every text without a fraction, or all with one
    for part in (ns[::3], ns[2::3]):
        part_texts = StrLabels(*time_texts(part)).tolist()
        assert part_texts == [str(pd.Timestamp(int(v))) for v in part]


def test_a_query_names_bulk_date_levels_as_their_timestamps():
    """The identity of a domain of date levels (their texts as one
    buffer) is that of the tuple of Timestamps, under every stream
    version, above and below 64 levels (version 3's digests)."""
    ns = _edge_ns()
    for n in (5, 64, 65, len(ns)):
        stamps = tuple(pd.DatetimeIndex(ns[:n].view("M8[ns]")))
        texts = date_levels.date_texts(ns[:n])
        for version in (1, 2, 3, 4):
            with pp.use_stream_version(version):
                a = Query.make("count", "data", 1, domain=texts, eps=1.0)
                b = Query.make("count", "data", 1, domain=stamps, eps=1.0)
                assert a.identity() == b.identity()


def _records() -> pd.Series:
    rng = np.random.default_rng(4)
    ns = _edge_ns()
    x = ns[rng.integers(0, len(ns) - 40, size=20_000)].view("M8[ns]")
    x[::97] = np.datetime64("NaT")
    x[1::101] = np.datetime64("1999-01-01T00:00:00.000000001")  # no level
    return pd.Series(x)


@pytest.mark.parametrize("unit", ["ns", "us"])
def test_records_find_their_date_levels_as_value_by_value(unit):
    ns = _edge_ns()
    levels = list(pd.DatetimeIndex(ns.view("M8[ns]")))
    x = _records()
    if unit == "us":  # coarser records, and some beyond int64 ns
        x = pd.Series(x.to_numpy().astype("M8[us]"))
        x[7] = np.datetime64("3000-01-01", "us")
    found = date_levels.date_levels(levels)
    assert found is not None
    bulk = date_levels.date_codes(x, found[1])
    plain = _codes_in(x, levels, name="x")
    np.testing.assert_array_equal(bulk, plain)
    assert (bulk == -1).sum() > len(x) // 97
    assert len(set(bulk.tolist())) > 1000
    # a Categorical of the records, its categories in another order
    cats = pd.DatetimeIndex(np.unique(x.dropna().to_numpy()))[::-1]
    cx = pd.Series(pd.Categorical(x, categories=cats))
    want = _codes_in(cx, levels, name="x")
    np.testing.assert_array_equal(date_levels.date_codes(cx, found[1]), want)


def test_levels_the_bulk_path_does_not_cover_are_left_to_it():
    naive = pd.Timestamp("2020-01-01")
    aware = pd.Timestamp("2020-01-01", tz="UTC")
    for levels in (
        [naive, aware],
        [aware],
        pd.DatetimeIndex([aware]),
        [naive, None],
        [naive, pd.NaT],
        [naive, np.datetime64("2020-01-02")],
        [naive.to_pydatetime()],
        ["2020-01-01"],
        [],
    ):
        assert date_levels.date_levels(levels) is None
    ns = np.array([1, 2, 1], dtype=np.int64)  # repeated: refused there
    assert date_levels.date_codes(pd.Series(ns.view("M8[ns]")), ns) is None


def test_repeated_date_levels_are_refused():
    days = pd.date_range("2020-01-01", periods=100, freq="D")
    frame = pd.DataFrame({"x": days[:50]})
    for repeated in (
        [*days, days[3]],
        [*days, days[3].as_unit("s")],  # one instant in two units
        days.append(days[3:4]),
    ):
        with pytest.raises(PlotninePrivateError, match="given twice"):
            pp.dp_table(frame, "x", eps=1, seed=1, levels=repeated)


# -- releases pinned before the bulk path (main 072e8a2) ----------------
def _pinned_levels() -> pd.DatetimeIndex:
    rng = np.random.default_rng(21)
    base = pd.Timestamp("2001-03-04 05:06:07")
    steps = np.sort(rng.choice(10**15, size=96, replace=False))
    ns = base.value + steps
    ns[::3] -= ns[::3] % 10**9  # whole seconds
    ns[1::3] -= ns[1::3] % 10**3  # microseconds; the rest nanoseconds
    return pd.DatetimeIndex(ns.astype("M8[ns]"))


LEVELS = _pinned_levels()


def _pinned_data() -> pd.DataFrame:
    rng = np.random.default_rng(22)
    x = LEVELS[rng.integers(0, 90, 2000)].to_numpy().copy()  # 6 absent
    x[5] = np.datetime64("NaT")
    x[9] = np.datetime64("1999-01-01T00:00:00", "ns")  # in no level
    return pd.DataFrame({"x": x})


DATA = _pinned_data()
# the record in no level is missing in the Categorical
CATEGORICAL = pd.DataFrame(
    {"x": pd.Categorical(DATA["x"].where(DATA["x"].isin(LEVELS)), LEVELS)}
)

#: (counts' sha256 prefix, identity, cells, data digest) per version
PINNED = {
    None: (
        "683b88fbbe0826a2",
        "f3de10e126c5410d56fd9635",
        "b729f7b30f4e6866246bd7df",
        "91d6a62e418c93029754b541e7f2181b",
    ),
    2: (
        "f5d0dfc2b52dd0a7",
        "d514c4f0dcb72ffa66dca78f",
        "b729f7b30f4e6866246bd7df",
        "637ffd31b01a633a8c011bbd716c2e4c",
    ),
}
PINNED_CKM = (
    "ad479205b09eb7cd",
    "b9396feea9a576e8a42f0652",
    "b729f7b30f4e6866246bd7df",
)


def _charged(release):
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = release()
    finally:
        engine.set_charge_hook(previous)
    current_session().sources.clear()  # each case a first release
    (charge,) = seen
    return out, charge


def _fingerprint(counts) -> str:
    counts = np.asarray(counts, dtype=np.int64)
    return hashlib.sha256(counts.tobytes()).hexdigest()[:16]


@pytest.fixture
def spied(monkeypatch):
    """Which bulk steps ran: each call of the bulk date functions."""
    calls: list[str] = []
    for name in ("date_codes", "date_texts", "date_levels"):
        original = getattr(tables, name)

        def spy(*args, _f=original, _n=name):
            calls.append(_n)
            return _f(*args)

        monkeypatch.setattr(tables, name, spy)
    return calls


def _cases():
    return {
        "list": (DATA, list(LEVELS)),
        "index": (DATA, LEVELS),
        "categorical": (CATEGORICAL, None),
    }


@pytest.mark.parametrize("version", [None, 2])
@pytest.mark.parametrize("case", ["list", "index", "categorical"])
def test_date_tables_release_the_numbers_pinned_before_bulk(
    case, version, spied
):
    frame, levels = _cases()[case]

    def table():
        return pp.dp_table(frame, "x", eps=0.5, seed=4, levels=levels)

    if version is None:
        out, charge = _charged(table)
    else:
        with pp.use_stream_version(version):
            out, charge = _charged(table)
    assert {"date_levels", "date_texts"} <= set(spied)
    assert ("date_codes" in spied) == (case != "categorical")
    assert out["x"].tolist() == list(LEVELS)
    assert str(out["x"].dtype) == "datetime64[ns]"
    got = (_fingerprint(out["count"]), charge.identity, charge.cells)
    assert (*got, charge.digest) == PINNED[version]


@pytest.mark.parametrize("version", [None, 2])
def test_date_ckm_tables_and_plots_release_the_pinned_numbers(version, spied):
    keyed = pp.add_record_keys(DATA, name="rk", rng_seed=3)
    ptable = pp.create_cnt_ptable(D=3, V=1.5, js=1)
    plot = ggplot(CATEGORICAL, aes("x")) + geom_bar(
        stat="count_dp", eps=0.5, seed=4
    )
    with pp.use_stream_version(version or pp.stream_version()):
        out, charge = _charged(
            lambda: pp.ckm_table(
                keyed, "x", rkey="rk", ptable=ptable, levels=list(LEVELS)
            )
        )
        assert "date_codes" in spied
        got = (_fingerprint(out["count"]), charge.identity, charge.cells)
        assert got == PINNED_CKM
        drawn, charge = _charged(lambda: layer_data(plot))
    assert len(drawn) == len(LEVELS)
    got = (_fingerprint(drawn["count"]), charge.identity, charge.cells)
    assert got == PINNED[version][:3]


def test_bulk_date_tables_equal_the_value_by_value_path(monkeypatch):
    """With a privacy unit (cells limited per unit, named from the
    content's words): the bulk dimension releases what the value by
    value one releases."""
    frame = DATA.assign(u=np.arange(len(DATA)) % 500)
    source = pp.source(frame, unit="u", max_records=3, max_cells=2)
    fast = {
        k: _charged(lambda: pp.dp_table(source, "x", eps=1, seed=2, levels=lv))
        for k, lv in (("list", list(LEVELS)), ("index", LEVELS))
    }
    monkeypatch.setattr(tables, "_date_level_dimension", lambda *a: None)
    for case, (table, charge) in fast.items():
        levels = list(LEVELS) if case == "list" else LEVELS
        plain, other = _charged(
            lambda lv=levels: pp.dp_table(
                source, "x", eps=1, seed=2, levels=lv
            )
        )
        pd.testing.assert_frame_equal(table, plain)
        assert (charge.identity, charge.cells, charge.digest) == (
            other.identity,
            other.cells,
            other.digest,
        )


@pytest.mark.parametrize("case", ["list", "categorical"])
def test_neighbouring_date_tables_differ_in_counts_only(case):
    frame, levels = _cases()[case]
    other = frame.copy()
    other.loc[17, "x"] = LEVELS[93]  # one record moved to an empty level
    t1, c1 = _charged(
        lambda: pp.dp_table(frame, "x", eps=1, seed=8, levels=levels)
    )
    t2, c2 = _charged(
        lambda: pp.dp_table(other, "x", eps=1, seed=8, levels=levels)
    )
    assert list(t1.dtypes) == list(t2.dtypes)
    assert t1["x"].tolist() == t2["x"].tolist() == list(LEVELS)
    assert (c1.identity, c1.cells) == (c2.identity, c2.cells)
    assert c1.digest != c2.digest
    assert (t1["count"] != t2["count"]).mean() > 0.5
