"""Private means and totals (stat_summary_dp / stat_summary_ckm) and their
engine mechanisms (LaplaceSums, CKMMagnitudes)."""

from __future__ import annotations

import functools
import io
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from neighbours import bundle_metadata, differences, snapshot
from plotnine import (
    aes,
    facet_wrap,
    geom_col,
    geom_errorbar,
    geom_point,
    geom_pointrange,
    ggplot,
    scale_y_log10,
    stat_summary,
)
from plotnine.data import mpg as _mpg
from scipy import stats

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.mechanisms.release.engine import Query, release_cells
from plotnine_private.mechanisms.release.magnitudes import (
    CKMMagnitudes,
    LaplaceSums,
    SumTable,
    laplace_halfwidth,
    rotate_key,
)
from plotnine_private.mechanisms.samplers import laplace as lap
from plotnine_private.mechanisms.streams.randomness import cell_words
from plotnine_private.report import report_from_built

ALPHA = 1e-6  # every randomised check below holds with prob >= 1 - ALPHA
CLASSES = sorted(_mpg["class"].unique())
CNT = pp.create_cnt_ptable(D=3, V=1.5, js=1)
NUM = pp.create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5])


def declared(d: pd.DataFrame) -> pd.DataFrame:
    d = d.copy()
    d["class"] = pd.Categorical(d["class"], categories=CLASSES)
    d["drv"] = pd.Categorical(d["drv"], categories=["4", "f", "r"])
    d["year"] = pd.Categorical(d["year"], categories=[1999, 2008])
    return pp.add_record_keys(d, name="rk", rng_seed=5)


CARS = declared(_mpg)


def dp_plot(d, geom=geom_pointrange, **kw):
    params = {"bounds": (10, 45), "eps": 1, "seed": 3, **kw}
    return ggplot(d, aes("class", "hwy")) + geom(
        stat="summary_dp", drop=False, **params
    )


def ckm_plot(d, geom=geom_pointrange, **kw):
    params = {"bounds": (10, 45), "ptable": CNT, "num_ptable": NUM, **kw}
    return ggplot(d, aes("class", "hwy", rkey="rk")) + geom(
        stat="summary_ckm", drop=False, **params
    )


def report_rows(plot):
    return pp.privacy_report(plot).table.query("layer != 'total'")


# --------------------------------------------------------------------------
# eps accounting
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("adjacency", "sum_sens", "cnt_sens"),
    [("replace", 35.0, 2.0), ("add_remove", 17.5, 1.0)],
)
def test_mean_charges_the_split_budget_with_centred_sensitivity(
    adjacency, sum_sens, cnt_sens
):
    p = dp_plot(CARS, eps=2, sum_share=0.3, adjacency=adjacency)
    report = pp.privacy_report(p)  # one build for the rows and totals
    rows = report.table.query("layer != 'total'")
    assert len(rows) == 2
    s, c = rows.iloc[0], rows.iloc[1]
    # totals of y - 27.5 on [10, 45]: |y - c| <= 17.5 per record
    assert s["eps"] == pytest.approx(0.6) and c["eps"] == pytest.approx(1.4)
    assert s["sensitivity"] == pytest.approx(sum_sens)
    assert c["sensitivity"] == pytest.approx(cnt_sens)
    assert f"scale={sum_sens / 0.6:.4g}" in s["parameters"]
    assert report.total_eps == pytest.approx(2.0)
    assert report.total_delta == 0


@pytest.mark.parametrize(
    ("adjacency", "sens"), [("replace", 90.0), ("add_remove", 45.0)]
)
def test_total_charges_one_uncentred_release(adjacency, sens):
    # fun="sum": a total of clamped y on [-5, 45], grid centred at 0:
    # one record moves a total by max(|lo|, |hi|) = 45 (twice: replace)
    p = dp_plot(
        CARS, geom_col, fun="sum", bounds=(-5, 45), adjacency=adjacency
    )
    rows = report_rows(p)
    assert len(rows) == 1
    assert rows.iloc[0]["eps"] == 1
    assert rows.iloc[0]["sensitivity"] == pytest.approx(sens)
    assert pp.layer_data(p)["n"].isna().all()  # no count was released
    q = dp_plot(CARS, geom_col, fun="sum", sum_share=0.75)
    rows = report_rows(q)
    assert rows["eps"].tolist() == pytest.approx([0.75, 0.25])
    assert pp.layer_data(q)["n"].notna().all()


