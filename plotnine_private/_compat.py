"""Every touch of plotnine's private API lives here (plotnine 0.15).

* :func:`layer_data` builds a deep copy of a plot (``ggplot._build``).
* :func:`install_hooks` puts the door of every private layer (see
  :mod:`plotnine_private.door`) into plotnine's build:

  - ``layer.compute_aesthetics``: right after the mapping is evaluated and
    the scales' transforms applied, a private layer's rows become released
    cells (``stat.release_at_door``); scale training, position mapping,
    facets, guides and geoms only ever see those;
  - ``Layers.transform`` skips layers released that way (their positions
    are transformed already);
  - ``Layout.setup`` lays out panels from the declared levels of the facet
    variables for private layers (their skeleton), never from their rows;
  - ``layer.__deepcopy__`` shares a layer's own data frame between copies,
    as plotnine shares the plot's data, so a data source keeps its object
    identity through plotnine's copies;
  - ``Compose.__add__`` keeps a ``privacy_budget`` for the whole
    composition (plotnine would add it to the last plot only), and
    ``Compose.draw`` (behind save, show and notebook display) checks it
    before anything is drawn.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from copy import deepcopy
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from plotnine.composition import Compose
from plotnine.facets.facet_null import facet_null
from plotnine.facets.layout import Layout
from plotnine.layer import Layers
from plotnine.layer import layer as _layer
from plotnine.mapping.aes import aes
from plotnine.mapping.evaluation import evaluate

from .cells import small_codes
from .door import facet_skeleton, is_private, make_door

if TYPE_CHECKING:
    from plotnine import ggplot

__all__ = ["build", "install_hooks", "layer_data"]


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


def _quiet():
    """Silence numpy and pandas on private rows: a warning such as
    "divide by zero in log10" would tell that some record is <= 0."""
    stack = contextlib.ExitStack()
    stack.enter_context(np.errstate(all="ignore"))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def _patch(owner, name: str, make) -> None:
    original = getattr(owner, name)
    if getattr(original, "_plotnine_private", False):
        return
    patched = functools.wraps(original)(make(original))
    patched._plotnine_private = True  # type: ignore[attr-defined]
    setattr(owner, name, patched)


def _evaluate_mapping(lyr, plot) -> None:
    """plotnine's ``layer.compute_aesthetics`` without its row-wise group
    ids and sort by panel: a private layer sets its groups from released
    cells, and its rows are never drawn."""
    evaled = evaluate(lyr.mapping._starting, lyr.data, plot.environment)
    evaled_aes = aes(**{str(col): col for col in evaled})
    plot.scales.add_defaults(evaled, evaled_aes)
    if not len(evaled.columns):
        # nothing mapped (the PCA stat reads unmapped columns): one row
        # per record all the same
        evaled = pd.DataFrame(index=lyr.data.index)
    if "PANEL" in lyr.data.columns and len(evaled) == len(lyr.data):
        evaled["PANEL"] = lyr.data["PANEL"]
    else:
        evaled["PANEL"] = 1
    lyr.data = evaled


def _compute_aesthetics(original):
    def compute_aesthetics(self, plot):
        from .engines.plot import compute_in_engine, engine_layer

        if engine_layer(plot, self):
            # a table in an engine: the layer aggregates there
            return compute_in_engine(self, plot)
        if not is_private(self):
            return original(self, plot)
        rows = self.data
        with _quiet():
            _evaluate_mapping(self, plot)
        door = make_door(plot, self, rows)
        with _quiet():
            # the scales' transforms (log10, sqrt, dates) are applied here,
            # on the rows, silently; plotnine's own pass skips this layer
            data = plot.scales.transform_df(self.data)
        self.data = self.stat.release_at_door(data, door)
        self._pnp_released = True

    return compute_aesthetics


def _transform(original):
    def transform(self, scales):
        for lyr in self:
            if not getattr(lyr, "_pnp_released", False):
                lyr.data = scales.transform_df(lyr.data)

    return transform


def _layout_setup(original):
    def setup(self, layers, plot):
        private = [is_private(lyr) for lyr in layers]
        facet = plot.facet
        if not any(private):
            return original(self, layers, plot)
        compute_layout = facet.compute_layout
        facet_vars = list(getattr(facet, "vars", None) or []) or [
            *(getattr(facet, "rows", None) or []),
            *(getattr(facet, "cols", None) or []),
        ]

        def public_layout(data):
            shown = [
                facet_skeleton(plot, lyr, d, facet_vars) if p else d
                for lyr, d, p in zip(layers, data, private)
            ]
            return compute_layout(shown)

        facet_map = facet.map
        flags = iter(private)

        def public_map(data, layout):
            # called once per layer, in order; a private layer's PANEL is
            # a categorical of small codes (plotnine's facet_null gives
            # every row an int64 1: 8 bytes a record)
            mine = next(flags, False)
            if mine and isinstance(facet, facet_null):
                data["PANEL"] = pd.Categorical.from_codes(
                    np.zeros(len(data), dtype=np.int8),
                    categories=layout["PANEL"].cat.categories,
                    ordered=True,
                )
                return data
            mapped = facet_map(data, layout)
            if mine and "PANEL" in mapped.columns:
                mapped["PANEL"] = _small_panel(mapped["PANEL"], layout)
            return mapped

        facet.compute_layout = public_layout
        facet.map = public_map
        try:
            with _quiet():
                return original(self, layers, plot)
        finally:
            del facet.compute_layout
            del facet.map

    return setup


def _small_panel(
    col: pd.Series, layout: pd.DataFrame
) -> pd.Series | pd.Categorical:
    """``PANEL`` as plotnine's ordered categorical of the layout's panels,
    with codes of one or two bytes."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col
    panels = layout["PANEL"]
    cats = (
        panels.cat.categories
        if isinstance(panels.dtype, pd.CategoricalDtype)
        else pd.Index(panels)
    )
    if len(cats) == 1 and (col.dtype.kind in "iu"):
        # one panel: every row's code is 0
        codes = np.zeros(len(col), dtype=np.int8)
        codes[col.to_numpy() != cats[0]] = -1
    else:
        # pandas-stubs want an Index; any array-like is accepted
        codes = small_codes(
            cats.get_indexer(col),  # type: ignore[arg-type]
            len(cats),
        )
    return pd.Categorical.from_codes(codes, categories=cats, ordered=True)


