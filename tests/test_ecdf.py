"""ecdf_dp / ecdf_ckm: a monotone CDF from a private fine histogram."""

from __future__ import annotations

import neighbours
import numpy as np
import pandas as pd
import pytest
from fine_common import (
    FINE_NOISY,
    PTAB,
    audit_frame,
    built,
    cars,
    ckm_cells_by_table,
    draws,
    epsilon_lower_bound,
    fine_of,
    synthetic,
)
from plotnine import aes, facet_wrap, geom_step, ggplot, stat_ecdf
from plotnine._utils.registry import Registry
from statsmodels.distributions.empirical_distribution import ECDF

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private.door import layer_build
from plotnine_private.smoothing import monotone_cdf
from plotnine_private.stats.fine import FineFamily


def test_registered_and_exported():
    assert Registry["stat_ecdf_dp"] is pp.stat_ecdf_dp
    assert Registry["stat_ecdf_ckm"] is pp.stat_ecdf_ckm
    assert Registry["stat_ecdf"] is stat_ecdf


def test_converges_to_plotnines_ecdf():
    # integer data and integer fine-bin edges: at eps=1e6 the released
    # curve equals the ECDF at every edge, and plotnine's at its points
    d = cars()
    ours = layer_data(
        ggplot(d, aes("hwy", colour="drv"))
        + stat_ecdf_step(limits=(0, 50), bins=50, eps=1e6, seed=1)
    )
    ref = layer_data(ggplot(d, aes("hwy", colour="drv")) + stat_ecdf())
    for g, drv in enumerate(["4", "f", "r"], start=1):
        o = ours[ours["group"] == g]
        values = d.loc[d["drv"] == drv, "hwy"].to_numpy()
        inner = o[np.isfinite(o["x"])]
        assert np.allclose(inner["x"], np.arange(51))
        assert np.allclose(inner["ecdf"], ECDF(values)(inner["x"]))
        r = ref[(ref["group"] == g) & np.isfinite(ref["x"])]
        step = np.interp(r["x"], inner["x"], inner["ecdf"])
        assert np.allclose(step, r["ecdf"])
        assert (o["n"] == len(values)).all()


def stat_ecdf_step(**kw):
    return geom_step(stat="ecdf_dp", **kw)


def test_ecdf_is_monotone_from_0_to_1_under_strong_noise():
    d = cars()
    out = layer_data(
        ggplot(d, aes("hwy", colour="drv"))
        + stat_ecdf_step(limits=(0, 50), bins=200, eps=0.1, seed=4)
    )
    for _, o in out.groupby("group"):
        e = o["ecdf"].to_numpy()
        assert (np.diff(e) >= 0).all()
        assert e[0] == 0 and e[-1] == 1
        assert ((e >= 0) & (e <= 1)).all()


def test_curve_is_the_isotonic_cdf_of_the_released_counts():
    d = cars()
    lyr = built(
        ggplot(d, aes("hwy", colour="drv"))
        + stat_ecdf_step(limits=(0, 50), bins=25, eps=0.5, seed=2, pad=False)
    )
    hist, out = layer_build(lyr).fine, lyr.data
    cdf, total = monotone_cdf(hist.noisy)
    for k, g in enumerate((1, 2, 3)):
        o = out[out["group"] == g]
        assert np.allclose(o["x"], hist.edges)
        assert np.allclose(o["ecdf"], cdf[k])
        assert (o["n"] == np.rint(total[k])).all()


def test_isotonic_cdf_beats_clipped_running_sums():
    # why the curve is not the running sum of clipped counts: clipping
    # adds phantom records in empty bins and flattens the curve
    rng = np.random.default_rng(0)
    x = rng.normal(20, 2, size=200)
    edges = np.linspace(0, 50, 129)
    true = np.r_[0, np.cumsum(np.histogram(x, edges)[0])] / len(x)
    iso, clip = [], []
    for _ in range(100):
        noisy = np.histogram(x, edges)[0] + rng.laplace(0, 2, 128)
        iso.append(np.abs(monotone_cdf(noisy)[0][0] - true).max())
        c = np.clip(noisy, 0, None)
        clip.append(np.abs(np.r_[0, np.cumsum(c)] / c.sum() - true).max())
    assert np.mean(iso) < 0.8 * np.mean(clip)


def test_n_and_pad_parameters():
    d = cars()
    base = {"limits": (0, 50), "bins": 10, "eps": 1e6, "seed": 1}
    padded = layer_data(ggplot(d, aes("hwy")) + stat_ecdf_step(**base))
    assert len(padded) == 11 + 2
    assert padded["x"].iloc[0] == -np.inf and padded["x"].iloc[-1] == np.inf
    assert padded["ecdf"].iloc[0] == 0 and padded["ecdf"].iloc[-1] == 1
    bare = layer_data(
        ggplot(d, aes("hwy")) + stat_ecdf_step(pad=False, **base)
    )
    assert len(bare) == 11 and np.isfinite(bare["x"]).all()
    fine = layer_data(
        ggplot(d, aes("hwy")) + stat_ecdf_step(pad=False, n=101, **base)
    )
    assert np.allclose(fine["x"], np.linspace(0, 50, 101))
    # linear within a fine bin
    assert np.allclose(
        fine["ecdf"], np.interp(fine["x"], bare["x"], bare["ecdf"])
    )


def test_eps_accounting_in_the_report():
    d = cars()
    p = (
        ggplot(d, aes("hwy", colour="drv"))
        + stat_ecdf_step(
            limits=(0, 50), eps=0.4, seed=2, adjacency="add_remove"
        )
        + facet_wrap("year")
    )
    r = pp.privacy_report(p)
    assert np.isclose(r.total_eps, 0.4)
    row = r.table.iloc[0]
    assert row["sensitivity"] == 1
    assert row["cells"] == 2 * 3 * 128
    assert row["domain"] == "public: limits"


