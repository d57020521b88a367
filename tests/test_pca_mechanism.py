"""Private PCA directions (spherical Kendall, g-DPPCA) and eigenvalues."""

from __future__ import annotations

import math

import numpy as np
import pytest
from alpha import ALPHA, gaussian_sd_ratio_bounds
from scipy import stats

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.pca.directions import (
    kendall_sensitivity,
    private_directions,
    private_eigenvalues,
    spherical_kendall,
    symmetric_gaussian_noise,
)
from plotnine_private.mechanisms.streams.randomness import derive_key


def key(label):
    """A fixed stream key for a test (the engine derives real ones)."""
    return derive_key(bytes(32), "test", label)


def brute_kendall(x):
    n, p = x.shape
    k = np.zeros((p, p))
    for i in range(n):
        for j in range(i + 1, n):
            d = x[j] - x[i]
            nrm = np.linalg.norm(d)
            if nrm > 0:
                k += np.outer(d, d) / nrm**2
    return k * 2 / (n * (n - 1))


def spiked(n, p, rng, top=(4.0, 2.0)):
    scale = np.ones(p)
    scale[: len(top)] = top
    return rng.normal(size=(n, p)) * scale + 7.0  # uncentred on purpose


def test_exact_matches_brute_force_with_blocks():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(37, 4))
    x[5] = x[9]  # a duplicate pair contributes 0
    got = spherical_kendall(x, estimator="exact").matrix
    assert got == pytest.approx(brute_kendall(x), abs=1e-13)


def test_blocking_does_not_change_the_result(monkeypatch):
    import plotnine_private.mechanisms.pca.directions as mod

    rng = np.random.default_rng(1)
    x = rng.normal(size=(301, 3))
    full = spherical_kendall(x, estimator="exact").matrix
    monkeypatch.setattr(mod, "_BLOCK_FLOATS", 3 * 64)
    small = spherical_kendall(x, estimator="exact").matrix
    assert small == pytest.approx(full, abs=1e-13)


def test_translation_invariant_and_unit_trace():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(200, 5))
    a = spherical_kendall(x).matrix
    b = spherical_kendall(x + 1e3).matrix
    assert a == pytest.approx(b, abs=1e-9)
    assert np.trace(a) == pytest.approx(1)


@pytest.mark.parametrize("estimator", ["exact", "incomplete"])
def test_sensitivity_bound_holds_empirically(estimator):
    rng = np.random.default_rng(3)
    n, p = 60, 4
    x = rng.normal(size=(n, p))
    kw = {"estimator": estimator, "key": key(5)}
    if estimator == "incomplete":
        kw["shifts"] = 7
    base = spherical_kendall(x, **kw)
    bound = kendall_sensitivity(n)
    assert base.sensitivity == bound
    worst = 0.0
    for r in range(0, n, 3):
        for new in (
            rng.normal(size=p) * 100,
            x[(r + 1) % n],  # duplicate of another row
            x[r] + 1e-9,
            -x[r],
        ):
            y = x.copy()
            y[r] = new
            other = spherical_kendall(y, **kw).matrix
            worst = max(worst, np.linalg.norm(other - base.matrix))
    assert worst <= bound
    assert worst > 0.5 * bound  # the bound is not loose by much


def test_duplicate_rows_do_not_crash():
    x = np.ones((50, 3))
    k = spherical_kendall(x)
    assert np.all(k.matrix == 0)
    v = private_directions(x, 1.0, 1e-5, key=key(1)).vectors
    # released on a grid of 2**-32 (the same bits on every machine)
    assert v.T @ v == pytest.approx(np.eye(3), abs=3 * 2.0**-32)


def test_incomplete_is_close_to_exact():
    rng = np.random.default_rng(4)
    x = spiked(3000, 5, rng)
    exact = spherical_kendall(x, estimator="exact").matrix
    inc = spherical_kendall(x, estimator="incomplete", shifts=40, key=key(2))
    assert inc.n_pairs == 40 * 3000
    assert np.linalg.norm(inc.matrix - exact) < 0.01
    assert np.trace(inc.matrix) == pytest.approx(1)


