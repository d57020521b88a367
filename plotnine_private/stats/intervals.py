"""Interval variables of every private stat, from released values and the
public noise distribution only.

Two ways, one per kind of output:

* **Counts** (count, bin, bin2d, hex, sum families): the noise of a cell
  is known exactly (:func:`~plotnine_private.noise.count_noise_bounds`:
  ``P(low <= noisy - true <= high) >= level``), so the true count lies in
  ``[noisy - high, noisy - low]`` (cut at 0) with that probability:
  ``count_low``/``count_high``. ``density``, ``ncount``,
  ``ndensity`` get the same interval scaled like the column, with the
  group's released total held fixed (:func:`add_count_bounds`); the
  shares ``prop`` and ``prob`` get the interval of a share, in [0, 1]
  (:func:`share_bounds`).
* **Curves from a fine histogram** (density, ECDF, box plot): no closed
  form survives the post-processing (clipping, isotonic regression,
  kernel smoothing, quantiles), so the public noise is simulated
  through *the stat's own* post-processing (:func:`replicate_curves`),
  ``SIMS`` replicates with the fixed seed ``SIM_SEED``: a parametric
  bootstrap around the released histogram. The interval of a variable
  at a point is ``released - quantile(replicate - released)``, pointwise,
  or simultaneous over each curve (``band="simultaneous"``: one
  multiple of the pointwise spread that covers the whole curve in
  ``level`` of the replicates).
  Box plots' Tukey whiskers are bounded from the CDF band, the mass
  between the quartiles and the runs of bins that surely hold a record
  instead (:mod:`~plotnine_private.stats.whiskers`): a bootstrap around
  a released whisker inherits its outward bias.

Both are post-processing of released values: free, and the same on any
data that gives the same released values.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..smoothing import quantiles
from ..validation import fail, is_real
from .simulated_noise import (
    is_running_sums,
    product_through,
    run_quantiles,
    runs_last,
    tail_quantiles,
)

__all__ = [
    "BANDS",
    "CHUNK_CELLS",
    "LINEAR_SIMS",
    "NoiseModel",
    "SIMS",
    "SIM_SEED",
    "add_count_bounds",
    "band_quantiles",
    "cdf_band",
    "cdf_bands",
    "cdf_deviations",
    "count_noise_bounds",
    "curve_bounds",
    "linear_bands",
    "linear_bounds",
    "linear_draws",
    "quantile_bounds",
    "replicate_curves",
    "share_bounds",
    "validate_level",
]

#: simulation size of the curve intervals (and of planning)
SIMS = 400
#: simulation size of the intervals of linear curves (density, ECDF) and
#: of quantiles: a draw costs one matrix product, and the quantile of the
#: deviation is then within about 3% of its limit
LINEAR_SIMS = 2000
#: the fixed seed of those simulations (public: they use public noise)
SIM_SEED = 20_211
#: band options of the curve stats
BANDS = ("pointwise", "simultaneous")

#: count columns scaled like ``count`` for their intervals
SCALED = ("prop", "density", "ncount", "ndensity", "prob")
#: of those, the shares of their group's total (interval in [0, 1])
SHARES = ("prop", "prob")
#: of those, counts over the largest count (at most 1)
UNIT_RANGE = ("ncount", "ndensity")


def validate_level(name: str, level: Any) -> float:
    """``level`` in (0, 1): the probability the interval variables hold.

    >>> validate_level("stat_count_dp", 0.9)
    0.9
    """
    if not is_real(level) or not 0 < float(level) < 1:
        raise fail(
            name,
            f"level must be a number strictly between 0 and 1 (the "
            f"probability of the interval variables), got {level!r}; e.g. "
            "level=0.95.",
        )
    return float(level)


# --------------------------------------------------------------------------
# the noise, as public parameters
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class NoiseModel:
    """The count noise of a release, from public parameters: discrete
    Laplace or rounded Laplace of ``scale``, or the CKM noise of large
    cells (``values`` with ``probs``)."""

    kind: str
    scale: float = 0.0
    values: tuple = ()
    probs: tuple = ()

    @classmethod
    def of_release(cls, release, ptable=None) -> NoiseModel:
        """The model of a count release record (and the layer's p-table
        for CKM)."""
        if release.mechanism in ("discrete_laplace", "laplace"):
            return cls(release.mechanism, float(release.details["scale"]))
        from ..noise_bounds import large_cell_rows, row_distributions

        dists = row_distributions(ptable)
        rows = large_cell_rows(ptable)
        mix = pd.concat([dists[r] / len(rows) for r in rows])
        mix = mix.groupby(level=0).sum()
        return cls(
            "ckm",
            values=tuple(float(v) for v in mix.index),
            probs=tuple(float(v) for v in mix.to_numpy()),
        )

    def whole(self) -> bool:
        """Whether every draw is a whole number (discrete Laplace and the
        rounded Laplace are; CKM's when its p-table's noise values are):
        then any sum of draws is exact in floating point, whatever its
        order."""
        if self.kind != "ckm":
            return True
        return all(float(v).is_integer() for v in self.values)

    def draw(self, u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
        """Noise from two arrays of uniforms in (0, 1), monotone in the
        scale for fixed uniforms (so a search over eps sees a smooth
        accuracy). A simulation tool for public noise only, never a
        release sampler (rule 11 is about releases)."""
        if self.kind == "discrete_laplace":
            # a difference of two geometric variables, P(G >= k) = p^k
            b = self.scale
            return np.floor(-b * np.log(u1)) - np.floor(-b * np.log(u2))
        if self.kind == "laplace":
            return np.round(self.scale * (np.log(u2) - np.log(u1)))
        cdf = np.cumsum(self.probs)
        idx = np.searchsorted(cdf / cdf[-1], u1, side="right")
        return np.asarray(self.values)[np.minimum(idx, len(cdf) - 1)]


def uniforms(shape: tuple, seed: int = SIM_SEED):
    """Two fixed arrays of uniforms in (0, 1)."""
    rng = np.random.default_rng(seed)
    u = rng.random((2, *shape))
    return np.maximum(u[0], 1e-300), np.maximum(u[1], 1e-300)


# --------------------------------------------------------------------------
# counts: exact
# --------------------------------------------------------------------------
def count_noise_bounds(release, level: float, ptable=None):
    """:func:`plotnine_private.noise.count_noise_bounds` (imported when
    called: ``noise`` reads the stats it describes)."""
    from ..noise_bounds import count_noise_bounds as bounds

    return bounds(release, level, ptable)


def pca_noise_bounds(release, level: float):
    """:func:`plotnine_private.noise.pca_noise_bounds`, imported when
    called."""
    from ..noise_bounds import pca_noise_bounds as bounds

    return bounds(release, level)


def add_count_bounds(
    frame: pd.DataFrame,
    noise: tuple[float, float],
    zero_stays: bool = False,
    group: str = "group",
    column: str = "count",
) -> None:
    """``count_low``/``count_high`` (and of the scaled count columns) of
    a count layer's rows, in place (see the module docstring).

    Parameters
    ----------
    frame
        The layer's rows with ``count`` (and ``noisy_count`` if DP).
    noise
        ``(low, high)`` of the noise ``noisy - true`` at the level.
    zero_stays
        A released 0 is a true 0 (CKM).
    group
        The column whose rows share a total.
    column
        The released count (``count``; ``n`` for ``stat_sum``), with its
        unclipped twin ``noisy_<column>`` when DP.
    """
    n_low, n_high = noise
    count = frame[column].to_numpy(dtype=float)
    noisy = f"noisy_{column}"
    base = (
        frame[noisy].to_numpy(dtype=float) if noisy in frame.columns else count
    )
    base = np.where(np.isfinite(base), base, count)
    c_low = np.maximum(base - n_high, 0.0)
    c_high = np.maximum(base - n_low, 0.0)
    if zero_stays:
        c_low = np.where(count == 0, 0.0, c_low)
        c_high = np.where(count == 0, 0.0, c_high)
    frame[f"{column}_low"] = c_low
    frame[f"{column}_high"] = c_high
    keys = [k for k in ("PANEL", group) if k in frame.columns]
    gid = (
        frame.groupby(keys, observed=True, sort=False).ngroup().to_numpy()
        if keys
        else None
    )
    for col in SCALED:
        if col not in frame.columns:
            continue
        if col in SHARES:
            low, high = share_bounds(count, c_low, c_high, gid)
        else:
            unit = _unit(frame[col].to_numpy(dtype=float), count, gid)
            low, high = c_low * unit, c_high * unit
            if col in UNIT_RANGE:
                # a count over the largest count is at most 1
                low, high = np.minimum(low, 1.0), np.minimum(high, 1.0)
        frame[f"{col}_low"] = low
        frame[f"{col}_high"] = high


def share_bounds(
    count: np.ndarray, c_low: np.ndarray, c_high: np.ndarray, group
) -> tuple[np.ndarray, np.ndarray]:
    """Interval of each cell's share ``count / group total`` from its
    count interval, the other cells of its group held at their released
    counts ``rest``: ``[c_low / (c_low + rest), c_high / (c_high +
    rest)]``. It stays in [0, 1], and a group with one cell (``rest =
    0``) gets [1, 1] once its count is surely above 0: its share is 1
    whatever the noise.

    >>> [v.tolist() for v in share_bounds(
    ...     np.array([5.0, 15.0, 7.0]), np.array([1.0, 11.0, 3.0]),
    ...     np.array([9.0, 19.0, 11.0]), np.array([0, 0, 1]))]
    [[0.0625, 0.6875, 1.0], [0.375, 0.7916666666666666, 1.0]]
    """
    if group is None:
        group = np.zeros(len(count))
    total = pd.Series(np.abs(count)).groupby(group).transform("sum")
    rest = np.maximum(total.to_numpy(dtype=float) - np.abs(count), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(c_low > 0, c_low / (c_low + rest), 0.0)
        high = np.where(c_high > 0, c_high / (c_high + rest), 0.0)
    return low, high


def _unit(values: np.ndarray, count: np.ndarray, group) -> np.ndarray:
    """``values / count`` per row; where the count is 0 the group's
    median ratio (``prop``, ``ncount``: the same in a group; ``density``:
    one over the bin area times the total)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(count != 0, values / count, np.nan)
    if group is None:
        group = np.zeros(len(values))
    s = pd.Series(ratio)
    fill = s.groupby(group).transform("median").to_numpy()
    return np.nan_to_num(np.where(np.isfinite(ratio), ratio, fill))


