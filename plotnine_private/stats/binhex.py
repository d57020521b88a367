"""Private hexagon bins: ``stat_binhex_dp``, ``stat_binhex_ckm`` (and the
``bin_hex`` spellings).

One hexagon lattice per layer, anchored at the lower-left corner of the
public box ``limits=((xmin, xmax), (ymin, ymax))`` (or the scale limits,
or, for DP only, a private range estimate), shared by all groups and
panels. The domain is every hexagon that a point of the box can fall in
(:func:`~plotnine_private.mechanisms.domains.hexbin.hex_lattice`); DP noises
all of
them, empty ones included; CKM perturbs the non-empty ones (zeros stay
zero). Geometry as ggplot2's ``stat_bin_hex`` (R package hexbin's
lattice; :mod:`plotnine_private.mechanisms.domains.hexbin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat

from ..declarations import BINNED_INTERVALS, BINNED_NOISY, Declaration
from ..families import Hexes
from ..mechanisms.domains.hexbin import (
    bins_pair,
    binwidth_pair,
    hex_lattice,
)
from ..mechanisms.errors import ParameterError
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
from .bin2d import TwoAxisBins, _Bin2dFamily, per_axis
from .dates import (
    check_width,
    refuse_date_objects,
    width_in_axis_units,
)
from .domains import axis_breaks
from .hex_counts import HEX_COLUMNS, hex_geometry, user_mapping_wins

if TYPE_CHECKING:
    from plotnine.iapi import pos_scales

__all__ = [
    "stat_bin_hex_ckm",
    "stat_bin_hex_dp",
    "stat_binhex_ckm",
    "stat_binhex_dp",
]


class _BinhexFamily(TwoAxisBins, PrivateCountStat):
    """Counts per hexagon of a lattice fixed by public inputs."""

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        # the hexagons' positions are public; the released count >= 0
        return {"count": (0.0, float("inf"))}

    FAMILY = "binhex"
    DECLARATION = Declaration(
        family="binhex",
        shown_by_noise=True,
        example={
            "aes": {"x": "num", "y": "num2"},
            "params": {"limits": ((10, 45), (5, 35)), "binwidth": (10, 10)},
        },
        title="binhex",
        counterpart="bin_hex",
        geoms="`geom_hex` (shipped here), `geom_text`",
        replaces="ggplot2's `bin_hex`",
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
        "geom": "hex",
        "position": "identity",
        "na_rm": False,
        "bins": 30,
        "binwidth": None,
        "limits": None,
        "drop": True,
        "count": "records",
    }
    CREATES = {*HEX_COLUMNS, "noisy_count", "signal"}

    def validate_params(self) -> None:
        self.validate_axes(fixed=True)
        validate_range_share(self.name, self.params.get("range_share"))
        p = self.params
        try:
            bins_pair(p["bins"])
            if p["binwidth"] is not None:
                # durations (date axes) are checked in days
                binwidth_pair(
                    tuple(
                        w / pd.Timedelta(days=1)
                        if isinstance(w, pd.Timedelta)
                        else w
                        for w in (
                            check_width(self.name, "binwidth", v, fixed=True)
                            for v in per_axis(
                                p["binwidth"], self.name, "binwidth"
                            )
                        )
                    )
                )
        except ParameterError as err:
            raise _fail(self.name, str(err)) from None

    def setup_params(self, data: pd.DataFrame):
        user_mapping_wins(self, data)

    def box_axis(self, ax: str, scale, mechanism, rows=None):
        """The public (or privately estimated) range of one axis.

        As ``TwoAxisBins.axis`` but one bin wide, so that the range is
        exactly the box whatever the binwidth; cached per layer.
        """
        key = f"box {ax}"
        if key not in self.build.axis_cache:
            i = 0 if ax == "x" else 1
            limits = per_axis(self.params["limits"], self.name, "limits", True)
            ab = axis_breaks(
                self,
                ax,
                None if rows is None else rows[ax].to_numpy(dtype=float),
                scale,
                limits=limits[i],
                bins=1,
                mechanism=mechanism,
            )
            self.build.axis_cache[key] = ab
            if ab.release is not None:
                self.build.releases.append(ab.release)
        return self.build.axis_cache[key]

    def lattice(self, scales: pos_scales, mechanism, rows=None) -> dict:
        """Box, origin, binwidth and hexagons: one lattice per layer."""
        if "hex" not in self.build.axis_cache:
            ax = self.box_axis("x", scales.x, mechanism, rows)
            ay = self.box_axis("y", scales.y, mechanism, rows)
            xlim = (float(ax.breaks[0]), float(ax.breaks[-1]))
            ylim = (float(ay.breaks[0]), float(ay.breaks[-1]))
            bins = per_axis(self.params["bins"], self.name, "bins")
            bw = [
                width_in_axis_units(
                    self.name,
                    f"binwidth ({a})",
                    check_width(self.name, "binwidth", w, fixed=True),
                    sc,
                    a,
                )
                for a, w, sc in zip(
                    "xy",
                    per_axis(self.params["binwidth"], self.name, "binwidth"),
                    (scales.x, scales.y),
                )
            ]
            binwidth = tuple(
                float(w) if w is not None else (hi - lo) / float(b)
                for w, b, (lo, hi) in zip(bw, bins, (xlim, ylim))
            )
            origin = (xlim[0], ylim[0])
            row, col = hex_lattice(xlim, ylim, origin, binwidth)
            sources = {ax.source, ay.source}
            source = (
                ax.source
                if len(sources) == 1
                else f"x {ax.source}; y {ay.source}"
            )
            if any("private" in s for s in sources):
                source = "private estimate"
            self.build.axis_cache["hex"] = {
                "xlim": xlim,
                "ylim": ylim,
                "origin": origin,
                "binwidth": binwidth,
                "row": row,
                "col": col,
                "clamp": ax.clamp or ay.clamp,
                "source": source,
            }
        return self.build.axis_cache["hex"]

    def family_cells(self, data: pd.DataFrame, scales: pos_scales):
        refuse_date_objects(self.name, data, ("x", "y"))
        return super().family_cells(data, scales)

    def domain(self, scales: pos_scales, rows: pd.DataFrame | None = None):
        self.require_continuous(scales, "x", "y")
        mech = self.make_mechanism() if self.DP else None
        lat = self.lattice(scales, mech, rows)
        row, col = lat["row"], lat["col"]
        family = Hexes(
            lat["xlim"],
            lat["ylim"],
            lat["origin"],
            lat["binwidth"],
            row,
            col,
            lat["clamp"],
        )
        frame = hex_geometry(row, col, lat["origin"], lat["binwidth"])
        # a hexagon is identified by its shape and place; the tag keeps
        # its noise apart from rectangles with the same four numbers
        content = [
            np.full(len(frame), "hex", dtype=object),
            *(frame[c].to_numpy() for c in ("x", "y", "width", "height")),
        ]
        return FamilyCells(
            frame,
            content,
            None,
            public=True,
            source=lat["source"],
            describe=(lat["xlim"], lat["ylim"], lat["binwidth"]),
            family=family,
        )

    # same shaping as the rectangles: integer counts, noisy_count (DP),
    # released zeros hidden when drop, density etc. from released counts
    shape_output = _Bin2dFamily.shape_output


_DOC_COMMON = """
    limits : tuple, default=None
        Public box ((xmin, xmax), (ymin, ymax)); dates on a date axis.
        The lattice is anchored at (xmin, ymin); records outside the box
        are left out. Without it, the scale limits (`xlim`, `ylim`); for
        DP stats, a private range estimate (records outside it are moved
        to its edge), except on a date axis, which needs public limits.
    bins : int | tuple[int, int], default=30
        Number of binwidths across the box, when `binwidth` is not given.
    binwidth : float | tuple[float, float], default=None
        Distance between neighbouring centres in a row (x), and
        `2 / sqrt(3)` times the distance between rows (y). On a date axis
        a number of days, a `pd.Timedelta` or a fixed step such as
        `"1 week"` or `"6 hours"` (not months or years: hexagons need one
        width).
    drop : bool, default=True
        Hide hexagons whose *released* count is 0 (after noise: empty
        hexagons are noised like all others, so hiding is
        post-processing).
