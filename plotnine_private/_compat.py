"""Every touch of plotnine's private API lives here (plotnine 0.15).

* :func:`layer_data` builds a deep copy of a plot (``ggplot._build``).
* :func:`install_categorical_hook` wraps ``layer.compute_aesthetics`` so
  that a private stat learns the *declared* categories of its discrete
  aesthetics before the position scales map them to integers, and so that
  the discrete x scale shows exactly the declared categories (like ggplot2's
  ``drop=FALSE``): a declared level with no records must still be plotted,
  with noise, or its absence would show that it is empty.
"""

from __future__ import annotations

import functools
from copy import deepcopy
from typing import TYPE_CHECKING

import pandas as pd
from plotnine.layer import layer as _layer

if TYPE_CHECKING:
    from plotnine import ggplot

__all__ = ["build", "install_categorical_hook", "layer_data"]


def build(plot: ggplot) -> ggplot:
    """A built deep copy of ``plot`` (the original is left untouched)."""
    built = deepcopy(plot)
    built._build()
    return built


def layer_data(plot: ggplot, i: int = 0) -> pd.DataFrame:
    """The data of layer ``i`` after the plot is built: what it released.

    Parameters
    ----------
    plot
        A ggplot object; it is copied, not modified.
    i
        Index of the layer (0 is the first ``+ geom_...``).
    """
    built = build(plot)
    return built.layers[i].data


def _declared_levels(layer_obj, raw: pd.DataFrame) -> dict[str, list]:
    """Aesthetics mapped to a bare column that is a Categorical in the
    user's data: its categories were declared by the user. A Categorical
    made inside the mapping (``factor(x)``) takes its categories from the
    data, so it does not count."""
    out = {}
    for ae, expr in layer_obj.mapping._starting.items():
        if (
            isinstance(expr, str)
            and expr in raw.columns
            and isinstance(raw[expr].dtype, pd.CategoricalDtype)
        ):
            out[str(ae)] = list(raw[expr].cat.categories)
    return out


def install_categorical_hook() -> None:
    """Wrap ``layer.compute_aesthetics`` once (idempotent)."""
    original = _layer.compute_aesthetics
    if getattr(original, "_plotnine_private", False):
        return

    @functools.wraps(original)
    def compute_aesthetics(self, plot):
        raw = self.data
        original(self, plot)
        observe = getattr(self.stat, "observe_aesthetics", None)
        if observe is not None:
            declared = _declared_levels(self, raw)
            observe(declared, plot.scales, len(self.data))

    compute_aesthetics._plotnine_private = True  # type: ignore[attr-defined]
    _layer.compute_aesthetics = compute_aesthetics
