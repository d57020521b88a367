"""Intervals of curves that are linear in a fine histogram's counts
(density, ECDF) and of the quantiles and CDF bands read from it (summary
quantiles, box plots), from one simulation of the public noise.

The estimate's deviation from the truth is simulated with the released
counts standing for the true ones (:func:`linear_bands`); quantiles are
bounded by inverting a band of the CDF (:func:`cdf_bands`,
:func:`band_quantiles`). Several levels are taken from one simulation:
a box plot's quartiles and its Tukey whiskers read the CDF at two levels
(:mod:`~plotnine_private.stats.whiskers`). The noise models, the seed and
the simulation sizes are those of :mod:`~plotnine_private.stats.
intervals`.
"""

from __future__ import annotations

import functools

import numpy as np

from ..smoothing import quantiles
from .intervals import LINEAR_SIMS, SIM_SEED, NoiseModel, uniforms
from .simulated_noise import (
    product_through,
    run_quantiles,
    runs_last,
    tail_quantiles,
)

__all__ = [
    "CHUNK_CELLS",
    "band_quantiles",
    "cdf_band",
    "cdf_bands",
    "cdf_deviations",
    "linear_bands",
    "linear_bounds",
    "linear_draws",
]


def linear_bounds(
    design: np.ndarray,
    noisy: np.ndarray,
    model: NoiseModel,
    level: float,
    band: str = "pointwise",
    ratio: bool = True,
    sims: int = LINEAR_SIMS,
    seed: int = SIM_SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ``design @ true / total`` (``ratio``) or ``design @
    true`` from the unclipped released counts.

    ``design @ noisy`` is unbiased for ``design @ true``, and its noise
    ``design @ N`` has a public distribution. The estimate's deviation
    from the truth is simulated with the released counts standing for
    the true ones: ``(design @ (noisy + N)) / (total + sum N)`` minus the
    estimate, the numerator's and the total's noise *together* (one
    draw of ``N`` moves both), so no union bound widens the interval.
    The interval is ``estimate - quantile(deviation)`` at ``(1 - level)
    / 2`` and ``(1 + level) / 2`` per point, or simultaneous over each
    group's curve (``band="simultaneous"``: one multiple of each point's
    spread that holds the whole simulated curve in ``level`` of the
    draws). ``sims`` draws with the fixed public ``seed``.

    Parameters
    ----------
    design
        ``(points, bins)``: the curve's numerator as a linear map of the
        fine counts (kernel weights, running sums).
    noisy
        ``(groups, bins)`` released counts before clipping.

    Returns
    -------
    low, high
        ``(groups, points)``.
    """
    (bounds,) = linear_bands(
        design, noisy, model, (level,), band, ratio, sims, seed
    )
    return bounds


def linear_bands(
    design: np.ndarray,
    noisy: np.ndarray,
    model: NoiseModel,
    levels: tuple[float, ...],
    band: str = "pointwise",
    ratio: bool = True,
    sims: int = LINEAR_SIMS,
    seed: int = SIM_SEED,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`linear_bounds` at each of ``levels``, from one simulation:
    the deviations are drawn and laid out once and each level takes its
    quantiles from them (the same draws and order statistics, so each
    band is the one :func:`linear_bounds` gives at its level alone; a box
    plot's quartiles and its whiskers read the CDF at two levels)."""
    if not levels:
        return []
    k = noisy.shape[1]
    draws, draw_sums = linear_draws(model, sims, k, seed)
    # every fine bin noisy, CKM's too: a true 0 is released as 0, but a
    # released 0 may hide a true 1..D (a p-table moves small counts to
    # 0), so a released 0's bin is not noise-free
    shared = product_through(draws, design)
    alphas = [1 - level for level in levels]
    points = len(design)
    out = [
        (np.empty((len(noisy), points)), np.empty((len(noisy), points)))
        for _ in alphas
    ]
    # groups a chunk at a time, each chunk one array of (groups, sims,
    # points) simulated deviations: no Python loop per group (a legend of
    # 10**4 groups), and a few MB of temporaries
    step = max(1, CHUNK_CELLS // max(1, sims * max(points, k)))
    for start in range(0, len(noisy), step):
        rows = np.asarray(noisy[start : start + step], dtype=float)
        part = slice(start, start + len(rows))
        if band == "pointwise":
            bounds = _pointwise_bounds(
                rows, design, shared, draw_sums, alphas, ratio
            )
            _fill(out, part, bounds)
            continue
        sim = np.broadcast_to(shared, (len(rows), *shared.shape))
        tot_noise = np.broadcast_to(draw_sums, (len(rows), sims))
        num = rows @ design.T  # (groups, points)
        if ratio:
            total = np.maximum(rows.sum(axis=1), 1.0)
            est = num / total[:, None]
            # in place: the same operations without full-size temporaries
            dev = np.add(num[:, None, :], sim)
            dev /= np.maximum(total[:, None] + tot_noise, 1.0)[:, :, None]
            dev -= est[:, None, :]
        else:
            est, dev = num, sim
        _fill(out, part, _deviation_bounds(est, dev, alphas, band))
    return out


def _fill(out: list, part: slice, bounds: list) -> None:
    """Each level's ``(low, high)`` of a chunk of groups into ``out``."""
    for (low, high), (lo, hi) in zip(out, bounds):
        low[part], high[part] = lo, hi


def _pointwise_bounds(rows, design, shared, draw_sums, alphas, ratio):
    """:func:`linear_bands`' pointwise bands (one per ``1 - level`` of
    ``alphas``) when every group shares the simulated noise (DP): the
    same numbers as :func:`_deviation_bounds`,
    with the simulations laid out last from the start (no transposed copy
    of every group's deviations) and, for a plain sum (``ratio=False``),
    whose deviation is the shared noise itself, its quantiles taken once
    for all groups."""
    runs = runs_last(shared)  # (points, sims)
    num = rows @ design.T  # (groups, points)
    cuts = _cuts(alphas)
    if not ratio:
        q = run_quantiles(shared, runs, cuts)
        return [(num - q_hi, num - q_lo) for q_lo, q_hi in _pairs(q)]
    return _ratio_bounds(rows, num, runs, draw_sums, alphas)


def _ratio_bounds(rows, num, runs, draw_sums, alphas) -> list:
    """The pointwise bands of ``num / total`` from the simulated noise of
    the numerator, simulations last (``runs``: ``(points, sims)`` shared
    by every group, or ``(groups, points, sims)``), and of the total
    (``draw_sums``: ``(sims,)`` or ``(groups, sims)``)."""
    total = np.maximum(rows.sum(axis=1), 1.0)
    est = num / total[:, None]
    # element by element the deviation of the general path, in the layout
    # (groups, points, sims) that a partition reads fastest; in place, as
    # three full-size temporaries cost more than the arithmetic
    denom = np.maximum(total[:, None] + draw_sums, 1.0)  # (groups, sims)
    dev = np.add(num[:, :, None], runs)
    dev /= denom[:, None, :]
    # the quantiles of dev - est: est taken from its order statistics
    q = tail_quantiles(dev, _cuts(alphas), minus=est)
    return [(est - q_hi, est - q_lo) for q_lo, q_hi in _pairs(q)]


def _cuts(alphas: list[float]) -> list[float]:
    """The two tail cuts ``alpha / 2``, ``1 - alpha / 2`` of each band."""
    return [c for a in alphas for c in (a / 2, 1 - a / 2)]


def _pairs(q: np.ndarray) -> list:
    """Quantiles at :func:`_cuts` as one ``(low cut, high cut)`` pair a
    band."""
    return [(q[i], q[i + 1]) for i in range(0, len(q), 2)]


@functools.lru_cache(maxsize=2)
def linear_draws(
    model: NoiseModel, sims: int, k: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``(sims, k)`` public noise draws of :func:`linear_bounds` and
    their row sums, read-only.

    They depend on public parameters only, so every column of a curve
    (density and count) and every rebuild of the same plot (each draw of
    a figure builds it) share one simulation instead of drawing some
    ``2 * sims * k`` uniforms again; two entries of at most a few tens
    of MB."""
    u1, u2 = uniforms((sims, k), seed)
    draws = model.draw(u1, u2)
    sums = draws.sum(axis=1)
    draws.flags.writeable = False
    sums.flags.writeable = False
    return draws, sums


#: simulated values per chunk of groups in :func:`linear_bounds`
CHUNK_CELLS = 1 << 22


def _deviation_bounds(est, dev, alphas: list[float], band: str) -> list:
    """``est`` (``(groups, points)``) minus the quantiles of ``dev``
    (``(groups, sims, points)``) over the simulations, one band a ``1 -
    level`` of ``alphas``."""
    # the simulations made contiguous first: numpy partitions along the
    # last axis about a third faster, with the same order statistics
    runs = np.array(np.swapaxes(dev, 1, 2), order="C")  # a copy: reordered
    if band == "pointwise":
        q = tail_quantiles(runs, _cuts(alphas))
        return [(est - q_hi, est - q_lo) for q_lo, q_hi in _pairs(q)]
    # numpy's median, partitioning the copy in place (no second copy)
    centre = np.median(runs, axis=2, overwrite_input=True)
    spread = dev.std(axis=1)
    safe = np.where(spread > 0, spread, np.inf)
    # |dev - centre| / spread in one buffer: the same operations
    scaled = np.subtract(dev, centre[:, None, :])
    np.abs(scaled, out=scaled)
    scaled /= safe[:, None, :]
    worst = np.max(scaled, axis=2)
    out = []
    for alpha in alphas:
        mult = np.quantile(worst, 1 - alpha, axis=1)[:, None]
        out.append(
            (est - centre - mult * spread, est - centre + mult * spread)
        )
    return out


def cdf_band(
    noisy: np.ndarray,
    model: NoiseModel,
    level: float,
    sims: int = LINEAR_SIMS,
    seed: int = SIM_SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise band ``(groups, k + 1)`` of each group's CDF at the fine
    edges (running sums over the total), in [0, 1]."""
    (bounds,) = cdf_bands(noisy, model, (level,), sims, seed)
    return bounds


def cdf_bands(
    noisy: np.ndarray,
    model: NoiseModel,
    levels: tuple[float, ...],
    sims: int = LINEAR_SIMS,
    seed: int = SIM_SEED,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`cdf_band` at each of ``levels`` from one simulation of the
    deviations (:func:`linear_bands`): each band is the one
    :func:`cdf_band` gives at its level alone."""
    k = noisy.shape[1]
    sums = np.tril(np.ones((k + 1, k)), -1)
    bands = linear_bands(
        sums, noisy, model, tuple(levels), "pointwise", True, sims, seed
    )
    return [(np.clip(lo, 0, 1), np.clip(hi, 0, 1)) for lo, hi in bands]


def cdf_deviations(
    rows: np.ndarray,
    model: NoiseModel,
    at: np.ndarray,
    sims: int = LINEAR_SIMS,
    seed: int = SIM_SEED,
) -> np.ndarray:
    """``(groups, len(at[g]), sims)`` simulated deviations of each group's
    CDF estimate (the running sums of its ``k`` unclipped released counts,
    one row of ``rows`` a group, over their total) at its fine edges
    ``at[g]`` (``(groups, nodes)`` indices in ``0 .. k``), drawn as
    :func:`cdf_bands` draws them: a quantile of a difference of two edges'
    deviations (the mass between them) bounds that difference of the
    CDF.

    Every group reads the shared draws' running sums (the product
    :func:`cdf_bands` keeps), under CKM too: a true 0 is released as 0,
    but a released 0 may hide a true 1..D, so no column is noise-free."""
    rows = np.asarray(rows, dtype=float)
    at = np.asarray(at, dtype=np.int64)
    groups, k = rows.shape
    draws, sums = linear_draws(model, sims, k, seed)
    # every group reads the shared draws' running sums (the product
    # cdf_bands keeps), CKM's too: a released 0 may hide a small count
    runs = runs_last(product_through(draws, np.tril(np.ones((k + 1, k)), -1)))
    noise = runs[at]
    noise_sums = np.broadcast_to(sums, (groups, sims))
    running = np.zeros((groups, k + 1))
    np.cumsum(rows, axis=1, out=running[:, 1:])
    running = np.take_along_axis(running, at, axis=1)
    total = np.maximum(rows.sum(axis=1), 1.0)
    denom = np.maximum(total[:, None] + noise_sums, 1.0)
    dev = running[:, :, None] + noise
    dev /= denom[:, None, :]
    dev -= (running / total[:, None])[:, :, None]
    return dev


def band_quantiles(
    edges: np.ndarray,
    f_low: np.ndarray,
    f_high: np.ndarray,
    probs: np.ndarray,
    covers: str = "histogram",
) -> tuple[np.ndarray, np.ndarray]:
    """Intervals ``(groups, len(probs))`` of the quantiles ``probs`` of
    each group's fine histogram, by inverting its CDF band ``f_low <= F
    <= f_high`` at the fine edges (:func:`cdf_band`).

    The true ``p``-quantile ``Q`` has ``F(Q) = p``; it lies in ``[min x:
    F_high(x) >= p, max x: F_low(x) <= p]`` whenever the band holds at
    ``Q`` (each side fails with probability ``(1 - level) / 2``), with
    the band interpolated linearly within a fine bin as the quantiles
    are. The noise in the ranks (the running sums) and in the total both
    enter through the band.

    ``covers="data"``: the interval of every p-quantile of the records
    themselves (from the lowest, ``inf{x: F(x) >= p}``, to the highest,
    ``inf{x: F(x) > p}``; numpy's median lies between), not of the
    histogram's interpolated one. The records inside a fine bin may sit
    anywhere in it, so the bounds move out to the fine edges (by at most
    one fine bin each, a public width): the low end is the edge below
    the bin where the band's upper edge first reaches ``p``, the high
    end the first edge where its lower edge exceeds ``p``. Bins are
    closed on the right, so the running sum at an edge counts the
    records at or below it, ``F(edge)``; each end still rests on the
    band at one fixed edge (the last edge below the quantile, the first
    at or above it), so it fails with the same probability. The interval
    holds the histogram's (``covers="histogram"``) within it.

    >>> edges = np.array([0.0, 1, 2, 3])
    >>> band = np.array([[0.0, 0.4, 0.6, 1.0]])
    >>> [v.tolist() for v in band_quantiles(edges, band, band, [0.5])]
    [[[1.5]], [[1.5]]]
    >>> [v.tolist() for v in band_quantiles(
    ...     edges, band, band, [0.5], covers="data")]
    [[[1.0]], [[2.0]]]
    """
    probs = np.asarray(probs, dtype=float)
    if covers == "data":
        return _edge_quantiles(edges, f_low, f_high, probs)
    # first crossing of p by F_high (a running maximum keeps it monotone
    # and can only move the crossing left: wider)
    low = quantiles(np.maximum.accumulate(f_high, axis=1), edges, probs)
    # the last point where F_low <= p, through the mirror image: with a
    # running minimum from the right G = F_low is monotone, and
    # sup{x: G(x) <= p} = -inf{y: 1 - G(-y) >= 1 - p}
    rising = np.minimum.accumulate(f_low[:, ::-1], axis=1)
    high = -quantiles(1 - rising, -edges[::-1], 1 - probs)
    return low, high


def _edge_quantiles(
    edges: np.ndarray,
    f_low: np.ndarray,
    f_high: np.ndarray,
    probs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`band_quantiles` with ``covers="data"``: the fine edges
    around every p-quantile of the records (see there)."""
    k = len(edges) - 1
    rising_high = np.maximum.accumulate(f_high, axis=1)
    rising_low = np.minimum.accumulate(f_low[:, ::-1], axis=1)[:, ::-1]
    low = np.empty((len(f_low), len(probs)))
    high = np.empty_like(low)
    for i, p in enumerate(probs):
        # the first edge where the upper band reaches p closes the bin
        # that may hold the quantile: its low edge is the low end
        first = np.count_nonzero(rising_high < p, axis=1)
        low[:, i] = edges[np.clip(first - 1, 0, k)]
        # the first edge where the lower band exceeds p: every record at
        # or below it already makes up more than p
        above = np.count_nonzero(rising_low <= p, axis=1)
        high[:, i] = edges[np.clip(above, 0, k)]
    return low, high
