"""A table over 2 * 10**4 declared labels releases what it released before
its labels were kept as buffers (issue 23): the same counts, labels,
dtypes, release identity, cells' name and data digest, for labels held
as Arrow strings, Python strings, objects, integers, polars Enums and
``levels=``. The pinned fingerprints were computed with the value-by-value
code (commit 2b45fe4, on these same 2 * 10**4 labels), before the buffer
paths existed."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import plotnine_private as pp
import plotnine_private.mechanisms.release.engine as engine
import plotnine_private.tables as tables
from plotnine_private import ckm_table, create_cnt_ptable, dp_table
from plotnine_private.mechanisms.naming.cellnames import (
    StrLabels,
)
from plotnine_private.mechanisms.session import current_session

M = 2 * 10**4


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


def fingerprint(case: str, version: int = 2) -> dict[str, str]:
    """The released table's counts, labels and dtypes, and the release's
    identity, cells' name and keyed data digest, each as a short hash,
    under stream ``version`` (the pins below are version 2's)."""
    frame, kw = _frame(case)
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        with pp.use_stream_version(version):
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


#: fingerprints taken at 2b45fe4 (every label named value by value),
#: under stream version 2 (the default then)
PINNED = {
    "arrow_str": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "44d5f178c43667c1",
        "labels": "c6f801ecbbb472a0",
        "identity": "28609106de813690f9c79c5c",
        "cells": "274205eabcf766c505bfc25e",
        "digest": "01d24633f63c53982530343c9cb9f5e3",
    },
    "python_str": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "44d5f178c43667c1",
        "labels": "c6f801ecbbb472a0",
        "identity": "28609106de813690f9c79c5c",
        "cells": "274205eabcf766c505bfc25e",
        "digest": "01d24633f63c53982530343c9cb9f5e3",
    },
    "arrow_dtype": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "44d5f178c43667c1",
        "labels": "c6f801ecbbb472a0",
        "identity": "28609106de813690f9c79c5c",
        "cells": "274205eabcf766c505bfc25e",
        "digest": "01d24633f63c53982530343c9cb9f5e3",
    },
    "object": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "44d5f178c43667c1",
        "labels": "c6f801ecbbb472a0",
        "identity": "28609106de813690f9c79c5c",
        "cells": "274205eabcf766c505bfc25e",
        "digest": "01d24633f63c53982530343c9cb9f5e3",
    },
    "mixed_object": {
        "dtypes": (
            "x:dtype('O'):NumpyExtensionArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "778cb173d4bee4e4",
        "labels": "6e8a8b3f4d974f94",
        "identity": "2178cf3df3cb21d89ae8b9c3",
        "cells": "ab9f1453aa8ed6783d45b9bc",
        "digest": "09870a1f803cac2d69f450471ce698db",
    },
    "integer": {
        "dtypes": (
            "x:dtype('O'):NumpyExtensionArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "42bd304b7b50856c",
        "labels": "c0664caefa3f055f",
        "identity": "0697129bd829445e059ed85d",
        "cells": "f66eafb32a3e1f867c9be5e3",
        "digest": "399530be2015a907fd673aa2c2256df7",
    },
    "levels_str": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "275552b2e64ee6a7",
        "labels": "c6f801ecbbb472a0",
        "identity": "28609106de813690f9c79c5c",
        "cells": "274205eabcf766c505bfc25e",
        "digest": "0dbcef76fb4ddc7e171e7ee89329a036",
    },
    "levels_int": {
        "dtypes": (
            "x:dtype('O'):NumpyExtensionArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "a9cb6a1dda0d7a71",
        "labels": "f4fac98bebe52413",
        "identity": "b7958f9ab501b32547d11ef3",
        "cells": "d7e69668c8679f22864b86b4",
        "digest": "672eb0ec1193fd3d90439cabcacd527f",
    },
    "polars_enum": {
        "dtypes": (
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "a64836bbdb8a628d",
        "labels": "c6f801ecbbb472a0",
        "identity": "28609106de813690f9c79c5c",
        "cells": "274205eabcf766c505bfc25e",
        "digest": "89ff5beff4d8c4a0dbdca01213d07722",
    },
    "groups_facets": {
        "dtypes": (
            "f:<StringDtype(na_value=nan)>:ArrowStringArray "
            "g:<StringDtype(na_value=nan)>:ArrowStringArray "
            "x:<StringDtype(na_value=nan)>:ArrowStringArray "
            "count:dtype('int64'):NumpyExtensionArray"
        ),
        "counts": "403ec865e675dcd9",
        "labels": "75eaee8b973237a9",
        "identity": "d5237a886b717e29dc1a703e",
        "cells": "fe20a1e127b764880c4b7523",
        "digest": "7f2eca9aacda93b305485d1a6261b608",
    },
}


@pytest.mark.parametrize("case", CASES)
def test_a_table_of_2e4_declared_labels_releases_what_it_did(case):
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


def test_neighbouring_tables_of_buffered_labels_differ_in_counts_only():
    frame, _ = _frame("groups_facets")
    other = frame.copy()
    other.loc[17, "x"] = other["x"].cat.categories[5]  # one record changed
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        a = dp_table(frame, "x", groups="g", facets="f", eps=1.0, seed=4)
        current_session().sources.clear()  # two sessions: no reuse warning
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
        "7dfc576a0998fbbe",
        "c6f801ecbbb472a0",
        "x:<StringDtype(na_value=nan)> count:dtype('int64')",
        "8f67ddddc16279437203a93c",
        "274205eabcf766c505bfc25e",
    ),
    "groups_facets": (
        "11a789b4078adca7",
        "75eaee8b973237a9",
        (
            "f:<StringDtype(na_value=nan)> "
            "g:<StringDtype(na_value=nan)> "
            "x:<StringDtype(na_value=nan)> "
            "count:dtype('int64')"
        ),
        "41f9bf92b3fca3d841640c2b",
        "fe20a1e127b764880c4b7523",
    ),
}


