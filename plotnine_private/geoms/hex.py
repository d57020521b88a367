"""Hexagons, the geom that plotnine 0.15 lacks."""

from __future__ import annotations

import typing

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.geoms.geom import geom
from plotnine.geoms.geom_polygon import geom_polygon

from .._compat import SIZE_FACTOR, resolution, to_rgba
from ..mechanisms.domains.hexbin import SQRT3, hex_vertices
from ..stats.hex_counts import keep_upstream, upstream_class

if typing.TYPE_CHECKING:
    from matplotlib.axes import Axes
    from plotnine.coords.coord import coord
    from plotnine.iapi import panel_view

__all__ = ["geom_hex"]

# ggplot2's fallback when the data has no height: the y resolution of a
# hexagonal lattice underestimates the row spacing, hence the factor
_HEIGHT_FUDGE = 1.15

_UPSTREAM = upstream_class("geom_hex")


@document
class geom_hex(geom):
    """
    Hexagons centred at (x, y)

    {usage}

    Each row of the data is one pointy-top hexagon, drawn with ggplot2's
    geometry: vertical sides `width` apart, tips `2 * height / sqrt(3)`
    apart, vertices at `(±width/2, ±height/(2*sqrt(3)))` and
    `(0, ±height/sqrt(3))` from the centre. `width` and `height` come from
    the stat (the binwidths). Without them they are guessed from the data
    resolution, as ggplot2 does.

    Parameters
    ----------
    {common_parameters}

    See Also
    --------
    plotnine_private.stat_bin_hex : The default `stat` for this `geom`.
    """

    DEFAULT_AES = {
        "color": None,
        "fill": "#595959",
        "linetype": "solid",
        "size": 0.5,
        "alpha": 1,
    }
    REQUIRED_AES = {"x", "y"}
    DEFAULT_PARAMS = {
        "stat": "bin_hex",
        "position": "identity",
        "na_rm": False,
    }
    draw_legend = staticmethod(geom_polygon.draw_legend)

    def setup_data(self, data: pd.DataFrame) -> pd.DataFrame:
        """Fill in width and height, and the bounding box of each hexagon.

        The box columns make the position scales, which are trained after
        this step, include whole hexagons rather than just their centres.
        """
        if "width" not in data:
            # odd rows sit half a width across: resolution is width / 2
            data["width"] = 2 * resolution(data["x"], False)
        if "height" not in data:
            data["height"] = _HEIGHT_FUDGE * resolution(data["y"], False)
        half_width = data["width"] / 2
        tip = data["height"] / SQRT3
        data["xmin"] = data["x"] - half_width
        data["xmax"] = data["x"] + half_width
        data["ymin"] = data["y"] - tip
        data["ymax"] = data["y"] + tip
        return data

    def draw_panel(
        self,
        data: pd.DataFrame,
        panel_params: panel_view,
        coord: coord,
        ax: Axes,
    ):
        """Draw all hexagons of a panel as one collection."""
        if not coord.is_linear:
            # curved coords: munch the sides of each hexagon (closed, so
            # the last side bends too) like any polygon, as geom_rect does
            polygons = _hexagons_to_polygons(data, closed=True)
            for _, hexagon in polygons.groupby("group"):
                geom_polygon.draw_group(
                    hexagon.reset_index(drop=True),
                    panel_params,
                    coord,
                    ax,
                    self.params,
                )
            return

        from matplotlib.collections import PolyCollection

        n = len(data)
        polygons = _hexagons_to_polygons(data)
        # vertices go through the coord (coord_flip swaps them), so the
        # hexagons are turned with the axes, as in ggplot2
        xy = coord.transform(polygons[["x", "y"]], panel_params)
        verts = np.stack(
            [xy["x"].to_numpy(float), xy["y"].to_numpy(float)], axis=-1
        ).reshape(n, 6, 2)
        collection = PolyCollection(
            list(verts),
            facecolors=to_rgba(data["fill"], data["alpha"]),
            edgecolors=[_edge_colour(c) for c in data["color"]],
            linestyles=list(data["linetype"]),
            linewidths=data["size"].to_numpy(float) * SIZE_FACTOR,
            zorder=self.params["zorder"],
            rasterized=self.params["raster"],
        )
        ax.add_collection(collection)


def _edge_colour(colour: typing.Any) -> typing.Any:
    """Matplotlib's "none" for a missing colour."""
    if colour is None or (isinstance(colour, float) and np.isnan(colour)):
        return "none"
    return colour


def _hexagons_to_polygons(
    data: pd.DataFrame, closed: bool = False
) -> pd.DataFrame:
    """Six polygon rows per hexagon (seven if closed), a group for each."""
    n = len(data)
    verts = hex_vertices(
        data["x"].to_numpy(float),
        data["y"].to_numpy(float),
        data["width"].to_numpy(float),
        data["height"].to_numpy(float),
    )
    if closed:
        verts = np.concatenate([verts, verts[:, :1]], axis=1)
    k = verts.shape[1]
    drop = {"x", "y", "xmin", "xmax", "ymin", "ymax", "group"}
    others = {
        str(c): np.repeat(data[c].to_numpy(), k)
        for c in data.columns
        if c not in drop
    }
    return pd.DataFrame(
        {
            "x": verts[..., 0].ravel(),
            "y": verts[..., 1].ravel(),
            "group": np.repeat(np.arange(n), k),
            **others,
        }
    )


# a future plotnine with its own geom_hex keeps it
geom_hex = keep_upstream(geom_hex, _UPSTREAM)  # type: ignore[misc,assignment]
