"""Exact discrete Laplace from one 64-bit word per cell (stream version 2).

``N ~ DLap(b)``, ``b = t/s``, ``p = exp(-s/t)``, has tails

    P(|N| >= m) = T_m = 2 p^m / (1 + p)      (m >= 1),

so with ``U`` uniform on ``[0, 1)`` the magnitude ``|N| = #{m >= 1 : U <
T_m}`` (the largest ``m`` with ``U < T_m``; the ``T_m`` decrease) and a fair
sign for ``|N| >= 1`` give exactly ``P(N = k) = (1-p)/(1+p) p^|k|``.

``U`` is read lazily from the cell's stream: the head word gives a sign bit
(its lowest bit) and the first 63 binary digits ``u`` of ``U``, so ``U`` lies
in ``[u, u + 1) / 2**63``. With ``f_m = floor(2**63 T_m)``, ``u < f_m``
proves ``U < T_m`` and ``u > f_m`` proves ``U >= T_m``; only ``u = f_m``
(probability about ``2**-63`` per table entry, and ``u = 0``, for the
entries below the table) leaves ``U`` undecided, and then further words of
the cell's stream extend ``U`` 64 digits at a time until the comparison is
decided (:func:`_exact_magnitude`). Since every ``T_m`` is irrational, this
ends with probability 1; the result is exactly ``DLap(b)``, not an
approximation: the ``f_m`` are exact integers, certified with interval
bounds (:func:`_scaled_floor`, :func:`_table_floors`), and no
floating-point number enters the draw.

The vector path looks ``u`` up in a table indexed by its top 16 bits: a
bucket that holds no ``f_m`` has one magnitude for all its ``u``; the other
buckets (at most one per table entry) use a binary search. Tables are
built once per scale and cached; for scales above about 1,500 (``ε`` below
about ``10^-3`` at ``Δ = 2``) the table would pass 2**16 entries and the
caller uses the CKS sampler on the cell's stream instead. For scales below
about 1/44 (``ε`` above about 88 at ``Δ = 2``) even ``f_1`` is 0: the table
is empty, every ``u`` but 0 has magnitude 0, and ``u = 0`` (one cell in
2**63) reads more words like any undecided head.
"""

from __future__ import annotations

import decimal
import functools
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

__all__ = ["inversion_table", "discrete_laplace_inversion"]

_U64 = np.uint64
_HEAD_BITS = 63
_BUCKET_BITS = 16
#: largest table (entries) built; larger scales use the CKS sampler
MAX_TABLE = 1 << 16
_CHUNK = 1 << 16  # cells per vector pass


def _scaled_floor(t: int, s: int, m: int, bits: int) -> int:
    """``floor(2**bits * 2 exp(-m s/t) / (1 + exp(-s/t)))``, exactly.

    Computed in decimal arithmetic (every operation, ``exp`` included, is
    correctly rounded at the context's precision), then certified: the
    value lies within a relative error far below ``err`` of the computed
    ``v``, and the floor is returned only when ``v(1 - err)`` and
    ``v(1 + err)`` have the same floor; otherwise the precision doubles.

    >>> _scaled_floor(2, 1, 1, 10)  # 2**10 * 2 e^-0.5 / (1 + e^-0.5)
    773
    """
    prec = int(bits * 0.31) + 30
    while True:
        with decimal.localcontext() as ctx:
            ctx.prec = prec
            ctx.Emax, ctx.Emin = decimal.MAX_EMAX, decimal.MIN_EMIN
            ctx.rounding = decimal.ROUND_HALF_EVEN
            x1 = Decimal(s) / Decimal(t)
            xm = Decimal(s * m) / Decimal(t)
            v = Decimal(2 << bits) * (-xm).exp() / (1 + (-x1).exp())
            # relative error per rounding <= 10**(1 - prec) / 2; an
            # argument error d of exp becomes a relative error x*d
            err = (xm + x1 + 10) * Decimal(10) ** (2 - prec)
            ctx.rounding = decimal.ROUND_FLOOR
            lo = int(v * (1 - err))
            ctx.rounding = decimal.ROUND_CEILING
            hi = int(v * (1 + err))
        if lo == hi:
            return lo
        prec *= 2