@pytest.mark.parametrize("case", sorted(PINNED_CKM))
def test_a_ckm_table_of_2e4_declared_labels_releases_what_it_did(case):
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


def _small(case: str):
    """Edge cases of the buffer path: no levels, one, an empty label,
    missing values, a privacy unit (and its cell limit), levels=."""
    rng = np.random.default_rng(0)
    labels = [f"L{i}" for i in range(300)]
    df = pd.DataFrame(
        {
            "x": pd.Categorical.from_codes(
                rng.integers(0, 300, size=2000), labels
            ),
            "person": rng.integers(0, 400, size=2000),
        }
    )
    none = pd.Index([], dtype="str")
    frames = {
        "no_levels": (pd.Categorical([], categories=none), {}),
        "no_levels_rows": (pd.Categorical([None, None], none), {}),
        "one": (pd.Categorical(["a", "a"], categories=["a"]), {}),
        "empty_label": (
            pd.Categorical(["", "b", None], categories=["", "b", "é" * 20]),
            {},
        ),
        "missing": (
            pd.Categorical(["a", None, "b"], categories=["b", "a"]),
            {},
        ),
    }
    if case in frames:
        x, kw = frames[case]
        return pd.DataFrame({"x": x}), kw
    if case == "unit":
        return pp.source(df, unit="person", max_records=2), {}
    if case == "unit_cells":
        return pp.source(df, unit="person", max_records=2, max_cells=1), {}
    return df, {"levels": labels[:10]}  # levels_override


_STR = "x:<StringDtype(na_value=nan)>:ArrowStringArray"
_OBJ = "x:dtype('O'):NumpyExtensionArray"
#: at 2b45fe4: table (or its hash), x's dtype, identity, cells, digest
PINNED_SMALL = {
    "no_levels": (
        "{'x': [], 'count': []}",
        _OBJ,
        "1a3729be6a43c3040cde720a",
        "5004c51b61502cbc92ff97e5",
        "3e71d61ee82741d8f9e4502efc350ba0",
    ),
    "no_levels_rows": (
        "{'x': [], 'count': []}",
        _OBJ,
        "1a3729be6a43c3040cde720a",
        "5004c51b61502cbc92ff97e5",
        "3e71d61ee82741d8f9e4502efc350ba0",
    ),
    "one": (
        "{'x': ['a'], 'count': [0]}",
        _STR,
        "9ff021a09ca654c2e69327dd",
        "4626de17c0ac8531f4cb483a",
        "2835a5641db3dbc9acf942a051468b68",
    ),
    "empty_label": (
        "{'x': ['', 'b', '" + "é" * 20 + "'], 'count': [3, 0, 0]}",
        _STR,
        "1d630bcfd259246f12b2752f",
        "7d61eba6efda17707baa77de",
        "5994aa0129dd6c34d1b6bc7ff6b60421",
    ),
    "missing": (
        "{'x': ['b', 'a'], 'count': [1, 1]}",
        _STR,
        "8001a7d82482909d36686c61",
        "0a7de423eff79a1deb9f6d06",
        "299f0883194f8f527952355b2ad93d7c",
    ),
    "unit": (
        "a9c7bbbadfa5464d",
        _STR,
        "8c290cf6333ca5bd31cfefd0",
        "6a7d84a15d1ea6e592fc4795",
        "f915f6e4295b78c4a857a111929d9030",
    ),
    "unit_cells": (
        "9535bf380a2ff646",
        _STR,
        "7e82ffe723ed007212de67da",
        "6a7d84a15d1ea6e592fc4795",
        "342a10069e73a557a3a03581e55b7d1b",
    ),
    "levels_override": (
        "{'x': ['L0', 'L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7', 'L8', "
        "'L9'], 'count': [15, 11, 7, 2, 13, 0, 4, 6, 10, 0]}",
        _STR,
        "d8f19edf566adf7345e08546",
        "d5fc5e16f2c3ab957e21ae05",
        "7bf7c3749c90f4100becac5bebe60b83",
    ),
}


@pytest.mark.parametrize("case", sorted(PINNED_SMALL))
def test_small_and_bounded_tables_release_what_they_did(case):
    frame, kw = _small(case)
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        with pp.use_stream_version(2):  # the pins are version 2's
            table = dp_table(frame, "x", eps=1.0, seed=3, **kw)
    finally:
        engine.set_charge_hook(previous)
    shown = repr(table.to_dict("list"))
    if len(table) >= 50:
        shown = hashlib.sha256(shown.encode()).hexdigest()[:16]
    x = table["x"]
    got = (
        shown,
        f"x:{x.dtype!r}:{type(x.array).__name__}",
        seen[0].identity,
        seen[0].cells,
        seen[0].digest,
    )
    assert got == PINNED_SMALL[case]


@pytest.mark.parametrize("without", ["pyarrow", "arrow_strings"])
def test_without_arrow_the_table_is_the_same(monkeypatch, without):
    # pyarrow is optional: without it the labels are named value by
    # value; with a frame that does not make Arrow strings of Python
    # strings, the x column is left for the frame to infer, as before
    if without == "pyarrow":
        monkeypatch.setattr(tables, "_arrow", lambda: None)
    else:
        monkeypatch.setattr(
            tables, "_inferred_string_dtype", lambda: np.dtype(object)
        )
    assert fingerprint("arrow_str") == PINNED["arrow_str"]
