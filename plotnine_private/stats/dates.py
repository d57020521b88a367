"""Dates and times on the axes of the binned private stats.

plotnine's date scales (``scale_x_datetime``, ``scale_x_date``) put a
date at its number of *days* since 1970-01-01 00:00 UTC (mizani's
``datetime_trans``; a time zone-aware date is converted to UTC first, a
naive one is read as UTC). The private stats receive their rows already in
those numbers, so public bins given as dates are turned into the same
numbers here, with the scale's own transform, and released cells land on
the date axis where plotnine would put them.

What a date axis accepts (in ``limits=``, ``breaks=``, ``boundary=``,
``center=``): ``pandas.Timestamp``, ``numpy.datetime64``,
``datetime.datetime`` / ``datetime.date`` and ISO 8601 strings
(``"2020-01-31"``, ``"2020-01-31 12:00"``; other spellings such as
``"01/02/2020"`` are ambiguous and refused). Plain numbers are refused
for limits and breaks (they would be read as days since 1970).

Bin widths (``binwidth=``, ``resolution=``) on a date axis:

* a number: days, as in plotnine;
* a fixed duration: ``pandas.Timedelta``, ``datetime.timedelta`` or
  ``numpy.timedelta64``;
* a calendar step: ``"<n> <unit>"`` with unit year, quarter, month, week,
  day, hour, minute or second (plural allowed), or the equivalent pandas
  offset (``pd.offsets.MonthBegin(3)``, ``pd.DateOffset(months=3)``...).
  Calendar edges fall on the unit's boundaries in the axis' time zone:
  years divisible by n, months counted from January (``"3 months"``:
  quarters), weeks starting on Monday (``pd.offsets.Week(weekday=k)``
  for another day), days at midnight, hours counted from midnight.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from mizani.transforms import datetime_trans

from ..validation import fail as _fail
from ..validation import is_real, validate_breaks, validate_range

__all__ = [
    "CalendarStep",
    "axis_time_zone",
    "calendar_edges",
    "calendar_points",
    "check_breaks",
    "check_limits",
    "check_point",
    "check_width",
    "days_to_stamps",
    "is_date_axis",
    "refuse_date_objects",
    "stamps_to_days",
    "to_axis_units",
    "date_levels_on_axis",
]

#: most calendar bins one axis may have (a finer step is an error)
MAX_CALENDAR_BINS = 100_000

_UNITS = (
    "year",
    "quarter",
    "month",
    "week",
    "day",
    "hour",
    "minute",
    "second",
)
#: approximate length of each unit in days (to bound the number of edges)
_UNIT_DAYS = {
    "year": 365.25,
    "quarter": 91.3,
    "month": 30.4,
    "week": 7.0,
    "day": 1.0,
    "hour": 1 / 24,
    "minute": 1 / 1440,
    "second": 1 / 86400,
}
_WIDTH_RE = re.compile(
    r"^\s*(\d+)?\s*(" + "|".join(_UNITS) + r")s?\s*$", re.IGNORECASE
)
_WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_FREQ_RE = re.compile(
    r"^(\d*)(MS|YS-JAN|QS-JAN|W-(?:MON|TUE|WED|THU|FRI|SAT|SUN)|D|h|min|s)$"
)
_FREQ_UNIT = {
    "MS": "month",
    "YS-JAN": "year",
    "QS-JAN": "quarter",
    "D": "day",
    "h": "hour",
    "min": "minute",
    "s": "second",
}
_WIDTH_HELP = (
    "a number (days on a date axis), a pandas.Timedelta, or a calendar "
    "step such as '1 month', '3 months', '1 week', '1 day', '1 year', "
    "'6 hours' (or pd.offsets.MonthBegin(), pd.DateOffset(months=1))"
)


@dataclass(frozen=True)
class CalendarStep:
    """``n`` calendar units; edges on the unit's boundaries."""

    unit: str
    n: int = 1
    weekday: int = 0  # weeks: the day edges fall on (0 Monday)

    def __str__(self) -> str:
        text = f"{self.n} {self.unit}{'s' if self.n > 1 else ''}"
        if self.unit == "week" and self.weekday:
            text += f" from {_WEEKDAYS[self.weekday].title()}day"
        return text

    @property
    def fixed(self) -> pd.Timedelta | None:
        """The step as a duration when every step is equally long (weeks
        and shorter, on a naive axis); None for months and years."""
        if self.unit in ("year", "quarter", "month"):
            return None
        step: dict[str, Any] = {f"{self.unit}s": self.n}
        return pd.Timedelta(**step)

    def floor(self, t: pd.Timestamp) -> pd.Timestamp:
        """The last edge at or before ``t`` (same time zone)."""
        n, tz = self.n, t.tz
        if self.unit == "year":
            return pd.Timestamp(year=t.year // n * n, month=1, day=1, tz=tz)
        if self.unit in ("quarter", "month"):
            k = n * (3 if self.unit == "quarter" else 1)
            m = (t.year * 12 + t.month - 1) // k * k
            return pd.Timestamp(year=m // 12, month=m % 12 + 1, day=1, tz=tz)
        day = t.normalize()
        if self.unit == "week":
            back = (day.day_of_week - self.weekday) % 7
            return day - pd.DateOffset(days=back)
        if self.unit == "day":
            return day
        zero: dict[str, Any] = dict(microsecond=0, nanosecond=0)
        if self.unit == "hour":
            return t.replace(hour=t.hour // n * n, minute=0, second=0, **zero)
        if self.unit == "minute":
            return t.replace(minute=t.minute // n * n, second=0, **zero)
        return t.replace(second=t.second // n * n, **zero)

    def offset(self):
        """The pandas frequency of ``n`` steps (calendar-aware)."""
        if self.unit in ("year", "month", "week", "day"):
            return pd.DateOffset(**{f"{self.unit}s": self.n})
        if self.unit == "quarter":
            return pd.DateOffset(months=3 * self.n)
        return pd.Timedelta(**{f"{self.unit}s": self.n})


# -- values ---------------------------------------------------------------
def is_timelike(value: Any) -> bool:
    """A date or time: Timestamp, datetime64, datetime/date, ISO string."""
    if isinstance(value, (pd.Timestamp, np.datetime64, _dt.date)):
        return True
    return isinstance(value, str) and _iso(value) is not None


def _iso(text: str):
    try:
        return _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return None


def as_timestamp(name: str, param: str, value: Any) -> pd.Timestamp:
    """A pandas Timestamp from one date-like value (see module docs)."""
    if isinstance(value, str):
        parsed = _iso(value)
        if parsed is None:
            raise _fail(
                name,
                f"{param}: {value!r} is not an ISO 8601 date; write dates "
                "as pd.Timestamp('2020-01-31') or '2020-01-31' (other "
                "spellings such as '01/02/2020' are ambiguous).",
            )
        value = parsed
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError) as err:
        raise _fail(
            name, f"{param}: cannot read {value!r} as a date ({err})."
        ) from None
    if pd.isna(stamp):
        raise _fail(name, f"{param} must not contain NaT/missing dates.")
    return stamp


def _same_awareness(name: str, param: str, stamps) -> None:
    aware = {s.tz is not None for s in stamps}
    if len(aware) > 1:
        raise _fail(
            name,
            f"{param} mixes time zone-aware and naive dates; give all of "
            "them with a time zone (pd.Timestamp(..., tz='Europe/Berlin')) "
            "or none.",
        )


def _time_items(name: str, param: str, value: Any) -> list | None:
    """The items of ``value`` as Timestamps if any of them is a date;
    None if none is (a numeric sequence)."""
    if isinstance(value, (str, bytes)) or np.ndim(value) == 0:
        return None
    try:
        items = list(value)
    except TypeError:
        return None
    # a string is meant as a date (a non-ISO one is refused below)
    flags = [is_timelike(v) or isinstance(v, str) for v in items]
    if not any(flags):
        return None
    if not all(flags):
        bad = next(v for v, f in zip(items, flags) if not f)
        raise _fail(
            name,
            f"{param} mixes dates and other values ({bad!r}); on a date "
            "axis give every value as a date, e.g. pd.Timestamp"
            "('2020-01-01') (numbers would be read as days since 1970).",
        )
    stamps = [as_timestamp(name, param, v) for v in items]
    _same_awareness(name, param, stamps)
    return stamps


def check_limits(name: str, param: str, value: Any):
    """A public (low, high): two numbers, or two dates (Timestamps)."""
    try:
        stamps = _time_items(name, param, value)
    except TypeError:
        stamps = None
    if stamps is None:
        return validate_range(name, param, value)
    if len(stamps) != 2:
        raise _fail(
            name, f"{param} must be a pair (low, high), got {value!r}."
        )
    lo, hi = stamps
    if not lo < hi:
        raise _fail(name, f"{param} must have low < high, got {lo} and {hi}.")
    return lo, hi


def check_breaks(name: str, param: str, value: Any):
    """Public bin edges: numbers (an array) or dates (a DatetimeIndex)."""
    stamps = _time_items(name, param, value)
    if stamps is None:
        return validate_breaks(name, param, value)
    if len(stamps) < 2:
        raise _fail(
            name, f"{param} must list at least two bin edges, got {value!r}."
        )
    if any(b <= a for a, b in zip(stamps, stamps[1:])):
        raise _fail(
            name,
            f"{param} must be strictly increasing, got {value!r}; sort them "
            "and remove duplicates.",
        )
    return pd.DatetimeIndex(stamps)


def check_width(name: str, param: str, value: Any, *, fixed: bool = False):
    """A bin width: a number > 0, a ``pd.Timedelta`` > 0 or a
    :class:`CalendarStep`. ``fixed``: calendar steps of unequal length
    (months, years) are refused, weeks and shorter become durations."""
    if value is None:
        return None
    if isinstance(value, (pd.Timedelta, _dt.timedelta, np.timedelta64)):
        width = pd.Timedelta(value)
        if pd.isna(width) or width <= pd.Timedelta(0):
            raise _fail(name, f"{param} must be > 0, got {value!r}.")
        return width
    if is_real(value):
        if not (math.isfinite(value) and value > 0):
            raise _fail(name, f"{param} must be > 0, got {value!r}.")
        return float(value)
    step = _calendar_step(value)
    if step is None:
        raise _fail(name, f"{param} must be {_WIDTH_HELP}; got {value!r}.")
    if step.n < 1:
        raise _fail(
            name, f"{param}: the number of units must be >= 1, got {value!r}."
        )
    if fixed:
        if step.fixed is None:
            raise _fail(
                name,
                f"{param}={value!r}: hexagons need a fixed width; months "
                "and years differ in length. Give a duration such as "
                "pd.Timedelta(days=30) or '4 weeks'.",
            )
        return step.fixed
    return step


def _calendar_step(value: Any) -> CalendarStep | None:
    if isinstance(value, str):
        m = _WIDTH_RE.match(value)
        if m is None:
            return None
        return CalendarStep(m.group(2).lower(), int(m.group(1) or 1))
    if not isinstance(value, pd.offsets.BaseOffset):
        return None
    if type(value) is pd.DateOffset:
        kwds = dict(value.kwds)
        if len(kwds) != 1:
            return None
        ((key, n),) = kwds.items()
        unit = key[:-1] if key.endswith("s") else key
        if unit not in _UNITS or int(n) != n:
            return None
        return CalendarStep(unit, int(n) * value.n)
    m = _FREQ_RE.match(value.freqstr)
    if m is None:
        return None
    n = int(m.group(1) or 1)
    code = m.group(2)
    if code.startswith("W-"):
        return CalendarStep("week", n, _WEEKDAYS.index(code[2:]))
    return CalendarStep(_FREQ_UNIT[code], n)


# -- axes -------------------------------------------------------------------
def is_date_axis(scale) -> bool:
    """Whether a position scale is one of plotnine's date scales."""
    return isinstance(getattr(scale, "_trans", None), datetime_trans)


def axis_time_zone(scale):
    """The time zone a date axis is labelled in: that of its column when
    time zone-aware, None (or UTC, once labelled) when naive. mizani
    reads naive dates as UTC, so None and UTC place dates alike."""
    tz = getattr(getattr(scale, "_trans", None), "tz", None)
    if tz is not None and str(tz) == "UTC":
        return None
    return tz


def _in_axis_zone(name, param, stamps, tz, axis):
    """Dates in the axis' zone; naive dates only on a naive (UTC) axis,
    aware ones only on an aware axis (a UTC date on a naive axis too)."""
    out = []
    for s in stamps:
        if tz is None:
            if s.tz is not None and str(s.tz) != "UTC":
                raise _fail(
                    name,
                    f"{param}: {s} has a time zone but {axis} is "
                    "time zone-naive; give naive dates (or localise the "
                    "column with .dt.tz_localize(...)).",
                )
            out.append(s if s.tz is None else s.tz_localize(None))
            continue
        if s.tz is None:
            raise _fail(
                name,
                f"{param}: {s} is time zone-naive but {axis} is in time "
                f"zone {tz}; give aware dates, e.g. pd.Timestamp"
                f"('{s.date()}', tz='{tz}').",
            )
        out.append(s.tz_convert(tz))
    return out


def stamps_to_days(stamps) -> np.ndarray:
    """Days since 1970-01-01 UTC, computed by mizani's date transform (the
    one plotnine applies to the records)."""
    idx = pd.DatetimeIndex(list(stamps))
    return np.asarray(datetime_trans().transform(idx), dtype=float)


def days_to_stamps(days, tz) -> pd.DatetimeIndex:
    """Timestamps (in ``tz``, naive if None) of positions in days."""
    us = np.rint(np.asarray(days, dtype=float) * 86_400e6).astype(np.int64)
    idx = pd.to_datetime(us, unit="us")
    if tz is not None:
        idx = idx.tz_localize("UTC").tz_convert(tz)
    return idx


def to_axis_units(name, param, value, scale, axis, transform=True):
    """Public limits or breaks (numbers, or Timestamps from
    :func:`check_limits` / :func:`check_breaks`) in the units of the
    axis' scale, as a float array. Numbers are passed through the scale's
    transform (log10...) when ``transform``; dates always are."""
    timed = isinstance(value, pd.DatetimeIndex) or (
        len(value) > 0 and isinstance(value[0], pd.Timestamp)
    )
    date_axis = is_date_axis(scale)
    if timed and not date_axis:
        raise _fail(
            name,
            f"{param} are dates but {axis} is not a date axis (map a "
            "datetime64 column, or use scale_x_datetime); give numbers.",
        )
    if date_axis and not timed:
        raise _fail(
            name,
            f"{param}={_show(value)} are numbers but {axis} is a date axis; "
            "give dates, e.g. limits=(pd.Timestamp('2020-01-01'), "
            "pd.Timestamp('2021-01-01')) or breaks=pd.date_range("
            "'2020-01-01', '2021-01-01', freq='MS').",
        )
    if not timed:
        arr = np.asarray(value, dtype=float)
        if transform and hasattr(scale, "transform"):
            # given in data units; the stat sees transformed positions
            arr = np.asarray(scale.transform(arr), dtype=float)
        return arr
    stamps = _in_axis_zone(
        name, param, list(value), axis_time_zone(scale), axis
    )
    return stamps_to_days(stamps)


def date_levels_on_axis(name, levels, scale, axis):
    """Declared ``levels`` of a continuous axis: None when they are
    numbers (they stay as given), else ``(stamps, days)``: the dates as
    Timestamps (what a table names them by) and their positions on the
    date axis (what its records are matched against). Dates on an axis
    that is no date axis are refused naming the fix."""
    stamps = _time_items(name, "levels", levels)
    if stamps is None:
        return None
    return stamps, to_axis_units(name, "levels", stamps, scale, axis)


def _show(value) -> str:
    try:
        return repr(tuple(float(v) for v in value))
    except (TypeError, ValueError):
        return repr(value)


def point_in_axis_units(name, param, value, scale, axis):
    """``center`` / ``boundary``: a number (days on a date axis, as in
    plotnine) or a date on a date axis."""
    if value is None or not (isinstance(value, str) or is_timelike(value)):
        return value
    stamp = as_timestamp(name, param, value)
    return float(to_axis_units(name, param, [stamp], scale, axis)[0])


def width_in_axis_units(name, param, width, scale, axis):
    """A fixed width in the axis' units (Timedelta: days on a date axis);
    calendar steps are returned as they are."""
    if isinstance(width, pd.Timedelta):
        if not is_date_axis(scale):
            raise _fail(
                name,
                f"{param}={width!r} is a duration but {axis} is not a date "
                "axis; give a number.",
            )
        return width / pd.Timedelta(days=1)
    if isinstance(width, CalendarStep) and not is_date_axis(scale):
        raise _fail(
            name,
            f"{param}='{width}' is a calendar step but {axis} is not a date "
            "axis; give a number.",
        )
    return width


def calendar_edges(name, axis, rng, step: CalendarStep, scale) -> np.ndarray:
    """Edges on calendar boundaries covering ``rng`` (in days), as days:
    from the last boundary at or before ``rng[0]`` to the first at or after
    ``rng[1]``, in the time zone of the axis."""
    lo, hi = days_to_stamps(rng, axis_time_zone(scale))
    count = (rng[1] - rng[0]) / (_UNIT_DAYS[step.unit] * step.n) + 3
    if count > MAX_CALENDAR_BINS:
        raise _fail(
            name,
            f"binwidth='{step}' cuts the {axis} range into about "
            f"{count:.0f} bins (at most {MAX_CALENDAR_BINS}); give a "
            "coarser step.",
        )
    start = step.floor(lo)
    edges = pd.date_range(start, periods=int(count) + 2, freq=step.offset())
    last = int(edges.searchsorted(hi, side="left"))
    edges = edges[: last + 1]
    return stamps_to_days(edges)


def check_point(name: str, param: str, value: Any):
    """``center`` / ``boundary``: None, a finite number or a date."""
    if value is None:
        return None
    if isinstance(value, str) or is_timelike(value):
        return as_timestamp(name, param, value)
    if not is_real(value) or not math.isfinite(value):
        raise _fail(
            name,
            f"{param} must be a number (or a date on a date axis), got "
            f"{value!r}.",
        )
    return float(value)


def calendar_points(name, axis, rng, step: CalendarStep, scale):
    """Calendar boundaries in ``rng`` (days) and at least one more beyond
    each end, as days."""
    pad = 1.5 * _UNIT_DAYS[step.unit] * step.n
    return calendar_edges(
        name, axis, (rng[0] - pad, rng[1] + pad), step, scale
    )


def refuse_date_objects(name: str, data: pd.DataFrame, axes) -> None:
    """Python ``datetime.date`` objects make a column of dtype object,
    which plotnine puts on a discrete scale: say how to make it a date
    axis instead of "x is discrete"."""
    for ax in axes:
        col = data.get(ax)
        if col is None or col.dtype != object:
            continue
        first = col.dropna()
        if len(first) and isinstance(first.iloc[0], _dt.date):
            raise _fail(
                name,
                f"{ax} holds datetime.date objects (dtype object), which "
                "plotnine treats as categories; convert the column to "
                "datetime64 first: df['col'] = pd.to_datetime(df['col']).",
            )
