"""Private 2-D histograms: ``stat_bin2d_dp``, ``stat_bin2d_ckm`` (and the
``bin_2d`` spellings)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat
from plotnine.scales.scale_discrete import scale_discrete

from ..cells import tile_frame
from ..declarations import BINNED_INTERVALS, BINNED_NOISY, Declaration
from ..families import Bins, Grid
from .base import (
    CKM_PARAMS,
    DP_PARAMS,
    CKMMixin,
    DPMixin,
    FamilyCells,
    PrivateCountStat,
    _fail,
    validate_range_share,
)
from .bin import normalised_columns
from .dates import (
    check_breaks,
    check_limits,
    check_width,
    refuse_date_objects,
)
from .domains import axis_breaks

if TYPE_CHECKING:
    from plotnine.iapi import pos_scales

__all__ = [
    "stat_bin2d_ckm",
    "stat_bin2d_dp",
    "stat_bin_2d_ckm",
    "stat_bin_2d_dp",
]


def per_axis(value, name: str, param: str, pair_items: bool = False):
    """(x, y) from a scalar or a pair (``limits`` and ``breaks`` are pairs
    of sequences)."""
    if value is None:
        return None, None
    if pair_items:
        try:
            vx, vy = value
        except (TypeError, ValueError):
            raise _fail(
                name,
                f"{param} must be a pair (x_{param}, y_{param}), got "
                f"{value!r}.",
            ) from None
        return vx, vy
    if np.ndim(value) == 0 or isinstance(value, str):
        return value, value
    try:
        vx, vy = value
    except (TypeError, ValueError):
        raise _fail(
            name, f"{param} must be a number or a pair, got {value!r}."
        ) from None
    return vx, vy


if TYPE_CHECKING:
    # a mixin of PrivateCountStat subclasses: its attributes, for mypy
    _TwoAxisBase = PrivateCountStat
else:
    _TwoAxisBase = object


class TwoAxisBins(_TwoAxisBase):
    """Shared by the rectangular and hexagonal 2-D families: public (or
    private) ranges on both axes, one per layer."""

    BIN_RULE = "exact"

    def axis(self, ax: str, scale, mechanism, rows=None):
        if isinstance(scale, scale_discrete):
            self.require_continuous(SimpleNamespace(**{ax: scale}), ax)
        if ax not in self.build.axis_cache:
            p = self.params
            i = 0 if ax == "x" else 1
            breaks = per_axis(p.get("breaks"), self.name, "breaks", True)[i]
            limits = per_axis(p["limits"], self.name, "limits", True)[i]
            bins = per_axis(p["bins"], self.name, "bins")[i]
            binwidth = per_axis(p["binwidth"], self.name, "binwidth")[i]
            ab = axis_breaks(
                self,
                ax,
                None if rows is None else rows[ax].to_numpy(dtype=float),
                scale,
                breaks=breaks,
                limits=limits,
                bins=bins,
                binwidth=binwidth,
                mechanism=mechanism,
                rule=self.BIN_RULE,
            )
            self.build.axis_cache[ax] = ab
            if ab.release is not None:
                self.build.releases.append(ab.release)
        return self.build.axis_cache[ax]

    def validate_axes(self, fixed: bool = False) -> None:
        """Breaks and limits (numbers or dates) and binwidths (numbers,
        durations, calendar steps; ``fixed``: durations only) per axis."""
        p = self.params
        b = per_axis(p.get("breaks"), self.name, "breaks", True)
        for ax, v in zip("xy", b):
            if v is not None:
                check_breaks(self.name, f"breaks ({ax})", v)
        lim = per_axis(p["limits"], self.name, "limits", True)
        for ax, v in zip("xy", lim):
            if v is not None:
                check_limits(self.name, f"limits ({ax})", v)
        bw = per_axis(p["binwidth"], self.name, "binwidth")
        for ax, v in zip("xy", bw):
            check_width(self.name, f"binwidth ({ax})", v, fixed=fixed)


class _Bin2dFamily(TwoAxisBins, PrivateCountStat):
    """Counts per rectangle of a public grid."""

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        # the tiles' positions are public; the released count, clipped at 0
        return {"count": (0.0, float("inf"))}

    #: edges over public limits as plotnine's stat_bin_2d places them
    BIN_RULE = "bin_2d"

    FAMILY = "bin2d"
    DECLARATION = Declaration(
        family="bin2d",
        example={
            "aes": {"x": "num", "y": "num2"},
            "params": {"breaks": ((10, 25, 45), (5, 20, 35))},
        },
        title="bin2d",
        counterpart="bin_2d",
        geoms="`geom_bin_2d`, `geom_rect`, `geom_text`",
        plan_bounds="one cell's count",
        noisy=BINNED_NOISY,
        intervals=BINNED_INTERVALS,
        plan="count",
        counterpart_labels=True,
        engine=True,
    )
    QUERY_PARAMS = ("range_share",)

    REQUIRED_AES = {"x", "y"}
    DEFAULT_AES = {"fill": after_stat("count"), "weight": None}
    UNIT_COUNTS = True
    BASE_PARAMS = {
        "geom": "rect",
        "position": "identity",
        "na_rm": False,
        "bins": 30,
        "binwidth": None,
        "breaks": None,
        "limits": None,
        "drop": True,
        "count": "records",
    }
    CREATES = {
        "xmin",
        "xmax",
        "ymin",
        "ymax",
        "x",
        "y",
        "count",
        "density",
        "ncount",
        "ndensity",
        "noisy_count",
        "signal",
    }

    def validate_params(self) -> None:
        self.validate_axes()
        validate_range_share(self.name, self.params.get("range_share"))

    def family_cells(self, data: pd.DataFrame, scales: pos_scales):
        refuse_date_objects(self.name, data, ("x", "y"))
        return super().family_cells(data, scales)

    def domain(self, scales: pos_scales, rows: pd.DataFrame | None = None):
        mech = self.make_mechanism() if self.DP else None
        ax = self.axis("x", scales.x, mech, rows)
        ay = self.axis("y", scales.y, mech, rows)
        nx, ny = len(ax.breaks) - 1, len(ay.breaks) - 1
        family = Grid(
            Bins(
                ax.breaks,
                "left" if ax.calendar else "right",
                ax.clamp,
                within=ax.within,
            ),
            Bins(
                ay.breaks,
                "left" if ay.calendar else "right",
                ay.clamp,
                "y",
                within=ay.within,
            ),
        )
        gx = np.tile(np.arange(nx), ny)
        gy = np.repeat(np.arange(ny), nx)
        # the cells are named by the edges that cut the records; the
        # tiles are drawn at the edges shown (plotnine's grid)
        xmin, xmax = ax.breaks[:-1][gx], ax.breaks[1:][gx]
        ymin, ymax = ay.breaks[:-1][gy], ay.breaks[1:][gy]
        sx, sy = ax.edges_shown, ay.edges_shown
        frame = tile_frame(sx[:-1][gx], sx[1:][gx], sy[:-1][gy], sy[1:][gy])
        public = "private" not in ax.source and "private" not in ay.source
        source = (
            ax.source
            if ax.source == ay.source
            else (f"x {ax.source}; y {ay.source}")
        )
        return FamilyCells(
            frame,
            [xmin, xmax, ymin, ymax],
            None,
            public=True,
            source=source if public else "private estimate",
            describe=(tuple(ax.breaks.tolist()), tuple(ay.breaks.tolist())),
            family=family,
        )

    def shape_output(self, cells, released):
        frame = cells.frame.copy()
        # floats, as plotnine's 2-D counts (a label prints "57.0")
        frame["count"] = self.released_counts(released.values, np.float64)
        if self.DP:
            frame["noisy_count"] = released.noisy
        keep = released.keep
        if self.params["drop"]:
            keep = keep & (frame["count"].to_numpy() > 0)
        frame = frame[keep].reset_index(drop=True)
        normalised_columns(frame, np.ones(len(frame)))
        return frame


_DOC_COMMON = """
    breaks : tuple, default=None
        Public bin edges (x_breaks, y_breaks); dates on a date axis.
    limits : tuple, default=None
        Public ((xmin, xmax), (ymin, ymax)) binned as `stat_bin_2d` bins
        the scale range: edges on multiples of the width (`binwidth`, or
        range / `bins`, default 30; scalars or pairs) from the one at or
        below the low end past the high end. Not with `breaks` on the
        same axis. Without either,
        the scale limits (`xlim`, `ylim`); for DP stats, a private range
        (not on a date axis: give its limits as dates there).
    binwidth : float | str | pd.Timedelta | tuple, default=None
        As in `stat_bin_dp`, per axis: on a date axis a number of days, a
        `pd.Timedelta` or a calendar step such as `"1 month"`, e.g.
        `binwidth=("1 month", 5)`.
    Bins are closed on the right, the lowest edge included, as in
    `stat_bin_2d`; calendar bins are closed on the left ([1 Feb, 1 Mar)).
    drop : bool, default=True
        Hide cells whose *released* count is 0 (after noise: empty cells
        are noised like all others, so hiding is post-processing).
