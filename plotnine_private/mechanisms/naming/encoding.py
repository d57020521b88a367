"""Byte-level helpers of the cell names (:mod:`.cellnames`, which
re-exports them) and of the domain digests (:mod:`.place_streams`): plain
strings as UTF-8 runs, integers at their narrowest width. NumPy only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "narrowest",
    "only_str",
    "tagged_float_runs",
    "tagged_int_runs",
    "tagged_runs",
    "utf8_runs",
]


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
    if not len(values) or type(next(iter(values))) is not str:
        return False  # at once: 10**6 int levels are asked this often
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


#: below this, an integral float's ``repr`` is its integer and ``.0``
_PLAIN_WHOLE = 1e16


def tagged_float_runs(values: np.ndarray) -> bytes | None:
    """:func:`tagged_runs` of the texts of the floats ``values`` with tag
    ``b"f:"`` (each text ``repr(float(v))``, a zero written ``0.0``),
    made in bulk where every value is a whole number below 10**16 in
    magnitude: then its ``repr`` is its integer's digits and ``.0``
    (``repr`` writes an exponent from 10**16 on), the digits written by
    integer division, one pass a digit. None for any other values (the
    caller writes their ``repr``).

    >>> tagged_float_runs(np.array([-3.0, 0.0, -0.0])) == tagged_runs(
    ...     ["-3.0", "0.0", "0.0"], b"f:")
    True
    >>> tagged_float_runs(np.array([0.5])) is None
    True
    """
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    if not n:
        return b""
    with np.errstate(invalid="ignore"):
        if not bool(((np.abs(v) < _PLAIN_WHOLE) & (np.floor(v) == v)).all()):
            return None
    whole = np.abs(v).astype(np.int64)
    return _digit_runs(whole, v < 0, b"f:", b".0")  # -0.0 is not < 0


def tagged_int_runs(values: Sequence[int] | np.ndarray) -> bytes | None:
    """:func:`tagged_runs` of the decimal texts of plain ints, or of a
    numpy array of integers (each ``str(v)``) with tag ``b"i:"``: the
    bytes a tuple of ints has in a query's identity, the digits written
    in bulk. None when some value is
    not a plain ``int`` (a bool, a float), is outside int64, or is its
    lowest value, whose magnitude int64 does not hold (the caller then
    writes them one by one).

    >>> tagged_int_runs([-3, 0, 120]) == tagged_runs(
    ...     ["-3", "0", "120"], b"i:")
    True
    >>> tagged_int_runs([1, True]) is None
    True
    """
    n = len(values)
    if not n:
        return b""
    if isinstance(values, np.ndarray):  # an array of ints (IntLevels)
        if values.dtype.kind not in "iu" or values.max() > 2**63 - 1:
            return None
        v = values.astype(np.int64)
    elif set(map(type, values)) != {int}:
        return None
    else:
        try:
            v = np.fromiter(values, dtype=np.int64, count=n)
        except OverflowError:
            return None
    if bool((v == np.iinfo(np.int64).min).any()):
        return None  # its magnitude is no int64
    return _digit_runs(np.abs(v), v < 0, b"i:", b"")


def _digit_runs(
    whole: np.ndarray, neg: np.ndarray, tag: bytes, suffix: bytes
) -> bytes:
    """Each number's text (``-`` where ``neg``, the decimal digits of
    ``whole`` (int64, >= 0), then ``suffix``) after its length + 2 as 4
    little-endian bytes and the 2-byte ``tag``, joined."""
    n = len(whole)
    width = len(str(int(whole.max())))  # digits of the longest
    digits = np.ones(n, dtype=np.int64)
    for k in range(1, width):
        digits += whole >= 10**k
    # runs of one sign and one number of digits (a few where the levels
    # are sorted): each written as rows of one width, no mask
    kind = digits + 32 * neg
    cuts = np.flatnonzero(kind[1:] != kind[:-1]) + 1
    if len(cuts) > 64:
        return _masked_runs(whole, neg, digits, width, tag, suffix)
    out = []
    tail = len(suffix)
    for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), n]):
        sign, size = bool(neg[a]), int(digits[a])
        head = (sign + size + tail + 2).to_bytes(4, "little") + tag
        text = b"-" if sign else b""
        row = np.empty((b - a, 6 + sign + size + tail), dtype=np.uint8)
        row[:] = np.frombuffer(head + text + b"0" * size + suffix, np.uint8)
        _write_digits(row, whole[a:b], 6 + sign, size)
        out.append(row.tobytes())
    return b"".join(out)


def _write_digits(
    row: np.ndarray, whole: np.ndarray, first: int, width: int
) -> None:
    """Write the decimal digits of ``whole`` right-aligned in columns
    ``first .. first + width - 1`` of ``row`` (ASCII; columns a number
    has no digit for are left as they are)."""
    # 32-bit division where the values allow it: three times as fast
    rest = whole.astype(np.uint32) if width < 10 else whole
    for k in range(width):  # the last digit first
        ahead = rest // 10
        row[:, first + width - 1 - k] = rest - ahead * 10 + ord("0")
        rest = ahead


def _masked_runs(
    whole: np.ndarray,
    neg: np.ndarray,
    digits: np.ndarray,
    width: int,
    tag: bytes,
    suffix: bytes,
) -> bytes:
    """:func:`_digit_runs` of values in no order: a row each of the
    widest width, the bytes a value does not have masked out."""
    n = len(whole)
    tail = len(suffix)
    # a row per value: length + 2 (4 bytes), the tag, its sign, its
    # digits right-aligned in `width` columns, the suffix
    row = np.empty((n, 7 + width + tail), dtype=np.uint8)
    size = neg + digits + tail
    row[:, :4] = (size + 2).astype("<u4").view(np.uint8).reshape(n, 4)
    row[:, 4:6] = np.frombuffer(tag, dtype=np.uint8)
    row[:, 6] = ord("-")
    _write_digits(row, whole, 7, width)
    if tail:
        row[:, -tail:] = np.frombuffer(suffix, dtype=np.uint8)
    # which bytes a row keeps, for each sign and number of digits: one
    # row of this table gathered per value
    kept = np.ones((2, width + 1, row.shape[1]), dtype=bool)
    kept[0, :, 6] = False
    kept[:, :, 7 : 7 + width] = (
        np.arange(width, 0, -1) <= np.arange(width + 1)[:, None]
    )
    keep = kept[neg.astype(np.intp), digits]
    return row[keep].tobytes()
