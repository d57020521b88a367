"""Exact discrete Gaussian noise for integer counts, with its privacy map.

Guarantee. Adding independent discrete Gaussian noise ``N_Z(0, s2)``,
``P(k) ∝ exp(-k**2 / (2 s2))`` on the integers, to every cell of an
integer vector whose L2 sensitivity is ``Delta`` satisfies
``rho``-zCDP with ``rho = Delta**2 / (2 s2)`` (Canonne, Kamath & Steinke
2020, "The Discrete Gaussian for Differential Privacy", Thm 14: the same
rho as the continuous Gaussian; zCDP adds up over coordinates). It is
turned into ``(eps, delta)``-DP with the conversion of CKS20 Cor 13::

    delta = inf over a > 1 of
            exp((a - 1)(a rho - eps)) / (a - 1) * (1 - 1/a)**a

Any ``a`` gives a valid bound, so a numerically imperfect minimum over
``a`` can only overstate delta (:func:`zcdp_delta`).
:func:`discrete_gaussian_sigma` calibrates: the smallest ``sigma`` whose
delta at ``eps`` is at most the target, with ``sigma**2`` then rounded
*up* to the exact rational actually sampled (:func:`rational_variance`).
Under replace-one a record moves one unit from one cell to another:
``Delta**2 = 2``, ``rho = 1/s2``; under add/remove ``Delta = 1``.

Sampler (CKS20 Alg. 3, with Alg. 1 for the Bernoulli trials), integers
only: ``t = floor(sigma) + 1``; draw ``Y ~ DLap(t)`` with the project's
exact discrete Laplace sampler, accept it with probability
``exp(-(|Y| - s2/t)**2 / (2 s2))``, else draw again. Every Bernoulli
trial compares an exactly uniform integer of the cell's keyed stream with
an integer numerator, so the output is an exact draw of ``N_Z(0, s2)``
(given ideal streams) and no floating-point value touches it: the
precision attacks on float samplers (Mironov 2012) do not apply. Each
cell reads only its own stream, so its noise does not depend on the other
cells. Running time depends on the output (irrelevant offline).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import ParameterError
from ..streams.randomness import CellStreams
from .gaussian import _check_eps_delta
from .laplace import discrete_laplace

__all__ = [
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_gaussian_pmf",
    "discrete_gaussian_sigma",
    "rational_variance",
    "zcdp_delta",
    "zcdp_rho",
]

#: significant bits kept when sigma**2 is rounded up to a dyadic rational
_VARIANCE_BITS = 20
#: every uniform draw needs a bound below 2**62 (``CellStreams``); the
#: Bernoulli denominators ``2 a q t**2`` must stay well below that
_MAX_DENOMINATOR = 1 << 56


def rational_variance(sigma: float) -> Fraction:
    """``sigma**2`` rounded *up* to a dyadic rational with about 20
    significant bits: the variance parameter actually sampled.

    Rounding up only adds noise, so a calibration for ``sigma`` still
    holds. The short denominator keeps every Bernoulli trial of the
    sampler within one exact uniform draw.

    >>> rational_variance(2.0)
    Fraction(4, 1)
    >>> rational_variance(0.1) >= 0.1**2
    True
    """
    sigma = float(sigma)
    if not (math.isfinite(sigma) and sigma > 0):
        raise ParameterError(
            f"sigma must be a finite number > 0, got {sigma!r}"
        )
    s2 = Fraction(sigma) ** 2
    shift = max(0, _VARIANCE_BITS - math.floor(s2).bit_length())
    q = 1 << shift
    a = -((-s2.numerator * q) // s2.denominator)  # ceil(s2 * q)
    return Fraction(a, q)


def _bernoulli_exp_below_one(
    streams: CellStreams, num: np.ndarray, den: np.ndarray, cells: np.ndarray
) -> np.ndarray:
    """Bernoulli(exp(-num/den)) per cell, ``0 <= num <= den`` (CKS20
    Alg. 1): draw Bernoulli(gamma/k) for k = 1, 2, ... until the first
    failure; succeed iff that k is odd."""
    out = np.zeros(cells.size, dtype=bool)
    k = np.ones(cells.size, dtype=np.int64)
    live = np.arange(cells.size)
    while live.size:
        u = streams.uniform_below(den[live] * k[live], cells[live])
        go_on = u < num[live]
        k[live[go_on]] += 1
        stop = live[~go_on]
        out[stop] = k[stop] % 2 == 1
        live = live[go_on]
    return out


def _bernoulli_exp(
    streams: CellStreams, num: list[int], den: int, cells: np.ndarray
) -> np.ndarray:
    """Bernoulli(exp(-num_i/den)) per cell for any ``num_i >= 0`` (CKS20
    Alg. 1): ``floor(gamma)`` Bernoulli(exp(-1)) trials must all succeed,
    then one Bernoulli(exp(-frac(gamma)))."""
    whole = np.array([n // den for n in num], dtype=np.int64)
    rest = np.array([n % den for n in num], dtype=np.int64)
    ok = np.ones(cells.size, dtype=bool)
    ones = np.ones(cells.size, dtype=np.int64)
    done = 0
    while True:
        todo = np.flatnonzero(ok & (whole > done))
        if not todo.size:
            break
        ok[todo] = _bernoulli_exp_below_one(
            streams, ones[todo], ones[todo], cells[todo]
        )
        done += 1
    todo = np.flatnonzero(ok & (rest > 0))
    if todo.size:
        dens = np.full(todo.size, den, dtype=np.int64)
        ok[todo] = _bernoulli_exp_below_one(
            streams, rest[todo], dens, cells[todo]
        )
    return ok


def discrete_gaussian(
    streams: CellStreams,
    sigma2: Fraction,
    cells: np.ndarray | None = None,
) -> np.ndarray:
    """Exact ``N_Z(0, sigma2)`` integers, one per selected cell (CKS20
    Alg. 3).

    Parameters
    ----------
    streams
        Per-cell keyed random streams; each cell reads its own only.
    sigma2
        The variance parameter, an exact rational (see
        :func:`rational_variance`).
    cells
        Indices of the cells to draw for (default: all).

    Returns
    -------
    int64 array with ``P(k) ∝ exp(-k**2 / (2 sigma2))``.
    """
    s2 = Fraction(sigma2)
    if s2 <= 0:
        raise ParameterError(f"sigma2 must be > 0, got {s2}")
    a, q = s2.numerator, s2.denominator
    t = math.isqrt(a // q) + 1  # floor(sigma) + 1
    den = 2 * a * q * t * t
    if den >= _MAX_DENOMINATOR:
        raise ParameterError(
            f"discrete Gaussian variance {float(s2):.4g} is too large for "
            "the exact sampler; use a larger eps (or delta)"
        )
    if cells is None:
        cells = np.arange(streams.n)
    cells = np.asarray(cells, dtype=np.int64).ravel()
    out = np.zeros(cells.size, dtype=np.int64)
    pending = np.arange(cells.size)
    while pending.size:
        y = discrete_laplace(streams, (t, 1), cells[pending])
        # exp(-(|y| - s2/t)**2 / (2 s2)) = exp(-num/den), in integers
        num = [(abs(int(v)) * t * q - a) ** 2 for v in y]
        accept = _bernoulli_exp(streams, num, den, cells[pending])
        out[pending[accept]] = y[accept]
        pending = pending[~accept]
    return out


def discrete_gaussian_pmf(k: np.ndarray, sigma2: float) -> np.ndarray:
    """Probability mass of ``N_Z(0, sigma2)`` at integers ``k`` (the
    normalising sum runs over ``|j| <= 40 sigma + 10``).

    >>> round(float(discrete_gaussian_pmf(np.array([0]), 1.0)[0]), 6)
    0.398942
    """
    s2 = float(sigma2)
    top = int(40 * math.sqrt(s2)) + 10
    j = np.arange(-top, top + 1, dtype=float)
    norm = np.exp(-(j**2) / (2 * s2)).sum()
    kk = np.asarray(k, dtype=float)
    return np.exp(-(kk**2) / (2 * s2)) / norm


def zcdp_rho(sigma2: float, sensitivity_l2: float) -> float:
    """``rho = Delta**2 / (2 sigma2)`` (CKS20 Thm 14).

    >>> zcdp_rho(1.0, math.sqrt(2))
    1.0000000000000002
    """
    return float(sensitivity_l2) ** 2 / (2.0 * float(sigma2))


def _log_delta(alpha: float, rho: float, eps: float) -> float:
    return (
        (alpha - 1) * (alpha * rho - eps)
        + alpha * math.log1p(-1 / alpha)
        - math.log(alpha - 1)
    )


def zcdp_delta(rho: float, eps: float) -> float:
    """delta of ``rho``-zCDP at ``eps`` by the CKS20 Cor 13 conversion.

    The infimum over ``a > 1`` is searched numerically; the value
    returned is the bound at the ``a`` found, which is a valid delta for
    any ``a`` (never below the true infimum).

    >>> round(zcdp_delta(0.5, 1.0), 3)
    0.247
    """
    if not (rho > 0 and eps >= 0):
        raise ParameterError(f"need rho > 0 and eps >= 0, got {rho}, {eps}")
    # the optimum is near a = (eps + rho) / (2 rho) (first-order term)
    guess = max((eps + rho) / (2 * rho), 1 + 1e-9)
    hi = max(4 * guess, 4.0)
    # scipy.optimize is imported here, not at the top: it costs about a
    # second of every `import plotnine_private` and few plots calibrate
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        _log_delta,
        bounds=(1 + 1e-12, hi),
        args=(rho, eps),
        method="bounded",
        options={"xatol": 1e-10 * hi},
    )
    best = min(float(res.fun), _log_delta(guess, rho, eps))
    return min(1.0, math.exp(best))


def discrete_gaussian_delta(
    sigma2: float, eps: float, sensitivity_l2: float
) -> float:
    """delta of ``N_Z(0, sigma2)`` noise on an integer vector of L2
    sensitivity ``sensitivity_l2`` at ``eps`` (zCDP, CKS20 Cor 13)."""
    return zcdp_delta(zcdp_rho(sigma2, sensitivity_l2), eps)


def discrete_gaussian_sigma(
    eps: float, delta: float, sensitivity_l2: float
) -> float:
    """Smallest ``sigma`` (rounded up) whose discrete Gaussian is
    ``(eps, delta)``-DP by :func:`discrete_gaussian_delta`.

    >>> s = discrete_gaussian_sigma(1.0, 1e-5, math.sqrt(2))
    >>> discrete_gaussian_delta(s * s, 1.0, math.sqrt(2)) <= 1e-5
    True
    """
    _check_eps_delta(eps, delta, sensitivity_l2)
    target = math.log(delta)

    def excess(s: float) -> float:
        d = discrete_gaussian_delta(s * s, eps, sensitivity_l2)
        return (math.log(d) if d > 0 else -math.inf) - target

    lo = hi = float(sensitivity_l2)
    while excess(hi) > 0:
        lo, hi = hi, hi * 2.0
    while excess(lo) <= 0:
        hi, lo = lo, lo / 2.0
    from scipy.optimize import brentq  # lazily, as above

    sigma = brentq(excess, lo, hi, xtol=1e-13 * hi, rtol=1e-13)
    sigma *= 1.0 + 1e-12
    while excess(sigma) > 0:
        sigma *= 1.0 + 1e-9
    return float(sigma)
