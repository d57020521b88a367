"""The intervals of quantiles, medians, whiskers and means cover the
statistic of the records, not the noise-free estimate from the fine
histogram (``covers="data"``, the default), on whole-number and on
continuous data.

The case that asked for it: length of stay in whole days, limits
(0, 60), 128 fine bins. The histogram interpolates within a fine bin, so
the median of the binned data reads 2.24 where the median of the records
is 2, and the intervals of that estimate (``covers="histogram"``) never
hold 2. The coverage tests add exact discrete Laplace noise (numpy's
geometric sampler, independent of the code under test) to the records'
true fine histogram, one group a seed, and run the stat's own curve and
interval code on it; ``LEVEL = 0.95`` and the claim is that at least
``CLAIM = 0.93`` of the seeds' intervals hold the records' statistic
(deterministic: the seeds are fixed). The sweep over more data shapes,
noise scales and seeds is ``benchmarks/interval_cover.py``.
"""

from __future__ import annotations

import math
import re
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_boxplot, geom_pointrange, ggplot

import plotnine_private as pp
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.stats.boxplot import stat_boxplot_dp
from plotnine_private.stats.fine_histogram import FineHistogram
from plotnine_private.stats.intervals import NoiseModel
from plotnine_private.stats.noise_bands import band_quantiles

LEVEL = 0.95
CLAIM = 0.93
LIMITS = (0, 60)
SEEDS = 200
COLUMNS = ("lower", "middle", "upper", "ymin", "ymax")


def length_of_stay(n: int, seed: int) -> np.ndarray:
    """Whole days in [0, 60]: mostly short stays, one in five long."""
    rng = np.random.default_rng(seed)
    short = rng.geometric(0.3, n) - 1
    long = (rng.random(n) < 0.2) * rng.geometric(0.05, n)
    return np.minimum(short + long, 60).astype(np.int64)


def continuous(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.lognormal(1.2, 0.6, n), 0, 60)


def truths(v: np.ndarray, whiskers=None) -> dict[str, float]:
    """The records' quartiles (numpy's, as plotnine's box plot) and
    Tukey whiskers (the most extreme records within 1.5 IQR), or the
    quantile whiskers."""
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    iqr = q3 - q1
    inside = v[(v >= q1 - 1.5 * iqr) & (v <= q3 + 1.5 * iqr)]
    out = {"lower": q1, "middle": med, "upper": q3}
    out["ymin"], out["ymax"] = inside.min(), inside.max()
    if whiskers is not None:
        out["ymin"], out["ymax"] = np.quantile(v, whiskers)
    return out


def seeds_of(v: np.ndarray, scale: float, seeds: int = SEEDS, **kw):
    """The stat's columns and intervals on ``seeds`` noisy releases of
    the records ``v`` (one group a seed), and the stat."""
    stat = stat_boxplot_dp(limits=LIMITS, level=LEVEL, eps=1, **kw)
    limits, k = stat.fine_bins()
    edges = np.linspace(limits[0], limits[1], k + 1)
    # bins closed on the right, the first one on both sides
    cell = np.clip(np.searchsorted(edges, v, "left") - 1, 0, k - 1)
    truth = np.bincount(cell, minlength=k).astype(float)
    rng = np.random.default_rng(int(scale * 1000) + len(v))
    p = 1 - math.exp(-1 / scale)
    noisy = truth + rng.geometric(p, (seeds, k)) - rng.geometric(p, (seeds, k))
    info = pd.DataFrame({"PANEL": pd.Categorical(np.ones(seeds, int))}).assign(
        group=np.arange(1, seeds + 1)
    )
    hist = FineHistogram(edges, np.maximum(noisy, 0), noisy, info)
    # the layer's rows keep their column's type (a declared int64 here)
    stat.build = SimpleNamespace(fine=hist, records=pd.DataFrame({"y": v}))
    out = stat.curve(hist)
    stat.curve_intervals(out, hist, NoiseModel("discrete_laplace", scale))
    return out, stat


