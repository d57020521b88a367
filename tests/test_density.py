"""density_dp / density_ckm: a kernel smooth of a private fine histogram."""

from __future__ import annotations

import functools
import warnings

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
from plotnine import (
    aes,
    after_stat,
    facet_wrap,
    geom_density,
    geom_line,
    ggplot,
    scale_x_continuous,
    scale_x_log10,
    stat_density,
)
from plotnine._utils.registry import Registry

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private.door import layer_build, layer_releases
from plotnine_private.smoothing import KERNELS, kernel_smooth

LIM = (0, 40)


def test_registered_and_exported():
    assert Registry["stat_density_dp"] is pp.stat_density_dp
    assert Registry["stat_density_ckm"] is pp.stat_density_ckm
    assert Registry["stat_density"] is stat_density


def _plotnine_density(d, **params):
    p = (
        ggplot(d, aes("v"))
        # 50 points, 0.8 apart, two thirds of the bandwidth: plotnine's
        # compact kernels cost a Python call per record and point (at 50
        # the largest error is 0.0022 of the peak, uniform 0.0087; a bw
        # 5% off gives 0.0084, as at 100 points)
        + geom_line(stat="density", n=50, **params)
        + scale_x_continuous(limits=LIM)
    )
    return layer_data(p)


@functools.cache
def _reference(kernel: str) -> pd.DataFrame:
    """plotnine's density of ONE at bw=1.2, once per kernel (its compact
    kernels take seconds; two tests compare against the same curve)."""
    return _plotnine_density(ONE, bw=1.2, kernel=kernel)


def _ours(d, **params):
    return layer_data(
        ggplot(d, aes("v"))
        + geom_line(
            stat="density_dp", limits=LIM, bins=2000, eps=1e6, seed=1, **params
        )
    )


def _errors(ref, ours):
    mine = np.interp(ref["x"], ours["x"], ours["density"])
    diff = np.abs(mine - ref["density"].to_numpy())
    peak = ref["density"].max()
    return diff.mean() / peak, diff.max() / peak


ONE = synthetic()
ONE = ONE[ONE["g"] == "a"]  # one group: plotnine's compact kernels are slow


@pytest.fixture
def no_intervals(monkeypatch):
    """The curves alone: their interval variables (a simulation over the
    fine bins, tested in test_intervals) are not computed, for density
    layers and DP ECDF layers."""
    for stat in (pp.stat_density_dp, pp.stat_density_ckm, pp.stat_ecdf_dp):
        monkeypatch.setattr(stat, "add_intervals", lambda self, out, rel: None)


@pytest.mark.parametrize(
    "kernel",
    [
        "gaussian",
        "epanechnikov",
        "biweight",
        "cosine",
        "cosine2",
        "triangular",
        "triweight",
        "uniform",
    ],
)
def test_converges_to_plotnines_density_with_the_same_bw_and_kernel(
    no_intervals, kernel
):
    ref = _reference(kernel)
    ours = _ours(ONE, bw=1.2, kernel=kernel)
    mean_err, max_err = _errors(ref, ours)
    # within 0.5% of the peak everywhere; the fine bins (0.02 wide) shift
    # the uniform kernel's jumps a little
    assert mean_err < 0.003
    assert max_err < (0.02 if kernel == "uniform" else 0.005)
    # n and count come from the released total (exact at this eps)
    assert ours["n"].iloc[0] == ref["n"].iloc[0] == len(ONE)
    assert np.allclose(ours["count"], ours["density"] * ours["n"])
    assert set(ours.columns) >= {
        "density",
        "count",
        "scaled",
        "ndensity",
        "n",
        "x",
    }


def test_a_wrong_bandwidth_or_kernel_scale_would_be_caught(no_intervals):
    # the tolerances above have power: bw off by 5% fails them
    ref = _reference("gaussian")
    assert _errors(ref, _ours(ONE, bw=1.26))[1] > 0.005
    # plotnine reads "epanechnikov" as "epa"
    ref = _reference("epanechnikov")
    assert _errors(ref, _ours(ONE, bw=1.2, kernel="gau"))[1] > 0.005


