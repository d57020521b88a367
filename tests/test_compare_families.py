"""compare() of the curve, box, summary and PCA stats: the unperturbed
panel is plotnine's stat (or an ordinary PCA) on the same public grid,
the twins keep the layer's parameters, captions state the drawn
intervals."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    geom_boxplot,
    geom_density,
    geom_point,
    geom_step,
    ggplot,
)
from plotnine.stats import stat_boxplot, stat_density, stat_ecdf, stat_summary

import plotnine_private as pp
from plotnine_private import layer_data
from plotnine_private.compare import MARKER
from plotnine_private.compare.plain_pca import (
    pca_scores,
    stat_pca_score_plain,
)
from plotnine_private.stats.boxplot import stat_boxplot_ckm
from plotnine_private.stats.density import stat_density_ckm, stat_density_dp
from plotnine_private.stats.ecdf import stat_ecdf_ckm
from plotnine_private.stats.summary.stat import stat_summary_ckm

PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)
NUM = pp.create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5])
CKM = {"ptable": PTAB, "rkey": "rk"}
HWY = (10, 45)


@pytest.fixture
def cars(mpg_cat):
    return pp.add_record_keys(mpg_cat, name="rk", rng_seed=2024)


def _stats(c):
    return {k: p.layers[0].stat for k, p in c.plots.items()}


def _data(plot, i=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return layer_data(plot, i)


def _private_panels_share(c, ax):
    private = [_data(c.plots[k]) for k in ("dp", "ckm")]
    assert c.limits[ax] is not None
    for d in private:
        assert len(d)


def test_density_swaps_to_stat_density_with_the_private_bandwidth(cars):
    p = ggplot(cars, aes("hwy", fill="drv")) + geom_density(
        stat="density_dp", limits=HWY, bins=70, adjust=2, eps=1, seed=3
    )
    c = pp.compare(p, ckm=CKM)
    s = _stats(c)
    assert type(s["unperturbed"]) is stat_density
    assert isinstance(s["dp"], stat_density_dp)
    assert isinstance(s["ckm"], stat_density_ckm)
    assert s["ckm"].params["limits"] == HWY and s["ckm"].params["bins"] == 70
    # the same smoothing: the public rule's bandwidth, as a number
    assert s["unperturbed"].params["bw"] == pytest.approx((45 - 10) / 32)
    assert s["unperturbed"].params["adjust"] == 2
    assert c.plots["unperturbed"].labels.title == MARKER
    for k in ("dp", "ckm"):
        assert "density band within ±" in c.captions[k]
        assert c.plots[k].labels.caption == c.captions[k]
    assert c.captions["dp"].startswith("noise: ±")
    _private_panels_share(c, "x")
    # the unperturbed panel is plotnine's density of the raw records
    plain = _data(c.plots["unperturbed"])
    assert plain["x"].min() == cars["hwy"].min()


def test_ecdf_from_ckm_with_its_dp_twin(cars):
    p = ggplot(cars, aes("hwy", colour="drv", rkey="rk")) + geom_step(
        stat="ecdf_ckm", limits=HWY, bins=35, ptable=PTAB
    )
    c = pp.compare(p, dp={"eps": 2, "seed": 4})
    s = _stats(c)
    assert type(s["unperturbed"]) is stat_ecdf
    assert isinstance(s["ckm"], stat_ecdf_ckm)
    assert s["dp"].params["eps"] == 2 and s["dp"].params["bins"] == 35
    assert "rkey" not in c.plots["dp"].mapping
    assert "ECDF band within ±" in c.captions["dp"]
    # plotnine's ECDF steps at every record and ends at 1
    plain = _data(c.plots["unperturbed"])
    assert plain.groupby("group")["y"].max().eq(1).all()


def test_boxplot_has_its_quartile_intervals_in_the_caption(cars):
    p = ggplot(cars, aes("drv", "hwy")) + geom_boxplot(
        stat="boxplot_dp", limits=HWY, bins=35, coef=1, eps=1, seed=5
    )
    c = pp.compare(p, ckm=CKM)
    s = _stats(c)
    assert type(s["unperturbed"]) is stat_boxplot
    assert s["unperturbed"].params["coef"] == 1
    assert isinstance(s["ckm"], stat_boxplot_ckm)
    dp = _data(c.plots["dp"])
    widest = max(
        float(((dp[f"{q}_high"] - dp[f"{q}_low"]) / 2).max())
        for q in ("lower", "middle", "upper")
    )
    assert f"quartiles within ±{widest:.3g} (95%, widest)" in c.captions["dp"]
    # plotnine's own boxes: the true quartiles of the raw records
    plain = _data(c.plots["unperturbed"])
    true = cars.groupby("drv", observed=True)["hwy"].median().to_numpy()
    assert np.allclose(plain["middle"], true)


@pytest.mark.parametrize("fun", ["mean", "sum"])
def test_summary_unperturbed_is_the_exact_function(cars, fun):
    p = ggplot(cars, aes("drv", "hwy")) + geom_point(
        stat="summary_dp", bounds=HWY, fun=fun, eps=1, seed=6
    )
    c = pp.compare(p, ckm={**CKM, "num_ptable": NUM})
    s = _stats(c)
    assert type(s["unperturbed"]) is stat_summary
    assert isinstance(s["ckm"], stat_summary_ckm)
    plain = _data(c.plots["unperturbed"])
    exact = cars.groupby("drv", observed=True)["hwy"].agg(fun).to_numpy()
    assert np.allclose(plain["y"], exact)
    # drawn without a range: the exact value has no noise
    assert np.allclose(plain["ymin"], plain["ymax"])
    for k in ("dp", "ckm"):
        assert "y within ±" in c.captions[k]


def test_summary_ckm_twin_needs_its_magnitude_ptable_passed_on(cars):
    p = ggplot(cars, aes("drv", "hwy")) + geom_point(
        stat="summary_dp", bounds=HWY, eps=1, seed=6
    )
    with pytest.raises(pp.PlotninePrivateError, match="does not take"):
        pp.compare(p, ckm={**CKM, "eps": 1})


def test_pca_has_no_ckm_panel_and_an_ordinary_pca_beside(cars):
    cols = ["displ", "cty", "hwy", "cyl"]
    p = ggplot(cars) + pp.stat_dp_pca_score(
        columns=cols, eps=4, delta=1e-5, seed=1, bins=(6, 6)
    )
    c = pp.compare(p)
    assert list(c.plots) == ["unperturbed", "dp"]
    assert c.notes == []
    c2 = pp.compare(p, ckm=CKM)
    assert list(c2.plots) == ["unperturbed", "dp"]
    assert "no CKM version" in c2.notes[0]
    s = _stats(c)
    assert isinstance(s["unperturbed"], stat_pca_score_plain)
    plain = _data(c.plots["unperturbed"])
    # every record in one tile, shares of one histogram
    assert plain["count"].sum() == len(cars)
    assert plain["prob"].sum() == pytest.approx(1)
    # the ordinary PCA's first score has the largest variance
    x = cars[cols].to_numpy(float)
    top = np.linalg.eigvalsh(np.cov(x - x.mean(0), rowvar=False))[-1]
    s1 = pca_scores(x, (1, 2))[:, 0]
    assert s1.var(ddof=1) == pytest.approx(top)


def test_pca_by_group_gives_one_histogram_per_group():
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(300, 3)), columns=list("abc"))
    df["g"] = pd.Categorical(rng.choice(["u", "v"], 300), ["u", "v"])
    p = ggplot(df, aes(fill="g")) + pp.stat_dp_pca_score(
        columns=list("abc"), eps=4, delta=1e-5, seed=2, bins=(5, 5)
    )
    c = pp.compare(p, ckm=False)
    plain = _data(c.plots["unperturbed"])
    assert plain.groupby("group")["count"].sum().sum() == 300
    assert np.allclose(plain.groupby("group")["prob"].sum(), 1)
