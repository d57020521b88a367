"""Private 2-D histograms on a fixed grid (``docs/mechanisms.md``, PCA).

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

A privacy unit that keeps up to ``k`` rows (keyword ``records=k``) moves
up to ``k`` of them, possibly all from one cell to another: L1
sensitivity ``2k`` and L2 sensitivity ``k sqrt(2)``; it can open up to
``c`` cells (``cells=c``, at most ``k``) that the neighbour does not
have, each holding up to ``k`` rows, which the sparse threshold covers.

Each mechanism takes the stream key of its release (keyword ``key``,
derived by the release engine from the secret, the release's identity
and a digest of the counts) and returns the released counts; clipping,
normalising and totals are post-processing (:class:`ReleasedHistogram`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from ..domains.grid_index import settle
from ..errors import ParameterError
from ..release.count_mechanisms import check_bound
from ..samplers.discrete_gaussian import (
    discrete_gaussian,
    discrete_gaussian_sigma,
    rational_variance,
)
from ..samplers.gaussian import classic_gaussian_sigma
from ..samplers.laplace import discrete_laplace, exact_epsilon, rational_scale
from ..streams.randomness import CellStreams, cell_words, derive_key
from ..streams.versions import cell_streams

__all__ = [
    "ReleasedHistogram",
    "ScoreGrid",
    "gaussian_counts",
    "gaussian_histogram",
    "grid_cells",
    "grid_counts",
    "grouped_counts",
    "grouped_histograms",
    "histogram_sigma",
    "private_histogram",
    "score_grid",
    "sparse_counts",
    "sparse_histogram",
    "sparse_threshold",
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
    ``clip(searchsorted(breaks, v, 'left'), 1, m) - 1``, which is the
    number of inner breaks below ``v``. Found from an equal-width guess
    moved onto the breaks' own floats (:func:`.grid_index.settle`), or
    by the search where the guess does not settle.
    """
    m = len(breaks) - 1
    inner = breaks[1:m]
    lo, hi = float(breaks[0]), float(breaks[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        guess = np.subtract(v, lo)
        guess *= m / (hi - lo)
    np.floor(guess, out=guess)
    np.fmax(guess, 0.0, out=guess)  # NaN (none expected) -> 0
    np.fmin(guess, m - 1.0, out=guess)
    j = guess.astype(np.intp)
    up = np.concatenate((inner, [np.inf]))
    down = np.concatenate(([-np.inf], inner))
    if settle(j, v, up, down, strict=True):
        return j
    return np.searchsorted(inner, v, side="left")


def grid_cells(x: Any, y: Any, grid: ScoreGrid) -> np.ndarray:
    """The cell (row of the grid, y-outer order) of each point.

    Bins are right-closed, the first bin closed on both sides, and
    out-of-frame points are clamped into the edge bins, so every point
    has a cell.

    >>> g = score_grid((0, 2), (0, 2), 2)
    >>> grid_cells([0, 1.5, 9], [0, 2, -9], g).tolist()
    [0, 3, 1]
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ParameterError(
            f"x and y must have the same length, got {x.size} and {y.size}."
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ParameterError("x and y must be finite (no NaN/inf).")
    mx, _ = grid.shape
    return _bin_index(y, grid.y_breaks) * mx + _bin_index(x, grid.x_breaks)


def grid_counts(x: Any, y: Any, grid: ScoreGrid) -> np.ndarray:
    """Counts per cell (length ``m_x*m_y``, y-outer order); sum is ``n``.

    Examples
    --------
    >>> g = score_grid((0, 2), (0, 2), 2)
    >>> grid_counts([0, 1, 1.5, 9], [0, 0, 2, -9], g).tolist()
    [2, 1, 0, 1]
    """
    cell = grid_cells(x, y, grid)
    return np.bincount(cell, minlength=grid.size).astype(np.int64)


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
    c = np.asarray(counts, dtype=float)
    if c.ndim == 0:
        c = c.ravel()
    if (
        c.size == 0
        or not np.all(np.isfinite(c))
        or np.any(c < 0)
        or np.any(c != np.round(c))
    ):
        raise ParameterError(
            "counts must be a non-empty vector of non-negative integers."
        )
    return c


def _cell_streams(key: bytes, name: str, size: int) -> CellStreams:
    """One keyed stream per cell position: a cell's noise depends on the
    key and its position only."""
    return cell_streams(derive_key(key, name), cell_words(np.arange(size)))


def histogram_sigma(
    eps: float,
    delta: float,
    sensitivity_l2: float = math.sqrt(2),
    calibration: str = "analytic",
) -> float:
    """The discrete Gaussian sigma actually sampled by
    :func:`gaussian_counts`: ``sqrt`` of the exact rational variance.

    ``"analytic"`` is the smallest sigma that the CKS20 zCDP conversion
    proves ``(eps, delta)``-DP (:func:`discrete_gaussian_sigma`);
    ``"classic"`` is dppca's ``Delta sqrt(2 ln(1.25/delta))/eps`` (it warns
    for ``eps >= 1``), raised to the former where that is larger, so that
    the claimed ``(eps, delta)`` always holds.

    >>> s = histogram_sigma(1.0, 1e-5)
    >>> 5.72 < s < 5.73
    True
    """
    _check_privacy(eps, delta)
    sigma = discrete_gaussian_sigma(eps, delta, sensitivity_l2)
    if calibration == "classic":
        sigma = max(sigma, classic_gaussian_sigma(eps, delta, sensitivity_l2))
    elif calibration != "analytic":
        raise ParameterError(
            f"calibration must be 'analytic' or 'classic', got "
            f"{calibration!r}."
        )
    return math.sqrt(float(rational_variance(sigma)))


def gaussian_counts(
    counts: Any,
    eps: float,
    delta: float,
    sensitivity_l2: float = math.sqrt(2),
    calibration: str = "analytic",
    *,
    key: bytes,
) -> np.ndarray:
    """Additive discrete Gaussian noise on **every** cell.

    Returns the noisy counts ``c + N_Z(0, sigma^2)``, unclipped: the
    release itself (clipping and normalising are post-processing). They
    are integers (held as floats): no floating-point value touches the
    noise, so a released count cannot single out the true one.

    Privacy: ``(eps, delta)``-DP for an integer count vector of L2
    sensitivity ``sensitivity_l2`` (``sqrt(2)`` under replace-one, 1
    under add/remove) on a public or previously released grid, by the
    discrete Gaussian's zCDP (CKS20) converted with CKS20 Cor 13; sigma
    from :func:`histogram_sigma`. Cell ``j`` reads stream ``j`` of
    ``key``.

    Examples
    --------
    >>> c = gaussian_counts([5, 0], eps=1e9, delta=1e-6, key=bytes(16))
    >>> c.tolist()
    [5.0, 0.0]
    """
    c = _check_counts(counts)
    sigma = histogram_sigma(eps, delta, sensitivity_l2, calibration)
    return _add_discrete_gaussian(c, sigma, key)


def _add_discrete_gaussian(c: np.ndarray, sigma: float, key: bytes):
    streams = _cell_streams(key, "discrete_gaussian_histogram", c.size)
    noise = discrete_gaussian(streams, rational_variance(sigma))
    return c + noise.reshape(c.shape)


def gaussian_histogram(
    counts: Any,
    eps: float,
    delta: float,
    sensitivity_l2: float = math.sqrt(2),
    calibration: str = "analytic",
    *,
    key: bytes,
) -> np.ndarray:
    """Additive Gaussian histogram ("add"): :func:`gaussian_counts`
    clipped at 0 and normalised to probabilities (post-processing).

    Raises
    ------
    ParameterError
        If every noisy count is clipped to 0 (dppca's behaviour).

    Examples
    --------
    >>> p = gaussian_histogram([5, 0, 9], eps=1e6, delta=1e-6,
    ...                        key=bytes(16))
    >>> [round(float(v), 3) for v in p]
    [0.357, 0.0, 0.643]
    """
    noisy = np.maximum(
        gaussian_counts(
            counts, eps, delta, sensitivity_l2, calibration, key=key
        ),
        0.0,
    )
    total = noisy.sum()
    if not total > 0:
        raise ParameterError(ALL_ZERO_MESSAGE)
    return noisy / total


def sparse_threshold(
    eps: float, delta: float, records: int = 1, cells: int | None = None
) -> float:
    """Karwa-Vadhan threshold in count units: ``2 ln(2/delta)/eps + 1``;
    for units of up to ``records = k`` rows in up to ``cells = c`` cells
    (``k`` when None), ``k + 2k ln(2c/delta)/eps``: a cell only one
    neighbour has holds at most ``k`` rows, its noise has scale
    ``2k/eps``, so it shows with probability at most ``delta / (2c)``,
    and the union over its at most ``c`` such cells stays below
    ``delta``.

    It depends on public parameters only (dppca's threshold on
    proportions is this divided by ``n``; comparing proportions with it
    is the same as comparing counts with this). ``eps`` is the exact
    rational the noise is drawn with (:func:`exact_epsilon`, never above
    ``eps``), so the threshold matches the noise actually added.

    >>> round(sparse_threshold(0.65, 5e-4), 3)
    26.52
    >>> round(sparse_threshold(0.65, 5e-4, records=3, cells=2), 3)
    85.959
    """
    k, c = _unit_bound(records, cells)
    eps_q = float(exact_epsilon(eps))
    return 2.0 * k * math.log(2.0 * c / delta) / eps_q + float(k)


def _unit_bound(records: Any, cells: Any) -> tuple[int, int]:
    """``(k, c)``: rows one unit keeps and cells it can reach."""
    check_bound(records, cells)
    k = int(records)
    return k, k if cells is None else int(cells)


def sparse_counts(
    counts: Any,
    eps: float,
    delta: float,
    *,
    key: bytes,
    records: int = 1,
    cells: int | None = None,
) -> np.ndarray:
    """Stability-based sparse histogram in counts (Karwa & Vadhan 2018).

    Each non-empty cell gets ``c + DLap(2/eps)`` (exact discrete Laplace,
    integer noise) and is kept if that reaches :func:`sparse_threshold`
    (a value equal to it is kept); empty cells stay 0 and get no noise.
    Returns the kept noisy counts (integers), 0 elsewhere.

    Privacy: ``(eps, delta)``-DP under replace-one adjacency (L1
    sensitivity 2 on counts). Delta covers the cells that are empty in
    one neighbour and hold one record in the other (at most two): such a
    cell is shown with probability ``P(DLap >= tau - 1) = p^ceil(tau - 1)
    / (1 + p) <= exp(-(tau - 1) eps / 2) = delta / 2``, ``p = exp(-eps /
    2)``. Nothing here
    depends on ``n``, so no group or panel size enters the release. Cell
    ``j`` takes position ``j`` of the stream of ``key``: its noise depends
    on nothing else. For a unit of up to ``records`` rows in up to
    ``cells`` cells the noise is ``DLap(2 records / eps)`` and the
    threshold :func:`sparse_threshold` of both.

    Examples
    --------
    >>> sparse_counts([3, 0, 2], eps=1e9, delta=1e-6, key=bytes(16))
    array([3., 0., 2.])
    """
    c = _check_counts(counts)
    _check_privacy(eps, delta)
    tau = sparse_threshold(eps, delta, records, cells)
    flat = c.ravel()
    nonzero = np.flatnonzero(flat > 0)
    streams = _cell_streams(key, "sparse_histogram", flat.size)
    scale = rational_scale(2 * int(records), eps)
    noise = discrete_laplace(streams, scale, nonzero)
    q = np.zeros_like(flat)
    q[nonzero] = flat[nonzero] + noise
    q[q < tau] = 0.0
    return q.reshape(c.shape)


def sparse_histogram(
    counts: Any, eps: float, delta: float, *, key: bytes
) -> np.ndarray:
    """Sparse histogram ("sparse", dppca): :func:`sparse_counts`
    normalised if anything survives, else all zeros.

    Examples
    --------
    >>> p = sparse_histogram([3, 0, 2], eps=1e9, delta=1e-6, key=bytes(16))
    >>> [round(float(v), 6) for v in p]
    [0.6, 0.0, 0.4]
    """
    q = sparse_counts(counts, eps, delta, key=key)
    total = q.sum()
    return q / total if total > 0 else q


@dataclass(frozen=True)
class ReleasedHistogram:
    """A released histogram and what follows from it for free.

    Attributes
    ----------
    noisy
        The mechanism's output: unclipped noisy counts ("add"), or the
        kept noisy counts with 0 elsewhere ("sparse"); integers.
    counts
        ``noisy`` clipped at 0 (what is drawn).
    sigma
        The discrete Gaussian sigma sampled ("add"; public), else None.
    """

    noisy: np.ndarray
    counts: np.ndarray
    sigma: float | None = None

    @overload
    def total(self, axis: None = None) -> float: ...
    @overload
    def total(self, axis: int) -> np.ndarray: ...
    def total(self, axis: int | None = None) -> np.ndarray | float:
        """Released estimate of the number of records (post-processing):
        the sum of the unclipped noisy counts ("add": unbiased) or of the
        kept ones ("sparse": biased down by what was thresholded)."""
        return np.sum(self.noisy, axis=axis)

    def prob(self, axis: int | None = None) -> np.ndarray:
        """``counts`` normalised (along ``axis``); all zeros where nothing
        positive was released."""
        c = self.counts
        total = np.sum(c, axis=axis, keepdims=axis is not None)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, c / np.where(total > 0, total, 1), 0.0)


def private_histogram(
    counts: Any,
    method: str,
    eps: float,
    delta: float,
    *,
    calibration: str = "analytic",
    key: bytes,
    records: int = 1,
    cells: int | None = None,
) -> ReleasedHistogram:
    """Release an integer count vector with ``"add"``
    (:func:`gaussian_counts`, replace-one L2 sensitivity ``sqrt(2)``) or
    ``"sparse"``
    (:func:`sparse_counts`).

    The count vector may hold several histograms side by side (panels,
    groups): one record is in one cell of one of them, so under
    replace-one the whole vector still has L1 sensitivity 2 and L2
    sensitivity ``sqrt(2)``, and the release costs ``(eps, delta)`` once
    (parallel composition). Unlike :func:`gaussian_histogram`, an "add"
    release whose counts all clip to 0 is returned, not an error.
    A privacy unit of up to ``records`` rows in up to ``cells`` cells
    scales both (module docstring).
    """
    sigma = None
    k, _ = _unit_bound(records, cells)
    if method == "add":
        c = _check_counts(counts)
        sigma = histogram_sigma(eps, delta, k * math.sqrt(2), calibration)
        noisy = _add_discrete_gaussian(c, sigma, key)
    elif method == "sparse":
        noisy = sparse_counts(
            counts, eps, delta, key=key, records=records, cells=cells
        )
    else:
        raise ParameterError(
            f"method must be 'add' or 'sparse', got {method!r}."
        )
    return ReleasedHistogram(noisy, np.maximum(noisy, 0.0), sigma)


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
    key: bytes,
) -> dict[Any, np.ndarray]:
    """One private histogram (probabilities) per group, independent noise
    per group (sub-streams of ``key``).

    Privacy: each group gets the full ``(eps, delta)``; with public group
    labels that partition the rows, parallel composition makes the set of
    histograms ``(eps, delta)``-DP. No group size is used. The "add"
    all-zero error names the group.
    """
    out = {}
    for level, c in counts.items():
        sub = derive_key(key, "group", level)
        try:
            if method == "add":
                out[level] = gaussian_histogram(
                    c, eps, delta, math.sqrt(2), calibration, key=sub
                )
            elif method == "sparse":
                out[level] = sparse_histogram(c, eps, delta, key=sub)
            else:
                raise ParameterError(
                    f"method must be 'add' or 'sparse', got {method!r}."
                )
        except ParameterError as err:
            raise ParameterError(f"Group `{level}`: {err}") from None
    return out
