"""Mechanisms outside the count path for a privacy unit of ``k`` records
(``records=k``): Durfee quantiles, the private range and frame run at
``eps / k`` (group privacy); the Kendall and scree sensitivities and the
PCA histogram's noise and threshold scale with ``k`` (and ``cells``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from alpha import ALPHA, dlap_moments, variance_ratio_bounds
from scipy import stats

from plotnine_private.mechanisms.domains.ranges import private_range
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.pca.directions import (
    kendall_sensitivity,
    private_directions,
    private_eigenvalues,
)
from plotnine_private.mechanisms.pca.histogram import (
    histogram_sigma,
    private_histogram,
    sparse_counts,
    sparse_threshold,
)
from plotnine_private.mechanisms.pca.quantile import (
    private_frame,
    signed_quantile,
    upper_quantile,
)
from plotnine_private.mechanisms.samplers.gaussian import gaussian_sigma

RNG = np.random.default_rng(44)
X = RNG.normal(50, 10, 400)
KEYS = [bytes([i]) * 16 for i in range(1, 9)]


@pytest.mark.parametrize("k", [2, 5])
def test_durfee_searches_run_at_eps_over_k(k):
    changed = 0
    for key in KEYS:
        for fn, args in (
            (upper_quantile, (np.abs(X - 50), 0.9)),
            (signed_quantile, (X, 0.5)),
        ):
            unit = fn(*args, 0.5, key=key, records=k)
            assert unit == fn(*args, 0.5 / k, key=key)
            changed += unit != fn(*args, 0.5, key=key)
    assert changed > 0  # the bound changes the release


def test_private_frame_and_range_cost_eps_for_a_whole_unit():
    scores = np.column_stack([X, X[::-1] - 40])
    for key in KEYS[:3]:
        f = private_frame(scores, 0.9, key=key, records=3)
        g = private_frame(scores, 0.3, key=key)
        assert (f.xlim, f.ylim, f.eps) == (g.xlim, g.ylim, 0.9)
        r = private_range(X, 2.0, key=key, records=4)
        s = private_range(X, 0.5, key=key)
        assert (r.lo, r.hi, r.eps) == (s.lo, s.hi, 2.0)
        assert r.details["records"] == 4 and "records" not in s.details


def test_kendall_and_scree_sensitivities_scale_with_k():
    x = RNG.normal(size=(300, 3)) * [4, 2, 1]
    d = private_directions(x, 1.0, 1e-5, key=KEYS[0], records=3)
    assert d.sensitivity == pytest.approx(3 * kendall_sensitivity(300))
    assert d.sigma == pytest.approx(
        gaussian_sigma(1.0, 1e-5, 3 * kendall_sensitivity(300), "analytic")
    )
    y = x[:, :2]
    e = private_eigenvalues(y, 1.0, 1e-5, clip=9.0, key=KEYS[1], records=4)
    m = 300 // 2
    assert e.sigma == pytest.approx(
        gaussian_sigma(1.0, 1e-5, 4 * math.sqrt(2) * 9.0 / m, "analytic")
    )
    one = private_eigenvalues(y, 1.0, 1e-5, clip=9.0, key=KEYS[1])
    assert e.sigma > 3.9 * one.sigma


def test_pca_histogram_noise_follows_the_unit():
    counts = np.full(40, 7)
    h = private_histogram(counts, "add", 1.0, 1e-5, key=KEYS[0], records=3)
    assert h.sigma == histogram_sigma(1.0, 1e-5, 3 * math.sqrt(2))
    # one row per unit: the threshold of before, exactly
    assert sparse_threshold(0.65, 5e-4) == (
        2.0 * math.log(2.0 / 5e-4) / 0.65 + 1.0
    )
    tau = sparse_threshold(1.0, 1e-6, records=3, cells=2)
    assert tau == pytest.approx(3 + 6 * math.log(4 / 1e-6))


def test_sparse_noise_has_scale_2k_over_eps():
    k, eps, n = 3, 1.0, 20000
    big = np.full(n, 10**6)  # far above the threshold: every cell shown
    noise = sparse_counts(big, eps, 1e-6, key=KEYS[2], records=k) - 10**6
    var, kurt = dlap_moments(2 * k / eps)
    lo, hi = variance_ratio_bounds(n, kurt)
    assert lo <= noise.var() / var <= hi
    # negative control: noise of one row per unit is far too small
    one = sparse_counts(big, eps, 1e-6, key=KEYS[2]) - 10**6
    assert not lo <= one.var() / var <= hi


def test_sparse_threshold_hides_a_units_new_cell():
    """A cell only one neighbour has holds up to k rows; it shows with
    probability at most delta / (2c) (Clopper-Pearson at ALPHA)."""
    k, cells, eps, delta, n = 3, 1, 1.0, 0.2, 50000
    kept = sparse_counts(
        np.full(n, k), eps, delta, key=KEYS[3], records=k, cells=cells
    )
    shown = int((kept > 0).sum())
    upper = stats.beta.ppf(1 - ALPHA / 2, shown + 1, n - shown)
    assert upper <= delta / (2 * cells)
    # control: the threshold of one row per unit shows it far too often
    tau_row = sparse_threshold(eps, delta)
    noisy = sparse_counts(np.full(n, 10**6), eps, 1e-6, key=KEYS[3], records=k)
    share = float(np.mean(k + noisy - 10**6 >= tau_row))
    assert share > delta  # above the whole delta, not only delta / 2c


@pytest.mark.parametrize("bad", [0, 1.5, True, "2"])
def test_bad_bounds_are_refused(bad):
    with pytest.raises(ParameterError, match="max_records"):
        upper_quantile(X, 0.5, 1.0, key=KEYS[0], records=bad)
    with pytest.raises(ParameterError, match="max_records"):
        private_histogram([1, 2], "add", 1.0, 1e-5, key=KEYS[0], records=bad)
    with pytest.raises(ParameterError, match="max_records"):
        private_directions(
            RNG.normal(size=(20, 2)), 1.0, 1e-5, key=KEYS[0], records=bad
        )
