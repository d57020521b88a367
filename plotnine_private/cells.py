"""Cell assembly: records -> cells of a domain, in canonical order.

A domain is a product of :class:`Dimension` s (panel, groups, the family's
cells: categories, bins, hexagons). :func:`assemble` maps every record to
its cell with integer codes only (no per-record strings or Python loops),
counts records, sums weights and CKM record keys exactly per cell, and
returns a :class:`~plotnine_private.mechanisms.release.engine.CellTable` whose
cells are named by their content (the noise-stream words). Plots, tables
and engine sources all assemble cells here, so the same data give the same
cells, and the release engine the same noise, whichever asked.

No plotnine here (numpy and pandas only).
"""

from __future__ import annotations

import datetime
import decimal
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .identifiers import factorized
from .level_codes import CHUNK, chunked_codes, grid_codes, small_codes
from .mechanisms.naming.cell_values import value_bytes
from .mechanisms.release.engine import CellTable, Query
from .mechanisms.streams.places import (
    PlaceDomain,
    content_words,
    place_index,
    whole_domain,
)
from .string_levels import (
    BULK_LEVELS,
    arrow_labels,
    arrow_str_codes,
    label_table,
    refuse_repeated,
    str_label_codes,
)


def level_label(value: Any) -> str:
    """Canonical text of a category, facet or group value, used to key the
    noise: a number is written as a float (4, 4.0 and np.int64(4) are one
    level), anything else as its ``str``. Plots and tables use the same
    labels, so they draw the same noise for the same cell.

    >>> level_label(4), level_label(4.0), level_label("4")
    ('4.0', '4.0', '4')
    """
    if isinstance(value, numbers.Real) and not isinstance(
        value, (bool, np.bool_)
    ):
        return repr(float(value))
    return str(value)


__all__ = [
    "CHUNK",
    "arrow_labels",
    "arrow_str_codes",
    "BULK_LEVELS",
    "label_table",
    "str_label_codes",
    "as_floats",
    "Dimension",
    "chunked_codes",
    "small_codes",
    "assemble",
    "categorical_dimension",
    "cell_query",
    "cell_table",
    "combined_codes",
    "grid_codes",
    "exact_sums",
    "object_column",
    "level_label",
    "tile_frame",
]


@dataclass
class Dimension:
    """One axis of a cell domain.

    Attributes
    ----------
    name
        What it is (``"PANEL"``, ``"fill"``, ``"x"``).
    codes
        For each record, its level (-1: outside the domain, not counted).
    content
        Columns (one value per level) that name a level in the noise
        words
        (:func:`~plotnine_private.mechanisms.streams.randomness.cell_words`):
        the level values themselves, or bin edges.
    values
        The level values to show (categories, bin centres...).
    public
        Whether the levels were fixed without looking at the data.
    """

    name: str
    codes: np.ndarray
    content: list
    values: Any
    public: bool

    @property
    def size(self) -> int:
        """Number of cells along this dimension."""
        return len(self.values)


def categorical_dimension(
    name: str,
    values: Any,
    declared: Sequence | None,
    numbers: np.ndarray | None = None,
) -> Dimension:
    """A dimension of categories: the declared levels (public; records
    with other values are left out), else the values seen (sorted).

    >>> d = categorical_dimension("x", pd.Series(["b", "a", "b"]), None)
    >>> d.codes.tolist(), list(d.values), d.public
    ([1, 0, 1], ['a', 'b'], False)
    >>> d = categorical_dimension("x", pd.Series(["b", "z"]), ["a", "b"])
    >>> d.codes.tolist(), d.public
    ([1, -1], True)

    ``numbers``: the declared levels as a float64 array, none NaN, if
    the caller has it (they are then all Python floats, not checked
    again).
    """
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    if declared is not None:
        if numbers is not None and series.dtype == np.float64:
            # the caller's floats: its sequence of them, not a copy
            levels: Any = declared
        else:
            levels = list(declared)
        if series.dtype != np.float64:
            numbers = None
        elif numbers is None:
            numbers = _float_levels(levels)
        if numbers is not None:
            # floats among float levels: named and looked up in bulk
            content: Any = numbers
            codes = _float_codes(series.to_numpy(), numbers, levels, name)
        else:
            content = object_column(levels)  # 10**6 labels: 0.05 s
            codes = _codes_in(series, levels, content, name)
        public = True
    else:
        codes, uniques = _observed_levels(series)
        levels = list(uniques)
        public = False
        # numbers seen stay a number array (named without a Python loop)
        kind = getattr(uniques.dtype, "kind", "O")
        numeric = isinstance(uniques.dtype, np.dtype) and kind in "biuf"
        content = np.asarray(uniques) if numeric else object_column(levels)
    return Dimension(
        name, small_codes(codes, len(levels)), [content], levels, public
    )