def test_auto_switches_to_incomplete():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(500, 3))
    k = spherical_kendall(x, max_pairs=5000, max_exact_pairs=5000, key=key(0))
    assert k.estimator == "incomplete"
    assert k.shifts == 10
    assert spherical_kendall(x).estimator == "exact"


def test_noise_layout_is_frobenius_isotropic():
    p, sigma = 60, 2.0
    e = symmetric_gaussian_noise(p, sigma, key("t"))
    assert np.array_equal(e, e.T)
    off = e[np.tril_indices(p, -1)]
    # exact chi-square tests at ALPHA: N(0, sigma^2) on the 60 diagonal
    # entries, N(0, sigma^2 / 2) on the 1770 below it
    lo, hi = gaussian_sd_ratio_bounds(p, ALPHA)
    assert lo < np.std(np.diag(e)) / sigma < hi
    lo, hi = gaussian_sd_ratio_bounds(off.size, ALPHA)
    assert lo < np.std(off) / (sigma / math.sqrt(2)) < hi
    # negative control: noise of sigma^2 off the diagonal (a layout that
    # is not isotropic in the Frobenius norm) fails the same test
    assert not lo < np.std(off) / sigma < hi


def angle_error(v, truth=0):
    return math.degrees(math.acos(min(1.0, abs(v[truth, 0]))))


def mean_error(n, eps, seeds=range(8)):
    errs = []
    for s in seeds:
        rng = np.random.default_rng(100 + s)
        x = spiked(n, 6, rng, top=(2.0, 1.0))
        d = private_directions(x, eps, 1e-5, key=key(s))
        errs.append(angle_error(d.vectors))
    return float(np.mean(errs))


def test_accuracy_improves_with_n_and_eps():
    e_small = mean_error(200, 0.5)
    e_big_n = mean_error(2000, 0.5)
    e_big_eps = mean_error(200, 8.0)
    assert e_big_n < e_small
    assert e_big_eps < e_small
    assert e_big_n < 15


def test_directions_are_orthonormal_and_ordered():
    rng = np.random.default_rng(6)
    x = spiked(500, 5, rng, top=(5.0, 3.0, 2.0))
    d = private_directions(x, 50.0, 1e-6, key=key(3))
    grid = 5 * 2.0**-32  # released on a grid of 2**-32
    assert d.vectors.T @ d.vectors == pytest.approx(np.eye(5), abs=grid)
    assert (d.vectors / 2.0**-32 == np.round(d.vectors / 2.0**-32)).all()
    assert abs(d.vectors[0, 0]) > 0.98
    assert abs(d.vectors[1, 1]) > 0.95
    assert d.sensitivity == pytest.approx(2 * math.sqrt(2) / 500)


def test_classic_calibration_warns_for_large_eps():
    x = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.warns(UserWarning, match="eps < 1"):
        private_directions(x, 2.0, 1e-5, calibration="classic", key=key(1))


def test_same_key_same_directions():
    x = np.random.default_rng(0).normal(size=(80, 4))
    a = private_directions(x, 1.0, 1e-5, key=key(9)).vectors
    b = private_directions(x, 1.0, 1e-5, key=key(9)).vectors
    c = private_directions(x, 1.0, 1e-5, key=key(10)).vectors
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "x", [np.zeros((1, 3)), np.zeros((5, 1)), [[1, np.nan], [2, 3]]]
)
def test_bad_data(x):
    with pytest.raises(ParameterError, match="X must"):
        private_directions(x, 1.0, 1e-5, key=key(0))


