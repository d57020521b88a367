"""Durfee quantiles and the private frame (dp-pca spec, sections 3, 7)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.pca.quantile import (
    private_frame,
    signed_quantile,
    upper_quantile,
)
from plotnine_private.mechanisms.streams.randomness import derive_key

BIG = 1e9  # noise ~ 2e-9 counts: results are RNG-free (spec 7A)
S1 = (np.arange(1, 502) - 251) / 50


def K(*parts):
    """A stream key for a test draw (the engine derives real ones)."""
    return derive_key(bytes(32), "test", *parts)


def on_upper_grid(t, lower=0.0, beta=1.01):
    i = round(math.log(t - lower + 1) / math.log(beta))
    return i >= 1 and t == pytest.approx(beta**i + lower - 1, rel=1e-13)


def on_signed_grid(v, beta=1.01):
    if v == 0:
        return True
    k = round(math.log1p(abs(v)) / math.log(beta))
    return k >= 1 and abs(v) == pytest.approx(beta**k - 1, rel=1e-13)


# --- 7A: deterministic large-eps limits (values from dppca's R code) ---


def test_signed_median_large_eps_is_first_positive_grid_point():
    assert signed_quantile(S1, 0.5, BIG, key=K(1)) == 0.010000000000000009


def test_signed_median_shifted_large_eps():
    assert signed_quantile(S1 + 10, 0.5, BIG, key=K(1)) == 10.001479190412359


def test_upper_quantile_large_eps():
    got = upper_quantile(np.abs(S1), 0.99, BIG, key=K(1))
    assert got == 4.9958019753561773


@pytest.mark.parametrize("seed", range(5))
def test_upper_quantile_large_eps_is_first_grid_point_reaching_qn(seed):
    rng = np.random.default_rng(seed)
    x = rng.exponential(3.0, size=201) + 0.5
    q = 0.7
    got = upper_quantile(x, q, BIG, lower=0.5, key=K(seed))
    i = np.arange(1, 5001)
    t = 1.01**i + 0.5 - 1
    counts = np.searchsorted(np.sort(x), t, side="left")
    assert got == t[np.argmax(counts >= q * x.size)]


def test_signed_negative_median_large_eps():
    got = signed_quantile(S1 - 3, 0.5, BIG, key=K(1))
    assert got < 0
    assert on_signed_grid(got)
    assert got == pytest.approx(-3, rel=0.01)


# --- 7B: structural invariants ---


@pytest.mark.parametrize("seed", range(20))
def test_outputs_lie_on_the_grids(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(rng.uniform(-5, 5), 2, size=300)
    v = signed_quantile(x, 0.5, 0.5, key=K(seed))
    assert on_signed_grid(v)
    lower = float(np.floor(x.min()))
    t = upper_quantile(x, 0.9, 0.5, lower=lower, key=K(seed))
    assert on_upper_grid(t, lower)
    assert t >= lower + 0.01 - 1e-12


def test_tiny_data_gives_first_grid_point():
    assert upper_quantile(np.full(50, 1e-6), 0.5, BIG, key=K(3)) == (1.01 - 1)


@pytest.mark.parametrize("seed", range(5))
def test_frame_is_square_with_inflated_radius(seed):
    rng = np.random.default_rng(seed)
    s = rng.normal([3, -2], [1, 4], size=(400, 2))
    f = private_frame(s, eps=1.0, key=K(seed))
    assert f.xlim[1] - f.xlim[0] == pytest.approx(2 * 1.2 * f.radius)
    assert f.ylim[1] - f.ylim[0] == pytest.approx(2 * 1.2 * f.radius)
    assert np.mean(f.xlim) == pytest.approx(f.center[0])
    assert np.mean(f.ylim) == pytest.approx(f.center[1])
    assert f.radius > 0
    assert on_upper_grid(f.radius)


def test_frame_large_eps_matches_quantile_functions():
    s = np.column_stack([S1, S1 + 10])
    f = private_frame(s, eps=3 * BIG, inflate=0.0, key=K(1))
    assert f.center == (0.010000000000000009, 10.001479190412359)
    r = np.hypot(s[:, 0] - f.center[0], s[:, 1] - f.center[1])
    expected = 1.01 ** np.arange(1, 5001) - 1
    counts = np.searchsorted(np.sort(r), expected, side="left")
    assert f.radius == expected[np.argmax(counts >= 0.99 * 501)]


# --- the step cap ---


def test_cap_warns_and_returns_last_grid_point():
    with pytest.warns(UserWarning, match="max_steps"):
        got = upper_quantile(
            np.full(10, 1e6), 0.5, BIG, max_steps=10, key=K(1)
        )
    assert got == 1.01**10 - 1


def test_signed_cap_is_never_selected():
    with pytest.warns(UserWarning, match="signed quantile search"):
        got = signed_quantile(
            np.full(9, 1e6), 0.5, BIG, max_steps=10, key=K(1)
        )
    # positive side capped, negative side stops at its first query -> 0
    assert got == 0.0


def test_default_cap_value_is_huge_but_finite():
    with pytest.warns(UserWarning):
        got = upper_quantile([1e300], 0.5, BIG, key=K(1))
    assert got == pytest.approx(4.0445e21, rel=1e-4)


# --- randomness ---


def test_same_key_same_value_and_other_keys_separate_streams():
    rng = np.random.default_rng(7)
    x = rng.normal(size=500)
    a = signed_quantile(x, 0.5, 0.2, key=K(11))
    assert a == signed_quantile(x, 0.5, 0.2, key=K(11))
    vals = {signed_quantile(x, 0.5, 0.2, key=K(11, k)) for k in range(20)}
    assert len(vals) > 5


def test_distribution_over_seeds():
    # fixed data and seeds: deterministic, with wide margins
    rng = np.random.default_rng(0)
    x = rng.normal(5, 1, 1001)
    med = np.array(
        [signed_quantile(x, 0.5, 1.0, key=K(s)) for s in range(150)]
    )
    assert np.all(np.abs(med - 5) < 0.5)
    r = np.abs(rng.normal(size=2000))
    true_q = np.quantile(r, 0.99)
    est = np.array(
        [upper_quantile(r, 0.99, 1.0, key=K(s)) for s in range(150)]
    )
    assert np.all(np.abs(est - true_q) < 0.6)
    assert abs(np.median(est) - true_q) < 0.15


def test_runs_on_large_n_quickly():
    x = np.abs(np.random.default_rng(1).normal(size=10**6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = upper_quantile(x, 0.99, 1.0, key=K(1))
    assert 2.3 < got < 2.9


# --- validation ---


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"x": [1.0, np.nan]}, "finite"),
        ({"q": 1.0}, "q must"),
        ({"q": 0}, "q must"),
        ({"eps": 0}, "eps"),
        ({"beta": 1.0}, "beta"),
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": 2.5}, "max_steps"),
        ({"x": [-1.0, 2.0]}, "lower bound"),
    ],
)
def test_bad_input_raises(kwargs, match):
    args = {"x": [1.0, 2.0, 3.0], "q": 0.5, "eps": 1.0, "key": K(0)} | kwargs
    with pytest.raises(ParameterError, match=match):
        upper_quantile(**args)


def test_no_values_is_a_data_set_like_any_other():
    # n = 0 releases a noisy grid point, never an error (an error would
    # tell an empty data set apart)
    t = upper_quantile([], 0.5, 1.0, key=K(0))
    assert on_upper_grid(t)
    assert on_signed_grid(signed_quantile([], 0.5, 1.0, key=K(1)))


def test_frame_bad_shape():
    with pytest.raises(ParameterError, match="scores"):
        private_frame(np.zeros((5, 3)), eps=1, key=K(0))
