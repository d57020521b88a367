"""The typed bytes of one cell value (:func:`value_bytes`): a tag word,
``(type << 56) | payload length in bytes``, then the payload padded to
whole little-endian 64-bit words. Numbers are named by their exact
value: an integral finite float is the integer it equals (4 and 4.0 are
one level, as pandas has them), any other float its IEEE bits (one
NaN); a tuple is its parts' bytes, so :func:`memo_bytes` encodes each
part once for many cells.

NumPy only (no pandas): pandas values are recognised by what they are
(``datetime`` subclasses, ``NaT``/``NA`` by type name).
"""

from __future__ import annotations

import datetime as _dt
import numbers
from typing import Any

import numpy as np

__all__ = [
    "NAN_BITS",
    "NS_PER",
    "T_BOOL",
    "T_FLOAT",
    "T_INT",
    "T_STR",
    "T_TIME",
    "memo_bytes",
    "value_bytes",
]

_U64 = np.uint64

_T_NONE, T_BOOL, T_INT, _T_BIGINT, T_FLOAT = 1, 2, 3, 4, 5
T_STR, _T_BYTES, _T_TIME, _T_TIME_UTC, _T_DATE = 6, 7, 8, 9, 10
_T_DURATION, _T_NAT, _T_TUPLE, _T_OTHER = 11, 12, 13, 14
NAN_BITS = np.float64("nan").view(_U64)
_EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()
_NS_PER = {
    "W": 604_800 * 10**9,
    "D": 86_400 * 10**9,
    "h": 3_600 * 10**9,
    "m": 60 * 10**9,
    "s": 10**9,
    "ms": 10**6,
    "us": 10**3,
    "ns": 1,
}
#: the tag of a naive date-time and the nanoseconds of each datetime64
#: unit, for the names of many date-times at once (:mod:`.time_values`)
T_TIME = _T_TIME
NS_PER = _NS_PER


def _tagged(tag: int, payload: bytes) -> bytes:
    pad = -len(payload) % 8
    head = ((tag << 56) | len(payload)).to_bytes(8, "little")
    return head + payload + bytes(pad)


def _int_bytes(value: int) -> bytes:
    if -(2**63) <= value < 2**63:
        return _tagged(T_INT, value.to_bytes(8, "little", signed=True))
    size = (value.bit_length() + 8) // 8
    return _tagged(_T_BIGINT, value.to_bytes(size, "little", signed=True))


def _ns_bytes(tag: int, ns: int) -> bytes:
    # 128 bits: nanoseconds of years 1..9999 overflow 64
    return _tagged(tag, ns.to_bytes(16, "little", signed=True))


def _datetime_ns(value: Any) -> tuple[int, int]:
    tag = _T_TIME
    if value.tzinfo is not None and value.utcoffset() is not None:
        value = value.astimezone(_dt.timezone.utc)
        tag = _T_TIME_UTC
    seconds = (
        (value.toordinal() - _EPOCH_ORDINAL) * 86_400
        + value.hour * 3_600
        + value.minute * 60
        + value.second
    )
    ns = (
        seconds * 10**9
        + value.microsecond * 1_000
        + int(getattr(value, "nanosecond", 0))
    )
    return tag, ns


def _numpy_time_ns(value: Any) -> int | None:
    """Nanoseconds of a datetime64/timedelta64 scalar (None for NaT)."""
    if np.isnat(value):
        return None
    unit, count = np.datetime_data(value.dtype)
    if unit in ("Y", "M"):
        value = value.astype("datetime64[D]")
        unit, count = "D", 1
    return int(value.astype(np.int64)) * _NS_PER[unit] * count


