"""Records to cells: bin codes, chunking and the memory-lean layout.

The binned families assign records to public bins a chunk at a time, in
the smallest integer type, with arithmetic on equal-width breaks; these
tests pin that the answers are exactly those of a plain ``searchsorted``
on every edge, and that a private layer's panel column is one byte a
record.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, facet_wrap, geom_bar, geom_histogram, ggplot

import plotnine_private as pp
from plotnine_private import cells
from plotnine_private.stats.domains import bin_index


def _reference(values, breaks, closed, clamp):
    """Bin codes the direct way (one searchsorted, no chunks)."""
    nb = len(breaks) - 1
    if closed == "right":
        idx = np.searchsorted(breaks, values, side="left") - 1
        idx[values == breaks[0]] = 0
    else:
        idx = np.searchsorted(breaks, values, side="right") - 1
        idx[values == breaks[-1]] = nb - 1
    if clamp:
        return np.clip(idx, 0, nb - 1)
    idx[(idx < 0) | (idx >= nb)] = -1
    return idx


@pytest.mark.parametrize("closed", ["right", "left"])
@pytest.mark.parametrize("clamp", [False, True])
def test_bin_index_equals_searchsorted_on_every_edge(closed, clamp):
    rng = np.random.default_rng(7)
    for trial in range(60):
        lo = rng.normal() * 10
        nb = int(rng.integers(1, 300))
        width = rng.exponential() * 0.37
        breaks = (
            np.linspace(lo, lo + width * nb, nb + 1)
            if trial % 2
            else lo + width * np.arange(nb + 1)
        )
        values = np.concatenate(
            [
                rng.uniform(lo - 1, breaks[-1] + 1, 500),
                breaks,
                np.nextafter(breaks, np.inf),
                np.nextafter(breaks, -np.inf),
                [np.inf, -np.inf],
            ]
        )
        got = bin_index(values, breaks, closed, clamp)
        want = _reference(values, breaks, closed, clamp)
        np.testing.assert_array_equal(got, want)


def test_bin_index_uneven_breaks_and_nan():
    breaks = np.array([0.0, 1.0, 5.0, 5.5, 20.0])
    values = np.array([0.0, 1.0, 1.0001, 5.5, 19.9, 20.0, 21.0, np.nan])
    np.testing.assert_array_equal(
        bin_index(values, breaks, "right", False),
        [0, 0, 1, 2, 3, 3, -1, -1],
    )
    # clamped: out-of-range values go to the edge bins, NaN nowhere
    np.testing.assert_array_equal(
        bin_index(values, breaks, "left", True),
        [0, 1, 1, 3, 3, 3, 3, -1],
    )


def test_codes_are_small_and_chunked(monkeypatch):
    monkeypatch.setattr(cells, "CHUNK", 7)
    values = np.linspace(-1, 11, 101)
    codes = bin_index(values, np.arange(11.0), "right", False)
    assert codes.dtype == np.int8
    np.testing.assert_array_equal(
        codes, _reference(values, np.arange(11.0), "right", False)
    )
    wide = bin_index(values, np.linspace(-1, 11, 1001), "right", False)
    assert wide.dtype == np.int16


def test_small_codes_types():
    assert cells.small_codes(np.array([0, 1]), 100).dtype == np.int8
    assert cells.small_codes(np.array([0, 1]), 1000).dtype == np.int16
    assert cells.small_codes(np.array([0, 1]), 10**6).dtype == np.int32


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]"])
def test_arrow_strings_find_their_declared_levels_as_objects_do(dtype):
    """Arrow-backed strings are looked up among str levels in Arrow: the
    codes the value-by-value path gives an object column of them
    (missing and undeclared values -1), in the smallest type."""
    pytest.importorskip("pyarrow")
    values = ["b", None, "z", "a", "b", "4", "a"]
    levels = ["a", "b", "4", "c"]
    arrow = pd.Series(values, dtype=dtype)
    assert cells.arrow_str_codes(arrow, levels, "x") is not None
    got = cells._codes_in(arrow, levels)
    want = cells._codes_in(pd.Series(values, dtype=object), levels)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, want)
    assert got.tolist() == [1, -1, -1, 0, 1, 2, 0]
    # levels that are not all str take the general path: "4" is not 4
    assert cells.arrow_str_codes(arrow, ["a", 4], "x") is None
    assert cells._codes_in(arrow, ["a", 4]).tolist() == [
        -1, -1, -1, 0, -1, -1, 0,
    ]  # fmt: skip
    with pytest.raises(pp.PlotninePrivateError, match="'a' is given twice"):
        cells._codes_in(arrow, ["a", "b", "a"], "x")


def test_combined_codes_equal_the_int64_arithmetic():
    """Codes combined in their small types, with the one-comparison
    range test, equal the int64 arithmetic (outside codes clipped to 0,
    levels of one size skipped) on random dimensions of every size,
    with codes outside and inside, of three integer types."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        dims = []
        for _ in range(int(rng.integers(1, 4))):
            size = int(rng.integers(0, 5))
            dtype = rng.choice([np.int8, np.int16, np.int64])
            codes = rng.integers(-1, size + 2, 40).astype(dtype)
            if rng.random() < 0.5:  # every code inside
                codes = np.clip(codes, 0, max(size - 1, 0)).astype(dtype)
            dims.append(cells.Dimension("d", codes, [], range(size), True))
        code, bad = cells.combined_codes(dims)
        want, want_bad = np.zeros(40, np.int64), np.zeros(40, bool)
        for d in dims:
            c = d.codes.astype(np.int64)
            want_bad |= (c < 0) | (c >= d.size)
            want = want * max(d.size, 1) + np.where(c < 0, 0, c)
        np.testing.assert_array_equal(code, want)
        np.testing.assert_array_equal(bad, want_bad)


