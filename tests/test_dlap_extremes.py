"""The exact discrete Laplace at the ends of eps (1e-6 to 1e12).

At scales below about 1/44 (eps above about 88 at Δ = 2) even the first
threshold ``f_1 = floor(2**63 T_1)`` is 0: the inversion table is empty,
and a head in the table's bucket 0 (one cell in 65,536) raised an
IndexError looking up the entry below it. These tests drive every branch
of the inversion (a pure bucket, a searched bucket, a head on an entry, a
head of 0, an empty table) with chosen heads, and check the law at the
ends of eps on real streams against the exact pmf. The 1e8-draw run is
``python benchmarks/dlap_extremes.py``.
"""

from __future__ import annotations

import bisect
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from alpha import ALPHA
from scipy import stats
from test_streams_v2 import _magnitude_by_definition, _ScriptedStreams

import plotnine_private as pp
from plotnine_private.mechanisms.samplers import dlap_inversion as inv
from plotnine_private.mechanisms.samplers import laplace as lap
from plotnine_private.mechanisms.streams.places import PlaceStreams
from plotnine_private.mechanisms.streams.randomness import (
    cell_words,
    derive_key,
    master_key,
)
from plotnine_private.mechanisms.streams.versions import cell_streams

#: u below this is in bucket 0 of the index (the top 16 of 63 bits are 0)
BUCKET0 = 1 << 47
TOP = (1 << 63) - 1


def _tail(m: int, t: int, s: int) -> float:
    """``P(|N| >= m)`` of DLap(t/s), m >= 1 (floats: for expected counts)."""
    x = s / t
    return 2 * math.exp(-m * x) / (1 + math.exp(-x))


def _law_test(samples: np.ndarray, t: int, s: int) -> tuple[float, float]:
    """Chi-square statistic of ``samples`` against DLap(t/s), and the
    bound it must stay below at ALPHA.

    Cells: 0, and bands of magnitudes ``[a, b)`` of each sign holding
    about equal shares of ``P(|N| >= 1)``, the last open; where fewer
    than 10 nonzero draws are expected the nonzero draws are one Poisson
    count instead (returned as a statistic of 0 or inf)."""
    n = samples.size
    t1 = _tail(1, t, s)
    if n * t1 < 10:
        nonzero = int(np.count_nonzero(samples))
        lo = stats.poisson.ppf(ALPHA / 2, n * t1)
        hi = stats.poisson.isf(ALPHA / 2, n * t1)
        return (0.0 if lo <= nonzero <= hi else math.inf), 1.0
    x = s / t
    edges = [1]
    for k in range(1, 12):  # tail shares 11/12 ... 1/12 of T_1
        m = 1 + math.ceil(-math.log(1 - k / 12) / x)
        if m > edges[-1] and n * _tail(m, t, s) / 2 >= 5:
            edges.append(m)
    obs = [int((samples == 0).sum())]
    exp = [n * (1 - t1)]
    mag = np.abs(samples)
    for a, b in zip(edges, [*edges[1:], None]):
        inside = (mag >= a) if b is None else ((mag >= a) & (mag < b))
        share = _tail(a, t, s) - (0.0 if b is None else _tail(b, t, s))
        for sign in (samples > 0, samples < 0):
            obs.append(int((inside & sign).sum()))
            exp.append(n * share / 2)
    o, e = np.array(obs, float), np.array(exp)
    chi2 = float(((o - e) ** 2 / e).sum())
    return chi2, float(stats.chi2.isf(ALPHA, len(o) - 1))


