"""stat_bin_hex and geom_hex: ggplot2's hexagons in plotnine."""

from __future__ import annotations

import importlib.util
import math
from copy import deepcopy

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from imagetest import assert_image_matches
from plotnine import (
    aes,
    after_stat,
    coord_fixed,
    coord_flip,
    coord_trans,
    facet_wrap,
    geom_text,
    ggplot,
    labs,
)
from plotnine._utils.registry import Registry
from plotnine.exceptions import PlotnineError
from plotnine.geoms.geom import geom

import plotnine_private.geoms.hex as geom_hex_module
import plotnine_private.stats.hex_counts as stat_module
from plotnine_private._compat import build
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.geoms.hex import geom_hex
from plotnine_private.stats.hex_counts import stat_bin_hex, stat_binhex

SQRT3 = math.sqrt(3)
PAD = 1e-6  # ggplot2's padding of the hexbin bounds


def layer_data(plot, i=0):
    return build(plot).layers[i].data


def draw(plot):
    fig = deepcopy(plot).draw()
    try:
        return [
            coll
            for ax in fig.axes
            for coll in ax.collections
            if type(coll).__name__ == "PolyCollection"
        ]
    finally:
        plt.close(fig)


@pytest.fixture(scope="module")
def cloud():
    rng = np.random.default_rng(42)
    n = 600
    return pd.DataFrame(
        {
            "x": rng.normal(0, 1, n),
            "y": rng.normal(0, 2, n),
            "g": rng.choice(["a", "b"], n),
            "w": rng.integers(1, 4, n).astype(float),
        }
    )


# stat output ----------------------------------------------------------


SMALL = pd.DataFrame(
    {"x": [0.1, 0.2, 1.1, 0.6], "y": [0.1, 0.0, 0.1, 0.9]},
)


def test_hand_checked_small_dataset():
    # binwidth 1; ggplot2's origin is (floor(min)) - 1e-6 = (-1e-6, -1e-6).
    # (0.1, 0.1), (0.2, 0) -> A(0, 0); (1.1, 0.1) -> A(0, 1);
    # (0.6, 0.9): sx=.6, sy=.52 -> B(1, 0) at (0.5, sqrt(3)/2), nearer
    # (d=.011) than A(2, 1) (d=.161)
    p = ggplot(SMALL, aes("x", "y")) + geom_hex(binwidth=1)
    d = layer_data(p)
    np.testing.assert_allclose(d["x"], np.array([0, 1, 0.5]) - PAD)
    np.testing.assert_allclose(d["y"], np.array([0, 0, SQRT3 / 2]) - PAD)
    assert d["count"].tolist() == [2, 1, 1]
    np.testing.assert_allclose(d["density"], [0.5, 0.25, 0.25])
    np.testing.assert_allclose(d["ncount"], [1, 0.5, 0.5])
    np.testing.assert_allclose(d["ndensity"], [1, 0.5, 0.5])
    assert (d["width"] == 1).all() and (d["height"] == 1).all()
    np.testing.assert_allclose(d["xmax"] - d["xmin"], 1)
    np.testing.assert_allclose(d["ymax"] - d["ymin"], 2 / SQRT3)
    np.testing.assert_allclose(d["ymin"], d["y"] - 1 / SQRT3)


def test_output_columns_and_dtypes(cloud):
    d = layer_data(ggplot(cloud, aes("x", "y")) + geom_hex())
    for col in stat_bin_hex.CREATES:
        assert col in d, col
        assert d[col].dtype.kind in "if", col
    assert d["count"].dtype == np.int64
    assert d["count"].sum() == len(cloud)
    assert d["density"].sum() == pytest.approx(1)
    assert d["fill"].nunique() > 1  # fill maps count by default


def test_default_binwidth_is_scale_range_over_30(cloud):
    d = layer_data(ggplot(cloud, aes("x", "y")) + geom_hex())
    assert d["width"].iloc[0] == pytest.approx(np.ptp(cloud["x"]) / 30)
    assert d["height"].iloc[0] == pytest.approx(np.ptp(cloud["y"]) / 30)
    d2 = layer_data(ggplot(cloud, aes("x", "y")) + geom_hex(bins=(10, 5)))
    assert d2["width"].iloc[0] == pytest.approx(np.ptp(cloud["x"]) / 10)
    assert d2["height"].iloc[0] == pytest.approx(np.ptp(cloud["y"]) / 5)