def coverage(out: pd.DataFrame, true: dict[str, float]) -> dict:
    return {
        col: float(
            (
                (out[f"{col}_low"] <= t + 1e-9)
                & (t <= out[f"{col}_high"] + 1e-9)
            ).mean()
        )
        for col, t in true.items()
    }


LOS = length_of_stay(2000, seed=1)


def test_the_length_of_stay_median_was_outside_its_histogram_interval():
    # the negative control: the interval of the histogram's estimate
    # (covers="histogram") misses the records' median in every seed
    out, _ = seeds_of(LOS, 2.0, covers="histogram")
    assert np.median(LOS) == 2
    assert 2.2 < out["middle"].mean() < 2.3
    assert coverage(out, truths(LOS))["middle"] < 0.05


@pytest.mark.parametrize("scale", [2.0, 10.0])  # eps 1: a record, 5 stays
def test_length_of_stay_intervals_cover_the_records(scale):
    # an int64 column: the intervals end on whole numbers (the bins are
    # still 128 interpolated ones)
    out, stat = seeds_of(LOS, scale)
    assert stat.whole_numbers()
    got = coverage(out, truths(LOS))
    # measured 0.995-1.0 at scale 2, 0.96-1.0 at scale 10
    assert min(got.values()) >= CLAIM, got
    for col in COLUMNS:
        for end in ("low", "high"):
            v = out[f"{col}_{end}"].to_numpy()
            assert np.array_equal(v, np.round(v)), (col, end)


@pytest.mark.parametrize("scale", [2.0, 10.0])
def test_discrete_puts_the_median_on_a_whole_day(scale):
    out, stat = seeds_of(LOS, scale, discrete=True)
    assert stat.fine_bins() == ((-0.5, 60.5), 61)
    got = coverage(out, truths(LOS))
    # measured 0.98-1.0
    assert min(got.values()) >= CLAIM, got
    for col in ("lower", "middle", "upper", "ymin", "ymax"):
        v = out[col].to_numpy()
        assert np.array_equal(v, np.round(v)), col
    if scale == 2.0:
        # little noise: the median is exact in nearly every seed
        assert (out["middle"] == 2).mean() > 0.9
        assert (out["middle_high"] - out["middle_low"]).mean() < 0.1


def test_without_noise_the_discrete_box_is_the_records_box():
    out, _ = seeds_of(LOS, 1e-9, seeds=1, discrete=True)
    true = truths(LOS)
    for col in COLUMNS:
        assert out[col].iloc[0] == true[col], col


@pytest.mark.parametrize("whiskers", [None, (0.05, 0.95)])
def test_continuous_intervals_cover_the_records(whiskers):
    v = continuous(2000, seed=2)
    out, stat = seeds_of(v, 2.0, whiskers=whiskers)
    assert not stat.whole_numbers()
    got = coverage(out, truths(v, whiskers))
    # measured 0.995-1.0
    assert min(got.values()) >= CLAIM, got


def test_data_intervals_hold_the_histograms_and_reach_the_fine_edges():
    edges = np.linspace(0, 60, 129)
    rng = np.random.default_rng(3)
    f = np.sort(rng.random((50, 129)), axis=1)
    f[:, 0], f[:, -1] = 0, 1
    f_low, f_high = np.clip(f - 0.05, 0, 1), np.clip(f + 0.05, 0, 1)
    probs = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    h_low, h_high = band_quantiles(edges, f_low, f_high, probs)
    d_low, d_high = band_quantiles(edges, f_low, f_high, probs, "data")
    assert (d_low <= h_low).all() and (h_high <= d_high).all()
    # by at most one fine bin (0.46875) each side, onto an edge
    assert (h_low - d_low <= 60 / 128 + 1e-12).all()
    assert (d_high - h_high <= 60 / 128 + 1e-12).all()
    assert np.isin(d_low, edges).all() and np.isin(d_high, edges).all()


