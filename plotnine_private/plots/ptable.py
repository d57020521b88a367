"""Plot a CKM p-table: transition probabilities per original value."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    element_blank,
    element_rect,
    element_text,
    facet_wrap,
    geom_col,
    geom_text,
    ggplot,
    labs,
    scale_fill_manual,
    scale_x_continuous,
    scale_y_continuous,
    theme,
    theme_minimal,
)

if TYPE_CHECKING:
    from ..mechanisms.ptable import PTable

__all__ = ["plot_ptable"]

#: Rows shown at most; larger tables show the first rows and the last.
MAX_PANELS = 16
#: Magnitude tables are labelled in percent only up to this many
#: deviations (finer grids would print the labels on top of each other).
MAX_LABELLED_BARS = 21

_FILL = {
    "down": "#3b6fb6",
    "unchanged": "#7a7a7a",
    "up": "#d1495b",
}


def _panel_label(ptab: PTable, i: int) -> str:
    """Strip text of row ``i``: the last row serves all larger values."""
    if ptab.kind == "magnitudes":
        return f"ratio \u2265 {i}" if i == ptab.max_i else f"ratio = {i}"
    if i == ptab.max_i and ptab.key_kind == "uniform":
        return f"every count \u2265 {i}"
    return f"count = {i}"


def _shown_rows(rows: list) -> list:
    """At most MAX_PANELS rows: the first ones and the last."""
    if len(rows) > MAX_PANELS:
        return rows[: MAX_PANELS - 1] + rows[-1:]
    return rows


def _percent_labels(p: pd.Series) -> list[str]:
    """Bar labels in percent; bars below 1 % stay unlabelled."""
    pct = np.where(p >= 0.005, (p * 100).round(0), -1).astype(int)
    return [f"{x}%" if x >= 1 else "" for x in pct]


def _plot_frame(ptab: PTable) -> pd.DataFrame:
    # ONS tables list runs of keys: add them up per (i, v)
    tab = ptab.table.groupby(["i", "v"], as_index=False)["p"].sum()
    assert isinstance(tab, pd.DataFrame)
    rows = _shown_rows(sorted(tab["i"].unique()))
    tab = tab[tab["i"].isin(rows)].copy()
    labels = {i: _panel_label(ptab, i) for i in rows}
    tab["panel"] = pd.Categorical(
        tab["i"].map(labels), categories=[labels[i] for i in rows]
    )
    tab["direction"] = pd.Categorical(
        np.select([tab["v"] < 0, tab["v"] > 0], ["down", "up"], "unchanged"),
        categories=list(_FILL),
    )
    fine = ptab.kind == "magnitudes" and tab["v"].nunique() > MAX_LABELLED_BARS
    if not fine:
        tab["label"] = _percent_labels(tab["p"])
    else:
        tab["label"] = ""
    return tab


def _subtitle(ptab: PTable) -> str:
    params = ptab.params
    source = params.get("source")
    if source == "create_cnt_ptable":
        return (
            f"D = {params['D']}, V = {params['V']:g}, js = {params['js']}"
            + (f", pstay = {params['pstay']}" if params["pstay"] else "")
        )
    if source == "create_num_ptable":
        return (
            f"magnitudes: D = {params['D']}, V = {params['V']:g}, "
            f"step = {params['step']}, icat = {params['icat']}, "
            f"type = {params['type']}"
        )
    return (
        f"read from {params.get('format')} table ({ptab.kind}), "
        f"D = {ptab.max_noise}"
    )


def plot_ptable(ptab: PTable) -> ggplot:
    """Bar chart of the p-table: probability of each deviation ``v``.

    One panel per row ``i`` (for count tables the last panel applies to
    every larger count; for magnitude tables ``i`` is the ratio ``|x /
    x_delta|`` and values between rows interpolate); bars are coloured by
    direction and labelled in percent.

    Parameters
    ----------
    ptab : PTable
        A count or magnitude table from ``create_cnt_ptable``,
        ``create_num_ptable`` or ``read_ptable``.

    Returns
    -------
    plotnine.ggplot

    Examples
    --------
    >>> from plotnine_private.mechanisms.ptable import (
    ...     create_cnt_ptable, create_num_ptable)
    >>> p = plot_ptable(create_cnt_ptable(D=2, V=0.9))
    >>> type(p).__name__
    'ggplot'
    >>> p = plot_ptable(create_num_ptable(D=2, V=1, icat=[1, 2]))
    >>> sorted(p.data["panel"].unique())
    ['ratio = 0', 'ratio = 1', 'ratio \u2265 2']
    """
    tab = _plot_frame(ptab)
    d = int(max(np.ceil(ptab.max_noise), 1))
    step = 1 if d <= 5 else max(1, d // 4)
    gaps = np.diff(np.unique(tab["v"]))
    width = 0.8 * (float(gaps.min()) if len(gaps) else 1.0)
    ncol = int(min(4, max(1, np.ceil(np.sqrt(tab["panel"].nunique())))))
    nrow = int(np.ceil(tab["panel"].nunique() / ncol))
    xlab = (
        "deviation v (published count = count + v)"
        if ptab.kind == "counts"
        else "deviation factor v (noise = v \u00d7 x_delta)"
    )
    return (
        ggplot(tab, aes("v", "p", fill="direction"))
        + geom_col(width=width, show_legend=True)
        + geom_text(
            aes(label="label"),
            va="bottom",
            nudge_y=0.01,
            size=6.5,
            color="#333333",
        )
        + facet_wrap("panel", ncol=ncol)
        + scale_fill_manual(values=_FILL, drop=False, name="direction")
        + scale_x_continuous(breaks=list(range(-d, d + 1, step)))
        + scale_y_continuous(
            breaks=[0, 0.25, 0.5, 0.75, 1],
            labels=lambda bs: [f"{b:.0%}" for b in bs],
            expand=(0, 0, 0.2, 0),
        )
        + labs(
            x=xlab,
            y="probability",
            title="Cell Key Method p-table",
            subtitle=_subtitle(ptab),
        )
        + theme_minimal(base_size=10)
        + theme(
            figure_size=(8, 1.8 + 1.5 * nrow),
            panel_grid_minor=element_blank(),
            panel_grid_major_x=element_blank(),
            strip_background=element_rect(fill="#eeeeee", color="none"),
            strip_text=element_text(weight="bold"),
            legend_position="bottom",
            panel_spacing_y=0.04,
            plot_title=element_text(weight="bold"),
        )
    )