def as_floats(values: Sequence) -> np.ndarray | None:
    """``[float(v) for v in values]`` as a float64 array, in bulk, where
    every value is a plain ``int`` or ``float`` and none is NaN (numpy
    rounds an int to the nearest float as ``float`` does); None
    otherwise (an int too large for a float included). A ``range`` of
    ints below 2**53 in magnitude is written by ``np.arange``, without
    an int object per value.

    >>> as_floats(range(-2, 3, 2)).tolist(), as_floats([1, True])
    ([-2.0, 0.0, 2.0], None)
    >>> as_floats([2**63 - 1, 2**64, -(2**63)]).tolist() == [
    ...     float(2**63 - 1), float(2**64), float(-(2**63))]
    True
    """
    if isinstance(values, range) and len(values):
        ends = (values[0], values[-1])
        if max(abs(v) for v in ends) < 2**53:
            return np.arange(
                values.start, values.stop, values.step, dtype=np.float64
            )
    if isinstance(values, (np.ndarray, pd.Index, pd.Series)):
        return _array_floats(values)
    kinds = set(map(type, values))
    if kinds and kinds <= _NUMPY_NUMBERS:
        # numpy's scalars (a list of an array's items): as their array
        return _array_floats(np.array(values))
    if not kinds or not kinds <= {int, float}:
        return None
    if kinds == {int}:
        try:  # ints read as int64 first: 0.017 s at 10**6, not 0.03 s
            whole = np.fromiter(values, dtype=np.int64, count=len(values))
            return whole.astype(np.float64)  # rounded as float() rounds
        except OverflowError:
            pass  # beyond int64: each converted by float()
    try:
        out = np.array(values, dtype=np.float64)
    except OverflowError:
        return None
    return None if np.isnan(out).any() else out


#: numpy's scalar number types (not its bool): their ``float`` is their
#: array's ``astype(float64)``
_NUMPY_NUMBERS = frozenset(
    t
    for t in np.sctypeDict.values()
    if issubclass(t, (np.integer, np.floating))
)


def _array_floats(values: Any) -> np.ndarray | None:
    """:func:`as_floats` of an array of numbers (numpy's, or a pandas
    index or series of a numpy dtype): ``astype(float64)`` rounds each
    to the nearest float as ``float()`` does; None for other dtypes
    (bool, object, extension types), an empty array, or a NaN."""
    dtype = getattr(values, "dtype", None)
    if not isinstance(dtype, np.dtype) or dtype.kind not in "iuf":
        return None
    out = np.asarray(values).astype(np.float64)
    if out.ndim != 1 or not len(out) or np.isnan(out).any():
        return None
    return out


def _float_levels(levels: list) -> np.ndarray | None:
    """Levels that are all Python ``float`` and none NaN, as a float64
    array (the same values; their cells' words, made from the array,
    are those of the floats); None otherwise."""
    if not levels or set(map(type, levels)) != {float}:
        return None
    numbers = np.array(levels, dtype=np.float64)
    return None if np.isnan(numbers).any() else numbers


#: float levels up to which :func:`_float_codes` searches the sorted
#: levels (their array stays in cache); above, it hashes them
_SEARCHED = 1 << 14


