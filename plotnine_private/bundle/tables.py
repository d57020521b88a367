"""The released table of a layer: its cells' identity (panel, facet
values, group, positions, category labels) and the values it released,
as a bundle writes them."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from plotnine.scales.scale_discrete import scale_discrete

from .._compat import Built, scale_transform
from ..door import LAYOUT_COLUMNS

__all__ = ["released_table"]

# columns that identify a cell, in the order written
_IDENTITY_1D = ["x", "xmin", "xmax", "width"]
_IDENTITY_2D = ["y", "ymin", "ymax", "height"]
# what a layer draws along y (a bar's ends, a point's y, interval ends)
_DRAWN = ["y", "ymin", "ymax"]
# what a private layer may never write (unclipped noise, raw values)
_FORBIDDEN = re.compile(r"noisy|raw|true|rkey|key_sum", re.IGNORECASE)


# --------------------------------------------------------------------------
# the released table of a layer
# --------------------------------------------------------------------------
def _level_columns(built: Built, data: pd.DataFrame) -> dict[str, list]:
    """Category labels of discrete aesthetics, recovered from the scales.

    The built layer data holds mapped values (positions 1, 2, ... for a
    discrete x, colours for fill); a checker wants the categories.
    """
    out: dict[str, list] = {}
    x = built.layout.panel_scales_x[0] if built.layout.panel_scales_x else None
    if isinstance(x, scale_discrete) and "x" in data.columns:
        limits = list(x.final_limits)
        pos = np.rint(data["x"].to_numpy(dtype=float)).astype(int) - 1
        ok = (pos >= 0) & (pos < len(limits))
        out["x_level"] = [
            limits[p] if good else None for p, good in zip(pos, ok)
        ]
    for sc in built.scales.non_position_scales():
        if not isinstance(sc, scale_discrete):
            continue
        limits = list(sc.final_limits)
        try:
            mapped = list(sc.map(pd.Series(limits, dtype=object)))
        except Exception:  # noqa: BLE001 - labels are a convenience
            continue
        if len(set(map(str, mapped))) != len(mapped):
            continue  # not invertible
        inverse = {str(m): lim for m, lim in zip(mapped, limits)}
        for ae in sc.aesthetics:
            if ae in data.columns:
                found = [inverse.get(str(v)) for v in data[ae].to_numpy()]
                if any(f is not None for f in found):
                    out[f"{ae}_level"] = found
    return out


def released_table(built: Built, i: int) -> pd.DataFrame:
    """The cells released by layer ``i`` of a built plot.

    Cell identity (panel, facet values, group, positions, category labels),
    where its marks are drawn (``y``, ``ymin``, ``ymax``: a stacked bar's
    ends, an error bar's interval ends) and the released values the stat
    creates (count, n, prop, density, prob ...); never ``noisy_*``
    columns.
    """
    lyr = built.layers[i]
    stat = lyr.stat
    data = lyr.data
    two_d = "y" in getattr(stat, "REQUIRED_AES", set()) or "ymin" in getattr(
        stat, "CREATES", set()
    )
    identity = _IDENTITY_1D + (_IDENTITY_2D if two_d else [])
    # where the marks are drawn: a stacked or filled bar's ends, a
    # point's or a curve's y, an error bar's or a ribbon's interval ends
    identity += [c for c in _DRAWN if c in data.columns and c not in identity]
    values = sorted(
        c
        for c in getattr(stat, "CREATES", set())
        if c in data.columns and c not in identity
    )
    table = pd.DataFrame(index=range(len(data)))
    if "PANEL" in data.columns:
        panel = data["PANEL"].reset_index(drop=True)
        table["PANEL"] = panel.astype(object).to_numpy()
        layout = built.layout.layout
        facets = [c for c in layout.columns if c not in LAYOUT_COLUMNS]
        if facets:
            lut = layout.set_index("PANEL")[facets]
            for c in facets:
                table[c] = lut[c].reindex(panel).astype(object).to_numpy()
    if "group" in data.columns:
        table["group"] = data["group"].to_numpy()
    levels = _level_columns(built, data)
    for c in identity:
        if c in data.columns:
            table[c] = data[c].to_numpy()
        if c == "x" and "x_level" in levels:
            table["x_level"] = levels.pop("x_level")
    for c, v in levels.items():
        table[c] = v
    for c in values:
        table[c] = data[c].to_numpy()
    _dates_as_text(built, table)
    return table[[c for c in table.columns if not _FORBIDDEN.search(c)]]


#: a date axis's position columns (a width or height stays a number of
#: the axis's units: days, or seconds for date-times)
_ON_AXIS = {"x": ("x", "xmin", "xmax"), "y": ("y", "ymin", "ymax")}


def _dates_as_text(built: Built, table: pd.DataFrame) -> None:
    """Positions on a date or date-time axis as ISO 8601 text, in the
    column's time zone (a naive column's as naive), not as the axis's
    numbers (days since 1970)."""
    for axis, columns in _ON_AXIS.items():
        scales = getattr(built.layout, f"panel_scales_{axis}", None) or []
        if not scales:
            continue
        scale = scales[0]
        kind = (scale_transform(scale) or ("",))[0]
        if kind not in ("datetime", "date"):
            continue
        naive = kind == "datetime" and _naive_column(built, axis)
        for c in columns:
            if c not in table.columns:
                continue
            values = np.asarray(table[c], dtype=float)
            finite = np.isfinite(values)
            text = np.full(len(values), None, dtype=object)
            if finite.any():
                moments = pd.Series(scale.inverse(values[finite]))
                if naive:
                    moments = pd.to_datetime(moments, utc=True)
                    moments = moments.dt.tz_localize(None)
                text[finite] = [m.isoformat() for m in moments]
            table[c] = text


def _naive_column(built: Built, axis: str) -> bool:
    """Whether the column mapped to ``axis`` holds naive date-times
    (plotnine reads them as UTC); a column it cannot find counts as
    zoned (its UTC offset is then written)."""
    mapped = built.plot.mapping.get(axis)
    data = built.plot.data
    if not isinstance(data, pd.DataFrame) or not isinstance(mapped, str):
        return False
    if mapped not in data.columns:
        return False
    dtype = data[mapped].dtype
    return (
        pd.api.types.is_datetime64_dtype(dtype)
        and getattr(dtype, "tz", None) is None
    )
