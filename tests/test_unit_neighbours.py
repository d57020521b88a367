"""The neighbour harness at the level of a privacy unit: the same plot on
two data sets that differ in one whole person (50 rows changed, outliers
and another category), declared with ``pp.source(..., unit=,
max_records=)``; everything but the noisy numbers must be equal. For
summaries, the fine-histogram curves (density, ECDF, boxplot) and the
private PCA score plot. Each layer's releases also say that one person
moves ``max_records`` rows (sensitivities ``k`` times a row's)."""

from __future__ import annotations

import warnings

import neighbours
import numpy as np
import pandas as pd
import pytest
from fine_common import FINE_NOISY
from neighbours import differences, mixed_ids, snapshot
from plotnine import (
    aes,
    after_stat,
    geom_boxplot,
    geom_density,
    geom_line,
    geom_point,
    geom_pointrange,
    geom_tile,
    ggplot,
)

import plotnine_private as pp
from plotnine_private import layer_data
from plotnine_private._compat import build
from plotnine_private.door import layer_releases

K = 3
RNG = np.random.default_rng(2026)
#: 200 people with 1 to 4 rows each (ids of every kind), and person 0
#: with 50 rows
_SIZES = np.r_[50, RNG.integers(1, 5, 200)]
_N = int(_SIZES.sum())
BASE = pd.DataFrame(
    {
        "pid": mixed_ids(np.repeat(np.arange(201), _SIZES), 0),
        "x": RNG.normal(25, 8, _N),
        "g": pd.Categorical(RNG.choice(["a", "b", "c"], _N), ["a", "b", "c"]),
        "y": RNG.normal(20, 5, _N),
        "z": RNG.normal(0, 3, _N),
    }
)
BASE["w"] = BASE["x"] * 0.5 + RNG.normal(0, 2, _N)
BASE.loc[BASE["pid"] == 0, "g"] = "a"


def neighbour() -> pd.DataFrame:
    """Person 0's 50 rows replaced: outliers, another category."""
    d = BASE.copy()
    mine = d["pid"] == 0
    d.loc[mine, ["x", "y", "z", "w"]] = [1000.0, -700.0, 900.0, -800.0]
    d.loc[mine, "g"] = "c"
    return d


def unit(d: pd.DataFrame):
    return pp.source(d, unit="pid", max_records=K)


DP = {"eps": 2, "seed": 7}

CASES = {
    "summary": (
        lambda d: (
            ggplot(d, aes("g", "y"))
            + geom_pointrange(stat="summary_dp", bounds=(0, 40), **DP)
        ),
        ("y",),
    ),
    "density": (
        lambda d: (
            ggplot(d, aes("x", fill="g"))
            + geom_density(stat="density_dp", limits=(0, 50), bins=32, **DP)
        ),
        ("y",),
    ),
    "ecdf": (
        lambda d: (
            ggplot(d, aes("x"))
            + geom_line(stat="ecdf_dp", limits=(0, 50), bins=32, **DP)
        ),
        ("y",),
    ),
    "boxplot": (
        lambda d: (
            ggplot(d, aes("g", "y"))
            + geom_boxplot(stat="boxplot_dp", limits=(0, 40), bins=32, **DP)
        ),
        ("y",),
    ),
    "dp_pca_score": (
        lambda d: (
            ggplot(d)
            + geom_tile(
                aes(fill=after_stat("count")),
                stat="dp_pca_score",
                columns=["x", "y", "z", "w"],
                bins=(6, 6),
                eps=4,
                delta=1e-5,
                seed=7,
                drop_zero=False,
            )
        ),
        ("x", "y"),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_person_changed_leaves_everything_but_noise(name, monkeypatch):
    monkeypatch.setattr(neighbours, "NOISY", neighbours.NOISY | FINE_NOISY)
    make, noisy_axes = CASES[name]
    # the score tiles sit on the private frame: their positions are
    # released values, so only panels and groups are compared
    by_noise = name == "dp_pca_score"
    a = snapshot(make(unit(BASE)), noisy_axes, by_noise)
    b = snapshot(make(unit(neighbour())), noisy_axes, by_noise)
    assert "error" not in a, a.get("error")
    if by_noise:
        # under a unit the PCA's size is a released count and the
        # directions' noise is calibrated on it: their sensitivity is a
        # released number (tests/test_unit_pca.py checks its formula)
        for snap in (a, b):
            rows = snap["report"]
            assert rows[0]["mechanism"] == "discrete_laplace"
            assert rows[1]["mechanism"] == "gaussian"
            rows[1]["sensitivity"] = "of the released size"
    assert differences(a, b) == []


def _releases(plot):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return layer_releases(build(plot).layers[0])


@pytest.mark.parametrize("name", sorted(CASES))
def test_releases_protect_a_whole_person(name, monkeypatch):
    """Sensitivity k times one row's, and the query names the unit (the
    same plot on the plain frame is another release)."""
    # only the releases are read: the curves' interval variables (a
    # simulation per build, post-processing) are not computed
    for stat in (pp.stat_density_dp, pp.stat_ecdf_dp, pp.stat_boxplot_dp):
        monkeypatch.setattr(stat, "add_intervals", lambda self, out, rel: None)
    make, _ = CASES[name]
    bounded = _releases(make(unit(BASE)))
    rows = _releases(make(BASE))
    # a bounded PCA first releases its size (how many rows were kept is
    # private under a unit): a count of sensitivity k
    size = [r for r in bounded if r.family == "pca:size"]
    bounded = [r for r in bounded if r.family != "pca:size"]
    assert [r.family for r in bounded] == [r.family for r in rows]
    assert [r.sensitivity for r in size] == (
        [K] if name == "dp_pca_score" else []
    )
    for r, r1 in zip(bounded, rows):
        factor = K
        if r.family == "pca:directions":
            # 2 sqrt(2) k / s, s the released size (never the rows kept)
            factor = K * _N / size[0].details["size"]
        assert r.sensitivity == pytest.approx(factor * r1.sensitivity)
        assert r.identity != r1.identity


def test_intervals_widen_with_the_bound():
    """One row per person, declared with max_records=3: no row is
    dropped, and the noise intervals of a total and of a density are
    about three times those of one row per unit."""
    rows = BASE.assign(pid=np.arange(len(BASE)))
    total = {"stat": "summary_dp", "bounds": (0, 40), "fun": "sum", **DP}
    dens = {"stat": "density_dp", "limits": (0, 50), "bins": 32, **DP}
    widths = {}
    for name, data in (("row", rows), ("unit", unit(rows))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = layer_data(ggplot(data, aes("g", "y")) + geom_point(**total))
            d = layer_data(ggplot(data, aes("x")) + geom_line(**dens))
        widths[name] = (
            float((s["y_high"] - s["y_low"]).mean()),
            float((d["density_high"] - d["density_low"]).mean()),
        )
    for unit_w, row_w in zip(widths["unit"], widths["row"]):
        assert 2.5 < unit_w / row_w < 3.5