def test_bar_and_errorbar_layers_are_one_release():
    kw = {"bounds": (10, 45), "eps": 1, "seed": 3}
    p = (
        ggplot(CARS, aes("class", "hwy"))
        + geom_col(stat="summary_dp", drop=False, **kw)
        + geom_errorbar(stat="summary_dp", drop=False, **kw)
    )
    built = build(p)  # one build for the report and both layers
    report = report_from_built(built)
    assert report.total_eps == pytest.approx(1.0)
    assert "duplicate of layer 0" in report.table["composition"].tolist()
    a, b = built.layers[0].data, built.layers[1].data
    # geom_col draws bars from 0 (its own ymin/ymax) and drops the cells
    # not drawn (y missing: released n is noise); compare the stat's
    b = b[b["y"].notna()].reset_index(drop=True)
    np.testing.assert_array_equal(a["y"], b["y"])
    np.testing.assert_array_equal(a["sum"], b["sum"])
    np.testing.assert_array_equal(a["n"], b["n"])


def test_declared_facets_and_fills_are_parallel_and_margins_multiply():
    p = (
        ggplot(CARS, aes("class", "hwy", colour="drv"))
        + geom_pointrange(
            stat="summary_dp", drop=False, bounds=(10, 45), eps=1, seed=2
        )
        + facet_wrap("year")
    )
    data = pp.layer_data(p)
    assert len(data) == 7 * 3 * 2  # every declared cell, empty ones too
    rows = report_rows(p)
    assert rows["composition"].str.contains("parallel").all()
    assert pp.privacy_report(p).total_eps == pytest.approx(1.0)


def test_budget_cap_applies_to_both_releases():
    p = dp_plot(CARS, eps=1) + pp.privacy_budget(eps=0.9)
    with pytest.raises(pp.BudgetExceededError):
        pp.layer_data(p)


# --------------------------------------------------------------------------
# convergence
# --------------------------------------------------------------------------
def test_converges_to_plotnines_stat_summary():
    ours = pp.layer_data(dp_plot(CARS, bounds=(0, 100), eps=1e5))
    theirs = pp.layer_data(
        ggplot(CARS, aes("class", "hwy"))
        + stat_summary(fun_y=np.mean, fun_ymin=np.mean, fun_ymax=np.mean)
    )
    np.testing.assert_allclose(ours["y"], theirs["y"], atol=1e-9)
    sizes = CARS.groupby("class", observed=False)["hwy"].agg(["size", "sum"])
    np.testing.assert_array_equal(ours["n"], sizes["size"])
    np.testing.assert_allclose(ours["sum"], sizes["sum"], atol=1e-9)
    # the noise interval shrinks onto the estimate, widened by the grid's
    # rounding (resolution 0.1: half of it each side, covers="data")
    assert (ours["ymax"] - ours["ymin"]).max() < 0.1 + 0.01


def test_total_converges_and_values_outside_bounds_are_clamped():
    p = dp_plot(CARS, geom_col, fun="sum", bounds=(20, 30), eps=1e6)
    got = pp.layer_data(p)["y"].to_numpy()
    want = (
        CARS.assign(h=CARS["hwy"].clip(20, 30))
        .groupby("class", observed=False)["h"]
        .sum()
        .to_numpy()
    )
    np.testing.assert_allclose(got, want, atol=1e-9)


@pytest.mark.parametrize("eps", [4.0, 40.0])
def test_error_shrinks_as_one_over_eps(eps):
    big = pd.concat([CARS] * 20, ignore_index=True)  # >= 100 per class
    data = pp.layer_data(dp_plot(big, eps=eps, seed=11))
    true = big.groupby("class", observed=False)["hwy"].mean().to_numpy()
    err = np.abs(data["y"].to_numpy() - true)
    # mean = c + S/N: total noise scale 35 / (eps/2), count noise scale
    # 2 / (eps/2) times |mean - c| <= 17.5, over n >= 100 records; 15
    # scales are exceeded with probability < 1e-6
    scale = (35 / (eps / 2) + 17.5 * 2 / (eps / 2)) / 100
    assert err.max() < 15 * scale
    assert err.max() > 0  # it is noisy