def test_eigenvalues_large_eps_are_pair_variances():
    rng = np.random.default_rng(7)
    y = rng.normal(size=(4000, 3)) * [3.0, 2.0, 0.5]
    ev = private_eigenvalues(y, 1e9, 1e-6, clip=1e6, key=key(1))
    # the mean of m = 2000 pair variances is sigma^2 chi2(m) / m: exact
    # two-sided bounds at ALPHA are about -15% .. +16%
    m = len(y) // 2
    lo = stats.chi2.ppf(ALPHA / 2, m) / m
    hi = stats.chi2.isf(ALPHA / 2, m) / m
    truth = np.array([9, 4, 0.25])
    assert np.all((lo < ev.values / truth) & (ev.values / truth < hi))
    # negative control: pair differences not divided by sqrt(2) (twice
    # the variance) fail the same bounds
    assert not np.any(2 * ev.values / truth < hi)
    assert ev.pve.sum() == pytest.approx(1)
    assert ev.clip_source == "public"


def test_eigenvalues_private_clip_and_monotone():
    rng = np.random.default_rng(8)
    y = rng.normal(size=(3000, 4)) * [2.0, 1.0, 1.0, 0.2]
    ev = private_eigenvalues(y, 1.0, 1e-5, key=key(2))
    assert ev.clip_source == "private_quantile"
    assert ev.eps_clip == pytest.approx(0.25)
    assert np.all(np.diff(ev.values) <= 0)
    assert np.all(ev.values >= 0)
    assert ev.values[0] == pytest.approx(4, rel=0.25)


def test_eigenvalue_sensitivity_bound():
    rng = np.random.default_rng(9)
    y = rng.normal(size=(101, 3))
    c = 2.0
    m = 101 // 2
    base = private_eigenvalues(y, 1e9, 0.5, clip=c, mono=False, key=key(1))
    worst = 0.0
    for r in range(101):
        z = y.copy()
        z[r] = 1e3
        other = private_eigenvalues(
            z, 1e9, 0.5, clip=c, mono=False, key=key(1)
        )
        worst = max(worst, np.linalg.norm(other.values - base.values))
    assert worst <= math.sqrt(3) * c / m + 1e-3


def test_exact_is_accurate_for_near_duplicates_far_from_origin():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(120, 4)) * 1e-3 + 1e6
    x[10] = x[20]
    x[30] = x[31] + np.array([1e-7, 0, 0, 0])  # nearly equal rows
    got = spherical_kendall(x, estimator="exact").matrix
    assert got == pytest.approx(brute_kendall(x), abs=1e-10)


# 3 and 40 columns: the weighted general product and the symmetric
# update of wide rows; 7 rows a product: many products a pass
@pytest.mark.parametrize(
    "p, product_rows", [(3, None), (3, 7), (40, None), (33, None)]
)
def test_incomplete_matches_its_pair_design(monkeypatch, p, product_rows):
    import plotnine_private.mechanisms.pca.directions as mod
    from plotnine_private.mechanisms.streams.randomness import keyed_uniform

    if product_rows is not None:
        monkeypatch.setattr(mod, "_SMALL_PRODUCT", product_rows * p * p)
    n = 101
    x = np.random.default_rng(1).normal(size=(n, p))
    x[:21] = x[0]  # about 30 of the 707 pairs are duplicates: they add 0
    got = spherical_kendall(x, estimator="incomplete", shifts=7, key=key(3))
    assert np.array_equal(got.matrix, got.matrix.T)
    design = derive_key(key(3), "kendall_design")
    xp = x[np.argsort(keyed_uniform(design, n), kind="stable")]
    shifts = mod._distinct_shifts(n, 7, derive_key(design, "shifts"))
    assert len(set(shifts.tolist())) == 7
    assert shifts.min() >= 1
    assert shifts.max() <= (n - 1) // 2
    want = np.zeros((p, p))
    for s in shifts:
        for i in range(n):
            d = xp[(i + s) % n] - xp[i]
            if d.any():
                want += np.outer(d, d) / d.dot(d)
    assert got.matrix == pytest.approx(want / (7 * n), abs=1e-14)


def test_incomplete_needs_a_key():
    x = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(ParameterError, match="stream key"):
        spherical_kendall(x, estimator="incomplete", shifts=3)
