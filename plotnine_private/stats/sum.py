"""Private point counts for ``geom_count``: ``stat_sum_dp``,
``stat_sum_ckm``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat
from plotnine.scales.scale_discrete import scale_discrete

from ..cells import categorical_dimension
from ..declarations import Declaration
from ..families import Observed, PointAxis, Points
from .base import (
    CKM_PARAMS,
    DP_PARAMS,
    CKMMixin,
    DPMixin,
    FamilyCells,
    PrivateCountStat,
    _fail,
)
from .bin2d import per_axis
from .dates import (
    CalendarStep,
    calendar_points,
    check_limits,
    check_width,
    refuse_date_objects,
    to_axis_units,
    width_in_axis_units,
)

if TYPE_CHECKING:
    from plotnine.iapi import pos_scales

__all__ = ["stat_sum_ckm", "stat_sum_dp"]


class _SumFamily(PrivateCountStat):
    """Counts of records per (x, y) position.

    With ``limits`` and ``resolution`` the positions form a public grid
    (records are snapped to the nearest grid point; points outside the
    limits are left out) and every grid point gets noise. Otherwise the
    observed positions are released with a threshold (DP).
    """

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        # the points' positions are public; the released n, clipped at 0
        return {"n": (0.0, float("inf"))}

    FAMILY = "sum"
    DECLARATION = Declaration(
        family="sum",
        shown_by_noise=True,
        example={
            "aes": {"x": "num", "y": "num2"},
            "params": {"limits": ((10, 45), (5, 35)), "resolution": (5, 5)},
        },
        title="sum",
        counterpart="sum",
        geoms="`geom_count`",
        plan_bounds="one cell's count",
        noisy=frozenset({"n", "noisy_n", "prop"}),
        intervals=("n",),
        plan="count",
        counterpart_labels=True,
        engine=True,
    )
    REQUIRED_AES = {"x", "y"}
    DEFAULT_AES = {"size": after_stat("n"), "weight": 1}
    BASE_PARAMS = {
        "geom": "point",
        "position": "identity",
        "na_rm": False,
        "limits": None,
        "resolution": None,
    }
    CREATES = {"n", "prop", "noisy_n", "n_low", "n_high", "signal"}
    COUNT_COLUMN = "n"

    def validate_params(self) -> None:
        p = self.params
        if (p["limits"] is None) != (p["resolution"] is None):
            raise _fail(
                self.name,
                "limits and resolution go together: limits=((x0, x1), "
                "(y0, y1)) with resolution=(dx, dy) make a public grid; "
                "give both or neither.",
            )
        if p["limits"] is not None:
            for ax, v in zip(
                "xy", per_axis(p["limits"], self.name, "limits", True)
            ):
                check_limits(self.name, f"limits ({ax})", v)
            for ax, r in zip(
                "xy", per_axis(p["resolution"], self.name, "resolution")
            ):
                check_width(self.name, f"resolution ({ax})", r)

    def grid(self, ax: str, limits, resolution, scale):
        """Public grid points of one axis: (points, points with one more
        beyond each end, index of the first point in those, (lo, hi),
        step: a float when evenly spaced, else the calendar step's
        text)."""
        name = self.name
        lim = check_limits(name, f"limits ({ax})", limits)
        lo, hi = (
            float(v)
            # numbers as given: the grid is on the transformed axis
            for v in to_axis_units(
                name, f"limits ({ax})", lim, scale, ax, transform=False
            )
        )
        step = width_in_axis_units(
            name,
            f"resolution ({ax})",
            check_width(name, f"resolution ({ax})", resolution),
            scale,
            ax,
        )
        if not isinstance(step, CalendarStep):
            n = int(np.floor((hi - lo) / step + 1e-9)) + 1
            points = lo + np.arange(n) * step
            return points, points, 0, (lo, hi), float(step)
        full = calendar_points(name, ax, (lo, hi), step, scale)
        inside = (full >= lo) & (full <= hi)
        if not inside.any():
            raise _fail(
                name,
                f"resolution ({ax})='{step}': no {step.unit} boundary lies "
                f"within limits ({ax}); widen the limits.",
            )
        first = int(np.argmax(inside))
        return full[inside], full, first, (lo, hi), str(step)

    def family_cells(self, data: pd.DataFrame, scales: pos_scales):
        refuse_date_objects(self.name, data, ("x", "y"))
        return super().family_cells(data, scales)

    #: declared levels of each discrete axis (set on the build's copy)
    levels: dict[str, list] = {}

    def release_rows(self, data: pd.DataFrame) -> pd.DataFrame:
        """Two discrete axes (``geom_count`` of two categories, as
        plotnine's ``cut`` x ``clarity`` example): the public grid is
        every pair of declared levels, each record in its pair's cell;
        the rest as for numeric positions."""
        scales = self.build.door.scales
        discrete = [
            ax
            for ax in "xy"
            if isinstance(getattr(scales, ax), scale_discrete)
        ]
        if not discrete:
            return super().release_rows(data)
        if len(discrete) == 1 or self.params["limits"] is not None:
            other = "y" if discrete == ["x"] else "x"
            raise _fail(
                self.name,
                f"{discrete[0]} is discrete and {other} is not: points are "
                "counted on a grid of two continuous positions or of two "
                "declared categories. Map a declared Categorical to both "
                "(without limits=), or numbers to both with limits= and "
                "resolution=.",
            )
        levels = {}
        for ax in "xy":
            declared = self.declared_of(ax)
            if declared is None:
                raise _fail(
                    self.name,
                    f"{ax} is discrete but its levels are not declared: "
                    "the grid of points must be public. Map a pandas "
                    "Categorical with explicit categories=[...].",
                )
            levels[ax] = list(declared)
        data = data.copy()
        for ax in "xy":
            codes = categorical_dimension(ax, data[ax], levels[ax]).codes
            pos = codes.astype(np.float64) + 1.0
            pos[codes < 0] = np.nan  # not a declared level: left out
            data[ax] = pos
        self.levels = levels
        self.params = {
            **self.params,
            "limits": ((1, len(levels["x"])), (1, len(levels["y"]))),
            "resolution": (1, 1),
        }
        return super().release_rows(data)

    def position_groups(self) -> dict[str, str]:
        # two discrete positions are part of plotnine's groups (one per
        # point): each point's prop is 1, as plotnine's
        mapping = self.build.door.mapping
        return {str(mapping[ax]): ax for ax in self.levels if ax in mapping}

    def domain(self, scales: pos_scales, rows: pd.DataFrame | None = None):
        if not self.levels:
            self.require_continuous(scales, "x", "y")
        p = self.params
        if p["limits"] is not None:
            lims = per_axis(p["limits"], self.name, "limits", True)
            ress = per_axis(p["resolution"], self.name, "resolution")
            axes, rng, res = [], [], []
            for ax, lim, r in zip("xy", lims, ress):
                if ax in self.levels:
                    # the positions of the declared levels: 1, 2, ...
                    points = np.arange(1.0, len(self.levels[ax]) + 1)
                    axes.append(PointAxis(points, 1.0, 1.0, points, 0))
                    rng.append((1.0, float(points[-1])))
                    res.append(1.0)
                    continue
                points, full, first, span, step = self.grid(
                    ax, lim, r, getattr(scales, ax)
                )
                axes.append(PointAxis(points, span[0], step, full, first))
                rng.append(span)
                res.append(step)
            family = Points(*axes)
            gpx, gpy = axes[0].points, axes[1].points
            nx, ny = len(gpx), len(gpy)
            gx = np.tile(np.arange(nx), ny)
            gy = np.repeat(np.arange(ny), nx)
            px, py = gpx[gx], gpy[gy]
            frame = pd.DataFrame({"x": px, "y": py})
            return FamilyCells(
                frame,
                [px, py],
                None,
                public=True,
                source="public: grid",
                describe=(*rng, tuple(res)),
                family=family,
            )
        # the positions seen (none yet without rows)
        seen = Observed()
        px = py = np.empty(0)
        code = None
        if rows is not None:
            uniq, code = seen.positions(
                {a: rows[a].to_numpy(dtype=float) for a in ("x", "y")}
            )
            px = uniq.get_level_values(0).to_numpy(dtype=float)
            py = uniq.get_level_values(1).to_numpy(dtype=float)
        return FamilyCells(
            pd.DataFrame({"x": px, "y": py}),
            [px, py],
            code,
            public=False,
            source="observed",
            family=seen,
        )

    def shape_output(self, cells, released):
        frame = cells.frame.copy()
        frame["n"] = np.rint(released.values).astype(np.int64)
        if self.DP:
            frame["noisy_n"] = released.noisy
        frame = frame[released.keep & (frame["n"].to_numpy() > 0)]
        frame = frame.reset_index(drop=True)
        total = frame.groupby(["PANEL", "group"], observed=True)[
            "n"
        ].transform("sum")
        frame["prop"] = frame["n"] / total.where(total > 0, 1)
        for ax, levels in self.levels.items():
            # back to the declared levels, which the discrete scale places
            at = frame[ax].to_numpy(dtype=np.int64) - 1
            frame[ax] = pd.Categorical(
                np.asarray(levels, dtype=object)[at], categories=levels
            )
        return frame


@document
class stat_sum_dp(DPMixin, _SumFamily):
    """
    Differentially private counts of overlapping points (`geom_count`)

    {usage}

    Drop-in for `stat_sum`: `geom_count(stat="sum_dp", eps=.5, seed=1000)`.
    With a declared Categorical on both x and y the grid is every pair of
    their levels (no `limits`/`resolution`).

    Parameters
    ----------
    {common_parameters}
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    limits : tuple, default=None
        Public ((x0, x1), (y0, y1)) of a grid of positions; dates on a
        date axis.
    resolution : float or tuple, default=None
        Grid spacing (dx, dy). With `limits`, every grid point gets noise
        (pure eps-DP); without, observed positions are thresholded. On a
        date axis a number of days, a `pd.Timedelta`, or a calendar step
        (`"1 month"`, `"1 week"`, ...): the points are then the calendar
        boundaries within the limits, and each record goes to the
        nearest one.

    Notes
    -----
    Computed variables: `n` (released, > 0 shown), `prop`, `noisy_n`.
    """

    DEFAULT_PARAMS = {**_SumFamily.BASE_PARAMS, **DP_PARAMS}


@document
class stat_sum_ckm(CKMMixin, _SumFamily):
    """
    Counts of overlapping points protected by the Cell Key Method

    {usage}

    Parameters
    ----------
    {common_parameters}
    ptable, threshold :
        As in `stat_count_ckm`.
    limits, resolution :
        As in `stat_sum_dp`.
    """

    DEFAULT_PARAMS = {**_SumFamily.BASE_PARAMS, **CKM_PARAMS}