def test_grid_resolution_rounds_to_a_public_grid():
    d = CARS.assign(hwy=CARS["hwy"] + 0.123)
    p = dp_plot(
        d, geom_col, fun="sum", bounds=(0, 50), resolution=0.5, eps=1e6
    )
    got = pp.layer_data(p)["y"].to_numpy()
    grid = np.floor(d["hwy"] / 0.5 + 0.5) * 0.5
    want = d.assign(g=grid).groupby("class", observed=False)["g"].sum()
    np.testing.assert_allclose(got, want.to_numpy(), atol=1e-9)


# --------------------------------------------------------------------------
# the noise: scale, interval, DP audit
# --------------------------------------------------------------------------
def _sum_release(
    totals, eps, bound, adjacency, seed, noise="discrete_laplace"
):
    n = len(totals)
    table = SumTable(
        words=cell_words(np.arange(n)),
        n=np.ones(n, dtype=np.int64),
        total=np.asarray(totals, dtype=np.int64),
    )
    mech = LaplaceSums(eps, bound, 1.0, adjacency, noise)
    q = Query.make("summary:sum", "data", seed, **mech.parameters())
    return release_cells(q, table, mech, domain="public").values, mech


@pytest.mark.parametrize("adjacency", ["replace", "add_remove"])
def test_noise_of_totals_has_the_claimed_scale(adjacency):
    draws = 40000
    vals, mech = _sum_release(np.zeros(draws), 0.5, 7, adjacency, seed=1)
    b = mech.scale_units
    assert b == 7 * lap.ADJACENCY_SENSITIVITY[adjacency] / 0.5
    z = vals.astype(np.int64)
    assert np.array_equal(z, vals)  # integers on the grid
    # P(|Z| >= b): exact discrete Laplace tail, binomial test
    k = math.ceil(b)
    p = math.exp(-1 / b)
    tail = 2 * p**k / (1 + p)
    hits = int((np.abs(z) >= k).sum())
    assert stats.binomtest(hits, draws, tail).pvalue > ALPHA
    var = lap.dlap_variance(b)
    # sample variance of 40000 Laplace draws: relative sd ~ 0.011
    assert abs(z.var() / var - 1) < 0.1
    assert (
        stats.binomtest(int((z > 0).sum()), int((z != 0).sum()), 0.5).pvalue
        > ALPHA
    )


def _eps_lower_bound(shifted, base, cut):
    draws = len(base)
    a, b = int((shifted >= cut).sum()), int((base >= cut).sum())
    lo = stats.beta.ppf(ALPHA / 2, a, draws - a + 1)
    hi = stats.beta.ppf(1 - ALPHA / 2, b + 1, draws - b)
    return math.log(lo / hi)


@pytest.mark.parametrize(
    ("adjacency", "shift"), [("add_remove", 7), ("replace", 14)]
)
def test_epsilon_audit_of_neighbouring_totals(adjacency, shift):
    # neighbours: a cell total moves by the sensitivity (one record at the
    # bound added; under replace, also one at -bound removed)
    eps, draws = 1.0, 50000
    base, _ = _sum_release(np.zeros(draws), eps, 7, adjacency, seed=2)
    moved, _ = _sum_release(np.full(draws, shift), eps, 7, adjacency, seed=3)
    lb = _eps_lower_bound(moved, base, shift)
    assert lb <= eps
    assert lb > 0.5 * eps  # the audit has power


def test_epsilon_audit_catches_a_halved_sensitivity():
    # negative control: noise for sensitivity B on totals that move by 2B
    eps, draws = 1.0, 50000
    base, _ = _sum_release(np.zeros(draws), eps, 7, "add_remove", seed=2)
    moved, _ = _sum_release(np.full(draws, 14), eps, 7, "add_remove", seed=3)
    assert _eps_lower_bound(moved, base, 14) > eps