def test_centres_lie_on_the_ggplot2_lattice(cloud):
    bw = (0.5, 0.8)
    d = layer_data(ggplot(cloud, aes("x", "y")) + geom_hex(binwidth=bw))
    ox = math.floor(cloud["x"].min() / bw[0]) * bw[0] - PAD
    oy = math.floor(cloud["y"].min() / bw[1]) * bw[1] - PAD
    rows = (d["y"] - oy) / (bw[1] * SQRT3 / 2)
    np.testing.assert_allclose(rows, rows.round(), atol=1e-9)
    cols = (d["x"] - ox) / bw[0] - 0.5 * (rows.round() % 2)
    np.testing.assert_allclose(cols, cols.round(), atol=1e-9)


def test_weights_are_summed(cloud):
    p = ggplot(cloud, aes("x", "y", weight="w")) + geom_hex(binwidth=1)
    d = layer_data(p)
    assert d["count"].sum() == pytest.approx(cloud["w"].sum())
    unweighted = layer_data(
        ggplot(cloud, aes("x", "y")) + geom_hex(binwidth=1)
    )
    np.testing.assert_allclose(d["x"], unweighted["x"])
    assert (d["count"] >= unweighted["count"]).all()


def test_facets_bin_each_panel(cloud):
    p = ggplot(cloud, aes("x", "y")) + geom_hex(binwidth=1) + facet_wrap("g")
    d = layer_data(p)
    sizes = cloud["g"].value_counts().sort_index().tolist()
    assert d.groupby("PANEL", observed=True)["count"].sum().tolist() == sizes
    # density sums to one within each panel (one group per panel)
    dens = d.groupby("PANEL", observed=True)["density"].sum()
    np.testing.assert_allclose(dens, 1)


def test_fill_mapping_makes_groups_with_their_own_lattice(cloud):
    # ggplot2's quirk, kept for the non-private stat: each group is
    # anchored at its own rounded data range
    p = ggplot(cloud, aes("x", "y", fill="g")) + geom_hex(binwidth=1)
    d = layer_data(p)
    assert d["group"].nunique() == 2
    assert d["count"].sum() == len(cloud)
    for g, gd in d.groupby("group"):
        sub = cloud[cloud["g"] == ["a", "b"][g - 1]]
        oy = math.floor(sub["y"].min()) - PAD
        rows = (gd["y"] - oy) / (SQRT3 / 2)
        np.testing.assert_allclose(rows, rows.round(), atol=1e-9)


def test_text_labels_sit_at_centres(cloud):
    p = (
        ggplot(cloud, aes("x", "y"))
        + geom_hex(binwidth=1)
        + geom_text(aes(label=after_stat("count")), stat="bin_hex", binwidth=1)
    )
    hexes, text = layer_data(p, 0), layer_data(p, 1)
    np.testing.assert_allclose(text["x"], hexes["x"])
    np.testing.assert_allclose(text["y"], hexes["y"])
    assert text["label"].tolist() == hexes["count"].tolist()


def test_alias_and_class_spellings_agree():
    base = layer_data(ggplot(SMALL, aes("x", "y")) + geom_hex(binwidth=1))
    for spelling in ("binhex", "bin_hex", "stat_binhex", stat_binhex):
        p = ggplot(SMALL, aes("x", "y")) + geom_hex(stat=spelling, binwidth=1)
        pd.testing.assert_frame_equal(layer_data(p), base)
    p = ggplot(SMALL, aes("x", "y")) + stat_bin_hex(binwidth=1)
    assert layer_data(p)["count"].tolist() == [2, 1, 1]


def test_bad_parameters_fail_at_construction():
    with pytest.raises(PlotninePrivateError, match="binwidth"):
        ggplot() + geom_hex(binwidth=-1)
    with pytest.raises(PlotninePrivateError, match="bins"):
        stat_bin_hex(bins=0)
    with pytest.raises(PlotninePrivateError, match="binwidth"):
        ggplot() + geom_hex(binwidth=(1, 2, 3))
    with pytest.raises(PlotnineError, match="not understood"):
        ggplot() + geom_hex(binwdth=1)


# geom -------------------------------------------------------------------


def test_geom_draws_one_collection_of_ggplot2_hexagons():
    (coll,) = draw(ggplot(SMALL, aes("x", "y")) + geom_hex(binwidth=(1, 2)))
    verts = [p.vertices[:6] for p in coll.get_paths()]
    assert len(verts) == 3
    offsets = verts[0] - verts[0].mean(axis=0)
    np.testing.assert_allclose(np.ptp(offsets[:, 0]), 1)
    np.testing.assert_allclose(np.ptp(offsets[:, 1]), 2 * 2 / SQRT3)