# --------------------------------------------------------------------------
# curves: simulated through the stat's own post-processing
# --------------------------------------------------------------------------
def replicate_curves(
    stat, hist, model: NoiseModel, sims: int = SIMS, seed: int = SIM_SEED
) -> pd.DataFrame:
    """The stat's curve of ``sims`` noisy copies of each group's histogram.

    Each copy adds public noise (``model``) to the group's released
    counts before clipping (``hist.noisy``), clips as the release does and
    calls ``stat.curve``. Rows are ordered group by group, replicate by
    replicate; ``_group`` and ``_sim`` say which.
    """
    from .fine import FineHistogram

    groups, k = hist.noisy.shape
    u1, u2 = uniforms((groups, sims, k), seed)
    noisy = hist.noisy[:, None, :] + model.draw(u1, u2)
    noisy = noisy.reshape(groups * sims, k)
    values = np.maximum(noisy, 0.0)
    info = pd.DataFrame(
        {
            "_group": np.repeat(np.arange(groups), sims),
            "_sim": np.tile(np.arange(sims), groups),
        }
    )
    return stat.curve(FineHistogram(hist.edges, values, noisy, info))


def curve_bounds(
    released: np.ndarray,
    replicates: np.ndarray,
    level: float,
    band: str = "pointwise",
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of a released curve from replicates of it.

    Parameters
    ----------
    released
        ``(groups, points)`` the released curve of each group.
    replicates
        ``(groups, sims, points)`` the curves of noisy copies.
    level
        Probability of the interval.
    band
        ``"pointwise"`` (each point alone) or ``"simultaneous"`` (the
        whole curve of a group at once).

    Returns
    -------
    low, high
        ``(groups, points)``: ``released - q_hi``, ``released - q_lo``
        with ``q`` quantiles of ``replicate - released`` (the basic
        bootstrap interval).
    """
    dev = replicates - released[:, None, :]
    alpha = 1 - level
    if band == "pointwise":
        q_lo = np.quantile(dev, alpha / 2, axis=1)
        q_hi = np.quantile(dev, 1 - alpha / 2, axis=1)
        return released - q_hi, released - q_lo
    spread = dev.std(axis=1)
    safe = np.where(spread > 0, spread, np.inf)
    worst = np.max(np.abs(dev) / safe[:, None, :], axis=2)
    mult = np.quantile(worst, level, axis=1)[:, None]
    return released - mult * spread, released + mult * spread


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
    shared = None if model.kind == "ckm" else product_through(draws, design)
    # CKM's CDF band: each group's running sums of its masked draws by a
    # cumulative sum, laid out as the shared path lays them (the same
    # numbers as the product: whole numbers are exact in floating point)
    masked_runs = (
        shared is None
        and band == "pointwise"
        and ratio
        and model.whole()
        and is_running_sums(design, k)
    )
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
        if shared is not None and band == "pointwise":
            bounds = _pointwise_bounds(
                rows, design, shared, draw_sums, alphas, ratio
            )
            _fill(out, part, bounds)
            continue
        if masked_runs:
            runs, noise_sums = _masked_runs(draws, rows)
            num = rows @ design.T
            bounds = _ratio_bounds(rows, num, runs, noise_sums, alphas)
            _fill(out, part, bounds)
            continue
        if shared is None:
            # CKM leaves a released 0 at 0: no noise there
            masked = draws[None, :, :] * (rows != 0)[:, None, :]
            sim = masked @ design.T
            tot_noise = masked.sum(axis=2)
        else:
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
    dev -= est[:, :, None]
    q = tail_quantiles(dev, _cuts(alphas))
    return [(est - q_hi, est - q_lo) for q_lo, q_hi in _pairs(q)]


def _masked_runs(
    draws: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """CKM's simulated noise of each group: the draws with a released 0's
    column at 0 (no noise there), their running sums ``(groups, k + 1,
    sims)`` and totals ``(groups, sims)``."""
    masked = draws.T[None, :, :] * (rows != 0)[:, :, None]
    runs = np.zeros((len(rows), draws.shape[1] + 1, len(draws)))
    np.cumsum(masked, axis=1, out=runs[:, 1:])
    return runs, runs[:, -1].copy()


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


def quantile_bounds(
    edges: np.ndarray,
    noisy: np.ndarray,
    model: NoiseModel,
    level: float,
    probs: np.ndarray,
    sims: int = LINEAR_SIMS,
    seed: int = SIM_SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """Intervals of the quantiles ``probs`` of each group's fine
    histogram, by inverting the pointwise band of its CDF.

    The CDF at the fine edges is a ratio of running sums, so
    :func:`linear_bounds` gives ``F_low <= F <= F_high`` at each edge.
    The true ``p``-quantile ``Q`` has ``F(Q) = p``; it lies in
    ``[min x: F_high(x) >= p, max x: F_low(x) <= p]`` whenever the band
    holds at ``Q`` (each side fails with probability ``(1 - level) /
    2``), with the band interpolated linearly within a fine bin as the
    quantiles are. The noise in the ranks (the running sums) and in the
    total both enter through the band.

    Returns
    -------
    low, high
        ``(groups, len(probs))``.
    """
    f_low, f_high = cdf_band(noisy, model, level, sims, seed)
    return band_quantiles(edges, f_low, f_high, probs)


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

    Under DP every group reads the shared draws' running sums (the
    product :func:`cdf_bands` keeps); under CKM each group's own, a
    released 0's column without noise, a few groups at a time."""
    rows = np.asarray(rows, dtype=float)
    at = np.asarray(at, dtype=np.int64)
    groups, k = rows.shape
    draws, sums = linear_draws(model, sims, k, seed)
    if model.kind != "ckm":
        runs = runs_last(
            product_through(draws, np.tril(np.ones((k + 1, k)), -1))
        )
        noise = runs[at]
        noise_sums = np.broadcast_to(sums, (groups, sims))
    elif model.whole():
        noise = np.empty((*at.shape, sims))
        noise_sums = np.empty((groups, sims))
        step = max(1, CHUNK_CELLS // (sims * (k + 1)))
        for start in range(0, groups, step):
            part = slice(start, start + step)
            runs, noise_sums[part] = _masked_runs(draws, rows[part])
            noise[part] = np.take_along_axis(runs, at[part, :, None], 1)
    else:
        # fractional noise: one group at a time, its total summed as the
        # band's general path sums it
        noise = np.empty((*at.shape, sims))
        noise_sums = np.empty((groups, sims))
        runs = np.zeros((sims, k + 1))
        for g, row in enumerate(rows):
            masked = draws * (row != 0)
            noise_sums[g] = masked.sum(axis=1)
            np.cumsum(masked, axis=1, out=runs[:, 1:])
            noise[g] = runs.T[at[g]]
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
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the ``probs`` quantiles from a CDF band (see
    :func:`quantile_bounds`)."""
    probs = np.asarray(probs, dtype=float)
    # first crossing of p by F_high (a running maximum keeps it monotone
    # and can only move the crossing left: wider)
    low = quantiles(np.maximum.accumulate(f_high, axis=1), edges, probs)
    # the last point where F_low <= p, through the mirror image: with a
    # running minimum from the right G = F_low is monotone, and
    # sup{x: G(x) <= p} = -inf{y: 1 - G(-y) >= 1 - p}
    rising = np.minimum.accumulate(f_low[:, ::-1], axis=1)
    high = -quantiles(1 - rising, -edges[::-1], 1 - probs)
    return low, high