def _float_codes(
    values: np.ndarray, numbers: np.ndarray, levels: list, name: str
) -> np.ndarray:
    """Position of each float of ``values`` among the float levels
    ``numbers`` (-1: none, NaN included), a chunk at a time: the codes
    :func:`_codes_in` gives them, as a float matches a float level
    exactly when the two are equal (an integral value is named as the
    integer it equals, any other by its bits: equal values, equal
    names). Levels equal as numbers are refused, as there."""
    rising = bool((numbers[1:] > numbers[:-1]).all())
    order = np.arange(len(numbers))
    if not rising:
        order = np.argsort(numbers, kind="stable")
    ranked = numbers[order]
    if bool((ranked[1:] == ranked[:-1]).any()):
        refuse_repeated(name, levels)
    top = len(ranked) - 1
    lo = ranked[0]
    # whole numbers one apart (levels=range(m)): a value's place is its
    # distance from the first, with no search
    step = rising and lo == np.floor(lo) and abs(lo) < 2.0**52
    step = step and bool((np.diff(ranked) == 1).all())
    step = step and abs(ranked[-1]) < 2.0**52
    # many levels: one hash table of them (pandas', whose float keys are
    # equal as numbers are, -0.0 and 0.0 one key) finds a value in one
    # probe, where a binary search misses the cache at every step (10**6
    # values among 10**6 levels: 0.07 s against 0.33 s), once the values
    # are enough to pay for the table. NaN is no level here, so no value
    # finds one.
    hashed = len(numbers) > _SEARCHED and len(values) > len(numbers) // 8
    hashed = hashed and not step and not np.isnan(ranked[-1])
    table = pd.Index(numbers) if hashed else None

    def code_of(part: slice) -> np.ndarray:
        v = values[part]
        if step:
            k = v - lo  # exact: whole numbers below 2**53
            with np.errstate(invalid="ignore"):
                hit = (k >= 0) & (k <= top) & (k == np.floor(k))
            return np.where(hit, np.where(hit, k, 0).astype(np.int64), -1)
        if table is not None:
            return table.get_indexer(v)
        at = np.minimum(np.searchsorted(ranked, v), top)
        return np.where(ranked[at] == v, order[at], -1)

    return chunked_codes(len(values), len(levels), code_of)


def _observed_levels(series: pd.Series) -> tuple[np.ndarray, Any]:
    """Codes and sorted levels of the values seen. A typed column sorts
    by its values; an object column by :func:`level_order`, a total order
    that never compares values of two kinds, so no mix of values (a
    Timedelta among ints, a date among Timestamps) can make it raise,
    and an unhashable value counts as its ``repr``."""
    if series.dtype != object:
        return pd.factorize(series, sort=True, use_na_sentinel=True)
    codes, uniques = factorized(series)
    values = list(uniques)
    order = sorted(range(len(values)), key=lambda i: level_order(values[i]))
    rank = np.empty(len(order) + 1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    rank[-1] = -1  # the missing sentinel stays missing
    sorted_levels = object_column([values[i] for i in order])
    return rank[codes], pd.Index(sorted_levels, dtype=object)


def level_order(value: Any) -> tuple:
    """The sort key of an observed level of an object column: numbers
    first (by value), then strings, naive then aware date-times, dates,
    durations, and any other value by its type's name and its ``repr``.

    >>> sorted([pd.Timedelta(1, "D"), "b", 2, 1.5], key=level_order)
    [1.5, 2, 'b', Timedelta('1 days 00:00:00')]
    """
    if isinstance(value, (numbers.Real, decimal.Decimal)):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, datetime.datetime):
        stamp = pd.Timestamp(value)
        return (2, stamp) if stamp.tzinfo is None else (3, stamp)
    if isinstance(value, datetime.date):
        return (4, value)
    if isinstance(value, (datetime.timedelta, np.timedelta64)):
        return (5, pd.Timedelta(value))
    if isinstance(value, np.datetime64):
        return (2, pd.Timestamp(value))
    return (6, type(value).__name__, repr(value))


def object_column(values: Sequence) -> np.ndarray:
    """``values`` as a 1-d object array, each value kept as it is (numpy
    would turn ``[4.0, "4.0"]`` into two equal strings, and tuples into
    a 2-d array).

    >>> object_column([4.0, "4.0", (1, 2)]).tolist()
    [4.0, '4.0', (1, 2)]
    """
    out = np.empty(len(values), dtype=object)
    if set(map(type, values)) <= _SCALARS:
        out[:] = values  # no value numpy could take apart: one copy
        return out
    for i, v in enumerate(values):
        out[i] = v
    return out


_SCALARS = {str, int, float, bool, type(None)}