def test_density_is_the_smooth_of_the_clipped_released_histogram(no_intervals):
    d = cars()
    p = ggplot(d, aes("hwy", fill="drv")) + geom_density(
        stat="density_dp",
        limits=(0, 50),
        bins=64,
        bw=2.0,
        eps=0.5,
        seed=3,
        n=100,
    )
    lyr = built(p)
    hist, out = layer_build(lyr).fine, lyr.data
    assert hist.values.shape == (3, 64)
    assert (hist.values >= 0).all()
    assert np.array_equal(hist.values, np.clip(hist.noisy, 0, None))
    grid = np.linspace(0, 50, 100)
    expect = kernel_smooth(hist.centres, hist.values, grid, 2.0, "gau")
    for k, g in enumerate((1, 2, 3)):
        o = out[out["group"] == g]
        assert np.allclose(o["x"], grid)
        assert np.allclose(o["density"], expect[k])
        assert np.isclose(o["scaled"].max(), 1.0)
        assert np.allclose(o["ndensity"], o["scaled"])
        n = max(round(hist.noisy[k].sum()), 0)
        assert (o["n"] == n).all()


def test_kernels_integrate_to_one_and_match_their_support():
    for name, (shape, half) in KERNELS.items():
        u = np.linspace(-6, 6, 120001)
        k = np.where(np.abs(u) <= half, shape(np.clip(u, -half, half)), 0)
        assert np.isclose(np.trapezoid(k, u), 1.0, atol=1e-4), name


def test_bandwidth_rules_and_adjust(no_intervals):
    d = cars()

    def dens(**kw):
        p = ggplot(d, aes("hwy")) + geom_density(
            stat="density_dp",
            limits=(0, 48),
            bins=96,
            n=64,  # the rules set bw alone: a short grid shows it
            eps=1e6,
            seed=2,
            **kw,
        )
        return layer_data(p)["density"].to_numpy()

    assert np.allclose(dens(), dens(bw=48 / 32))  # default rule "limits"
    assert np.allclose(dens(bw="limits"), dens(bw=1.5))
    assert np.allclose(dens(bw="bins"), dens(bw=4 * 48 / 96))
    assert np.allclose(dens(bw=1.0, adjust=2), dens(bw=2.0))
    assert not np.allclose(dens(bw=1.0), dens(bw=2.0))


def test_n_sets_the_grid_and_bins_the_histogram(no_intervals):
    d = cars()
    lyr = built(
        ggplot(d, aes("hwy"))
        + geom_density(
            stat="density_ckm",
            limits=(0, 50),
            bins=50,
            n=77,
            ptable=PTAB,
        )
        + aes(rkey="rk")
    )
    assert len(lyr.data) == 77
    assert np.allclose(layer_build(lyr).fine.edges, np.arange(51))


def test_eps_accounting_and_one_release_shared_with_ecdf(no_intervals):
    d = cars()
    common = {"limits": (0, 50), "bins": 100, "eps": 0.7, "seed": 9}
    p = (
        ggplot(d, aes("hwy", colour="drv"))
        + geom_density(stat="density_dp", **common)
        + geom_line(aes(y=after_stat("ecdf")), stat="ecdf_dp", **common)
        + facet_wrap("year")
    )
    r = pp.privacy_report(p)
    assert np.isclose(r.total_eps, 0.7)
    rows = r.table[r.table["layer"] != "total"]
    assert rows.iloc[0]["composition"] == (
        "sequential (parallel over declared facets)"
    )
    assert rows.iloc[0]["cells"] == 2 * 3 * 100
    assert rows.iloc[1]["composition"] == "duplicate of layer 0"
    # the two layers post-process the same released histogram (one
    # build holds both layers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layers = pp._compat.build(p).layers
    a, b = (layer_build(lyr).fine for lyr in layers[:2])
    assert np.array_equal(a.noisy, b.noisy)
    # another eps is another release, charged again
    q = p + geom_density(stat="density_dp", **{**common, "eps": 0.3})
    assert np.isclose(pp.privacy_report(q).total_eps, 1.0)


def test_declared_facets_and_groups_all_get_a_curve(no_intervals):
    d = cars()
    d = d[d["drv"] != "r"]  # a declared drive without records
    out = layer_data(
        ggplot(d, aes("hwy", fill="drv"))
        + geom_density(stat="density_dp", limits=(0, 50), eps=1, seed=1, n=10)
        + facet_wrap("year")
    )
    assert len(out) == 2 * 3 * 10
    assert sorted(out["group"].unique()) == [1, 2, 3]


def test_undeclared_groups_are_thresholded_with_a_warning(mpg):
    p = ggplot(mpg, aes("hwy", fill="drv")) + geom_density(
        stat="density_dp", limits=(0, 50), bins=10, eps=1, seed=1
    )
    with pytest.warns(pp.PrivacyWarning, match="not declared"):
        lyr = pp._compat.build(p).layers[0]
    assert layer_releases(lyr)[0].domain == "thresholded"


