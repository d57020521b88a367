"""Layers on a :class:`~plotnine_private.engines.source.Source` in a
plot: the door of :mod:`plotnine_private._compat` for tables in an engine.

A private layer's mapping must name columns of the table (bare names):
the engine evaluates nothing but columns, public comparisons and integer
arithmetic, and turns a DATE or TIMESTAMP column on a date axis into days
since 1970 (as plotnine's date scales do). Anything else (a Python
expression in ``aes``, another scale transform, a stat that needs the
rows, a non-private layer) is refused before any query runs, with what to
do instead.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pandas as pd
from plotnine.mapping.aes import aes
from plotnine.mapping.evaluation import evaluate

from .._compat import (
    UTC_NAMES,
    keep_build,
    layer_mapping,
    layer_own_data,
    scale_transform,
)
from ..door import (
    LayerBuild,
    _source_frame,
    charged_as,
    is_private,
    make_door,
    warn_kept,
)
from ..exceptions import PlotninePrivateError
from ..stats.dates import is_date_axis
from ..validation import fail
from .bounding import DERIVED
from .push import release_in_engine
from .source import is_source

if TYPE_CHECKING:
    from plotnine import ggplot
    from plotnine.layer import layer

__all__ = ["compute_in_engine", "engine_layer"]


def engine_layer(plot: ggplot, lyr: layer) -> bool:
    """Whether a layer's data are a table in an engine."""
    own = layer_own_data(lyr)
    if callable(own) and is_source(plot.data):
        raise PlotninePrivateError(
            "a layer's data= function cannot be applied to a table in an "
            "engine: filter or derive the table in the engine and give it "
            "as the layer's data=pp.source(...)."
        )
    return is_source(_source_frame(plot, lyr))


def _columns(name: str, mapping: dict, src) -> dict[str, str]:
    names = set(src.columns)
    cols = {}
    for ae, expr in mapping.items():
        if isinstance(expr, str) and expr in names:
            cols[str(ae)] = expr
            continue
        raise fail(
            name,
            f"aes({ae}={expr!r}) cannot be computed in the "
            f"{src.engine} engine: on a table in an engine a mapping "
            "names a column. Add the column in the engine (SQL "
            "'SELECT *, <expression> AS new', polars with_columns, "
            "Spark withColumn) and map it by name.",
        )
    return cols


def _engine_positions(name: str, plot: ggplot, cols: dict, src) -> Any:
    """The source with each date axis as days since 1970-01-01 UTC (the
    numbers plotnine's date scales put a date at, computed in the
    engine); ``cols`` then names those columns. Other transforms are
    refused."""
    for ax in ("x", "y"):
        if ax not in cols:
            continue
        scale = plot.scales.get_scales(ax)
        trans = scale_transform(scale)
        if trans is None:
            continue
        if not is_date_axis(scale):
            raise fail(
                name,
                f"the {ax} scale transforms positions "
                f"({trans[0]}); on a table in an engine, "
                "compute the transformed column in the engine and use a "
                "plain scale.",
            )
        days = f"{DERIVED}days_{ax}"
        dtype = src.schema[cols[ax]]
        src = src.with_columns(
            **{days: days_since_epoch(name, cols[ax], dtype, src.engine)}
        )
        cols[ax] = days
    return src


def _in_axis_units(plot: ggplot, evaled: pd.DataFrame) -> pd.DataFrame:
    """The (empty) evaluated mapping transformed by the scales, as the
    rows are in memory (dates in days). A date scale learns its time
    zone from the first value it transforms: it first sees one public
    instant (the epoch) in the column's type, never a row."""
    probe = {}
    for c in evaled.columns:
        dtype = evaled[c].dtype
        if pd.api.types.is_datetime64_any_dtype(dtype):
            epoch = pd.Series([pd.Timestamp(0, tz="UTC")])
            tz = getattr(dtype, "tz", None)
            probe[c] = (
                epoch.dt.tz_convert(tz) if tz else epoch.dt.tz_localize(None)
            )
    if probe:
        plot.scales.transform_df(pd.DataFrame(probe))
    return plot.scales.transform_df(evaled)