def test_stat_noise_scale_matches_the_report():
    # 3000 declared one-record cells; add_remove, eps=1, bounds (0, 8),
    # resolution 1: totals get DLap(8)
    levels = [f"c{i:04d}" for i in range(3000)]
    d = pd.DataFrame(
        {
            "x": pd.Categorical(levels, categories=levels),
            "y": np.full(3000, 5.0),
        }
    )
    p = ggplot(d, aes("x", "y")) + geom_col(
        stat="summary_dp",
        drop=False,
        fun="sum",
        bounds=(0, 8),
        resolution=1,
        eps=1,
        seed=9,
        adjacency="add_remove",
        # not stacked: 3000 one-bar stacks only cost time, the noise is the
        # stat's
        position="identity",
    )
    # one build for the data and its report (privacy_report(p) would
    # build an equal copy)
    built = build(p)
    z = built.layers[0].data["sum"].to_numpy() - 5
    rows = report_from_built(built).table.query("layer != 'total'")
    assert rows.iloc[0]["sensitivity"] == 8
    var = lap.dlap_variance(8.0)
    # relative sd of the sample variance: sqrt(5 / 3000) ~ 0.04
    assert abs(z.var() / var - 1) < 0.25
    assert abs(z.var() / lap.dlap_variance(16.0) - 1) > 0.5


def test_continuous_noise_option_is_rounded_to_the_grid():
    vals, mech = _sum_release(
        np.zeros(20000), 1.0, 3, "replace", 4, noise="laplace"
    )
    assert np.array_equal(vals, np.round(vals))
    assert abs(vals.var() / (2 * mech.scale_units**2) - 1) < 0.1


@pytest.mark.parametrize("noise", ["discrete_laplace", "laplace"])
def test_halfwidth_is_the_exact_tail_quantile(noise):
    for scale in (0.7, 3.0, 25.0):
        for alpha in (0.05, 0.01):
            h = laplace_halfwidth(scale, noise, alpha)
            if noise == "discrete_laplace":
                k = np.arange(-int(60 * scale) - 50, int(60 * scale) + 50)
                pmf = lap.dlap_pmf(k, scale)
                inside = pmf[np.abs(k) <= h].sum()
                below = pmf[np.abs(k) <= h - 1].sum()
            else:
                inside = 1 - math.exp(-(h + 0.5) / scale)
                below = 1 - math.exp(-(h - 0.5) / scale) if h else 0
            assert inside >= 1 - alpha - 1e-12
            assert below < 1 - alpha


def test_noise_interval_covers_the_true_mean_at_its_level():
    levels = [f"g{i:03d}" for i in range(600)]
    rng = np.random.default_rng(0)
    n = rng.integers(0, 30, size=len(levels))
    d = pd.DataFrame(
        {
            "x": pd.Categorical(np.repeat(levels, n), categories=levels),
            "y": rng.uniform(0, 10, size=n.sum()).round(2),
        }
    )
    true = d.groupby("x", observed=False)["y"].mean().to_numpy()
    true = np.where(n > 0, true, np.nan)
    hits = total = 0
    for seed in range(4):
        data = pp.layer_data(
            ggplot(d, aes("x", "y"))
            + geom_pointrange(
                stat="summary_dp",
                drop=False,
                bounds=(0, 10),
                eps=0.5,
                seed=seed,
                level=0.9,
            )
        )
        ok = n > 0
        # y_low/y_high: the interval, also of cells not drawn because
        # their released count is noise (y, ymin, ymax missing there)
        inside = (data["y_low"] <= true + 1e-9) & (
            true - 1e-9 <= data["y_high"]
        )
        hits += int(inside[ok].sum())
        total += int(ok.sum())
        drawn = data["y"].notna()
        assert (data["ymin"][drawn] <= data["y"][drawn]).all()
        assert (data["y"][drawn] <= data["ymax"][drawn]).all()
    # coverage >= 0.9 by construction; a binomial lower bound at ALPHA
    assert stats.binomtest(hits, total, 0.9, "less").pvalue > ALPHA


