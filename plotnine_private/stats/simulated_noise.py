"""The public noise simulation the linear curve bands share (see
:mod:`plotnine_private.stats.intervals`): its product with a curve's
design, kept between builds, and the tail quantiles of simulated values,
numpy's own, from the few values of each tail."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "is_running_sums",
    "product_through",
    "run_quantiles",
    "runs_last",
    "tail_quantiles",
]


def tail_quantiles(
    values: np.ndarray, cuts: list[float], minus: np.ndarray | None = None
) -> np.ndarray:
    """``np.quantile(values, cuts, axis=-1)`` (its default "linear"
    method), bit for bit, for cuts in the two tails (some below 0.5, some
    at or above it, the lower ones' ranks below the upper ones'); several
    pairs of cuts (the bands of several levels) read one selection.
    ``values`` may be reordered in place along its last axis.

    ``np.quantile`` partitions a copy at two ranks a cut (the one at or
    below its virtual index and the next), plus the first and the last.
    Here the array is partitioned in place at the upper rank of each low
    cut and the lower rank of each high cut only: the rank just below a
    low cut's is the largest value before it, the rank just above a high
    cut's the smallest after it, a pass over a few per cent of the
    simulations instead of a partition over all of them. The
    order statistics are the same values, combined by numpy's own
    interpolation, so the quantiles are the same numbers (where a -0.0
    and a 0.0 tie at a rank, either may stand there: they are equal). A
    row with a NaN gives NaN, as in numpy (NaNs sort last, so one is
    among the values after the high cuts).

    Where the tails are a small part of each row (the bands' thousands of
    simulations), the order statistics come from the few blocks of the
    row that hold them (:func:`_block_tails`): the same values, in about
    two thirds of a partition's time; where numpy sorts with SIMD
    (:data:`SORTS_FAST`), from a sort of each row, in less.

    ``minus`` (the shape of a row's index, ``values.shape[:-1]``): the
    quantiles of ``values - minus[..., None]``, bit for bit, without
    that difference of every value: rounding is monotone, so the order
    statistics of the differences are the differences of the order
    statistics, and only those are taken.
    """
    n = values.shape[-1]
    cuts = [float(c) for c in cuts]
    # numpy's virtual index of the linear method, and its neighbours
    virtual = [(n - 1) * c for c in cuts]
    index = [int(np.floor(v)) for v in virtual]
    low = sorted({i for c, i in zip(cuts, index) if c < 0.5})
    high = sorted({i for c, i in zip(cuts, index) if c >= 0.5})
    apart = low and high and low[-1] + 1 < high[0]
    if not (apart and low[0] >= 0 and high[-1] < n - 1):
        if minus is not None:
            values = values - np.asarray(minus)[..., None]
        return np.quantile(values, cuts, axis=-1)
    if SORTS_FAST and values.dtype == np.float64:
        # numpy's vectorised sort (x86-simd-sort) orders a row in less
        # time than the partitions take: the same order statistics
        values.sort(axis=-1)
        sort_stats = {i: (values[..., i], values[..., i + 1]) for i in index}
        below = above = sort_stats
        nan = np.isnan(values[..., -1])
    else:
        below, above, nan = _order_statistics(values, low, high)
    parts = []
    for c, v, i in zip(cuts, virtual, index):
        a, b = (below if c < 0.5 else above)[i]
        if minus is not None:
            a, b = a - minus, b - minus
        parts.append(_lerp(a, b, v - i))
    out = np.stack(parts)
    if nan.any():
        out[:, nan] = np.nan
    return out


def _sorts_fast() -> bool:
    """Whether numpy sorts float64 rows with its vectorised sort (numpy 2
    on x86 with AVX2 or AVX-512): there a full sort of a band's 512 x
    2000 simulations took 0.6 of the time of :func:`_block_tails` and
    the partitions (8.6 against 14 ms); elsewhere numpy's scalar sort is
    not assumed faster, and the partitions are kept."""
    try:
        from numpy._core._multiarray_umath import (  # type: ignore[import-not-found]
            __cpu_features__ as cpu,
        )
    except ImportError:
        return False
    major = int(np.__version__.split(".")[0])
    return major >= 2 and bool(cpu.get("AVX2") or cpu.get("AVX512_SKX"))


#: which way :func:`tail_quantiles` takes its order statistics (both give
#: the same numbers; fixed at import, for the machine's numpy)
SORTS_FAST = _sorts_fast()


def _order_statistics(
    values: np.ndarray, low: list[int], high: list[int]
) -> tuple[dict, dict, np.ndarray]:
    """``{i: (a, b)}`` the order statistics ``i`` and ``i + 1`` along the
    last axis for each rank ``i`` of ``low``, the same for ``high`` (both
    sorted, the highest of ``low`` plus one below the lowest of
    ``high``), and which rows hold a NaN. ``values`` may be partitioned
    in place."""
    n = values.shape[-1]
    tails = _block_tails(values, low[-1] + 2, n - high[0])
    if tails is None:
        values.partition(sorted({i + 1 for i in low} | set(high)), axis=-1)
        below = {
            i: (values[..., : i + 1].max(axis=-1), values[..., i + 1])
            for i in low
        }
        above = {
            i: (values[..., i], values[..., i + 1 :].min(axis=-1))
            for i in high
        }
        return below, above, np.isnan(above[high[-1]][1])
    bottom, top, nan = tails
    # the lowest values' ranks are the row's; the highest ones' are the
    # row's shifted by what the row holds beyond them
    bottom.partition(sorted({r for i in low for r in (i, i + 1)}), axis=1)
    shift = top.shape[1] - n
    top.partition(
        sorted({r + shift for i in high for r in (i, i + 1)}), axis=1
    )
    shape = values.shape[:-1]
    below = {
        i: (bottom[:, i].reshape(shape), bottom[:, i + 1].reshape(shape))
        for i in low
    }
    above = {
        i: (
            top[:, i + shift].reshape(shape),
            top[:, i + 1 + shift].reshape(shape),
        )
        for i in high
    }
    return below, above, nan.reshape(shape)


def _block_tails(values: np.ndarray, low: int, high: int) -> tuple | None:
    """``(rows, m)`` values of each row (the last axis) among which are
    its ``low`` smallest, such that every other value is at or above
    them, the same for its ``high`` largest, and which rows hold a NaN;
    ``None`` where the tails are not a small part of the row.

    Each row is cut into strided blocks. The ``low`` blocks with the
    smallest minima hold ``low`` values at or below the largest of those
    minima, and every other value is at or above it (its block's minimum
    is), so the ``low`` smallest values of the row are the ``low``
    smallest of those blocks (and the few values left over by the cut):
    a partition of a few hundred values instead of the row (the top
    mirrors it). The order statistics are the same values."""
    n = values.shape[-1]
    size = max(2, int(np.sqrt(n / max(low, high))))
    blocks = n // size
    if blocks < 2 * max(low, high):
        return None
    flat = np.ascontiguousarray(values).reshape(-1, n)
    rows = len(flat)
    body = flat[:, : size * blocks].reshape(rows, size, blocks)
    rest = flat[:, size * blocks :]
    # where block j of row r starts in the flat array (its values are
    # ``blocks`` apart)
    at = (np.arange(rows) * n)[:, None, None] + (np.arange(size) * blocks)[
        None, :, None
    ]

    def gather(pick: np.ndarray) -> np.ndarray:
        few = flat.ravel().take((at + pick[:, None, :]).reshape(rows, -1))
        return np.concatenate([few, rest], axis=1)

    mins = body.min(axis=1)
    bottom = gather(np.argpartition(mins, low - 1, axis=1)[:, :low])
    maxs = body.max(axis=1)
    top = gather(np.argpartition(maxs, blocks - high, axis=1)[:, -high:])
    # a NaN makes its block's minimum NaN (numpy's quantile is NaN then)
    nan = np.isnan(mins).any(axis=1) | np.isnan(rest).any(axis=1)
    return bottom, top, nan


def _lerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    """numpy's quantile interpolation between neighbouring order
    statistics ``a <= b`` at fraction ``t`` (from ``b`` downwards when
    ``t >= 0.5``, as numpy does)."""
    diff = b - a
    if t >= 0.5:
        return b - diff * (1 - t)
    return a + diff * t


@dataclass
class _Kept:
    """The product :func:`product_through` keeps for the next build with
    the same draws and an equal design, and what is derived from it."""

    draws: np.ndarray
    #: the design's shape, type and memory order, and its bits in that
    #: order (:func:`_bits`, read-only)
    layout: tuple
    bits: np.ndarray
    product: np.ndarray  # draws @ design.T
    runs: np.ndarray | None = None  # its transpose (:func:`runs_last`)
    #: {cuts: quantiles of runs} (:func:`run_quantiles`)
    quantiles: dict = field(default_factory=dict)


#: the one product kept (a list: empty until the first)
_KEPT: list[_Kept] = []


def _kept_for(product: np.ndarray) -> _Kept | None:
    return _KEPT[0] if _KEPT and _KEPT[0].product is product else None


def runs_last(product: np.ndarray) -> np.ndarray:
    """``product.T`` as a contiguous array; for the product
    :func:`product_through` keeps, kept beside it (a density's two
    columns read one)."""
    kept = _kept_for(product)
    if kept is not None and kept.runs is not None:
        return kept.runs
    runs = np.ascontiguousarray(product.T)
    runs.flags.writeable = False
    if kept is not None:
        kept.runs = runs
    return runs


def run_quantiles(
    product: np.ndarray, runs: np.ndarray, cuts: list[float]
) -> np.ndarray:
    """The ``cuts`` quantiles of each point's simulated noise (``runs``,
    the transpose of ``product``): a plain sum's band, the same for every
    group and every build with the same design, kept beside the product
    :func:`product_through` keeps."""
    kept = _kept_for(product)
    cache = kept.quantiles if kept is not None else {}
    key = tuple(cuts)
    if key not in cache:
        q = tail_quantiles(runs.copy(), cuts)
        q.flags.writeable = False
        cache[key] = q
    return cache[key]


def _layout(design: np.ndarray) -> tuple:
    """A design's shape, type and memory order (``F``: column-major)."""
    f = design.ndim > 1 and design.flags.f_contiguous
    order = "F" if f and not design.flags.c_contiguous else "C"
    return design.shape, design.dtype.str, order


