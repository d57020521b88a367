"""Exact discrete Gaussian (CKS20): sampler, privacy map, calibration."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from alpha import ALPHA
from scipy import stats

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.samplers import discrete_gaussian as dg
from plotnine_private.mechanisms.streams.randomness import (
    CellStreams,
    cell_words,
    derive_key,
    master_key,
)


def _streams(n, *name):
    key = derive_key(master_key(7), "discrete gaussian test", *name)
    return CellStreams(key, cell_words(np.arange(n)))


def _chi_square(samples, sigma2):
    """Chi-square of the samples against the exact pmf; cells with an
    expected count below 5 are pooled into two tails."""
    n = len(samples)
    k_max = 0
    while n * dg.discrete_gaussian_pmf(np.array([k_max + 1]), sigma2)[0] >= 5:
        k_max += 1
    ks = np.arange(-k_max, k_max + 1)
    expected = n * dg.discrete_gaussian_pmf(ks, sigma2)
    tail = (n - expected.sum()) / 2
    observed = np.array([(samples == k).sum() for k in ks])
    obs = np.concatenate(
        [observed, [(samples < -k_max).sum(), (samples > k_max).sum()]]
    )
    exp = np.concatenate([expected, [tail, tail]])
    return ((obs - exp) ** 2 / exp).sum(), len(obs) - 1


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(2), 9, 40])
def test_sampler_matches_exact_pmf(sigma2):
    samples = dg.discrete_gaussian(_streams(60000, float(sigma2)), sigma2)
    assert samples.dtype == np.int64
    chi2, df = _chi_square(samples, float(sigma2))
    assert chi2 < stats.chi2.isf(ALPHA, df)


def test_chi_square_rejects_a_wrong_sigma():
    # negative control: variance 9 tested as if it were 7.5
    samples = dg.discrete_gaussian(_streams(60000, "neg"), Fraction(9))
    chi2, df = _chi_square(samples, 7.5)
    assert chi2 > stats.chi2.isf(ALPHA, df)


def test_a_cell_draw_depends_on_its_own_stream_only():
    all_cells = dg.discrete_gaussian(_streams(50, "own"), Fraction(16))
    some = np.array([3, 17, 40])
    alone = dg.discrete_gaussian(_streams(50, "own"), Fraction(16), some)
    assert alone.tolist() == all_cells[some].tolist()


def test_rational_variance_rounds_up_with_a_short_denominator():
    for sigma in (0.3, 1.0, 3.7, 48.05, 2000.1):
        s2 = dg.rational_variance(sigma)
        assert s2 >= Fraction(sigma) ** 2
        assert float(s2) / sigma**2 - 1 < 2e-6
        assert s2.denominator <= 2**20
    with pytest.raises(ParameterError, match="sigma"):
        dg.rational_variance(0)


def test_huge_variance_is_refused():
    with pytest.raises(ParameterError, match="larger eps"):
        dg.discrete_gaussian(_streams(2, "big"), Fraction(10**9))


@pytest.mark.parametrize(
    ("eps", "delta", "sens"),
    [
        (0.1, 1e-5, math.sqrt(2)),
        (0.5, 1e-6, math.sqrt(2)),
        (1.0, 1e-5, 1.0),
        (3.0, 1e-9, math.sqrt(2)),
    ],
)
def test_calibration_is_tight(eps, delta, sens):
    sigma = dg.discrete_gaussian_sigma(eps, delta, sens)
    assert dg.discrete_gaussian_delta(sigma**2, eps, sens) <= delta
    smaller = sigma * (1 - 1e-6)
    assert dg.discrete_gaussian_delta(smaller**2, eps, sens) > delta
    # the variance actually sampled still satisfies the bound
    s2 = float(dg.rational_variance(sigma))
    assert dg.discrete_gaussian_delta(s2, eps, sens) <= delta


def test_conversion_matches_a_direct_search_and_the_simple_bound():
    rho, eps = 0.05, 1.0
    alphas = np.linspace(1.001, 60, 200000)
    direct = np.exp(
        (alphas - 1) * (alphas * rho - eps)
        + alphas * np.log1p(-1 / alphas)
        - np.log(alphas - 1)
    ).min()
    assert dg.zcdp_delta(rho, eps) == pytest.approx(direct, rel=1e-6)
    assert dg.zcdp_delta(rho, eps) <= direct * (1 + 1e-9)
    # never looser than the simple eps = rho + 2 sqrt(rho ln(1/delta))
    simple = math.exp(-(((eps - rho) / 2) ** 2) / rho)
    assert dg.zcdp_delta(rho, eps) < simple


def test_rho_is_delta_squared_over_two_sigma_squared():
    assert dg.zcdp_rho(4.0, 2.0) == 0.5
    assert dg.zcdp_rho(1.0, math.sqrt(2)) == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [0, -1, float("nan")])
def test_bad_eps_is_named(bad):
    with pytest.raises(ParameterError, match="eps"):
        dg.discrete_gaussian_sigma(bad, 1e-5, 1.0)
    with pytest.raises(ParameterError, match="delta"):
        dg.discrete_gaussian_sigma(1.0, 1.5, 1.0)
