"""The private PCA and the private range estimate with a declared privacy
unit: ``dp_pca``/``dp_score`` bound a ``pp.source(frame, unit=,
max_records=)`` as a plot's layer does (one release with the stat), the
unit's identifiers are not features, and every charge names the unit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from plotnine import aes, geom_histogram, ggplot

import plotnine_private as pp
from plotnine_private import dp_pca, dp_score, layer_data
from plotnine_private._compat import build
from plotnine_private.door import layer_releases
from plotnine_private.mechanisms.pca.directions import kendall_sensitivity
from plotnine_private.mechanisms.release import engine
from plotnine_private.stats.dp_pca_score import stat_dp_pca_score

K = 2
RNG = np.random.default_rng(90)
SIZES = RNG.integers(1, 6, 250)
N = int(SIZES.sum())
KEPT = int(np.minimum(SIZES, K).sum())
PEOPLE = pd.DataFrame(
    {
        "pid": np.repeat(np.arange(250), SIZES),
        "a": RNG.normal(0, 4, N),
        "b": RNG.normal(0, 2, N),
        "c": RNG.normal(0, 1, N),
    }
)
COLS = ["a", "b", "c"]


@pytest.fixture
def charges():
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    yield seen
    engine.set_charge_hook(previous)


def test_dp_pca_bounds_the_units_rows_and_scales_every_part(charges):
    src = pp.source(PEOPLE, unit="pid", max_records=K)
    r = dp_pca(src, eps=3, delta=1e-5, seed=2)
    assert r.n == KEPT and r.columns == COLS  # pid is not a feature
    sens = {x.family: x.sensitivity for x in r.releases}
    assert sens["pca:directions"] == pytest.approx(
        K * kendall_sensitivity(KEPT)
    )
    assert sens["pca:frame"] == K and sens["pca:histogram"] == 2 * K
    assert {(c.unit, c.bound) for c in charges} == {("pid", K)}
    assert len(charges) == len(r.releases)
    plain = dp_pca(PEOPLE[COLS], eps=3, delta=1e-5, seed=2)
    assert plain.n == N and plain.identity != r.identity


def test_dp_score_and_the_stat_are_one_release_on_a_unit_frame():
    src = pp.source(PEOPLE, unit="pid", max_records=K)
    ref = dp_score(src, COLS, eps=4, delta=1e-5, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = layer_data(
            ggplot(src)
            + stat_dp_pca_score(columns=COLS, eps=4, delta=1e-5, seed=1)
        )
    want = ref.histogram[ref.histogram["prob"] > 0]
    assert np.sort(d["prob"].to_numpy()) == pytest.approx(
        np.sort(want["prob"].to_numpy())
    )
    # polars frames are bounded alike
    pol = pp.source(pl.from_pandas(PEOPLE), unit="pid", max_records=K)
    with pytest.warns(pp.PrivacyWarning, match="another data frame"):
        again = dp_score(pol, COLS, eps=4, delta=1e-5, seed=1)
    assert again.identity == ref.identity
    pd.testing.assert_frame_equal(again.histogram, ref.histogram)


def test_group_labels_given_per_row_follow_the_bounding():
    src = pp.source(PEOPLE, unit="pid", max_records=K)
    labels = pd.Categorical(
        np.where(PEOPLE["a"] > 0, "up", "down"), categories=["down", "up"]
    )
    r = dp_score(
        src, COLS, eps=4, delta=1e-5, seed=1, group=labels, method="add"
    )
    with_column = dp_score(
        pp.source(PEOPLE.assign(g=labels), unit="pid", max_records=K),
        COLS,
        eps=4,
        delta=1e-5,
        seed=1,
        group="g",
        method="add",
    )
    assert r.groups == ["down", "up"] and r.n == KEPT
    assert r.group_totals.keys() == with_column.group_totals.keys()


def test_a_private_range_protects_the_unit(charges):
    src = pp.source(PEOPLE, unit="pid", max_records=K)
    plot = ggplot(src, aes("a")) + geom_histogram(
        stat="bin_dp", bins=10, eps=2, seed=3
    )
    with pytest.warns(pp.PrivacyWarning, match=rf"200 \* max_records \({K}"):
        built = build(plot)
    ranges = [c for c in charges if c.family == "range"]
    assert [(c.unit, c.bound) for c in ranges] == [("pid", K)]
    release = layer_releases(built.layers[0])[0]
    assert release.family == "range" and release.sensitivity == K
    assert release.details["records"] == K


def test_max_cells_does_not_lower_the_score_threshold():
    """The score grid's cells are not limited per unit, so a declared
    max_cells must not lower the sparse histogram's threshold: a tile only
    one person reaches would show far more often than delta allows (95 of
    300 releases at delta 0.1 with max_cells=1)."""
    from plotnine_private.mechanisms.pca.histogram import sparse_threshold

    def threshold(**unit):
        src = pp.source(PEOPLE, unit="pid", max_records=K, **unit)
        r = dp_pca(src, eps=3, delta=1e-5, seed=2)
        hist = next(x for x in r.releases if x.family == "pca:histogram")
        return hist.details["threshold"], hist.eps, hist.delta

    got, eps, delta = threshold(max_cells=1)
    assert got == threshold()[0]
    assert got == sparse_threshold(eps, delta, K, None)
    assert got > sparse_threshold(eps, delta, K, 1)