def _door_data(plot):
    """The rows a private layer hands to its stat at the door."""
    seen = {}
    stat = plot.layers[0].stat
    original = type(stat).release_at_door

    def spy(self, data, door):
        seen["data"] = data.copy()
        return original(self, data, door)

    type(stat).release_at_door = spy
    try:
        pp.layer_data(plot)
    finally:
        type(stat).release_at_door = original
    return seen["data"]


def test_private_panel_column_is_one_byte_a_record():
    d = pd.DataFrame(
        {"x": np.arange(1000.0) % 10, "f": pd.Categorical(np.arange(1000) % 3)}
    )
    plain = ggplot(d, aes("x")) + geom_histogram(
        stat="bin_dp", bins=10, limits=(0, 10), eps=1, seed=1
    )
    rows = _door_data(plain)
    assert isinstance(rows["PANEL"].dtype, pd.CategoricalDtype)
    assert rows["PANEL"].cat.codes.dtype == np.int8
    assert (rows["PANEL"].cat.codes == 0).all()

    faceted = (
        ggplot(d, aes("x"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
        + facet_wrap("f")
    )
    rows = _door_data(faceted)
    assert rows["PANEL"].cat.codes.dtype == np.int8
    # plotnine orders the rows by panel and keeps their index
    np.testing.assert_array_equal(
        rows["PANEL"].cat.codes.to_numpy(), rows.index.to_numpy() % 3
    )


@pytest.mark.parametrize(
    ("stat", "geom_kwargs"),
    [
        ("count_dp", {"eps": 1, "seed": 3}),
        ("count_ckm", {"ptable": pp.create_cnt_ptable(D=2, V=1.05)}),
    ],
)
def test_one_variable_on_two_aesthetics_is_one_group_dimension(
    stat, geom_kwargs
):
    from plotnine.data import mpg

    cars = pp.add_record_keys(mpg, name="rk", rng_seed=5)
    cars["drv"] = pd.Categorical(cars["drv"], categories=["4", "f", "r"])
    cars["year"] = pd.Categorical(cars["year"], categories=[1999, 2008])
    mapping = {"fill": "drv", "colour": "drv"}
    if stat.endswith("ckm"):
        mapping["rkey"] = "rk"
    twice = ggplot(cars, aes("year", **mapping)) + geom_bar(
        stat=stat, **geom_kwargs
    )
    mapping.pop("colour")
    once = ggplot(cars, aes("year", **mapping)) + geom_bar(
        stat=stat, **geom_kwargs
    )
    both, single = pp.layer_data(twice), pp.layer_data(once)
    # 2 years x 3 drive types, not x 3 again
    assert len(both) == len(single) == 6
    assert (both["fill"] == both["color"]).all()
    if stat.endswith("ckm"):
        # CKM noise follows the records: the same cells, the same numbers
        np.testing.assert_array_equal(both["count"], single["count"])
    assert pp.privacy_report(twice).table["cells"].iloc[0] == 6
