"""A table over 10**5 declared labels releases what it released before
its labels were kept as buffers (issue 23): the same counts, labels,
dtypes, release identity, cells' name and data digest, for labels held
as Arrow strings, Python strings, objects, integers, polars Enums and
``levels=``. The pinned fingerprints were taken on the value-by-value
code (commit 2b45fe4), before the buffer paths existed."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from cellname_reference import words_by_definition

import plotnine_private.cells as cells_mod
import plotnine_private.mechanisms.release as engine
import plotnine_private.tables as tables
from plotnine_private import ckm_table, create_cnt_ptable, dp_table
from plotnine_private.mechanisms.cellnames import (
    StrLabels,
    _Dense,
    _Ragged,
    cell_words,
    cell_words_at,
)
from plotnine_private.mechanisms.randomness import (
    _canonical,
    _canonical_chunks,
)

M = 10**5


def _labels(m: int) -> list[str]:
    # 1 to 17 bytes (one to three payload words); every 97th is not
    # ASCII, every 1000th is empty
    out = [f"c{i}" * (1 + i % 3) for i in range(m)]
    for i in range(0, m, 97):
        out[i] = f"é{i}€"
    for i in range(5, m, 1000):
        out[i] = "" if i == 5 else f"{i}\0"
    return out


def _codes(m: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, m, size=n)


def _categorical(labels, dtype=None, codes=None) -> pd.Categorical:
    index = pd.Index(labels, dtype=dtype)
    return pd.Categorical.from_codes(
        _codes(len(labels), 3 * len(labels), 1) if codes is None else codes,
        dtype=pd.CategoricalDtype(index),
    )


def _frame(case: str):
    labels = _labels(M)
    if case == "arrow_str":  # pandas' default string categories
        return pd.DataFrame({"x": _categorical(labels)}), {}
    if case == "python_str":
        dtype = pd.StringDtype("python")
        return pd.DataFrame({"x": _categorical(labels, dtype)}), {}
    if case == "arrow_dtype":
        dtype = pd.ArrowDtype(pa.large_string())
        return pd.DataFrame({"x": _categorical(labels, dtype)}), {}
    if case == "object":
        return pd.DataFrame({"x": _categorical(labels, object)}), {}
    if case == "mixed_object":  # strings, a number and a tuple
        mixed = list(labels)
        mixed[7], mixed[8] = 7.5, ("t", 1)
        return pd.DataFrame({"x": _categorical(mixed, object)}), {}
    if case == "integer":
        ints = list(range(0, 3 * M, 3))
        return pd.DataFrame({"x": _categorical(ints)}), {}
    if case == "levels_str":  # a plain string column, levels given
        x = np.asarray(labels, dtype=object)[_codes(M, 3 * M, 2)]
        return pd.DataFrame({"x": x}), {"levels": labels}
    if case == "levels_int":
        x = _codes(M, 3 * M, 3) * 2
        return pd.DataFrame({"x": x}), {"levels": list(range(0, 2 * M, 2))}
    if case == "polars_enum":
        pl = pytest.importorskip("polars")
        codes = _codes(M, 3 * M, 4)
        x = pl.Series("x", np.asarray(labels, dtype=object)[codes])
        return pl.DataFrame({"x": x.cast(pl.Enum(labels))}), {}
    if case == "groups_facets":
        codes = _codes(M, 3 * M, 5)
        rng = np.random.default_rng(6)
        frame = pd.DataFrame(
            {
                "x": _categorical(labels, codes=codes),
                "g": pd.Categorical.from_codes(
                    rng.integers(0, 2, size=3 * M), ["p", "q"]
                ),
                "f": pd.Categorical.from_codes(
                    rng.integers(0, 2, size=3 * M), ["u", "v|w"]
                ),
            }
        )
        return frame, {"groups": "g", "facets": "f"}
    raise ValueError(case)


CASES = [
    "arrow_str",
    "python_str",
    "arrow_dtype",
    "object",
    "mixed_object",
    "integer",
    "levels_str",
    "levels_int",
    "polars_enum",
    "groups_facets",
]


def fingerprint(case: str) -> dict[str, str]:
    """The released table's counts, labels and dtypes, and the release's
    identity, cells' name and keyed data digest, each as a short hash."""
    frame, kw = _frame(case)
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        table = dp_table(frame, "x", eps=1.0, seed=23, **kw)
    finally:
        engine.set_charge_hook(previous)
    (charge,) = seen

    def short(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()[:16]

    labels = b"".join(
        repr(table[c].tolist()).encode() for c in table.columns[:-1]
    )
    return {
        "dtypes": " ".join(
            f"{c}:{table[c].dtype!r}:{type(table[c].array).__name__}"
            for c in table.columns
        ),
        "counts": short(table["count"].to_numpy().tobytes()),
        "labels": short(labels),
        "identity": charge.identity,
        "cells": charge.cells,
        "digest": charge.digest,
    }


#: fingerprints taken at 2b45fe4 (every label named value by value)
PINNED = {
    "arrow_str": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "4542ba4c0233b757",
        "labels": "fecfd4d1762aa7e5",
        "identity": "c5225802d06f01597bb2a580",
        "cells": "1bf7be40ff92ccf5d8df4de9",
        "digest": "7265d3512019550f0b7cbb0b631e48f7",
    },
    "python_str": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "4542ba4c0233b757",
        "labels": "fecfd4d1762aa7e5",
        "identity": "c5225802d06f01597bb2a580",
        "cells": "1bf7be40ff92ccf5d8df4de9",
        "digest": "7265d3512019550f0b7cbb0b631e48f7",
    },
    "arrow_dtype": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "4542ba4c0233b757",
        "labels": "fecfd4d1762aa7e5",
        "identity": "c5225802d06f01597bb2a580",
        "cells": "1bf7be40ff92ccf5d8df4de9",
        "digest": "7265d3512019550f0b7cbb0b631e48f7",
    },
    "object": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "4542ba4c0233b757",
        "labels": "fecfd4d1762aa7e5",
        "identity": "c5225802d06f01597bb2a580",
        "cells": "1bf7be40ff92ccf5d8df4de9",
        "digest": "7265d3512019550f0b7cbb0b631e48f7",
    },
    "mixed_object": {
        "dtypes": (
            "x:dtype('O'):NumpyExtensionArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "cac37f68478c7994",
        "labels": "b991c050b4a1de70",
        "identity": "c6fd2dc9e7199fe1abeaea80",
        "cells": "5e6d204e206c907aa469b506",
        "digest": "6f277d124337217b5655f48504873b1d",
    },
    "integer": {
        "dtypes": (
            "x:dtype('O'):NumpyExtensionArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "f703490f53798edd",
        "labels": "60a2aeddfcb3b743",
        "identity": "791bc9a49eaaf3f6a32b4408",
        "cells": "35910125f5a74d3071eb536e",
        "digest": "c4cc96f12281653b4299fef08d94aec3",
    },
    "levels_str": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "785cbad317f66e98",
        "labels": "fecfd4d1762aa7e5",
        "identity": "c5225802d06f01597bb2a580",
        "cells": "1bf7be40ff92ccf5d8df4de9",
        "digest": "f88d7200aa8c0dcc31e7e59c1699d649",
    },
    "levels_int": {
        "dtypes": (
            "x:dtype('O'):NumpyExtensionArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "eb967582fe15872e",
        "labels": "4ad8c9dbf5eaa63f",
        "identity": "4029b3ddc9bfe34d4a1740b8",
        "cells": "4795b9369b7fe5cbf94d45a4",
        "digest": "d079b878aa891ed05be350f03c50b41a",
    },
    "polars_enum": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "4672d9716ba5dc7d",
        "labels": "fecfd4d1762aa7e5",
        "identity": "c5225802d06f01597bb2a580",
        "cells": "1bf7be40ff92ccf5d8df4de9",
        "digest": "58e44a1d61dbd577d2f62b7fb32b23e7",
    },
    "groups_facets": {
        "dtypes": (
            "f:<StringDtype(na_value=nan)>:ArrowStringArray "
            "g:<StringDtype(na_value=nan)>:ArrowStringArray "
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "371b9a0c313b6b94",
        "labels": "b457f99f17c8f792",
        "identity": "86b91a00217a3ad210d27f48",
        "cells": "df863688f4c95b1a0877aee0",
        "digest": "c44b9d861ecbe2726dd9c460a410e575",
    },
}


@pytest.mark.parametrize("case", CASES)
def test_a_table_of_1e5_declared_labels_releases_what_it_did(case):
    assert fingerprint(case) == PINNED[case]


@pytest.mark.parametrize(
    ("case", "buffered"),
    [
        ("arrow_str", True),
        ("python_str", True),
        ("arrow_dtype", True),
        ("object", True),
        ("polars_enum", True),
        ("groups_facets", True),
        ("mixed_object", False),  # not all strings: value by value
        ("integer", False),
    ],
)
def test_declared_string_labels_take_the_buffer_path(case, buffered):
    # the pins above hold for both paths: this says which one ran
    frame, _ = _frame(case)
    data = frame.to_pandas() if hasattr(frame, "to_arrow") else frame
    dim = tables._declared_labels(frame, data, "x")
    assert (dim is not None) is buffered
    if buffered:
        assert isinstance(dim.values, StrLabels)
        assert dim.values.tolist() == _labels(M)
        assert dim.codes.tolist() == data["x"].cat.codes.tolist()


def test_a_polars_enum_in_another_order_is_not_read_by_its_codes():
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(
        {"x": pl.Series(["b", "a", "b"]).cast(pl.Enum(["b", "a"]))}
    )
    data = frame.to_pandas()
    data["x"] = data["x"].cat.reorder_categories(["a", "b"])
    assert tables._declared_labels(frame, data, "x") is None
    assert dp_table(frame, "x", eps=1.0, seed=1)["x"].tolist() == ["b", "a"]


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
        assert cells_mod.str_labels(values) == want
    # a slice of an Arrow array starts inside its buffers
    assert cells_mod.str_labels(pa.array(labels).slice(5, 9)) == StrLabels.of(
        labels[5:14]
    )
    for values in (
        pd.Index(["a", None], dtype=object),
        pd.Index(["a", 1], dtype=object),
        pd.Index([1, 2]),
        pd.Index(["a", None], dtype="str"),
    ):
        assert cells_mod.str_labels(values) is None


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
            assert np.array_equal(engine._row_order(rows), want), name
    # ties (equal rows) are in row order, as lexsort has them
    tied = np.repeat(rng.integers(0, 9, size=(50, 2)), 3, axis=0)
    tied = tied[rng.permutation(len(tied))].astype(np.uint64)
    assert np.array_equal(engine._row_order(tied), np.lexsort(tied.T[::-1]))
    for few in (np.zeros((0, 2)), np.ones((1, 2)), np.ones((5, 1))):
        few = few.astype(np.uint64)
        assert np.array_equal(engine._row_order(few), np.arange(len(few)))


def test_neighbouring_tables_of_buffered_labels_differ_in_counts_only():
    frame, _ = _frame("groups_facets")
    other = frame.copy()
    other.loc[17, "x"] = other["x"].cat.categories[5]  # one record changed
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        a = dp_table(frame, "x", groups="g", facets="f", eps=1.0, seed=4)
        engine._SOURCES.clear()  # two sessions: no reuse warning
        b = dp_table(other, "x", groups="g", facets="f", eps=1.0, seed=4)
    finally:
        engine.set_charge_hook(previous)
    assert list(a.columns) == list(b.columns)
    assert list(a.dtypes) == list(b.dtypes)
    for c in ("f", "g", "x"):
        assert a[c].tolist() == b[c].tolist()
    assert seen[0].identity == seen[1].identity
    assert seen[0].cells == seen[1].cells
    assert seen[0].digest != seen[1].digest  # the data enter the noise
    assert (a["count"] != b["count"]).mean() > 0.5


#: ckm_table at 2b45fe4: counts, labels, dtypes, identity, cells' name
#: (the charge's digest is keyed by the session's secret: not pinned)
PINNED_CKM = {
    "arrow_str": (
        "d5af422ce0a10aea",
        "fecfd4d1762aa7e5",
        "x:<StringDtype(na_value=nan)> count:dtype('int64')",
        "a2eb39ea779175c421ec8442",
        "1bf7be40ff92ccf5d8df4de9",
    ),
    "groups_facets": (
        "8676690ac572ec91",
        "b457f99f17c8f792",
        "f:<StringDtype(na_value=nan)> g:<StringDtype(na_value=nan)> "
        "x:<StringDtype(na_value=nan)> count:dtype('int64')",
        "f6616c5ea7d2dbef445ed702",
        "df863688f4c95b1a0877aee0",
    ),
}


@pytest.mark.parametrize("case", sorted(PINNED_CKM))
def test_a_ckm_table_of_1e5_declared_labels_releases_what_it_did(case):
    frame, kw = _frame(case)
    frame = frame.assign(rk=np.random.default_rng(9).random(len(frame)))
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        table = ckm_table(
            frame,
            "x",
            rkey="rk",
            ptable=create_cnt_ptable(D=2, V=1.05, js=1),
            **kw,
        )
    finally:
        engine.set_charge_hook(previous)
    got = (
        hashlib.sha256(table["count"].to_numpy().tobytes()).hexdigest()[:16],
        hashlib.sha256(
            b"".join(
                repr(table[c].tolist()).encode() for c in table.columns[:-1]
            )
        ).hexdigest()[:16],
        " ".join(f"{c}:{table[c].dtype!r}" for c in table.columns),
        seen[0].identity,
        seen[0].cells,
    )
    assert got == PINNED_CKM[case]