def _same_values(categories: pd.Index, content: np.ndarray) -> bool:
    """Whether ``categories`` hold ``content`` value for value (``==``).

    Arrow-backed strings are compared in Arrow, which takes half the
    time of making 10**6 Python strings of them; ``content`` that is not
    all strings cannot convert, and is compared as objects."""
    if isinstance(categories.dtype, pd.StringDtype) and (
        categories.dtype.storage == "pyarrow"
    ):
        import pyarrow as pa

        have = pa.chunked_array(pa.array(categories.array))
        try:
            want = pa.chunked_array([pa.array(content, type=have.type)])
        except (TypeError, ValueError, pa.ArrowException):
            pass
        else:
            return bool(have.equals(want))
    return bool((categories.to_numpy(dtype=object) == content).all())


def _codes_in(
    series: pd.Series,
    levels: list,
    content: np.ndarray | None = None,
    name: str = "x",
) -> np.ndarray:
    """Position of each value in ``levels`` (-1 if absent). Values match
    a level when they name the same cell (typed: 4 and 4.0 are one
    level, 4.0 and "4.0" or True and "True" are not). ``content`` is
    ``object_column(levels)`` if the caller has it.

    Levels that name one cell twice are refused (``name``: the column):
    two such cells would share a noise stream wherever cells are named
    by their words, and the difference of their released counts would be
    the true count. A categorical column whose categories are the levels
    needs no check (pandas keeps categories distinct)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        # compared as arrays: 10**6 Arrow-backed labels are slow to list
        categories = series.cat.categories
        if content is None:
            content = object_column(levels)
        if len(categories) == len(levels) and _same_values(
            categories, content
        ):
            return np.asarray(series.array.codes)
    looked_up = arrow_str_codes(series, levels, name)
    if looked_up is not None:
        return looked_up
    # named only when needed: 10**6 declared labels take seconds
    index = {value_bytes(v): i for i, v in enumerate(levels)}
    if len(index) < len(levels):
        refuse_repeated(name, levels)
    if isinstance(series.dtype, pd.CategoricalDtype):
        cats = series.cat.categories.tolist()
        # a missing value is in the level None where one is declared
        missing = index.get(value_bytes(None), -1)
        remap = small_codes(
            np.array(
                [index.get(value_bytes(c), -1) for c in cats] + [missing]
            ),
            len(levels),
        )
        return remap[np.asarray(series.array.codes)]
    codes, uniques = factorized(series)
    missing = index.get(value_bytes(None), -1)
    remap = small_codes(
        np.array([index.get(value_bytes(u), -1) for u in uniques] + [missing]),
        len(levels),
    )
    return remap[codes]


def exact_sums(code: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Exact int64 sums of non-negative integers per code (< 2**48 each).

    ``np.add.at`` is exact but slow; ``bincount`` is fast but sums in
    float64. Summing the low and high 24 bits separately keeps every
    partial sum below 2**53 (exact) for up to 2**29 records.

    >>> exact_sums(np.array([0, 0, 1]), np.array([2**40, 3, 5]), 2).tolist()
    [1099511627779, 5]
    """
    v = np.asarray(values, dtype=np.int64)
    lo = np.bincount(code, weights=v & 0xFFFFFF, minlength=size)
    hi = np.bincount(code, weights=v >> 24, minlength=size)
    return (hi.astype(np.int64) << 24) + lo.astype(np.int64)


def _sums(code, size, w, k):
    n = np.bincount(code, minlength=size).astype(np.int64)
    ws = None if w is None else np.bincount(code, weights=w, minlength=size)
    ks = None if k is None else exact_sums(code, k, size)
    return n, ws, ks


class _Accumulator:
    """Running counts and sums of a public domain's cells."""

    def __init__(self, size: int, weighted: bool, keyed: bool):
        self.n = np.zeros(size, dtype=np.int64)
        self.weighted = np.zeros(size) if weighted else None
        self.key_sum = np.zeros(size, dtype=np.int64) if keyed else None

    def add(self, n, ws, ks) -> None:
        self.n += n
        if self.weighted is not None:
            self.weighted += ws
        if self.key_sum is not None:
            self.key_sum += ks


def _merge_observed(parts, weight, key_ints):
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return (
            empty,
            empty.copy(),
            None if weight is None else np.zeros(0),
            None if key_ints is None else empty.copy(),
        )
    cells, inv = np.unique(
        np.concatenate([p[0] for p in parts]), return_inverse=True
    )
    inv = inv.ravel()
    size = len(cells)
    n = np.bincount(
        inv, weights=np.concatenate([p[1] for p in parts]), minlength=size
    ).astype(np.int64)
    ws = None
    if weight is not None:
        ws = np.bincount(
            inv, weights=np.concatenate([p[2] for p in parts]), minlength=size
        )
    ks = None
    if key_ints is not None:
        ks = exact_sums(inv, np.concatenate([p[3] for p in parts]), size)
    return cells, n, ws, ks


