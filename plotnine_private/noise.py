"""Noise you can see: the interval of each private layer's noise.

:func:`noise_interval` reads the release records a build of the plot
produces (:class:`~plotnine_private.mechanisms.release.engine.Release`: the
mechanism, its scale, eps and delta) and, for CKM layers, the layer's
p-table. Those are public parameters: the interval never depends on the
data, only on how the noise is drawn.

* **Discrete Laplace** (``noise="discrete_laplace"``) of scale ``b``
  (sensitivity / eps), ``p = exp(-1/b)``: ``P(|N| <= k) = 1 - 2 p^(k+1) /
  (1 + p)``; the interval is the smallest ``[-k, k]`` holding at least
  ``level`` of the mass.
* **Laplace, rounded** (``noise="laplace"``): the noise of a count is
  ``round(L)``, ``P(|round(L)| <= k) = 1 - exp(-(k + 1/2) / b)``.
* **Cell Key Method**: the noise of a cell with count ``n`` is row
  ``min(n, max_i)`` of the p-table at a uniform cell key, so it depends on
  the cell's count. The interval given is the smallest symmetric one
  holding ``level`` of the mass of every row used by *large* cells
  (``n >= max_i``: the last row; ONS tables cycle through their last
  rows); smaller cells use their own rows, zero cells stay 0, and no cell
  moves by more than ``D``.
* **PCA score histogram**: discrete Gaussian noise (``method="add"``,
  the smallest ``[-k, k]`` of its pmf) or discrete Laplace noise on shown
  tiles (``"sparse"``) on each tile's count; the principal axes and the
  frame are private estimates too and are not covered.

The interval is for the noise of the unclipped noisy count
(``noisy_count - true count``); released counts are clipped at 0.
"""

from __future__ import annotations

import math
from copy import deepcopy
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._compat import Built, build
from .door import layer_build, layer_releases, marks_words
from .exceptions import PlotninePrivateError
from .noise_bounds import (
    _check_level,
    ckm_interval,
    count_noise_bounds,
    dgauss_interval,
    dlap_interval,
    large_cell_rows,
    pca_noise_bounds,
    rounded_laplace_interval,
)
from .stats.dp_pca_score import stat_dp_pca_score

if TYPE_CHECKING:
    from plotnine import ggplot


__all__ = [
    "NoiseIntervals",
    "ckm_interval",
    "dgauss_interval",
    "dlap_interval",
    "intervals_of_built",
    "noise_caption",
    "noise_interval",
    "rounded_laplace_interval",
]

COLUMNS = [
    "layer",
    "stat",
    "mechanism",
    "eps",
    "level",
    "low",
    "high",
    "coverage",
    "scale",
    "note",
    "hidden",
    "kept",
    "marks",
]


# --------------------------------------------------------------------------
# the plot
# --------------------------------------------------------------------------
def _short(stat) -> str:
    name = type(stat).__name__
    return name[5:] if name.startswith("stat_") else name


def _fmt(v: float) -> str:
    return f"{v:.3g}" if v != int(v) else str(int(v))


def _row(i, stat, r, level) -> dict:
    """A row of the table for release ``r`` of layer ``i``."""
    row = dict.fromkeys(COLUMNS)
    row.update(
        layer=i,
        stat=_short(stat),
        mechanism=r.mechanism,
        eps=r.eps,
        level=level,
    )
    return row


def _hidden_word(stat, n: int | None = None) -> str:
    """The word for hidden cells: "categories" or "cells" (singular
    for one)."""
    word = getattr(stat, "HIDDEN_WORD", "cells")
    if n == 1:
        return "category" if word == "categories" else word[:-1]
    return word