def test_dp_table_of_20000_levels_at_eps_1e9_draws_every_cell():
    # the call: before the fix this seed raised IndexError (a
    # cell's head fell in bucket 0 of an empty table)
    levels = [f"L{i}" for i in range(20000)]
    df = pd.DataFrame({"x": pd.Categorical(levels, categories=levels)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.PrivacyWarning)
        out = pp.dp_table(df, "x", eps=1e9, seed=2)
    assert len(out) == 20000 and (out["count"] == 1).all()


@pytest.mark.parametrize(
    "t, s", [(1, 45), (2, 91), (1, 50), (1, 500_000_000), (1, 10**12)]
)
def test_heads_of_an_empty_table_draw_zero_and_zero_heads_read_on(t, s):
    table = inv.inversion_table(t, s)
    assert table is not None and table.size == 0
    rng = np.random.default_rng(t + s % 1000)
    us = [1, 2, BUCKET0 - 1, BUCKET0, TOP]
    us += rng.integers(1, BUCKET0, 200).tolist()
    heads = [(u << 1) | (i & 1) for i, u in enumerate(us)]
    # a head of 0 (U below 2**-63), each sign, then words that decide it
    # after one, two and three more words
    more = {
        len(heads): [int(rng.integers(1, 2**63))],
        len(heads) + 1: [0, int(rng.integers(1, 2**63))],
        len(heads) + 2: [0, 0, int(rng.integers(1, 2**63))],
    }
    heads += [0, 1, 0]
    streams = _ScriptedStreams(np.array(heads, dtype=np.uint64), more)
    got = inv.discrete_laplace_inversion(streams, table, np.arange(len(heads)))
    assert (got[: len(us)] == 0).all()
    for cell, words in more.items():
        digits = 0
        for w in words:
            digits = (digits << 64) | w
        want = _magnitude_by_definition(t, s, digits, 63 + 64 * len(words))
        assert abs(int(got[cell])) == want
        # every word was read: the last one decided it
        assert next(streams._more[cell], None) is None
    # U below 2**-191 is below T_1 = 2 e^-45 / (1 + e^-45) (about
    # 2**-64) at t/s = 1/45: the three-word head is not 0
    if (t, s) == (1, 45):
        assert got[len(heads) - 1] != 0


def _decided_reference(table, u: int) -> int:
    """``#{m : u < f_m}``, from the entries as Python integers."""
    asc = table.ascending.tolist()
    return len(asc) - bisect.bisect_right(asc, u)


EPS_GRID = [
    1e-6,
    1e-5,
    1e-4,
    5e-4,
    0.00134,  # near the largest table (b = 1,492 at Δ = 2)
    0.01,
    1 / 3,
    1.0,
    10.0,
    43.0,
    87.0,  # one entry at Δ = 2
    88.0,  # the first empty table at Δ = 2
    89.0,
    1e3,
    123456.789,
    1e6,
    1e9,
    1e12,
]


@pytest.mark.parametrize("eps", EPS_GRID)
@pytest.mark.parametrize("sens", [1, 2])
def test_every_kind_of_head_is_drawn_at_every_eps(eps, sens):
    t, s = lap.rational_scale(sens, eps)
    table = inv.inversion_table(t, s)
    if table is None:  # b above ~1,500: CKS on the cells' bodies
        key = derive_key(master_key(31), "cks ends", eps, sens)
        for version in (1, 2):
            streams = cell_streams(key, cell_words(np.arange(500)), version)
            draws = lap.discrete_laplace(streams, (t, s))
            assert draws.dtype == np.int64 and draws.shape == (500,)
        return
    rng = np.random.default_rng(sens)
    asc = table.ascending.tolist()
    picks = asc[:3] + asc[-3:] + asc[:: max(1, len(asc) // 20)]
    us = {1, 2, BUCKET0 - 1, BUCKET0, BUCKET0 + 1, TOP}
    for f in picks:
        us |= {f - 1, f + 1}
    us |= set(rng.integers(1, 2**63, 300).tolist())
    us |= set(rng.integers(1, BUCKET0, 100).tolist())
    decided = sorted(u for u in us if 1 <= u <= TOP and u not in set(asc))
    on_entry = sorted(set(picks))
    heads = [(u << 1) | (u & 1) for u in decided]
    heads += [(f << 1) | 1 for f in on_entry] + [0]
    more = {
        len(decided) + i: [int(w) for w in rng.integers(1, 2**63, 4)]
        for i in range(len(on_entry) + 1)
    }
    streams = _ScriptedStreams(np.array(heads, dtype=np.uint64), more)
    got = inv.discrete_laplace_inversion(streams, table, np.arange(len(heads)))
    want = [_decided_reference(table, u) for u in decided]
    signs = [-1 if u & 1 else 1 for u in decided]
    assert got[: len(decided)].tolist() == [g * m for g, m in zip(signs, want)]
    for i, u in enumerate([*on_entry, 0]):
        cell = len(decided) + i
        it = iter(more[cell])
        first = _decided_reference(table, u) + 1
        mag = inv._exact_magnitude(u, lambda it=it: next(it), t, s, first)
        sign = -1 if heads[cell] & 1 else 1
        assert int(got[cell]) == sign * mag


def _bucket0_sample(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    u = rng.integers(1, BUCKET0, n, dtype=np.uint64)
    return (u << np.uint64(1)) | rng.integers(0, 2, n, dtype=np.uint64)


class _Heads:
    """Streams whose heads are given (vectorised; no further words)."""

    version = 2

    def __init__(self, heads: np.ndarray):
        self.n, self._heads = heads.size, heads

    def words(self, idx=None) -> np.ndarray:
        return self._heads if idx is None else self._heads[idx]


def _bucket0_chi_square(mags: np.ndarray, t: int, s: int):
    """Chi-square of magnitudes given U < 2**-16 (u in bucket 0):
    ``P(|N| >= m | U < 2**-16) = min(1, 2**16 T_m)``."""
    cond = [min(1.0, _tail(m, t, s) * 2**16) if m else 1.0 for m in range(8)]
    lo = max(m for m in range(8) if cond[m] == 1.0)
    obs, exp = [], []
    n = mags.size
    for m in range(lo, 7):
        obs.append(int((mags == m).sum()))
        exp.append(n * (cond[m] - cond[m + 1]))
    obs.append(int((mags >= 7).sum()))
    exp.append(n * cond[7])
    keep = [i for i, e in enumerate(exp) if e >= 5]
    rest = [i for i in range(len(exp)) if i not in keep]
    o = [obs[i] for i in keep] + [sum(obs[i] for i in rest)]
    e = [exp[i] for i in keep] + [sum(exp[i] for i in rest)]
    if e[-1] < 5:  # no draw expected beyond: must be none (ALPHA-sized)
        assert o[-1] <= stats.poisson.isf(ALPHA, max(e[-1], 1e-300))
        o, e = o[:-1], e[:-1]
    o_, e_ = np.array(o, float), np.array(e)
    return float(((o_ - e_) ** 2 / e_).sum()), len(o) - 1


@pytest.mark.parametrize("t, s", [(1, 5), (1, 20), (2, 91)])
def test_heads_in_bucket_zero_follow_the_exact_conditional_law(t, s):
    # the branch that failed, drawn 200,000 times: U uniform below 2**-16
    table = inv.inversion_table(t, s)
    heads = _bucket0_sample(200_000, seed=s)
    got = inv.discrete_laplace_inversion(_Heads(heads), table, None)
    mags = np.abs(got)
    if table.size == 0:
        assert (mags == 0).all()
        return
    chi2, df = _bucket0_chi_square(mags, t, s)
    assert df >= 1 and chi2 < stats.chi2.isf(ALPHA, df)
    signed = got[got != 0]
    assert abs((signed > 0).mean() - 0.5) < 5 * 0.5 / math.sqrt(signed.size)


def test_the_bucket_zero_test_rejects_a_scale_off_by_five_percent():
    table = inv.inversion_table(1, 5)
    heads = _bucket0_sample(200_000, seed=5)
    mags = np.abs(inv.discrete_laplace_inversion(_Heads(heads), table, None))
    # as if the scale were 1/5.25 (t, s = 4, 21)
    chi2, df = _bucket0_chi_square(mags, 4, 21)
    assert chi2 > stats.chi2.isf(ALPHA, df)


def _real(version: int, n: int, *parts) -> object:
    key = derive_key(master_key(2027), "ends of eps", *parts)
    if version == 3:
        return PlaceStreams(key, b"ends of eps domain", n)
    return cell_streams(key, cell_words(np.arange(n)), version)


@pytest.mark.parametrize(
    "eps, version, n",
    [
        (1e-6, 1, 50_000),  # b = 2e6: CKS vector automaton
        (1e-6, 3, 50_000),  # CKS on the place bodies
        (1e-3, 2, 50_000),  # b = 2,000: just past the largest table
        (0.00134, 3, 100_000),  # the largest table
        (10.0, 3, 100_000),  # b = 0.2
        (24.0, 2, 100_000),  # b = 1/12: a two-entry table
        (88.0, 3, 150_000),  # empty tables from here on
        (1e9, 3, 150_000),
        (1e12, 2, 150_000),
        (1e12, 1, 50_000),
    ],
)
def test_real_streams_at_the_ends_of_eps_follow_the_exact_law(eps, version, n):
    # 950,000 draws in all; at eps >= 88 about 7 heads fall in bucket 0
    # of an empty table (the IndexError), and every draw must be 0: the
    # chance of another value is below 2e-19 per draw
    t, s = lap.rational_scale(2, eps)
    draws = lap.discrete_laplace(_real(version, n, eps), (t, s))
    chi2, bound = _law_test(draws, t, s)
    assert chi2 < bound


def test_the_law_test_rejects_a_scale_off_by_five_percent():
    # negative controls: the same samples against a wrong scale
    t, s = lap.rational_scale(2, 1e-6)
    draws = lap.discrete_laplace(_real(1, 50_000, 1e-6), (t, s))
    chi2, bound = _law_test(draws, t * 105, s * 100)
    assert chi2 > bound
    t, s = lap.rational_scale(2, 10.0)
    draws = lap.discrete_laplace(_real(3, 100_000, 10.0), (t, s))
    chi2, bound = _law_test(draws, t * 105, s * 100)
    assert chi2 > bound
