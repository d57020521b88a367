"""Intervals of the noise a release adds, from its public record alone.

The smallest ``+-k`` holding a level of the exact noise distribution:
discrete Laplace, discrete Gaussian, Laplace rounded to integers, and the
CKM p-table rows of large cells. ``noise_interval``, the ``*_low`` /
``*_high`` variables of every stat and the planning functions all read
them from here, so they agree.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .exceptions import PlotninePrivateError
from .mechanisms.ptable import ons_pcv
from .mechanisms.samplers.discrete_gaussian import discrete_gaussian_pmf

if TYPE_CHECKING:
    from .mechanisms.ptable import PTable
    from .mechanisms.release.engine import Release

__all__ = [
    "ckm_interval",
    "count_noise_bounds",
    "dgauss_interval",
    "dlap_interval",
    "large_cell_rows",
    "pca_noise_bounds",
    "rounded_laplace_interval",
    "row_distributions",
]


# --------------------------------------------------------------------------
# intervals of one noise distribution
# --------------------------------------------------------------------------
def _check_level(level: Any) -> float:
    if (
        isinstance(level, bool)
        or not isinstance(level, (int, float, np.floating))
        or not (0 < float(level) < 1)
    ):
        raise PlotninePrivateError(
            f"noise_interval(): level must be a number strictly between 0 "
            f"and 1, got {level!r}; use e.g. level=0.95."
        )
    return float(level)


def dlap_interval(scale: float, level: float) -> tuple[int, float]:
    """Smallest ``k`` with ``P(|N| <= k) >= level`` for ``N ~ DLap(scale)``,
    and that probability.

    >>> k, cov = dlap_interval(2.0, 0.95)
    >>> k, round(cov, 4)
    (6, 0.9624)
    """
    p = math.exp(-1.0 / scale)
    if p == 0.0:  # a vanishing scale: no noise at all
        return 0, 1.0

    def cover(k: int) -> float:
        return 1.0 - 2.0 * p ** (k + 1) / (1.0 + p)

    # p^(k+1) <= (1 - level)(1 + p)/2, then correct float rounding
    k = max(
        0, math.ceil(math.log((1 - level) * (1 + p) / 2) / math.log(p)) - 1
    )
    while k > 0 and cover(k - 1) >= level:
        k -= 1
    while cover(k) < level:
        k += 1
    return k, cover(k)


def dgauss_interval(sigma: float, level: float) -> tuple[int, float]:
    """Smallest ``k`` with ``P(|N| <= k) >= level`` for the discrete
    Gaussian ``N ~ N_Z(0, sigma^2)``, and that probability.

    >>> k, cov = dgauss_interval(3.0, 0.95)
    >>> k, round(cov, 4)
    (6, 0.9705)
    """
    top = int(40 * sigma) + 10
    pmf = discrete_gaussian_pmf(np.arange(top + 1), sigma * sigma)
    cover = np.cumsum(pmf * np.where(np.arange(top + 1) > 0, 2, 1))
    k = int(np.searchsorted(cover, level))
    return k, float(cover[k])


def rounded_laplace_interval(scale: float, level: float) -> tuple[int, float]:
    """Smallest ``k`` with ``P(|round(L)| <= k) >= level``, ``L ~
    Laplace(scale)`` (the ``noise="laplace"`` option), and that
    probability.

    >>> rounded_laplace_interval(2.0, 0.95)[0]
    6
    """

    def cover(k: int) -> float:
        return 1.0 - math.exp(-(k + 0.5) / scale)

    k = max(0, math.ceil(scale * math.log(1 / (1 - level)) - 0.5))
    while k > 0 and cover(k - 1) >= level:
        k -= 1
    while cover(k) < level:
        k += 1
    return k, cover(k)


def row_distributions(ptable: PTable) -> dict[int, pd.Series]:
    """Noise distribution (deviation -> probability) of each p-table row
    at a uniform cell key."""
    t = ptable.table
    t["mass"] = t["p_int_ub"] - t["p_int_lb"]
    return {
        # pandas-stubs type a group key as any scalar: here a row number
        int(i): g.groupby("v")["mass"].sum()  # type: ignore[arg-type]
        for i, g in t.groupby("i", sort=True)
    }


def large_cell_rows(ptable: PTable) -> list[int]:
    """The p-table rows that perturb counts ``>= max_i``: the last row of
    an R-style table, the cycled rows of an ONS table."""
    top = ptable.max_i
    if ptable.key_kind == "integer":
        counts = np.arange(top + 1, 2 * top + 2)
        return sorted(set(ons_pcv(counts, top).tolist()))
    return [top]


def ckm_interval(
    ptable: PTable, level: float, rows: list[int] | None = None
) -> tuple[float, float, float]:
    """``(low, high, coverage)``: the smallest symmetric interval holding
    at least ``level`` of the noise of every row in ``rows`` (default: the
    rows of large cells), cut to the deviations the rows can take, and the
    smallest mass it holds over those rows.

    >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
    >>> low, high, cov = ckm_interval(create_cnt_ptable(D=2, V=0.9), 0.95)
    >>> (low, high)
    (-2.0, 2.0)
    """
    dists = row_distributions(ptable)
    rows = large_cell_rows(ptable) if rows is None else rows
    k = 0.0
    for r in rows:
        d = dists[r]
        mags = np.sort(np.unique(np.abs(d.index.to_numpy(dtype=float))))
        for m in mags:
            if d[np.abs(d.index.to_numpy(dtype=float)) <= m].sum() >= (
                level - 1e-12
            ):
                k = max(k, float(m))
                break
    low = max(-k, min(float(dists[r].index.min()) for r in rows))
    high = min(k, max(float(dists[r].index.max()) for r in rows))
    coverage = min(
        float(
            dists[r][(dists[r].index >= low) & (dists[r].index <= high)].sum()
        )
        for r in rows
    )
    return low, high, coverage


def count_noise_bounds(
    release: Release, level: float, ptable: PTable | None = None
) -> tuple[float, float, float]:
    """``(low, high, coverage)`` of the noise a count release adds to a
    cell (``noisy - true``), from the release record alone (and the
    layer's p-table for CKM: the interval of large cells).

    Discrete Laplace of scale 2 (eps=1, replace) holds 96% in +-6, as
    :func:`dlap_interval` says; the same rule gives ``noise_interval``'s
    rows and the ``count_low``/``count_high`` of every count stat.
    """
    if release.mechanism == "discrete_laplace":
        k, cov = dlap_interval(float(release.details["scale"]), level)
        return -float(k), float(k), cov
    if release.mechanism == "laplace":
        k, cov = rounded_laplace_interval(
            float(release.details["scale"]), level
        )
        return -float(k), float(k), cov
    if release.mechanism == "ckm" and ptable is not None:
        return ckm_interval(ptable, level, large_cell_rows(ptable))
    raise PlotninePrivateError(
        f"no count noise interval for mechanism {release.mechanism!r}"
    )


def pca_noise_bounds(
    release: Release, level: float
) -> tuple[float, float, float, float]:
    """``(low, high, scale, coverage)`` of the integer noise on one tile's
    count of a PCA score histogram: the smallest ``+-k`` with coverage >=
    ``level`` of the discrete Gaussian (``method="add"``; scale: sigma) or
    of the discrete Laplace on shown tiles (``"sparse"``; scale: b).
    """
    if release.mechanism == "discrete_gaussian":
        sigma = float(release.details["sigma"])
        k, cov = dgauss_interval(sigma, level)
        return -k, k, sigma, cov
    b = float(release.details["laplace_scale_counts"])
    k, cov = dlap_interval(b, level)
    return -k, k, b, cov
