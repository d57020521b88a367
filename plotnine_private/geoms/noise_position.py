"""Where ``geom_noise`` draws: at the marks of the layer it annotates.

plotnine's positions move a layer's own marks: stacking error bars would
stack their ends (not the bars they belong to), and dodging them needs
the bars' width. :class:`position_of_layer` instead runs the annotated
layer's position on that layer's own marks (the same released cells,
made by the annotated geom's ``setup_data``), and moves each interval
with its mark:

- stack: an interval end ``e`` of a mark of value ``v`` drawn from
  ``[ymin, ymax]`` is drawn at ``base + e``, where ``base`` is where the
  mark's zero lies (``ymin`` for ``v >= 0``, ``ymax`` below zero);
- fill: the same, scaled as the marks are (``base + e / |total|``),
  clipped to the fill's range ``[0, 1]`` (a share is no more than all);
- dodge and dodge2: at the centre of the dodged mark, keeping the share
  of the mark's width that the interval's geom had before dodging; a
  mark without width (a point, a line) at its dodged x, the interval as
  wide as asked but no wider than the step between two dodged marks;
- any other position (identity, nudge, jitter): the annotated position
  itself (:meth:`position_of_layer.over` gives it).

Only released values move: the position reads the layer's built data.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from plotnine.geoms import geom_errorbar
from plotnine.positions import (
    position_dodge,
    position_dodge2,
    position_fill,
    position_stack,
)
from plotnine.positions.position import position

__all__ = ["geom_errorbar_of_layer", "position_of_layer"]

_ROW = "_noise_row"
#: the width a stat gave its marks (a histogram's bin width), kept for
#: the marks after the error bar took its own
_MARK_WIDTH = "_mark_width"


class geom_errorbar_of_layer(geom_errorbar):
    """An error bar ``interval_width`` wide, which keeps the width the
    stat gave the annotated marks (a bar's or a bin's ``width`` column)
    for :class:`position_of_layer`.

    Its width is a parameter of its own: ``width`` is also a parameter of
    count and bin stats, which must keep the annotated layer's value to
    make the same release and the same marks.
    """

    DEFAULT_PARAMS = {**geom_errorbar.DEFAULT_PARAMS, "interval_width": 0.5}

    def setup_data(self, data: pd.DataFrame) -> pd.DataFrame:
        kept = data["width"].to_numpy() if "width" in data else None
        data = data.drop(columns=[c for c in ("width",) if c in data])
        data["width"] = self.params["interval_width"]
        out = super().setup_data(data)
        if kept is not None:
            out[_MARK_WIDTH] = kept
        return out


def _kind(of: position) -> str:
    if isinstance(of, position_fill):
        return "fill"
    if isinstance(of, position_stack):
        return "stack"
    if isinstance(of, (position_dodge, position_dodge2)):
        return "dodge"
    return "other"


class position_of_layer(position):
    """Draw a layer's intervals where the annotated layer's marks are.

    Parameters
    ----------
    of
        The annotated layer's position object.
    geom
        The annotated layer's geom (its ``setup_data`` makes the marks'
        extents: a bar's ``xmin``/``xmax``, ``ymin`` 0).
    """

    def __init__(self, of: position, geom: Any):
        super().__init__()
        self.params = {"of": of, "geom": geom}

    @classmethod
    def over(cls, of: position, geom: Any) -> position:
        """The position for intervals over marks placed by ``of``: this
        one where ``of`` moves marks by their neighbours (stack, fill,
        dodge), else ``of`` itself (identity, nudge, jitter: an interval
        is moved as its mark is)."""
        return of if _kind(of) == "other" else cls(of, geom)

    def setup_params(self, data: pd.DataFrame) -> dict[str, Any]:
        # the annotated position's parameters from the whole layer's marks
        # (a dodge's number of places is the layer's, not a panel's)
        params = dict(self.params)
        if len(data) and "y" in data:
            of: position = params["of"]
            params["own"] = of.setup_params(_marks(data, params["geom"]))
        return params

    def setup_data(
        self, data: pd.DataFrame, params: dict[str, Any]
    ) -> pd.DataFrame:
        return data

    @classmethod
    def compute_panel(cls, data: pd.DataFrame, scales, params: dict[str, Any]):
        of: position = params["of"]
        if not len(data) or "y" not in data:
            return data
        marks = _marks(data, params["geom"])
        own = params["own"]
        placed = of.compute_panel(
            of.setup_data(marks.copy(), own), scales, own
        )
        # the intervals come out in the order the marks do
        order = placed[_ROW].to_numpy()
        placed = placed.set_index(_ROW).reindex(np.arange(len(data)))
        out = data.drop(columns=[c for c in (_MARK_WIDTH,) if c in data])
        if _kind(of) == "dodge":
            out = _dodged(out, marks.set_index(_ROW), placed)
        else:
            out = _stacked(out, placed, fill=_kind(of) == "fill")
        return out.iloc[order].reset_index(drop=True)


def _marks(data: pd.DataFrame, geom: Any) -> pd.DataFrame:
    """The annotated layer's marks for these cells, numbered by row."""
    # the interval's own x extents go; its ymin/ymax stand in for a box's
    # whiskers (a bar's are set from y by the bar's geom)
    marks = data.drop(
        columns=[c for c in ("xmin", "xmax") if c in data]
    ).assign(**{_ROW: np.arange(len(data))})
    if _MARK_WIDTH in marks:
        marks = marks.rename(columns={_MARK_WIDTH: "width"})
    return geom.setup_data(marks)