def days_since_epoch(
    name: str, column: str, dtype: Any, engine: str = "polars"
) -> Any:
    """A narwhals expression: a DATE or TIMESTAMP column as (fractional)
    days since 1970-01-01 00:00 UTC, as mizani's ``datetime_trans`` puts
    it (a naive time read as UTC, an aware one at its instant).

    Differences of timestamps are portable across DuckDB, Polars and
    Spark where ``dt.timestamp`` is not.
    """
    import narwhals as nw

    expr = nw.col(column)
    epoch = _dt.datetime(1970, 1, 1)
    if dtype == nw.Date:
        expr = expr.cast(nw.Datetime("us"))
    elif isinstance(dtype, nw.Datetime) and dtype.time_zone is not None:
        # DuckDB's default connection time zone is Etc/UTC, one of these
        if engine == "duckdb" and dtype.time_zone not in UTC_NAMES:
            # DuckDB subtracts TIMESTAMPTZ values in the connection's
            # time zone, as calendar days and clock time: an hour off
            # across a daylight-saving change
            raise fail(
                name,
                f"column {column!r} is a TIMESTAMPTZ and the DuckDB "
                f"connection's time zone is {dtype.time_zone!r}: DuckDB "
                "takes differences of such times in that zone (an hour "
                "off across a daylight-saving change). Run SET TimeZone "
                "= 'UTC' on the connection (the date axis is then in "
                "UTC), or give a TIMESTAMP column.",
            )
        # the same instant as 1970-01-01 UTC, in the column's zone
        utc = epoch.replace(tzinfo=_dt.timezone.utc)
        epoch = utc.astimezone(ZoneInfo(dtype.time_zone))
    elif not isinstance(dtype, nw.Datetime):
        # e.g. DuckDB's TIMESTAMPTZ_NS (a pandas frame with a time zone
        # written to Parquet), which narwhals cannot read as a date yet
        raise fail(
            name,
            f"column {column!r} is on a date axis but its type in the "
            f"engine ({dtype}) cannot be read as a date there. Cast it to "
            "TIMESTAMP, TIMESTAMPTZ (microseconds) or DATE in the engine "
            f"(DuckDB: SELECT * REPLACE (CAST({column} AS TIMESTAMPTZ) AS "
            f"{column}) FROM ...; polars: with_columns), or map a number "
            "with a plain scale.",
        )
    if engine.startswith("pyspark"):
        if isinstance(dtype, nw.Datetime) and dtype.time_zone not in (
            None,
            *UTC_NAMES,
        ):
            raise fail(
                name,
                f"column {column!r} is read in the Spark session's time "
                f"zone {dtype.time_zone!r}: set spark.sql.session.timeZone "
                "to 'UTC' (the date axis is then in UTC).",
            )
        return _civil_days(expr)
    micros = (expr - nw.lit(epoch)).dt.total_microseconds()
    # whole days plus the fraction: an engine may divide by a constant
    # as a product with its reciprocal (one unit in the last place off),
    # which would move a record on a calendar bin edge (midnight) into
    # the bin before; the whole days are exact and absorb that error
    day = 86_400_000_000
    whole = micros // day
    rest = (micros - whole * day).cast(nw.Float64) / float(day)
    return whole.cast(nw.Float64) + rest


def _civil_days(expr: Any) -> Any:
    """Days since 1970-01-01 of a timestamp expression from its calendar
    fields, in integers (Hinnant's ``days_from_civil``), plus the time of
    day as a fraction: for engines whose narwhals has no duration of a
    difference of timestamps (Spark). Years from 1 on, so floor and
    truncating division agree."""
    import narwhals as nw

    int64 = nw.Int64
    y, m = expr.dt.year().cast(int64), expr.dt.month().cast(int64)
    d = expr.dt.day().cast(int64)
    y = y - (m <= 2).cast(int64)
    era = y // 400
    yoe = y - era * 400
    mp = nw.when(m > 2).then(m - 3).otherwise(m + 9)
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146_097 + doe - 719_468
    micros = (
        expr.dt.hour().cast(int64) * 3_600_000_000
        + expr.dt.minute().cast(int64) * 60_000_000
        + expr.dt.second().cast(int64) * 1_000_000
        + expr.dt.microsecond().cast(int64)
    )
    return days.cast(nw.Float64) + micros.cast(nw.Float64) / 86_400_000_000.0


def compute_in_engine(lyr: layer, plot: ggplot) -> Any:
    """Release a private layer on a table in an engine (refuse anything
    else); sets the layer's data to the released cells."""
    src = _source_frame(plot, lyr)
    name = type(lyr.stat).__name__
    if not is_private(lyr):
        raise PlotninePrivateError(
            f"{type(lyr.geom).__name__} with {name}: a layer that is not "
            "private would need every row of the table in the "
            f"{src.engine} engine. Use a private stat (stat='count_dp', "
            "'bin_dp', ...) or collect a pandas frame for this layer."
        )
    cols = _columns(name, layer_mapping(lyr), src)
    evaled = evaluate(layer_mapping(lyr), lyr.data, plot.environment)
    plot.scales.add_defaults(evaled, aes(**{str(c): c for c in evaled}))
    src = _engine_positions(name, plot, cols, src)
    evaled = _in_axis_units(plot, evaled)
    evaled["PANEL"] = pd.Series([], dtype=int)
    warn_kept(name, src.unit)
    build = LayerBuild(make_door(plot, lyr, None))
    with charged_as(plot, lyr):
        lyr.data = release_in_engine(lyr.stat, cols, evaled, build, src)
    keep_build(lyr, build.done())
