"""Marks that are only noise, set apart: the rule, the ``signal``
variable and how a layer draws its noise marks (``noise_marks=``).

**The rule** (:func:`signal_marks`, one function for every family). A
mark is *noise* when its released interval cannot tell it from nothing,
read on released values and public parameters only:

* an **amount** (a count of a bar, bin, tile, hexagon or PCA tile, a
  total of ``summary_dp(fun="sum")``): its interval holds 0
  (``count_low`` is 0, ``n_low`` for ``stat_sum``, or ``y_low <= 0 <=
  y_high``);
* a **position** within public limits (a box's quartiles, a summary's
  mean, median or quantile): its widest interval spans more than
  :data:`~plotnine_private.stats.signal.BOX_SHARE` (a quarter) of the
  limits; an **ECDF curve**: it cannot place its median, that is the
  values of x where its band holds 1/2 span more than the same quarter
  of the public x grid it is drawn on (the median's interval of a box,
  read from the curve); or its released record count
  ``n`` is 0 (it places no record: an empty group's box under CKM,
  whose small noise leaves a narrow interval around nothing);
* a **density** curve (density, violin): its band holds 0 over
  :data:`~plotnine_private.stats.signal.ZERO_SHARE` (90%) or more of the
  curve.

Every other mark is *signal*. The rule is post-processing of released
values: free, and the same on any two data sets that give the same
released values (``tests/test_marks.py`` checks it on neighbours).

**The variable.** Every private stat adds ``signal`` (boolean, True for
signal) to its computed variables, so ``after_stat("signal")`` can be
mapped and ``pp.layer_data(p).query("~signal")`` lists the noise marks.

**The drawing** (``noise_marks=``, on every private stat): ``"fade"``
(default) draws noise marks with their alpha times :data:`FADE` (the
user's alpha, set or mapped, is kept and multiplied; outlines and lines
take the same alpha), ``"drop"`` leaves them out of the drawing (their
rows stay in the computed data) and ``"draw"`` draws them as any other.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.colors import to_hex, to_rgba

from .signal import BOX_SHARE, ZERO_SHARE

__all__ = [
    "FADE",
    "NOISE_MARKS",
    "draw_noise_marks",
    "mark_layer",
    "signal_marks",
    "validate_noise_marks",
]

#: the choices of ``noise_marks=``
NOISE_MARKS = ("fade", "drop", "draw")
#: a faded mark's alpha, as a multiple of the alpha it would have
FADE = 0.3


def validate_noise_marks(name: str, value: Any) -> str:
    """``noise_marks``: one of :data:`NOISE_MARKS`.

    >>> validate_noise_marks("stat_count_dp", "drop")
    'drop'
    """
    if not isinstance(value, str) or value not in NOISE_MARKS:
        from ..validation import fail

        raise fail(
            name,
            f"noise_marks must be one of 'fade', 'drop' or 'draw' (how "
            f"marks that are only noise are drawn), got {value!r}; e.g. "
            "noise_marks='drop' to leave them out.",
        )
    return value


def _limits(stat: Any) -> tuple[float, float]:
    """The public limits a position of the stat lies in."""
    ranged = getattr(stat, "interval_range", None)
    if callable(ranged):
        lo, hi = ranged()
    else:
        lo, hi = stat.params["bounds"]
    return float(lo), float(hi)


def _widest(out: pd.DataFrame, cols: tuple[str, ...]) -> np.ndarray:
    low = out[[f"{c}_low" for c in cols]].to_numpy(dtype=float)
    high = out[[f"{c}_high" for c in cols]].to_numpy(dtype=float)
    return np.max(high - low, axis=1)


def _per_curve(out: pd.DataFrame, values: np.ndarray, how: str):
    """A curve's value of ``values`` on each of its rows (a curve: the
    rows of one panel and group)."""
    keys = [c for c in ("PANEL", "group") if c in out.columns]
    if not keys:
        series = pd.Series(values)
        return np.full(len(out), getattr(series, how)())
    series = pd.Series(values, index=out.index)
    return series.groupby([out[k] for k in keys]).transform(how).to_numpy()


def _median_span(out: pd.DataFrame) -> np.ndarray:
    """Per ECDF curve (on each of its rows): the share of the layer's x
    grid (public: limits and fine bins) over which its band holds 1/2,
    where its median may lie; 1 where the band holds 1/2 beyond the
    limits (the median may lie outside them)."""
    x = out["x"].to_numpy(dtype=float)
    holds = (out["ecdf_low"].to_numpy(dtype=float) <= 0.5) & (
        out["ecdf_high"].to_numpy(dtype=float) >= 0.5
    )
    finite = np.isfinite(x)
    grid = np.ptp(x[finite]) if finite.any() else 0.0
    if grid <= 0:
        return np.where(_per_curve(out, holds.astype(float), "max") > 0, 1, 0)
    inside = holds & finite
    first = _per_curve(out, np.where(inside, x, np.inf), "min")
    last = _per_curve(out, np.where(inside, x, -np.inf), "max")
    span = np.where(last >= first, (last - first) / grid, 0.0)
    beyond = _per_curve(out, (holds & ~finite).astype(float), "max") > 0
    return np.where(beyond, 1.0, span)


def signal_marks(out: pd.DataFrame, stat: Any) -> np.ndarray:
    """The documented rule (module docstring): True where a mark is
    signal, False where it is only noise, from the layer's released
    values ``out`` and the stat's public parameters."""
    cols = out.columns
    n = len(out)
    if not n:
        return np.ones(0, dtype=bool)
    # a position of no record (released n of 0) places nothing
    held = (
        out["n"].fillna(1).to_numpy(dtype=float) > 0
        if "n" in cols
        else np.ones(n, dtype=bool)
    )
    if "middle_low" in cols:  # a box
        lo, hi = _limits(stat)
        widest = _widest(out, ("lower", "middle", "upper"))
        return held & (widest <= BOX_SHARE * (hi - lo))
    if "ecdf_low" in cols and "x" in cols:  # an ECDF curve, in [0, 1]
        return held & (_median_span(out) <= BOX_SHARE)
    if getattr(stat, "DENSITY_CURVES", False) and "density_low" in cols:
        zero = (out["density_low"].to_numpy(dtype=float) <= 0).astype(float)
        return _per_curve(out, zero, "mean") < ZERO_SHARE
    if "y_low" in cols:  # a summary: a total, or a position
        low = out["y_low"].to_numpy(dtype=float)
        high = out["y_high"].to_numpy(dtype=float)
        if stat.params.get("fun") == "sum":
            return ~((low <= 0) & (high >= 0))
        lo, hi = _limits(stat)
        return held & ((high - low) <= BOX_SHARE * (hi - lo))
    col = getattr(stat, "COUNT_COLUMN", "count")
    if f"{col}_low" in cols:  # an amount
        return out[f"{col}_low"].to_numpy(dtype=float) > 0
    return np.ones(n, dtype=bool)


