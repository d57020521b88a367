"""The plot-level privacy budget: ``plot + privacy_budget(eps, delta)``.

A budget is a layer that draws nothing; when plotnine prepares the geoms
(after every layer's statistic, so every release is known) it composes the
releases (:mod:`.composition`) and raises
:class:`~plotnine_private.exceptions.BudgetExceededError` before anything
is drawn if they cost more. ``(a | b) + privacy_budget(eps=1)`` caps a
whole composition (plotnine would add it to the last plot only): the
composition keeps the budget, and :func:`check_composition` checks it
before the composition is drawn.
"""

from __future__ import annotations

import math
import numbers
from copy import deepcopy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
from plotnine import geom_blank
from plotnine.composition import Compose
from plotnine.layer import Layers, layer

from .._compat import Built, init_layer
from ..exceptions import BudgetExceededError, PlotninePrivateError
from .composition import (
    Ledger,
    compose,
    exceeds,
    fmt,
    private_layers,
    shortfalls,
)
from .figures import built_figures, compose_figures

if TYPE_CHECKING:
    from collections.abc import Iterator

    from plotnine import ggplot

__all__ = [
    "PrivacyBudget",
    "add_to_composition",
    "budget_layer",
    "check_composition",
    "composition_budget",
    "privacy_budget",
    "set_composition_budget",
]


def _check_budget(eps: Any, delta: Any) -> tuple[float, float]:
    if (
        isinstance(eps, bool)
        or not isinstance(eps, numbers.Real)
        or not math.isfinite(eps)
        or eps <= 0
    ):
        raise PlotninePrivateError(
            f"privacy_budget(): eps must be a finite number > 0, got {eps!r}."
        )
    if (
        isinstance(delta, bool)
        or not isinstance(delta, numbers.Real)
        or not (0 <= float(delta) < 1)
    ):
        raise PlotninePrivateError(
            f"privacy_budget(): delta must be a number in [0, 1), got "
            f"{delta!r}; use 0 for pure eps-DP or a small value such as "
            "1e-6 when a layer thresholds cells from the data."
        )
    return float(eps), float(delta)


class _BudgetLayer(layer):
    """A layer that draws nothing and checks the plot's composed cost.

    plotnine builds every layer's statistic (``layers.compute_statistic``)
    before it prepares any layer's geom data (``layers.setup_data``), so
    the check in :meth:`setup_data` sees the releases of all layers, also
    those added after the budget, and runs before anything is drawn.
    """

    #: composition leaves it out (it releases nothing)
    is_budget = True

    def __init__(self, eps: float, delta: float):
        blank = geom_blank(data=pd.DataFrame())
        init_layer(self, blank, inherit_aes=False, show_legend=False)
        self.budget_eps = eps
        self.budget_delta = delta
        self.enforce = True

    def __deepcopy__(self, memo: dict[Any, Any]) -> _BudgetLayer:
        # the plot being built is a build-time reference, never copied
        plot = self.__dict__.pop("_plot", None)
        try:
            return super().__deepcopy__(memo)  # type: ignore[return-value]
        finally:
            if plot is not None:
                self._plot = plot

    def setup(self, plot: ggplot):
        super().setup(plot)
        self._plot = plot

    def setup_data(self):
        plot = self.__dict__.pop("_plot", None)
        if self.enforce and plot is not None:
            ledger = compose(private_layers(plot.layers))
            raise_if_exceeded(ledger, self.budget_eps, self.budget_delta)
        super().setup_data()


class _BudgetedLayers(Layers):
    """The layers of a plot with a budget: the budget layer stays last, so
    layers added later keep the indices a user expects (``layer_data(p,
    i)``) and the budget layer never shifts them."""

    def append(self, lyr):
        if (
            self
            and isinstance(self[-1], _BudgetLayer)
            and not isinstance(lyr, _BudgetLayer)
        ):
            self.insert(len(self) - 1, lyr)
        else:
            super().append(lyr)


