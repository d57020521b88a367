"""Private histograms and frequency polygons: ``stat_bin_dp``,
``stat_bin_ckm``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat

from .._compat import stat_arguments
from ..declarations import (
    BINNED_INTERVALS,
    BINNED_NOISY,
    Declaration,
    NoiseGeom,
)
from ..families import Bins
from .base import (
    CKM_PARAMS,
    DP_PARAMS,
    CKMMixin,
    DPMixin,
    FamilyCells,
    PrivateCountStat,
    _fail,
    validate_choice,
    validate_range_share,
)
from .dates import (
    CalendarStep,
    check_breaks,
    check_limits,
    check_point,
    check_width,
    refuse_date_objects,
)
from .domains import axis_breaks

if TYPE_CHECKING:
    from plotnine.iapi import pos_scales

__all__ = ["stat_bin_ckm", "stat_bin_dp"]


def normalised_columns(frame: pd.DataFrame, area: np.ndarray) -> None:
    """density, ncount, ndensity from released counts, per group
    (post-processing; guards against zero totals)."""
    count = frame["count"].to_numpy(dtype=float)
    # per panel and group, as plotnine computes them group by group
    grp = frame.groupby(["PANEL", "group"], observed=True).ngroup().to_numpy()
    total = pd.Series(np.abs(count)).groupby(grp).transform("sum").to_numpy()
    peak = pd.Series(np.abs(count)).groupby(grp).transform("max").to_numpy()
    safe_total = np.where(total > 0, total, 1.0)
    density = np.where(total > 0, count / area / safe_total, 0.0)
    dpeak = pd.Series(np.abs(density)).groupby(grp).transform("max").to_numpy()
    frame["density"] = density
    frame["ncount"] = np.where(
        peak > 0, count / np.where(peak > 0, peak, 1), 0.0
    )
    frame["ndensity"] = np.where(
        dpeak > 0, density / np.where(dpeak > 0, dpeak, 1), 0.0
    )


class _BinFamily(PrivateCountStat):
    """Counts per bin of a continuous x over public bin edges."""

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        # bar heights: released counts, clipped at 0
        return {"y": (0.0, float("inf"))}

    FAMILY = "bin"
    DECLARATION = Declaration(
        family="bin",
        example={"aes": {"x": "num"}, "params": {"breaks": (10, 20, 30, 45)}},
        title="bin",
        counterpart="bin",
        geoms="`geom_histogram`, `geom_freqpoly`, `geom_text`",
        plan_bounds="one cell's count",
        noisy=BINNED_NOISY,
        intervals=BINNED_INTERVALS,
        plan="count",
        noise_geom=NoiseGeom("errorbar", "count", {"width": 0.0}),
        counterpart_labels=True,
        engine=True,
    )
    QUERY_PARAMS = ("range_share",)

    REQUIRED_AES = {"x"}
    DEFAULT_AES = {"y": after_stat("count"), "weight": None}
    UNIT_COUNTS = True
    BASE_PARAMS = {
        "geom": "histogram",
        "position": "stack",
        "na_rm": False,
        "binwidth": None,
        "bins": None,
        "breaks": None,
        "limits": None,
        "center": None,
        "boundary": None,
        "closed": "right",
        "pad": False,
        "count": "records",
    }
    CREATES = {
        "count",
        "density",
        "ncount",
        "ndensity",
        "width",
        "noisy_count",
        "signal",
    }

    def validate_params(self) -> None:
        p = self.params
        validate_choice(self.name, "closed", p["closed"], ("right", "left"))
        if p["center"] is not None and p["boundary"] is not None:
            raise _fail(
                self.name, "give only one of center and boundary, not both."
            )
        # fail at construction for malformed public domains
        if p["breaks"] is not None:
            check_breaks(self.name, "breaks", p["breaks"])
        if p["limits"] is not None:
            check_limits(self.name, "limits", p["limits"])
        width = check_width(self.name, "binwidth", p["binwidth"])
        for param in ("center", "boundary"):
            check_point(self.name, param, p[param])
        if isinstance(width, CalendarStep) and "closed" not in stat_arguments(
            self
        ):
            # a calendar bin holds its first instant: [1 Feb, 1 Mar)
            p["closed"] = "left"
        validate_range_share(self.name, p.get("range_share"))

    def _breaks(self, scales, mechanism, rows: pd.DataFrame | None):
        if "x" not in self.build.axis_cache:
            p = self.params
            self.build.axis_cache["x"] = axis_breaks(
                self,
                "x",
                None if rows is None else rows["x"].to_numpy(dtype=float),
                scales.x,
                breaks=p["breaks"],
                limits=p["limits"],
                bins=p["bins"],
                binwidth=p["binwidth"],
                center=p["center"],
                boundary=p["boundary"],
                mechanism=mechanism,
                rule="bin",
            )
            rel = self.build.axis_cache["x"].release
            if rel is not None:
                self.build.releases.append(rel)
        return self.build.axis_cache["x"]

    def family_cells(self, data: pd.DataFrame, scales: pos_scales):
        refuse_date_objects(self.name, data, ("x",))
        return super().family_cells(data, scales)

    def domain(self, scales: pos_scales, rows: pd.DataFrame | None = None):
        self.require_continuous(scales, "x")
        mech = self.make_mechanism() if self.DP else None
        ab = self._breaks(scales, mech, rows)
        breaks = ab.breaks
        if self.params["pad"]:
            breaks = np.concatenate(
                [
                    [breaks[0] - (breaks[1] - breaks[0])],
                    breaks,
                    [breaks[-1] + (breaks[-1] - breaks[-2])],
                ]
            )
        family = Bins(
            breaks, self.params["closed"], ab.clamp, within=ab.within
        )
        lo, hi = breaks[:-1], breaks[1:]
        frame = pd.DataFrame(
            {"x": (lo + hi) / 2, "xmin": lo, "xmax": hi, "width": hi - lo}
        )
        closed = np.array([self.params["closed"]] * len(lo), dtype=object)
        return FamilyCells(
            frame,
            [lo, hi, closed],
            None,
            public=True,
            source=ab.source,
            describe=(tuple(breaks.tolist()), self.params["closed"]),
            family=family,
        )

    def shape_output(self, cells, released):
        frame = cells.frame.copy()
        # whole numbers as floats, as plotnine's stat_bin gives them
        frame["count"] = self.released_counts(released.values, np.float64)
        if self.DP:
            frame["noisy_count"] = released.noisy
        frame = frame[released.keep].reset_index(drop=True)
        normalised_columns(frame, frame["width"].to_numpy(dtype=float))
        return frame


@document
class stat_bin_dp(DPMixin, _BinFamily):
    """
    Differentially private histogram counts

    {usage}

    Drop-in for `stat_bin`: `geom_histogram(stat="bin_dp", breaks=b,
    eps=1, seed=23)`. Every bin between the public edges gets exact
    discrete Laplace noise, empty bins included.

    Parameters
    ----------
    {common_parameters}
    count : {"records", "units"}, default="records"
        Records, or distinct privacy units per cell: as in
        `stat_count_dp`.
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    breaks : array_like, default=None
        Public bin edges: numbers, or dates on a date axis
        (`pd.date_range(...)`, Timestamps, ISO strings).
    limits : tuple, default=None
        Public (low, high) range binned as `stat_bin` bins the data range:
        `bins` (default 30) bins whose end bins are centred on low and
        high, or `binwidth` (as `center`/`boundary` say). Not with
        `breaks`;
        two dates on a date axis (`pd.Timestamp`, `datetime`, ISO
        string; numbers are refused there). Without breaks or limits, the
        scale limits (`xlim`) are used, and without those a private range
        (1% and 99% quantiles, Durfee) is estimated with `range_share` of
        eps; records outside it are put in the edge bins. A date axis
        needs public breaks or limits.
    binwidth : float | pd.Timedelta | str, default=None
        Width of the bins. On a date axis: a number of days (as in
        plotnine) or a `pd.Timedelta`, the edges starting at the lower
        limit unless `center`/`boundary` is given; or a calendar step,
        `"1 month"`, `"3 months"`, `"1 week"`, `"1 day"`, `"1 year"`,
        `"6 hours"` (or a pandas offset such as
        `pd.offsets.MonthBegin()`): edges on month starts, Mondays,
        midnights..., from the last one at or before the lower limit to
        the first at or after the upper one, and `closed="left"` by
        default.
    bins, center, boundary, closed, pad :
        As in `stat_bin`; `center` and `boundary` may be dates on a date
        axis.
    range_share : float, default=0.2
        Share of eps spent on a private range when one is needed.

    Notes
    -----
    Computed variables: `count`, `density`, `ncount`, `ndensity`,
    `width`, `noisy_count`, all from released counts.
    """

    DEFAULT_PARAMS = {
        **_BinFamily.BASE_PARAMS,
        **DP_PARAMS,
        "range_share": 0.2,
    }


@document
class stat_bin_ckm(CKMMixin, _BinFamily):
    """
    Histogram counts protected by the Cell Key Method

    {usage}

    Drop-in for `stat_bin` with `aes(rkey=...)` and `ptable=`; bins must be
    public (breaks, or limits with bins/binwidth, or scale limits).

    Parameters
    ----------
    {common_parameters}
    count : {"records", "units"}, default="records"
        Records, or distinct privacy units per cell: as in
        `stat_count_dp`.
    ptable, threshold :
        As in `stat_count_ckm`.
    breaks, limits, bins, binwidth, center, boundary, closed, pad :
        As in `stat_bin_dp`.
    """

    DEFAULT_PARAMS = {**_BinFamily.BASE_PARAMS, **CKM_PARAMS}
