"""Declared string labels kept as one UTF-8 buffer (``StrLabels``, issue
23) are named as their strings are, value by value: the cells' words
(dense and ragged rows, among other columns, at the buffer's end), the
identity's bytes, the query hashed as chunks; Arrow, pandas and polars
strings are read into a buffer, other values are refused; and the data
digest's row order is ``np.lexsort``'s."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from cellname_reference import words_by_definition

import plotnine_private.mechanisms.naming.row_order as ordering
import plotnine_private.tables as tables
from plotnine_private.mechanisms.naming.cellnames import (
    StrLabels,
    _Dense,
    _Ragged,
    cell_words,
    cell_words_at,
)
from plotnine_private.mechanisms.streams.randomness import (
    _canonical,
    _canonical_chunks,
)


def _odd_labels() -> list[str]:
    # every length from 0 to 24 bytes (0 to 3 payload words), non-ASCII,
    # NUL bytes, and a last label that ends the buffer mid-word
    out = ["", "a", "\0", "é", "ab\0", "€" * 3, "x" * 8, "y" * 9]
    out += [f"{i % 10}" * (i % 25) for i in range(1, 200)]
    return out + ["z" * 13]


@pytest.mark.parametrize("long", [False, True])
def test_labels_in_a_buffer_are_named_as_their_strings(long):
    # dense rows, or ragged words when one label is far longer
    labels = _odd_labels() + (["w" * 3000] if long else [])
    buffered = StrLabels.of(labels)
    assert isinstance(buffered.words(), _Ragged if long else _Dense)
    rows = [np.arange(len(labels))]
    want = words_by_definition(labels)
    assert cell_words_at([buffered], rows).tolist() == want.tolist()
    assert cell_words(labels).tolist() == want.tolist()
    # the identity's bytes: each label as _canonical has it, item by item
    assert buffered.prefixed() == b"".join(
        len(c).to_bytes(4, "little") + c
        for c in (b"s:" + v.encode() for v in labels)
    )
    assert _canonical(buffered) == _canonical(tuple(labels))
    assert buffered.tolist() == labels == list(buffered)
    assert buffered[-1] == labels[-1] and buffered[3] == labels[3]


def test_labels_in_a_buffer_among_other_columns_name_every_cell():
    # panels and numbers around the labels, every cell by definition
    rng = np.random.default_rng(3)
    labels = _odd_labels()
    panels = [(), ("a", 1.5), ("a|b",)]
    numbers = np.array([0.5, 4.0, 2.0**60])
    for columns in (
        [panels, StrLabels.of(labels), numbers],
        [StrLabels.of(labels), panels],
        [numbers, StrLabels.of(labels), StrLabels.of(labels[::-1])],
    ):
        rows = [rng.integers(0, len(col), size=500) for col in columns]
        taken = [
            [list(col)[i] for i in r.tolist()] for col, r in zip(columns, rows)
        ]
        got = cell_words_at(columns, rows)
        assert got.tolist() == words_by_definition(*taken).tolist()


def test_a_few_labels_shorter_than_a_word_read_no_byte_outside():
    for labels in (["a"], ["", "b"], ["ab", "c"], [""], ["é"]):
        got = cell_words_at([StrLabels.of(labels)], [np.arange(len(labels))])
        assert got.tolist() == words_by_definition(labels).tolist()


def test_str_labels_are_read_from_arrow_and_refused_for_other_values():
    labels = _odd_labels()
    want = StrLabels.of(labels)
    for values in (
        pd.Index(labels),
        pd.Index(labels, dtype=pd.StringDtype("python")),
        pd.Index(labels, dtype=pd.ArrowDtype(pa.string())),
        pd.Index(labels, dtype=object),
        pa.chunked_array([labels[:50], labels[50:]]),
        pa.array(labels).slice(0),
    ):
        assert tables.str_labels(values) == want
    # a slice of an Arrow array starts inside its buffers
    assert tables.str_labels(pa.array(labels).slice(5, 9)) == StrLabels.of(
        labels[5:14]
    )
    for values in (
        pd.Index(["a", None], dtype=object),
        pd.Index(["a", 1], dtype=object),
        pd.Index([1, 2]),
        pd.Index(["a", None], dtype="str"),
    ):
        assert tables.str_labels(values) is None


def test_the_query_is_hashed_as_chunks_of_its_canonical_bytes():
    labels = StrLabels.of(_odd_labels())
    query = (
        "count",
        "data",
        (
            ("domain", labels),
            ("groups", (("g", ("p", "q")),)),
            ("big", tuple(range(100))),
            ("words", tuple(f"w{i}" for i in range(70))),
            ("eps", 1.0),
        ),
    )
    assert b"".join(_canonical_chunks(query)) == _canonical(query)
    plain = (*query[:2], (("domain", tuple(_odd_labels())), *query[2][1:]))
    assert _canonical(query) == _canonical(plain)


@pytest.mark.parametrize("seed", range(4))
def test_the_digest_row_order_is_lexsort(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    cases = {
        "narrow": rng.integers(0, 4, size=(n, 4)),
        "wide": rng.integers(0, 2**63, size=(n, 3)) * 2,  # 64-bit ranges
        "packed": np.column_stack(
            [
                np.full(n, 7),
                rng.integers(0, 2**30, size=n),
                rng.integers(0, 2**20, size=n),
                rng.integers(0, 2**40, size=n),
            ]
        ),
    }
    for name, words in cases.items():
        words = words.astype(np.uint64)
        distinct = np.unique(words, axis=0)
        distinct = distinct[rng.permutation(len(distinct))]
        for rows in (words, distinct):
            want = np.lexsort(rows.T[::-1])
            assert np.array_equal(ordering.row_order(rows), want), name
    # ties (equal rows) are in row order, as lexsort has them
    tied = np.repeat(rng.integers(0, 9, size=(50, 2)), 3, axis=0)
    tied = tied[rng.permutation(len(tied))].astype(np.uint64)
    assert np.array_equal(ordering.row_order(tied), np.lexsort(tied.T[::-1]))
    for few in (np.zeros((0, 2)), np.ones((1, 2)), np.ones((5, 1))):
        few = few.astype(np.uint64)
        assert np.array_equal(ordering.row_order(few), np.arange(len(few)))


@pytest.mark.parametrize("seed", range(3))
def test_text_words_are_ordered_by_the_bits_that_vary(seed):
    # labels of 2-7 bytes: their payload words span 56 bits, too many to
    # sort with a row index in one word; the bits that vary (6 of each
    # digit byte, 7 of a letter byte) fit, and give lexsort's order
    rng = np.random.default_rng(seed)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGH"
    labels = [f"c{i}" for i in rng.choice(10**6, size=3000)] + [
        "".join(rng.choice(list(letters), size=int(rng.integers(1, 8))))
        for _ in range(500)
    ]
    rows = cell_words_at(
        [[()], StrLabels.of(labels)],
        [
            np.zeros(len(labels), dtype=np.int64),
            np.arange(len(labels)),
        ],
    )
    rows = np.concatenate([rows, rows[:300]])  # ties: in row order
    rows = rows[rng.permutation(len(rows))]
    keys = [c for c in rows.T[::-1] if (c != c[0]).any()]
    room = 64 - (len(rows) - 1).bit_length()
    spans = sum(int(c.max() - c.min()).bit_length() for c in keys)
    fields = ordering._fields(keys, room)
    assert spans > room and fields is not None
    assert sum(bits for _, bits in fields) <= room
    assert np.array_equal(ordering.row_order(rows), np.lexsort(rows.T[::-1]))


def test_gaps_between_varying_bits_are_filled_narrowest_first():
    # runs 0-1, 3-4 and 8-9: gaps of 1 bit (bit 2) and 3 bits (5-7)
    mask = 0b11_0001_1011
    assert ordering._fewer_runs([mask, None], 0) == [mask, None]
    assert ordering._fewer_runs([mask, None], 3) == [0b11_0001_1111, None]
    assert ordering._fewer_runs([mask], 4) == [0b11_1111_1111]
    words = np.array([0b01_0000_0001, 0b10_0001_1000, 0b00_0000_1011])
    gathered = ordering._gather_bits(words.astype(np.uint64), mask)
    assert gathered.tolist() == [0b01_00_01, 0b10_11_00, 0b00_01_11]


def test_no_labels_name_nothing():
    empty = StrLabels.of([])
    assert len(empty) == 0 and empty.tolist() == []
    assert empty.prefixed() == b"" and _canonical(empty) == _canonical(())
    assert cell_words_at([empty], [np.zeros(0, dtype=int)]).shape[0] == 0
    assert tables.str_labels(pd.Index([], dtype="str")) == empty