@pytest.mark.parametrize(
    "change", ["outlier", "missing", "other panel", "empty level", "new fill"]
)
@pytest.mark.parametrize("stat", ["ecdf_dp", "ecdf_ckm"])
def test_neighbours_differ_only_in_noisy_numbers(monkeypatch, stat, change):
    monkeypatch.setattr(neighbours, "NOISY", neighbours.NOISY | FINE_NOISY)
    params = {"eps": 2, "seed": 7} if stat.endswith("dp") else {"ptable": PTAB}

    def make(d):
        return (
            ggplot(d, aes("hwy", colour="drv", rkey="rk"))
            + geom_step(stat=stat, limits=(0, 50), bins=40, **params)
            + facet_wrap("year")
        )

    from test_neighbours import BASE, base_snapshot, neighbour

    # the unchanged side is built once for the four changes
    a = base_snapshot(f"ecdf {stat}", lambda: neighbours.snapshot(make(BASE)))
    b = neighbours.snapshot(make(neighbour(change)))
    assert neighbours.differences(a, b) == []


def test_released_fine_counts_pass_an_epsilon_audit(monkeypatch):
    # the audit is of the released counts: the curves' intervals (a
    # simulation per group, post-processing) are not computed here
    monkeypatch.setattr(FineFamily, "curve_intervals", lambda *a, **k: None)
    # 10000 declared groups, one fine cell each: the bound is about 0.40
    # at this size; half the noise (0.89) or twice it (0.15) fails it
    eps, levels = 1.0, 10000

    def first_bin(count, seed):
        p = ggplot(audit_frame(levels, count), aes("x", colour="g")) + (
            stat_ecdf_step(
                limits=(0, 4),
                bins=2,
                eps=eps,
                seed=seed,
                adjacency="replace",
                pad=False,
            )
        )
        return fine_of(p).noisy[:, 0]

    # replace-one moves a record between bins: a cell changes by 1, and
    # the noise scale is 2/eps, so the bound is about eps/2
    a, b = first_bin(3, 1), first_bin(4, 2)
    lb = epsilon_lower_bound(a, b, 4)
    assert 0.25 * eps < lb <= 0.5 * eps


def test_ckm_same_records_same_noise():
    d = synthetic()
    kw = {"limits": (0, 40), "bins": 20, "ptable": PTAB}
    p = ggplot(d, aes("v", colour="g", rkey="rk")) + geom_step(
        stat="ecdf_ckm", **kw
    )
    hist = fine_of(p)
    table = ckm_cells_by_table(d, "v", hist.edges, "rk", groups="g")
    for k, g in enumerate(hist.info["color"]):
        t = table[table["g"] == g].sort_values("_bin")
        assert np.array_equal(t["count"].to_numpy(), hist.values[k])
    # reversed rows, other columns dropped: the same noise
    again = fine_of(
        ggplot(d[["v", "g", "rk"]].iloc[::-1], aes("v", colour="g", rkey="rk"))
        + geom_step(stat="ecdf_ckm", **kw)
    )
    assert np.array_equal(again.values, hist.values)


def test_outside_the_limits_clamp_or_drop():
    d = pd.DataFrame({"x": [-5.0, 1.0, 2.0, 3.0, 50.0]})

    def curve(outside):
        return layer_data(
            ggplot(d, aes("x"))
            + stat_ecdf_step(
                limits=(0, 4),
                bins=4,
                eps=1e6,
                seed=1,
                pad=False,
                outside=outside,
            )
        )

    clamp, drop = curve("clamp"), curve("drop")
    # clamp: the record at -5 counts in the first bin (<= 1), the one at
    # 50 in the last
    assert clamp["ecdf"].tolist() == [0, 0.4, 0.6, 0.8, 1.0]
    assert drop["ecdf"].tolist() == pytest.approx([0, 1 / 3, 2 / 3, 1, 1])
    assert clamp["n"].iloc[0] == 5 and drop["n"].iloc[0] == 3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"limits": "0-50"}, "limits must be a pair"),
        ({"limits": (3, 3)}, "low < high"),
        ({"limits": (0, 1), "bins": 0}, "bins must be"),
        ({"limits": (0, 1), "n": 1}, "n must be None"),
        ({"limits": (0, 1), "pad": "yes"}, "pad must be"),
        ({"limits": (0, 1), "outside": "wrap"}, "outside must be"),
        ({"limits": (0, 1), "eps": -1}, "eps must be"),
    ],
)
def test_bad_parameters_fail_at_construction(kwargs, match):
    kwargs = {"eps": 1, **kwargs}
    with pytest.raises(PlotninePrivateError, match=match):
        ggplot() + geom_step(stat="ecdf_dp", **kwargs)


def test_discrete_x_is_refused(mpg):
    p = ggplot(mpg, aes("drv")) + stat_ecdf_step(limits=(0, 1), eps=1)
    with pytest.raises(PlotninePrivateError, match="x is discrete"):
        layer_data(p)


def test_geoms_draw():
    d = cars()
    draws(
        ggplot(d, aes("hwy", colour="drv"))
        + stat_ecdf_step(limits=(0, 50), eps=1, seed=1)
        + facet_wrap("year")
    )
    draws(
        ggplot(d, aes("hwy", rkey="rk"))
        + geom_step(stat="ecdf_ckm", limits=(0, 50), ptable=PTAB, n=64)
    )
