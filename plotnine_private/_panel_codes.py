"""A private layer's ``PANEL`` column in few bytes: plotnine's ordered
categorical of the layout's panels, with codes of one or two bytes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cells import small_codes


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