@pytest.mark.parametrize(
    "change", ["outlier", "missing", "other panel", "empty level"]
)
@pytest.mark.parametrize("stat", ["density_dp", "density_ckm"])
def test_neighbours_differ_only_in_noisy_numbers(monkeypatch, stat, change):
    monkeypatch.setattr(neighbours, "NOISY", neighbours.NOISY | FINE_NOISY)
    params = {"eps": 2, "seed": 7} if stat.endswith("dp") else {"ptable": PTAB}

    def make(d):
        return (
            ggplot(d, aes("hwy", fill="drv", rkey="rk"))
            + geom_density(stat=stat, limits=(0, 50), bins=50, n=64, **params)
            + facet_wrap("year")
        )

    from test_neighbours import BASE, base_snapshot, neighbour

    # the unchanged side is built once for the four changes
    a = base_snapshot(
        f"density {stat}", lambda: neighbours.snapshot(make(BASE))
    )
    b = neighbours.snapshot(make(neighbour(change)))
    assert neighbours.differences(a, b) == []


def test_bundle_metadata_only_noisy_numbers_differ():
    from test_neighbours import BASE, neighbour

    def make(d):
        return ggplot(d, aes("hwy")) + geom_density(
            stat="density_dp", limits=(0, 50), bins=50, eps=2, seed=7
        )

    a = neighbours.bundle_metadata(make(BASE))
    b = neighbours.bundle_metadata(make(neighbour("outlier")))
    assert a == b


def test_released_fine_counts_pass_an_epsilon_audit(monkeypatch):
    # the audit is of the released counts: the curves' intervals (a
    # simulation per group, post-processing) are not computed here
    monkeypatch.setattr(
        pp.stat_density_dp, "add_intervals", lambda *a, **k: None
    )
    # each of 10000 declared groups is one independent fine cell; groups
    # of D hold 3 records in the first bin, those of D' 4 (add/remove).
    # The bound is about 0.88 at this size: half the noise (eps 2) or
    # twice it (eps 0.5) fails it (0.5 < lb <= 1)
    eps, levels = 1.0, 10000

    def first_bin(count, seed):
        d = audit_frame(levels, count)
        p = ggplot(d, aes("x", colour="g")) + geom_density(
            stat="density_dp",
            limits=(0, 4),
            bins=2,
            n=2,
            eps=eps,
            seed=seed,
            adjacency="add_remove",
        )
        return fine_of(p).noisy[:, 0]

    a, b = first_bin(3, 1), first_bin(4, 2)
    lb = epsilon_lower_bound(a, b, 4)
    assert 0.5 * eps < lb <= eps


def test_ckm_same_records_same_noise_and_tables_agree(no_intervals):
    d = cars()
    kw = {"limits": (0, 50), "bins": 25, "ptable": PTAB}
    p = ggplot(d, aes("hwy", fill="drv", rkey="rk")) + geom_density(
        stat="density_ckm", **kw
    )
    hist = fine_of(p)
    table = ckm_cells_by_table(d, "hwy", hist.edges, "rk", groups="drv")
    for k, drv in enumerate(hist.info["fill"]):
        t = table[table["drv"] == drv].sort_values("_bin")
        assert np.array_equal(t["count"].to_numpy(), hist.values[k])
    # the same records, shuffled and without another group's records,
    # get the same noise
    other = d[d["drv"] != "r"].sample(frac=1, random_state=4)
    h2 = fine_of(
        ggplot(other, aes("hwy", fill="drv", rkey="rk"))
        + geom_density(stat="density_ckm", **kw)
    )
    assert np.array_equal(h2.values[:2], hist.values[:2])
    assert (h2.values[2] == 0).all()  # zero cells stay zero
    # and the noise is there: some cell differs from the true count
    true = np.histogram(d["hwy"], hist.edges)[0]
    assert not np.array_equal(hist.values.sum(axis=0), true)


def test_outside_the_limits_clamp_or_drop():
    d = pd.DataFrame({"x": [-5.0, 1.0, 2.0, 50.0]})

    def fine(outside):
        p = ggplot(d, aes("x")) + geom_density(
            stat="density_dp",
            limits=(0, 4),
            bins=4,
            eps=1e6,
            seed=1,
            outside=outside,
        )
        return fine_of(p).values[0], layer_data(p)["n"].iloc[0]

    clamped, n_c = fine("clamp")
    dropped, n_d = fine("drop")
    assert clamped.tolist() == [2, 1, 0, 1] and n_c == 4
    assert dropped.tolist() == [1, 1, 0, 0] and n_d == 2


