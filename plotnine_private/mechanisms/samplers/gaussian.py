"""Gaussian mechanism calibration: analytic (Balle-Wang) and classical.

Privacy guarantee
-----------------
Adding ``N(0, sigma**2)`` noise to every coordinate of a vector-valued
query whose L2 sensitivity (under the chosen adjacency) is ``Delta``
gives ``(eps, delta)``-DP exactly when (Balle & Wang 2018, Thm 8)::

    delta >= Phi(Delta/(2 sigma) - eps sigma/Delta)
             - exp(eps) * Phi(-Delta/(2 sigma) - eps sigma/Delta)

:func:`analytic_gaussian_sigma` returns the smallest such ``sigma`` (up to
a rounding *up*, so that :func:`gaussian_delta` of the result is never
above the requested ``delta``). It is valid for every ``eps > 0``.
:func:`classic_gaussian_sigma` is the textbook bound
``Delta * sqrt(2 ln(1.25/delta)) / eps`` (Dwork & Roth, Thm A.1), which is
only proved for ``eps < 1``; it is kept to reproduce the R package dppca.
The sensitivity, adjacency and public parameters are the caller's to
state; these functions only calibrate.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import ParameterError

__all__ = [
    "RESOLUTION_STEPS",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "gaussian_delta",
    "gaussian_resolution",
    "gaussian_sigma",
    "round_to_resolution",
]

#: a real-valued Gaussian release is rounded to a grid at least this many
#: times finer than its sigma (see :func:`gaussian_resolution`)
RESOLUTION_STEPS = 1024


def _check_eps_delta(eps: float, delta: float, sensitivity: float) -> None:
    if not (isinstance(eps, (int, float, np.number)) and math.isfinite(eps)):
        raise ParameterError(f"eps must be a finite number > 0, got {eps!r}.")
    if eps <= 0:
        raise ParameterError(f"eps must be > 0, got {eps!r}.")
    if not (0 < delta < 1):
        raise ParameterError(
            f"delta must lie strictly between 0 and 1, got {delta!r}."
        )
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ParameterError(
            f"sensitivity must be a finite number > 0, got {sensitivity!r}."
        )


def gaussian_delta(sigma: float, eps: float, sensitivity: float) -> float:
    """Exact delta of the Gaussian mechanism (Balle & Wang 2018, Thm 8).

    Parameters
    ----------
    sigma
        Standard deviation of the noise (> 0).
    eps
        Privacy parameter epsilon (> 0).
    sensitivity
        L2 sensitivity of the query.

    Returns
    -------
    float
        The smallest delta for which ``N(0, sigma**2)`` noise is
        ``(eps, delta)``-DP.

    Examples
    --------
    >>> round(gaussian_delta(3.73, 1.0, 1.0), 7)
    1e-05
    """
    if not sigma > 0:
        raise ParameterError(f"sigma must be > 0, got {sigma!r}.")
    a = sensitivity / (2.0 * sigma)
    b = eps * sigma / sensitivity
    # imported here: scipy.special costs ~0.3 s, the package's whole
    # import budget, and plotnine does not import it
    from scipy.special import log_ndtr, ndtr

    # second term in log space: exp(eps) can overflow, Phi can underflow
    second = math.exp(eps + float(log_ndtr(-a - b)))
    return max(float(ndtr(a - b)) - second, 0.0)


def analytic_gaussian_sigma(
    eps: float, delta: float, sensitivity: float = 1.0
) -> float:
    """Smallest noise SD of the analytic Gaussian mechanism, rounded up.

    Solves ``gaussian_delta(sigma) = delta`` with Brent's method (the left
    side decreases in sigma), then steps sigma up until
    ``gaussian_delta(sigma) <= delta`` holds in floating point
    (Balle & Wang 2018, section 4).

    Parameters
    ----------
    eps, delta
        Privacy parameters, ``eps > 0`` and ``0 < delta < 1``.
    sensitivity
        L2 sensitivity of the query (> 0).

    Returns
    -------
    float
        sigma such that ``N(0, sigma**2)`` per coordinate is
        ``(eps, delta)``-DP for queries of that L2 sensitivity.

    Examples
    --------
    >>> round(analytic_gaussian_sigma(1.0, 1e-5), 2)
    3.73
    """
    _check_eps_delta(eps, delta, sensitivity)

    def excess(s: float) -> float:
        return gaussian_delta(s, eps, sensitivity) - delta

    lo = hi = float(sensitivity)
    while excess(hi) > 0:
        lo, hi = hi, hi * 2.0
    while excess(lo) <= 0:
        hi, lo = lo, lo / 2.0
        if lo < 1e-300:
            return hi
    # imported here: scipy.optimize takes longer to import than plotnine
    from scipy.optimize import brentq

    sigma = brentq(excess, lo, hi, xtol=1e-14 * hi, rtol=1e-14)
    # round up: never report a sigma whose delta exceeds the target
    sigma *= 1.0 + 1e-12
    while excess(sigma) > 0:
        sigma *= 1.0 + 1e-9
    return float(sigma)


def classic_gaussian_sigma(
    eps: float, delta: float, sensitivity: float = 1.0, *, warn: bool = True
) -> float:
    """Classical Gaussian calibration ``Delta sqrt(2 ln(1.25/delta))/eps``.

    Proved only for ``eps < 1`` (Dwork & Roth 2014, Thm A.1); for
    ``eps >= 1`` it can under-noise (e.g. eps=10, delta=1e-9), and a
    ``UserWarning`` says so unless ``warn=False``. Kept to reproduce dppca.

    Examples
    --------
    >>> round(classic_gaussian_sigma(0.5, 1e-5), 2)
    9.69
    """
    _check_eps_delta(eps, delta, sensitivity)
    if eps >= 1 and warn:
        warnings.warn(
            f"The classical Gaussian calibration is only proved for eps < 1 "
            f"(got eps={eps}); use calibration='analytic' for a valid "
            "(eps, delta) guarantee.",
            UserWarning,
            stacklevel=2,
        )
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / eps


def gaussian_sigma(
    eps: float,
    delta: float,
    sensitivity: float,
    calibration: str = "analytic",
) -> float:
    """Noise SD for ``calibration`` ``"analytic"`` or ``"classic"``."""
    if calibration == "analytic":
        return analytic_gaussian_sigma(eps, delta, sensitivity)
    if calibration == "classic":
        return classic_gaussian_sigma(eps, delta, sensitivity)
    raise ParameterError(
        f"calibration must be 'analytic' or 'classic', got {calibration!r}."
    )


def gaussian_resolution(sigma: float) -> float:
    """Public rounding grid of a real-valued release with noise SD
    ``sigma``: the largest power of two at most ``sigma / 1024``.

    Why: a float Gaussian sampler (inverse CDF of a 2**-53 uniform grid)
    reaches only some floats, and which ones depends on the true value, so
    its raw output can single out the value (Mironov 2012). Rounded to
    this grid every grid point within 7 sigma is reached from any true
    value: the float sampler's gaps exceed the grid only where the normal
    density is below ``2**-43`` (``|z| > 7.4``, probability below 1e-12).
    Rounding is post-processing of the ideal mechanism, so the claimed
    ``(eps, delta)`` is unchanged up to that tail. A power of two keeps
    the rounding exact in binary floating point.

    >>> gaussian_resolution(1.0) == 2.0**-10
    True
    >>> gaussian_resolution(0.007) == 2.0**-18
    True
    """
    if not (math.isfinite(sigma) and sigma > 0):
        raise ParameterError(f"sigma must be > 0, got {sigma!r}.")
    return 2.0 ** math.floor(math.log2(sigma / RESOLUTION_STEPS))


def round_to_resolution(values: np.ndarray, sigma: float) -> np.ndarray:
    """``values`` rounded to :func:`gaussian_resolution` of ``sigma``.

    >>> round_to_resolution(np.array([0.1234567]), 1.0).tolist()
    [0.123046875]
    """
    r = gaussian_resolution(sigma)
    return np.round(np.asarray(values, dtype=float) / r) * r