def _count_rows(i, lyr, releases, level, mapped) -> list[dict]:
    stat = lyr.stat
    rows = []
    ranges = [r for r in releases if r.family == "range" and r.formal]
    for r in releases:
        if r.family == "range":
            continue
        row = _row(i, stat, r, level)
        notes = []
        if r.mechanism in ("discrete_laplace", "laplace"):
            b = float(r.details["scale"])
            low, high, cov = count_noise_bounds(r, level)
            row.update(low=low, high=high, coverage=cov, scale=b)
            notes.append(
                f"{r.mechanism.replace('_', ' ')} of scale {b:.4g} "
                f"(sensitivity {_fmt(r.sensitivity)}, {r.adjacency}) on "
                "every released cell; counts are clipped at 0 after it"
            )
            if r.domain == "thresholded":
                tau = r.details.get("threshold")
                notes.append(
                    f"undeclared domain: cells below a noisy count of "
                    f"{tau:.4g} are hidden, so shown cells lean high"
                )
                # how many were hidden is not released (rule 13)
                row["hidden"] = (
                    f"{_hidden_word(stat)} with a noisy count below "
                    f"{tau:.3g} are hidden"
                )
            if ranges:
                spent = sum(x.eps for x in ranges)
                notes.append(
                    f"eps is what is left after a private range estimate "
                    f"(eps={_fmt(spent)})"
                )
        elif r.mechanism == "ckm" and "magnifier" in r.details:
            # a CKM summary's totals: their noise is not a count's (the
            # summary's y_low/y_high state it)
            continue
        elif r.mechanism == "ckm":
            ptable = stat.params["ptable"]
            if ptable is None:  # drawn from a CKM synopsis: its p-table
                ptable = getattr(layer_build(lyr), "ptable", None)
            if ptable.fingerprint != r.details.get("ptable_fingerprint"):
                raise PlotninePrivateError(  # pragma: no cover - guard
                    f"layer {i}: the release used another p-table than "
                    "the layer's ptable parameter."
                )
            rows_used = large_cell_rows(ptable)
            low, high, cov = count_noise_bounds(r, level, ptable)
            row.update(low=low, high=high, coverage=cov)
            top = ptable.max_i
            which = (
                f"p-table row {top}"
                if len(rows_used) == 1
                else f"p-table rows {rows_used[0]}-{rows_used[-1]}"
            )
            notes.append(
                f"CKM: for cells with count >= {top} ({which}); smaller "
                f"cells have their own rows, zero cells stay 0, no cell "
                f"moves by more than {_fmt(float(ptable.max_noise))}"
            )
            if "weight" in mapped:
                notes.append("weighted: times the cell's mean weight")
            if r.details.get("threshold") is not None:
                notes.append(
                    f"counts below {r.details['threshold']} are hidden"
                )
                built = layer_build(lyr)
                hidden = None if built is None else built.hidden_cells
                if hidden is not None:
                    # CKM is not DP: the number is stated, as for a table
                    row["hidden"] = (
                        f"{hidden} {_hidden_word(stat, hidden)} hidden: "
                        f"count below {_fmt(r.details['threshold'])}"
                    )
        else:  # pragma: no cover - every count mechanism is above
            continue
        row["note"] = "; ".join(notes)
        rows.append(row)
    return rows


def _pca_rows(i, lyr, releases, level) -> list[dict]:
    stat = lyr.stat
    hist = [r for r in releases if r.family.endswith("histogram")]
    rows = []
    for r in hist:
        row = _row(i, stat, r, level)
        tail = (
            "the principal axes and the frame are private estimates too "
            "and are not covered"
        )
        low, high, scale, cov = pca_noise_bounds(r, level)
        row.update(low=low, high=high, coverage=cov, scale=scale)
        if r.mechanism == "discrete_gaussian":
            note = (
                f"discrete Gaussian noise (sigma {scale:.4g}) on each "
                "tile's count before it is clipped and normalised to "
                f"prob; {tail}"
            )
        else:
            b = scale
            note = (
                f"discrete Laplace noise (scale {b:.4g}) on each non-empty "
                f"tile's count; tiles below {r.details['threshold']:.4g} "
                f"are hidden, so shown tiles lean high; {tail}"
            )
        if stat.params.get("output") == "synthetic":
            note += "; the points are sampled from the noisy histogram"
        row["note"] = note
        rows.append(row)
    return rows


class NoiseIntervals(pd.DataFrame):
    """The noise intervals of a plot's private layers: a DataFrame with
    columns ``layer, stat, mechanism, eps, level, low, high, coverage,
    scale, note, hidden`` (what a threshold hid, in words), ``kept``
    (the share of records a privacy unit's bound keeps), ``marks`` (how
    many of the layer's marks are within noise, in words) and
    :meth:`caption` for a plot caption."""

    _metadata: list[str] = []

    @property
    def _constructor(self):
        return NoiseIntervals

    def caption(self, layers: Any = None) -> str:
        """A short text for a plot caption, e.g. ``"noise: ±3 (95%) for
        count_dp eps=1"``; identical rows (a bar and its labels) once.
        Where some marks are only noise, a line per layer says how many
        (``"count_dp: 1 of 7 marks is within noise (drawn faded)"``).

        Parameters
        ----------
        layers
            Layer indices to describe (default: all rows).
        """
        rows = (
            self
            if layers is None
            else self[
                self["layer"].isin(
                    [layers] if np.ndim(layers) == 0 else list(layers)
                )
            ]
        )
        parts: list[str] = []
        hidden: list[str] = []
        kept: list[str] = []
        marks: list[str] = []
        for _, r in rows.iterrows():
            part = _caption_part(r)
            if part not in parts:
                parts.append(part)
            h = r.get("hidden")
            if isinstance(h, str) and h and h not in hidden:
                hidden.append(h)
            w = r.get("kept")
            if isinstance(w, str) and w and w not in kept:
                kept.append(w)
            m = r.get("marks")
            if isinstance(m, str) and m and m not in marks:
                marks.append(m)
        if not parts:
            return ""
        # the marks within noise on a line of their own (what the faded
        # marks of the picture are)
        return "\n".join(
            ["noise: " + "; ".join(parts + hidden + kept), *marks]
        )

    def __str__(self) -> str:  # the caption first, then the table
        if not set(self.columns) >= _CAPTION_COLUMNS:
            # a column subset (``intervals[["low", "high"]]``) is a table
            return super().__str__()
        return self.caption() + "\n" + super().__str__()


