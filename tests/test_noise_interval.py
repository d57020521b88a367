"""noise_interval: the interval of each private layer's noise, from public
parameters only, must agree with the noise the release engine draws.

Coverage tests draw thousands of cells with a fixed seed and compare the
share of noise values inside the interval with its exact coverage. The
tolerance is a two-sided binomial bound at ``ALPHA = 1e-6`` per check
(normal approximation, z = 4.89): a correct mechanism fails with
probability about 1e-6, while an interval for the wrong scale (e.g.
sensitivity 1 instead of 2) moves the coverage by more than 0.1.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    after_stat,
    geom_bar,
    geom_bin_2d,
    geom_count,
    geom_histogram,
    geom_point,
    geom_text,
    ggplot,
)

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private.mechanisms.pca.histogram import (
    gaussian_counts,
    histogram_sigma,
    sparse_counts,
)
from plotnine_private.mechanisms.samplers.laplace import dlap_pmf
from plotnine_private.noise import (
    ckm_interval,
    dlap_interval,
    large_cell_rows,
    rounded_laplace_interval,
)

ALPHA = 1e-6
Z = NormalDist().inv_cdf(1 - ALPHA / 2)  # 4.89
PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)


def _tolerance(p: float, n: int) -> float:
    return Z * math.sqrt(p * (1 - p) / n)


def _assert_coverage(noise: np.ndarray, row) -> None:
    """The share of draws in [low, high] matches the exact coverage, and
    the interval is the smallest symmetric one: one step narrower holds
    less than ``level``, empirically as well."""
    noise = np.asarray(noise, dtype=float)
    n = len(noise)
    low, high, cov = float(row["low"]), float(row["high"]), row["coverage"]
    assert cov >= row["level"]
    inside = np.mean((noise >= low) & (noise <= high))
    assert abs(inside - cov) <= _tolerance(cov, n), (inside, cov, n)
    if high >= 1:
        narrow = np.mean((noise >= low + 1) & (noise <= high - 1))
        assert narrow < row["level"] + _tolerance(row["level"], n)


# --------------------------------------------------------------------------
# exact intervals of the distributions
# --------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0, 4.0, 20.0, 123.4])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_dlap_interval_is_the_smallest_symmetric_one(scale, level):
    k, cov = dlap_interval(scale, level)
    ks = np.arange(-50 * int(scale + 1), 50 * int(scale + 1) + 1)
    pmf = dlap_pmf(ks, scale)
    assert cov == pytest.approx(pmf[np.abs(ks) <= k].sum(), abs=1e-12)
    assert cov >= level
    if k > 0:
        assert pmf[np.abs(ks) <= k - 1].sum() < level


@pytest.mark.parametrize("scale", [0.7, 2.0, 10.0])
def test_rounded_laplace_interval(scale):
    k, cov = rounded_laplace_interval(scale, 0.95)
    assert cov == pytest.approx(1 - math.exp(-(k + 0.5) / scale))
    assert cov >= 0.95 and (k == 0 or 1 - math.exp(-(k - 0.5) / scale) < 0.95)


def test_ckm_interval_from_the_ptable_rows():
    low, high, cov = ckm_interval(PTAB, 0.95)
    t = PTAB.table
    row = t[t["i"] == PTAB.max_i]
    mass = row["p_int_ub"] - row["p_int_lb"]
    assert large_cell_rows(PTAB) == [PTAB.max_i]
    assert cov == pytest.approx(mass[row["v"].between(low, high)].sum())
    assert cov >= 0.95
    assert mass[row["v"].between(low + 1, high - 1)].sum() < 0.95
    assert -PTAB.max_noise <= low < 0 < high <= PTAB.max_noise


def test_level_is_checked(mpg):
    p = ggplot(mpg, aes("cty")) + geom_bar(stat="count_dp", eps=1, seed=1)
    for bad in (0, 1, 1.5, "0.95", True):
        with pytest.raises(PlotninePrivateError, match="level"):
            pp.noise_interval(p, level=bad)


# --------------------------------------------------------------------------
# agreement with the release engine, every family
# --------------------------------------------------------------------------
def test_count_dp_coverage():
    rng = np.random.default_rng(11)
    levels = list(range(2500))
    x = rng.integers(0, 2500, 6000).astype(float)
    df = pd.DataFrame({"x": x})
    # position="identity": the release is the same, and plotnine's stack
    # of 2,500 bars (96% of the build) adds nothing to the coverage
    p = ggplot(df, aes("x")) + geom_bar(
        stat="count_dp", eps=1, seed=3, levels=levels, position="identity"
    )
    d = layer_data(p)
    true = np.bincount(x.astype(int), minlength=2500)[
        d["x"].to_numpy().astype(int)
    ]
    t = pp.noise_interval(p)
    assert len(t) == 1 and t.loc[0, "mechanism"] == "discrete_laplace"
    assert (t.loc[0, "low"], t.loc[0, "high"]) == (-6, 6)  # scale 2
    _assert_coverage(d["noisy_count"].to_numpy() - true, t.iloc[0])


def test_bin_dp_coverage_add_remove():
    rng = np.random.default_rng(12)
    x = rng.uniform(0, 2000, 5000)
    df = pd.DataFrame({"x": x})
    breaks = np.arange(2001.0)
    p = ggplot(df, aes("x")) + geom_histogram(
        stat="bin_dp",
        breaks=breaks,
        eps=0.5,
        adjacency="add_remove",
        seed=4,
        closed="left",
        position="identity",
    )
    d = layer_data(p)
    true = np.histogram(x, breaks)[0]
    t = pp.noise_interval(p)
    assert t.loc[0, "scale"] == 2.0
    _assert_coverage(d["noisy_count"].to_numpy() - true, t.iloc[0])


def test_bin2d_dp_rounded_laplace_coverage():
    # empty data on a public grid: every cell's true count is 0
    df = pd.DataFrame({"x": np.array([], float), "y": np.array([], float)})
    p = ggplot(df, aes("x", "y")) + geom_bin_2d(
        stat="bin2d_dp",
        breaks=(np.arange(46.0), np.arange(46.0)),
        eps=2,
        noise="laplace",
        drop=False,
        seed=5,
    )
    d = layer_data(p)
    assert len(d) == 45 * 45
    t = pp.noise_interval(p)
    assert t.loc[0, "mechanism"] == "laplace"
    _assert_coverage(d["noisy_count"].to_numpy(), t.iloc[0])


def test_binhex_dp_coverage():
    df = pd.DataFrame({"x": np.array([], float), "y": np.array([], float)})
    p = ggplot(df, aes("x", "y")) + pp.geom_hex(
        stat="binhex_dp",
        limits=((0, 40), (0, 40)),
        bins=40,
        eps=0.3,
        drop=False,
        seed=6,
    )
    d = layer_data(p)
    assert len(d) > 1500
    t = pp.noise_interval(p)
    assert t.loc[0, "stat"] == "binhex_dp"
    _assert_coverage(d["noisy_count"].to_numpy(), t.iloc[0])


def test_sum_dp_coverage():
    # 40 records on every point of a public 45 x 45 grid: no released
    # count reaches 0, so no cell is hidden and every draw is seen
    gx, gy = np.meshgrid(np.arange(45.0), np.arange(45.0))
    df = pd.DataFrame(
        {"x": np.repeat(gx.ravel(), 40), "y": np.repeat(gy.ravel(), 40)}
    )
    p = ggplot(df, aes("x", "y")) + geom_count(
        stat="sum_dp",
        limits=((0, 44), (0, 44)),
        resolution=1,
        eps=1,
        seed=7,
    )
    d = layer_data(p)
    assert len(d) == 45 * 45
    t = pp.noise_interval(p)
    _assert_coverage(d["noisy_n"].to_numpy() - 40, t.iloc[0])


def test_bin_ckm_coverage_of_large_cells():
    per = PTAB.max_i + 4  # every bin is a large cell
    x = np.repeat(np.arange(3000.0), per) + 0.5
    df = pp.add_record_keys(pd.DataFrame({"x": x}), name="rk", seed=8)
    p = ggplot(df, aes("x", rkey="rk")) + geom_histogram(
        stat="bin_ckm",
        breaks=np.arange(3001.0),
        ptable=PTAB,
        position="identity",
    )
    d = layer_data(p)
    t = pp.noise_interval(p)
    row = t.iloc[0]
    assert row["mechanism"] == "ckm" and pd.isna(row["eps"])
    assert f"count >= {PTAB.max_i}" in row["note"]
    _assert_coverage(d["count"].to_numpy() - per, row)


# --------------------------------------------------------------------------
# PCA: the histogram noise
# --------------------------------------------------------------------------
COLUMNS = ["displ", "cty", "hwy", "cyl"]


def test_pca_add_interval_is_the_gaussian_of_the_release(mpg):
    p = ggplot(mpg) + pp.stat_dp_pca_score(
        columns=COLUMNS, eps=4, delta=1e-5, seed=1, method="add"
    )
    t = pp.noise_interval(p)
    assert len(t) == 1
    row = t.iloc[0]
    assert row["mechanism"] == "discrete_gaussian"
    sigma = histogram_sigma(row["eps"], 1e-5 / 2)
    assert row["scale"] == pytest.approx(sigma)
    # the smallest integer k holding 95%: about z * sigma - 1/2
    z = NormalDist().inv_cdf(0.975)
    assert z * sigma - 1.5 < row["high"] <= z * sigma + 0.5
    assert row["high"] == int(row["high"]) and row["low"] == -row["high"]
    assert "not covered" in row["note"]
    # the engine's own discrete Gaussian noise has that coverage
    noise = (
        gaussian_counts(
            np.full(20000, 50.0), row["eps"], 1e-5 / 2, key=bytes(16)
        )
        - 50.0
    )
    _assert_coverage(noise, row)


def test_pca_sparse_interval_is_the_laplace_of_the_release(mpg):
    p = ggplot(mpg) + pp.stat_dp_pca_score(
        columns=COLUMNS, eps=4, delta=1e-5, seed=1
    )
    row = pp.noise_interval(p).iloc[0]
    assert row["mechanism"] == "stability_histogram"
    assert row["scale"] == pytest.approx(2 / row["eps"])
    assert "hidden" in row["note"]
    noise = (
        sparse_counts(np.full(20000, 1000.0), row["eps"], 5e-6, key=bytes(16))
        - 1000.0
    )
    _assert_coverage(noise, row)


# --------------------------------------------------------------------------
# public parameters only; table and caption
# --------------------------------------------------------------------------
def test_interval_does_not_depend_on_the_data(mpg, mpg_cat):
    other = mpg_cat.sample(50, random_state=1)
    cols = ["layer", "stat", "mechanism", "eps", "low", "high", "note"]

    def table(d):
        p = ggplot(d, aes("class")) + geom_bar(
            stat="count_dp", eps=0.7, seed=2
        )
        return pp.noise_interval(p)[cols]

    pd.testing.assert_frame_equal(table(mpg_cat), table(other))


def test_caption_merges_a_bar_and_its_labels(mpg_cat):
    cars = pp.add_record_keys(mpg_cat, name="rk", rng_seed=1)
    p = (
        ggplot(cars, aes("class", rkey="rk"))
        + geom_bar(stat="count_dp", eps=1, seed=42)
        + geom_text(
            aes(label=after_stat("count")), stat="count_dp", eps=1, seed=42
        )
        + geom_point(aes(y=after_stat("count")), stat="count_ckm", ptable=PTAB)
        + geom_point(aes(y="hwy"))  # not private: no row
    )
    t = pp.noise_interval(p)
    assert t["layer"].tolist() == [0, 1, 2]
    assert list(t.columns[:7]) == [
        "layer",
        "stat",
        "mechanism",
        "eps",
        "level",
        "low",
        "high",
    ]
    # the bar and its labels are one release and the same marks: once
    assert t.caption() == (
        "noise: ±6 (95%) for count_dp eps=1; "
        "±3 (95%, large cells) for count_ckm\n"
        "count_dp: 2 of 8 marks are within noise (drawn faded)\n"
        "count_ckm: 1 of 8 marks is within noise (drawn faded)"
    )
    assert t.caption(layers=2) == (
        "noise: ±3 (95%, large cells) for count_ckm\n"
        "count_ckm: 1 of 8 marks is within noise (drawn faded)"
    )
    assert pp.noise_caption(p, level=0.5).startswith("noise: ±1 (50%)")
    assert str(t).startswith("noise: ±6")


def test_private_range_and_threshold_are_said(mpg):
    p = ggplot(mpg, aes("cty")) + geom_histogram(stat="bin_dp", eps=1, seed=3)
    row = pp.noise_interval(p).iloc[0]
    assert row["eps"] == pytest.approx(0.8)  # 20% went to the range
    assert "private range" in row["note"]
    q = ggplot(mpg, aes("class")) + geom_bar(stat="count_dp", eps=1, seed=3)
    assert "hidden" in pp.noise_interval(q).iloc[0]["note"]


def test_hidden_categories_caption_states_the_threshold_not_a_number(mpg):
    # DP, undeclared domain: the threshold is public, how many categories
    # fell below it is not (it depends on which rare ones exist)
    def caption(d):
        p = ggplot(d, aes("manufacturer")) + geom_bar(
            stat="count_dp", eps=1, seed=3
        )
        return pp.noise_interval(p).caption()

    text = caption(mpg)
    assert text == (
        "noise: ±6 (95%) for count_dp eps=1; categories with a noisy count "
        "below 30 are hidden"
    )
    # one record of a rare maker gone: another number hidden, one caption
    rare = mpg.index[mpg["manufacturer"] == "lincoln"][0]
    assert caption(mpg.drop(index=rare)) == text


def test_hidden_categories_are_counted_under_ckm(mpg):
    cars = pp.add_record_keys(mpg, name="rk", rng_seed=1)
    q = ggplot(cars, aes("manufacturer", rkey="rk")) + geom_bar(
        stat="count_ckm", ptable=PTAB, threshold=10
    )
    shown = len(layer_data(q))
    hidden = cars["manufacturer"].nunique() - shown
    assert hidden > 1
    t = pp.noise_interval(q)
    assert t.iloc[0]["hidden"] == (
        f"{hidden} categories hidden: count below 10"
    )
    assert t.caption().endswith(
        f"; {hidden} categories hidden: count below 10"
    )
    # without a threshold nothing is hidden and nothing is said
    q0 = ggplot(cars, aes("manufacturer", rkey="rk")) + geom_bar(
        stat="count_ckm", ptable=PTAB
    )
    assert "hidden" not in pp.noise_interval(q0).caption()


def test_no_private_layer_gives_an_empty_table(mpg):
    t = pp.noise_interval(ggplot(mpg, aes("class")) + geom_bar())
    assert len(t) == 0 and t.caption() == ""


def test_budget_is_not_enforced(mpg):
    p = (
        ggplot(mpg, aes("cty"))
        + geom_bar(stat="count_dp", eps=2, seed=1)
        + pp.privacy_budget(eps=1)
    )
    assert len(pp.noise_interval(p)) == 1
