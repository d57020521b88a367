"""Naive date-times named in bulk: a datetime64 array's nanoseconds,
their cell words (:func:`time_words`: :func:`~.cell_values.value_bytes`
of each value) and their texts (:func:`time_texts`: ``str`` of each as a
pandas ``Timestamp``), without a Python object per value.

NumPy only (no pandas): a Timestamp's text is written here digit by
digit, as pandas writes it (tested against pandas).
"""

from __future__ import annotations

import numpy as np

from .cell_values import NS_PER, T_TIME

__all__ = ["time_ns", "time_ns_where", "time_texts", "time_words"]

_U64 = np.uint64
_I64_MAX = np.iinfo(np.int64).max
_NAT = np.iinfo(np.int64).min
_DAY_NS = 86_400 * 10**9


def time_ns(values: np.ndarray) -> np.ndarray | None:
    """The nanoseconds since 1970-01-01 of a datetime64 array (any unit)
    as int64, exactly; None if one is NaT or does not fit int64 (such
    values are named one at a time).

    >>> time_ns(np.array(["1970-01-02", "1969-12-31"], "M8[D]")).tolist()
    [86400000000000, -86400000000000]
    >>> time_ns(np.array(["NaT"], "M8[s]")) is None
    True
    """
    found = time_ns_where(values)
    if found is None or not bool(found[1].all()):
        return None
    return found[0]


def time_ns_where(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The nanoseconds of each value of a datetime64 array (0 where it
    has none) and where they are exact: not NaT, and within int64. None
    for a unit without a fixed number of nanoseconds (generic).

    >>> ns, ok = time_ns_where(np.array([1, "NaT", 2**62], "M8[s]"))
    >>> ns.tolist(), ok.tolist()
    ([1000000000, 0, 0], [True, False, False])
    """
    if values.dtype.kind != "M":
        return None
    unit, count = np.datetime_data(values.dtype)
    if unit in ("Y", "M"):  # as value_bytes does: through days
        values = values.astype("datetime64[D]")
        unit, count = "D", 1
    if unit not in NS_PER:
        return None
    raw = values.view(np.int64)
    ok = raw != _NAT
    factor = NS_PER[unit] * count
    if factor == 1:
        return np.where(ok, raw, 0), ok
    ok &= (raw >= -(_I64_MAX // factor)) & (raw <= _I64_MAX // factor)
    return np.where(ok, raw, 0) * np.int64(factor), ok


def time_words(ns: np.ndarray) -> np.ndarray:
    """``(n, 3)`` words of naive date-times given as int64 nanoseconds:
    the tag word of a 16-byte time, then the nanoseconds as a signed
    128-bit little-endian integer (low word, sign word): each row is
    :func:`~.cell_values.value_bytes` of the value as words.

    >>> from .cell_values import value_bytes
    >>> w = time_words(np.array([-5], dtype=np.int64))
    >>> w.astype("<u8").tobytes() == value_bytes(np.datetime64(-5, "ns"))
    True
    """
    ns = np.asarray(ns, dtype=np.int64)
    out = np.empty((len(ns), 3), dtype=_U64)
    out[:, 0] = (T_TIME << 56) | 16
    out[:, 1] = ns.view(_U64)
    out[:, 2] = (ns >> np.int64(63)).view(_U64)  # 0 or all ones
    return out


def _civil(days: np.ndarray) -> tuple[np.ndarray, ...]:
    """Year, month and day of each day count since 1970-01-01 (H.
    Hinnant's ``civil_from_days``, in int64)."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1_460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    return yoe + era * 400 + (month <= 2), month, day


def _digits(value: np.ndarray, n: int) -> np.ndarray:
    """``(len(value), n)`` ASCII digits of non-negative integers."""
    out = np.empty((len(value), n), dtype=np.uint8)
    for k in range(n - 1, -1, -1):
        out[:, k] = 48 + value % 10
        value = value // 10
    return out


def _clock() -> np.ndarray:
    """``HH:MM:SS`` of every second of a day, one row each (691 KB, made
    in some 7 ms per call: not kept, as no module state is)."""
    s = np.arange(86_400)
    rows = np.empty((86_400, 8), dtype=np.uint8)
    rows[:, 0:2] = _digits(s // 3600, 2)
    rows[:, 3:5] = _digits(s // 60 % 60, 2)
    rows[:, 6:8] = _digits(s % 60, 2)
    rows[:, [2, 5]] = ord(":")
    return rows


def time_texts(ns: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``str(pd.Timestamp(v))`` of naive date-times given as int64
    nanoseconds, as one UTF-8 buffer (the offsets and bytes that
    :class:`~.cellnames.StrLabels` takes): ``YYYY-MM-DD HH:MM:SS``, then
    ``.`` and 6 digits when the value has microseconds but no
    nanoseconds, 9 when it has nanoseconds. None when a year is outside
    1000..9999 (named one at a time).

    >>> at, data = time_texts(np.array([0, 1500, 10**9 + 2000], np.int64))
    >>> at.tolist(), data.tobytes()[19:48]
    ([0, 19, 48, 74], b'1970-01-01 00:00:00.000001500')
    """
    ns = np.asarray(ns, dtype=np.int64)
    n = len(ns)
    offsets = np.zeros(n + 1, dtype=np.int64)
    if not n:
        return offsets, np.zeros(0, dtype=np.uint8)
    days = ns // _DAY_NS  # floor: a time before 1970 counts back
    in_day = ns - days * _DAY_NS
    second = in_day // 10**9
    fraction = in_day - second * 10**9
    # each day's text made once, from a table of the days spanned (the
    # int64 nanoseconds span 213,000 days), then gathered per value
    first = int(days.min())
    span = np.arange(first, int(days.max()) + 1)
    year, month, day = _civil(span)
    if int(year.min()) < 1000 or int(year.max()) > 9999:
        return None
    dates = np.empty((len(span), 11), dtype=np.uint8)
    dates[:, 0:4] = _digits(year, 4)
    dates[:, 5:7] = _digits(month, 2)
    dates[:, 8:10] = _digits(day, 2)
    dates[:, [4, 7]] = ord("-")
    dates[:, 10] = ord(" ")
    lengths = np.where(
        fraction == 0, 19, np.where(fraction % 1000 == 0, 26, 29)
    ).astype(np.int64)
    width = int(lengths.max())
    text = np.empty((n, width), dtype=np.uint8)
    text[:, 0:11] = dates[days - first]
    text[:, 11:19] = _clock()[second]
    if width > 19:
        text[:, 19] = ord(".")
        # three digits at a time, from a table of 000..999
        triples = _digits(np.arange(1000), 3)
        for k, scale in enumerate((10**6, 10**3, 1)[: (width - 20) // 3]):
            text[:, 20 + 3 * k : 23 + 3 * k] = triples[
                fraction // scale % 1000
            ]
    np.cumsum(lengths, out=offsets[1:])
    if width == 19 or bool((lengths == width).all()):
        return offsets, text.reshape(-1)  # every text of one length
    return offsets, text[np.arange(width) < lengths[:, None]]
