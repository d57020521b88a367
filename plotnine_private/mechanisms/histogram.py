"""Private 2-D histograms on a fixed grid (dp-pca spec, section 4).

The grid (:func:`score_grid`) is built from public bin numbers and a
frame that is either public or a private estimate charged separately.
Counting (:func:`grid_counts`) is separate from perturbation
(:func:`gaussian_histogram`, :func:`sparse_histogram`).

Sensitivity: every row lands in exactly one cell (out-of-frame points
are clamped into edge cells), so under replace-one adjacency (``n``
fixed) one row moves one unit of count: L1 sensitivity 2, L2
sensitivity ``sqrt(2)``. This holds only if the grid, and whatever maps
a row to its point (PCA directions, centring), does not depend on the
other rows, or was released privately before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ParameterError
from .gaussian import gaussian_sigma
from .randomness import derive_key, keyed_normal, keyed_uniform, master_key

__all__ = [
    "ScoreGrid",
    "gaussian_histogram",
    "grid_counts",
    "grouped_counts",
    "grouped_histograms",
    "private_histogram",
    "score_grid",
    "sparse_histogram",
]

ALL_ZERO_MESSAGE = (
    "all privatized bin counts are zero after Gaussian noise and clipping. "
    "Try a larger `eps` or fewer bins."
)


@dataclass(frozen=True)
class ScoreGrid:
    """An ``m_x`` by ``m_y`` grid of equal cells, rows in y-outer order.

    Attributes
    ----------
    x_breaks, y_breaks
        Bin edges (``m_x + 1`` and ``m_y + 1`` values).
    xmin, xmax, ymin, ymax
        Cell bounds, one entry per cell; cell ``j*m_x + i`` is x-bin ``i``
        of y-bin ``j``.
    """

    x_breaks: np.ndarray
    y_breaks: np.ndarray
    xmin: np.ndarray
    xmax: np.ndarray
    ymin: np.ndarray
    ymax: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """``(m_x, m_y)``."""
        return len(self.x_breaks) - 1, len(self.y_breaks) - 1

    @property
    def size(self) -> int:
        """Number of cells."""
        return len(self.xmin)


def _check_bins(bins: Any) -> tuple[int, int]:
    if np.isscalar(bins):
        bins = (bins, bins)
    try:
        mx, my = bins
    except (TypeError, ValueError):
        raise ParameterError(
            f"bins must be an integer or a pair of integers, got {bins!r}."
        ) from None
    out = []
    for b in (mx, my):
        if (
            isinstance(b, bool)
            or not isinstance(b, (int, float, np.number))
            or not float(b).is_integer()
            or b < 1
        ):
            raise ParameterError(
                f"bins must be positive integers, got {bins!r}; use e.g. "
                "bins=(20, 20)."
            )
        out.append(int(b))
    return out[0], out[1]


def score_grid(
    xlim: Sequence[float], ylim: Sequence[float], bins: Any
) -> ScoreGrid:
    """Equal-width grid over a frame.

    Parameters
    ----------
    xlim, ylim
        Frame limits ``(low, high)`` with ``low < high``.
    bins
        ``m`` or ``(m_x, m_y)``, positive integers.

    Examples
    --------
    >>> g = score_grid((0, 2), (0, 1), (2, 1))
    >>> g.xmin.tolist(), g.ymax.tolist()
    ([0.0, 1.0], [1.0, 1.0])
    """
    mx, my = _check_bins(bins)
    for name, lim in (("xlim", xlim), ("ylim", ylim)):
        lo, hi = (float(v) for v in lim)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ParameterError(
                f"{name} must be two finite numbers with low < high, got "
                f"{tuple(lim)!r}."
            )
    xb = np.linspace(float(xlim[0]), float(xlim[1]), mx + 1)
    yb = np.linspace(float(ylim[0]), float(ylim[1]), my + 1)
    ix = np.tile(np.arange(mx), my)
    iy = np.repeat(np.arange(my), mx)
    return ScoreGrid(xb, yb, xb[ix], xb[ix + 1], yb[iy], yb[iy + 1])


def _bin_index(v: np.ndarray, breaks: np.ndarray) -> np.ndarray:
    """0-based bin, right-closed with a closed first bin, clamped.

    Same as R's ``findInterval(all.inside=TRUE)`` on ``cut`` bins:
    ``clip(searchsorted(breaks, v, 'left'), 1, m) - 1``.
    """
    m = len(breaks) - 1
    return np.clip(np.searchsorted(breaks, v, side="left"), 1, m) - 1


def grid_counts(x: Any, y: Any, grid: ScoreGrid) -> np.ndarray:
    """Counts per cell (length ``m_x*m_y``, y-outer order); sum is ``n``.

    Bins are right-closed, the first bin closed on both sides, and
    out-of-frame points are clamped into the edge bins.

    Examples
    --------
    >>> g = score_grid((0, 2), (0, 2), 2)
    >>> grid_counts([0, 1, 1.5, 9], [0, 0, 2, -9], g).tolist()
    [2, 1, 0, 1]
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ParameterError(
            f"x and y must have the same length, got {x.size} and {y.size}."
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ParameterError("x and y must be finite (no NaN/inf).")
    mx, my = grid.shape
    cell = _bin_index(y, grid.y_breaks) * mx + _bin_index(x, grid.x_breaks)
    return np.bincount(cell, minlength=mx * my).astype(np.int64)


def _check_privacy(eps: float, delta: float) -> None:
    if not (
        isinstance(eps, (int, float, np.number))
        and math.isfinite(eps)
        and eps > 0
    ):
        raise ParameterError(f"eps must be a finite number > 0, got {eps!r}.")
    if not (0 < delta < 1):
        raise ParameterError(
            f"delta must lie strictly between 0 and 1, got {delta!r}."
        )


def _check_counts(counts: Any) -> np.ndarray:
    c = np.asarray(counts, dtype=float).ravel()
    if c.size == 0 or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ParameterError(
            "counts must be a non-empty vector of finite non-negative numbers."
        )
    return c


def gaussian_histogram(
    counts: Any,
    eps: float,
    delta: float,
    sensitivity_l2: float = math.sqrt(2),
    calibration: str = "analytic",
    seed: int | None = None,
    key_parts: Sequence[Any] = (),
) -> np.ndarray:
    """Additive Gaussian histogram ("add", Wasserman & Zhou 2010).

    Adds ``N(0, sigma^2)`` to **every** cell (empty ones too), clips at 0
    and normalises to probabilities.

    Privacy: ``(eps, delta)``-DP for a count vector of L2 sensitivity
    ``sensitivity_l2`` (``sqrt(2)`` under replace-one, 1 under
    add/remove) on a public or previously released grid. With
    ``calibration="analytic"`` sigma is Balle-Wang's (valid for all eps);
    ``"classic"`` reproduces dppca's ``sqrt(2 ln(1.25/delta))`` formula
    and warns for ``eps >= 1``, where it is not proved.

    Raises
    ------
    ParameterError
        If every noisy count is clipped to 0 (dppca's behaviour).

    Examples
    --------
    >>> p = gaussian_histogram([5, 0, 9], eps=1e6, delta=1e-6, seed=1)
    >>> [round(float(v), 3) for v in p]
    [0.357, 0.0, 0.643]
    """
    c = _check_counts(counts)
    _check_privacy(eps, delta)
    sigma = gaussian_sigma(eps, delta, sensitivity_l2, calibration)
    key = derive_key(master_key(seed), "gaussian_histogram", *key_parts)
    noisy = np.maximum(c + sigma * keyed_normal(key, c.size), 0.0)
    total = noisy.sum()
    if not total > 0:
        raise ParameterError(ALL_ZERO_MESSAGE)
    return noisy / total


def sparse_threshold(n: int, eps: float, delta: float) -> float:
    """Karwa-Vadhan threshold on proportions.

    ``2 ln(2/delta)/(eps n) + 1/n`` (times ``n`` in count units).
    """
    return 2.0 * math.log(2.0 / delta) / (eps * n) + 1.0 / n


def sparse_histogram(
    counts: Any,
    n: int,
    eps: float,
    delta: float,
    seed: int | None = None,
    key_parts: Sequence[Any] = (),
) -> np.ndarray:
    """Stability-based sparse histogram (Karwa & Vadhan 2018; dppca).

    For each non-empty cell, ``q = max(c/n + Lap(2/(eps n)), 0)``, set to 0
    if ``q < 2 ln(2/delta)/(eps n) + 1/n``; empty cells stay 0 and get no
    noise. Normalised if anything survives, else all zeros.

    Privacy: ``(eps, delta)``-DP under replace-one adjacency with ``n``
    public (L1 sensitivity 2 on counts -> ``Lap(2/eps)``; delta covers a
    cell that is empty in one neighbour). The grid may be unknown or
    huge; only observed cells can appear.

    Examples
    --------
    >>> p = sparse_histogram([3, 0, 2], n=5, eps=1e9, delta=1e-6, seed=1)
    >>> [round(float(v), 6) for v in p]
    [0.6, 0.0, 0.4]
    """
    c = _check_counts(counts)
    _check_privacy(eps, delta)
    if isinstance(n, bool) or not float(n).is_integer() or n < 1:
        raise ParameterError(f"n must be a positive integer, got {n!r}.")
    p_hat = c / n
    scale = 2.0 / (eps * n)
    tau = sparse_threshold(int(n), eps, delta)
    key = derive_key(master_key(seed), "sparse_histogram", *key_parts)
    nonzero = np.flatnonzero(c > 0)
    # cell j uses stream position j: its noise depends on nothing else
    u = keyed_uniform(key, c.size)[nonzero] - 0.5
    lap = -scale * np.sign(u) * np.log1p(-2.0 * np.abs(u))
    q = np.zeros_like(p_hat)
    q[nonzero] = np.maximum(p_hat[nonzero] + lap, 0.0)
    q[q < tau] = 0.0
    total = q.sum()
    return q / total if total > 0 else q


def private_histogram(
    counts: Any,
    method: str,
    eps: float,
    delta: float,
    *,
    n: int | None = None,
    calibration: str = "analytic",
    seed: int | None = None,
    key_parts: Sequence[Any] = (),
) -> np.ndarray:
    """Dispatch to ``"add"`` (:func:`gaussian_histogram`) or ``"sparse"``."""
    if method == "add":
        return gaussian_histogram(
            counts, eps, delta, math.sqrt(2), calibration, seed, key_parts
        )
    if method == "sparse":
        if n is None:
            n = int(np.sum(counts))
        return sparse_histogram(counts, n, eps, delta, seed, key_parts)
    raise ParameterError(f"method must be 'add' or 'sparse', got {method!r}.")


def grouped_counts(
    x: Any, y: Any, groups: Any, grid: ScoreGrid, levels: Sequence[Any]
) -> dict[Any, np.ndarray]:
    """Counts per group on one shared grid, in the order of ``levels``."""
    g = np.asarray(groups)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return {lv: grid_counts(x[g == lv], y[g == lv], grid) for lv in levels}


def grouped_histograms(
    counts: Mapping[Any, np.ndarray],
    method: str,
    eps: float,
    delta: float,
    *,
    calibration: str = "analytic",
    seed: int | None = None,
    key_parts: Sequence[Any] = (),
) -> dict[Any, np.ndarray]:
    """One private histogram per group, independent noise per group.

    Privacy: each group gets the full ``(eps, delta)``; with public group
    labels that partition the rows, parallel composition makes the set of
    histograms ``(eps, delta)``-DP. Group sizes ``n_g`` are treated as
    public (as in dppca). The "add" all-zero error names the group.
    """
    out = {}
    for level, c in counts.items():
        try:
            out[level] = private_histogram(
                c,
                method,
                eps,
                delta,
                n=int(np.sum(c)) if np.sum(c) > 0 else 1,
                calibration=calibration,
                seed=seed,
                key_parts=(*key_parts, "group", level),
            )
        except ParameterError as err:
            raise ParameterError(f"Group `{level}`: {err}") from None
    return out
