"""Several figures at once: plotnine compositions and lists of figures.

``a | b`` (side by side), ``a / b`` (stacked) and ``a - b`` make a
plotnine ``Compose``; a report is often a list of figures. Both are one
publication: their releases compose like the layers of one plot
(:mod:`.composition`), a release shared by two figures (same source,
query and seed) counts once, and ``(a | b) + privacy_budget(eps=1)`` caps
the whole composition (plotnine would add it to the last plot only).
"""

from __future__ import annotations

from copy import deepcopy
from typing import TYPE_CHECKING, Any

from plotnine import ggplot
from plotnine.composition import Compose

from .._compat import Built, build
from ..exceptions import PlotninePrivateError
from .budget import PrivacyBudget, raise_if_exceeded
from .composition import Ledger, compose, private_layers

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .presentation import PrivacyReport

__all__ = [
    "check_composition",
    "composition_budget",
    "figures",
    "layer_key",
    "set_composition_budget",
]

# where a composition keeps its budget (plotnine deep-copies __dict__)
_BUDGET = "_plotnine_private_budget"


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


def set_composition_budget(cmp: Compose, budget: PrivacyBudget) -> Compose:
    """``cmp + privacy_budget(...)``: a copy of the composition capped as
    a whole."""
    cmp = deepcopy(cmp)
    setattr(cmp, _BUDGET, budget)
    return cmp


def composition_budget(obj: Any) -> tuple[float, float] | None:
    """The budget added to a composition, as ``(eps, delta)``."""
    b = getattr(obj, _BUDGET, None)
    return None if b is None else (b.eps, b.delta)


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


def report_of_figures(
    built: list[Built], budget: tuple[float, float] | None
) -> PrivacyReport:
    """The report of several built plots."""
    from .presentation import PrivacyReport

    ledger = compose_figures(built)
    ledger.notes.append(
        f"{len(built)} plots composed: releases shared by plots (same "
        "source, query and seed) count once; the total is over all plots."
    )
    return PrivacyReport(ledger, budget)


def check_composition(cmp: Compose) -> None:
    """Raise ``BudgetExceededError`` before a composition is drawn if it,
    or a composition nested in it, has a budget its plots exceed."""
    for sub in _compositions(cmp):
        budget = composition_budget(sub)
        if budget is not None:
            ledger = compose_figures(built_figures(sub, "draw"))
            raise_if_exceeded(ledger, *budget)


def _compositions(cmp: Compose) -> Iterator[Compose]:
    yield cmp
    for item in cmp:
        if isinstance(item, Compose):
            yield from _compositions(item)


def check_budget(budget: PrivacyBudget, obj: Any) -> None:
    """:meth:`PrivacyBudget.check`: raise if ``obj`` composes to more."""
    ledger = compose_figures(built_figures(obj, "privacy_budget"))
    raise_if_exceeded(ledger, budget.eps, budget.delta)


def add_to_composition(cmp: Compose, rhs: Any) -> Any:
    """``cmp + rhs`` when ``rhs`` is a privacy budget (it caps the whole
    composition); NotImplemented for anything else (plotnine adds it to
    the last plot)."""
    if isinstance(rhs, PrivacyBudget):
        return set_composition_budget(cmp, rhs)
    return NotImplemented