def _bits(design: np.ndarray, order: str) -> np.ndarray:
    """The design's content as unsigned integers of its width, in its
    memory ``order`` (a column-major design is read as it lies, as its
    transpose, without a copy): equal bits, equal content (signed zeros
    and NaNs told apart)."""
    flat = np.ascontiguousarray(design.T if order == "F" else design)
    return flat.view(f"u{flat.dtype.itemsize}")


def _same_design(kept: _Kept, design: np.ndarray) -> bool:
    """Whether ``design`` has the kept design's layout and content (its
    bits compared: a tenth of the time of hashing them)."""
    layout = _layout(design)
    if layout != kept.layout:
        return False
    return bool(np.array_equal(_bits(design, layout[2]), kept.bits))


def is_running_sums(design: np.ndarray, k: int) -> bool:
    """Whether ``design`` is the ``(k + 1, k)`` map of ``k`` counts to
    their running sums at the edges (a CDF's numerator), whose product
    with whole-number draws a cumulative sum gives exactly.

    >>> is_running_sums(np.tril(np.ones((4, 3)), -1), 3)
    True
    """
    return design.shape == (k + 1, k) and np.array_equal(
        design, np.tril(np.ones((k + 1, k)), -1)
    )


def product_through(draws: np.ndarray, design: np.ndarray) -> np.ndarray:
    """``draws @ design.T``, kept for the next call with the very same
    draws and a design of the same content: a density's ``density`` and
    ``count`` share one design, and a rebuild of a plot (its draw after
    its report, a neighbour, another seed) makes an equal design again,
    so the largest product of the build is computed once. The design is
    a function of public parameters only. The entry holds the draws, so
    identity cannot be a recycled ``id``, and compares designs by
    content (their bits, in the same memory order)."""
    if _KEPT and _KEPT[0].draws is draws and _same_design(_KEPT[0], design):
        return _KEPT[0].product
    k = draws.shape[1]
    if is_running_sums(design, k):
        # running sums (CDFs, quantiles): a cumulative sum instead of an
        # O(sims * k**2) product; the same numbers, as the draws are
        # whole numbers (exact in floating point)
        product = np.zeros((len(draws), k + 1))
        np.cumsum(draws, axis=1, out=product[:, 1:])
    else:
        product = draws @ design.T
    product.flags.writeable = False
    layout = _layout(design)
    bits = _bits(design, layout[2])
    if np.shares_memory(bits, design):
        bits = bits.copy()  # a copy the caller cannot change
    bits.flags.writeable = False
    _KEPT[:] = [_Kept(draws, layout, bits, product)]
    return product