"""


@document
class stat_binhex_dp(DPMixin, _BinhexFamily):
    """
    Differentially private hexagon bin counts

    {usage}

    Drop-in for `stat_bin_hex`: `geom_hex(stat="binhex_dp", eps=1,
    seed=1234, limits=((0, 10), (0, 5)))`. Every hexagon that a point of
    the box can fall in gets noise, empty ones included; hexagon centres
    `x`, `y` let `geom_text` label them.

    Parameters
    ----------
    {common_parameters}
    count : {"records", "units"}, default="records"
        Records, or distinct privacy units per cell: as in
        `stat_count_dp`.
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    range_share : float, default=0.2
        Share of eps for private ranges (only without public limits).
    """

    __doc__ = (__doc__ or "") + _DOC_COMMON
    DEFAULT_PARAMS = {
        **_BinhexFamily.BASE_PARAMS,
        **DP_PARAMS,
        "range_share": 0.2,
    }


@document
class stat_binhex_ckm(CKMMixin, _BinhexFamily):
    """
    Hexagon bin counts protected by the Cell Key Method

    {usage}

    Drop-in for `stat_bin_hex` with `aes(rkey=...)` and `ptable=`; needs
    public `limits` (or scale limits). Empty hexagons stay empty.

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
    DEFAULT_PARAMS = {**_BinhexFamily.BASE_PARAMS, **CKM_PARAMS}


class stat_bin_hex_dp(stat_binhex_dp):
    """Alias of `stat_binhex_dp` (registered under both spellings)."""


class stat_bin_hex_ckm(stat_binhex_ckm):
    """Alias of `stat_binhex_ckm` (registered under both spellings)."""
