"""Declared date-time levels in bulk (issue 39).

Levels that are naive date-times (a ``DatetimeIndex``, a list of pandas
``Timestamp`` s, a Categorical's ``DatetimeIndex`` of categories) are
kept as one ``datetime64[ns]`` array: their cells are named from it
(:func:`~plotnine_private.mechanisms.naming.time_values.time_words`),
their texts in a query's identity written by numpy (:func:`date_texts`,
``str`` of each ``Timestamp``), and each record's level found by its
nanoseconds (:func:`date_codes`), with the names and codes the
value-by-value path gives them
(:func:`~plotnine_private.cells.categorical_dimension`). Anything else
(a time zone, NaT, a ``datetime.date``, a mix, nanoseconds beyond
int64, levels named twice) is left to that path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .level_codes import chunked_codes, small_codes
from .mechanisms.naming.cellnames import StrLabels
from .mechanisms.naming.time_values import (
    time_ns,
    time_ns_where,
    time_texts,
)

__all__ = ["date_codes", "date_levels", "date_texts"]


def date_levels(levels: Any) -> tuple[pd.DatetimeIndex, np.ndarray] | None:
    """Declared levels that are naive date-times, as a ``DatetimeIndex``
    (the values to show) and their nanoseconds (int64); None for any
    other levels (then named value by value).

    >>> index, ns = date_levels([pd.Timestamp("1970-01-01 00:00:01")])
    >>> str(index.dtype), ns.tolist()
    ('datetime64[us]', [1000000000])
    >>> date_levels(["1970-01-01"]) is None
    True
    """
    if isinstance(levels, pd.DatetimeIndex):
        index = levels
    elif (
        isinstance(levels, (list, tuple))
        and len(levels)
        and set(map(type, levels)) == {pd.Timestamp}
    ):
        try:  # pandas keeps the finest unit of the Timestamps
            index = pd.DatetimeIndex(levels)
        except (TypeError, ValueError, OverflowError):
            return None  # naive and aware ones mixed
    else:
        return None
    if index.tz is not None or not len(index):
        return None
    ns = time_ns(index.to_numpy())
    return None if ns is None else (index, ns)


def date_texts(ns: np.ndarray) -> StrLabels | None:
    """``str`` of each level as a ``Timestamp`` (what a query names a
    date-time level by), as one buffer of labels; None where numpy does
    not write them (a year outside 1000..9999)."""
    texts = time_texts(ns)
    return None if texts is None else StrLabels(*texts)


def date_codes(values: pd.Series, ns: np.ndarray) -> np.ndarray | None:
    """The place of each record's value among the levels of nanoseconds
    ``ns`` (-1: none), as :func:`~plotnine_private.cells._codes_in`
    finds it: a naive date-time matches the level of equal nanoseconds,
    NaT, a missing value or a time beyond int64 nanoseconds none (no
    level is missing). ``values``: a naive datetime64 column, or a
    Categorical of naive date-times. None for any other column, and for
    levels that repeat (the value-by-value path refuses them).

    >>> ns = np.array([5, 2], dtype=np.int64)
    >>> x = pd.Series(np.array([2, 5, 7, "NaT"], "M8[ns]"))
    >>> date_codes(x, ns).tolist()
    [1, 0, -1, -1]
    """
    if not len(ns):
        return None
    # a hash table of the levels' nanoseconds (a search of 10**6 sorted
    # levels took five times as long: a cache miss per record)
    table = pd.Index(ns)
    if not table.is_unique:
        return None

    def code_of(times: np.ndarray) -> np.ndarray:
        found = time_ns_where(times)
        if found is None:  # a generic unit: no date-times to match
            return np.full(len(times), -1, dtype=np.int64)
        return np.where(found[1], table.get_indexer(found[0]), -1)

    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories
        if not isinstance(categories, pd.DatetimeIndex):
            return None
        if categories.tz is not None:
            return None
        remap = np.append(code_of(categories.to_numpy()), -1)
        # a missing record (code -1) takes the last place: no level
        return small_codes(remap, len(ns))[np.asarray(values.array.codes)]
    if not (isinstance(dtype, np.dtype) and dtype.kind == "M"):
        return None
    times = values.to_numpy()
    return chunked_codes(len(times), len(ns), lambda p: code_of(times[p]))
