"""Acceptance bounds of the statistical tests, at a stated alpha.

The README promises that every statistical test would reject a *correct*
mechanism with probability at most ``ALPHA`` (over the choice of seeds);
the seeds are fixed, so a passing test keeps passing. Each bound below
says how it is computed. Negative controls (a wrong scale must fall
outside the same bound) show that a bound is not too wide to fail.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

#: false-rejection probability of every statistical test (README)
ALPHA = 1e-6


def z_two_sided(alpha: float = ALPHA) -> float:
    """Normal quantile of a two-sided test: 4.89 at ``alpha = 1e-6``.

    >>> round(z_two_sided(), 2)
    4.89
    """
    return float(stats.norm.isf(alpha / 2))


def dlap_moments(b: float) -> tuple[float, float]:
    """Variance and excess kurtosis of the discrete Laplace ``DLap(b)``,
    ``P(k) ∝ exp(-|k|/b)``, summed from its pmf.

    >>> var, kurt = dlap_moments(2.0)
    >>> round(var, 3), round(kurt, 2)
    (7.835, 3.13)
    """
    p = math.exp(-1.0 / b)
    top = int(math.ceil(60 * b)) + 10  # p**top < 1e-26
    k = np.arange(-top, top + 1, dtype=float)
    pmf = (1 - p) / (1 + p) * p ** np.abs(k)
    var = float((pmf * k**2).sum())
    m4 = float((pmf * k**4).sum())
    return var, m4 / var**2 - 3


def mean_bound(sd: float, n: int, alpha: float = ALPHA) -> float:
    """Half-width of a two-sided normal test of a mean of ``n`` draws with
    standard deviation ``sd`` (central limit theorem)."""
    return z_two_sided(alpha) * sd / math.sqrt(n)


def variance_ratio_bounds(
    n: int, excess_kurtosis: float, alpha: float = ALPHA
) -> tuple[float, float]:
    """Bounds on ``sample variance / true variance`` of ``n`` iid draws.

    Normal approximation: the sample variance has relative standard
    deviation ``sqrt(2/(n-1) + kurtosis/n)``; for Laplace-like noise
    (excess kurtosis 3) and ``n = 20000`` that is 1.6%, so the bounds are
    about +-7.7% at ``alpha = 1e-6``.
    """
    sd = math.sqrt(2 / (n - 1) + excess_kurtosis / n)
    z = z_two_sided(alpha)
    return 1 - z * sd, 1 + z * sd


def gaussian_sd_ratio_bounds(
    n: int, alpha: float = ALPHA
) -> tuple[float, float]:
    """Exact bounds on ``np.std(x) / sigma`` for ``n`` iid ``N(mu,
    sigma^2)`` draws (``n * np.std(x)**2 / sigma**2 ~ chi2(n - 1)``).

    >>> lo, hi = gaussian_sd_ratio_bounds(4000)
    >>> round(lo, 3), round(hi, 3)
    (0.946, 1.055)
    """
    lo = stats.chi2.ppf(alpha / 2, n - 1) / n
    hi = stats.chi2.isf(alpha / 2, n - 1) / n
    return math.sqrt(lo), math.sqrt(hi)


def t_bound(sd: float, n: int, alpha: float = ALPHA) -> float:
    """Half-width of a two-sided t test of a mean of ``n`` draws whose
    standard deviation ``sd`` is estimated from the same draws."""
    return float(stats.t.isf(alpha / 2, n - 1)) * sd / math.sqrt(n)


def assert_dlap_moments(samples: np.ndarray, b: float) -> None:
    """A sample of ``DLap(b)`` has mean 0 and its exact variance, within
    the normal-approximation bounds at ``ALPHA`` (:func:`mean_bound`,
    :func:`variance_ratio_bounds` with the exact kurtosis)."""
    var, kurtosis = dlap_moments(b)
    assert abs(samples.mean()) < mean_bound(math.sqrt(var), len(samples))
    lo, hi = variance_ratio_bounds(len(samples), kurtosis, ALPHA)
    assert lo < samples.var() / var < hi
