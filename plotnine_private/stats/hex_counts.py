"""Hexagon bin counts with ggplot2's geometry (non-private)."""

from __future__ import annotations

import typing

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat, stage
from plotnine.stats.stat import stat

from .._compat import register, registered
from ..exceptions import PlotninePrivateError
from ..mechanisms.domains.hexbin import (
    SQRT3,
    bins_pair,
    binwidth_pair,
    default_binwidth,
    ggplot2_bounds,
    hex_assign,
    hex_cell_counts,
    hex_centres,
)
from ..mechanisms.errors import ParameterError

if typing.TYPE_CHECKING:
    from typing import Any

    from plotnine.iapi import pos_scales

__all__ = ["stat_bin_hex", "stat_binhex"]

HEX_COLUMNS = (
    "x",
    "y",
    "count",
    "density",
    "ncount",
    "ndensity",
    "width",
    "height",
    "xmin",
    "xmax",
    "ymin",
    "ymax",
)


def upstream_class(name: str) -> type | None:
    """The class registered as ``name`` by another package, if any.

    plotnine registers classes by name and the last definition wins. Our
    hexagon stat and geom fill a gap in plotnine 0.15; if plotnine (or
    another extension) already registered a class of that name, ours must
    not replace it, so the defining modules put it back.
    """
    cls = registered(name)
    if cls is None or cls.__module__.split(".")[0] == __name__.split(".")[0]:
        return None
    return cls


def keep_upstream(ours: type, upstream: type | None) -> type:
    """Put back ``upstream`` under our class's name; return the winner.

    Call right after defining ``ours`` with the value of
    :func:`upstream_class` taken before the definition. The module then
    binds its public name to the returned class, so that the exported name
    always means what plotnine resolves.
    """
    if upstream is None:
        return ours
    register(ours.__name__, upstream)
    return upstream


def user_mapping_wins(stat_obj: stat, data: pd.DataFrame) -> None:
    """Let a user mapping (``fill="g"``) beat a computed default aesthetic.

    ggplot2 uses the computed default (``fill=after_stat("count")``) only
    for aesthetics the user did not map; plotnine 0.15 applies both and
    then fails on the discrete fill scale. Call from ``setup_params``: the
    data columns are the mapped aesthetics, and ``layer.map_statistic``
    reads ``DEFAULT_AES`` from the instance.
    """
    mapped = set(data.columns)
    stat_obj.DEFAULT_AES = {
        ae: value
        for ae, value in type(stat_obj).DEFAULT_AES.items()
        if not (ae in mapped and isinstance(value, stage))
    }


def check_hex_params(
    bins: Any, binwidth: Any, where: str
) -> tuple[tuple[float, float], tuple[float, float] | None]:
    """Validated ``bins`` and ``binwidth`` pairs, or a clear error."""
    try:
        bins = bins_pair(bins)
        if binwidth is not None:
            binwidth = binwidth_pair(binwidth)
    except ParameterError as err:
        raise PlotninePrivateError(f"{where}: {err}") from err
    return bins, binwidth


def hex_geometry(
    row: np.ndarray,
    col: np.ndarray,
    origin: tuple[float, float],
    binwidth: tuple[float, float],
) -> pd.DataFrame:
    """Centre ``x``, ``y``, ``width``, ``height`` (the binwidths) and the
    bounding box ``xmin``...``ymax`` of hexagons (row, col)."""
    bwx, bwy = binwidth
    x, y = hex_centres(row, col, origin, binwidth)
    return pd.DataFrame(
        {
            "x": x,
            "y": y,
            "width": np.full(len(x), bwx),
            "height": np.full(len(x), bwy),
            "xmin": x - bwx / 2,
            "xmax": x + bwx / 2,
            "ymin": y - bwy / SQRT3,
            "ymax": y + bwy / SQRT3,
        }
    )


def hex_frame(
    row: np.ndarray,
    col: np.ndarray,
    count: np.ndarray,
    origin: tuple[float, float],
    binwidth: tuple[float, float],
) -> pd.DataFrame:
    """The output of :class:`stat_bin_hex`, one row per hexagon.

    :func:`hex_geometry` plus ``count``, ``density`` (count / total) and
    ``ncount``, ``ndensity`` (scaled to a maximum of 1).
    """
    frame = hex_geometry(row, col, origin, binwidth)
    total = count.sum(dtype=float)
    top = np.abs(count).max(initial=0)
    density = count / total if total else np.zeros(len(count))
    top_density = np.abs(density).max(initial=0)
    frame["count"] = count
    frame["density"] = density
    frame["ncount"] = count / top if top else np.zeros(len(count))
    frame["ndensity"] = density / top_density if top_density else density
    return frame[list(HEX_COLUMNS)]