def test_coord_flip_turns_the_hexagons(cloud):
    p = ggplot(SMALL, aes("x", "y")) + geom_hex(binwidth=(1, 2))
    (coll,) = draw(p + coord_flip())
    v = coll.get_paths()[0].vertices[:6]
    # flat-to-flat width now along y, tip-to-tip height along x
    np.testing.assert_allclose(np.ptp(v[:, 1]), 1)
    np.testing.assert_allclose(np.ptp(v[:, 0]), 2 * 2 / SQRT3)


def test_coord_fixed_and_coord_trans_render(cloud):
    assert draw(ggplot(cloud, aes("x", "y")) + geom_hex() + coord_fixed())
    shifted = cloud.assign(x=cloud["x"] + 10)
    p = ggplot(shifted, aes("x", "y")) + geom_hex(bins=6)
    # non-linear coords draw each hexagon as a munched polygon
    colls = draw(p + coord_trans(x="log10"))
    assert len(colls) == len(layer_data(p))


def test_identity_stat_falls_back_to_resolution():
    centres = pd.DataFrame(
        {
            "x": [0.0, 1.0, 0.5, 1.5],
            "y": [0.0, 0.0, SQRT3 / 2, SQRT3 / 2],
            "n": [1, 2, 3, 4],
        }
    )
    p = ggplot(centres, aes("x", "y", fill="n")) + geom_hex(stat="identity")
    d = layer_data(p)
    assert d["width"].iloc[0] == pytest.approx(1.0)  # 2 * resolution(x)
    assert d["height"].iloc[0] == pytest.approx(1.15 * SQRT3 / 2)
    np.testing.assert_allclose(d["xmax"] - d["xmin"], 1.0)


# registry guard ---------------------------------------------------------


def _load_copy(module, name):
    """Execute a fresh copy of ``module``, as a first import would."""
    spec = importlib.util.spec_from_file_location(
        f"{module.__package__}.{name}", module.__file__
    )
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    return copy


def test_registry_resolves_our_classes():
    assert Registry["geom_hex"] is geom_hex
    assert Registry["stat_bin_hex"] is stat_bin_hex
    assert Registry["stat_binhex"] is stat_binhex


def test_guard_keeps_an_upstream_geom_hex():
    ours = Registry["geom_hex"]

    class geom_hex(geom):  # noqa: N801 - stands in for plotnine's own
        DEFAULT_PARAMS = {"stat": "identity", "position": "identity"}

    upstream = geom_hex
    try:
        assert Registry["geom_hex"] is upstream
        copy = _load_copy(geom_hex_module, "_geom_hex_guard_copy")
        assert Registry["geom_hex"] is upstream
        assert copy.geom_hex is upstream  # what we would export
    finally:
        Registry["geom_hex"] = ours


def test_guard_keeps_an_upstream_stat_bin_hex():
    ours = Registry["stat_bin_hex"], Registry["stat_binhex"]

    class stat_bin_hex(stat_module.stat):  # noqa: N801
        pass

    try:
        copy = _load_copy(stat_module, "_stat_bin_hex_guard_copy")
        assert Registry["stat_bin_hex"] is stat_bin_hex
        assert copy.stat_bin_hex is stat_bin_hex
        # an alias plotnine lacks is still ours
        assert Registry["stat_binhex"] is copy.stat_binhex
        assert copy.stat_binhex.__module__ == copy.__name__
    finally:
        Registry["stat_bin_hex"], Registry["stat_binhex"] = ours


def test_guard_lets_our_own_module_reload():
    ours = Registry["geom_hex"]
    try:
        copy = _load_copy(geom_hex_module, "_geom_hex_reload_copy")
        assert Registry["geom_hex"] is copy.geom_hex
        assert copy.geom_hex is not ours
    finally:
        Registry["geom_hex"] = ours


# images ------------------------------------------------------------------


@pytest.mark.image
def test_image_default_bins(cloud):
    p = ggplot(cloud, aes("x", "y")) + geom_hex() + labs(title="geom_hex()")
    assert_image_matches(p, "hex_default_bins")


@pytest.mark.image
def test_image_facets_groups_fixed(cloud):
    p = (
        ggplot(cloud, aes("x", "y", fill="g"))
        + geom_hex(binwidth=(0.75, 0.75), color="white", size=0.3)
        + facet_wrap("g")
        + coord_fixed()
    )
    assert_image_matches(p, "hex_facets_groups_fixed")


@pytest.mark.image
def test_image_flip_with_labels():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.normal(0, 1, 150), "y": rng.normal(0, 1, 150)})
    p = (
        ggplot(df, aes("x", "y"))
        + geom_hex(binwidth=(1, 1), color="black")
        + geom_text(
            aes(label=after_stat("count")),
            stat="bin_hex",
            binwidth=(1, 1),
            color="white",
            size=9,
        )
        + coord_flip()
    )
    assert_image_matches(p, "hex_flip_labels")