def test_log_scale_transforms_the_limits():
    d = cars()
    lyr = built(
        ggplot(d, aes("hwy"))
        + geom_density(
            stat="density_dp", limits=(10, 100), bins=20, eps=1, seed=1
        )
        + scale_x_log10()
    )
    assert np.allclose(layer_build(lyr).fine.edges[[0, -1]], [1.0, 2.0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"limits": 5}, "limits must be a pair"),
        ({"limits": (1, 2, 3)}, "limits must be a pair"),
        ({"limits": (5, 1)}, "low < high"),
        ({"limits": (0, np.inf)}, "finite"),
        ({"limits": (0, 1), "bins": 1}, "bins must be a whole number"),
        ({"limits": (0, 1), "bins": 10.5}, "bins must be a whole number"),
        ({"limits": (0, 1), "outside": "wrap"}, "outside must be"),
        ({"limits": (0, 1), "bw": 0}, "bw must be a finite number > 0"),
        ({"limits": (0, 1), "bw": -1.0}, "bw must be a finite number > 0"),
        ({"limits": (0, 1), "bw": "sj"}, "'nrd0', 'scott' or 'silverman'"),
        ({"limits": (0, 1), "kernel": "box"}, "kernel must be one of"),
        ({"limits": (0, 1), "adjust": 0}, "adjust must be"),
        ({"limits": (0, 1), "n": 1}, "n must be a whole number"),
    ],
)
def test_bad_parameters_fail_at_construction(kwargs, match):
    kwargs = {"eps": 1, **kwargs}
    with pytest.raises(PlotninePrivateError, match=match):
        ggplot() + geom_density(stat="density_dp", **kwargs)


def test_a_missing_eps_fails_when_built_on_data(mpg):
    """Without eps the stat is made (a figure drawn from a synopsis);
    built on data, it asks for eps before anything is released."""
    p = ggplot(mpg, aes("hwy")) + geom_density(
        stat="density_dp", limits=(0, 50)
    )
    with pytest.raises(PlotninePrivateError, match="eps is required"):
        layer_data(p)


def test_ckm_needs_a_ptable_and_record_keys(mpg):
    p = ggplot(mpg, aes("hwy")) + geom_density(
        stat="density_ckm", limits=(0, 50)
    )
    with pytest.raises(PlotninePrivateError, match="ptable is required"):
        layer_data(p)
    p = ggplot(mpg, aes("hwy")) + geom_density(
        stat="density_ckm", limits=(0, 50), ptable=PTAB
    )
    with pytest.raises(PlotninePrivateError, match="rkey"):
        layer_data(p)


def test_y_and_weights_are_refused_by_dp(mpg):
    p = ggplot(mpg, aes("hwy", y="cty")) + geom_density(
        stat="density_dp", limits=(0, 50), eps=1
    )
    with pytest.raises(PlotninePrivateError, match="y aesthetic"):
        layer_data(p)
    w = ggplot(mpg, aes("hwy", weight="cty")) + geom_density(
        stat="density_dp", limits=(0, 50), eps=1
    )
    with pytest.raises(PlotninePrivateError, match="weight"):
        layer_data(w)


def test_geoms_draw():
    d = cars()
    draws(
        ggplot(d, aes("hwy", fill="drv"))
        + geom_density(
            stat="density_dp", limits=(0, 50), eps=1, seed=1, alpha=0.4
        )
        + facet_wrap("year")
    )
    draws(
        ggplot(d, aes("hwy", rkey="rk"))
        + geom_density(
            aes(y=after_stat("count")),
            stat="density_ckm",
            limits=(0, 50),
            ptable=PTAB,
            kernel="epa",
            bw=2,
        )
    )


def test_one_variable_in_two_aesthetics_is_one_group_dimension():
    d = cars()
    lyr = built(
        ggplot(d, aes("hwy", fill="drv", colour="drv"))
        + geom_density(stat="density_dp", limits=(0, 50), eps=1, seed=1, n=5)
    )
    assert layer_build(lyr).fine.values.shape[0] == 3  # not 3 x 3 groups
    assert len(lyr.data) == 15
    assert layer_releases(lyr)[0].cells == 3 * 256