_UPSTREAM_STAT = upstream_class("stat_bin_hex")
_UPSTREAM_ALIAS = upstream_class("stat_binhex")


@document
class stat_bin_hex(stat):
    """
    Hexagon bin counts, as ggplot2's `stat_bin_hex`

    {usage}

    The plane is tiled by pointy-top hexagons of width `binwidth[0]`
    (between vertical sides) and height `2 * binwidth[1] / sqrt(3)` (tip
    to tip); each point goes to the nearest centre in units of the
    binwidths, and only hexagons holding a point are returned. As in
    ggplot2, each group gets its own lattice, anchored at its data range
    rounded down to the binwidth. This stat reads the data range: it is
    not private. Use `stat="binhex_dp"` or `stat="binhex_ckm"` for
    protected counts.

    Parameters
    ----------
    {common_parameters}
    bins : int | tuple[int, int], default=30
        Number of bins across the range of the x and y scales, used when
        `binwidth` is not given.
    binwidth : float | tuple[float, float], default=None
        Distance between neighbouring hexagon centres in a row (x) and
        `2 / sqrt(3)` times the distance between rows (y).

    See Also
    --------
    plotnine_private.geom_hex : The default `geom` for this `stat`.
    """

    _aesthetics_doc = """
    {aesthetics_table}

    **Options for computed aesthetics**

    ```python
    "count"     # number of points (sum of weights) in the hexagon
    "density"   # count / total count of the group
    "ncount"    # count, scaled to a maximum of 1
    "ndensity"  # density, scaled to a maximum of 1
    "width"     # binwidth along x
    "height"    # binwidth along y
    ```

    `x` and `y` are the hexagon centres, and `xmin`, `xmax`, `ymin`,
    `ymax` its bounding box.
    """

    REQUIRED_AES = {"x", "y"}
    DEFAULT_AES = {"fill": after_stat("count"), "weight": None}
    DEFAULT_PARAMS = {
        "geom": "hex",
        "position": "identity",
        "na_rm": False,
        "bins": 30,
        "binwidth": None,
    }
    CREATES = set(HEX_COLUMNS)

    def __init__(self, mapping=None, data=None, **kwargs):
        super().__init__(mapping, data, **kwargs)
        check_hex_params(
            self.params["bins"], self.params["binwidth"], "stat_bin_hex()"
        )

    def setup_params(self, data: pd.DataFrame):
        user_mapping_wins(self, data)

    def compute_group(
        self, data: pd.DataFrame, scales: pos_scales
    ) -> pd.DataFrame:
        bins, binwidth = check_hex_params(
            self.params["bins"], self.params["binwidth"], "stat_bin_hex()"
        )
        if binwidth is None:
            binwidth = default_binwidth(
                scales.x.dimension(), scales.y.dimension(), bins
            )
        if len(data) == 0:
            return pd.DataFrame(columns=list(HEX_COLUMNS))

        x = data["x"].to_numpy(dtype=float)
        y = data["y"].to_numpy(dtype=float)
        # ggplot2 anchors each group's lattice at its own rounded range
        origin = (
            ggplot2_bounds(x.min(), x.max(), binwidth[0])[0],
            ggplot2_bounds(y.min(), y.max(), binwidth[1])[0],
        )
        row, col = hex_assign(x, y, origin, binwidth)
        weight = None
        if "weight" in data:
            weight = np.nan_to_num(
                data["weight"].to_numpy(dtype=float, na_value=np.nan)
            )
        cells = hex_cell_counts(row, col, weight)
        return hex_frame(cells.row, cells.col, cells.count, origin, binwidth)


class stat_binhex(stat_bin_hex):
    """Alias of `stat_bin_hex`, so that `stat="binhex"` resolves."""


# a future plotnine with its own hexagon stat keeps it
stat_bin_hex = keep_upstream(stat_bin_hex, _UPSTREAM_STAT)  # type: ignore
stat_binhex = keep_upstream(stat_binhex, _UPSTREAM_ALIAS)  # type: ignore