def test_errorbar_none_gives_a_point():
    data = pp.layer_data(dp_plot(CARS, errorbar=None))
    np.testing.assert_array_equal(data["ymin"], data["y"])
    np.testing.assert_array_equal(data["ymax"], data["y"])


NEIGHBOURS = {
    "outlier": lambda d: d.assign(hwy=d["hwy"].where(d.index != 0, 1000)),
    "missing": lambda d: d.assign(hwy=d["hwy"].where(d.index != 0)),
    "other panel": lambda d: d.assign(
        year=d["year"].where(d.index != 0, 2008)
    ),
    "removed": lambda d: d.drop(index=0),
}


def _neighbour_plot(d, fun):
    return (
        ggplot(d, aes("class", "hwy", colour="drv"))
        + geom_pointrange(
            stat="summary_dp",
            drop=False,
            bounds=(10, 45),
            eps=1,
            seed=7,
            fun=fun,
            position="identity",
        )
        + facet_wrap("year")
    )


@functools.cache
def _original_views(fun):
    # the original data's side is the same for every neighbour (one seed,
    # a fresh session each time), so it is built and saved once per fun
    plot = _neighbour_plot(CARS, fun)
    return snapshot(plot), bundle_metadata(plot)


@pytest.mark.parametrize("change", sorted(NEIGHBOURS))
@pytest.mark.parametrize("fun", ["mean", "sum"])
def test_only_noisy_numbers_differ_on_neighbours(change, fun):
    other = _neighbour_plot(NEIGHBOURS[change](CARS), fun)
    snap, meta = _original_views(fun)
    assert differences(snap, snapshot(other)) == []
    assert meta == bundle_metadata(other)


def test_ckm_neighbours_differ_only_in_numbers():
    other = NEIGHBOURS["outlier"](CARS)
    a, b = snapshot(ckm_plot(CARS)), snapshot(ckm_plot(other))
    assert differences(a, b) == []


# --------------------------------------------------------------------------
# CKM
# --------------------------------------------------------------------------
COLS = ["y", "ymin", "ymax", "n", "sum"]


def test_ckm_same_records_same_noise():
    a = pp.layer_data(ckm_plot(CARS))
    # other row order, another layer type, a plot with an extra layer
    shuffled = CARS.sample(frac=1, random_state=1).reset_index(drop=True)
    b = pp.layer_data(ckm_plot(shuffled, geom_col))
    c = pp.layer_data(
        ggplot(CARS, aes("class", "hwy", rkey="rk"))
        + geom_point(
            stat="summary_ckm",
            drop=False,
            bounds=(10, 45),
            ptable=CNT,
            num_ptable=NUM,
        )
        + geom_point(
            aes("class", "cty", rkey="rk"),
            stat="summary_ckm",
            drop=False,
            bounds=(5, 40),
            ptable=CNT,
            num_ptable=NUM,
        ),
        0,
    )
    pd.testing.assert_frame_equal(a[COLS], c[COLS])
    same = ["n", "sum"]  # geom_col draws its bars from 0 (ymin, ymax)
    pd.testing.assert_frame_equal(a[same], b[same])
    # a change in one class leaves every other class's noise alone
    changed = CARS.copy()
    changed.loc[changed["class"] == "suv", "hwy"] += 1
    d = pp.layer_data(ckm_plot(changed))
    other = d["x"] != CLASSES.index("suv") + 1
    pd.testing.assert_frame_equal(
        a.loc[other, COLS].reset_index(drop=True),
        d.loc[other, COLS].reset_index(drop=True),
    )


@pytest.mark.parametrize("magnifier", ["top_contr", "sum"])
def test_ckm_noise_is_bounded_and_intervals_cover(magnifier):
    big = declared(pd.concat([_mpg] * 3, ignore_index=True))
    data = pp.layer_data(ckm_plot(big, magnifier=magnifier, p=0.05))
    g = big.groupby("class", observed=False)["hwy"]
    true_sum, true_n = g.sum().to_numpy(), g.size().to_numpy()
    assert (np.abs(data["n"] - true_n) <= CNT.max_noise).all()
    mag = 45 if magnifier == "top_contr" else true_sum
    assert (np.abs(data["sum"] - true_sum) <= 0.05 * 5 * mag + 1e-9).all()
    true_mean = true_sum / true_n
    assert ((data["ymin"] <= true_mean) & (true_mean <= data["ymax"])).all()
    assert (data["sum"] != true_sum).any()  # it perturbs


