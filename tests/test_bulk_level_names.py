"""Declared levels named and looked up in bulk (issue 39): numeric
levels' texts written by numpy digits (``FloatLevels``), string levels
hashed and looked up in numpy (``arrow_str_codes``). Each gives the
bytes, codes and released numbers of the value-by-value definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import plotnine_private.cells as cells
import plotnine_private.mechanisms.release.engine as engine
from plotnine_private import PlotninePrivateError, dp_table
from plotnine_private.mechanisms.naming.cellnames import (
    FloatLevels,
    StrLabels,
)
from plotnine_private.mechanisms.naming.encoding import tagged_float_runs
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams.randomness import _canonical

pytest.importorskip("pyarrow")


def _item_by_item(values) -> bytes:
    """The identity bytes of a tuple of floats, one float at a time."""
    return _canonical(tuple(map(float, values)))


def _floats() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    whole = rng.integers(-(10**16) + 1, 10**16, size=3000).astype(float)
    edges = [0.0, -0.0, 1.0, -1.0, 9.0, 10.0, 99.0, 100.0, -100.0]
    edges += [2.0**32 - 1, 2.0**32, 999999999.0, 1e9, 9999999999999998.0]
    edges += [-9999999999999998.0, 2.0**53, 2.0**53 + 2]
    return {
        "range": np.arange(-50, 5000, dtype=float),  # sorted: a few runs
        "shuffled": rng.permutation(whole),  # many runs: the masked rows
        "sorted": np.sort(whole),
        "edges": np.array(edges),
        "fractions": np.array([0.5, 1e16, 1e-5, -0.0, 3.0, np.inf]),
        "one": np.array([7.0]),
        "none": np.zeros(0),
    }


@pytest.mark.parametrize("case", sorted(_floats()))
def test_numeric_levels_are_named_as_their_floats_one_by_one(case):
    values = _floats()[case]
    assert _canonical(FloatLevels(values)) == _item_by_item(values)
    bulk = tagged_float_runs(values)
    # whole numbers below 10**16 in bulk; anything else by repr
    assert (bulk is None) == (case == "fractions")
    assert FloatLevels(values) == FloatLevels(values.copy())


def _labels(m: int) -> list[str]:
    # 0 to 27 bytes (up to four payload words), non-ASCII, a NUL byte,
    # the empty string, and labels that are prefixes of others
    out = [f"c{i}" * (1 + i % 4) for i in range(m)]
    for i in range(0, m, 97):
        out[i] = f"é{i}€"
    out[5], out[6], out[7] = "", "c1\0", "c1\0\0"
    return out


def _arrow_column(labels: list[str], n: int, seed: int) -> pd.Series:
    rng = np.random.default_rng(seed)
    values = np.asarray(labels + ["zz", "c", "é"], dtype=object)
    x = pd.Series(values[rng.integers(0, len(values), size=n)], dtype="str")
    x[::53] = None  # missing values: in no level
    return x


@pytest.fixture(params=["numpy", "arrow"])
def lookup(request, monkeypatch):
    """Each way :func:`arrow_str_codes` looks values up: by numpy hashes
    (every number of levels, the values in chunks of 1000) or Arrow's."""
    if request.param == "numpy":
        monkeypatch.setattr(cells, "BULK_LEVELS", 1)
        monkeypatch.setattr(cells, "CHUNK", 1000)
    else:
        monkeypatch.setattr(cells, "BULK_LEVELS", 10**9)
    return request.param


