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

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..validation import fail, is_real
from .fine_histogram import FineHistogram

__all__ = [
    "BANDS",
    "LINEAR_SIMS",
    "NoiseModel",
    "SIMS",
    "SIM_SEED",
    "add_count_bounds",
    "count_noise_bounds",
    "curve_bounds",
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
    group: str = "group",
    column: str = "count",
    base: np.ndarray | None = None,
) -> None:
    """``count_low``/``count_high`` (and of the scaled count columns) of
    a count layer's rows, in place (see the module docstring).

    Parameters
    ----------
    frame
        The layer's rows with ``count`` (and ``noisy_count`` if DP).
    noise
        ``(low, high)`` of the noise ``noisy - true`` at the level.
    group
        The column whose rows share a total.
    column
        The released count (``count``; ``n`` for ``stat_sum``), with its
        unclipped twin ``noisy_<column>`` when DP.
    base
        The unbiased estimate the noise is about, one a row (default: the
        ``noisy_<column>`` column, else ``column``; a synopsis: its
        linear estimate).
    """
    n_low, n_high = noise
    count = frame[column].to_numpy(dtype=float)
    noisy = f"noisy_{column}"
    if base is None:
        base = (
            frame[noisy].to_numpy(dtype=float)
            if noisy in frame.columns
            else count
        )
    base = np.where(np.isfinite(base), base, count)
    c_low = np.maximum(base - n_high, 0.0)
    c_high = np.maximum(base - n_low, 0.0)
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
