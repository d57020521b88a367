"""Dates and times on the private binned stats (bin, bin2d, binhex, sum).

Public bins given as dates must land where plotnine's date scales put the
records (days since 1970-01-01 UTC), calendar bin widths must give edges
on calendar boundaries, and the axis of the built plot must show the
dates. Counts are checked against pandas' own calendar arithmetic with an
eps so large that the discrete Laplace noise is 0 (scale 2/eps = 2e-4),
so a bin edge one day off, or a record in the wrong month, fails.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from neighbours import differences, snapshot
from plotnine import (
    aes,
    after_stat,
    facet_null,
    geom_bar,
    geom_bin_2d,
    geom_count,
    geom_histogram,
    geom_text,
    ggplot,
    scale_x_datetime,
)

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private._compat import build

PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)
EXACT = {"eps": 10_000, "seed": 3}  # noise 0 with overwhelming probability
DP = {"eps": 1, "seed": 7}
Y2020 = (pd.Timestamp("2020-01-01"), pd.Timestamp("2021-01-01"))
MONTHS = pd.date_range("2020-01-01", "2021-01-01", freq="MS")
DAYS_2020 = pd.date_range("2020-01-01", "2020-12-31", freq="D")


def make_data(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = pd.Timestamp("2020-01-01") + pd.to_timedelta(
        rng.uniform(0, 366, n), unit="D"
    )
    frame = pd.DataFrame(
        {
            "t": t,
            "day": t.normalize(),  # dates at midnight
            "v": rng.uniform(0, 10, n),
            "u": t + pd.to_timedelta(rng.uniform(0, 60, n), unit="D"),
        }
    )
    # records on month starts: must fall in the month they start
    frame.loc[:11, "t"] = MONTHS[:12]
    return pp.add_record_keys(frame, name="rk", rng_seed=11)


DATA = make_data()


def as_dates(days) -> pd.DatetimeIndex:
    """Positions on a date axis (days since 1970 UTC) as naive dates."""
    us = np.rint(np.asarray(days, dtype=float) * 86_400e6).astype(np.int64)
    return pd.to_datetime(us, unit="us")


def x_axis(plot):
    """The x axis of the built plot: positions, labels and range."""
    built = build(plot)
    return built.layout.panel_params[0].x, built


def check_date_axis(plot, first: str, last: str) -> None:
    """The axis labels are the dates at its break positions, and the axis
    spans the public range."""
    view, built = x_axis(plot)
    assert type(built.scales.get_scales("x")).__name__ == "scale_x_datetime"
    breaks = np.asarray(view.breaks, dtype=float)
    assert len(breaks) >= 2
    assert list(view.labels) == list(as_dates(breaks).strftime("%Y-%m-%d"))
    lo, hi = as_dates(view.range)
    assert lo <= pd.Timestamp(first) and hi >= pd.Timestamp(last)


# -- bin --------------------------------------------------------------------
def test_bin_dp_calendar_months_count_each_month():
    p = ggplot(DATA, aes("t")) + geom_histogram(
        stat="bin_dp", limits=Y2020, binwidth="1 month", **EXACT
    )
    d = layer_data(p)
    assert list(as_dates(d["xmin"])) == list(MONTHS[:-1])
    assert list(as_dates(d["xmax"])) == list(MONTHS[1:])
    truth = DATA["t"].dt.to_period("M").value_counts().sort_index()
    assert list(d["count"]) == list(truth.to_numpy())
    check_date_axis(p, "2020-01-01", "2021-01-01")


def test_bin_ckm_date_breaks_perturb_true_counts():
    p = ggplot(DATA, aes("t", rkey="rk")) + geom_histogram(
        stat="bin_ckm", breaks=MONTHS, closed="left", ptable=PTAB
    )
    d = layer_data(p)
    assert list(as_dates(d["xmin"])) == list(MONTHS[:-1])
    truth = DATA["t"].dt.to_period("M").value_counts().sort_index()
    assert np.all(np.abs(d["count"].to_numpy() - truth.to_numpy()) <= 3)
    assert (d["count"].to_numpy() != truth.to_numpy()).any()
    check_date_axis(p, "2020-01-01", "2021-01-01")


def test_calendar_bins_are_closed_left_unless_told():
    frame = pd.DataFrame(
        {"t": pd.to_datetime(["2020-02-01", "2020-02-01", "2020-01-15"])}
    )
    base = {"limits": ("2020-01-01", "2020-04-01"), "binwidth": "1 month"}
    left = layer_data(
        ggplot(frame, aes("t"))
        + geom_histogram(stat="bin_dp", **base, **EXACT)
    )
    assert list(left["count"]) == [1, 2, 0]  # Feb 1 is February's
    right = layer_data(
        ggplot(frame, aes("t"))
        + geom_histogram(stat="bin_dp", closed="right", **base, **EXACT)
    )
    assert list(right["count"]) == [3, 0, 0]  # as stat_bin: (Jan 1, Feb 1]


@pytest.mark.parametrize(
    "limits",
    [
        Y2020,
        (np.datetime64("2020-01-01"), np.datetime64("2021-01-01")),
        (dt.datetime(2020, 1, 1), dt.datetime(2021, 1, 1)),
        (dt.date(2020, 1, 1), dt.date(2021, 1, 1)),
        ("2020-01-01", "2021-01-01T00:00"),
    ],
    ids=["Timestamp", "datetime64", "datetime", "date", "ISO string"],
)
def test_every_kind_of_date_gives_the_same_bins(limits):
    d = layer_data(
        ggplot(DATA, aes("t"))
        + geom_histogram(stat="bin_dp", limits=limits, bins=4, **EXACT)
    )
    edges = pd.date_range("2020-01-01", "2021-01-01", periods=5)
    assert np.allclose(d["xmin"], edges[:-1].to_julian_date() - 2440587.5)
    assert d["count"].sum() == len(DATA)


@pytest.mark.parametrize(
    ("width", "first", "step"),
    [
        ("1 month", "2020-01-01", pd.DateOffset(months=1)),
        ("3 months", "2020-01-01", pd.DateOffset(months=3)),
        ("1 quarter", "2020-01-01", pd.DateOffset(months=3)),
        (pd.offsets.MonthBegin(3), "2020-01-01", pd.DateOffset(months=3)),
        (pd.DateOffset(months=2), "2020-01-01", pd.DateOffset(months=2)),
        (
            pd.offsets.QuarterBegin(startingMonth=1),
            "2020-01-01",
            pd.DateOffset(months=3),
        ),
        ("1 week", "2019-12-30", pd.DateOffset(weeks=1)),  # a Monday
        (
            pd.offsets.Week(weekday=6),
            "2019-12-29",  # a Sunday
            pd.DateOffset(weeks=1),
        ),
        ("14 days", "2020-01-01", pd.DateOffset(days=14)),
        ("1 year", "2020-01-01", pd.DateOffset(years=1)),
    ],
)
def test_calendar_steps_put_edges_on_boundaries(width, first, step):
    d = layer_data(
        ggplot(DATA, aes("t"))
        + geom_histogram(stat="bin_dp", limits=Y2020, binwidth=width, **EXACT)
    )
    edges = as_dates(d["xmin"])
    want = pd.date_range(first, periods=len(edges), freq=step)
    assert list(edges) == list(want)
    # the edges cover the limits: first <= 2020-01-01, last >= 2021-01-01
    assert edges[0] <= Y2020[0] and as_dates(d["xmax"])[-1] >= Y2020[1]
    assert d["count"].sum() == len(DATA)


def test_limits_off_the_calendar_are_widened_to_boundaries():
    d = layer_data(
        ggplot(DATA, aes("t"))
        + geom_histogram(
            stat="bin_dp",
            limits=("2020-01-15", "2020-03-20"),
            binwidth="1 week",
            **EXACT,
        )
    )
    edges = as_dates(np.append(d["xmin"], d["xmax"].iloc[-1]))
    assert edges[0] == pd.Timestamp("2020-01-13")  # Monday before
    assert edges[-1] == pd.Timestamp("2020-03-23")  # Monday after
    assert (edges.day_of_week == 0).all()


def test_hours_within_a_day():
    frame = pd.DataFrame(
        {"t": pd.date_range("2020-03-01 00:30", periods=24, freq="h")}
    )
    d = layer_data(
        ggplot(frame, aes("t"))
        + geom_histogram(
            stat="bin_dp",
            limits=("2020-03-01", "2020-03-02"),
            binwidth="6 hours",
            **EXACT,
        )
    )
    assert list(as_dates(d["xmin"]).hour) == [0, 6, 12, 18]
    assert list(d["count"]) == [6, 6, 6, 6]


def test_fixed_duration_starts_at_the_lower_limit():
    d = layer_data(
        ggplot(DATA, aes("t"))
        + geom_histogram(
            stat="bin_dp",
            limits=Y2020,
            binwidth=pd.Timedelta(days=10),
            **EXACT,
        )
    )
    edges = as_dates(d["xmin"])
    assert edges[0] == Y2020[0]
    assert (np.diff(edges) == pd.Timedelta(days=10)).all()
    # a number is days on a date axis, as in plotnine
    e = layer_data(
        ggplot(DATA, aes("t"))
        + geom_histogram(stat="bin_dp", limits=Y2020, binwidth=10, **EXACT)
    )
    assert np.allclose(d["xmin"], e["xmin"])


def test_boundary_as_a_date():
    d = layer_data(
        ggplot(DATA, aes("t"))
        + geom_histogram(
            stat="bin_dp",
            limits=Y2020,
            binwidth=pd.Timedelta(days=7),
            boundary=pd.Timestamp("2020-01-06"),
            **EXACT,
        )
    )
    assert (as_dates(d["xmin"]).day_of_week == 0).all()  # Mondays


def test_scale_limits_with_a_calendar_step():
    p = (
        ggplot(DATA, aes("t"))
        + geom_histogram(stat="bin_dp", binwidth="2 months", **EXACT)
        + scale_x_datetime(limits=Y2020)
    )
    d = layer_data(p)
    assert list(as_dates(d["xmin"])) == list(MONTHS[:-1:2])
    check_date_axis(p, "2020-01-01", "2021-01-01")


def test_time_zone_aware_column_uses_local_calendar():
    berlin = DATA.assign(t=DATA["t"].dt.tz_localize("Europe/Berlin"))
    lim = tuple(t.tz_localize("Europe/Berlin") for t in Y2020)
    p = ggplot(berlin, aes("t")) + geom_histogram(
        stat="bin_dp", limits=lim, binwidth="1 month", **EXACT
    )
    d = layer_data(p)
    local = as_dates(d["xmin"]).tz_localize("UTC").tz_convert("Europe/Berlin")
    assert list(local) == list(MONTHS[:-1].tz_localize("Europe/Berlin"))
    # March has 31 days less the hour summer time takes
    assert (d["xmax"] - d["xmin"]).iloc[2] == pytest.approx(31 - 1 / 24)
    truth = (
        berlin["t"]
        .dt.tz_localize(None)
        .dt.to_period("M")
        .value_counts()
        .sort_index()
    )
    assert list(d["count"]) == list(truth.to_numpy())
    # limits in another zone are the same instants
    utc = tuple(t.tz_convert("UTC") for t in lim)
    e = layer_data(
        ggplot(berlin, aes("t"))
        + geom_histogram(
            stat="bin_dp", limits=utc, binwidth="1 month", **EXACT
        )
    )
    assert np.allclose(d["xmin"], e["xmin"])


def test_time_zone_mismatch_is_an_error():
    berlin = DATA.assign(t=DATA["t"].dt.tz_localize("Europe/Berlin"))
    p = ggplot(berlin, aes("t")) + geom_histogram(
        stat="bin_dp", limits=Y2020, binwidth="1 month", **EXACT
    )
    with pytest.raises(PlotninePrivateError, match="time zone Europe/Berlin"):
        layer_data(p)
    lim = tuple(t.tz_localize("Asia/Tokyo") for t in Y2020)
    q = ggplot(DATA, aes("t")) + geom_histogram(
        stat="bin_dp", limits=lim, bins=4, **EXACT
    )
    with pytest.raises(PlotninePrivateError, match="time zone-naive"):
        layer_data(q)


def test_naive_axis_reads_utc_dates_and_survives_drawing():
    # mizani reads naive dates as UTC: UTC limits are the same instants
    utc = tuple(t.tz_localize("UTC") for t in Y2020)
    a = layer_data(
        ggplot(DATA, aes("t"))
        + geom_histogram(
            stat="bin_dp", limits=utc, binwidth="1 month", **EXACT
        )
    )
    assert list(as_dates(a["xmin"])) == list(MONTHS[:-1])
    # a user's date scale is labelled in UTC once drawn; naive limits
    # must still work on it afterwards
    p = (
        ggplot(DATA, aes("t"))
        + geom_histogram(
            stat="bin_dp", limits=Y2020, binwidth="1 month", **EXACT
        )
        + scale_x_datetime(date_labels="%b")
    )
    p.draw()
    b = layer_data(p)
    assert np.allclose(a["xmin"], b["xmin"])
    assert list(a["count"]) == list(b["count"])


# -- bin2d ------------------------------------------------------------------
def test_bin2d_dp_months_by_numbers():
    p = ggplot(DATA, aes("t", "v")) + geom_bin_2d(
        stat="bin2d_dp",
        limits=(Y2020, (0, 10)),
        bins=2,
        binwidth=("1 month", None),
        drop=False,
        **EXACT,
    )
    d = layer_data(p)
    assert set(as_dates(d["xmin"])) == set(MONTHS[:-1])
    # stat_bin_2d's edges are widened by a float epsilon
    assert np.allclose(sorted(set(d["ymin"].round(9))), [0, 5])
    month = DATA["t"].dt.month.to_numpy()
    upper = DATA["v"].to_numpy() > 5
    for row in d.itertuples():
        m = as_dates([row.xmin])[0].month
        want = np.sum((month == m) & (upper == np.isclose(row.ymin, 5)))
        assert row.count == want
    check_date_axis(p, "2020-01-01", "2021-01-01")


def test_bin2d_ckm_dates_on_both_axes():
    p = ggplot(DATA, aes("t", "u", rkey="rk")) + geom_bin_2d(
        stat="bin2d_ckm",
        limits=(Y2020, ("2020-01-01", "2021-04-01")),
        binwidth="3 months",
        ptable=PTAB,
    )
    d = layer_data(p)
    assert set(as_dates(d["xmin"])) <= set(MONTHS[::3])
    assert set(as_dates(d["ymin"])) <= set(
        pd.date_range("2020-01-01", "2021-01-01", freq="3MS")
    )
    assert d["count"].sum() == pytest.approx(len(DATA), abs=3 * len(d))
    view = build(p).layout.panel_params[0].y
    assert list(view.labels) == list(
        as_dates(view.breaks).strftime("%Y-%m-%d")
    )


# -- binhex -----------------------------------------------------------------
@pytest.mark.parametrize("stat", ["binhex_dp", "binhex_ckm"])
def test_binhex_on_a_date_axis(stat):
    extra = EXACT if stat.endswith("dp") else {"ptable": PTAB}
    p = ggplot(DATA, aes("t", "v", rkey="rk")) + pp.geom_hex(
        stat=stat, limits=(Y2020, (0, 10)), binwidth=("2 weeks", 2), **extra
    )
    d = layer_data(p)
    origin = (Y2020[0] - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)
    # centres every half width (7 days) from the lower-left corner
    steps = (d["x"].to_numpy() - origin) / 7
    assert np.allclose(steps, np.rint(steps))
    assert np.allclose(d["width"], 14)
    if stat.endswith("dp"):
        assert d["count"].sum() == len(DATA)
    check_date_axis(p, "2020-01-01", "2021-01-01")


def test_binhex_refuses_months():
    with pytest.raises(PlotninePrivateError, match="fixed width"):
        ggplot() + pp.geom_hex(
            stat="binhex_dp",
            limits=(Y2020, (0, 10)),
            binwidth=("1 month", 1),
            **DP,
        )


# -- sum --------------------------------------------------------------------
def test_sum_dp_calendar_grid_snaps_to_nearest_month_start():
    frame = pd.DataFrame(
        {
            "t": pd.to_datetime(
                ["2020-01-10", "2020-01-20", "2020-02-01", "2020-12-25"]
            ),
            "v": [1.0, 1.0, 1.0, 1.0],
        }
    )
    p = ggplot(frame, aes("t", "v")) + geom_count(
        stat="sum_dp",
        limits=(("2020-01-01", "2020-12-31"), (0, 2)),
        resolution=("1 month", 1),
        **EXACT,
    )
    d = layer_data(p)
    got = dict(zip(as_dates(d["x"]).strftime("%Y-%m-%d"), d["n"]))
    # Dec 25 is nearest to 2021-01-01, outside the limits: left out
    assert got == {"2020-01-01": 1, "2020-02-01": 2}


@pytest.mark.parametrize("stat", ["sum_dp", "sum_ckm"])
def test_sum_on_a_daily_grid(stat):
    extra = EXACT if stat.endswith("dp") else {"ptable": PTAB}
    small = DATA.assign(v=np.rint(DATA["v"] / 5) * 5)
    p = ggplot(small, aes("day", "v", rkey="rk")) + geom_count(
        stat=stat,
        limits=(Y2020, (0, 10)),
        resolution=(pd.Timedelta(days=1), 5),
        **extra,
    )
    d = layer_data(p)
    days = as_dates(d["x"])
    assert (days == days.normalize()).all()
    if stat.endswith("dp"):
        truth = small.groupby(["day", "v"]).size()
        got = pd.Series(
            d["n"].to_numpy(), index=pd.MultiIndex.from_arrays([days, d["y"]])
        )
        assert got.sort_index().to_dict() == truth.sort_index().to_dict()
    check_date_axis(p, "2020-01-01", "2020-12-31")


# -- errors -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "mapping"),
    [
        (
            lambda: geom_histogram(stat="bin_dp", limits=(0, 365), **DP),
            aes("t"),
        ),
        (
            lambda: geom_histogram(stat="bin_dp", breaks=[0, 10, 20], **DP),
            aes("t"),
        ),
        (
            lambda: geom_bin_2d(
                stat="bin2d_dp", limits=((0, 365), (0, 10)), **DP
            ),
            aes("t", "v"),
        ),
        (
            lambda: pp.geom_hex(
                stat="binhex_dp", limits=((0, 365), (0, 10)), **DP
            ),
            aes("t", "v"),
        ),
        (
            lambda: geom_count(
                stat="sum_dp", limits=((0, 365), (0, 10)), resolution=1, **DP
            ),
            aes("t", "v"),
        ),
    ],
    ids=[
        "bin limits",
        "bin breaks",
        "bin2d limits",
        "hex limits",
        "sum limits",
    ],
)
def test_numbers_on_a_date_axis_are_refused(make, mapping):
    p = ggplot(DATA, mapping) + make()
    with pytest.raises(
        PlotninePrivateError,
        match=r"x is a date axis; give dates.*pd\.Timestamp",
    ):
        layer_data(p)


def test_dates_on_a_number_axis_are_refused():
    p = ggplot(DATA, aes("v")) + geom_histogram(
        stat="bin_dp", limits=Y2020, **DP
    )
    with pytest.raises(PlotninePrivateError, match="not a date axis"):
        layer_data(p)
    q = ggplot(DATA, aes("v")) + geom_histogram(
        stat="bin_dp", limits=(0, 10), binwidth="1 month", **DP
    )
    with pytest.raises(PlotninePrivateError, match="calendar step"):
        layer_data(q)


@pytest.mark.parametrize("stat", ["bin_dp", "bin_ckm"])
def test_date_axis_without_public_range_is_refused(stat):
    extra = DP if stat.endswith("dp") else {"ptable": PTAB}
    p = ggplot(DATA, aes("t", rkey="rk")) + geom_histogram(
        stat=stat, binwidth="1 month", **extra
    )
    with pytest.raises(
        PlotninePrivateError, match=r"date axis without public bins.*1970"
    ):
        layer_data(p)
    q = ggplot(DATA, aes("t", "v")) + geom_bin_2d(
        stat="bin2d_dp", limits=(None, (0, 10)), **DP
    )
    with pytest.raises(PlotninePrivateError, match="x is a date axis"):
        layer_data(q)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"limits": ("2020-01-01", 5)}, "mixes dates and other values"),
        ({"limits": ("01/02/2020", "2021-01-01")}, "not an ISO 8601 date"),
        ({"limits": (Y2020[1], Y2020[0])}, "low < high"),
        (
            {"limits": (Y2020[0], Y2020[1].tz_localize("UTC"))},
            "mixes time zone-aware and naive",
        ),
        ({"breaks": [Y2020[1], Y2020[0]]}, "strictly increasing"),
        ({"breaks": [Y2020[0], pd.NaT]}, "NaT"),
        ({"limits": Y2020, "binwidth": "2 fortnights"}, "calendar step"),
        ({"limits": Y2020, "binwidth": pd.Timedelta(0)}, "> 0"),
        ({"limits": Y2020, "center": "noon"}, "not an ISO 8601 date"),
    ],
)
def test_malformed_dates_fail_at_construction(params, match):
    with pytest.raises(PlotninePrivateError, match=match):
        ggplot() + geom_histogram(stat="bin_dp", **params, **DP)


def test_calendar_step_with_center_or_too_fine_is_refused():
    p = ggplot(DATA, aes("t")) + geom_histogram(
        stat="bin_dp",
        limits=Y2020,
        binwidth="1 month",
        center=pd.Timestamp("2020-01-15"),
        **DP,
    )
    with pytest.raises(PlotninePrivateError, match="drop center/boundary"):
        layer_data(p)
    q = ggplot(DATA, aes("t")) + geom_histogram(
        stat="bin_dp", limits=Y2020, binwidth="1 second", **DP
    )
    with pytest.raises(PlotninePrivateError, match="coarser step"):
        layer_data(q)


def test_python_date_objects_get_a_fix():
    frame = pd.DataFrame({"d": [dt.date(2020, 1, 2), dt.date(2020, 3, 4)]})
    p = ggplot(frame, aes("d")) + geom_histogram(
        stat="bin_dp", limits=Y2020, **DP
    )
    with pytest.raises(PlotninePrivateError, match="pd.to_datetime"):
        layer_data(p)


# -- neighbours -------------------------------------------------------------
def far_date(frame: pd.DataFrame) -> pd.DataFrame:
    """The neighbour: one record moved far outside the public range."""
    d = frame.copy()
    d.loc[20, ["t", "day", "u"]] = pd.Timestamp("2045-06-30 13:00")
    d.loc[20, "v"] = 9.9
    return d


CASES = [
    (
        "bin_dp months with labels",
        lambda d: (
            ggplot(d, aes("t"))
            + geom_histogram(
                stat="bin_dp", limits=Y2020, binwidth="1 month", **DP
            )
            + geom_text(
                aes(label=after_stat("count")),
                stat="bin_dp",
                limits=Y2020,
                binwidth="1 month",
                **DP,
            )
        ),
        ("y",),
    ),
    (
        "count_dp date levels",
        lambda d: (
            ggplot(d, aes("day"))
            + geom_bar(stat="count_dp", levels=DAYS_2020, **DP)
        ),
        ("y",),
    ),
    (
        "bin_ckm date breaks",
        lambda d: (
            ggplot(d, aes("t", rkey="rk"))
            + geom_histogram(stat="bin_ckm", breaks=MONTHS, ptable=PTAB)
        ),
        ("y",),
    ),
    (
        "bin2d_dp months",
        lambda d: (
            ggplot(d, aes("t", "v"))
            + geom_bin_2d(
                stat="bin2d_dp",
                limits=(Y2020, (0, 10)),
                binwidth=("1 month", 2),
                drop=False,
                **DP,
            )
        ),
        (),
    ),
    (
        "binhex_dp weeks",
        lambda d: (
            ggplot(d, aes("t", "v"))
            + pp.geom_hex(
                stat="binhex_dp",
                limits=(Y2020, (0, 10)),
                binwidth=("4 weeks", 2),
                drop=False,
                **DP,
            )
            + facet_null(shrink=False)
        ),
        (),
    ),
    (
        "sum_dp month grid",
        lambda d: (
            ggplot(d, aes("day", "v"))
            + geom_count(
                stat="sum_dp",
                limits=(Y2020, (0, 10)),
                resolution=("1 month", 1),
                **DP,
            )
            + facet_null(shrink=False)
        ),
        ("x", "y", "shown by noise"),
    ),
]


@pytest.mark.parametrize(
    ("name", "make", "count_axes"), CASES, ids=[c[0] for c in CASES]
)
def test_date_plots_show_only_noisy_numbers_differently(
    name, make, count_axes
):
    hidden = "shown by noise" in count_axes
    a = snapshot(make(DATA), count_axes, hidden)
    b = snapshot(make(far_date(DATA)), count_axes, hidden)
    assert differences(a, b) == []
    if "x" not in count_axes:
        # and the compared x axis is a date axis over the public range
        labels = a["panel 0 x"]["labels"]
        assert labels[0].startswith("2020-01")
        assert all(len(s) == 10 and s[4] == "-" for s in labels)


# -- count over declared dates ----------------------------------------------
@pytest.mark.parametrize(
    "levels",
    [
        list(DAYS_2020),
        DAYS_2020,
        [d.strftime("%Y-%m-%d") for d in DAYS_2020],
        list(DAYS_2020[::-1]),
    ],
    ids=["Timestamps", "DatetimeIndex", "ISO strings", "descending"],
)
@pytest.mark.parametrize("stat", ["count_dp", "count_ckm"])
def test_count_over_date_levels_draws_the_tables_counts(levels, stat):
    # a date x with declared dates: one bar a date, at its day on the date
    # axis, with the counts of dp_table / ckm_table (one release: cells
    # named by their Timestamps, whatever the axis' transform)
    params = DP if stat == "count_dp" else {"ptable": PTAB}
    mapping = aes("day") if stat == "count_dp" else aes("day", rkey="rk")
    p = ggplot(DATA, mapping) + geom_bar(stat=stat, levels=levels, **params)
    data = layer_data(p)
    assert list(as_dates(data["x"])) == list(DAYS_2020)
    if stat == "count_dp":
        table = pp.dp_table(DATA, "day", levels=list(DAYS_2020), **DP)
    else:
        table = pp.ckm_table(
            DATA, "day", rkey="rk", ptable=PTAB, levels=list(DAYS_2020)
        )
    assert data["count"].tolist() == table["count"].tolist()
    check_date_axis(p, "2020-01-01", "2020-12-31")


def test_date_levels_on_a_number_axis_are_refused():
    p = ggplot(DATA, aes("v")) + geom_bar(
        stat="count_dp", levels=list(DAYS_2020), **DP
    )
    with pytest.raises(PlotninePrivateError, match="levels are dates"):
        layer_data(p)


def test_readme_date_example_runs():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("### Dates and times", 1)[1]
    code = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    scope = {
        "pd": pd,
        "ggplot": ggplot,
        "aes": aes,
        "geom_histogram": geom_histogram,
        "df": DATA.rename(columns={"t": "date"}),
    }
    exec(compile(code, "README", "exec"), scope)
    d = layer_data(scope["p"])
    assert list(as_dates(d["xmin"])) == list(MONTHS[:-1])
