"""Exact arithmetic of the private summaries on their public grid.

The default grid (:func:`default_resolution`), exact int64 totals of grid
values per cell (:func:`exact_totals`), each record's row of the cell
table, and the range of a ratio of two intervals (:func:`ratio_interval`,
the error bars of a mean).
"""

from __future__ import annotations

import math

import numpy as np

from ...cells import CHUNK, combined_codes

#: grid values are summed in two parts of at most this many bits, each
#: exact in float64 partial sums
_LOW_BITS = 20


def default_resolution(lo: float, hi: float) -> float:
    """The largest power of ten at most ``(hi - lo) / 1000``.

    >>> default_resolution(10, 45), default_resolution(0, 1)
    (0.01, 0.001)
    """
    return 10.0 ** math.floor(math.log10((hi - lo) / 1000) + 1e-12)


def ratio_interval(t_lo, t_hi, n_lo, n_hi):
    """Range of ``t / n`` over ``t`` in ``[t_lo, t_hi]`` and ``n`` in
    ``[n_lo, n_hi]`` (arrays), with ``n >= 1``; ``(-inf, inf)`` where
    ``n_hi < 1`` (no record count is excluded).

    >>> [v.tolist() for v in ratio_interval(
    ...     np.array([-2.0]), np.array([6.0]),
    ...     np.array([2.0]), np.array([4.0]))]
    [[-1.0], [3.0]]
    """
    t_lo, t_hi = np.asarray(t_lo, float), np.asarray(t_hi, float)
    n_lo = np.maximum(np.asarray(n_lo, float), 1.0)
    n_hi = np.asarray(n_hi, float)
    none = n_hi < 1
    n_hi = np.maximum(n_hi, n_lo)
    lo = np.where(t_lo >= 0, t_lo / n_hi, t_lo / n_lo)
    hi = np.where(t_hi >= 0, t_hi / n_lo, t_hi / n_hi)
    return np.where(none, -np.inf, lo), np.where(none, np.inf, hi)


def total_range(bounds: tuple[float, float]) -> tuple[float, float]:
    """What a total of values clamped to ``bounds`` can be: at least 0
    when no value is below 0, at most 0 when none is above it.

    >>> total_range((0, 5000)), total_range((-3, -1)), total_range((-1, 1))
    ((0.0, inf), (-inf, 0.0), (-inf, inf))
    """
    lo, hi = bounds
    return (0.0 if lo >= 0 else -math.inf, 0.0 if hi <= 0 else math.inf)


def clip_total(
    bounds: tuple[float, float], **columns: np.ndarray
) -> dict[str, np.ndarray]:
    """Released totals (and the ends of their intervals) clipped to
    :func:`total_range` of ``bounds``, as a released count is clipped at
    0: post-processing, and a mark drawn from them never reaches past
    what a total can be. An interval wholly outside the range (its
    statement failed) becomes the range's nearest end.

    >>> clip_total((0, 10), y=np.array([-5.0, 3.0]))["y"].tolist()
    [0.0, 3.0]
    """
    t_lo, t_hi = total_range(bounds)
    return {
        name: np.clip(np.asarray(v, dtype=float), t_lo, t_hi)
        for name, v in columns.items()
    }


def exact_totals(
    dims: list, idx: np.ndarray, k: np.ndarray, k_lo: int
) -> np.ndarray:
    """Exact int64 totals of the grid values ``k`` per cell of ``idx``.

    ``k - k_lo`` (>= 0, below 2**32) is summed in a low and a high part of
    at most 20 bits each, a chunk of records at a time: the float64 sums
    of a chunk are exact and chunks add up in int64, so no count of
    records can make a total inexact.
    """
    sizes = [d.size for d in dims]
    cells = (
        np.ravel_multi_index(idx.T, sizes)
        if len(idx)
        else np.zeros(0, dtype=np.int64)
    )
    size = len(cells)
    n = np.zeros(size, dtype=np.int64)
    lo = np.zeros(size, dtype=np.int64)
    hi = np.zeros(size, dtype=np.int64)
    for start in range(0, len(k), CHUNK):
        part = slice(start, start + CHUNK)
        code, bad = combined_codes(dims, part)
        pos = np.searchsorted(cells, code[~bad])
        shifted = k[part][~bad].astype(np.int64) - k_lo
        low = shifted & ((1 << _LOW_BITS) - 1)
        n += np.bincount(pos, minlength=size)
        lo += np.bincount(pos, weights=low, minlength=size).astype(np.int64)
        hi += np.bincount(
            pos, weights=shifted >> _LOW_BITS, minlength=size
        ).astype(np.int64)
    return (hi << _LOW_BITS) + lo + n * k_lo


def record_rows(dims, idx: np.ndarray, public: bool) -> np.ndarray:
    """Row of the cell table of each record (-1: outside the domain), by
    the mixed-radix code :func:`~plotnine_private.cells.assemble` uses."""
    sizes = [d.size for d in dims]
    nrec = len(dims[0].codes)
    code = np.zeros(nrec, dtype=np.int64)
    bad = np.zeros(nrec, dtype=bool)
    for d in dims:
        c = np.asarray(d.codes, dtype=np.int64)
        bad |= (c < 0) | (c >= d.size)
        code = code * max(d.size, 1) + np.where(c < 0, 0, c)
    if public:
        rows = code
    else:
        cells = (
            np.ravel_multi_index(idx.T, sizes)
            if len(idx)
            else np.zeros(0, np.int64)
        )
        rows = np.searchsorted(cells, code)
    return np.where(bad, -1, rows)
