"""Integer codes of records: each record's level or cell as a small
integer, in the smallest signed type that holds them, computed a chunk
of records at a time."""

from __future__ import annotations

import numpy as np

__all__ = ["CHUNK", "chunked_codes", "grid_codes", "small_codes"]


#: records per pass: per-chunk temporaries stay a few MB whatever n is
CHUNK = 1 << 18


def small_codes(codes: np.ndarray, size: int) -> np.ndarray:
    """``codes`` in the smallest signed integer type holding -1..size.

    >>> small_codes(np.array([0, 2, -1]), 3).dtype
    dtype('int8')
    """
    for dtype in (np.int8, np.int16, np.int32):
        if size < np.iinfo(dtype).max:
            return np.asarray(codes).astype(dtype, copy=False)
    return np.asarray(codes, dtype=np.int64)


def chunked_codes(n: int, size: int, code_of) -> np.ndarray:
    """Codes of ``n`` records computed chunk by chunk (``code_of(slice)``
    gives a chunk's codes), stored in the smallest integer type: the
    int64 and float temporaries of one chunk are all that is held at a
    time."""
    out = small_codes(np.empty(0, np.int64), size)
    out = np.empty(n, dtype=out.dtype)
    for start in range(0, n, CHUNK):
        part = slice(start, min(start + CHUNK, n))
        out[part] = code_of(part)
    return out


def grid_codes(ix: np.ndarray, iy: np.ndarray, nx: int, ny: int) -> np.ndarray:
    """Cell ``iy * nx + ix`` of a grid from per-axis codes (-1 outside on
    either axis), chunk by chunk, in the smallest integer type."""
    return chunked_codes(
        len(ix),
        nx * ny,
        lambda part: np.where(
            (ix[part] >= 0) & (iy[part] >= 0),
            iy[part].astype(np.int64) * nx + ix[part],
            -1,
        ),
    )
