"""The adapter's self-check: whether this plotnine still has every hook
of :mod:`plotnine_private._compat` in the shape used there (run by
``install_hooks`` at import)."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import pandas as pd
import plotnine
from plotnine.composition import Compose
from plotnine.facets.facet import facet
from plotnine.facets.layout import Layout
from plotnine.layer import Layers
from plotnine.layer import layer as _layer
from plotnine.mapping.aes import aes
from plotnine.mapping.evaluation import evaluate
from plotnine.scales.scale_continuous import scale_continuous

from .layer_init import init_layer
from .versions import PLOTNINE_VERSION, SUPPORTED, PlotnineAdapterError


def _takes(fn: Any, *names: str) -> bool:
    """Whether ``fn`` (unwrapped) takes these positional parameters."""
    fn = inspect.unwrap(fn)
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    return params[: len(names)] == list(names)


def _mapping_written() -> bool:
    return getattr(aes(x="a"), "_starting", None) == {"x": "a"}


def _layer_keeps_own_data() -> bool:
    from plotnine import geom_blank

    frame = pd.DataFrame()
    lyr = _layer.__new__(_layer)
    init_layer(lyr, geom_blank(data=frame))
    return lyr.__dict__.get("_data") is frame


_MINOR = ("self", "major", "limits")
#: (owner, name, owner's name, leading parameters) of the hooked methods
_SIGNATURES = [
    (_layer, "compute_aesthetics", "layer", ("self", "plot")),
    (_layer, "compute_statistic", "layer", ("self", "layout")),
    (Layers, "transform", "Layers", ("self", "scales")),
    (Layout, "setup", "Layout", ("self", "layers", "plot")),
    (facet, "compute_layout", "facet", ("self", "data")),
    (facet, "map", "facet", ("self", "data", "layout")),
    (scale_continuous, "get_minor_breaks", "scale_continuous", _MINOR),
    (Compose, "__add__", "Compose", ("self", "rhs")),
    (Compose, "draw", "Compose", ("self",)),
]

#: (hook, test): each test is true when plotnine has the hook in the
#: shape this module uses
CHECKS: list[tuple[str, Callable[[], bool]]] = [
    *(
        (
            f"{label}.{name}({', '.join(params)})",
            functools.partial(_takes, getattr(owner, name), *params),
        )
        for owner, name, label, params in _SIGNATURES
    ),
    ("layer.__deepcopy__(self, memo)", lambda: "__deepcopy__" in vars(_layer)),
    ("layer._data (a layer's own data=)", _layer_keeps_own_data),
    ("aes._starting (the mapping as written)", _mapping_written),
    ("ggplot._build()", lambda: hasattr(plotnine.ggplot, "_build")),
    (
        "plotnine.mapping.evaluation.evaluate(aesthetics, data, env)",
        lambda: _takes(evaluate, "aesthetics", "data", "env"),
    ),
    (
        "ggplot.environment (the mapping's namespace)",
        lambda: hasattr(plotnine.ggplot(), "environment"),
    ),
]


def self_check(checks: list[tuple[str, Callable[[], bool]]] | None = None):
    """Raise :class:`PlotnineAdapterError` naming plotnine's version and
    the first hook that no longer fits (``checks``: default
    :data:`CHECKS`)."""
    for hook, fits in CHECKS if checks is None else checks:
        try:
            ok = fits()
        except Exception:  # noqa: BLE001 - any failure means "no longer"
            ok = False
        if not ok:
            raise PlotnineAdapterError(
                f"plotnine_private supports plotnine {SUPPORTED}; with "
                f"plotnine {PLOTNINE_VERSION} the hook {hook} no longer "
                "fits. Install a supported plotnine (pip install "
                f"'plotnine{SUPPORTED}')."
            )
