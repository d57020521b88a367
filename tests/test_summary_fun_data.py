"""stat_summary's fun_data (mean_se, mean_cl_normal, mean_sdl) from the
private count, total and total of squares, DP and CKM."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from neighbours import differences, snapshot
from plotnine import aes, geom_pointrange, ggplot, stat_summary
from plotnine.data import mpg as _mpg
from plotnine.stats.stat_summary import mean_cl_normal
from scipy import stats

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.mechanisms.ptable.ckm import record_key_integers
from plotnine_private.mechanisms.release.magnitudes import (
    CKMMagnitudes,
    SumTable,
)
from plotnine_private.mechanisms.streams.randomness import cell_words
from plotnine_private.stats.summary import data as summary_data

CLASSES = sorted(_mpg["class"].unique())
CNT = pp.create_cnt_ptable(D=3, V=1.5, js=1)
NUM = pp.create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5])
CARS = pp.add_record_keys(
    _mpg.assign(class_=pd.Categorical(_mpg["class"], categories=CLASSES)),
    name="rk",
    rng_seed=5,
)
COLS = ["x", "y", "ymin", "ymax"]


def private(d, stat="summary_dp", **kw):
    params = {"bounds": (10, 45), "drop": True, **kw}
    if stat == "summary_dp":
        params = {"eps": 1e9, "seed": 1, **params}
    else:
        params = {"ptable": CNT, "num_ptable": NUM, **params}
    return ggplot(d, aes("class_", "hwy", rkey="rk")) + geom_pointrange(
        stat=stat, **params
    )


def plotnines(d, **kw):
    return pp.layer_data(ggplot(d, aes("class_", "hwy")) + stat_summary(**kw))


@pytest.mark.parametrize(
    ("fun_data", "fun_args"),
    [
        ("mean_se", None),
        ("mean_se", {"mult": 2}),
        ("mean_cl_normal", None),
        ("mean_cl_normal", {"confidence_interval": 0.8}),
        ("mean_sdl", None),
        (mean_cl_normal, {"confidence_interval": 0.5}),
    ],
)
def test_at_a_huge_eps_fun_data_is_plotnines(fun_data, fun_args):
    kw = {"fun_data": fun_data, "fun_args": fun_args}
    got = pp.layer_data(private(CARS, **kw))[COLS]
    want = plotnines(CARS, **kw)[COLS]
    # exact squares on the default grid: float round-off only
    np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float))


def test_mult_scales_the_bars():
    one = pp.layer_data(private(CARS, fun_data="mean_sdl", eps=2, seed=4))
    three = pp.layer_data(
        private(CARS, fun_data="mean_sdl", eps=2, seed=4, fun_args={"mult": 3})
    )
    np.testing.assert_array_equal(one["y"], three["y"])  # one release
    np.testing.assert_allclose(
        three["ymax"] - three["y"], 1.5 * (one["ymax"] - one["y"])
    )


def test_shares_split_eps_and_the_squares_have_their_sensitivity():
    p = private(
        CARS,
        fun_data="mean_se",
        eps=3,
        shares={"sum": 0.5, "sumsq": 0.3, "count": 0.2},
    )
    report = pp.privacy_report(p)  # one build for the rows and total
    rows = report.table.query("layer != 'total'")
    by = dict(zip(rows["eps"].round(9), rows["sensitivity"]))
    # (y - 27.5)^2 <= 17.5^2 on [10, 45]: replace moves a total of
    # squares by twice that (rounded on the squares' public grid)
    assert by[0.9] == pytest.approx(2 * 17.5**2, rel=1e-5)
    assert by[1.5] == pytest.approx(35.0) and by[0.6] == 2
    assert report.total_eps == pytest.approx(3.0)


@pytest.fixture(scope="module")
def sample():
    """300 cells of 30 normal records (true mean 0), one private build
    of mean_cl_normal and mean_se at eps=3, and plotnine's half-widths
    (sampling only) of the same cells."""
    levels = [f"g{i:03d}" for i in range(300)]
    rng = np.random.default_rng(11)
    d = pd.DataFrame(
        {
            "x": pd.Categorical(np.repeat(levels, 30), categories=levels),
            "y": rng.normal(0.0, 1.0, size=30 * len(levels)).round(2),
        }
    )
    plot = ggplot(d, aes("x", "y"))
    for fun_data in ("mean_cl_normal", "mean_se"):
        # a coarse public grid keeps the noise tables small (cheap test)
        plot += geom_pointrange(
            stat="summary_dp",
            bounds=(-6, 6),
            resolution=0.1,
            eps=3,
            seed=2,
            fun_data=fun_data,
        )
    g = d.groupby("x", observed=False)["y"]
    t = stats.t.ppf(0.975, g.size() - 1)
    layers = build(plot).layers
    return {
        "mean_cl_normal": layers[0].data,
        "mean_se": layers[1].data,
        # plotnine's mean_cl_normal and mean_se (np.var: ddof 0)
        "cl_half": (t * g.sem()).to_numpy(),
        "se": np.sqrt(g.var(ddof=0) / g.size()).to_numpy(),
    }


def test_mean_cl_normal_covers_the_sampling_and_the_noise(sample):
    # eps=3 on 30 records: the noise of a mean is larger than its
    # standard error, so a sampling-only interval covers ~0.6
    data = sample["mean_cl_normal"]
    assert data["y"].notna().all()
    ours = ((data["ymin"] <= 0) & (data["ymax"] >= 0)).mean()
    blind = (data["y"].abs() <= sample["cl_half"]).mean()
    assert 0.91 <= ours <= 0.99, ours  # 0.013: its sd over 300 cells
    assert blind < 0.8, blind


def test_mean_se_is_the_standard_error_with_the_noise(sample):
    # the mean's error over its private standard error has variance 1
    # (0.13 is its standard error over 300 cells); plotnine's se alone,
    # around the same private means, gives several times that
    data = sample["mean_se"]
    ours = ((data["y"] / (data["ymax"] - data["y"])) ** 2).mean()
    blind = ((data["y"] / sample["se"]) ** 2).mean()
    assert 0.75 <= ours <= 1.3, ours
    assert blind > 2.5, blind


def test_ckm_perturbs_the_squares_as_a_magnitude_cell(monkeypatch):
    seen = {}
    real = summary_data.ckm_interval

    def spy(stat, n, t, q, t_bound, q_bound):
        seen.update(q=q, q_bound=q_bound)
        return real(stat, n, t, q, t_bound, q_bound)

    monkeypatch.setattr(
        "plotnine_private.stats.summary.release.ckm_interval", spy
    )
    data = pp.layer_data(
        private(CARS, "summary_ckm", fun_data="mean_cl_normal", drop=False)
    )
    # the exact squares of the centred grid (resolution 0.01, m = 1)
    k = np.floor((CARS["hwy"].clip(10, 45) - 27.5) / 0.01 + 0.5)
    k = k.astype(np.int64)
    q = k * k
    cell = CARS["class_"].cat.codes.to_numpy()
    keys = record_key_integers(CARS["rk"].to_numpy())
    table = SumTable(
        words=cell_words(np.arange(len(CLASSES))),
        n=np.bincount(cell, minlength=len(CLASSES)),
        total=np.bincount(cell, weights=q).astype(np.int64),
        top=np.array([q[cell == c].max() for c in range(len(CLASSES))]),
        key_sum=np.array(
            [int(keys[cell == c].sum()) for c in range(len(CLASSES))]
        )
        % NUM.key_modulus,
    )
    mech = CKMMagnitudes(NUM, 1e-4, "top_contr", 0.1, False)
    want = table.total * 1e-4 + mech.noise(table)
    np.testing.assert_allclose(seen["q"], want)
    assert (seen["q"] != table.total * 1e-4).any()  # it perturbs
    # the cover: the noise-free mean is inside, and so is plotnine's
    # interval where the sampling part dominates the noise
    true = CARS.groupby("class_", observed=False)["hwy"].mean().to_numpy()
    assert ((data["ymin"] <= true) & (true <= data["ymax"])).all()
    report = pp.privacy_report(
        private(CARS, "summary_ckm", fun_data="mean_cl_normal")
    )
    assert len(report.table.query("layer != 'total'")) == 3


NEIGHBOURS = {
    "outlier": lambda d: d.assign(hwy=d["hwy"].where(d.index != 0, 1000)),
    "removed": lambda d: d.drop(index=0),
}


@pytest.mark.parametrize("change", sorted(NEIGHBOURS))
@pytest.mark.parametrize("stat", ["summary_dp", "summary_ckm"])
def test_only_noisy_numbers_differ_on_neighbours(change, stat):
    kw = {"eps": 1} if stat == "summary_dp" else {}
    other = NEIGHBOURS[change](CARS)
    kw = {"fun_data": "mean_cl_normal", "drop": False, **kw}
    a, b = (
        snapshot(private(CARS, stat, **kw)),
        snapshot(private(other, stat, **kw)),
    )
    assert differences(a, b) == []


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"fun_data": "mean_cl_boot"}, "fun_data='mean_cl_normal'"),
        ({"fun_data": "mean_ci"}, "fun_data='mean_ci' is not released"),
        (
            {"fun_data": "mean_se", "fun_args": {"conf": 0.9}},
            "fun_args key 'conf'",
        ),
        (
            {
                "fun_data": "mean_cl_normal",
                "fun_args": {"confidence_interval": 1},
            },
            "in \\(0, 1\\)",
        ),
        ({"fun_data": "mean_se", "fun_args": {"mult": -1}}, ">= 0"),
        ({"fun_args": {"mult": 2}}, "fun_args=.* needs fun_data"),
        ({"fun_data": "mean_se", "fun": "sum"}, "fun='sum' cannot go"),
        ({"fun_data": "mean_se", "fun_y": np.mean}, "drop one"),
        ({"fun_data": "mean_se", "sum_share": 0.5}, "shares="),
        ({"shares": {"sum": 1}}, "without fun_data give sum_share"),
        (
            {"fun_data": "mean_se", "shares": {"sum": 0.5, "count": 0.5}},
            "exactly the keys",
        ),
        # a mean's bar ends come from another release: a median's do not
        ({"fun_ymin": np.min}, "fun_y=np.median .* fun_data='mean_cl_normal'"),
        (
            {"fun_y": np.median, "fun_ymax": np.std},
            "fun_ymax=.* np.min \\(0\\), np.max \\(1\\)",
        ),
    ],
)
def test_bad_fun_data_is_refused_naming_the_fix(kw, words):
    with pytest.raises(pp.PlotninePrivateError, match=words):
        private(CARS, **kw)


def test_a_fine_grid_rounds_the_squares_on_a_public_divisor():
    # resolution 1e-4 on [10, 45]: 175,000 steps, squares divided by 15;
    # the bars move by far less than the grid's own rounding
    kw = {"fun_data": "mean_sdl"}
    got = pp.layer_data(private(CARS, resolution=1e-4, **kw))[COLS]
    want = plotnines(CARS, **kw)[COLS]
    np.testing.assert_allclose(
        got.to_numpy(float), want.to_numpy(float), atol=1e-4
    )
    assert summary_data.square_divisor(175_000) == 15
