"""No mark reaches past what its stat clips to: for every registered stat
and each geom it is used with (its declaration's ``geoms``, its default
geom and ``geom_noise``), every drawn extent on a value axis (``y``,
``ymin``, ``ymax``, the box's and the notches' ends...; tiles, hexagons
and points, whose positions are public, by their released ``count`` or
``n``) lies in the stat's documented range (``drawn_range()``: counts
and densities at or above 0, an ECDF in [0, 1], box plots, violins,
means and quantiles in their limits or bounds, a total of values clamped
to bounds at or above 0 when no value is below 0, at or below 0 when
none is above).

The eps is small (0.05: a count's noise has a scale of 40) so that
negative noisy counts and totals are common: the summary total of the
issue (a bar at -3.3 million with its interval wholly below 0) drew y,
ymin and ymax below 0 before they were clipped.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import plotnine
import pytest
from conformance import frame, mechanism_params
from plotnine import aes, ggplot

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.declarations import registered

#: the columns of a value axis that geoms draw from
EXTENTS = {
    "y": (
        "y",
        "ymin",
        "ymax",
        "ymin_final",
        "ymax_final",
        "lower",
        "middle",
        "upper",
        "notchlower",
        "notchupper",
    )
}
#: geoms drawn from a baseline at 0 (plotnine's, not a released value),
#: and the columns that hold it
BARS = {"geom_bar", "geom_col", "geom_histogram", "geom_area"}
BASES = ("ymin", "ymin_final")
#: geoms that draw no extent (a label sits at y, which is checked on the
#: layer that draws y)
NO_EXTENT = {"geom_text"}


def _entries():
    # the package's own stats (a test may register an example of its own)
    return [
        e
        for e in registered()
        if e.alias_of is None
        and e.cls.__module__.startswith("plotnine_private.")
    ]


def _geoms(entry) -> list:
    """The geoms the stat is used with, as plotnine (or this package)
    names them."""
    names = re.findall(r"geom_\w+", entry.declaration.geoms)
    names = [n for n in dict.fromkeys(names) if n not in NO_EXTENT]
    out = []
    for name in names:
        geom = getattr(pp, name, None) or getattr(plotnine, name)
        out.append(geom)
    return out


CASES = [
    pytest.param(e, {}, id=e.name)
    for e in _entries()
    if e.declaration.family != "pca"
] + [
    pytest.param(e, extra, id=f"{e.name}-{tag}")
    for e in _entries()
    if e.declaration.family == "summary"
    for tag, extra in (
        ("sum", {"fun": "sum", "bounds": (0, 45)}),
        ("negative-sum", {"fun": "sum", "bounds": (-45, -10)}),
        ("median", {"fun": "median"}),
    )
]


@pytest.mark.parametrize(("entry", "extra"), CASES)
def test_no_drawn_extent_leaves_the_documented_range(entry, extra):
    decl = entry.declaration
    params = {**decl.example.get("params", {}), **mechanism_params(entry)}
    params.update(extra)
    if entry.mechanism == "dp":
        params["eps"] = 0.05
    mapping = dict(decl.example.get("aes", {}))
    if entry.mechanism == "ckm":
        mapping["rkey"] = "rk"
    data = frame()
    if extra.get("bounds") == (-45, -10):
        data = data.assign(num=-data["num"])
    stat = entry.cls(**params)
    ranges = stat.drawn_range()
    assert ranges, f"{entry.name}: no documented range of its marks"
    p = ggplot(data, aes(**mapping)) + entry.cls(**params)
    for geom in _geoms(entry):
        p += geom(stat=entry.name, **params)
    if decl.noise_geom is not None:
        p += pp.geom_noise(stat=entry.name, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = build(p)
    checked = 0
    for i, layer in enumerate(built.layers):
        frame_ = layer.data
        for axis, (lo, hi) in ranges.items():
            for col in EXTENTS.get(axis, (axis,)):
                if col not in frame_.columns:
                    continue
                v = frame_[col].to_numpy(dtype=float)
                v = v[np.isfinite(v)]
                if col in BASES and type(layer.geom).__name__ in BARS:
                    # a bar's or an area's baseline is the geom's 0
                    v = v[v != 0]
                checked += len(v)
                out = v[(v < lo - 1e-9) | (v > hi + 1e-9)]
                assert not len(out), (
                    f"{entry.name} {extra} layer {i} "
                    f"({type(layer.geom).__name__}): {col} outside "
                    f"[{lo}, {hi}]: {out[:5]}"
                )
    assert checked, f"{entry.name}: nothing drawn on {list(ranges)}"


def test_the_issues_total_was_drawn_below_zero_before_the_clip():
    # the negative control of the sum case: its released totals are
    # negative here, so only the clip keeps the bars at or above 0
    (entry,) = [e for e in _entries() if e.name == "summary_dp"]
    p = ggplot(frame(), aes("cat", "num")) + plotnine.geom_col(
        stat="summary_dp", fun="sum", bounds=(0, 45), eps=0.05, seed=3
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = pp.layer_data(p)
    assert (got["sum"] < 0).any()  # the released totals, unclipped
    assert (got[["y", "ymin", "ymax", "y_low", "y_high"]] >= 0).all().all()
    assert (got.loc[got["sum"] < 0, "y"] == 0).all()
