"""References of the box plot's intervals, kept plain for the whole-array
code to equal bit for bit (tests/test_whisker_fences.py,
tests/test_box_one_simulation.py): the whiskers' fence ranges with the noise
quantiles simulated one group at a time (``plotnine_private.stats.whiskers.
fence_ranges`` before the groups were simulated together), a CDF band
simulated on its own with ``np.quantile``, and the released fine counts
of a few data shapes to run them on."""

from __future__ import annotations

import numpy as np

from plotnine_private.stats.intervals import (
    LINEAR_SIMS,
    SIM_SEED,
    NoiseModel,
    uniforms,
)
from plotnine_private.stats.simulated_noise import tail_quantiles

# the spans, the nodes and the cells' reading are the module's own (one
# group at a time they were and are the same); the reference is the noise
# quantiles simulated one group at a time
from plotnine_private.stats.whiskers import _edge_span, _nodes, _read_cells

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
        runs = plain_deviations(row, model).T  # (k + 1, sims)
        diff = runs[nj][None, :, :] - runs[ni][:, None, :]
        q_lo, q_hi = tail_quantiles(diff, cuts)  # (len(ni), len(nj))
        out[:, g] = _read_cells(
            edges,
            row,
            coef,
            (lo1, hi1, lo3, hi3),
            (edges[i], edges[j]),
            (edges[ni], edges[nj]),
            (q_lo, q_hi),
        )
    return (out[0], out[1]), (out[2], out[3])


CKM = NoiseModel(
    "ckm",
    values=(-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0),
    probs=(0.05, 0.1, 0.15, 0.4, 0.15, 0.1, 0.05),
)
MODELS = {
    "discrete_laplace": NoiseModel("discrete_laplace", 2.0),
    "laplace": NoiseModel("laplace", 1.0),
    "ckm": CKM,
}
SHAPES = ("wide", "narrow", "mixed")


def histograms(shape: str, model: NoiseModel, rng) -> tuple:
    """Fine edges and released counts of a few data shapes: boxes whose
    quartile bounds span many fine bins (more than the nodes a side),
    few, or a mix with empty and one-record groups."""
    if shape == "wide":  # mpg-like: few records in many fine bins
        k, groups, records = 128, 7, 30
    elif shape == "narrow":  # many records: quartiles within few bins
        k, groups, records = 40, 12, 5000
    else:
        k, groups, records = 64, 30, 200
    edges = np.linspace(0.0, 50.0, k + 1)
    counts = np.zeros((groups, k))
    for g in range(groups):
        n = records if shape != "mixed" else int(rng.integers(0, records))
        centre, sd = rng.uniform(0.3, 0.7) * k, rng.uniform(1, k / 6)
        bins = np.clip(rng.normal(centre, sd, n).astype(int), 0, k - 1)
        counts[g] = np.bincount(bins, minlength=k)
    u1, u2 = rng.random((2, groups, k))
    noise = model.draw(np.maximum(u1, 1e-300), np.maximum(u2, 1e-300))
    if model.kind == "ckm":
        noise = noise * (counts != 0)  # a true 0 is released as 0
    noisy = counts + noise
    if shape == "mixed":
        noisy[0] = 0.0  # an empty group
        noisy[1] = 0.0
        noisy[1, k // 2] = 1.0  # one record
    return edges, noisy


def plain_deviations(row: np.ndarray, model: NoiseModel) -> np.ndarray:
    """``(sims, k + 1)`` deviations of one group's CDF estimate at every
    fine edge, written out: the public draws made afresh (every column
    noisy, a released 0's under CKM too: it may hide a small count),
    their running sums by a product with the lower-triangular design."""
    row = np.asarray(row, dtype=float)
    k = len(row)
    tril = np.tril(np.ones((k + 1, k)), -1)
    draws = model.draw(*uniforms((LINEAR_SIMS, k), SIM_SEED))
    total = max(float(row.sum()), 1.0)
    denom = np.maximum(total + draws.sum(axis=1), 1.0)[:, None]
    return (row @ tril.T + draws @ tril.T) / denom - row @ tril.T / total


def plain_cdf_band(
    noisy: np.ndarray, model: NoiseModel, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """The pointwise CDF band at ``level`` simulated for itself, group by
    group: the public draws made afresh, their running sums by a product
    with the lower-triangular design, every deviation written out and
    ``np.quantile`` over the draws."""
    k = noisy.shape[1]
    tril = np.tril(np.ones((k + 1, k)), -1)
    cuts = [(1 - level) / 2, (1 + level) / 2]
    low, high = np.empty((2, len(noisy), k + 1))
    for g, row in enumerate(np.asarray(noisy, dtype=float)):
        est = row @ tril.T / max(float(row.sum()), 1.0)
        dev = plain_deviations(row, model)
        q_lo, q_hi = np.quantile(dev, cuts, axis=0)
        low[g], high[g] = est - q_hi, est - q_lo
    return np.clip(low, 0, 1), np.clip(high, 0, 1)
