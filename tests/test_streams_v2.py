"""Stream version 2: one SipHash head word per cell, the exact inversion
sampler, and the version a release records."""

from __future__ import annotations

import decimal
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from alpha import ALPHA, assert_dlap_moments
from keyfile import using_key
from plotnine import aes, geom_bar, ggplot
from scipy import stats
from test_discrete_gaussian import _chi_square as _chi_square_gauss
from test_mechanisms_laplace import _chi_square_pmf

import plotnine_private as pp
from plotnine_private import dp_table
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.release.engine import Query
from plotnine_private.mechanisms.samplers import discrete_gaussian as dg
from plotnine_private.mechanisms.samplers import dlap_inversion as inv
from plotnine_private.mechanisms.samplers import laplace as lap
from plotnine_private.mechanisms.streams.randomness import (
    CellStreams,
    cell_words,
    derive_key,
    master_key,
    siphash24,
)
from plotnine_private.mechanisms.streams.versions import (
    CellStreamsV2,
    cell_streams,
    stream_version,
    use_stream_version,
)


def _streams(n, *parts):
    key = derive_key(master_key(2026), "v2 test", *parts)
    return CellStreamsV2(key, cell_words(np.arange(n)))


@pytest.mark.parametrize("scale", [(1, 5), (1, 2), (2, 1), (20, 3), (40, 1)])
def test_inversion_matches_the_exact_pmf(scale):
    b = scale[0] / scale[1]
    samples = lap.discrete_laplace(_streams(200000, "pmf", b), scale)
    assert samples.dtype == np.int64
    chi2, df = _chi_square_pmf(samples, b)
    assert chi2 < stats.chi2.isf(ALPHA, df)
    assert_dlap_moments(samples, b)


@pytest.mark.parametrize("wrong", [1.9, 2.1])
def test_chi_square_rejects_a_scale_off_by_five_percent(wrong):
    samples = lap.discrete_laplace(_streams(200000, "neg"), (2, 1))
    chi2, df = _chi_square_pmf(samples, wrong)
    assert chi2 > stats.chi2.isf(ALPHA, df)


def test_huge_scale_uses_cks_on_the_cells_bodies():
    # b = 2000 would need a table of ~88,800 entries: CKS instead
    assert inv.inversion_table(2000, 1) is None
    samples = lap.discrete_laplace(_streams(20000, "huge"), (2000, 1))
    assert_dlap_moments(samples, 2000.0)


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(9), 40])
def test_discrete_gaussian_on_v2_streams_matches_its_pmf(sigma2):
    samples = dg.discrete_gaussian(
        _streams(60000, "dg", float(sigma2)), sigma2
    )
    chi2, df = _chi_square_gauss(samples, float(sigma2))
    assert chi2 < stats.chi2.isf(ALPHA, df)


def test_discrete_gaussian_v2_rejects_a_wrong_sigma():
    samples = dg.discrete_gaussian(_streams(60000, "dgneg"), Fraction(9))
    chi2, df = _chi_square_gauss(samples, 7.5)
    assert chi2 > stats.chi2.isf(ALPHA, df)


def _exact_floor(t, s, m, bits, prec=300):
    with decimal.localcontext() as ctx:
        ctx.prec = prec
        x1, xm = Decimal(s) / t, Decimal(s * m) / t
        return int(Decimal(2 << bits) * (-xm).exp() / (1 + (-x1).exp()))


@pytest.mark.parametrize("t, s", [(2, 1), (1, 5), (20, 3), (7, 1)])
def test_table_entries_are_the_exact_floors(t, s):
    table = inv.inversion_table(t, s)
    floors = table.ascending[::-1].tolist()
    # 80 digits: the floors of 20-digit numbers, 60 digits to spare
    want = [
        _exact_floor(t, s, m, 63, prec=80) for m in range(1, len(floors) + 2)
    ]
    assert floors == want[:-1] and want[-1] == 0  # the table ends at 0


