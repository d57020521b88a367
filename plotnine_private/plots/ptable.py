"""Plot a CKM p-table: transition probabilities per original count."""

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

_FILL = {
    "down": "#3b6fb6",
    "unchanged": "#7a7a7a",
    "up": "#d1495b",
}


def _plot_frame(ptab: PTable) -> pd.DataFrame:
    tab = ptab.table
    # ONS tables list runs of keys: add them up per (i, v)
    tab = tab.groupby(["i", "v"], as_index=False)["p"].sum()
    rows = sorted(tab["i"].unique())
    if len(rows) > MAX_PANELS:
        rows = rows[: MAX_PANELS - 1] + rows[-1:]
    tab = tab[tab["i"].isin(rows)].copy()
    last = ptab.max_i
    kind = "every count" if ptab.key_kind == "uniform" else "count"
    labels = {
        i: (
            f"{kind} \u2265 {i}"
            if i == last and kind == "every count"
            else f"count = {i}"
        )
        for i in rows
    }
    tab["panel"] = pd.Categorical(
        tab["i"].map(labels), categories=[labels[i] for i in rows]
    )
    tab["direction"] = pd.Categorical(
        np.select([tab["v"] < 0, tab["v"] > 0], ["down", "up"], "unchanged"),
        categories=list(_FILL),
    )
    tab["label"] = np.where(
        tab["p"] >= 0.005, (tab["p"] * 100).round(0).astype(int), -1
    )
    tab["label"] = [f"{x}%" if x >= 1 else "" for x in tab["label"]]
    return tab


def plot_ptable(ptab: PTable) -> ggplot:
    """Bar chart of the p-table: probability of each deviation ``v``.

    One panel per original count ``i`` (the last panel applies to every
    larger count); bars are coloured by direction and labelled in percent.

    Parameters
    ----------
    ptab : PTable
        A table from ``create_cnt_ptable`` or ``read_ptable``.

    Returns
    -------
    plotnine.ggplot

    Examples
    --------
    >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
    >>> p = plot_ptable(create_cnt_ptable(D=2, V=0.9))
    >>> type(p).__name__
    'ggplot'
    """
    tab = _plot_frame(ptab)
    params = ptab.params
    if params.get("source") == "create_cnt_ptable":
        sub = (
            f"D = {params['D']}, V = {params['V']:g}, js = {params['js']}"
            + (f", pstay = {params['pstay']}" if params["pstay"] else "")
        )
    else:
        sub = f"read from {params.get('format')} table, D = {ptab.max_noise}"
    d = int(max(ptab.max_noise, 1))
    step = 1 if d <= 5 else max(1, d // 4)
    ncol = int(min(4, max(1, np.ceil(np.sqrt(tab["panel"].nunique())))))
    nrow = int(np.ceil(tab["panel"].nunique() / ncol))
    return (
        ggplot(tab, aes("v", "p", fill="direction"))
        + geom_col(width=0.8, show_legend=True)
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
            x="deviation v (published count = count + v)",
            y="probability",
            title="Cell Key Method p-table",
            subtitle=sub,
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
