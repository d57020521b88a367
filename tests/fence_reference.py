"""The whiskers' fence ranges one group at a time: the loop of
``plotnine_private.stats.whiskers.fence_ranges`` as it stood before the
groups were simulated together, kept as the reference the whole-array
code must equal bit for bit (tests/test_whisker_fences.py)."""

from __future__ import annotations

import numpy as np

from plotnine_private.stats.intervals import NoiseModel, cdf_deviations
from plotnine_private.stats.simulated_noise import tail_quantiles

FENCE_STEPS = 8
_POINTS = 129
_NODES = 9

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
    """``(low, high)`` of the upper fence ``(1 + coef) q3 - coef q1`` and
    of the lower fence ``(1 + coef) q1 - coef q3`` of each group, over
    the pairs ``(a, b)`` of candidate quartiles within ``q1_box`` and
    ``q3_box`` that the mass between them does not reject.

    A pair is rejected when the estimated mass ``F(b) - F(a)`` is off 0.5
    by more than the central ``level`` of that estimate's simulated noise
    at ``a`` and ``b`` (at the true quartiles this fails with probability
    ``1 - level``). The noise quantiles are taken at pairs of fine edges
    (at most ``_NODES`` a side, evenly spaced, when a box spans more) and
    interpolated bilinearly between them, as the band is between edges.
    The pairs are searched on ``FENCE_STEPS`` steps per fine bin (fewer
    beyond ``_POINTS`` points a side); a cell of that grid is kept if some
    point of it may pass (the estimate is linear in each of ``a`` and
    ``b`` within a cell and the quantiles bilinear, so each side's
    extremes are at the cell's corners) and gives its most extreme fences
    within the boxes. Should no cell pass (the statements failed
    together), the boxes' corners stand.
    """
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


def _edge_span(edges: np.ndarray, low: float, high: float) -> np.ndarray:
    """Indices of the fine edges from the last at or below ``low`` to the
    first at or above ``high`` (two at least: one cell)."""
    k = len(edges) - 1
    first = int(np.clip(np.searchsorted(edges, low, "right") - 1, 0, k - 1))
    last = int(np.clip(np.searchsorted(edges, high, "left"), first + 1, k))
    return np.arange(first, last + 1)


def _nodes(span: np.ndarray) -> np.ndarray:
    """At most ``_NODES`` of the edge indices ``span``, evenly spaced,
    the first and the last among them."""
    step = -(-(len(span) - 1) // (_NODES - 1))
    return np.unique(np.r_[span[::step], span[-1]])


def _grid(at: np.ndarray) -> np.ndarray:
    """The edges ``at`` with equal steps between them: ``FENCE_STEPS`` a
    cell, fewer where the edges are many (at most ``_POINTS`` points)."""
    steps = max(1, min(FENCE_STEPS, (_POINTS - 1) // (len(at) - 1)))
    t = np.arange(steps) / steps
    inner = at[:-1, None] + t[None, :] * np.diff(at)[:, None]
    return np.r_[inner.ravel(), at[-1]]


def _weights(x: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """``(len(x), len(nodes))``: linear interpolation from the nodes."""
    return np.stack(
        [np.interp(x, nodes, unit) for unit in np.eye(len(nodes))], axis=1
    )


def _corners(values: np.ndarray, pick) -> np.ndarray:
    """``pick`` (``np.minimum``/``np.maximum``) of each grid cell's four
    corner values."""
    return pick(
        pick(values[:-1, :-1], values[1:, :-1]),
        pick(values[:-1, 1:], values[1:, 1:]),
    )


def _extremes(kept, lows, highs, corners) -> tuple[float, float]:
    """The smallest of ``lows`` and largest of ``highs`` over the kept
    cells, or ``corners`` if none is kept."""
    if not kept.any():
        return corners
    return float(lows[kept].min()), float(highs[kept].max())