def test_table_floors_by_recurrence_are_the_certified_floors(monkeypatch):
    # the table is built by T_m = T_(m-1) p, each entry certified; it must
    # hold _scaled_floor's integers (two exps per entry), the largest
    # table checked at 400 entries spread over it and at its end
    rng = np.random.default_rng(8)
    for t, s in [(2, 1), (20, 3), (7, 5), (1499, 1)]:
        floors = inv._table_floors(t, s, 63)
        every = len(floors) < 1000
        ms = (
            range(1, len(floors) + 1)
            if every
            else sorted(
                {
                    1,
                    2,
                    len(floors),
                    *rng.integers(1, len(floors), 400).tolist(),
                }
            )
        )
        assert [floors[m - 1] for m in ms] == [
            inv._scaled_floor(t, s, m, 63) for m in ms
        ]
        assert inv._scaled_floor(t, s, len(floors) + 1, 63) == 0
    # with too few digits to certify, entries come from _scaled_floor
    # (counted: the fallback ran) and are still the same integers
    fallback = []
    exact = inv._scaled_floor

    def counted(*args):
        fallback.append(args)
        return exact(*args)

    monkeypatch.setattr(inv, "_scaled_floor", counted)
    coarse = inv._table_floors(20, 3, 63, prec=21)
    monkeypatch.undo()
    assert len(fallback) >= 10
    assert coarse == inv._table_floors(20, 3, 63)


def _magnitude_by_definition(t, s, digits, bits):
    """#{m >= 1 : U < T_m} with U = digits / 2**bits, at high precision:
    the T_m fall, so it is the first m with U >= T_m, less one (found by
    doubling, then halving: a dozen floors, not a thousand)."""

    def below(m):  # U < T_m, decided at this precision
        f = _exact_floor(t, s, m, bits, prec=400)
        assert digits != f
        return digits < f

    hi = 1
    while below(hi):
        hi *= 2
    lo = hi // 2  # U < T_lo (T_0 = 2 / (1 + p) > 1 > U), U >= T_hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if below(mid) else (lo, mid)
    return lo


@pytest.mark.parametrize("t, s", [(2, 1), (20, 3)])
def test_undecided_heads_read_more_words_and_stay_exact(t, s):
    # a head equal to a table entry (probability ~2**-63) cannot be met
    # by chance: drive the exact path directly with chosen words
    table = inv.inversion_table(t, s)
    rng = np.random.default_rng(5)
    for f in table.ascending[[0, 3, -1]].tolist() + [0]:
        words = [int(w) for w in rng.integers(0, 2**63, 3)]
        it = iter(words)
        first = int((table.ascending > f).sum()) + 1
        got = inv._exact_magnitude(f, lambda: next(it), t, s, first)
        used = 3 - len(list(it))  # words read, at least one
        assert used >= 1
        digits = f
        for w in words[:used]:
            digits = (digits << 64) | w
        # U's first 63 + 64*used digits decide it: the magnitude of the
        # interval's lower end is the definition's
        want = _magnitude_by_definition(t, s, digits, 63 + 64 * used)
        assert got == want


def test_v2_head_is_siphash_of_the_cells_words():
    key = derive_key(master_key(1), "head")
    words = cell_words(np.arange(50), ["x"] * 50)
    streams = CellStreamsV2(key, words)
    k = streams._head_key
    assert streams.words().tolist() == siphash24(*k, words).tolist()
    # the second word of a cell comes from its body, not the head again
    again = streams.words(np.array([4]))
    assert int(again[0]) != int(siphash24(*k, words[4:5])[0])


def test_a_cells_v2_noise_depends_only_on_its_own_content():
    key = derive_key(master_key(7), "q")
    words = cell_words(["a", "b", "c", "d", "e"])
    full = lap.discrete_laplace(CellStreamsV2(key, words), (2, 1))
    order = [4, 1, 3]
    part = lap.discrete_laplace(CellStreamsV2(key, words[order]), (2, 1))
    assert full[order].tolist() == part.tolist()
    chunks = CellStreamsV2(key, words)
    one = [lap.discrete_laplace(chunks, (2, 1), [i])[0] for i in range(5)]
    assert one == full.tolist()


def test_v2_numbers_are_pinned():
    # stream version 2 is a published format: these numbers must never
    # change (a change of stream is a new version)
    key = derive_key(master_key(3), "pin")
    words = cell_words(np.arange(8))
    got = lap.discrete_laplace(CellStreamsV2(key, words), (2, 1))
    assert got.tolist() == [7, -2, 5, 1, -2, 2, -1, 2]
    got = lap.discrete_laplace(CellStreamsV2(key, words), (20, 3))
    assert got.tolist() == [22, -7, 18, 3, -8, 8, -4, 6]


