"""Byte-level helpers of the cell names (:mod:`.cellnames`, which
re-exports them) and of the domain digests (:mod:`.place_streams`): plain
strings as UTF-8 runs, integers at their narrowest width. NumPy only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["narrowest", "only_str", "tagged_runs", "utf8_runs"]


def utf8_runs(values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of ``values`` one after the other (``uint8``) and
    each value's length in bytes.

    Labels are mostly ASCII: then one ``join`` and the character counts
    give both without encoding each value on its own.

    >>> data, lens = utf8_runs(["ab", "é", ""])
    >>> data.tobytes(), lens.tolist()
    (b'ab\\xc3\\xa9', [2, 2, 0])
    """
    n = len(values)
    joined = "".join(values).encode("utf-8")
    lens = np.fromiter(map(len, values), dtype=np.int64, count=n)
    if len(joined) != int(lens.sum()):  # some value is not ASCII
        lens = np.fromiter(
            (len(v.encode("utf-8")) for v in values), dtype=np.int64, count=n
        )
    return np.frombuffer(joined, dtype=np.uint8), lens


def only_str(values: Sequence[Any]) -> bool:
    """Whether every value is a plain ``str`` (not a subclass).

    >>> only_str(["a", "b"]), only_str(["a", 1]), only_str([])
    (True, False, False)
    """
    return set(map(type, values)) == {str}


def narrowest(values: np.ndarray) -> np.ndarray:
    """Integers in the narrowest little-endian type that holds them
    (unsigned unless one is negative): fewer bytes to hash.

    >>> narrowest(np.array([3, 300])).dtype.str
    '<u2'
    """
    values = np.asarray(values)
    if not values.size or int(values.min()) < 0:
        return values.astype("<i8", copy=False)
    top = int(values.max())
    return values.astype(
        next(f"<u{w}" for w in (1, 2, 4, 8) if top >> 8 * w == 0), copy=False
    )


def tagged_runs(values: Sequence[str], tag: bytes) -> bytes:
    """Each value's UTF-8 length plus 2 as 4 little-endian bytes, the
    2-byte ``tag`` and its bytes, joined: the bytes a tuple of such
    values has in a query's identity (``b"s:"`` for strings, ``b"f:"``
    for floats written as text), built in one buffer.

    >>> tagged_runs(["ab", ""], b"s:")
    b'\\x04\\x00\\x00\\x00s:ab\\x02\\x00\\x00\\x00s:'
    """
    data, lens = utf8_runs(values)
    n = len(lens)
    if not n:
        return b""
    head = np.empty((n, 6), dtype=np.uint8)
    head[:, :4] = (lens + 2).astype("<u4").view(np.uint8).reshape(n, 4)
    head[:, 4:] = np.frombuffer(tag, dtype=np.uint8)
    size = lens + 6
    out = np.empty(int(size.sum()), dtype=np.uint8)
    heads = np.cumsum(size) - size
    is_head = np.zeros(out.size, dtype=bool)
    for k in range(6):  # 6 passes over the values, none over bytes
        out[heads + k] = head[:, k]
        is_head[heads + k] = True
    out[~is_head] = data
    return out.tobytes()
