"""A plotnine layer subclass initialised the same way on every supported
plotnine (:func:`init_layer`): the budget layer and the self-check use
it."""

from __future__ import annotations

from typing import Any

from plotnine.layer import layer as _layer

__all__ = ["init_layer"]


def init_layer(obj: _layer, geom_obj: Any, **params: Any) -> None:
    """Initialise ``obj`` (an instance of a subclass of plotnine's layer)
    as the layer of ``geom_obj``, with layer ``params`` (``inherit_aes``,
    ``show_legend``). plotnine 0.15 takes the stat and position objects
    the geom made; 0.16 resolves them from the geom itself."""
    if hasattr(_layer, "from_geom"):  # plotnine 0.15
        _layer.__init__(
            obj,
            geom=geom_obj,
            stat=geom_obj._stat,
            mapping=geom_obj.mapping,
            data=geom_obj.data,
            position=geom_obj._position,
            **params,
        )
    else:
        _layer.__init__(obj, geom=geom_obj, **params)