#: what a caption is written from (the table's columns but the last four)
_CAPTION_COLUMNS = set(COLUMNS[:7])


def _caption_part(r) -> str:
    low, high = float(r["low"]), float(r["high"])
    if math.isclose(-low, high):
        width = f"±{_fmt(round(high, 1) if high != int(high) else high)}"
    else:
        width = f"[{_fmt(low)}, +{_fmt(high)}]"
    level = f"{100 * float(r['level']):.3g}%"
    if r["mechanism"] == "ckm":
        return f"{width} ({level}, large cells) for {r['stat']}"
    return f"{width} ({level}) for {r['stat']} eps={_fmt(float(r['eps']))}"


def noise_interval(plot: Any, level: float = 0.95) -> NoiseIntervals:
    """The interval of each private layer's noise, from public parameters.

    ``plot`` may be a composition (``a | b``, ``a / b``) or a list of
    plots: the rows of every plot, layers named ``"0 of plot 2"``.

    Builds a copy of the plot (as :func:`privacy_report` does) and reads
    each private layer's release records: mechanism, scale, eps, delta and
    p-table. Nothing about the data enters the interval.

    Parameters
    ----------
    plot
        A ggplot with private layers (not modified).
    level
        Probability mass the interval holds, in (0, 1).

    Returns
    -------
    NoiseIntervals
        A DataFrame, one row per noisy release of a layer: ``low`` and
        ``high`` bound the noise added to a cell's count (``noisy_count -
        true count``) with probability ``coverage >= level`` (exact for
        the discrete mechanisms, which cannot hit ``level`` exactly);
        ``note`` says what it covers. ``.caption()`` gives a short text
        such as ``"noise: ±6 (95%) for count_dp eps=1"``.

    Examples
    --------
    >>> import plotnine_private as pp
    >>> from plotnine import ggplot, aes, geom_bar
    >>> from plotnine.data import mpg
    >>> p = ggplot(mpg, aes("cty")) + geom_bar(
    ...     stat="count_dp", eps=1, seed=1, levels=list(range(9, 36)))
    >>> print(pp.noise_interval(p).caption())
    noise: ±6 (95%) for count_dp eps=1
    count_dp: 15 of 27 marks are within noise (drawn faded)
    """
    from .ledger.store import suspended
    from .report.figures import built_figures, is_several

    level = _check_level(level)
    # the interval shows public parameters only: its builds charge nothing
    with suspended():
        if is_several(plot):
            return NoiseIntervals(
                pd.concat(
                    [
                        intervals_of_built(b, level, plot=p)
                        for p, b in enumerate(
                            built_figures(plot, "noise_interval")
                        )
                    ],
                    ignore_index=True,
                )
            )
        if not hasattr(plot, "layers"):
            built_figures(plot, "noise_interval")  # raises: names the type
        plot = deepcopy(plot)
        for lyr in plot.layers:
            if getattr(lyr, "is_budget", False):
                lyr.enforce = False  # the interval is not a release
        return intervals_of_built(build(plot), level)


def intervals_of_built(
    built: Built, level: float = 0.95, plot: int | None = None
) -> NoiseIntervals:
    """:func:`noise_interval` of a plot that has been built (``plot``: its
    index in a composition, which names its layers)."""
    from .report.figures import layer_key

    level = _check_level(level)
    rows: list[dict] = []
    for j, lyr in enumerate(built.layers):
        i: int | str = j if plot is None else layer_key(plot, j)
        releases = layer_releases(lyr)
        if not releases:
            continue
        mapped = {str(k) for k in lyr.mapping}
        if lyr.inherit_aes:
            mapped |= {str(k) for k in built.mapping}
        if isinstance(lyr.stat, stat_dp_pca_score):
            found = _pca_rows(i, lyr, releases, level)
        else:
            found = _count_rows(i, lyr, releases, level, mapped)
        built_layer = layer_build(lyr)
        kept = None if built_layer is None else built_layer.unit.kept()
        marks = marks_words(built_layer)
        for row in found:
            # the share of records the bound keeps, from the source's
            # released histogram of records per unit
            row["kept"] = None if kept is None else kept.words()
            # how many marks are only noise (stats/marks.py's rule)
            row["marks"] = f"{_short(lyr.stat)}: {marks}" if marks else None
        rows.extend(found)
    return NoiseIntervals(pd.DataFrame(rows, columns=COLUMNS))


def noise_caption(plot: ggplot, level: float = 0.95) -> str:
    """``noise_interval(plot, level).caption()``."""
    return noise_interval(plot, level).caption()
