"""The exact discrete Laplace sampler and its keyed random streams."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from plotnine_private.mechanisms import laplace as lap
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.randomness import (
    CellStreams,
    cell_words,
    derive_key,
    keyed_uniform,
    master_key,
    siphash24,
)

ALPHA = 1e-6


def _streams(n, *parts):
    key = derive_key(master_key(12345), "test", *parts)
    return CellStreams(key, np.arange(n, dtype=np.uint64))


def test_siphash_matches_reference_vectors():
    # SipHash-2-4 reference vectors: key 00..0f, message 00..(len-1)
    k = bytes(range(16))
    k0 = np.uint64(int.from_bytes(k[:8], "little"))
    k1 = np.uint64(int.from_bytes(k[8:], "little"))
    empty = np.zeros((1, 0), dtype=np.uint64)
    m8 = np.frombuffer(bytes(range(8)), "<u8")[None, :]
    m16 = np.frombuffer(bytes(range(16)), "<u8")[None, :]
    assert int(siphash24(k0, k1, empty)[0]) == 0x726FDB47DD0E0E31
    assert int(siphash24(k0, k1, m8)[0]) == 0x93F5F5799A932462
    assert int(siphash24(k0, k1, m16)[0]) == 0x3F2ACC7F57C29BDB


def test_a_cells_noise_depends_only_on_its_own_content():
    key = derive_key(master_key(7), "q")
    words = cell_words(["a", "b", "c", "d"])
    full = lap.discrete_laplace(CellStreams(key, words), (2, 1))
    part = lap.discrete_laplace(CellStreams(key, words[[1, 3]]), (2, 1))
    assert list(full[[1, 3]]) == list(part)


def test_different_seeds_and_queries_give_independent_noise():
    words = cell_words(np.arange(20000))
    a = lap.discrete_laplace(
        CellStreams(derive_key(master_key(1), "q"), words), (2, 1)
    )
    b = lap.discrete_laplace(
        CellStreams(derive_key(master_key(2), "q"), words), (2, 1)
    )
    c = lap.discrete_laplace(
        CellStreams(derive_key(master_key(1), "r"), words), (2, 1)
    )
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.05
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.05


def test_uniform_below_is_exactly_uniform():
    s = _streams(60000, "unif")
    draws = s.uniform_below(3)
    counts = np.bincount(draws, minlength=3)
    chi2 = ((counts - 20000) ** 2 / 20000).sum()
    assert chi2 < stats.chi2.isf(ALPHA, 2)


def _chi_square_pmf(samples, scale):
    k_max = 0
    n = len(samples)
    while n * lap.dlap_pmf(np.array([k_max + 1]), scale)[0] >= 5:
        k_max += 1
    ks = np.arange(-k_max, k_max + 1)
    expected = n * lap.dlap_pmf(ks, scale)
    p = math.exp(-1 / scale)
    tail = n * p ** (k_max + 1) / (1 + p)  # P(N >= k_max+1)
    observed = np.array([(samples == k).sum() for k in ks])
    obs_tails = [(samples < -k_max).sum(), (samples > k_max).sum()]
    obs = np.concatenate([observed, obs_tails])
    exp = np.concatenate([expected, [tail, tail]])
    chi2 = ((obs - exp) ** 2 / exp).sum()
    return chi2, len(obs) - 1


@pytest.mark.parametrize("scale", [(1, 2), (2, 1), (20, 1)])
def test_discrete_laplace_matches_exact_pmf(scale):
    b = scale[0] / scale[1]
    samples = lap.discrete_laplace(_streams(100000, "pmf", b), scale)
    chi2, df = _chi_square_pmf(samples, b)
    assert chi2 < stats.chi2.isf(ALPHA, df)
    # symmetric, mean 0, exact variance 2p/(1-p)^2
    se = math.sqrt(lap.dlap_variance(b) / len(samples))
    assert abs(samples.mean()) < 6 * se
    assert abs(samples.var() / lap.dlap_variance(b) - 1) < 0.05


def test_chi_square_rejects_the_wrong_scale():
    # negative control: noise of scale 2 tested as if it were scale 2.5
    samples = lap.discrete_laplace(_streams(100000, "neg"), (2, 1))
    chi2, df = _chi_square_pmf(samples, 2.5)
    assert chi2 > stats.chi2.isf(ALPHA, df)


def test_continuous_laplace_is_laplace():
    draws = lap.laplace(_streams(20000, "cont"), 2.0)
    ks = stats.kstest(draws, stats.laplace(scale=2.0).cdf)
    assert ks.statistic < 0.0190  # kstwo(20000).isf(1e-6)


def test_exact_epsilon_never_exceeds_eps():
    assert lap.exact_epsilon(0.1) == Fraction(1, 10)
    assert lap.exact_epsilon(2.5) == Fraction(5, 2)
    third = lap.exact_epsilon(1 / 3)
    assert third <= 1 / 3 and 1 / 3 - third < 2**-20
    assert lap.rational_scale(2, 1.0) == (2, 1)
    assert lap.rational_scale(1, 0.5) == (2, 1)


@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf"), 1e-9])
def test_bad_eps_is_refused(eps):
    with pytest.raises(ParameterError, match="eps"):
        lap.exact_epsilon(eps)


@pytest.mark.parametrize("adjacency", ["replace", "add_remove"])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_threshold_bounds_the_chance_a_new_cell_appears(eps, adjacency):
    delta = 1e-6
    tau = lap.threshold_for(eps, delta, adjacency)
    sens = lap.ADJACENCY_SENSITIVITY[adjacency]
    k = 2 if adjacency == "replace" else 1
    p = math.exp(-eps / sens)
    # a cell with true count 1 is shown iff 1 + N >= tau
    shown = p ** (tau - 1) / (1 + p)
    assert shown <= delta / k
    # and tau is the smallest such integer
    assert p ** (tau - 2) / (1 + p) > delta / k


def test_keyed_uniform_is_reproducible_and_in_open_interval():
    key = derive_key(master_key(3), "u")
    u = keyed_uniform(key, 1000)
    assert np.array_equal(u, keyed_uniform(key, 1000))
    assert u.min() > 0 and u.max() < 1