def test_v1_numbers_are_unchanged():
    # drawn before version 2 existed (commit dec730f)
    key = derive_key(master_key(3), "pin")
    got = lap.discrete_laplace(
        CellStreams(key, cell_words(np.arange(8))), (2, 1)
    )
    assert got.tolist() == [1, 3, 1, 2, -6, 0, 0, 0]
    assert cell_streams(key, cell_words(np.arange(8)), 1).version == 1


_FRAME = pd.DataFrame(
    {"x": pd.Categorical(list("aabbbcd" * 3), categories=list("abcdefgh"))}
)


def test_v1_releases_reproduce_and_v2_is_another_release():
    default = stream_version()
    with use_stream_version(1):
        old = dp_table(_FRAME, "x", eps=1, seed=7)["count"].tolist()
        ident = Query.make("count", "data", 5, x="class").identity()
    # the numbers and identity of commit dec730f (before version 2)
    assert old == [6, 10, 3, 1, 0, 0, 1, 0]
    assert ident == "7ba89dca02d14a90d1400d80"
    assert stream_version() == default
    with use_stream_version(2):
        new = Query.make("count", "data", 5, x="class").identity()
    assert new != ident  # two versions of one query are two releases


def test_a_release_records_its_stream_version():
    p = ggplot(_FRAME, aes("x")) + geom_bar(stat="count_dp", eps=1, seed=3)
    for version in (1, 2, 3, 4):
        with use_stream_version(version):
            report = pp.privacy_report(p)
        rows = report.to_dict()["releases"]
        got = {r["stream_version"] for r in rows if r["layer"] != "total"}
        assert got == {version}


@pytest.mark.parametrize("bad", [0, 5, "2", True, 1.5])
def test_unknown_stream_version_is_refused(bad):
    with pytest.raises(ParameterError, match=r"one of \(1, 2, 3, 4\)"):
        use_stream_version(bad)
    assert stream_version() == 3


def test_the_bundle_tells_a_checker_the_stream_version(tmp_path):
    import json

    p = ggplot(_FRAME, aes("x")) + geom_bar(stat="count_dp", eps=1, seed=3)
    with use_stream_version(1), using_key():
        out = pp.save_release(p, tmp_path / "v1")
    meta = json.loads((out / "results.json").read_text())
    (rec,) = meta["results"].values()
    assert [r["stream_version"] for r in rec["properties"]["releases"]] == [1]


class _ScriptedStreams:
    """Streams whose words are given: a head per cell, then the cell's
    listed words (to put heads on a table entry, which chance cannot)."""

    version = 2

    def __init__(self, heads: np.ndarray, more: dict[int, list[int]]):
        self.n = len(heads)
        self._heads = heads
        self._used = np.zeros(self.n, dtype=bool)
        self._more = {c: iter(w) for c, w in more.items()}

    def words(self, idx=None) -> np.ndarray:
        idx = np.arange(self.n) if idx is None else np.asarray(idx)
        out = np.empty(len(idx), dtype=np.uint64)
        for k, c in enumerate(idx.tolist()):
            if self._used[c]:
                out[k] = next(self._more[c])
            else:
                out[k] = self._heads[c]
                self._used[c] = True
        return out


def test_every_cell_read_at_once_draws_what_the_chunks_draw():
    # 150,000 cells (three chunks); three heads sit on table entries and
    # read more words: both ways give the same numbers, and the exact
    # magnitudes there
    table = inv.inversion_table(2, 1)
    rng = np.random.default_rng(11)
    heads = rng.integers(0, 2**64, size=150_000, dtype=np.uint64)
    odd = {5: 0, 70_000: 3, 149_999: -1}
    more = {}
    for cell, entry in odd.items():
        f = int(table.ascending[entry])
        heads[cell] = np.uint64((f << 1) | (cell & 1))
        more[cell] = [int(w) for w in rng.integers(0, 2**63, 4)]
    cells = np.arange(len(heads))
    at_once = inv.discrete_laplace_inversion(
        _ScriptedStreams(heads, more), table, None
    )
    chunked = inv.discrete_laplace_inversion(
        _ScriptedStreams(heads, more), table, cells
    )
    assert np.array_equal(at_once, chunked)
    for cell, entry in odd.items():
        f = int(table.ascending[entry])
        it = iter(more[cell])
        first = int((table.ascending > f).sum()) + 1
        mag = inv._exact_magnitude(f, lambda it=it: next(it), 2, 1, first)
        assert at_once[cell] == (-mag if cell & 1 else mag)