def _table_floors(
    t: int, s: int, bits: int, prec: int | None = None
) -> list[int]:
    """``[_scaled_floor(t, s, m, bits) for m = 1, 2, ...]`` up to the last
    that is not 0: the same integers, about 20 times faster.

    ``T_m = T_(m-1) p``: one decimal product per entry instead of two
    ``exp``. The product's relative error grows by at most one rounding
    (``u = 10**(1 - prec) / 2``) and the error of ``p`` (``(s/t + 1)
    u``) per step, so after ``m`` steps it is below ``(m s/t + 2m + s/t
    + 3) u``; ``err`` is twice that (the higher-order terms are far
    smaller). An entry is kept only where ``v(1 - err)`` and ``v(1 +
    err)`` have one floor, so it is the exact floor; otherwise (about
    never at the default ``prec``) it comes from :func:`_scaled_floor`.

    >>> _table_floors(2, 1, 10)[:3], len(_table_floors(2, 1, 10))
    ([773, 468, 284], 14)
    """
    if prec is None:
        # six more digits than _scaled_floor starts with: a table has at
        # most 2**16 entries, and the bound grows with m
        prec = int(bits * 0.31) + 36
    floors: list[int] = []
    with decimal.localcontext() as ctx:
        ctx.prec = prec
        ctx.Emax, ctx.Emin = decimal.MAX_EMAX, decimal.MIN_EMIN
        unit = Decimal(10) ** (1 - prec)
        p = (-(Decimal(s) / Decimal(t))).exp()
        v = Decimal(2 << bits) / (1 + p)
        m = 1
        while True:
            ctx.rounding = decimal.ROUND_HALF_EVEN
            v = v * p
            err = ((m * s) // t + 2 * m + s // t + 5) * unit
            ctx.rounding = decimal.ROUND_FLOOR
            lo = int(v * (1 - err))
            ctx.rounding = decimal.ROUND_CEILING
            hi = int(v * (1 + err))
            f = lo if lo == hi else _scaled_floor(t, s, m, bits)
            if f == 0:
                return floors
            floors.append(f)
            m += 1


@dataclass(frozen=True)
class InversionTable:
    """The exact thresholds of one scale ``t/s`` and their bucket index."""

    t: int
    s: int
    #: ``f_m`` for m = M, ..., 1 (ascending), every one >= 1
    ascending: np.ndarray
    #: magnitude of every ``u`` in a bucket, or -1 (search the bucket)
    bucket: np.ndarray

    @property
    def size(self) -> int:
        return int(self.ascending.size)


# a memo of a pure function of (t, s): the same in every session
@functools.lru_cache(maxsize=64)
def inversion_table(t: int, s: int) -> InversionTable | None:
    """The table of ``DLap(t/s)`` (``t, s`` coprime), or ``None`` when it
    would have more than :data:`MAX_TABLE` entries."""
    # T_m < 2**-63 once m > (63 ln 2 + ln 2) t/s: a cheap size bound
    if 44.4 * t / s > MAX_TABLE:
        return None
    asc = np.array(_table_floors(t, s, _HEAD_BITS)[::-1], dtype=_U64)
    shift = _HEAD_BITS - _BUCKET_BITS
    j = np.arange(1 << _BUCKET_BITS, dtype=_U64)
    lo = j << _U64(shift)
    hi1 = (j + _U64(1)) << _U64(shift)  # one past the bucket
    below_lo = np.searchsorted(asc, lo, side="left")
    below_hi1 = np.searchsorted(asc, hi1, side="left")
    pure = below_lo == below_hi1  # no f_m inside the bucket
    bucket = np.where(pure, asc.size - below_hi1, -1).astype(np.int32)
    bucket[0] = -1  # u = 0 is always undecided (f_m = 0 beyond the table)
    return InversionTable(t, s, asc, bucket)


def _exact_magnitude(
    u: int, more: Callable[[], int], t: int, s: int, first: int
) -> int:
    """Magnitude of a draw whose ``U`` starts with the 63 digits ``u``,
    given that ``U < T_m`` for every ``m < first``; ``more()`` returns the
    cell's next 64-bit stream word (the next 64 digits of ``U``)."""
    a, k = u, _HEAD_BITS  # U in [a, a + 1) / 2**k
    m = first
    while True:
        while True:
            g = _scaled_floor(t, s, m, k)
            if a != g:
                break
            a, k = (a << 64) | int(more()), k + 64
        if a > g:  # U >= T_m: the magnitude is m - 1
            return m - 1
        m += 1


def discrete_laplace_inversion(
    streams, table: InversionTable, cells: np.ndarray | None = None
) -> np.ndarray:
    """``DLap(t/s)`` for the (flat) ``cells``, reading one word of each
    cell's stream (more for about one cell in 2**60). ``cells=None``:
    every cell of the streams in order, whose first words are then read
    in one call (the same words, without selecting the cells of each
    chunk)."""
    if cells is None:
        heads = streams.words(None)
        cells = np.arange(streams.n)
    else:
        heads = None
    out = np.empty(cells.size, dtype=np.int64)
    for a in range(0, cells.size, _CHUNK):  # chunks stay in cache
        part = cells[a : a + _CHUNK]
        h = streams.words(part) if heads is None else heads[a : a + part.size]
        out[a : a + part.size] = _draw_chunk(streams, table, part, h)
    return out


def _draw_chunk(streams, table: InversionTable, cells: np.ndarray, h):
    u = h >> _U64(1)
    shift = _U64(_HEAD_BITS - _BUCKET_BITS)
    mag = table.bucket.take((u >> shift).astype(np.intp)).astype(np.int64)
    mixed = np.flatnonzero(mag < 0)
    if mixed.size:
        um = u[mixed]
        pos = np.searchsorted(table.ascending, um, side="right")
        mag[mixed] = table.size - pos
        # undecided: u = 0 (U may lie below every T_m past the table) or
        # u equal to the largest entry not above it; an empty table
        # (scales below about 1/44, where even f_1 = 0) has no entry
        undecided = um == 0
        on_entry = np.flatnonzero(pos > 0)
        undecided[on_entry] |= (
            table.ascending[pos[on_entry] - 1] == um[on_entry]
        )
        for i in mixed[undecided].tolist():
            one = np.array([cells[i]])

            def more(one=one) -> int:
                return int(streams.words(one)[0])

            mag[i] = _exact_magnitude(
                int(u[i]), more, table.t, table.s, int(mag[i]) + 1
            )
    neg = (h & _U64(1)).view(np.int64)  # the sign bit: 0 or 1
    return mag - 2 * neg * mag
