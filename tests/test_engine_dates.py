"""Dates through tables in an engine (class 7 of issue 20): a DATE or
TIMESTAMP column of a DuckDB or Polars table lands on a date axis, and
the released cells equal the in-memory ones for the same data and seed
(the engine computes days since 1970 as plotnine's date scales do). The
families that take no dates say so with the fix."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    geom_bin_2d,
    geom_boxplot,
    geom_count,
    geom_density,
    geom_histogram,
    ggplot,
)

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private._compat import build

duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")

PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)
Y2020 = (pd.Timestamp("2020-01-01"), pd.Timestamp("2021-01-01"))


def _records(tz: str | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 600
    t = pd.Timestamp("2020-01-01") + pd.to_timedelta(
        rng.uniform(0, 366, n), unit="D"
    )
    d = pd.DataFrame({"t": t, "v": rng.uniform(0, 10, n).round(1)})
    # records on month starts must fall in the month they start
    d.loc[:11, "t"] = pd.date_range("2020-01-01", periods=12, freq="MS")
    if tz is not None:
        d["t"] = d["t"].dt.tz_localize(tz)
    return pp.add_record_keys(d, name="rk", rng_seed=11)


def _limits(tz: str | None):
    return tuple(y.tz_localize(tz) if tz else y for y in Y2020)


def _plot(kind: str, data, tz: str | None = None):
    lim = _limits(tz)
    if kind == "bin_dp":
        return ggplot(data, aes("t")) + geom_histogram(
            stat="bin_dp", limits=lim, binwidth="1 month", eps=1e4, seed=3
        )
    if kind == "bin_ckm":
        return ggplot(data, aes("t", rkey="rk")) + geom_histogram(
            stat="bin_ckm", limits=lim, binwidth="1 week", ptable=PTAB
        )
    if kind == "bin2d_dp":
        return ggplot(data, aes("t", "v")) + geom_bin_2d(
            stat="bin2d_dp", limits=(lim, (0, 10)), bins=(12, 5), eps=1
        )
    if kind == "sum_dp":
        return ggplot(data, aes("t", "v")) + geom_count(
            stat="sum_dp",
            limits=(lim, (0, 10)),
            resolution=(pd.Timedelta(days=30), 2),
            eps=1,
            seed=3,
        )
    assert kind == "binhex_dp"
    return ggplot(data, aes("t", "v")) + pp.geom_hex(
        stat="binhex_dp", limits=(lim, (0, 10)), bins=8, eps=1, seed=3
    )


def _engine(engine: str, d: pd.DataFrame, tz: str | None = None):
    if engine == "polars":
        return pp.source(pl.from_pandas(d).lazy())
    con = duckdb.connect()
    if tz is not None:
        # DuckDB keeps the time zone in the connection, not the column
        con.execute(f"SET TimeZone = '{tz}'")
    con.register("records_view", d)
    cast = "TIMESTAMPTZ" if tz is not None else "TIMESTAMP"
    con.execute(
        f"CREATE TABLE records AS SELECT * REPLACE (CAST(t AS {cast}) AS t)"
        " FROM records_view"
    )
    return pp.source(con, "records")


def _same_layer(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b) > 0
    for col in a.columns:
        if a[col].dtype.kind in "fiu":
            np.testing.assert_array_equal(
                a[col].to_numpy(float), b[col].to_numpy(float), err_msg=col
            )


def _built(plot) -> pd.DataFrame:
    with warnings.catch_warnings():
        # one seed on two frames (memory and engine): a second release
        warnings.simplefilter("ignore", pp.PrivacyWarning)
        return layer_data(plot)


@functools.cache
def _memory(kind: str, tz: str | None = None) -> pd.DataFrame:
    """The in-memory layer of a kind of plot of ``_records(tz)``, built
    once for every engine it is compared with (same data and seed, so
    the same release; read, never modified)."""
    return _built(_plot(kind, _records(tz), tz))


FAMILIES = ["bin_dp", "bin_ckm", "bin2d_dp", "sum_dp", "binhex_dp"]


@pytest.mark.parametrize("kind", FAMILIES)
@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_timestamps_through_an_engine_equal_memory(engine, kind):
    memory = _memory(kind)
    _same_layer(memory, _built(_plot(kind, _engine(engine, _records()))))


@pytest.mark.parametrize(
    ("engine", "tz"),
    [("polars", "Europe/Berlin"), ("polars", "UTC"), ("duckdb", "UTC")],
)
def test_a_time_zone_aware_column_keeps_its_zone(engine, tz):
    # calendar months of the column's zone: 12 bins, as in memory (and
    # records at midnight on the first of a month in that month, also
    # after a daylight-saving change)
    memory = _memory("bin_dp", tz)
    engine_data = _built(
        _plot("bin_dp", _engine(engine, _records(tz), tz), tz)
    )
    assert len(memory) == 12
    _same_layer(memory, engine_data)


@pytest.mark.parametrize("kind", ["sum_dp", "bin2d_dp"])
def test_a_utc_column_is_the_query_of_a_naive_one(kind):
    # a naive time is read as UTC: the same positions and calendar, so
    # the same query and noise (Spark states a naive pandas column as a
    # TIMESTAMP in the session's zone, UTC)
    naive = _memory(kind)
    _same_layer(naive, _built(_plot(kind, _records("UTC"), "UTC")))
    # another zone is another query (its calendar differs): other noise
    berlin = _memory(kind, "Europe/Berlin")
    col = "n" if kind == "sum_dp" else "count"
    assert not naive[col].equals(berlin[col])


def test_duckdb_time_zone_other_than_utc_names_the_fix():
    # DuckDB subtracts TIMESTAMPTZ in the connection's zone (an hour off
    # in summer): refused before anything is released
    tz = "Europe/Berlin"
    p = _plot("bin_dp", _engine("duckdb", _records(tz), tz), tz)
    with pytest.raises(PlotninePrivateError, match="SET TimeZone"):
        layer_data(p)


def test_a_parquet_date_is_a_date_axis(tmp_path):
    # a DATE column arrives in pandas as datetime.date objects, which
    # plotnine put on a discrete scale ("x is discrete")
    d = _records()
    path = tmp_path / "days.parquet"
    pd.DataFrame({"day": d["t"].dt.date}).to_parquet(path)
    con = duckdb.connect()
    table = con.sql(f"SELECT * FROM '{path}'")
    assert [str(t) for t in table.types] == ["DATE"]
    memory = d.assign(day=d["t"].dt.normalize())
    plain = _built(
        ggplot(memory, aes("day"))
        + geom_histogram(
            stat="bin_dp", limits=Y2020, binwidth="1 month", eps=1e4, seed=3
        )
    )
    for data in (pp.source(table), pp.source(pl.scan_parquet(path))):
        p = ggplot(data, aes("day")) + geom_histogram(
            stat="bin_dp", limits=Y2020, binwidth="1 month", eps=1e4, seed=3
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pp.PrivacyWarning)
            built = build(p)
        _same_layer(plain, built.layers[0].data)
        # the axis shows dates
        labels = built.layout.panel_params[0].x.labels
        assert any("2020" in str(v) for v in labels)


def test_duckdb_nanosecond_time_zone_column_names_the_cast(tmp_path):
    path = tmp_path / "aware.parquet"
    _records("Europe/Berlin")[["t"]].to_parquet(path)
    table = duckdb.connect().sql(f"SELECT * FROM '{path}'")
    p = ggplot(pp.source(table), aes("t")) + geom_histogram(
        stat="bin_dp", limits=_limits("UTC"), binwidth="1 month", eps=1
    )
    with pytest.raises(
        PlotninePrivateError, match=r"CAST\(t AS TIMESTAMPTZ\)"
    ):
        layer_data(p)


def test_other_transforms_are_still_refused_in_an_engine():
    from plotnine import scale_x_log10

    src = pp.source(pl.from_pandas(_records()).lazy())
    p = (
        ggplot(src, aes("v"))
        + geom_histogram(stat="bin_dp", limits=(0.1, 10), eps=1, seed=1)
        + scale_x_log10()
    )
    with pytest.raises(PlotninePrivateError, match="transforms positions"):
        layer_data(p)


@pytest.mark.parametrize("where", ["memory", "polars", "duckdb"])
@pytest.mark.parametrize("family", ["density", "boxplot"])
def test_fine_families_refuse_dates_with_the_fix(where, family):
    d = _records()
    data = d if where == "memory" else _engine(where, d)
    if family == "density":
        p = ggplot(data, aes("t")) + geom_density(
            stat="density_dp", limits=(0, 400), eps=1, seed=1
        )
    else:
        p = ggplot(data, aes(y="t")) + geom_boxplot(
            stat="boxplot_dp", limits=(0, 400), eps=1, seed=1
        )
    with pytest.raises(PlotninePrivateError, match="date axis is not sup"):
        layer_data(p)
    # dates as limits: the same advice when the layer is made (plotnine
    # 0.16 makes a geom's stat when it joins a plot, 0.15 at once)
    with pytest.raises(PlotninePrivateError, match="days since a public"):
        ggplot() + geom_density(stat="density_dp", limits=Y2020, eps=1)


def test_engine_date_neighbours_differ_in_noisy_numbers_only():
    from neighbours import differences, snapshot

    d = _records()
    other = d.copy()
    other.loc[20, "t"] = pd.Timestamp("1999-03-04")  # far outside
    a, b = (
        snapshot(_plot("bin_dp", _engine("polars", x))) for x in (d, other)
    )
    assert "error" not in a
    assert differences(a, b) == []
