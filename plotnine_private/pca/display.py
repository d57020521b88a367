"""Post-processing of a private PCA fit: its released cells as rows in
display coordinates, and synthetic points drawn from them.

Nothing here reads the data: the cells are the released histogram, the
point counts come from its released totals or a public number, and the
sampling stream is named by the released counts (:func:`~plotnine_private.
pca.fit.fit_pca`'s ``sample_key``). Split from :mod:`.fit`, which makes
the releases.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..cells import tile_frame
from ..mechanisms.pca.synthetic import allocate_group_sizes, sample_histogram
from .inputs import Partition

if TYPE_CHECKING:
    from .fit import PCAFit

__all__ = ["released_cells", "sample_rows", "sample_sizes", "shown_groups"]


# --------------------------------------------------------------------------
# the released cells as rows (post-processing)
# --------------------------------------------------------------------------
def shown_groups(fit: PCAFit, partition: Partition) -> np.ndarray:
    """Indices of the groups to show: every declared one; of groups seen
    in the data, those with a released cell in some panel."""
    ngroup = partition.shape[1]
    if partition.groups_declared:
        return np.arange(ngroup)
    return np.flatnonzero(fit.histogram.counts.sum(axis=(0, 2)) > 0)


def released_cells(fit: PCAFit, groups: np.ndarray) -> pd.DataFrame:
    """Every released cell of the shown ``groups`` as a row, in display
    coordinates: panel-major, then group, then cell (y-outer order).

    Columns ``xmin, xmax, ymin, ymax, x, y`` (cell centre), ``count``
    (released, clipped at 0), ``prob`` (count over its histogram's
    total), and the indices ``_panel``, ``_g`` of its histogram.
    """
    npanel = fit.histogram.counts.shape[0]
    grid, (ox, oy) = fit.grid, fit.offset
    m = grid.size
    pi = np.repeat(np.arange(npanel), len(groups) * m)
    gi = np.tile(np.repeat(groups, m), npanel)
    ci = np.tile(np.arange(m), npanel * len(groups))
    return tile_frame(
        grid.xmin[ci] - ox,
        grid.xmax[ci] - ox,
        grid.ymin[ci] - oy,
        grid.ymax[ci] - oy,
        count=fit.histogram.counts[pi, gi, ci],
        prob=fit.histogram.prob(axis=-1)[pi, gi, ci],
        _panel=pi,
        _g=gi,
    )


# --------------------------------------------------------------------------
# synthetic points (post-processing)
# --------------------------------------------------------------------------
def sample_sizes(totals: np.ndarray, n: int) -> np.ndarray:
    """Split a public number of points ``n`` over histograms in
    proportion to their released totals (largest remainder; clipped at
    0). No true size enters: ``n`` is public (a parameter, or the number
    of rows under replace-one adjacency) and the totals are released.

    >>> sample_sizes(np.array([1.0, -3.0, 3.0]), 8).tolist()
    [2, 0, 6]
    """
    totals = np.maximum(np.nan_to_num(np.asarray(totals, float)), 0.0)
    with warnings.catch_warnings():
        # a histogram without released mass gets no points: expected
        warnings.simplefilter("ignore", UserWarning)
        return allocate_group_sizes(int(n), list(totals.ravel())).reshape(
            totals.shape
        )


def sample_rows(
    cells: pd.DataFrame,
    size: int,
    method: str,
    adjust: float,
    key: bytes,
) -> tuple[np.ndarray, np.ndarray]:
    """``size`` synthetic points of one released histogram, given as rows
    ``xmin, xmax, ymin, ymax, prob`` (display coordinates)."""
    if size == 0:
        return np.empty(0), np.empty(0)
    return sample_histogram(
        cells["xmin"],
        cells["xmax"],
        cells["ymin"],
        cells["ymax"],
        cells["prob"],
        size,
        method,
        adjust,
        key=key,
    )
