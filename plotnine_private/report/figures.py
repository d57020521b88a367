"""Several figures at once: plotnine compositions and lists of figures.

``a | b`` (side by side), ``a / b`` (stacked) and ``a - b`` make a
plotnine ``Compose``; a report is often a list of figures. Both are one
publication: their releases compose like the layers of one plot
(:mod:`.composition`), a release shared by two figures (same source,
query and seed) counts once. This module finds, builds and composes the
figures; the budget of a composition is :mod:`.budget`'s, its report
:mod:`.presentation`'s (both import this module, never the reverse).
"""

from __future__ import annotations

from copy import deepcopy
from typing import TYPE_CHECKING, Any

from plotnine import ggplot
from plotnine.composition import Compose

from .._compat import Built, build
from ..exceptions import PlotninePrivateError
from .composition import Ledger, compose, private_layers

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "built_figures",
    "compose_figures",
    "figures",
    "is_several",
    "layer_key",
]


def _walk(obj: Any, fn: str) -> Iterator[ggplot]:
    if isinstance(obj, ggplot):
        yield obj
    elif isinstance(obj, (Compose, list, tuple)):
        for item in obj:
            yield from _walk(item, fn)
    else:
        raise PlotninePrivateError(
            f"{fn}(): expected a ggplot, a composition of plots (a | b, "
            f"a / b) or a list of them, got {type(obj).__name__}."
        )


def figures(obj: Any, fn: str) -> list[ggplot]:
    """The ggplots of ``obj`` in the order they are laid out.

    Parameters
    ----------
    obj
        A ggplot, a plotnine composition or a (nested) list of them.
    fn
        The public function asking, for the error message.
    """
    found = list(_walk(obj, fn))
    if not found:
        raise PlotninePrivateError(
            f"{fn}(): the composition or list holds no plot."
        )
    return found


def is_several(obj: Any) -> bool:
    """Whether ``obj`` is a composition or a list (not one ggplot)."""
    return isinstance(obj, (Compose, list, tuple))


def layer_key(plot: int, layer: int) -> str:
    """How a layer of a composition is named in reports and notes
    (plots counted from 1 in layout order, layers from 0 as in
    ``layer_data``)."""
    return f"{layer} of plot {plot + 1}"


def built_figures(obj: Any, fn: str) -> list[Built]:
    """Built copies of every plot of ``obj``, the plots' own budgets not
    enforced (a report or a check, not a drawing)."""
    built = []
    for plot in figures(obj, fn):
        plot = deepcopy(plot)
        for lyr in plot.layers:
            if getattr(lyr, "is_budget", False):
                lyr.enforce = False
        built.append(build(plot))
    return built


def compose_figures(built: list[Built]) -> Ledger:
    """Compose the releases of several built plots (shared ones once)."""
    layers = [
        (layer_key(p, i), lyr)
        for p, b in enumerate(built)
        for i, lyr in private_layers(b.layers)
    ]
    return compose(layers)
