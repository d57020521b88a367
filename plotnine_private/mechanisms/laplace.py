"""Laplace-type noise for counts: exact discrete Laplace and continuous.

Guarantee (discrete Laplace). Adding ``DLap(b)`` noise, ``P(k) ∝
exp(-|k|/b)``, independently to every cell of a count vector whose L1
sensitivity is ``Δ`` gives ``ε``-DP when ``b >= Δ/ε``. With a *public* cell
domain (every cell released, empty ones included) this is pure ε-DP; the
domain itself (levels, bin edges) must not depend on the data. Sensitivity:
``Δ = 1`` when neighbouring data sets differ by adding or removing one
record (``adjacency="add_remove"``), ``Δ = 2`` when one record is replaced
(``adjacency="replace"``, DPpack's ``tableDP`` default).

The sampler is Canonne, Kamath & Steinke (2020), Algorithms 1-2, run on
integers only: ``ε`` is turned into an exact rational, every Bernoulli trial
compares an exactly uniform integer with an integer numerator, and the
output is an integer. No floating-point value touches the noise, so the
attacks on float Laplace samplers (Mironov 2012) do not apply. Running time
depends on the output (a timing side channel, irrelevant offline).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .errors import ParameterError
from .randomness import CellStreams

__all__ = [
    "ADJACENCY_SENSITIVITY",
    "dlap_pmf",
    "dlap_variance",
    "discrete_laplace",
    "exact_epsilon",
    "laplace",
    "rational_scale",
    "threshold_for",
]

#: L1 sensitivity of a histogram (one record is in one cell) per adjacency.
ADJACENCY_SENSITIVITY = {"replace": 2, "add_remove": 1}

_EPS_DENOMINATOR = 2**20


def exact_epsilon(eps: float) -> Fraction:
    """The rational ε actually used: never larger than ``eps``.

    A short decimal (``0.1``, ``1.25``) is taken exactly as written;
    anything else is rounded *down* to a multiple of 2**-20, which can only
    add noise.

    >>> exact_epsilon(0.1)
    Fraction(1, 10)
    >>> exact_epsilon(1 / 3) <= 1 / 3
    True
    """
    eps = float(eps)
    if not math.isfinite(eps) or eps <= 0:
        raise ParameterError(
            f"eps must be a finite number > 0, got {eps!r}; "
            "typical values are 0.1 to 5"
        )
    decimal = Fraction(repr(eps))
    if decimal.denominator <= 10**6 and decimal.numerator <= 10**12:
        return decimal
    rounded = Fraction(math.floor(eps * _EPS_DENOMINATOR), _EPS_DENOMINATOR)
    if rounded <= 0:
        raise ParameterError(
            f"eps={eps!r} is below 2**-20; such a budget drowns every count "
            "in noise: use a larger eps"
        )
    return rounded


def rational_scale(sensitivity: int, eps: float) -> tuple[int, int]:
    """Laplace scale ``Δ/ε`` as a reduced fraction ``(t, s)``, ``b = t/s``.

    >>> rational_scale(2, 1.0)
    (2, 1)
    >>> rational_scale(1, 0.5)
    (2, 1)
    """
    b = Fraction(int(sensitivity)) / exact_epsilon(eps)
    return b.numerator, b.denominator


def _bernoulli_exp(
    streams: CellStreams, cells: np.ndarray, num, den: int
) -> np.ndarray:
    """Bernoulli(exp(-num/den)) per cell, for 0 <= num/den <= 1 (CKS Alg 1).

    For k = 1, 2, ... draw Bernoulli(γ/k) until the first failure; the
    result is 1 iff that k is odd.
    """
    num = np.broadcast_to(np.asarray(num, dtype=np.int64), cells.shape)
    k = np.ones(cells.shape, dtype=np.int64)
    active = np.arange(cells.size)
    while active.size:
        draw = streams.uniform_below(den * k[active], cells[active])
        success = draw < num[active]
        k[active[success]] += 1
        active = active[success]
    return (k % 2) == 1


def _geometric_exp1(streams: CellStreams, cells: np.ndarray) -> np.ndarray:
    """Number of Bernoulli(exp(-1)) successes before the first failure."""
    v = np.zeros(cells.shape, dtype=np.int64)
    active = np.arange(cells.size)
    while active.size:
        ok = _bernoulli_exp(streams, cells[active], 1, 1)
        v[active[ok]] += 1
        active = active[ok]
    return v


def _uniform_accepted(
    streams: CellStreams, cells: np.ndarray, t: int
) -> np.ndarray:
    """U uniform on {0..t-1}, accepted with probability exp(-U/t)."""
    u = np.empty(cells.shape, dtype=np.int64)
    pending = np.arange(cells.size)
    while pending.size:
        cand = streams.uniform_below(t, cells[pending])
        ok = _bernoulli_exp(streams, cells[pending], cand, t)
        u[pending[ok]] = cand[ok]
        pending = pending[~ok]
    return u


def discrete_laplace(
    streams: CellStreams,
    scale: tuple[int, int],
    cells: np.ndarray | None = None,
) -> np.ndarray:
    """Exact DLap(t/s) integers, one per selected cell (CKS20 Alg. 2).

    Parameters
    ----------
    streams
        Per-cell keyed random streams.
    scale
        ``(t, s)`` with the Laplace scale ``b = t/s`` (see
        :func:`rational_scale`).
    cells
        Indices of the cells to draw for (default: all).

    Returns
    -------
    int64 array with ``P(k) = (1-p)/(1+p) p^|k|``, ``p = exp(-s/t)``.
    """
    t, s = int(scale[0]), int(scale[1])
    if t <= 0 or s <= 0:
        raise ParameterError(f"scale must be a positive fraction, got {t}/{s}")
    if cells is None:
        cells = np.arange(streams.n)
    cells = np.asarray(cells, dtype=np.int64)
    out = np.empty(cells.shape, dtype=np.int64)
    todo = np.arange(cells.size)
    while todo.size:
        c = cells[todo]
        u = _uniform_accepted(streams, c, t)
        v = _geometric_exp1(streams, c)
        y = (u + t * v) // s
        negative = streams.uniform_below(2, c) == 1
        retry = negative & (y == 0)  # zero would be counted twice
        value = np.where(negative, -y, y)
        out[todo[~retry]] = value[~retry]
        todo = todo[retry]
    return out


def laplace(
    streams: CellStreams, scale: float, cells: np.ndarray | None = None
) -> np.ndarray:
    """Continuous Laplace(0, scale) floats by inversion (DPpack-style).

    Offered only to replicate tools that use it (DPpack's
    ``LaplaceMechanism``); floating-point Laplace is open to precision
    attacks, so the default for counts is :func:`discrete_laplace`.
    """
    u = streams.uniform(cells) - 0.5
    return -float(scale) * np.sign(u) * np.log1p(-2.0 * np.abs(u))


def dlap_pmf(k: np.ndarray, scale: float) -> np.ndarray:
    """Probability mass of DLap(scale) at integers ``k``.

    >>> float(dlap_pmf(np.array([0]), 1.0)[0])  # (1-p)/(1+p), p=e^-1
    0.46211715726000974
    """
    p = math.exp(-1.0 / scale)
    return (1 - p) / (1 + p) * p ** np.abs(np.asarray(k))


def dlap_variance(scale: float) -> float:
    """Variance ``2p/(1-p)^2`` of DLap(scale), ``p = exp(-1/scale)``."""
    p = math.exp(-1.0 / scale)
    return 2 * p / (1 - p) ** 2


def threshold_for(
    eps: float, delta: float, adjacency: str, noise: str = "discrete_laplace"
) -> float:
    """Smallest display threshold that makes an unknown-domain release
    (ε, δ)-DP.

    A cell that exists in one neighbouring data set only has true count 1
    there and is absent (never released) in the other. Keeping a cell iff
    its noisy count is ``>= τ`` bounds the chance that such a cell appears
    by ``δ / k``, with ``k`` the number of cells one record can create:
    1 under add/remove, 2 under replace (Karwa & Vadhan 2018; the
    add/remove form of specs/dp-mechanisms.md §5).

    Discrete Laplace, ``p = exp(-ε/Δ)``: ``P(N >= m) = p^m / (1+p)``, so
    ``τ = 1 + ceil(Δ ln(k / ((1+p) δ)) / ε)``. Continuous Laplace:
    ``P(N > m) = exp(-m ε/Δ) / 2``, so ``τ = 1 + Δ ln(k / (2δ)) / ε``.

    >>> threshold_for(1.0, 1e-6, "add_remove")
    15.0
    """
    sens = ADJACENCY_SENSITIVITY[adjacency]
    k = 2 if adjacency == "replace" else 1
    eps_q = float(exact_epsilon(eps))
    if noise == "discrete_laplace":
        p = math.exp(-eps_q / sens)
        return 1.0 + math.ceil(sens * math.log(k / ((1 + p) * delta)) / eps_q)
    return 1.0 + sens * math.log(k / (2 * delta)) / eps_q