"""


@document
class stat_bin2d_dp(DPMixin, _Bin2dFamily):
    """
    Differentially private 2-D bin counts

    {usage}

    Drop-in for `stat_bin_2d`: `geom_bin_2d(stat="bin2d_dp", eps=.5,
    seed=1234)` with `xlim`/`ylim` or `limits=`. Every rectangle of the
    public grid gets noise, empty ones included; cell centres `x`, `y`
    let `geom_text` label them.

    Parameters
    ----------
    {common_parameters}
    count : {"records", "units"}, default="records"
        Records, or distinct privacy units per cell: as in
        `stat_count_dp`.
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    range_share : float, default=0.2
        Share of eps for private ranges (only when no public bins).
    """

    __doc__ = (__doc__ or "") + _DOC_COMMON
    DEFAULT_PARAMS = {
        **_Bin2dFamily.BASE_PARAMS,
        **DP_PARAMS,
        "range_share": 0.2,
    }


@document
class stat_bin2d_ckm(CKMMixin, _Bin2dFamily):
    """
    2-D bin counts protected by the Cell Key Method

    {usage}

    Drop-in for `stat_bin_2d` with `aes(rkey=...)` and `ptable=`.

    Parameters
    ----------
    {common_parameters}
    count : {"records", "units"}, default="records"
        Records, or distinct privacy units per cell: as in
        `stat_count_dp`.
    ptable, threshold :
        As in `stat_count_ckm`.
    """

    __doc__ = (__doc__ or "") + _DOC_COMMON
    DEFAULT_PARAMS = {**_Bin2dFamily.BASE_PARAMS, **CKM_PARAMS}


class stat_bin_2d_dp(stat_bin2d_dp):
    """Alias of `stat_bin2d_dp` (registered under both spellings)."""


class stat_bin_2d_ckm(stat_bin2d_ckm):
    """Alias of `stat_bin2d_ckm` (registered under both spellings)."""
