"""Marks that are only noise, set apart (stats/marks.py): the rule reads
released values only (neighbours with one seed differ in it only where
their noisy numbers do), and every family draws its noise marks faded,
leaves them out or draws them as ``noise_marks`` asks; a bad choice is
refused when the layer is made."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd
import pytest
from neighbours import differences, snapshot
from plotnine import (
    aes,
    geom_bar,
    geom_bin_2d,
    geom_boxplot,
    geom_histogram,
    geom_line,
    geom_point,
    geom_pointrange,
    geom_tile,
    geom_violin,
    ggplot,
)
from plotnine.data import mpg

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.declarations import registered
from plotnine_private.door import layer_build
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.geoms.hex import geom_hex
from plotnine_private.stats.marks import FADE, NOISE_MARKS, signal_marks

PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)


def data() -> pd.DataFrame:
    """mpg with a declared group ``g``: "a" for every car but one, "b"
    for that one, and "c" declared with none (a mark of one record is
    noise under DP; an empty one under CKM too, whose noise is small)."""
    d = mpg[["displ", "hwy", "cty", "cyl"]].copy()
    g = np.where(np.arange(len(d)) == 0, "b", "a")
    d["g"] = pd.Categorical(g, categories=["a", "b", "c"])
    return pp.add_record_keys(d, name="rk", rng_seed=5)


D = data()
DP = {"eps": 1, "seed": 3}
CKM = {"ptable": PTAB}

#: family -> (plot maker, its DP and CKM parameters); each layer has a
#: mark of one record (or none) and a mark of many
FAMILIES = {
    "count": lambda kw, m: (
        ggplot(D, aes("g", rkey="rk")) + geom_bar(stat=f"count_{m}", **kw)
    ),
    "bin": lambda kw, m: (
        ggplot(D, aes("hwy", rkey="rk"))
        + geom_histogram(stat=f"bin_{m}", limits=(0, 60), bins=6, **kw)
    ),
    "bin2d": lambda kw, m: (
        ggplot(D, aes("displ", "hwy", rkey="rk"))
        + geom_bin_2d(
            stat=f"bin2d_{m}",
            limits=((0, 8), (0, 60)),
            bins=4,
            drop=False,
            **kw,
        )
    ),
    "binhex": lambda kw, m: (
        ggplot(D, aes("displ", "hwy", rkey="rk"))
        + geom_hex(stat=f"binhex_{m}", limits=((0, 8), (0, 60)), bins=8, **kw)
    ),
    "sum": lambda kw, m: (
        ggplot(D, aes("displ", "cyl", rkey="rk"))
        + geom_point(
            stat=f"sum_{m}",
            limits=((0, 8), (2, 10)),
            resolution=(0.5, 1),
            **kw,
        )
    ),
    "boxplot": lambda kw, m: (
        ggplot(D, aes("g", "hwy", rkey="rk"))
        + geom_boxplot(stat=f"boxplot_{m}", limits=(0, 60), bins=30, **kw)
    ),
    "violin": lambda kw, m: (
        ggplot(D, aes("g", "hwy", rkey="rk"))
        + geom_violin(stat=f"violin_{m}", limits=(0, 60), bins=30, **kw)
    ),
    "density": lambda kw, m: (
        ggplot(D, aes("hwy", color="g", rkey="rk"))
        + geom_line(stat=f"density_{m}", limits=(0, 60), bins=30, **kw)
    ),
    "ecdf": lambda kw, m: (
        ggplot(D, aes("hwy", color="g", rkey="rk"))
        + geom_line(stat=f"ecdf_{m}", limits=(0, 60), bins=30, **kw)
    ),
    "summary": lambda kw, m: (
        ggplot(D, aes("g", "hwy"))
        + geom_pointrange(stat="summary_dp", bounds=(0, 60), **kw)
    ),
    "dp_pca_score": lambda kw, m: (
        ggplot(D[["displ", "hwy", "cty", "cyl"]])
        + geom_tile(
            stat="dp_pca_score",
            columns=["displ", "hwy", "cty", "cyl"],
            bins=(5, 5),
            eps=4,
            delta=1e-5,
            seed=3,
            drop_zero=False,
            **kw,
        )
    ),
}
#: families without a CKM twin here (the CKM summary needs a magnitude
#: p-table; the private PCA is DP only)
DP_ONLY = {"summary", "dp_pca_score"}
CASES = [(f, "dp") for f in FAMILIES] + [
    (f, "ckm") for f in FAMILIES if f not in DP_ONLY
]


def layer(family: str, mech: str, how: str) -> pd.DataFrame:
    kw = {**(DP if mech == "dp" else CKM), "noise_marks": how}
    if family == "dp_pca_score":
        kw = {"noise_marks": how}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.PrivacyWarning)
        return pp.layer_data(FAMILIES[family](kw, mech))


@pytest.mark.parametrize(("family", "mech"), CASES)
def test_noise_marks_are_faded_dropped_or_drawn_as_asked(family, mech):
    drawn = layer(family, mech, "draw")
    noise = ~drawn["signal"].to_numpy(dtype=bool)
    # every layer here has a mark that is only noise, and one that is not
    assert noise.any() and not noise.all(), drawn["signal"].tolist()
    faded = layer(family, mech, "fade")
    # the same marks, the same rule: only the drawing differs
    assert faded["signal"].tolist() == drawn["signal"].tolist()
    a_draw = drawn["alpha"].to_numpy(dtype=float)
    a_fade = faded["alpha"].to_numpy(dtype=float)
    np.testing.assert_allclose(a_fade[noise], a_draw[noise] * FADE)
    np.testing.assert_array_equal(a_fade[~noise], a_draw[~noise])
    if "color" in drawn.columns and drawn["color"].notna().any():
        # an outline or a line takes the faded alpha too
        faded_colours = faded.loc[noise, "color"].dropna()
        assert all(len(c) == 9 for c in faded_colours), faded_colours
        assert (
            faded.loc[~noise, "color"].tolist()
            == drawn.loc[~noise, "color"].tolist()
        )
    dropped = layer(family, mech, "drop")
    assert len(dropped) == int((~noise).sum())
    assert dropped["signal"].all()


def test_the_noise_only_box_bar_and_tile():
    """Which marks are noise, named: the one-car group's box and bar,
    and the empty corner tiles of the 2-D histogram."""
    box = layer("boxplot", "dp", "draw")
    marks = {1: True, 2: False, 3: False}
    assert box.set_index("x")["signal"].to_dict() == marks
    bar = layer("count", "dp", "draw")
    assert bar.set_index("x")["signal"].to_dict() == marks
    tiles = layer("bin2d", "dp", "draw")
    corner = (tiles["xmin"] == 6) & (tiles["ymin"] == 0)
    assert not tiles.loc[corner, "signal"].any()
    assert tiles["signal"].sum() >= 2


REQUIRED = {
    "count_dp": {"eps": 1},
    "bin_ckm": {"ptable": PTAB},
    "boxplot_dp": {"eps": 1, "limits": (0, 1)},
    "summary_dp": {"eps": 1, "bounds": (0, 1)},
}


@pytest.mark.parametrize("bad", ["hide", "", None, True, "FADE"])
@pytest.mark.parametrize("stat", sorted(REQUIRED))
def test_a_bad_choice_is_refused_naming_it(stat, bad):
    # plotnine 0.15 makes the stat with the geom, 0.16 when the layer is
    # added to a plot: refused by then either way, before any drawing
    with pytest.raises(PlotninePrivateError) as err:
        ggplot() + geom_point(stat=stat, noise_marks=bad, **REQUIRED[stat])
    msg = str(err.value)
    assert "noise_marks" in msg and repr(bad) in msg
    assert all(repr(c) in msg for c in NOISE_MARKS)


def test_a_bad_choice_is_refused_by_the_pca():
    with pytest.raises(PlotninePrivateError, match="noise_marks"):
        ggplot() + geom_tile(
            stat="dp_pca_score",
            columns=["a", "b"],
            eps=1,
            delta=1e-5,
            noise_marks="faded",
        )


def test_every_private_stat_takes_noise_marks():
    for e in registered():
        assert e.cls.DEFAULT_PARAMS.get("noise_marks") == "fade", e.name


# --------------------------------------------------------------------------
# the rule reads released values only
# --------------------------------------------------------------------------
def rule_inputs(out: pd.DataFrame) -> pd.DataFrame:
    """The released columns the rule reads (interval ends), by row."""
    return out[[c for c in out.columns if c.endswith(("_low", "_high"))]]


def built_pair(family: str, other: pd.DataFrame, unit: bool = False):
    def plot(d):
        src = pp.source(d, unit="pid", max_records=2) if unit else d
        p = FAMILIES[family]({**DP, "noise_marks": "draw"}, "dp")
        p.data = src
        return p

    return plot(D_UNIT if unit else D), plot(other)


def one_record(d: pd.DataFrame) -> None:
    d.loc[5, ["hwy", "displ", "cyl"]] = [59.0, 7.9, 8]


D_UNIT = D.assign(pid=np.arange(len(D)) // 2)


def one_person(d: pd.DataFrame) -> None:
    mine = d["pid"] == 3
    d.loc[mine, ["hwy", "displ", "cyl"]] = [2.0, 0.5, 4]
    d.loc[mine, "g"] = "b"


@pytest.mark.parametrize("family", ["count", "bin2d", "boxplot", "summary"])
@pytest.mark.parametrize("who", ["record", "person"])
def test_the_rule_reads_released_values_only(family, who):
    if who == "record":
        other = D.copy()
        one_record(other)
        a, b = built_pair(family, other)
    else:
        other = D_UNIT.copy()
        one_person(other)
        a, b = built_pair(family, other, unit=True)
    # the harness: all but the noisy numbers (signal, alpha among them)
    # is equal on the two neighbours
    axes = ("y",) if family != "bin2d" else ()
    assert differences(snapshot(a, axes), snapshot(b, axes)) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.PrivacyWarning)
        out_a, out_b = pp.layer_data(a), pp.layer_data(b)
    assert len(out_a) == len(out_b)
    # the marks differ only where the released values the rule reads do
    same = rule_inputs(out_a).to_numpy() == rule_inputs(out_b).to_numpy()
    same = same.all(axis=1)
    sig_a, sig_b = out_a["signal"].to_numpy(), out_b["signal"].to_numpy()
    np.testing.assert_array_equal(sig_a[same], sig_b[same])
    # and the rule is a function of those values and public parameters:
    # the released columns alone give the marks again
    built = layer_build(build(a).layers[0])
    stat = copy.copy(a.layers[0].stat)
    stat.build = built  # the box's limits: its released fine edges
    released = pd.concat(
        [out_a[["PANEL", "group"]], rule_inputs(out_a)], axis=1
    )
    np.testing.assert_array_equal(signal_marks(released, stat), sig_a)


# --------------------------------------------------------------------------
# said in the caption and the report, warned once per figure
# --------------------------------------------------------------------------
def bars(how: str = "fade"):
    return ggplot(D, aes("g")) + geom_bar(
        stat="count_dp", noise_marks=how, **DP
    )


@pytest.mark.parametrize(
    ("how", "words"),
    [("fade", "drawn faded"), ("drop", "not drawn"), ("draw", "drawn as")],
)
def test_the_caption_and_the_report_count_the_noise_marks(how, words):
    said = f"2 of 3 marks are within noise ({words}"
    caption = pp.noise_caption(bars(how)).split("\n")
    assert caption[1].startswith(f"count_dp: {said}")
    notes = pp.privacy_report(bars(how)).notes
    (note,) = [n for n in notes if "within noise" in n]
    assert note.startswith(f"layer 0 (stat_count_dp): {said}")
    assert "signal is False" in note and "noise_marks=" in note


def test_a_figure_warns_once_per_cause():
    """A box plot and its noise layer are one release: one warning."""
    kw = {"limits": (0, 60), "bins": 30, **DP}
    p = (
        ggplot(D, aes("g", "hwy"))
        + geom_boxplot(stat="boxplot_dp", **kw)
        + pp.geom_noise(stat="boxplot_dp", **kw)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pp.layer_data(p)
    boxes = [w for w in caught if issubclass(w.category, pp.SignalWarning)]
    assert len(boxes) == 1, [str(w.message) for w in boxes]
    assert "2 box(es)" in str(boxes[0].message)
    assert "drawn faded (noise_marks='fade')" in str(boxes[0].message)


def test_an_ecdf_is_noise_only_where_its_band_cannot_place_the_median():
    # four curves on the public grid 10..50 (and the ends at -inf, inf)
    x = [-np.inf, 10, 20, 30, 40, 50, np.inf]
    bands = {
        # holds 1/2 at x=20 alone: signal, though 0.55 wide there
        1: ([0, 0, 0.0, 0.6, 0.9, 1, 1], [0, 0.1, 0.55, 0.8, 1, 1, 1]),
        # holds 1/2 from 20 to 40, half the grid: noise (0.5 wide at most)
        2: ([0, 0, 0.3, 0.45, 0.5, 1, 1], [0, 0.1, 0.6, 0.7, 1, 1, 1]),
        # holds 1/2 only beyond the limits: its median may lie outside
        3: ([0, 0, 0, 0.1, 0.2, 0.3, 0.4], [0, 0.1, 0.2, 0.3, 0.4, 0.45, 1]),
        # curve 1 of a group with no released record: places nothing
        4: ([0, 0, 0.0, 0.6, 0.9, 1, 1], [0, 0.1, 0.55, 0.8, 1, 1, 1]),
    }
    out = pd.DataFrame(
        {
            "PANEL": 1,
            "group": np.repeat(list(bands), len(x)),
            "x": x * len(bands),
            "ecdf_low": np.concatenate([lo for lo, _ in bands.values()]),
            "ecdf_high": np.concatenate([hi for _, hi in bands.values()]),
            "n": np.repeat([50, 50, 50, 0], len(x)),
        }
    )
    stat = registered()[0].cls  # any stat: an ECDF reads its x grid
    got = signal_marks(out, stat).reshape(len(bands), -1)
    assert got.all(axis=1).tolist() == [True, False, False, False]
    assert (got.any(axis=1) == got.all(axis=1)).all()  # whole curves


def test_the_ecdf_rule_on_neighbours_reads_released_values_only():
    def curves(d):
        return ggplot(d, aes("hwy", colour="g")) + geom_line(
            stat="ecdf_dp", limits=(0, 60), bins=30, **DP
        )

    other = D.copy()
    one_record(other)
    a, b = curves(D), curves(other)
    assert differences(snapshot(a, ("y",)), snapshot(b, ("y",))) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.PrivacyWarning)
        out = pp.layer_data(a)
    # the released band and the public grid alone give the marks again
    released = out[["PANEL", "group", "x", "ecdf_low", "ecdf_high", "n"]]
    stat = a.layers[0].stat
    np.testing.assert_array_equal(
        signal_marks(released, stat), out["signal"].to_numpy()
    )