def value_bytes(value: Any) -> bytes:
    """The typed, self-delimiting encoding of one cell value.

    Distinct values have distinct encodings (values equal as numbers are
    one value), and no encoding is a prefix of another, so a cell's
    columns concatenated name it injectively.

    >>> value_bytes(4) == value_bytes(4.0)
    True
    >>> value_bytes(4.0) == value_bytes("4.0")
    False
    >>> value_bytes(True) == value_bytes(1)
    False
    >>> value_bytes(2**53) == value_bytes(2**53 + 1)
    False
    """
    if value is None or type(value).__name__ == "NAType":
        return _tagged(_T_NONE, b"")
    if type(value).__name__ == "NaTType":
        return _tagged(_T_NAT, b"")
    if isinstance(value, (bool, np.bool_)):
        return _tagged(T_BOOL, bytes([bool(value)]))
    if isinstance(value, (int, np.integer)):
        return _int_bytes(int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if f == f and abs(f) != float("inf") and f == int(f):
            return _int_bytes(int(f))
        bits = NAN_BITS if f != f else np.float64(f).view(_U64)
        return _tagged(T_FLOAT, int(bits).to_bytes(8, "little"))
    if isinstance(value, str):
        return _tagged(T_STR, value.encode("utf-8"))
    if isinstance(value, (bytes, bytearray)):
        return _tagged(_T_BYTES, bytes(value))
    if isinstance(value, np.datetime64):
        ns = _numpy_time_ns(value)
        return _tagged(_T_NAT, b"") if ns is None else _ns_bytes(_T_TIME, ns)
    if isinstance(value, np.timedelta64):
        ns = _numpy_time_ns(value)
        return (
            _tagged(_T_NAT, b"") if ns is None else _ns_bytes(_T_DURATION, ns)
        )
    if isinstance(value, _dt.datetime):
        return _ns_bytes(*_datetime_ns(value))
    if isinstance(value, _dt.date):
        return _tagged(_T_DATE, value.toordinal().to_bytes(8, "little"))
    if isinstance(value, _dt.timedelta):
        us = (value.days * 86_400 + value.seconds) * 10**6
        ns = (us + value.microseconds) * 1_000
        ns += int(getattr(value, "nanoseconds", 0))
        return _ns_bytes(_T_DURATION, ns)
    if isinstance(value, tuple):
        return _tagged(_T_TUPLE, b"".join(map(value_bytes, value)))
    if isinstance(value, numbers.Integral):
        return _int_bytes(int(value))
    # anything else: its type and text (rare: labels are the types above)
    kind = type(value)
    text = f"{kind.__module__}.{kind.__qualname__}\0{value}"
    return _tagged(_T_OTHER, text.encode("utf-8"))


def memo_bytes(value: Any, memo: dict) -> bytes:
    """:func:`value_bytes` of ``value``, each hashable part encoded once
    per ``memo``: a tuple's bytes are its parts' (the encoding is
    compositional), so the cells of a product domain (a synopsis's
    ``(marginal, levels)``) reuse their levels' bytes. Only parts of
    :data:`_MEMO_KINDS` are kept, keyed with their type (``True`` and
    ``1`` are named apart).

    >>> from decimal import Decimal
    >>> memo = {}
    >>> cells = [("a", 4, True), ("a", 4.0, 1), (Decimal("1.0"),),
    ...          (Decimal("1.00"),), (0.0, -0.0)]
    >>> all(memo_bytes(c, memo) == value_bytes(c) for c in cells * 2)
    True
    """
    kind = type(value)
    if kind is tuple:
        return _tagged(
            _T_TUPLE, b"".join([memo_bytes(v, memo) for v in value])
        )
    if kind not in _MEMO_KINDS:  # e.g. Decimal("1.0") == Decimal("1.00")
        return value_bytes(value)  # but their texts differ
    key = (kind, value)
    b = memo.get(key)
    if b is None:
        b = memo[key] = value_bytes(value)
    return b


#: the types whose values equal as dict keys have equal
#: :func:`value_bytes` (a NaN is never equal: it is encoded each time)
_MEMO_KINDS = frozenset({str, int, float, bool, np.float64, np.int64})