@dataclass(frozen=True)
class PrivacyBudget:
    """The most a plot may spend; add it to a ggplot with ``+``.

    Made by :func:`privacy_budget`.
    """

    eps: float
    delta: float = 0.0

    def __post_init__(self):
        _check_budget(self.eps, self.delta)

    def check(self, figures: Any) -> None:
        """Raise :class:`~plotnine_private.exceptions.BudgetExceededError`
        if ``figures`` (a ggplot, a composition or a list of them, e.g.
        the figures of a report) compose to more than this budget; a
        release shared by several figures counts once.

        ``(a | b) + privacy_budget(eps=1)`` checks a composition when it
        is drawn; ``check`` does it for a list before anything is saved.
        """
        ledger = compose_figures(built_figures(figures, "privacy_budget"))
        raise_if_exceeded(ledger, self.eps, self.delta)

    def __radd__(self, plot: ggplot) -> ggplot:
        # ggplot.__add__ has already copied the plot; a later budget
        # replaces an earlier one
        plot.layers = _BudgetedLayers(
            lyr for lyr in plot.layers if not isinstance(lyr, _BudgetLayer)
        )
        plot.layers.append(_BudgetLayer(self.eps, self.delta))
        return plot


def privacy_budget(eps: float, delta: float = 0.0) -> PrivacyBudget:
    """A privacy budget for a whole plot.

    ``plot + privacy_budget(eps=1, delta=1e-6)`` (or ``(a | b) +
    privacy_budget(...)`` for a composition, whose plots are capped
    together) makes drawing, saving and notebook display fail with
    :class:`~plotnine_private.exceptions.BudgetExceededError` when the
    layers of the plot compose (see :func:`privacy_report`) to more than
    ``eps`` or more than ``delta``. CKM layers cost nothing (they have no
    formal guarantee).

    Parameters
    ----------
    eps
        Total eps, a finite number > 0.
    delta
        Total delta in [0, 1). The default 0 allows only pure eps-DP
        releases: a layer that thresholds cells observed in the data
        spends its ``delta`` too.

    Examples
    --------
    >>> b = privacy_budget(eps=1.5)
    >>> (b.eps, b.delta)
    (1.5, 0.0)
    """
    return PrivacyBudget(*_check_budget(eps, delta))


def budget_layer(plot: ggplot | Built) -> _BudgetLayer | None:
    found = [lyr for lyr in plot.layers if isinstance(lyr, _BudgetLayer)]
    return found[-1] if found else None


def raise_if_exceeded(ledger: Ledger, eps: float, delta: float) -> None:
    if not (
        exceeds(ledger.total_eps, eps) or exceeds(ledger.total_delta, delta)
    ):
        return
    spent = [
        f"layer {r['layer']} ({r['stat']}, {r['composition']}): "
        f"eps={fmt(r['charged_eps'])}, delta={fmt(r['charged_delta'])}"
        for r in ledger.rows
        if r["charged_eps"] or r["charged_delta"]
    ]
    short = shortfalls(
        (0.0, 0.0), (ledger.total_eps, ledger.total_delta), (eps, delta)
    )
    delta_short = any(x.startswith("delta") for x in short)
    eps_short = any(x.startswith("eps") for x in short)
    quantity = " and ".join(
        q for q, hit in (("eps", eps_short), ("delta", delta_short)) if hit
    )
    fixes = []
    if eps_short:
        fixes.append(
            "lower eps in the layers, or repeat an identical release "
            "(same seed and parameters) instead of a new one"
        )
    if delta_short:
        fixes.append(
            "declare the levels or breaks of a thresholded layer (it then "
            "spends no delta); a private PCA always spends delta"
        )
    fixes.append(
        f"or raise the budget: privacy_budget(eps="
        f"{fmt(max(eps, ledger.total_eps))}, delta="
        f"{fmt(max(delta, ledger.total_delta))})"
    )
    raise BudgetExceededError(
        f"privacy budget exceeded: the plot is short of {quantity}: "
        f"{'; '.join(short)}. The layers compose to "
        f"eps={fmt(ledger.total_eps)}, delta={fmt(ledger.total_delta)}; "
        f"spent by: {'; '.join(spent)}. To draw it: {'; '.join(fixes)}. "
        "Nothing was drawn."
    )


# -- the budget of a composition (a | b) + privacy_budget(...) ---------------
# where a composition keeps its budget (plotnine deep-copies __dict__)
_BUDGET = "_plotnine_private_budget"


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


def add_to_composition(cmp: Compose, rhs: Any) -> Any:
    """``cmp + rhs`` when ``rhs`` is a privacy budget (it caps the whole
    composition); NotImplemented for anything else (plotnine adds it to
    the last plot)."""
    if isinstance(rhs, PrivacyBudget):
        return set_composition_budget(cmp, rhs)
    return NotImplemented
