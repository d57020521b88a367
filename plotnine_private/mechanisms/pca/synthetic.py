"""Synthetic points from a private 2-D histogram (``docs/mechanisms.md``).

Pure post-processing of released cell probabilities: no privacy cost.
The sample size must be public or released: a given number, or the
released histogram's total (dppca defaults it to the true ``n`` and
splits it by true group sizes, which shows them).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..streams.randomness import derive_key, keyed_uniform

__all__ = [
    "DEFAULT_BANDWIDTH",
    "adjust_of_scale",
    "allocate_group_sizes",
    "sample_histogram",
]

#: the jitter bandwidth in cell widths that ``adjust=1`` means, per method
DEFAULT_BANDWIDTH = {"center": 0.5, "uniform": 0.25}
NO_MASS_MESSAGE = (
    "The private histogram contains no positive probability mass; no "
    "synthetic score points were generated."
)


def adjust_of_scale(method: str, bandwidth_scale: Any) -> Any:
    """The ``adjust`` of a jitter given in cell widths (the deprecated
    ``bandwidth_scale``): the same bandwidth, as a multiple of the
    method's default (an unknown method or a bad value is left for the
    sampler's checks to name).

    >>> adjust_of_scale("center", 0.25)
    0.5
    """
    default = DEFAULT_BANDWIDTH.get(method)
    if default is None or not isinstance(bandwidth_scale, numbers.Real):
        return bandwidth_scale
    return bandwidth_scale / default


def sample_histogram(
    xmin: Any,
    xmax: Any,
    ymin: Any,
    ymax: Any,
    prob: Any,
    size: int,
    method: str = "uniform",
    adjust: float = 1.0,
    *,
    key: bytes,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``size`` points from a histogram of rectangular cells.

    A cell ``J ~ Categorical(prob)``; the base point is the cell centre
    (``"center"``) or uniform in the cell (``"uniform"``); then
    ``N(0, (c dx)^2)`` and ``N(0, (c dy)^2)`` are added, with ``dx``,
    ``dy`` the median cell widths and ``c = adjust`` times the default
    (0.5 for center, 0.25 for uniform; ``adjust`` multiplies a default
    bandwidth, as plotnine's ``stat_density(adjust=)``). Points are not
    clipped to the frame.

    Returns two empty arrays with a ``UserWarning`` if no cell has
    positive probability.

    ``key`` names the sampling stream. Sampling is post-processing, so
    the key need only differ between releases; the PCA derives it from
    the release's identity and a digest of the released probabilities.

    Examples
    --------
    >>> x, y = sample_histogram([0], [1], [0], [1], [1.0], 3, key=bytes(16))
    >>> len(x), bool(((x > -2) & (x < 3)).all())
    (3, True)
    """
    if method not in DEFAULT_BANDWIDTH:
        raise ParameterError(
            f"method must be 'center' or 'uniform', got {method!r}."
        )
    if isinstance(size, bool) or int(size) != size or size < 0:
        raise ParameterError(
            f"size must be a non-negative integer, got {size!r}."
        )
    size = int(size)
    real = isinstance(adjust, numbers.Real) and not isinstance(adjust, bool)
    if not (real and math.isfinite(adjust) and adjust >= 0):
        raise ParameterError(
            f"adjust must be a finite number >= 0, got {adjust!r}."
        )
    c = DEFAULT_BANDWIDTH[method] * adjust
    cells = [
        np.asarray(v, dtype=float).ravel() for v in (xmin, xmax, ymin, ymax)
    ]
    p = np.asarray(prob, dtype=float).ravel()
    p = np.where(np.isfinite(p) & (p > 0), p, 0.0)
    if p.sum() <= 0:
        warnings.warn(NO_MASS_MESSAGE, UserWarning, stacklevel=2)
        return np.empty(0), np.empty(0)
    x0, x1, y0, y1 = cells
    dx = float(np.median(x1 - x0))
    dy = float(np.median(y1 - y0))
    if not (math.isfinite(dx) and dx > 0 and math.isfinite(dy) and dy > 0):
        raise ParameterError("histogram cells must have positive widths.")
    cdf = np.cumsum(p / p.sum())
    cdf[-1] = 1.0
    key = derive_key(key, "synthetic", method)
    u = (
        keyed_uniform(key, 5 * size).reshape(5, size)
        if size
        else (np.empty((5, 0)))
    )
    j = np.minimum(np.searchsorted(cdf, u[0], side="right"), len(p) - 1)
    if method == "center":
        bx = (x0[j] + x1[j]) / 2
        by = (y0[j] + y1[j]) / 2
    else:
        bx = x0[j] + u[1] * (x1[j] - x0[j])
        by = y0[j] + u[2] * (y1[j] - y0[j])
    from scipy.special import ndtri  # here: see gaussian_delta

    return bx + c * dx * ndtri(u[3]), by + c * dy * ndtri(u[4])


def allocate_group_sizes(total: int, sizes: Sequence[float]) -> np.ndarray:
    """Split ``total`` in proportion to ``sizes`` by largest remainder.

    Floors of ``total * n_g / sum(n)``; the remaining units go one by one
    to the largest fractional parts, ties to the earlier group. Warns if
    a group gets 0 (while another gets points). The weights should be
    released numbers (e.g. the released histogram totals), never true
    group sizes. With no positive weight every group gets 0.

    >>> allocate_group_sizes(10, [1, 1, 1]).tolist()
    [4, 3, 3]
    >>> allocate_group_sizes(10, [0, 0]).tolist()
    [0, 0]
    """
    w = np.asarray(sizes, dtype=float)
    if w.size == 0 or not np.all(np.isfinite(w)):
        raise ParameterError("sizes must be finite, and at least one.")
    w = np.maximum(w, 0.0)
    if w.sum() <= 0:
        return np.zeros(w.size, dtype=int)
    raw = total * w / w.sum()
    out = np.floor(raw).astype(int)
    rest = int(total - out.sum())
    frac = raw - out
    order = np.argsort(-frac, kind="stable")  # ties: earlier group first
    out[order[:rest]] += 1
    if np.any(out == 0):
        warnings.warn(
            "Some groups received no synthetic points; increase the "
            "sample size.",
            UserWarning,
            stacklevel=2,
        )
    return out