def _layer_deepcopy(original):
    def deepcopy_layer(self, memo):
        # a layer's own data frame is shared by copies of the layer, as
        # plotnine shares the plot's data: the frame is only read, and the
        # release engine tells sources apart by object identity
        own = self.__dict__.get("_data")
        if own is not None:
            memo[id(own)] = own
        return original(self, memo)

    return deepcopy_layer


def _compose_add(original):
    # plotnine adds anything to the last plot of a composition; a budget
    # belongs to the whole composition
    def __add__(self, rhs):
        from .report.budget import PrivacyBudget
        from .report.figures import set_composition_budget

        if isinstance(rhs, PrivacyBudget):
            return set_composition_budget(self, rhs)
        return original(self, rhs)

    return __add__


def _compose_draw(original):
    # draw, save, show and notebook display of a composition all draw:
    # check its budget (and nested ones) before anything is drawn
    def draw(self, *args, **kwargs):
        from .report.figures import check_composition

        check_composition(self)
        return original(self, *args, **kwargs)

    return draw


def install_hooks() -> None:
    """Install the hooks (idempotent): the door in
    ``layer.compute_aesthetics``, plotnine's transform pass skipping
    released layers, the public facet layout, shared layer data."""
    _patch(_layer, "compute_aesthetics", _compute_aesthetics)
    _patch(Layers, "transform", _transform)
    _patch(Layout, "setup", _layout_setup)
    _patch(_layer, "__deepcopy__", _layer_deepcopy)
    _patch(Compose, "__add__", _compose_add)
    _patch(Compose, "draw", _compose_draw)
