"""eps sanity: a PrivacyWarning for eps above 10 and for eps so small that
one cell's expected noise exceeds the layer's public total scale (the
``total`` parameter), both from public facts only (the same on
neighbouring data sets, and on an empty subset as on any other)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from neighbours import differences, snapshot
from plotnine import aes, geom_bar, geom_col, ggplot
from plotnine.data import mpg

import plotnine_private as pp
from plotnine_private.stats.signal import expected_abs_noise

LEVELS = sorted(mpg["class"].unique())


def _messages(make, *args, **kw) -> list[str]:
    """PrivacyWarnings of making the plot (eps is checked there) and of
    building it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make(*args, **kw)._build()
    return [str(w.message) for w in caught if w.category is pp.PrivacyWarning]


def bars(data, eps, total=234, **kw):
    return ggplot(data, aes("class")) + geom_bar(
        stat="count_dp",
        eps=eps,
        seed=1,
        levels=LEVELS,
        total=total,
        drop=False,
        **kw,
    )


def test_expected_abs_noise_matches_its_distribution():
    rng = np.random.default_rng(3)
    b = 3.0
    p = np.exp(-1 / b)
    # discrete Laplace as a difference of two geometric variables
    draws = rng.geometric(1 - p, 200_000) - rng.geometric(1 - p, 200_000)
    assert np.mean(np.abs(draws)) == pytest.approx(
        expected_abs_noise(b), rel=0.01
    )
    lap = np.round(rng.laplace(0, b, 200_000))
    assert np.mean(np.abs(lap)) == pytest.approx(
        expected_abs_noise(b, "laplace"), rel=0.01
    )


def test_large_eps_warns_with_the_number_and_the_fix():
    msgs = _messages(bars, mpg, 20)
    assert len(msgs) == 1
    assert "eps=20 gives little protection" in msgs[0]
    assert "eps <= 10" in msgs[0]


def test_tiny_eps_warns_with_both_numbers():
    msgs = _messages(bars, mpg, 0.001)
    assert len(msgs) == 1
    # scale 2000: E|N| = 2000 records against 234 rows
    assert "(2,000 records)" in msgs[0]
    assert "public total scale (234 records)" in msgs[0]
    assert "Use eps >= 0.00855" in msgs[0]


@pytest.mark.parametrize("eps", [0.1, 1, 10])
def test_sensible_eps_is_silent(eps):
    assert _messages(bars, mpg, eps) == []


def test_without_a_public_total_nothing_is_said():
    assert _messages(bars, mpg, 0.001, total=None) == []


def test_total_is_checked():
    with pytest.raises(pp.PlotninePrivateError, match="total must be"):
        ggplot() + geom_bar(stat="count_dp", eps=1, total=-3)


def totals(eps):
    return ggplot(mpg, aes("class", "hwy")) + geom_col(
        stat="summary_dp",
        fun="sum",
        bounds=(0, 50),
        eps=eps,
        seed=1,
        levels=LEVELS,
        total=234,
    )


def test_summary_sum_compares_with_total_times_the_bound():
    (msg,) = _messages(totals, 1e-4)
    assert "public total scale (1.17e+04 y units)" in msg
    assert _messages(totals, 1) == []


def test_the_warning_is_the_same_on_neighbouring_data():
    other = mpg.copy()
    other.loc[0, "class"] = "2seater"
    other.loc[0, "hwy"] = np.nan  # a record left out still counts a row
    a = snapshot(bars(mpg, 0.001))
    b = snapshot(bars(other, 0.001))
    assert differences(a, b) == []
    assert any("exceeds the layer's" in w for w in a["warnings"])


def test_the_rows_given_are_not_used():
    # a filtered subset has a private size: an empty one and a full one
    # look alike (the warning reads the public total only)
    empty = mpg[mpg["hwy"] > 1000]
    a = snapshot(bars(mpg, 0.001))
    b = snapshot(bars(empty, 0.001))
    assert differences(a, b) == []
