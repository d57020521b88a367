"""Layers on a :class:`~plotnine_private.engines.source.Source` in a
plot: the door of :mod:`plotnine_private._compat` for tables in an engine.

A private layer's mapping must name columns of the table (bare names):
the engine evaluates nothing but columns, public comparisons and integer
arithmetic. Anything else (a Python expression in ``aes``, a scale
transform, a stat that needs the rows, a non-private layer) is refused
before any query runs, with what to do instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
from plotnine.mapping.aes import aes
from plotnine.mapping.evaluation import evaluate

from .._compat import (
    keep_build,
    layer_mapping,
    layer_own_data,
    scale_transform,
)
from ..door import LayerBuild, _source_frame, is_private, make_door
from ..exceptions import PlotninePrivateError
from ..validation import fail
from .push import release_in_engine
from .source import is_source

if TYPE_CHECKING:
    from plotnine import ggplot
    from plotnine.layer import layer

__all__ = ["compute_in_engine", "engine_layer"]


def engine_layer(plot: ggplot, lyr: layer) -> bool:
    """Whether a layer's data are a table in an engine."""
    own = layer_own_data(lyr)
    if callable(own) and is_source(plot.data):
        raise PlotninePrivateError(
            "a layer's data= function cannot be applied to a table in an "
            "engine: filter or derive the table in the engine and give it "
            "as the layer's data=pp.source(...)."
        )
    return is_source(_source_frame(plot, lyr))


def _columns(name: str, mapping: dict, src) -> dict[str, str]:
    names = set(src.columns)
    cols = {}
    for ae, expr in mapping.items():
        if isinstance(expr, str) and expr in names:
            cols[str(ae)] = expr
            continue
        raise fail(
            name,
            f"aes({ae}={expr!r}) cannot be computed in the "
            f"{src.engine} engine: on a table in an engine a mapping "
            "names a column. Add the column in the engine (SQL "
            "'SELECT *, <expression> AS new', polars with_columns, "
            "Spark withColumn) and map it by name.",
        )
    return cols


def _no_transform(name: str, plot: ggplot, cols: dict) -> None:
    for ax in ("x", "y"):
        if ax not in cols:
            continue
        trans = scale_transform(plot.scales.get_scales(ax))
        if trans is not None:
            raise fail(
                name,
                f"the {ax} scale transforms positions "
                f"({trans[0]}); on a table in an engine, "
                "compute the transformed column in the engine and use a "
                "plain scale.",
            )


def compute_in_engine(lyr: layer, plot: ggplot) -> Any:
    """Release a private layer on a table in an engine (refuse anything
    else); sets the layer's data to the released cells."""
    src = _source_frame(plot, lyr)
    name = type(lyr.stat).__name__
    if not is_private(lyr):
        raise PlotninePrivateError(
            f"{type(lyr.geom).__name__} with {name}: a layer that is not "
            "private would need every row of the table in the "
            f"{src.engine} engine. Use a private stat (stat='count_dp', "
            "'bin_dp', ...) or collect a pandas frame for this layer."
        )
    cols = _columns(name, layer_mapping(lyr), src)
    evaled = evaluate(layer_mapping(lyr), lyr.data, plot.environment)
    plot.scales.add_defaults(evaled, aes(**{str(c): c for c in evaled}))
    evaled["PANEL"] = pd.Series([], dtype=int)
    _no_transform(name, plot, cols)
    build = LayerBuild(make_door(plot, lyr, None))
    lyr.data = release_in_engine(lyr.stat, cols, evaled, build, src)
    keep_build(lyr, build.done())
