"""A box plot's intervals read the CDF band at two levels (the quartiles'
at ``level``, the Tukey whiskers' at ``whiskers.band_level``) from one
simulation of the deviations. Each band must be, bit for bit, the band
simulated for itself (``fence_reference.plain_cdf_band``: fresh draws,
``np.quantile``), and the stat's interval columns those of computing
each statement apart, as before the simulation was shared: a quartile's
or a whisker's bound is a threshold decision that no rounding may
move."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from fence_reference import (
    MODELS,
    SHAPES,
    histograms,
    plain_cdf_band,
    plain_deviations,
)

from plotnine_private.stats import whiskers
from plotnine_private.stats.boxplot import stat_boxplot_dp
from plotnine_private.stats.fine_histogram import FineHistogram
from plotnine_private.stats.intervals import LINEAR_SIMS, NoiseModel
from plotnine_private.stats.noise_bands import (
    band_quantiles,
    cdf_bands,
    cdf_deviations,
)
from plotnine_private.stats.simulated_noise import tail_quantiles

#: (level, coef); 0.5 takes the quantiles by a partition of every draw,
#: the others from the extreme blocks
CASES = [(0.95, 1.5), (0.9833, 0.0), (0.8, 3.0), (0.5, 1.5)]


#: every noise with every level and coef, the shapes taken in turn so that
#: every pair of noise, shape and level meets once (12 cases, not 36: the
#: suite's time is bounded)
EVERY_CASE = pytest.mark.parametrize(
    ("model", "shape", "level", "coef"),
    [
        (m, SHAPES[(i + j) % len(SHAPES)], lv, c)
        for i, m in enumerate(MODELS)
        for j, (lv, c) in enumerate(CASES)
    ],
)


def _case(model: str, shape: str):
    rng = np.random.default_rng([list(MODELS).index(model), 7])
    return histograms(shape, MODELS[model], rng)


@EVERY_CASE
def test_both_bands_of_one_simulation_are_each_band_alone(
    model, shape, level, coef
):
    noise = MODELS[model]
    _, noisy = _case(model, shape)
    levels = (level, whiskers.band_level(noise, level))
    got = cdf_bands(noisy, noise, levels)
    for (lo, hi), at in zip(got, levels):
        want_lo, want_hi = plain_cdf_band(noisy, noise, at)
        assert np.array_equal(lo, want_lo), (model, shape, at)
        assert np.array_equal(hi, want_hi), (model, shape, at)


@EVERY_CASE
def test_box_intervals_are_those_of_each_statement_apart(
    model, shape, level, coef
):
    # the stat (its DP class; the noise model says DP or CKM) against its
    # statements computed one by one: the quartiles inverted from the
    # plain band at the level, the whiskers from their own band
    noise = MODELS[model]
    edges, noisy = _case(model, shape)
    k = len(edges) - 1
    stat = stat_boxplot_dp(
        limits=(0, 50), bins=k, level=level, coef=coef, eps=1
    )
    info = pd.DataFrame(
        {"PANEL": pd.Categorical(np.ones(len(noisy), int))}
    ).assign(group=np.arange(1, len(noisy) + 1))
    hist = FineHistogram(edges, np.maximum(noisy, 0), noisy, info)
    stat.build = SimpleNamespace(fine=hist)
    out = stat.curve(hist)
    stat.curve_intervals(out, hist, noise)
    f_low, f_high = plain_cdf_band(noisy, noise, level)
    # the stat's default: the records' own quartiles and whiskers
    q_low, q_high = band_quantiles(
        edges, f_low, f_high, [0.25, 0.5, 0.75], covers="data"
    )
    want = {
        col: (q_low[:, i], q_high[:, i])
        for i, col in enumerate(("lower", "middle", "upper"))
    }
    # tukey_bounds drawing its own band, as the whiskers did
    want.update(
        whiskers.tukey_bounds(edges, noisy, noise, level, coef, covers="data")
    )
    for col, (low, high) in want.items():
        low, high = (np.clip(v, edges[0], edges[-1]) for v in (low, high))
        assert np.array_equal(out[f"{col}_low"].to_numpy(), low), col
        assert np.array_equal(out[f"{col}_high"].to_numpy(), high), col
    # and the whiskers' own band is the plain one
    plain = plain_cdf_band(noisy, noise, whiskers.band_level(noise, level))
    again = whiskers.tukey_bounds(
        edges, noisy, noise, level, coef, plain, covers="data"
    )
    for col in ("ymin", "ymax"):
        for got, kept in zip(again[col], want[col]):
            assert np.array_equal(got, kept), col


def test_several_pairs_of_tail_cuts_are_numpys_quantiles():
    # one selection serves the cuts of several levels, through the
    # extreme blocks or a partition of every value, whatever their order
    rng = np.random.default_rng(31)
    for trial in range(300):
        sims = int(rng.choice([40, 400, 1999, 2000, 4096]))
        x = rng.normal(size=(int(rng.integers(1, 4)), 5, sims))
        if trial % 3 == 1:
            x = np.round(x * 2)  # many ties
        elif trial % 3 == 2:
            odd = rng.random(x.shape) < 0.0005
            x[odd] = rng.choice([np.nan, np.inf, -np.inf], size=odd.sum())
        halves = rng.choice([0.0025, 0.0075, 0.025, 0.05, 0.25, 0.3], 3)
        cuts = [c for h in halves for c in (float(h), 1 - float(h))]
        cuts = list(rng.permutation(cuts))
        with np.errstate(invalid="ignore"):
            want = np.quantile(x, cuts, axis=-1)
            got = tail_quantiles(x.copy(), cuts)
        assert np.array_equal(got, want, equal_nan=True), (trial, cuts)


def test_a_released_ckm_zero_is_not_noise_free():
    # a p-table moves small counts to 0, so a released 0 may hide a true
    # 1..D: every fine bin of a CKM curve is simulated noisy (a band
    # simulated with the released 0s noise-free is narrower there), for
    # whole and fractional noise values alike (the plain band of each)
    whole = MODELS["ckm"]
    half = NoiseModel("ckm", values=(-0.5, 0.0, 0.5), probs=(0.2, 0.6, 0.2))
    _, noisy = _case("ckm", "mixed")
    assert (noisy == 0).any()
    for model in (whole, half):
        lo, hi = cdf_bands(noisy, model, (0.9,))[0]
        want_lo, want_hi = plain_cdf_band(noisy, model, 0.9)
        np.testing.assert_allclose(lo, want_lo, atol=1e-12)
        np.testing.assert_allclose(hi, want_hi, atol=1e-12)
    # the group of one record (one nonzero bin among 0s): its band below
    # that bin is no longer the point 0
    lo, hi = cdf_bands(noisy, whole, (0.9,))[0]
    k = noisy.shape[1]
    assert hi[1, k // 2 - 1] > 0


@pytest.mark.parametrize("model", [*MODELS, "fractional"])
def test_deviations_at_the_nodes_are_each_group_written_out(model):
    # the whiskers read the CDF's deviations at a few edges of every
    # group at once (the shared draws' running sums, under DP and CKM):
    # each group's deviations written out in full, at those edges
    noise = MODELS.get(model) or NoiseModel(
        "ckm", values=(-0.5, 0.0, 1.5), probs=(0.3, 0.5, 0.2)
    )
    _, noisy = _case("ckm" if model == "fractional" else model, "mixed")
    rng = np.random.default_rng(2)
    at = rng.integers(0, noisy.shape[1] + 1, size=(len(noisy), 5))
    got = cdf_deviations(noisy, noise, at)
    assert got.shape == (len(noisy), 5, LINEAR_SIMS)
    for g, row in enumerate(noisy):
        want = plain_deviations(row, noise).T[at[g]]
        if model == "fractional":  # sums in another order: not exact
            np.testing.assert_allclose(got[g], want, rtol=0, atol=1e-12)
        else:
            assert np.array_equal(got[g], want), (model, g)
