"""A table over a large declared domain is named and released as the
plain, value-by-value definitions name and release it (issue 23: the
fast paths encode each level once, in one buffer)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from cellname_reference import words_by_definition

import plotnine_private.cells as cells_mod
import plotnine_private.families.levels as levels_mod
import plotnine_private.mechanisms.naming.cellnames as cellnames
import plotnine_private.mechanisms.streams.places as place_streams
import plotnine_private.mechanisms.streams.randomness as randomness
import plotnine_private.mechanisms.streams.versions as streams
import plotnine_private.tables as tables_mod
from plotnine_private import dp_table
from plotnine_private.mechanisms.naming.cellnames import (
    cell_words,
    cell_words_at,
)
from plotnine_private.mechanisms.streams.randomness import _canonical

M = 10**5


def _labels(m: int) -> list[str]:
    # mostly ASCII, of 1 to 17 bytes; every 97th not ASCII (2-3 byte
    # characters), so both ways of finding byte lengths run
    out = [f"c{i}" * (1 + i % 3) for i in range(m)]
    for i in range(0, m, 97):
        out[i] = f"é{i}€"
    return out


def _cell_words_at_by_definition(columns, rows):
    taken = [[col[i] for i in r.tolist()] for col, r in zip(columns, rows)]
    return words_by_definition(*taken)


def test_levels_named_once_equal_every_cell_named_by_definition():
    # the namer has no path that depends on the number of cells (unlike
    # the table's chunked passes below): 2 x 10^4 cells take every path
    # that 10^5 take, and the reference, value by value, takes a fifth
    # of the time
    m = 2 * 10**4
    rng = np.random.default_rng(23)
    labels = _labels(m)
    panels = [(), ("a", 1.5), ("a|b",)]
    numbers = np.array([0.5, 4.0, 2.0**60])
    rows = [
        rng.integers(0, 3, size=m),
        rng.permutation(m),
        rng.integers(0, 3, size=m),
    ]
    got = cell_words_at([panels, labels, numbers], rows)
    want = _cell_words_at_by_definition([panels, labels, numbers], rows)
    assert got.tolist() == want.tolist()
    # a column whose widest level no cell takes: rows stay as narrow as
    # the cells named together
    short = cell_words_at([["x", "y" * 300]], [np.zeros(3, dtype=int)])
    assert short.tolist() == cell_words(["x"] * 3).tolist()


def test_a_large_label_domain_is_encoded_as_item_by_item():
    labels = tuple(_labels(M))
    want = b"t:" + b"".join(
        len(c).to_bytes(4, "little") + c
        for c in (b"s:" + v.encode() for v in labels)
    )
    assert _canonical(labels) == want == _canonical(list(labels))


def _plain(monkeypatch):
    """Switch every fast path off: value-by-value names, item-by-item
    identities, and the cells' content taken per cell before naming."""
    monkeypatch.setattr(cellnames, "only_str", lambda values: False)
    monkeypatch.setattr(randomness, "only_str", lambda values: False)
    monkeypatch.setattr(
        place_streams, "cell_words_at", _cell_words_at_by_definition
    )


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("facets", [None, "f"])
def test_a_table_of_1e5_declared_cells_draws_the_plain_paths_numbers(
    monkeypatch, facets, version
):
    # version 2 names every cell by its words; version 3 names a public
    # domain's cells by place and hashes each level once
    streams.use_stream_version(version)  # the test's session restores it
    rng = np.random.default_rng(5)
    labels = _labels(M)
    n = 3 * M
    df = pd.DataFrame(
        {
            "x": pd.Categorical.from_codes(rng.integers(0, M, size=n), labels),
            "f": pd.Categorical.from_codes(
                rng.integers(0, 2, size=n), ["u", "v"]
            ),
        }
    )
    fast = dp_table(df, "x", facets=facets, eps=1.0, seed=7)
    with monkeypatch.context() as m:
        _plain(m)
        plain = dp_table(df, "x", facets=facets, eps=1.0, seed=7)
    pd.testing.assert_frame_equal(fast, plain)
    # the noise is there (not the true counts), and differs by seed
    true = df.groupby(["f", "x"] if facets else ["x"], observed=False).size()
    assert (fast["count"].to_numpy() != true.to_numpy()).mean() > 0.5
    other = dp_table(df, "x", facets=facets, eps=1.0, seed=8)
    assert not fast["count"].equals(other["count"])


