"""The whiskers' fence ranges one group at a time: the loop of
``plotnine_private.stats.whiskers.fence_ranges`` as it stood before the
groups were simulated together, kept as the reference the whole-array
code must equal bit for bit (tests/test_whisker_fences.py)."""

from __future__ import annotations

import numpy as np

from plotnine_private.stats.intervals import NoiseModel, cdf_deviations
from plotnine_private.stats.simulated_noise import tail_quantiles

# the grid, the nodes and the cells' reading are the module's own (one
# group at a time they were and are the same); the loop is the reference
from plotnine_private.stats.whiskers import (
    _corners,
    _edge_span,
    _extremes,
    _grid,
    _nodes,
    _weights,
)

Box = tuple[np.ndarray, np.ndarray]


def fence_ranges_by_group(
    edges: np.ndarray,
    noisy: np.ndarray,
    model: NoiseModel,
    level: float,
    coef: float,
    q1_box: Box,
    q3_box: Box,
) -> tuple[Box, Box]:
    """:func:`plotnine_private.stats.whiskers.fence_ranges`, one group
    at a time (each group's deviations at every edge, then its pairs)."""
    c = coef
    cuts = [(1 - level) / 2, (1 + level) / 2]
    out = np.empty((4, len(noisy)))
    for g, row in enumerate(np.asarray(noisy, dtype=float)):
        lo1, hi1, lo3, hi3 = (
            q1_box[0][g],
            q1_box[1][g],
            q3_box[0][g],
            q3_box[1][g],
        )
        i, j = _edge_span(edges, lo1, hi1), _edge_span(edges, lo3, hi3)
        # the noise quantiles at a few nodes among those edges (a pair of
        # nodes costs a partition of the simulations), the search on a grid
        # through every edge (where the estimate bends)
        ni, nj = _nodes(i), _nodes(j)
        runs = cdf_deviations(row, model).T  # (k + 1, sims)
        diff = runs[nj][None, :, :] - runs[ni][:, None, :]
        q_lo, q_hi = tail_quantiles(diff, cuts)  # (len(ni), len(nj))
        est = np.r_[0.0, np.cumsum(row)] / max(float(row.sum()), 1.0)
        xa, xb = _grid(edges[i]), _grid(edges[j])
        wa, wb = _weights(xa, edges[ni]), _weights(xb, edges[nj])
        mass = np.interp(xb, edges, est)[None, :]
        mass = mass - np.interp(xa, edges, est)[:, None] - 0.5
        kept = (_corners(mass - wa @ q_hi @ wb.T, np.minimum) <= 0) & (
            _corners(mass - wa @ q_lo @ wb.T, np.maximum) >= 0
        )
        # each cell clipped to the boxes (a cell outside them is not kept)
        a0, a1 = (
            np.maximum(xa[:-1], lo1)[:, None],
            np.minimum(xa[1:], hi1)[:, None],
        )
        b0, b1 = (
            np.maximum(xb[:-1], lo3)[None, :],
            np.minimum(xb[1:], hi3)[None, :],
        )
        kept &= (a0 <= a1) & (b0 <= b1)
        out[:2, g] = _extremes(
            kept,
            (1 + c) * b0 - c * a1,
            (1 + c) * b1 - c * a0,
            ((1 + c) * lo3 - c * hi1, (1 + c) * hi3 - c * lo1),
        )
        out[2:, g] = _extremes(
            kept,
            (1 + c) * a0 - c * b1,
            (1 + c) * a1 - c * b0,
            ((1 + c) * lo1 - c * hi3, (1 + c) * hi1 - c * lo3),
        )
    return (out[0], out[1]), (out[2], out[3])