def _stacked(out: pd.DataFrame, placed: pd.DataFrame, fill: bool):
    value = out["y"].to_numpy(dtype=float)
    low = placed["ymin"].to_numpy(dtype=float)
    high = placed["ymax"].to_numpy(dtype=float)
    base = np.where(value < 0, high, low)
    if fill:
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(value != 0, (high - low) / np.abs(value), np.nan)
        # a mark of zero height takes its column's scale
        keys = [c for c in ("PANEL", "x") if c in out]
        scale = (
            pd.Series(scale, index=out.index)
            .groupby([out[k] for k in keys], observed=True, sort=False)
            .transform("max")
            .to_numpy()
        )
    else:
        scale = np.ones(len(out))
    for col in ("ymin", "ymax"):
        if col in out:
            moved = base + out[col].to_numpy(dtype=float) * scale
            out[col] = np.clip(moved, 0, 1) if fill else moved
    # the mark's drawn end, as the mark has it
    out["y"] = np.where(value < 0, low, high)
    return out


def _dodged(out: pd.DataFrame, marks: pd.DataFrame, placed: pd.DataFrame):
    if {"xmin", "xmax"} <= set(placed):
        centre = (placed["xmin"] + placed["xmax"]).to_numpy(dtype=float) / 2
        span = (placed["xmax"] - placed["xmin"]).to_numpy(dtype=float)
    else:
        # marks without extents (points, lines): dodged at their x
        centre = placed["x"].to_numpy(dtype=float)
        span = np.zeros(len(placed))
    own = (
        (out["xmax"] - out["xmin"]).to_numpy(dtype=float)
        if {"xmin", "xmax"} <= set(out)
        else span
    )
    if {"xmin", "xmax"} <= set(marks):
        # the interval's share of its mark's width before dodging
        undodged = (marks["xmax"] - marks["xmin"]).to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            width = span * np.where(undodged > 0, own / undodged, 1.0)
    else:
        # a mark without width: the interval keeps its own width, at
        # most the space between two dodged marks (no overlap)
        width = np.minimum(own, _dodged_step(out, centre))
    out["x"] = centre
    out["xmin"] = centre - width / 2
    out["xmax"] = centre + width / 2
    return out


def _dodged_step(out: pd.DataFrame, centre: np.ndarray) -> np.ndarray:
    """The least distance between two dodged marks of one panel (no
    limit where every place holds one mark)."""
    step = np.inf
    keys = out["PANEL"] if "PANEL" in out else pd.Series(0, index=out.index)
    for panel in pd.unique(keys):
        at = np.unique(centre[(keys == panel).to_numpy()])
        gaps = np.diff(at[np.isfinite(at)])
        if len(gaps) and gaps.min() > 0:
            step = min(step, float(gaps.min()))
    return np.full(len(out), step)
