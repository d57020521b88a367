"""binhex_dp / binhex_ckm: private hexagons on one public lattice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from alpha import ALPHA, dlap_moments, mean_bound, variance_ratio_bounds
from plotnine import aes, after_stat, facet_wrap, geom_text, ggplot
from plotnine._utils.registry import Registry
from plotnine.exceptions import PlotnineError

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private._compat import build
from plotnine_private.door import layer_releases
from plotnine_private.geoms.hex import geom_hex
from plotnine_private.mechanisms.domains.hexbin import (
    hex_assign,
    hex_centres,
    hex_lattice,
)
from plotnine_private.stats.binhex import (
    stat_bin_hex_ckm,
    stat_bin_hex_dp,
    stat_binhex_ckm,
    stat_binhex_dp,
)

LIMITS = ((0.0, 10.0), (0.0, 5.0))
PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(8)
    n = 1500
    return pd.DataFrame(
        {
            "x": rng.uniform(0, 10, n),
            "y": rng.normal(2.5, 1.0, n).clip(0, 5),
            "g": pd.Categorical(rng.choice(["a", "b"], n)),
            "f": pd.Categorical(rng.choice(["u", "v"], n)),
            "rk": rng.uniform(0, 1, n),
        }
    )


def dp_hex(data, **kwargs):
    params = {"eps": 1, "seed": 11, "limits": LIMITS, "bins": 10}
    params.update(kwargs)
    return ggplot(data, aes("x", "y")) + geom_hex(stat="binhex_dp", **params)


def true_counts(data, binwidth=(1.0, 0.5)):
    r, c = hex_assign(data["x"], data["y"], (0.0, 0.0), binwidth)
    return (
        pd.Series(1, index=pd.MultiIndex.from_arrays([r, c]))
        .groupby(level=[0, 1])
        .sum()
    )


def test_names_are_registered():
    assert Registry["stat_binhex_dp"] is stat_binhex_dp
    assert Registry["stat_bin_hex_dp"] is stat_bin_hex_dp
    assert Registry["stat_binhex_ckm"] is stat_binhex_ckm
    assert Registry["stat_bin_hex_ckm"] is stat_bin_hex_ckm
    assert issubclass(stat_bin_hex_dp, stat_binhex_dp)


def test_every_lattice_hexagon_is_released_with_noise(points):
    d = layer_data(dp_hex(points, drop=False))
    row, col = hex_lattice(*LIMITS, (0.0, 0.0), (1.0, 0.5))
    cx, cy = hex_centres(row, col, (0.0, 0.0), (1.0, 0.5))
    np.testing.assert_allclose(d["x"], cx)
    np.testing.assert_allclose(d["y"], cy)
    assert (d["width"] == 1.0).all() and (d["height"] == 0.5).all()
    # the lattice is anchored at the lower-left corner of the box
    assert ((d["x"] == 0) & (d["y"] == 0)).any()
    # empty hexagons are in the domain and get noise too
    truth = true_counts(points)
    occupied = set(truth.index)
    empty = [
        (r, c) not in occupied for r, c in zip(row.tolist(), col.tolist())
    ]
    assert sum(empty) > 10
    assert (d["noisy_count"][empty] != 0).any()


def test_drop_hides_released_zeros_only(points):
    full = layer_data(dp_hex(points, drop=False))
    shown = layer_data(dp_hex(points))
    assert len(shown) == (full["count"] > 0).sum()
    assert (shown["count"] > 0).all()


def test_one_lattice_for_all_groups_and_panels(points):
    p = (
        ggplot(points, aes("x", "y", fill="g"))
        + geom_hex(
            stat="binhex_dp",
            eps=1,
            seed=3,
            limits=LIMITS,
            bins=10,
            drop=False,
        )
        + facet_wrap("f")
    )
    d = layer_data(p)
    cells = d.groupby(["PANEL", "group"], observed=True)
    first = None
    for _, cell in cells:
        xy = cell[["x", "y"]].to_numpy()
        if first is None:
            first = xy
        np.testing.assert_array_equal(xy, first)
    assert cells.ngroups == 4


def test_hex_and_text_layers_agree_and_seed_fixes_numbers(points):
    params = {"eps": 1, "seed": 5, "limits": LIMITS, "bins": 10}
    p = (
        ggplot(points, aes("x", "y"))
        + geom_hex(stat="binhex_dp", **params)
        + geom_text(aes(label=after_stat("count")), stat="binhex_dp", **params)
    )
    built = build(p)  # both layers of one build
    hexes, text = built.layers[0].data, built.layers[1].data
    np.testing.assert_array_equal(hexes["count"], text["label"])
    np.testing.assert_allclose(hexes[["x", "y"]], text[["x", "y"]])
    again = layer_data(p, 0)
    np.testing.assert_array_equal(hexes["count"], again["count"])
    assert not np.array_equal(
        layer_data(dp_hex(points, seed=5, drop=False))["noisy_count"],
        layer_data(dp_hex(points, seed=6, drop=False))["noisy_count"],
    )


def test_one_more_record_changes_the_release_only_through_noise(points):
    # the lattice is public: one more record leaves every hexagon in place;
    # the noise of the whole table is redrawn (keyed by all its cells), so
    # the two releases cannot be compared cell by cell to find the record
    base = layer_data(dp_hex(points, drop=False))
    extra = pd.concat(
        [points, points.iloc[:1].assign(x=3.3, y=1.2)], ignore_index=True
    )
    more = layer_data(dp_hex(extra, drop=False))
    assert np.array_equal(more[["x", "y"]], base[["x", "y"]])
    same = more["noisy_count"].to_numpy() == base["noisy_count"].to_numpy()
    assert same.mean() < 0.5  # independent draws, not shared noise
    r, c = hex_assign([3.3], [1.2], (0.0, 0.0), (1.0, 0.5))
    cx, cy = hex_centres(r, c, (0.0, 0.0), (1.0, 0.5))
    own = np.isclose(more["x"], cx[0]) & np.isclose(more["y"], cy[0])
    assert own.sum() == 1


def test_records_outside_the_box_are_left_out(points):
    base = layer_data(dp_hex(points, drop=False))
    outside = pd.concat(
        [points, points.iloc[:2].assign(x=[-1.0, 4.0], y=[2.0, 7.5])],
        ignore_index=True,
    )
    same = layer_data(dp_hex(outside, drop=False))
    pd.testing.assert_frame_equal(base, same)


def test_noise_is_discrete_laplace_with_scale_2_over_eps():
    # no records: the released values are pure noise on ~1,900 hexagons
    # replace-one adjacency: sensitivity 2, scale s = 2/eps; discrete
    # Laplace variance 2 e^(-1/s) / (1 - e^(-1/s))^2
    empty_box = pd.DataFrame({"x": [-5.0], "y": [-5.0]})
    d = layer_data(dp_hex(empty_box, eps=1, bins=40, drop=False))
    noise = d["noisy_count"].to_numpy()
    assert len(noise) > 1800
    assert np.allclose(noise, np.round(noise))
    q = np.exp(-1 / 2)
    var = 2 * q / (1 - q) ** 2
    expected, kurtosis = dlap_moments(2.0)
    assert var == pytest.approx(expected)
    # each check rejects the correct mechanism with probability <= ALPHA
    assert abs(noise.mean()) < mean_bound(np.sqrt(var), len(noise), ALPHA)
    lo, hi = variance_ratio_bounds(len(noise), kurtosis, ALPHA)
    assert lo < noise.var() / var < hi
    # negative control: a 25% wrong scale (eps = 0.8 or 1.25) fails
    for wrong in (1.6, 2.5):
        assert not lo < noise.var() / dlap_moments(wrong)[0] < hi


def test_ckm_keeps_zeros_and_bounds_the_noise(points):
    p = ggplot(points, aes("x", "y", rkey="rk")) + geom_hex(
        stat="binhex_ckm", ptable=PTAB, limits=LIMITS, bins=10, drop=False
    )
    d = layer_data(p)
    truth = true_counts(points)
    r, c = hex_assign(d["x"], d["y"], (0.0, 0.0), (1.0, 0.5))
    true = np.array(
        [truth.get((a, b), 0) for a, b in zip(r.tolist(), c.tolist())]
    )
    assert (d["count"][true == 0] == 0).all()
    assert (np.abs(d["count"] - true) <= 5).all()
    assert (d["count"] != true).any()
    pd.testing.assert_frame_equal(d, layer_data(p))  # deterministic


def test_ckm_needs_public_limits(points):
    p = ggplot(points, aes("x", "y", rkey="rk")) + geom_hex(
        stat="binhex_ckm", ptable=PTAB
    )
    with pytest.raises(PlotninePrivateError, match="limits"):
        layer_data(p)


def test_dp_without_limits_charges_a_private_range(points):
    p = build(
        ggplot(points, aes("x", "y"))
        + geom_hex(stat="binhex_dp", eps=1, seed=2)
    )
    releases = layer_releases(p.layers[0])
    assert {r.mechanism for r in releases} >= {
        "durfee_quantile",
        "discrete_laplace",
    }
    counts = [r for r in releases if r.mechanism == "discrete_laplace"]
    assert counts[0].domain == "private estimate"


def test_a_missing_eps_fails_when_built_on_data():
    """Made without eps (a figure drawn from a synopsis), a hexagon
    layer asks for it when built on data."""
    data = pd.DataFrame({"x": [0.5, 1.5], "y": [0.5, 1.5]})
    p = ggplot(data, aes("x", "y")) + geom_hex(
        stat="binhex_dp", limits=((0, 2), (0, 2))
    )
    with pytest.raises(PlotninePrivateError, match="eps is required"):
        layer_data(p)


def test_bad_parameters_fail_at_construction():
    with pytest.raises(PlotninePrivateError, match="binwidth"):
        ggplot() + geom_hex(stat="binhex_dp", eps=1, binwidth=0)
    with pytest.raises(PlotninePrivateError, match="bins"):
        ggplot() + geom_hex(stat="binhex_dp", eps=1, bins=0)
    with pytest.raises(PlotninePrivateError, match="limits"):
        ggplot() + geom_hex(stat="binhex_dp", eps=1, limits=((1, 0), (0, 1)))
    # the private stat names eps (plotnine 0.15 passes it the geom's
    # arguments); plotnine 0.16 refuses the argument itself
    with pytest.raises(
        (PlotninePrivateError, PlotnineError),
        match="did you mean eps=1|'epsilon'.*not understood",
    ):
        ggplot() + geom_hex(stat="binhex_dp", eps=1, epsilon=1)
