"""Presentation: the privacy report of a plot as a table, text and HTML.

:func:`privacy_report` builds a copy of the plot and composes what its
layers released (:mod:`.composition`); :class:`PrivacyReport` shows it,
with the plot's budget (:mod:`.budget`) and what remains.
"""

from __future__ import annotations

import html
import math
import numbers
from copy import deepcopy
from typing import Any

import pandas as pd

from .._compat import Built, build
from .budget import budget_layer, composition_budget
from .composition import (
    COLUMNS,
    Ledger,
    compose,
    exceeds,
    fmt,
    private_layers,
)
from .figures import built_figures, compose_figures, is_several

__all__ = [
    "PrivacyReport",
    "plain",
    "privacy_report",
    "report_from_built",
    "report_of_figures",
]


class PrivacyReport:
    """What a plot releases and what it costs.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per release of a layer (panels of a facet partition are
        summarised in one row), one row per non-private layer, and a final
        ``"total"`` row. ``composition`` says which rule was applied;
        ``charged_eps`` / ``charged_delta`` are what the row adds to the
        total.
    total_eps, total_delta : float
        The composed cost of the plot.
    budget : tuple[float, float] or None
        The plot's :func:`privacy_budget`, if any.
    remaining_eps, remaining_delta : float or None
        Budget minus cost (negative when exceeded).
    notes : list[str]
        Things a person (and an output checker) should know.
    """

    def __init__(self, ledger: Ledger, budget: tuple[float, float] | None):
        self.total_eps = ledger.total_eps
        self.total_delta = ledger.total_delta
        self.budget = budget
        self.notes = list(ledger.notes)
        #: what one protected unit is, in one line
        self.unit_line = ledger.unit_line
        #: where DP and CKM release the same cells (empty: none)
        self.mixed = list(ledger.mixed)
        total = dict.fromkeys(COLUMNS)
        total.update(
            layer="total",
            composition="sequential over layers",
            charged_eps=self.total_eps,
            charged_delta=self.total_delta,
        )
        self.table = pd.DataFrame(
            [*ledger.rows, total], columns=COLUMNS, dtype=object
        )
        if budget is not None and self.exceeded:
            self.notes.append(
                f"the composed cost (eps={fmt(self.total_eps)}, "
                f"delta={fmt(self.total_delta)}) exceeds the budget "
                f"(eps={fmt(budget[0])}, delta={fmt(budget[1])}): "
                "drawing or saving this plot fails."
            )

    @property
    def remaining_eps(self) -> float | None:
        """The plot's eps budget minus the composed eps, or ``None``
        without a ``privacy_budget``."""
        return None if self.budget is None else self.budget[0] - self.total_eps

    @property
    def remaining_delta(self) -> float | None:
        """The plot's delta budget minus the composed delta, or ``None``
        without a ``privacy_budget``."""
        if self.budget is None:
            return None
        return self.budget[1] - self.total_delta

    @property
    def exceeded(self) -> bool:
        """Whether the composed cost exceeds the plot's budget (then
        drawing and saving raise ``BudgetExceededError``)."""
        if self.budget is None:
            return False
        return exceeds(self.total_eps, self.budget[0]) or exceeds(
            self.total_delta, self.budget[1]
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready content (written by ``save_release``)."""
        return {
            "releases": [
                {k: plain(v) for k, v in row.items()}
                for row in self.table.to_dict("records")
            ],
            "total_eps": self.total_eps,
            "total_delta": self.total_delta,
            "budget": (
                None
                if self.budget is None
                else {"eps": self.budget[0], "delta": self.budget[1]}
            ),
            "remaining": (
                None
                if self.budget is None
                else {"eps": self.remaining_eps, "delta": self.remaining_delta}
            ),
            "notes": list(self.notes),
            "headline": self.headline,
            "privacy_unit": self.unit_line,
            "mixed_protection": list(self.mixed),
        }

    def display_table(self) -> pd.DataFrame:
        """The table with words for what has no number."""
        shown = self.table.copy()
        for idx, row in shown.iterrows():
            if row["composition"] == "not protected":
                shown.loc[idx, ["eps", "charged_eps"]] = "not protected"
            elif row["mechanism"] == "ckm":
                shown.loc[idx, "eps"] = "no formal guarantee"
        return shown.map(lambda v: "" if v is None else fmt(v))

    @property
    def headline(self) -> str:
        """One line for the top of the report: the total, or, when DP and
        CKM release the same cells, that the DP guarantee does not hold."""
        total = f"eps={fmt(self.total_eps)}, delta={fmt(self.total_delta)}"
        if self.mixed:
            return (
                "NO DP GUARANTEE for cells also released by CKM ("
                + "; ".join(self.mixed)
                + f"); the DP layers alone would compose to {total}"
            )
        return f"DP total {total}"

    def _footer(self) -> list[str]:
        lines = [
            f"total: eps={fmt(self.total_eps)}, "
            f"delta={fmt(self.total_delta)} "
            "(sequential over layers; identical releases once)"
            + (
                "; NOT a DP guarantee for the cells CKM also releases"
                if self.mixed
                else ""
            )
        ]
        if self.budget is not None:
            lines.append(
                f"budget: eps={fmt(self.budget[0])}, "
                f"delta={fmt(self.budget[1])}; remaining: "
                f"eps={fmt(self.remaining_eps)}, "
                f"delta={fmt(self.remaining_delta)}"
                + (" -- EXCEEDED" if self.exceeded else "")
            )
        return lines

    def __str__(self) -> str:
        cols = [
            "layer",
            "stat",
            "mechanism",
            "eps",
            "delta",
            "domain",
            "cells",
            "panel",
            "composition",
            "charged_eps",
        ]
        text = self.display_table()[cols].to_string(index=False)
        lines = [
            "Privacy report",
            self.headline,
            self.unit_line,
            text,
            *self._footer(),
        ]
        if self.notes:
            lines.append("notes:")
            lines.extend(f"- {n}" for n in self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        parts = [
            "<div><strong>Privacy report</strong>",
            f"<p><strong>{html.escape(self.headline)}</strong></p>",
            f"<p>{html.escape(self.unit_line)}</p>",
            self.display_table().to_html(index=False),
        ]
        parts.extend(f"<p>{html.escape(x)}</p>" for x in self._footer())
        if self.notes:
            items = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
            parts.append(f"<ul>{items}</ul>")
        parts.append("</div>")
        return "".join(parts)


def plain(v: Any) -> Any:
    """A JSON-ready version of a table value."""
    if v is None or isinstance(v, (str, bool)):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        f = float(v)
        return f if math.isfinite(f) else None
    return str(v)


def report_from_built(built: Built) -> PrivacyReport:
    """The report of a plot that has been built (layers hold releases)."""
    bl = budget_layer(built)
    budget = None if bl is None else (bl.budget_eps, bl.budget_delta)
    ledger = compose(private_layers(built.layers))
    return PrivacyReport(ledger, budget)


def privacy_report(plot: Any) -> PrivacyReport:
    """Build a copy of ``plot`` and report what each layer releases.

    ``plot`` may also be a composition (``a | b``, ``a / b``) or a list of
    plots: their releases compose as one publication, a release shared by
    two plots counts once, and layers are named ``"0 of plot 2"``.

    The plot's budget, if any, is shown with what remains, but not
    enforced: the report of a plot over its budget says by how much.

    A layer without a seed is keyed by a secret drawn from OS entropy once
    per Python session, so within a session the report describes the same
    noise as the figure (another session draws other noise).

    Parameters
    ----------
    plot
        A ggplot object, a composition or a list of them (not modified).

    Returns
    -------
    PrivacyReport
        ``.table`` (one row per release, and a total), ``.total_eps``,
        ``.total_delta``, ``.notes``, ``.budget`` and
        ``.remaining_eps``; prints as a table.
    """
    if is_several(plot):
        built = built_figures(plot, "privacy_report")
        return report_of_figures(built, composition_budget(plot))
    if not hasattr(plot, "layers"):
        built_figures(plot, "privacy_report")  # raises: names the type
    plot = deepcopy(plot)
    for lyr in plot.layers:
        if getattr(lyr, "is_budget", False):
            lyr.enforce = False
    return report_from_built(build(plot))


def report_of_figures(
    built: list[Built], budget: tuple[float, float] | None
) -> PrivacyReport:
    """The report of several built plots."""
    ledger = compose_figures(built)
    ledger.notes.append(
        f"{len(built)} plots composed: releases shared by plots (same "
        "source, query and seed) count once; the total is over all plots."
    )
    return PrivacyReport(ledger, budget)