def combined_codes(
    dims: Sequence[Dimension], part: slice = slice(None)
) -> tuple[np.ndarray, np.ndarray]:
    """Each record's cell as one code (mixed radix over ``dims``, the
    first dimension slowest) and whether it is outside the domain (some
    level -1 or out of range)."""
    n = len(dims[0].codes[part]) if dims else 0
    code = np.zeros(n, dtype=np.int64)
    bad = np.zeros(n, dtype=bool)
    for d in dims:
        # compared and clipped in the codes' own (small) type: the only
        # int64 temporary of a chunk is the combined code itself
        c = np.asarray(d.codes[part])
        out = _outside(c, d.size)
        bad |= out
        if d.size > 1:
            code *= d.size
        if out.any():
            code += np.maximum(c, 0)
        elif d.size > 1:  # every code in range: none to clip
            code += c
        # else one level, every code 0: nothing to add
    return code, bad


def _outside(c: np.ndarray, size: int) -> np.ndarray:
    """``(c < 0) | (c >= size)`` in one comparison where it can be: a
    signed code read as unsigned is ``>= size`` exactly when it is
    negative or ``>= size``, for any ``size`` the signed type holds."""
    if c.dtype.kind == "i" and size <= np.iinfo(c.dtype).max:
        return c.view(c.dtype.str.replace("i", "u")) >= size
    return (c < 0) | (c >= size)


def assemble(
    dims: Sequence[Dimension],
    *,
    weight: np.ndarray | None = None,
    key_ints: np.ndarray | None = None,
    multiplicity: int = 1,
    keep: np.ndarray | None = None,
) -> tuple[CellTable, np.ndarray]:
    """Aggregate records into the cells of ``dims``' product.

    Returns the cell table and, for each cell, the level of each dimension
    (``(cells, len(dims))``). A public domain (every dimension public)
    lists every cell, empty ones included; otherwise only the non-empty
    cells (a thresholded or observed release). ``keep`` (a boolean per
    record) leaves out the records a privacy unit does not keep
    (:func:`limit_cells`).

    >>> a = categorical_dimension("g", pd.Series(["u", "v", "u"]), ["u", "v"])
    >>> b = categorical_dimension("x", pd.Series(["p", "p", "q"]), ["p", "q"])
    >>> table, idx = assemble([a, b])
    >>> table.n.tolist(), idx.tolist()
    ([1, 1, 1, 0], [[0, 0], [0, 1], [1, 0], [1, 1]])
    """
    sizes = [d.size for d in dims]
    nrec = len(dims[0].codes) if dims else 0
    public = all(d.public for d in dims)
    total = int(np.prod(sizes, dtype=object)) if dims else 1
    # one pass over the records, a chunk at a time: combined codes (mixed
    # radix over the dimensions), then counts and exact sums per cell
    parts: list[tuple] = []
    acc = _Accumulator(total, weight is not None, key_ints is not None)
    # each pass adds a count per cell of a public domain: a large domain
    # takes passes of up to as many records as it has cells (at most
    # 2**22: temporaries of some 100 MB), not a sweep of every cell per
    # 2**18 records. Not with weights: their float sums are added pass
    # by pass and must stay the same bits (counts and key sums are exact)
    step = CHUNK
    if public and weight is None:
        step = min(max(CHUNK, total), 1 << 22)
    for start in range(0, nrec, step):
        part = slice(start, min(start + step, nrec))
        code, bad = combined_codes(dims, part)
        ok = ~bad if keep is None else ~bad & keep[part]
        w = None if weight is None else np.asarray(weight[part])
        k = None if key_ints is None else np.asarray(key_ints[part])
        if not ok.all():  # else every record counts: no copies
            code = code[ok]
            w = None if w is None else w[ok]
            k = None if k is None else k[ok]
        if public:
            acc.add(*_sums(code, total, w, k))
        else:
            cells_c, inv = np.unique(code, return_inverse=True)
            parts.append((cells_c, *_sums(inv.ravel(), len(cells_c), w, k)))
    if public:
        cells = np.arange(total, dtype=np.int64)
        n, weighted, key_sum = acc.n, acc.weighted, acc.key_sum
    else:
        cells, n, weighted, key_sum = _merge_observed(parts, weight, key_ints)
    return cell_table(dims, cells, n, weighted, key_sum, public, multiplicity)


