"""The exact discrete Laplace sampler and its keyed random streams."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from alpha import ALPHA, dlap_moments, mean_bound, variance_ratio_bounds
from scipy import stats

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.samplers import laplace as lap
from plotnine_private.mechanisms.streams.randomness import (
    CellStreams,
    cell_words,
    chacha_block,
    derive_key,
    keyed_uniform,
    master_key,
    siphash24,
    siphash24_128,
)


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


@pytest.mark.parametrize("scale", [(1, 2), (2, 1), (20, 1), (4, 3)])
def test_discrete_laplace_matches_exact_pmf(scale):
    b = scale[0] / scale[1]
    samples = lap.discrete_laplace(_streams(100000, "pmf", b), scale)
    chi2, df = _chi_square_pmf(samples, b)
    assert chi2 < stats.chi2.isf(ALPHA, df)
    # symmetric, mean 0, exact variance 2p/(1-p)^2: normal-approximation
    # tests at ALPHA (the variance one with the exact kurtosis)
    var, kurtosis = dlap_moments(b)
    assert var == pytest.approx(lap.dlap_variance(b))
    assert abs(samples.mean()) < mean_bound(math.sqrt(var), len(samples))
    lo, hi = variance_ratio_bounds(len(samples), kurtosis, ALPHA)
    assert lo < samples.var() / var < hi


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


# --- stream primitives: reference vectors ---------------------------------


def _ref_key():
    k = bytes(range(16))
    return (
        np.uint64(int.from_bytes(k[:8], "little")),
        np.uint64(int.from_bytes(k[8:], "little")),
    )


@pytest.mark.parametrize(
    "length, tag",
    [
        (0, "a3817f04ba25a8e66df67214c7550293"),
        (8, "3b62a9ba6258f5610f83e264f31497b4"),
        (16, "6ee2a4ca67b054bbfd3315bf85230577"),
    ],
)
def test_siphash128_matches_reference_vectors(length, tag):
    # SipHash-2-4 with 16-byte output (reference vectors_sip128):
    # key 00..0f, message 00..(len-1)
    k0, k1 = _ref_key()
    msg = np.frombuffer(bytes(range(length)), "<u8").reshape(1, -1)
    out = siphash24_128(k0, k1, msg)[0]
    assert out.astype("<u8").tobytes().hex() == tag


def _rfc_nonce(hexstr):
    return np.frombuffer(bytes.fromhex(hexstr), "<u4").reshape(3, 1)


def test_chacha20_block_matches_rfc8439():
    # RFC 8439 section 2.3.2: key 00..1f, counter 1
    out = chacha_block(
        bytes(range(32)),
        [1],
        _rfc_nonce("000000090000004a00000000"),
        rounds=20,
    )
    assert out[:, 0].astype("<u4").tobytes().hex() == (
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
    )
    # RFC 8439 appendix A.1, test vector 1: zero key, nonce and counter
    out = chacha_block(bytes(32), [0], _rfc_nonce("00" * 12), rounds=20)
    assert out[:, 0].astype("<u4").tobytes().hex() == (
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
    )


def _chacha_scalar(key: bytes, counter: int, nonce: list, rounds: int):
    """Plain-integer ChaCha block, written from RFC 8439 section 2.3."""
    mask = 0xFFFFFFFF
    x = [
        *np.frombuffer(b"expand 32-byte k", "<u4").tolist(),
        *np.frombuffer(key, "<u4").tolist(),
        counter,
        *nonce,
    ]
    x = [int(a) for a in x]
    init = list(x)

    def rotl(a, b):
        return ((a << b) | (a >> (32 - b))) & mask

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & mask
        x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & mask
        x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & mask
        x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & mask
        x[b] = rotl(x[b] ^ x[c], 7)

    for _ in range(rounds // 2):
        qr(0, 4, 8, 12), qr(1, 5, 9, 13), qr(2, 6, 10, 14), qr(3, 7, 11, 15)
        qr(0, 5, 10, 15), qr(1, 6, 11, 12), qr(2, 7, 8, 13), qr(3, 4, 9, 14)
    return [(a + b) & mask for a, b in zip(x, init)]


@pytest.mark.parametrize("rounds", [8, 12, 20])
def test_vector_chacha_matches_plain_reference(rounds):
    # one vector code serves ChaCha20 (checked above) and fewer rounds
    key = bytes(range(100, 132))
    counters = np.array([0, 1, 7, 2**32 - 1])
    nonce = np.array(
        [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 2**32 - 1]], dtype=np.uint32
    )
    out = chacha_block(key, counters, nonce, rounds)
    for i in range(4):
        ref = _chacha_scalar(
            key, int(counters[i]), nonce[:, i].tolist(), rounds
        )
        assert out[:, i].tolist() == ref
    with pytest.raises(ValueError, match="counter"):
        chacha_block(key, [2**32], nonce[:, :1], rounds)


def test_stream_words_are_uniform_and_independent():
    # the sampler reads the low 31 bits of each 32-bit word for a draw and
    # the top bit as the sign: both parts, and the 16 words of a block,
    # must behave as independent uniform bits
    blk = _streams(20000, "words").blocks()  # (16, 20000) uint32
    top = (blk >> 31).astype(np.int64)
    low = ((blk & 0x7FFFFFFF) >> 28).astype(np.int64)  # 3 high low bits
    table = np.zeros((2, 8))
    np.add.at(table, (top.ravel(), low.ravel()), 1)
    chi2, p, dof, _ = stats.chi2_contingency(table)
    assert p > ALPHA
    expected = blk.size / 16
    nib = np.bincount((blk & 0xF).ravel(), minlength=16)  # lowest bits
    assert ((nib - expected) ** 2 / expected).sum() < stats.chi2.isf(ALPHA, 15)
    u = blk.astype(np.float64)
    corr = np.corrcoef(u)  # words 0..15 against each other
    assert np.abs(corr[~np.eye(16, dtype=bool)]).max() < 0.04
    assert abs(np.corrcoef(top[0], low[0])[0, 1]) < 0.04


def test_streams_advance_only_for_the_cells_drawn():
    full = lap.discrete_laplace(_streams(4000, "adv"), (2, 1))
    s = _streams(4000, "adv")
    first = lap.discrete_laplace(s, (2, 1), np.arange(0, 4000, 2))
    assert np.array_equal(first, full[::2])
    again = lap.discrete_laplace(s, (2, 1))
    assert np.array_equal(again[1::2], full[1::2])  # untouched cells
    # drawn cells continue with fresh blocks: a second, independent draw
    same = np.mean(again[::2] == full[::2])
    assert same < 0.2  # P(two independent DLap(2) agree) = 0.13


# --- the sampler: vector automaton vs. plain reference ---------------------


@pytest.mark.parametrize(
    "scale", [(2, 1), (1, 1), (1, 2), (20, 1), (4, 3), (7, 5), (1000, 1)]
)
def test_vector_sampler_equals_scalar_reference(scale):
    # every cell's value is the plain-integer CKS20 sampler run on that
    # cell's own stream; the vector automaton is only a faster evaluation
    plan = lap._Plan(*scale)
    assert plan.vector
    fast = lap.discrete_laplace(_streams(1500, "ref"), scale)
    s = _streams(1500, "ref")
    slow = [lap._dlap_scalar(read, plan) for read in _readers(s, 1500)]
    assert fast.tolist() == slow


def _readers(streams, n):
    """Each cell's scalar word reader, its first block fetched for all
    cells in one ChaCha pass (one cell at a time costs some 70 numpy
    calls on arrays of one): the same words, read one by one, and any
    further block fetched by the reader itself."""
    first = streams.block_at(np.arange(n), 0)
    for c in range(n):
        read = lap._Reader(streams, c)
        read.buf, read.blocks = first[:, c].tolist(), 1
        yield read


def test_method_choice():
    assert lap._Plan(2, 1).direct  # b = 2: Bernoulli(exp(-1/2)) trials
    assert not lap._Plan(20, 1).direct  # b = 20: CKS20 U + t V
    assert not lap._Plan(1, 2).direct  # s > t: CKS20 only
    assert not lap._Plan(1, 2).has_a  # t = 1: U = 0, no draw


def test_long_chains_are_finished_exactly(monkeypatch):
    # chains longer than the vector tables go to the scalar sampler; with
    # tables of 2 positions that happens often, and changes nothing
    # (1000 cells a scale, of which 300-450 are finished by the scalar
    # sampler: counted, so that the comparison cannot become vacuous)
    words = np.arange(1000, dtype=np.uint64)
    key = derive_key(master_key(5), "over")
    scalar = lap._dlap_scalar
    finished = []

    def counted(read, plan):
        finished.append(1)
        return scalar(read, plan)

    for scale in [(2, 1), (20, 1), (1, 2)]:
        want = lap.discrete_laplace(CellStreams(key, words), scale)
        monkeypatch.setattr(lap, "_K", 2)
        monkeypatch.setattr(lap, "_dlap_scalar", counted)
        finished.clear()
        got = lap.discrete_laplace(CellStreams(key, words), scale)
        monkeypatch.undo()
        assert np.array_equal(want, got)
        assert len(finished) >= 200, (scale, len(finished))


def test_huge_scale_takes_the_scalar_path():
    scale = (2**40 + 1, 3)  # bounds beyond 31 bits: multi-word draws
    assert not lap._Plan(*scale).vector
    a = lap.discrete_laplace(_streams(200, "huge"), scale)
    b = lap.discrete_laplace(_streams(200, "huge"), scale)
    assert np.array_equal(a, b)
    mean_abs = np.abs(a).mean() / (scale[0] / scale[1])
    # for a large scale |X| is Exponential(b) (up to O(1/b)): the mean of
    # 200 is Gamma(200, b/200); exact two-sided bounds at ALPHA
    lo = stats.gamma.ppf(ALPHA / 2, len(a)) / len(a)
    hi = stats.gamma.isf(ALPHA / 2, len(a)) / len(a)
    assert lo < mean_abs < hi
