"""Declared numeric domains named in bulk (issue 39): int levels of a
Categorical, levels given as numpy arrays or numpy scalars, many float
levels matched by hash. Each bulk path must give the bytes and codes of
the value-by-value definition, so every release keeps its numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import plotnine_private as pp
import plotnine_private.cells as cells
from plotnine_private.cells import _float_codes, as_floats
from plotnine_private.mechanisms.naming.cell_values import value_bytes
from plotnine_private.mechanisms.naming.cellnames import column_runs
from plotnine_private.mechanisms.naming.encoding import (
    tagged_int_runs,
    tagged_runs,
)
from plotnine_private.mechanisms.streams.randomness import _canonical

I64 = np.iinfo(np.int64)
RNG = np.random.default_rng(39)


def _int_texts(values) -> bytes:
    return tagged_runs([str(v) for v in values], b"i:")


INT_CASES = [
    [0, -1, 1, 9, 10, -10, 99, 100, I64.max, I64.min + 1],
    list(range(-70, 70)),  # sorted: runs of one sign and width
    RNG.integers(-(10**12), 10**12, 500).tolist(),  # no order: masked
    (RNG.integers(0, 2, 300) * 10 ** RNG.integers(0, 19, 300)).tolist(),
]


@pytest.mark.parametrize("values", INT_CASES)
def test_int_texts_in_bulk_are_their_str(values):
    assert tagged_int_runs(values) == _int_texts(values)


@pytest.mark.parametrize(
    "values", [[1, True], [1, 2.0], [I64.min, 1], [2**63, 1], [1, np.int64(2)]]
)
def test_int_texts_refuse_what_they_cannot_write(values):
    assert tagged_int_runs(values) is None


def test_a_tuple_of_many_ints_has_the_item_by_item_identity():
    for values in INT_CASES + [[*range(65), 2**70], [*range(65), True]]:
        part = tuple(values)
        want = b"t:" + b"".join(
            len(c).to_bytes(4, "little") + c for c in map(_canonical, part)
        )
        assert len(part) > 64 or part == tuple(INT_CASES[0])
        assert _canonical(part) == want


def _words_by_value(values) -> tuple[list[int], bytes]:
    enc = [value_bytes(v) for v in values]
    return [len(b) // 8 for b in enc], b"".join(enc)


@pytest.mark.parametrize(
    "values",
    [
        INT_CASES[2],
        [0, -1, I64.max, I64.min],
        [0.5, -0.0, 0.0, 3.0, float("nan"), float("inf"), -1e300, 2.0**63],
        [2**64, 1, 2],  # beyond int64: value by value
        [1, 2.5],  # a mix: value by value
        [True, 1],
    ],
)
def test_words_of_plain_numbers_are_their_value_bytes(values):
    widths, flat = column_runs(np.array(values, dtype=object))
    want_widths, want = _words_by_value(values)
    assert widths.tolist() == want_widths
    assert np.ascontiguousarray(flat, dtype="<u8").tobytes() == want


@pytest.mark.parametrize(
    "values",
    [
        np.arange(-5, 5),
        np.array([2**64 - 1, 2**63, 3], dtype=np.uint64),
        np.array([0.1, -0.0, 2.5], dtype=np.float32),
        pd.Index([3, 1, 2]),
        pd.Series([0.25, 7.0]),
        [np.int16(3), np.float64(0.5), np.uint8(7)],
    ],
)
def test_numpy_numbers_read_as_floats_in_bulk(values):
    got = as_floats(values)
    assert got is not None
    assert got.tolist() == [float(v) for v in values]


@pytest.mark.parametrize(
    "values",
    [
        np.array([True, False]),
        np.array([1.0, np.nan]),
        np.array(["a"], dtype=object),
        np.array([], dtype=float),
        [np.bool_(True), np.int64(1)],
    ],
)
def test_arrays_that_are_no_plain_numbers_are_refused(values):
    assert as_floats(values) is None


def test_many_float_levels_are_found_by_hash_as_by_search(monkeypatch):
    levels = RNG.permutation(np.arange(40_000) / 8 - 100.0)
    values = np.concatenate(
        [
            levels[RNG.integers(0, len(levels), 30_000)],
            [-0.0, 0.0, np.nan, np.inf, -np.inf, 0.0625, 1e9, -100.0],
        ]
    )
    hashed = _float_codes(values, levels, list(levels), "x")
    monkeypatch.setattr(cells, "_SEARCHED", 10**9)
    searched = _float_codes(values, levels, list(levels), "x")
    assert hashed.tolist() == searched.tolist()
    assert (levels[hashed[:30_000]] == values[:30_000]).all()
    assert hashed[-8:].tolist()[2:5] == [-1, -1, -1]


def test_many_float_levels_given_twice_are_refused():
    levels = np.arange(20_000) / 4.0
    levels[7] = levels[8]
    with pytest.raises(pp.PlotninePrivateError, match="twice"):
        _float_codes(levels, levels, list(levels), "x")


# -- tables: the numbers of releases made before the bulk paths ----------
# (counts computed by the value-by-value code, before issue 39's bulk
# naming of numbers)
def _table(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pp.dp_table(df, "x", eps=1, seed=5, **kw)


def _pinned_frames():
    rng = np.random.default_rng(11)
    levels = np.arange(-100, 200) * 3  # 300 int levels, some negative
    x = levels[rng.integers(0, 300, 3000)]
    cat = pd.DataFrame({"x": pd.Categorical(x, categories=levels)})
    fl = np.arange(300) / 8 - 10
    floats = pd.DataFrame({"x": fl[rng.integers(0, 300, 3000)]})
    return cat, floats, fl


@pytest.mark.parametrize(
    "version, head, total",
    [
        (2, [11, 8, 12, 7, 8, 13, 17, 14, 22, 13, 15, 9], 3063),
        (3, [9, 10, 10, 7, 4, 12, 8, 13, 23, 13, 12, 6], 2982),
    ],
)
def test_an_int_categorical_table_keeps_its_numbers(version, head, total):
    cat, _, _ = _pinned_frames()
    with pp.use_stream_version(version):
        t = _table(cat)
    assert t["count"].tolist()[:12] == head
    assert int(t["count"].sum()) == total


def test_float_levels_as_an_array_keep_their_numbers():
    _, floats, fl = _pinned_frames()
    head = [6, 5, 17, 8, 11, 17, 6, 7, 6, 7, 6, 10]
    for levels in (fl, list(fl), fl.tolist(), pd.Index(fl)):
        t = _table(floats, levels=levels)
        assert t["count"].tolist()[:12] == head
        assert int(t["count"].sum()) == 3060
        assert t["x"].tolist() == fl.tolist()


def test_int_levels_in_any_form_give_one_table():
    rng = np.random.default_rng(3)
    levels = rng.permutation(np.arange(-40, 60) * 7)
    df = pd.DataFrame({"x": levels[rng.integers(0, 100, 2000)]})
    want = _table(df, levels=levels.tolist())
    for form in (levels, pd.Index(levels), list(levels), levels.astype("i2")):
        got = _table(df, levels=form)
        assert got["count"].tolist() == want["count"].tolist()
        assert got["x"].tolist() == want["x"].tolist()
        assert {type(v) for v in got["x"]} <= {int, np.int64, np.int16}


@pytest.mark.parametrize(
    "values", INT_CASES + [[I64.min, 0, 5], list(range(3))]
)
def test_int_levels_have_the_identity_of_their_tuple(values):
    from plotnine_private.mechanisms.naming.cellnames import IntLevels
    from plotnine_private.mechanisms.streams.randomness import (
        _canonical_chunks,
    )

    levels = IntLevels(np.array(values, dtype=np.int64))
    want = b"t:" + b"".join(
        len(c).to_bytes(4, "little") + c for c in map(_canonical, values)
    )
    assert _canonical(levels) == want
    for digests in (False, True):
        chunks = _canonical_chunks(levels, digests=digests)
        assert b"".join(chunks) == want


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", ["int64", "uint16", "int8"])
def test_an_int_categorical_in_bulk_is_the_value_by_value_table(
    version, dtype, monkeypatch
):
    import plotnine_private.tables as tables

    rng = np.random.default_rng(version)
    levels = rng.permutation(np.arange(0, 120)).astype(dtype)
    x = levels[rng.integers(0, 120, 1500)].astype(object)
    x[:7] = None  # missing: in no level
    cat = pd.Categorical(x, categories=levels)
    df = pd.DataFrame({"x": cat, "rk": rng.uniform(size=1500)})
    ptab = pp.create_cnt_ptable(D=3, V=2, js=1)
    with pp.use_stream_version(version):
        bulk = _table(df)
        bulk_ckm = pp.ckm_table(df, "x", rkey="rk", ptable=ptab)
        monkeypatch.setattr(tables, "_declared_ints", lambda *a: None)
        slow = _table(df)
        slow_ckm = pp.ckm_table(df, "x", rkey="rk", ptable=ptab)
    pd.testing.assert_frame_equal(bulk, slow)
    pd.testing.assert_frame_equal(bulk_ckm, slow_ckm)
    assert {type(v) for v in bulk["x"]} == {int}