def _stays(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    pid = np.sort(rng.integers(0, 150, n))
    return pd.DataFrame(
        {
            "pid": pid,
            "los": length_of_stay(n, seed=6),
            "ward": pd.Categorical(rng.choice(["A", "B"], n), ["A", "B"]),
        }
    )


def test_a_plot_of_stays_draws_whole_day_medians_in_their_intervals():
    stays = _stays(4000)
    src = pp.source(stays, unit="pid", max_records=40)
    p = ggplot(src, aes("ward", "los")) + geom_boxplot(
        stat="boxplot_dp", limits=LIMITS, discrete=True, eps=2, seed=3
    )
    got = pp.layer_data(p)
    true = stays.groupby("ward", observed=True)["los"].median().to_numpy()
    assert np.array_equal(got["middle"], np.round(got["middle"]))
    assert ((got["middle_low"] <= true) & (true <= got["middle_high"])).all()


@pytest.mark.parametrize("whole_person", [False, True])
@pytest.mark.parametrize("geom", ["boxplot", "median"])
def test_neighbours_differ_only_in_noisy_numbers(whole_person, geom):
    import neighbours
    from fine_common import FINE_NOISY

    def make(d):
        src = pp.source(d, unit="pid", max_records=3)
        base = ggplot(src, aes("ward", "los"))
        if geom == "boxplot":
            return base + geom_boxplot(
                stat="boxplot_dp", limits=LIMITS, discrete=True, eps=1, seed=4
            )
        return base + geom_pointrange(
            stat="summary_dp", fun="median", bounds=LIMITS, eps=1, seed=4
        )

    stays = _stays()
    other = stays.copy()
    rows = other.index[other["pid"] == 7] if whole_person else other.index[:1]
    other.loc[rows, "los"] = 60
    other.loc[rows, "ward"] = "B"
    noisy = neighbours.NOISY | FINE_NOISY | {"y_low", "y_high"}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(neighbours, "NOISY", noisy)
        a = neighbours.snapshot(make(stays), ("y",))
        b = neighbours.snapshot(make(other), ("y",))
    assert neighbours.differences(a, b) == []


def test_a_mean_interval_holds_the_grids_rounding():
    # resolution 1 rounds each stay's length by up to half a day: at a
    # huge eps the histogram interval is the mean of the rounded values,
    # which misses the records' mean; covers="data" adds the half day
    d = pd.DataFrame(
        {
            "ward": pd.Categorical(["A"] * 6, ["A"]),
            "los": [0.4, 0.4, 0.4, 1.4, 1.4, 1.4],
        }
    )
    true = d["los"].mean()  # 0.9; the rounded values' mean is 0.5

    def ends(covers):
        p = ggplot(d, aes("ward", "los")) + geom_pointrange(
            stat="summary_dp",
            bounds=(0, 10),
            resolution=1,
            covers=covers,
            eps=1e6,
            seed=1,
        )
        with warnings.catch_warnings():
            # eps=1e6: the noise is nearly gone, as wanted here
            warnings.simplefilter("ignore", pp.PrivacyWarning)
            got = pp.layer_data(p)
        return got["y_low"].iloc[0], got["y_high"].iloc[0]

    lo, hi = ends("histogram")
    assert not lo <= true <= hi
    lo, hi = ends("data")
    assert lo <= true <= hi


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"covers": "truth"}, "covers must be 'data'"),
        ({"discrete": "yes"}, "discrete must be True"),
        ({"discrete": True, "limits": (0, 60.5)}, "limits=(lo, hi) of whole"),
        ({"discrete": True, "bins": 64}, "bins=64 cannot"),
    ],
)
def test_bad_cover_parameters_name_the_fix(kw, words):
    with pytest.raises(PlotninePrivateError, match=re.escape(words)):
        stat_boxplot_dp(**{"limits": LIMITS, "eps": 1, **kw})


def test_discrete_is_refused_for_a_mean():
    with pytest.raises(PlotninePrivateError, match="drop discrete"):
        pp.stat_summary_dp(bounds=LIMITS, discrete=True, eps=1)