def mark_layer(stat: Any, out: pd.DataFrame) -> pd.DataFrame:
    """Add ``signal`` to a layer's released rows (in place, and returned)
    and keep on its build how many marks are noise."""
    signal = signal_marks(out, stat)
    out["signal"] = signal
    build = getattr(stat, "build", None)
    if build is not None:
        how = stat.params.get("noise_marks", "fade")
        build.marks = (int((~signal).sum()), len(out), how)
    return out


def _faded(colour: Any, alpha: float) -> Any:
    """``colour`` with ``alpha`` times :data:`FADE` baked in (kept by
    plotnine's drawing, which adds no alpha to a colour that has one)."""
    if colour is None or (isinstance(colour, float) and np.isnan(colour)):
        return colour
    if isinstance(colour, str) and colour.lower() in ("none", ""):
        return colour
    r, g, b, a = to_rgba(colour)
    return to_hex((r, g, b, a * alpha * FADE), keep_alpha=True)


def draw_noise_marks(data: pd.DataFrame, how: str) -> None:
    """Draw a built layer's noise marks as ``how`` says (in place: it runs
    as the stat's ``finish_layer``, after the aesthetics are mapped and
    their defaults set, so a mapped or set alpha is multiplied, not
    replaced)."""
    if how == "draw" or "signal" not in data.columns or not len(data):
        return
    noise = ~data["signal"].astype(bool).to_numpy()
    if not noise.any():
        return
    if how == "drop":
        data.drop(index=data.index[noise], inplace=True)
        return
    alpha = np.ones(len(data))
    if "alpha" in data.columns:
        given = pd.to_numeric(data["alpha"], errors="coerce").to_numpy()
        alpha = np.where(np.isnan(given), 1.0, given)
        data["alpha"] = np.where(noise, alpha * FADE, alpha)
    for col in ("color", "colour"):
        if col in data.columns:
            values = data[col].to_numpy(dtype=object).copy()
            # each (colour, alpha) faded once: a curve's marks are its
            # hundreds of points, of a few colours
            faded: dict = {}
            for i in np.flatnonzero(noise):
                key = (values[i], float(alpha[i]))
                try:
                    hit = faded.get(key)
                except TypeError:  # an unhashable colour (a tuple list)
                    values[i] = _faded(*key)
                    continue
                if hit is None:
                    hit = faded[key] = (_faded(*key),)
                values[i] = hit[0]
            data[col] = values