def test_ckm_total_uses_the_magnitude_table_lookup():
    # one cell, total 100 (grid 1), top contribution 40, p = 0.1: the
    # ratio 100 / 4 = 25 is capped at D = 5, so v is row 5's entry
    table = SumTable(
        words=cell_words(np.arange(1)),
        n=np.array([3]),
        total=np.array([100]),
        top=np.array([40]),
        key_sum=np.array([123_456_789]),
    )
    mech = CKMMagnitudes(NUM, 1.0, "top_contr", 0.1, same_key=True)
    v = NUM.magnitude_noise([5.0], [123_456_789 % 10**8])[0]
    assert mech.noise(table)[0] == pytest.approx(4.0 * v)
    rot = CKMMagnitudes(NUM, 1.0, "top_contr", 0.1, same_key=False)
    v2 = NUM.magnitude_noise(
        [5.0], rotate_key(np.array([123_456_789]), 10**8)
    )[0]
    assert rot.noise(table)[0] == pytest.approx(4.0 * v2)
    # "sum": magnifier |total|, ratio 1 / p = 10, capped at 5
    mech = CKMMagnitudes(NUM, 1.0, "sum", 0.1, same_key=True)
    assert mech.noise(table)[0] == pytest.approx(10.0 * v)
    # a total of 0 or a cell key of 0 is not perturbed
    zero = SumTable(
        words=table.words,
        n=np.array([2]),
        total=np.array([0]),
        top=np.array([5]),
        key_sum=np.array([10**8]),
    )
    assert CKMMagnitudes(NUM, 1.0).noise(zero)[0] == 0


def test_ckm_threshold_hides_small_cells_and_report_lists_both_tables():
    data = pp.layer_data(ckm_plot(CARS, threshold=10))
    assert (data["n"] >= 10).all()
    assert len(data) < 7
    rows = report_rows(ckm_plot(CARS))
    assert rows["ptable_fingerprint"].tolist() == [
        NUM.fingerprint,
        CNT.fingerprint,
    ]
    assert (rows["charged_eps"] == 0).all()


def test_ckm_undeclared_x_is_observed():
    d = CARS.assign(cls=CARS["class"].astype(str))
    p = ggplot(d, aes("cls", "hwy", rkey="rk")) + geom_pointrange(
        stat="summary_ckm",
        drop=False,
        bounds=(10, 45),
        ptable=CNT,
        num_ptable=NUM,
    )
    with pytest.warns(pp.PrivacyWarning):
        data = pp.layer_data(p)
    assert len(data) == 7


# --------------------------------------------------------------------------
# bad inputs
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"bounds": None}, "bounds is required"),
        ({"bounds": (5, 5)}, "bounds must be finite with low < high"),
        ({"bounds": (9, 2)}, "bounds must be finite with low < high"),
        ({"bounds": "10-45"}, "bounds must be"),
        ({"fun": "median", "sum_share": 0.5}, "Drop sum_share"),
        ({"fun": "max"}, "fun must be one of 'mean', 'sum'"),
        ({"sum_share": 1}, "sum_share must be a number in (0, 1)"),
        ({"sum_share": 0}, "sum_share"),
        ({"sum_share": "half"}, "sum_share"),
        (
            {"fun": "sum", "sum_share": 1.5},
            "sum_share must be a number in (0, 1]",
        ),
        ({"resolution": 100}, "resolution=100 is coarser"),
        ({"resolution": -1}, "resolution must be a number > 0"),
        ({"resolution": 1e-12}, "too fine"),
        ({"errorbar": "se"}, "errorbar must be one of"),
        ({"level": 95}, "level must be a number in (0, 1)"),
        ({"adjacency": "swap"}, "adjacency must be one of"),
    ],
)
def test_bad_dp_parameters_are_refused_before_plotting(kw, words):
    with pytest.raises(PlotninePrivateError, match="stat_summary_dp") as e:
        dp_plot(CARS, **kw)
    assert words in str(e.value)


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"num_ptable": None}, "num_ptable is required"),
        ({"num_ptable": CNT}, "num_ptable must be a magnitude p-table"),
        ({"ptable": NUM}, "ptable must be a count p-table"),
        ({"ptable": None}, "ptable is required"),
        ({"p": 1.5}, "p must be a number in (0, 1)"),
        ({"magnifier": "range"}, "magnifier must be one of"),
        ({"same_key": "yes"}, "same_key must be True or False"),
        ({"bounds": None}, "bounds is required"),
    ],
)
def test_bad_ckm_parameters_are_refused(kw, words):
    with pytest.raises(PlotninePrivateError, match="stat_summary_ckm") as e:
        ckm_plot(CARS, **kw)
    assert words in str(e.value)