def _plain_numbers(monkeypatch):
    """Switch the numeric fast paths off: float levels looked up and
    named value by value, their identity item by item, each shown
    level found by its label."""
    monkeypatch.setattr(cells_mod, "_float_levels", lambda levels: None)
    # numeric levels sorted one float at a time, no float array kept
    monkeypatch.setattr(levels_mod, "as_floats", lambda levels: None)
    monkeypatch.setattr(
        randomness,
        "_prefixed_floats",
        lambda values: b"".join(
            len(c).to_bytes(4, "little") + c
            for c in map(randomness._canonical, values)
        ),
    )
    monkeypatch.setattr(tables_mod, "_declared_numbers", _numbers_by_label)


def _numbers_by_label(levels, xdim, at, family):
    xs = np.asarray(xdim.values, dtype=object)[at]
    back = {tables_mod.level_label(v): v for v in levels}
    return np.array(
        [back.get(tables_mod.level_label(v), v) for v in xs], object
    )


@pytest.mark.parametrize("version", [2, 3, 4])
@pytest.mark.parametrize("kind", ["int", "float", "range"])
def test_a_table_of_numeric_levels_draws_the_plain_paths_numbers(
    monkeypatch, kind, version
):
    """Numeric levels (ints, or floats with fractions, a negative zero
    and a huge value) of a numeric column, with missing and undeclared
    values: the bulk lookup, names and identity release the numbers and
    labels of the value-by-value paths."""
    streams.use_stream_version(version)  # the test's session restores it
    rng = np.random.default_rng(6)
    m = 3000
    if kind in ("int", "range"):
        levels: Any = range(-5, m - 5)
        if kind == "int":
            levels = list(levels)
        values = rng.integers(-10, m, size=4 * m).astype(float)
    else:
        levels = [i / 4 for i in range(1, m - 1)] + [-0.0, 1e300]
        values = rng.choice([*levels[:50], 0.0, 0.3, 1e300], size=4 * m)
    values[::97] = np.nan
    df = pd.DataFrame({"x": values})
    fast = dp_table(df, "x", eps=1.0, seed=7, levels=levels)
    with monkeypatch.context() as mp:
        _plain_numbers(mp)
        plain = dp_table(df, "x", eps=1.0, seed=7, levels=levels)
    pd.testing.assert_frame_equal(fast, plain)
    assert fast["x"].tolist() == sorted(levels, key=float)
    # the noise is there: most counts are not the true ones
    true = pd.Series(values).value_counts()
    got = pd.Series(fast["count"].to_numpy(), index=fast["x"].astype(float))
    both = true.index.intersection(got.index)
    assert len(both) > 40
    assert (got[both].to_numpy() != true[both].to_numpy()).mean() > 0.5


@pytest.mark.parametrize(
    ("categories", "levels", "codes"),
    [
        (["a", "b"], ["a", "b"], [1, 0, 1]),  # the same: codes as they are
        (["b", "a"], ["a", "b"], [0, 1, 0]),  # reordered: remapped
        ([4.0, 5.0], [4, 5], [1, 0, 1]),  # 4 and 4.0 are one level
        (["4.0", "5.0"], [4.0, 5.0], [-1, -1, -1]),  # text is not a number
    ],
)
def test_declared_categories_find_their_levels_by_cell_name(
    categories, levels, codes
):
    series = pd.Series(
        pd.Categorical.from_codes([1, 0, 1], categories=categories)
    )
    assert cells_mod._codes_in(series, levels).tolist() == codes


def test_the_cells_digest_ignores_order_and_constant_columns_change_nothing():
    from plotnine_private.mechanisms.release.engine import (
        CellTable,
        data_digest,
    )

    rng = np.random.default_rng(1)
    words = rng.integers(0, 4, size=(500, 3)).astype(np.uint64)
    words[:, 0] = 7  # a tag every cell shares
    words = np.unique(words, axis=0)
    n = rng.integers(0, 9, size=len(words))
    order = np.lexsort(words.T[::-1])  # by definition: every column
    want = data_digest(words[order], n[order])
    shuffled = rng.permutation(len(words))
    got = CellTable(words[shuffled], n[shuffled]).digest()
    assert got == want == CellTable(words, n).digest()
    # a changed count changes it
    n2 = n.copy()
    n2[3] += 1
    assert CellTable(words, n2).digest() != want


def test_arrow_label_check_matches_the_object_check():
    # declared Arrow-backed string levels are compared in Arrow; the
    # answer is the object comparison's, non-strings included
    from plotnine_private.cells import _same_values

    cats = pd.Index(["a", "b", "é"], dtype="str")
    for content, want in (
        (["a", "b", "é"], True),
        (["a", "b", "e"], False),
        (["a", "b", None], False),
        (["a", 4, "é"], False),
        ([np.str_("a"), "b", "é"], True),
    ):
        arr = np.empty(3, dtype=object)
        arr[:] = content
        assert _same_values(cats, arr) is want
        assert bool((cats.to_numpy(dtype=object) == arr).all()) is want
