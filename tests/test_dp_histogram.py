"""Grid, counts and private histograms (dp-pca spec, section 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from alpha import ALPHA, gaussian_sd_ratio_bounds

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.pca.histogram import (
    ALL_ZERO_MESSAGE,
    gaussian_counts,
    gaussian_histogram,
    grid_counts,
    grouped_counts,
    grouped_histograms,
    histogram_sigma,
    private_histogram,
    score_grid,
    sparse_counts,
    sparse_histogram,
    sparse_threshold,
)
from plotnine_private.mechanisms.samplers.discrete_gaussian import (
    discrete_gaussian,
    discrete_gaussian_sigma,
    rational_variance,
)
from plotnine_private.mechanisms.samplers.gaussian import (
    classic_gaussian_sigma,
)
from plotnine_private.mechanisms.streams.randomness import (
    cell_words,
    derive_key,
)
from plotnine_private.mechanisms.streams.versions import cell_streams


def key(label):
    """A fixed stream key for a test (the engine derives real ones)."""
    return derive_key(bytes(32), "test", label)


BIG = 1e9


def test_grid_rows_are_y_outer():
    g = score_grid((0, 3), (10, 12), (3, 2))
    assert g.size == 6
    assert g.xmin.tolist() == [0, 1, 2, 0, 1, 2]
    assert g.ymin.tolist() == [10, 10, 10, 11, 11, 11]
    assert np.all(g.xmax - g.xmin == 1)


def test_bins_are_right_closed_first_closed_and_clamped():
    g = score_grid((0, 2), (0, 2), 2)
    # x: 0 -> bin0 (closed), 1 -> bin0 (right-closed), 1+e -> bin1
    x = [0.0, 1.0, 1.0 + 1e-12, 2.0, -5.0, 7.0]
    y = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    c = grid_counts(x, y, g)
    assert c.tolist() == [3, 3, 0, 0]
    assert c.sum() == len(x)


def test_counts_sum_to_n_with_out_of_frame_points():
    rng = np.random.default_rng(1)
    x, y = rng.normal(0, 5, size=(2, 1000))
    c = grid_counts(x, y, score_grid((-1, 1), (-1, 1), (7, 4)))
    assert c.sum() == 1000
    assert c.size == 28


@pytest.mark.parametrize("bins", [0, (3, 0), (2.5, 3), "a", (1, 2, 3)])
def test_bad_bins(bins):
    with pytest.raises(ParameterError, match="bins"):
        score_grid((0, 1), (0, 1), bins)


def test_bad_limits():
    with pytest.raises(ParameterError, match="xlim"):
        score_grid((1, 1), (0, 1), 3)


def test_add_large_eps_is_empirical():
    c = np.array([5, 0, 3, 2])
    p = gaussian_histogram(c, BIG, 1e-6, key=key(1))
    # analytic sigma ~ sqrt(2)/sqrt(2 eps) ~ 3e-5 counts at eps = 1e9
    assert p == pytest.approx(c / c.sum(), abs=1e-4)


def _dg_noise(label, size, sigma):
    """The discrete Gaussian noise the histogram draws for ``key(label)``
    (on streams of the current version, as the histogram does)."""
    streams = cell_streams(
        derive_key(key(label), "discrete_gaussian_histogram"),
        cell_words(np.arange(size)),
    )
    return discrete_gaussian(streams, rational_variance(sigma))


def test_add_noises_every_cell_with_expected_sigma():
    c = np.zeros(4000) + 100
    eps, delta = 0.5, 1e-5
    raw = gaussian_counts(c, eps, delta, key=key("t"))
    sigma = histogram_sigma(eps, delta)
    assert sigma == pytest.approx(
        discrete_gaussian_sigma(eps, delta, math.sqrt(2)), rel=1e-5
    )
    noise = raw - c
    # integer noise, exactly the discrete Gaussian of the release's streams
    assert np.array_equal(noise, np.round(noise))
    assert noise.tolist() == _dg_noise("t", c.size, sigma).tolist()
    p = gaussian_histogram(c, eps, delta, key=key("t"))
    assert p == pytest.approx(raw / raw.sum())
    # empirical SD: the chi-square bound of a normal sample at ALPHA (the
    # discrete Gaussian at sigma ~ 11 has the normal's SD to 1e-12), which
    # rejects a 10% wrong sigma (negative control)
    lo, hi = gaussian_sd_ratio_bounds(c.size, ALPHA)
    assert lo < np.std(noise) / sigma < hi
    for wrong in (0.9 * sigma, 1.1 * sigma):
        assert not lo < np.std(noise) / wrong < hi


def test_add_classic_sigma_and_warning():
    c = np.array([50.0, 60.0])
    with pytest.warns(UserWarning, match="eps < 1"):
        gaussian_histogram(c, 2.0, 1e-5, calibration="classic", key=key(1))
    sigma = classic_gaussian_sigma(0.5, 1e-5, math.sqrt(2))
    # dppca's sigma, which covers the discrete Gaussian's bound here
    assert sigma > histogram_sigma(0.5, 1e-5)
    assert histogram_sigma(0.5, 1e-5, calibration="classic") == (
        pytest.approx(sigma, rel=1e-5)
    )
    used = histogram_sigma(0.5, 1e-5, calibration="classic")
    noisy = np.maximum(c + _dg_noise(1, 2, used), 0)
    p = gaussian_histogram(c, 0.5, 1e-5, calibration="classic", key=key(1))
    assert p == pytest.approx(noisy / noisy.sum())


def test_add_refuses_non_integer_counts():
    with pytest.raises(ParameterError, match="integers"):
        gaussian_counts([1.5, 2], 1.0, 1e-5, key=key(0))


def test_add_all_zero_is_an_error():
    # find a seed where all noise is negative for 1 cell of zero count
    for seed in range(100):
        try:
            gaussian_histogram([0], 1.0, 1e-5, key=key(seed))
        except ParameterError as err:
            assert str(err) == ALL_ZERO_MESSAGE
            return
    pytest.fail("no seed gave an all-zero histogram")  # pragma: no cover


def test_add_probabilities_are_valid():
    rng = np.random.default_rng(0)
    c = rng.poisson(3, size=400)
    p = gaussian_histogram(c, 1.0, 1e-5, key=key(2))
    assert np.all(p >= 0)
    assert p.sum() == pytest.approx(1)


def test_sparse_large_eps_is_empirical_for_counts_above_one():
    c = np.array([5, 0, 3, 2, 0])
    p = sparse_histogram(c, BIG, 1e-6, key=key(1))
    assert p == pytest.approx(c / 10, abs=1e-6)


def test_sparse_keeps_zeros_and_thresholds():
    rng = np.random.default_rng(4)
    c = rng.poisson(0.8, size=2000) * rng.integers(0, 2, 2000)
    c[:40] = 40  # some cells clear the threshold (about 20.8 counts)
    eps, delta = 1.0, 1e-4
    p = sparse_histogram(c, eps, delta, key=key(5))
    assert np.all(p[c == 0] == 0)
    assert p.sum() == pytest.approx(1) or p.sum() == 0
    kept = sparse_counts(c, eps, delta, key=key(5))
    shown = kept[kept > 0]
    assert shown.size and shown.min() >= sparse_threshold(eps, delta)


def test_sparse_threshold_worked_numbers():
    # spec section 5: eps_hist 0.65, delta 5e-4 -> 26.520 counts; in
    # count units the threshold depends on no size at all
    assert sparse_threshold(0.65, 5e-4) == pytest.approx(26.520, abs=1e-3)
    assert sparse_threshold(1.0833333, 1e-4 / 3) == pytest.approx(
        21.312, abs=1e-3
    )


def test_sparse_all_zero_is_allowed():
    p = sparse_histogram([1, 1, 1], 0.1, 1e-6, key=key(1))
    assert p.tolist() == [0, 0, 0]


def test_sparse_noise_of_a_cell_does_not_depend_on_other_cells():
    # integer noise is 0 with fair probability: look over several keys
    noisy = 0
    for k in range(20):
        a = sparse_counts([50, 0, 0], 1.0, 1e-3, key=key(k))
        b = sparse_counts([50, 0, 50], 1.0, 1e-3, key=key(k))
        assert a[0] == b[0]
        noisy += int(a[0] != 50) + int(b[2] != 50)
    assert noisy >= 30


def test_dispatch_and_unknown_method():
    c = [4, 4]
    h = private_histogram(c, "sparse", BIG, 1e-6, key=key(1))
    assert h.prob() == pytest.approx([0.5, 0.5])
    assert h.total() == pytest.approx(8)
    with pytest.raises(ParameterError, match="method"):
        private_histogram(c, "laplace", 1, 1e-6, key=key(1))


def test_add_release_keeps_unclipped_noise_and_never_raises():
    h = private_histogram(np.zeros(3), "add", 0.5, 1e-5, key=key(4))
    raw = gaussian_counts(np.zeros(3), 0.5, 1e-5, key=key(4))
    assert h.noisy == pytest.approx(raw)
    assert h.counts == pytest.approx(np.maximum(raw, 0))
    assert h.total() == pytest.approx(raw.sum())
    # several histograms side by side: prob normalises each row
    two = private_histogram(
        np.array([[5, 5], [0, 0]]), "sparse", BIG, 1e-6, key=key(4)
    )
    assert two.prob(axis=1) == pytest.approx(np.array([[0.5, 0.5], [0, 0]]))


def test_grouped_histograms_share_the_grid_and_differ_in_noise():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(2, 600))
    grp = np.repeat(["a", "b", "c"], 200)
    g = score_grid((-3, 3), (-3, 3), 6)
    counts = grouped_counts(x, y, grp, g, ["a", "b", "c"])
    assert sum(c.sum() for c in counts.values()) == 600
    hists = grouped_histograms(counts, "add", 1.0, 1e-5, key=key(1))
    assert list(hists) == ["a", "b", "c"]
    for p in hists.values():
        assert p.sum() == pytest.approx(1)
    assert not np.allclose(hists["a"], hists["b"])


def test_grouped_add_error_names_group():
    counts = {"only": np.zeros(1)}
    for seed in range(100):
        try:
            grouped_histograms(counts, "add", 1.0, 1e-5, key=key(seed))
        except ParameterError as err:
            assert str(err).startswith("Group `only`: ")
            return
    pytest.fail("no seed gave an all-zero histogram")  # pragma: no cover


@pytest.mark.parametrize(
    ("eps", "delta"), [(0, 1e-5), (1, 0), (1, 1), (np.nan, 0.1)]
)
def test_bad_privacy_parameters(eps, delta):
    with pytest.raises(ParameterError):
        gaussian_histogram([1, 2], eps, delta, key=key(0))
    with pytest.raises(ParameterError):
        sparse_histogram([1, 2], eps, delta, key=key(0))


def test_bad_counts():
    with pytest.raises(ParameterError, match="counts"):
        gaussian_histogram([1, -2], 1, 1e-5, key=key(0))
