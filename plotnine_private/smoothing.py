"""Post-processing of released fine histograms: kernel smoothing, a
monotone released CDF, and quantiles from it.

Everything here works on *released* counts (the output of the release
engine), never on records, so none of it costs privacy budget. Arrays are
two-dimensional, one row per group and one column per fine bin, so a plot
with many groups and panels is smoothed in one pass.

numpy and scipy only (no plotnine, no pandas).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "KERNELS",
    "bin_quantiles",
    "kernel_name",
    "kernel_smooth",
    "kernel_weights",
    "monotone_cdf",
    "smooth_with",
    "quantiles",
]

#: kernel -> (shape on its support, half-width of the support in units of
#: the bandwidth; ``inf`` for the Gaussian). The shapes and their scaling
#: are those of statsmodels' ``KDEUnivariate``, which plotnine's
#: ``stat_density`` uses: the bandwidth is the Gaussian's standard
#: deviation and the half-width of the compact kernels.
KERNELS = {
    "gau": (lambda u: np.exp(-0.5 * u * u) / np.sqrt(2 * np.pi), np.inf),
    "epa": (lambda u: 0.75 * (1 - u * u), 1.0),
    "uni": (lambda u: np.full(u.shape, 0.5), 1.0),
    "tri": (lambda u: 1 - np.abs(u), 1.0),
    "biw": (lambda u: 0.9375 * (1 - u * u) ** 2, 1.0),
    "triw": (lambda u: 1.09375 * (1 - u * u) ** 3, 1.0),
    "cos": (lambda u: np.pi / 4 * np.cos(np.pi / 2 * u), 1.0),
    "cos2": (lambda u: 1 + np.cos(2 * np.pi * u), 0.5),
}

_LONG = {
    "biweight": "biw",
    "cosine": "cos",
    "cosine2": "cos2",
    "epanechnikov": "epa",
    "gaussian": "gau",
    "triangular": "tri",
    "triweight": "triw",
    "uniform": "uni",
}


def kernel_name(kernel: str) -> str | None:
    """The short name of a kernel (plotnine's names and abbreviations), or
    None if unknown.

    >>> kernel_name("Epanechnikov"), kernel_name("gau"), kernel_name("box")
    ('epa', 'gau', None)
    """
    if not isinstance(kernel, str):
        return None
    k = kernel.lower()
    k = _LONG.get(k, k)
    return k if k in KERNELS else None


def kernel_weights(
    centres: np.ndarray, grid: np.ndarray, bw: float, kernel: str = "gau"
) -> np.ndarray:
    """``(m, k)``: the weight :func:`kernel_smooth` gives fine bin ``j``
    (centre ``centres[j]``) at grid point ``i``, ``K((x_i - c_j) / bw) /
    bw``: the smooth of counts ``w`` is ``w @ weights.T / sum(w)``.

    >>> grid = np.array([0.0, 1.0, 40.0])
    >>> kernel_weights(np.array([0.0]), grid, 1.0).ravel()
    array([0.39894228, 0.24197072, 0.        ])
    """
    shape, half = KERNELS[kernel]
    u = (np.asarray(grid, float)[:, None] - np.asarray(centres, float)) / bw
    inside = np.abs(u) <= half
    return np.where(inside, shape(np.where(inside, u, 0.0)), 0.0) / bw


def kernel_smooth(
    centres: np.ndarray,
    weights: np.ndarray,
    grid: np.ndarray,
    bw: float,
    kernel: str = "gau",
) -> np.ndarray:
    """Kernel density of binned weights, evaluated on a grid.

    ``f(x) = sum_j w_j K((x - c_j) / bw) / bw / sum_j w_j`` for each row
    of ``weights`` (a direct convolution: exact for the binned data, no
    interpolation). Rows with a zero total give zeros.

    Parameters
    ----------
    centres
        Fine-bin centres ``(k,)``.
    weights
        Non-negative weights ``(groups, k)`` (released counts).
    grid
        Points ``(m,)`` at which to evaluate.
    bw
        Bandwidth (> 0).
    kernel
        Short kernel name (see :data:`KERNELS`).

    >>> f = kernel_smooth(np.array([0.0]), np.array([[2.0]]),
    ...                   np.array([0.0, 1.0]), 1.0)
    >>> np.round(f, 4).tolist()
    [[0.3989, 0.242]]
    """
    return smooth_with(kernel_weights(centres, grid, bw, kernel), weights)


def smooth_with(k: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`kernel_smooth` of ``weights`` with its kernel weights ``k``
    (:func:`kernel_weights`) already made.

    >>> smooth_with(np.array([[0.5], [0.25]]), np.array([[2.0]])).tolist()
    [[0.5, 0.25]]
    """
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    total = w.sum(axis=1, keepdims=True)
    dens = w @ k.T
    return np.where(total > 0, dens / np.where(total > 0, total, 1), 0.0)


def monotone_cdf(noisy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A cumulative distribution at the fine-bin edges from noisy counts.

    The running sums of the *unclipped* released counts are unbiased for
    the true running sums; they are projected onto non-decreasing
    sequences by least squares (isotonic regression), divided by the
    released total and clipped to [0, 1]. The CDF is 0 at the low edge
    and 1 at the high edge (every counted record lies between them).
    Clipping each cell at 0 first would add about half a noise scale of
    phantom records per empty cell and pull the curve towards the
    uniform one.

    Parameters
    ----------
    noisy
        Released counts before clipping ``(groups, k)``.

    Returns
    -------
    cdf
        ``(groups, k + 1)``, at the edges.
    total
        Released totals ``(groups,)``: the sum of the unclipped counts,
        at least 0.

    >>> cdf, n = monotone_cdf(np.array([[2.0, -1.0, 3.0]]))
    >>> cdf.round(3).tolist(), n.tolist()
    ([[0.0, 0.375, 0.375, 1.0]], [4.0])
    """
    from scipy.optimize import isotonic_regression

    noisy = np.atleast_2d(np.asarray(noisy, dtype=float))
    groups, k = noisy.shape
    running = np.cumsum(noisy, axis=1)
    total = np.maximum(running[:, -1] if k else np.zeros(groups), 0.0)
    fits = running.copy()
    if k:
        # a row of whole numbers that never falls is its own fit (PAVA
        # only pools equal whole numbers there, whose mean is exact): the
        # solver runs on the other rows alone
        whole = np.all(running == np.rint(running), axis=1)
        rising = np.all(running[:, 1:] >= running[:, :-1], axis=1)
        for g in np.flatnonzero(~(whole & rising)):
            fits[g] = isotonic_regression(running[g]).x
    cdf = np.zeros((groups, k + 1))
    cdf[:, 1:] = fits / np.maximum(total, 1.0)[:, None]
    cdf = np.clip(cdf, 0.0, 1.0)
    cdf[:, 0] = 0.0
    cdf[:, -1] = 1.0
    return cdf, total


def quantiles(
    cdf: np.ndarray, edges: np.ndarray, probs: np.ndarray
) -> np.ndarray:
    """Invert a CDF given at bin edges, linearly within a bin.

    For each probability p, the first edge where the CDF reaches p closes
    the bin that holds the quantile; within that bin the mass is taken as
    spread evenly.

    Parameters
    ----------
    cdf
        ``(groups, k + 1)`` non-decreasing, from 0 to 1.
    edges
        ``(k + 1,)`` increasing.
    probs
        Probabilities in [0, 1].

    Returns
    -------
    ``(groups, len(probs))``

    >>> quantiles(np.array([[0.0, 0.5, 0.5, 1.0]]), np.array([0., 1, 2, 3]),
    ...           np.array([0.25, 0.5, 0.75])).tolist()
    [[0.5, 1.0, 2.5]]
    """
    cdf = np.atleast_2d(cdf)
    probs = np.asarray(probs, dtype=float)
    j = _first_reaching(cdf, probs)
    j = np.clip(j, 1, cdf.shape[1] - 1)
    f0 = np.take_along_axis(cdf, j - 1, axis=1)
    f1 = np.take_along_axis(cdf, j, axis=1)
    step = f1 - f0
    frac = np.where(step > 0, (probs - f0) / np.where(step > 0, step, 1), 0.0)
    frac = np.clip(frac, 0.0, 1.0)
    return edges[j - 1] + frac * (edges[j] - edges[j - 1])


def bin_quantiles(
    cdf: np.ndarray, edges: np.ndarray, probs: np.ndarray
) -> np.ndarray:
    """The centre of the bin where a CDF given at bin edges first reaches
    each probability: the quantiles of data that sit at the bins'
    centres (whole numbers in bins of width 1 around them), with no
    interpolation. Without noise it is the lowest p-quantile of such
    data, ``inf{x: F(x) >= p}``.

    >>> bin_quantiles(np.array([[0.0, 0.3, 0.5, 1.0]]),
    ...               np.array([0.5, 1.5, 2.5, 3.5]),
    ...               np.array([0.25, 0.5, 0.75])).tolist()
    [[1.0, 2.0, 3.0]]
    """
    cdf = np.atleast_2d(cdf)
    probs = np.asarray(probs, dtype=float)
    j = np.clip(_first_reaching(cdf, probs), 1, cdf.shape[1] - 1)
    centres = (edges[:-1] + edges[1:]) / 2
    return centres[j - 1]


def _first_reaching(cdf: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``searchsorted(row, probs, side="left")`` for every row at once.

    On a non-decreasing row the first entry at or above ``p`` is at the
    number of entries below it, one comparison per entry for all rows
    together (a box plot's interval simulation inverts thousands of
    rows); a row that is not sorted (or holds NaN) keeps searchsorted's
    own answer."""
    j = np.empty((len(cdf), len(probs)), dtype=np.intp)
    for i, p in enumerate(probs):
        j[:, i] = np.count_nonzero(cdf < p, axis=1)
    rising = np.all(cdf[:, 1:] >= cdf[:, :-1], axis=1)
    if np.isnan(probs).any():
        rising[:] = False
    for g in np.flatnonzero(~rising):
        j[g] = np.searchsorted(cdf[g], probs, side="left")
    return j
