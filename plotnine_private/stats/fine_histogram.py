"""The released fine histograms of a layer: :class:`FineHistogram`.

What a fine family (density, ECDF, box plot; :mod:`.fine`) releases and
turns into curves, and what the interval simulation
(:func:`~.intervals.replicate_curves`) makes noisy copies of. Its own
module so that both can import it (the family imports the intervals).
"""

from __future__ import annotations

import numpy as np

__all__ = ["FineHistogram"]


class FineHistogram:
    """The released fine histograms of a layer, one row per group.

    Attributes
    ----------
    edges
        ``(bins + 1,)`` fine-bin edges (in the scale's transformed units).
    values
        ``(groups, bins)`` released counts (clipped at 0; 0 where not
        shown).
    noisy
        ``(groups, bins)`` released counts before clipping (DP; equal to
        ``values`` for CKM; 0 where not shown).
    info
        One row per group: ``PANEL``, ``group`` and the group columns
        (fill, colour, x for boxplots ...).
    """

    def __init__(self, edges, values, noisy, info):
        self.edges = edges
        self.values = values
        self.noisy = noisy
        self.info = info

    @property
    def centres(self) -> np.ndarray:
        return (self.edges[:-1] + self.edges[1:]) / 2