def test_bad_data_is_refused_with_the_fix():
    undeclared = CARS.assign(cls=CARS["class"].astype(str))
    cases = [
        (
            ggplot(undeclared, aes("cls", "hwy"))
            + geom_col(stat="summary_dp", drop=False, bounds=(0, 50), eps=1),
            "'cls' has no public set of levels",
        ),
        (
            ggplot(CARS, aes("class", "hwy", fill="manufacturer"))
            + geom_col(stat="summary_dp", drop=False, bounds=(0, 50), eps=1),
            "'manufacturer' has no public set of levels",
        ),
        (
            ggplot(CARS, aes("class", "model"))
            + geom_col(stat="summary_dp", drop=False, bounds=(0, 50), eps=1),
            "y must be numeric",
        ),
        (
            ggplot(CARS, aes("class", "hwy", weight="cty"))
            + geom_col(stat="summary_dp", drop=False, bounds=(0, 50), eps=1),
            "weight aesthetic is not supported",
        ),
        (
            ggplot(CARS, aes("class"))
            + geom_col(stat="summary_dp", drop=False, bounds=(0, 50), eps=1),
            "missing required aesthetic(s) y",
        ),
        (
            dp_plot(CARS, bounds=(0, 45)) + scale_y_log10(),
            "not valid on the y scale (log10)",
        ),
        (
            ggplot(CARS, aes("class", "hwy"))
            + geom_col(
                stat="summary_ckm",
                drop=False,
                bounds=(0, 50),
                ptable=CNT,
                num_ptable=NUM,
            ),
            "needs record keys",
        ),
    ]
    for plot, words in cases:
        with pytest.raises(PlotninePrivateError) as e:
            pp.layer_data(plot)
        assert words in str(e.value), words


def test_missing_y_is_left_out_silently():
    d = CARS.copy()
    d.loc[:9, "hwy"] = np.nan
    plot = dp_plot(d, eps=1e6)  # made apart: eps > 10 warns there
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = pp.layer_data(plot)
    want = d.dropna(subset=["hwy"]).groupby("class", observed=False).size()
    np.testing.assert_array_equal(data["n"], want.to_numpy())


# --------------------------------------------------------------------------
# drawing and outputs
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "plot",
    [
        dp_plot(CARS),
        dp_plot(CARS, geom_col, fun="sum", bounds=(0, 50)),
        ckm_plot(CARS),
        ckm_plot(CARS, geom_col, fun="sum"),
        dp_plot(CARS, geom_errorbar),
    ],
    ids=["dp pointrange", "dp col", "ckm pointrange", "ckm col", "errorbar"],
)
def test_geoms_draw(plot):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plot.save(buf, format="png", width=4, height=3, dpi=50, verbose=False)
    assert buf.getvalue()[:4] == b"\x89PNG"


def test_save_release_writes_the_released_summary(tmp_path, key_file):
    pp.save_release(dp_plot(CARS), tmp_path / "b", code="plot")
    table = pd.read_csv(tmp_path / "b" / "layer_0_stat_summary_dp.csv")
    assert {"x_level", "y", "ymin", "ymax", "n", "sum"} <= set(table.columns)
    assert not any("noisy" in c for c in table.columns)
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    props = next(iter(results["results"].values()))["properties"]
    assert len(props["releases"]) == 2
