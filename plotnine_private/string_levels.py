"""Declared string levels in bulk: labels read from Arrow's buffers as
one UTF-8 buffer (:class:`~plotnine_private.mechanisms.naming.cellnames.
StrLabels`), each record's level found by hash and confirmed byte for
byte, and the refusal of levels that name one category twice."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .exceptions import PlotninePrivateError
from .level_codes import CHUNK, small_codes
from .mechanisms.naming.cell_values import value_bytes
from .mechanisms.naming.cellnames import StrLabels

__all__ = [
    "BULK_LEVELS",
    "arrow_labels",
    "arrow_str_codes",
    "as_large_string",
    "label_table",
    "large_string_labels",
    "refuse_repeated",
    "str_label_codes",
]


#: declared string levels from which :func:`arrow_str_codes` looks values
#: up by numpy hashes (below, Arrow's hash table of the levels stays in
#: cache and its look-up is faster: 0.04 s against 0.07 s for 10**6
#: values among 65536 levels, 0.41 s against 0.22 s among 10**6)
BULK_LEVELS = 1 << 17


def arrow_str_codes(
    series: pd.Series, levels: Any, name: str
) -> np.ndarray | None:
    """Position of each value of an Arrow-backed string column among
    declared levels that are all strings (a list, or a
    :class:`~plotnine_private.mechanisms.naming.cellnames.StrLabels`),
    -1 for none; None for any other column or levels. A string matches
    only a string level equal to it, as :func:`_codes_in` matches them
    (its ``value_bytes``: a ``str`` subclass is named by its text).

    The levels are read into one buffer by Arrow (:func:`arrow_labels`:
    no Python check per level). Up to :data:`BULK_LEVELS` of them,
    Arrow's ``index_in`` finds each value (one hash of the levels, one
    probe a record: 0.11 s at 10**7 rows); from there on they are hashed
    word by word in numpy and each chunk of values looked up in one
    pandas hash table of theirs, each match confirmed byte for byte
    (:func:`str_label_codes`: 0.2 s for 10**6 records among 10**6 levels,
    ``index_in`` 0.4 s). Levels given twice are refused."""
    dtype = series.dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return None
    labels = levels if isinstance(levels, StrLabels) else arrow_labels(levels)
    if labels is None:
        return None
    import pyarrow as pa

    values = pa.chunked_array(pa.array(series.array))
    table = label_table(labels) if len(labels) >= BULK_LEVELS else None
    if table is None:  # few levels, or two that hash alike: Arrow's
        import pyarrow.compute as pc

        plain = labels.tolist()
        if len(set(plain)) < len(plain):
            refuse_repeated(name, plain)
        found = pc.index_in(values, value_set=pa.array(plain, values.type))
        codes = found.fill_null(-1).combine_chunks()
        return small_codes(codes.to_numpy(zero_copy_only=False), len(labels))
    out = small_codes(np.empty(0, np.int64), len(labels))
    out = np.empty(len(values), dtype=out.dtype)
    for start in range(0, len(values), CHUNK):  # a few MB at a time
        read = _arrow_strings(values.slice(start, CHUNK))
        assert read is not None  # a slice of the strings read above
        part = slice(start, start + CHUNK)
        out[part] = str_label_codes(read[0], labels, read[1], table)
    return out


def arrow_labels(values: Any) -> StrLabels | None:
    """``values`` (a sequence of ``str``, or strings held by Arrow: an
    Arrow array, pandas' Arrow-backed strings) as one UTF-8 buffer read
    from Arrow's own buffers, without a Python object per value; None
    if pyarrow is missing, or some value is missing or not a string.

    >>> arrow_labels(["a", "bc"]).tolist(), arrow_labels(["a", 4])
    (['a', 'bc'], None)
    """
    read = _arrow_strings(values)
    return None if read is None or read[1] is not None else read[0]


def _arrow_strings(
    values: Any,
) -> tuple[StrLabels, np.ndarray | None] | None:
    """:func:`arrow_labels` of ``values`` that may miss some (each then
    an empty label), and where they miss (None: none does)."""
    arr = as_large_string(values)
    if arr is None:
        return None
    labels = large_string_labels(arr)
    offsets, raw = labels.offsets, labels.data
    missing = None
    if arr.null_count:
        # a missing value may still hold bytes: give it none
        missing = np.asarray(arr.is_null().to_numpy(zero_copy_only=False))
        lens = np.diff(offsets)
        raw = raw[np.repeat(~missing, lens)]
        offsets = np.zeros(len(arr) + 1, dtype=np.int64)
        np.cumsum(np.where(missing, 0, lens), out=offsets[1:])
    return StrLabels(offsets, raw), missing


def as_large_string(values: Any) -> Any:
    """``values`` (an Arrow or pandas array, or a sequence) as one
    ``large_string`` Arrow array, or None when they are not strings (or
    pyarrow is missing)."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    try:
        if isinstance(values, pd.api.extensions.ExtensionArray):
            values = pa.array(values)  # pandas' own Arrow buffers
        if not isinstance(values, (pa.Array, pa.ChunkedArray)):
            values = pa.array(values)  # strings encoded once, in C
        if not (
            pa.types.is_string(values.type)
            or pa.types.is_large_string(values.type)
            or pa.types.is_string_view(values.type)
        ):
            return None
        arr = values.cast(pa.large_string())
    except (TypeError, ValueError, pa.ArrowException):
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = (
            arr.combine_chunks()
            if arr.num_chunks
            else pa.array([], type=pa.large_string())
        )
    return arr


def large_string_labels(arr: Any) -> StrLabels:
    """The labels of one ``large_string`` Arrow array, read from its own
    buffers: its offsets (from 0) and the bytes they span; no copy."""
    offsets = np.frombuffer(
        arr.buffers()[1],
        dtype=np.int64,
        count=len(arr) + 1,
        offset=8 * arr.offset,
    )
    data = arr.buffers()[2]
    raw = (
        np.zeros(0, dtype=np.uint8)
        if data is None
        else np.frombuffer(data, dtype=np.uint8)
    )
    return StrLabels(
        offsets - offsets[0], raw[int(offsets[0]) : int(offsets[-1])]
    )


def label_table(labels: StrLabels) -> pd.Index | None:
    """The labels' hashes (:meth:`~plotnine_private.mechanisms.naming.
    cellnames.StrLabels.hashes`) as a pandas index, a hash table of
    them; None when two labels hash alike (equal labels, or a
    collision)."""
    table = pd.Index(labels.hashes().view(np.int64))
    return table if table.is_unique else None


def str_label_codes(
    values: StrLabels,
    labels: StrLabels,
    missing: np.ndarray | None = None,
    table: pd.Index | None = None,
) -> np.ndarray | None:
    """Position of each of ``values`` among ``labels`` (-1: none), found
    by hash in ``table`` (:func:`label_table`, made if not given) and
    confirmed byte for byte, so a value matches only a label equal to
    it; a ``missing`` value matches none. None when two labels hash
    alike (the caller tells them apart).

    >>> str_label_codes(StrLabels.of(["b", "z", "a"]),
    ...                 StrLabels.of(["a", "b"])).tolist()
    [1, -1, 0]
    """
    table = label_table(labels) if table is None else table
    if table is None:
        return None
    at = table.get_indexer(pd.Index(values.hashes().view(np.int64)))
    hit = at >= 0
    at = np.where(hit, at, 0)
    codes = np.where(hit & labels.same_as(values, at), at, -1)
    if missing is not None:
        codes[missing] = -1
    return codes


def refuse_repeated(name: str, levels: list) -> None:
    first: dict[bytes, Any] = {}
    for v in levels:
        key = value_bytes(v)
        if key in first:
            what = (
                f"{v!r} is given twice"
                if repr(first[key]) == repr(v)
                else f"{first[key]!r} and {v!r} are one level (4 and 4.0 "
                "are one number)"
            )
            raise PlotninePrivateError(
                f"the declared levels of {name!r} name one category twice: "
                f"{what}. Give each level once (levels=[...], or "
                "levels={...} of pp.source)."
            )
        first[key] = v