@pytest.mark.parametrize("levels", ["all", "shorter", "longer"])
def test_string_levels_are_found_as_value_by_value(levels, lookup):
    """The values' and the levels' longest labels differ (one word or
    several): equal strings are found whatever is beside them."""
    labels = _labels(4000)
    x = _arrow_column(labels, 20000, 1)
    if levels == "shorter":  # at most 2 words, the values' up to 4
        labels = [v for v in labels if len(v.encode()) <= 12] + ["zz"]
    elif levels == "longer":  # values of at most 1 word
        x = x[(x.str.len() <= 5) | x.isna()].reset_index(drop=True)
    bulk = cells.arrow_str_codes(x, labels, "x")
    plain = cells._codes_in(x.astype(object), labels, name="x")
    np.testing.assert_array_equal(bulk, plain)
    assert bulk.dtype == np.int16
    found = bulk[bulk >= 0]
    assert len(found) > len(x) // 4
    assert (bulk == -1).sum() > len(x) // 53  # missing and undeclared


def test_levels_that_hash_alike_fall_back_and_repeats_are_refused(
    monkeypatch,
):
    monkeypatch.setattr(cells, "BULK_LEVELS", 1)
    labels = _labels(500)
    x = _arrow_column(labels, 3000, 2)
    want = cells._codes_in(x.astype(object), labels, name="x")
    # every label hashing alike: the look-up is Arrow's, the codes equal
    monkeypatch.setattr(
        StrLabels, "hashes", lambda self: np.zeros(len(self), np.uint64)
    )
    np.testing.assert_array_equal(cells.arrow_str_codes(x, labels, "x"), want)
    for repeated in (labels + [labels[9]], ["a", "b", "a"]):
        with pytest.raises(PlotninePrivateError, match="given twice"):
            cells.arrow_str_codes(x, repeated, "x")
    monkeypatch.undo()
    for bulk in (1, 10**9):
        monkeypatch.setattr(cells, "BULK_LEVELS", bulk)
        with pytest.raises(PlotninePrivateError, match="'a' is given twice"):
            cells.arrow_str_codes(x, ["a", "b", "a"], "x")


def _charged(frame, levels, seed=5):
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        table = dp_table(frame, "x", eps=1.0, seed=seed, levels=levels)
    finally:
        engine.set_charge_hook(previous)
    (charge,) = seen
    return table, charge


def test_a_table_of_string_levels_releases_the_plain_paths_numbers(lookup):
    """Arrow strings with ``levels=`` (the bulk path) and the same
    strings as Python objects (value by value): one release."""
    labels = _labels(3000)
    x = _arrow_column(labels, 9000, 3)
    assert isinstance(x.dtype, pd.StringDtype)
    fast, a = _charged(pd.DataFrame({"x": x}), labels)
    current_session().sources.clear()  # the same data: no reuse warning
    plain, b = _charged(pd.DataFrame({"x": x.astype(object)}), labels)
    assert pd.api.types.is_object_dtype(
        pd.DataFrame({"x": x.astype(object)})["x"]
    )
    pd.testing.assert_frame_equal(fast, plain)
    assert fast["x"].tolist() == labels
    assert (a.identity, a.cells, a.digest) == (b.identity, b.cells, b.digest)


def test_neighbouring_tables_of_bulk_levels_differ_in_counts_only(lookup):
    """One record changed: the same rows, labels, dtypes and release
    identity; only the noisy counts differ (str and int levels)."""
    labels = _labels(2000)
    x = _arrow_column(labels, 6000, 4)
    ints = list(range(-3, 1997))
    k = np.random.default_rng(5).integers(-3, 1997, size=6000)
    for frame, levels in (
        (pd.DataFrame({"x": x}), labels),
        (pd.DataFrame({"x": k}), ints),
    ):
        other = frame.copy()
        other.loc[17, "x"] = levels[3]  # one record changed
        current_session().sources.clear()
        t1, c1 = _charged(frame, levels, seed=8)
        current_session().sources.clear()
        t2, c2 = _charged(other, levels, seed=8)
        assert list(t1.dtypes) == list(t2.dtypes)
        assert t1["x"].tolist() == t2["x"].tolist() == list(levels)
        assert (c1.identity, c1.cells) == (c2.identity, c2.cells)
        assert c1.digest != c2.digest
        assert (t1["count"] != t2["count"]).mean() > 0.5