def cell_table(
    dims: Sequence[Dimension],
    cells: np.ndarray,
    n: np.ndarray,
    weighted: np.ndarray | None,
    key_sum: np.ndarray | None,
    public: bool,
    multiplicity: int = 1,
) -> tuple[CellTable, np.ndarray]:
    """The cell table of aggregated cells: ``cells`` are combined codes
    (mixed radix over ``dims``) with their counts and sums, however they
    were aggregated (here, or by an engine's group-by). Each cell is named
    by its dimensions' content, the words of its noise stream; when the
    cells are a whole public domain in place order (every dimension
    public, ``arange`` of its size, as :func:`assemble` lists them), they
    are also named by place
    (:class:`~plotnine_private.mechanisms.streams.places.PlaceDomain`),
    and their words are made only if read."""
    sizes = [d.size for d in dims]
    ncell = len(cells)
    columns = [d.content for d in dims]
    places = None
    # by place only when every dimension is public: a table flagged
    # public over observed levels (the fine bins of the groups a release
    # showed) lists the levels the data have, not a declared domain
    declared = public and all(d.public for d in dims)
    if declared and dims and ncell and whole_domain(cells, sizes):
        index = place_index(sizes)
        places = PlaceDomain(sizes, columns, index)
    elif dims and ncell:
        index = np.column_stack(np.unravel_index(cells, sizes))
        index = index.astype(np.int64, copy=False)
    else:
        index = np.zeros((ncell, len(dims)), dtype=np.int64)
    table = CellTable(
        # each level named once, then taken by every cell that has it
        words=None if places else content_words(columns, index),
        n=n,
        weighted=weighted,
        key_sum=key_sum,
        public=public,
        multiplicity=multiplicity,
    )
    if places is not None:
        table.named_by(places)
    return table, index


def cell_query(
    family: str,
    source: str,
    seed: Any,
    *,
    aes: dict[str, str],
    groups: Sequence[tuple[str, Dimension]],
    facets: Sequence[str],
    panel_labels: Sequence[str],
    domain: Any,
    mechanism: Any,
    scales: tuple = (),
    params: tuple = (),
    unit: dict[str, Any] | None = None,
) -> Query:
    """The public query of a cell release, as plots and tables state it.

    ``aes`` maps the counted aesthetics (x, y, rkey, weight) to the
    expressions or columns they come from; ``groups`` pairs each group's
    expression with its dimension (declared levels are part of the query,
    observed ones are not); ``domain`` describes the family's public
    domain (or is ``"observed"``); ``unit`` holds the privacy unit's
    query parts (``Unit.query_parts()``: empty for one row, so those
    releases keep their identity). Everything here is public.
    """
    group_parts = tuple(
        (expr, tuple(d.content[0].tolist()) if d.public else "observed")
        for expr, d in groups
    )
    return Query.make(
        family,
        source,
        seed,
        aes=tuple(sorted(aes.items())),
        groups=group_parts,
        facets=tuple(facets),
        panels=tuple(sorted(panel_labels)),
        domain=domain,
        scales=scales,
        params=params,
        **(unit or {}),
        **mechanism.parameters(),
    )


def tile_frame(
    xmin: np.ndarray,
    xmax: np.ndarray,
    ymin: np.ndarray,
    ymax: np.ndarray,
    **columns: Any,
) -> pd.DataFrame:
    """Rectangles as plotnine's tile geoms read them: the four edges, the
    centre ``x``, ``y`` and then ``columns``, made in one frame (pandas
    rebuilds its column index at every column inserted one by one).

    >>> tile_frame(np.array([0.0]), np.array([2.0]), np.array([1.0]),
    ...            np.array([3.0]), count=[5])[["x", "y", "count"]].values
    array([[1., 2., 5.]])
    """
    return pd.DataFrame(
        {
            "xmin": xmin,
            "xmax": xmax,
            "ymin": ymin,
            "ymax": ymax,
            "x": (xmin + xmax) / 2,
            "y": (ymin + ymax) / 2,
            **columns,
        }
    )
