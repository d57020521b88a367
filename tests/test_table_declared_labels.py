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

import plotnine_private.mechanisms.release as engine
from plotnine_private import dp_table

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
