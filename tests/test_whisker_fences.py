"""The whiskers' fence ranges are computed for every group at once (the
noise quantiles of all groups' node pairs in one selection): the numbers
must be those of the former loop, one group at a time, bit for bit, as a
kept cell is a threshold decision that no rounding may move."""

from __future__ import annotations

import numpy as np
import pytest
from fence_reference import MODELS, fence_ranges_by_group, histograms

from plotnine_private.stats import whiskers
from plotnine_private.stats.noise_bands import band_quantiles, cdf_band


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("shape", ["wide", "narrow", "mixed"])
@pytest.mark.parametrize(
    ("level", "coef"), [(0.95, 1.5), (0.9833, 0.0), (0.8, 3.0)]
)
def test_fences_of_all_groups_are_the_loops_bit_for_bit(
    model, shape, level, coef
):
    rng = np.random.default_rng(
        [list(MODELS).index(model), ["wide", "narrow", "mixed"].index(shape)]
    )
    noise = MODELS[model]
    edges, noisy = histograms(shape, noise, rng)
    f_low, f_high = cdf_band(noisy, noise, level)
    (q1l, q3l), (q1h, q3h) = (
        b.T for b in band_quantiles(edges, f_low, f_high, [0.25, 0.75])
    )
    args = (edges, noisy, noise, level, coef, (q1l, q1h), (q3l, q3h))
    got = whiskers.fence_ranges(*args)
    want = fence_ranges_by_group(*args)
    for g_box, w_box in zip(got, want):
        for g, w in zip(g_box, w_box):
            assert np.array_equal(g, w), (model, shape, level, coef)


def test_fences_selected_in_small_chunks_are_the_same(monkeypatch):
    # a few groups a selection (as with many boxes): the same numbers
    rng = np.random.default_rng(5)
    noise = MODELS["discrete_laplace"]
    edges, noisy = histograms("mixed", noise, rng)
    f_low, f_high = cdf_band(noisy, noise, 0.95)
    (q1l, q3l), (q1h, q3h) = (
        b.T for b in band_quantiles(edges, f_low, f_high, [0.25, 0.75])
    )
    args = (edges, noisy, noise, 0.95, 1.5, (q1l, q1h), (q3l, q3h))
    whole = whiskers.fence_ranges(*args)
    monkeypatch.setattr(whiskers, "CHUNK_CELLS", 1)
    chunked = whiskers.fence_ranges(*args)
    want = fence_ranges_by_group(*args)
    assert np.array_equal(np.ravel(whole), np.ravel(want))
    assert np.array_equal(np.ravel(chunked), np.ravel(want))
