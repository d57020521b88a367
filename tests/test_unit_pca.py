"""The private PCA and the private range estimate with a declared privacy
unit: ``dp_pca``/``dp_score`` bound a ``pp.source(frame, unit=,
max_records=)`` as a plot's layer does (one release with the stat), the
unit's identifiers are not features, and every charge names the unit."""

from __future__ import annotations

import warnings

import neighbours
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
from plotnine_private.mechanisms.session import current_session
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
    assert r.columns == COLS  # pid is not a feature
    # how many rows were kept is private: n is a released lower bound
    size = next(x for x in r.releases if x.family == "pca:size")
    assert r.n == size.details["size"] < KEPT + 3 * size.details["scale"]
    assert size.details["count"] - size.details["margin"] == r.n
    assert (size.mechanism, size.sensitivity, size.delta) == (
        "discrete_laplace",
        K,
        0.0,
    )
    assert size.eps == pytest.approx(0.05 * 3)
    sens = {x.family: x.sensitivity for x in r.releases}
    assert sens["pca:directions"] == pytest.approx(
        K * kendall_sensitivity(r.n)
    )
    assert sens["pca:frame"] == K and sens["pca:histogram"] == 2 * K
    assert {(c.unit, c.bound) for c in charges} == {("pid", K)}
    assert len(charges) == len(r.releases) == 5
    assert r.privacy.loc["total", "eps"] == pytest.approx(3)
    assert r.privacy.loc["size", "eps"] == pytest.approx(0.15)
    plain = dp_pca(PEOPLE[COLS], eps=3, delta=1e-5, seed=2)
    assert plain.n == N and plain.identity != r.identity
    assert "size" not in plain.privacy.index


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
    size = next(x for x in r.releases if x.family == "pca:size")
    assert r.groups == ["down", "up"] and r.n == size.details["size"]
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


# --- the public size under a unit ------------------------------------------


def _person_changed() -> pd.DataFrame:
    """PEOPLE with one whole person changed: the first person of one row
    replaced, in place, by K + 3 rows of other values. The rows kept
    change in number (that person keeps 1 row before, K after) and in
    content."""
    pid = int(np.flatnonzero(SIZES == 1)[0])
    at = int(SIZES[:pid].sum())
    other = pd.DataFrame(
        {
            "pid": pid,
            "a": np.linspace(-30, 30, K + 3),
            "b": 9.0,
            "c": -7.0,
        }
    )
    return pd.concat(
        [PEOPLE.iloc[:at], other, PEOPLE.iloc[at + 1 :]], ignore_index=True
    )


#: details of a release that are released numbers (or functions of them)
NOISY_DETAILS = {"clip", "sigma_scree", "xlim", "ylim", "count", "size"}


def _public(result, noisy=NOISY_DETAILS) -> list:
    """Everything a result says that is not a released number."""
    out = []
    for r in result.releases:
        details = {
            k: v
            for k, v in r.details.items()
            if k not in noisy
            and not (k == "sigma" and r.family == "pca:scree")
        }
        out.append(
            (
                r.identity,
                r.family,
                r.mechanism,
                r.eps,
                r.delta,
                r.adjacency,
                r.sensitivity if r.family != "pca:scree" else None,
                r.domain,
                r.cells,
                r.composition,
                sorted(details.items(), key=str),
            )
        )
    return out


def test_a_whole_person_changed_changes_no_public_number_declared_n():
    """With a declared n, two data sets that differ in one whole person
    (and in the number of rows kept) show the same n, the same
    sensitivities and the same noise scales (sigma of the directions and
    of the histogram): only released numbers differ."""
    d2 = _person_changed()
    kept = [
        int(np.minimum(d.groupby("pid").size(), K).sum()) for d in (PEOPLE, d2)
    ]
    assert kept == [KEPT, KEPT + K - 1]  # a private number: it changed
    res = []
    for data in (PEOPLE, d2):
        current_session().sources.clear()
        src = pp.source(data, unit="pid", max_records=K)
        res.append(
            dp_pca(src, eps=3, delta=1e-5, seed=2, n=400, method="add", bins=6)
        )
    a, b = res
    assert a.n == b.n == 400
    assert _public(a) == _public(b)
    sig = [{r.family: r.details.get("sigma") for r in x.releases} for x in res]
    assert sig[0]["pca:directions"] == sig[1]["pca:directions"]
    assert sig[0]["pca:histogram"] == sig[1]["pca:histogram"]
    assert sig[0]["pca:directions"] > 0
    pd.testing.assert_frame_equal(a.privacy, b.privacy)
    assert a.frame.level == b.frame.level
    assert len(a.sample()) == len(b.sample()) == 400
    assert repr(a).split(" eigen")[0] == repr(b).split(" eigen")[0]
    # the noisy numbers did change
    assert not np.allclose(a.directions.to_numpy(), b.directions.to_numpy())


def test_a_whole_person_changed_default_size_is_released():
    """Without n, each release's size is a released count: the noise
    scale of the directions and the frame's level are the same function
    of it on both neighbours (never of the rows kept), and everything
    else public is equal."""
    from plotnine_private.mechanisms.pca.quantile import tail_level
    from plotnine_private.mechanisms.samplers.gaussian import gaussian_sigma

    res = []
    for data in (PEOPLE, _person_changed()):
        current_session().sources.clear()
        src = pp.source(data, unit="pid", max_records=K)
        res.append(dp_pca(src, eps=3, delta=1e-5, seed=2))
    for r in res:
        fam = {x.family: x for x in r.releases}
        directions, frame = fam["pca:directions"], fam["pca:frame"]
        assert directions.details["size"] == r.n
        assert directions.details["size_source"] == "private count"
        sens = K * kendall_sensitivity(r.n)
        assert directions.sensitivity == sens
        assert directions.details["sigma"] == gaussian_sigma(
            directions.eps, directions.delta, sens, "analytic"
        )
        assert frame.details["radius_quantile"] == tail_level(
            0.99, frame.eps / 3, r.n, K, 0.01
        )
    # functions of the released size: the directions' sensitivity and
    # sigma, the frame's level
    strip = NOISY_DETAILS | {"sigma", "radius_quantile", "quantiles"}
    pa, pb = ([x[:6] + x[7:] for x in _public(r, strip)] for r in res)
    assert pa == pb
    pd.testing.assert_frame_equal(res[0].privacy, res[1].privacy)


def test_the_public_size_is_checked():
    src = pp.source(PEOPLE, unit="pid", max_records=K)
    with pytest.raises(ValueError, match=r"n=500 is only for a privacy"):
        dp_pca(PEOPLE[COLS], eps=3, delta=1e-5, seed=2, n=500)
    with pytest.raises(ValueError, match=r"n must be a whole number >= 2"):
        dp_pca(src, eps=3, delta=1e-5, seed=2, n=1)
    with pytest.raises(ValueError, match=r"scree_version='v1'.*'v2'"):
        dp_pca(src, eps=3, delta=1e-5, seed=2, scree_version="v1")


@pytest.mark.parametrize("n", [400, None])
def test_the_stat_on_a_whole_person_changed_shows_the_same(n):
    """tests/neighbours.py's snapshot of a score plot under a unit (its
    axes are released positions): layer columns, panels, groups,
    warnings, report rows and notes are equal when one whole person (and
    the number of rows kept) changes; the number of synthetic points is
    the public size, never the rows kept."""
    snaps, points = [], []
    for data in (PEOPLE, _person_changed()):
        src = pp.source(data, unit="pid", max_records=K)
        layer = stat_dp_pca_score(
            columns=COLS,
            eps=4,
            delta=1e-5,
            seed=1,
            n=n,
            bins=6,
            method="add",
            drop_zero=False,
        )
        snaps.append(neighbours.snapshot(ggplot(src) + layer, ("x", "y")))
        synthetic = stat_dp_pca_score(
            columns=COLS,
            eps=4,
            delta=1e-5,
            seed=1,
            n=n,
            bins=6,
            method="add",
            output="synthetic",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            points.append(len(layer_data(ggplot(src) + synthetic)))
    assert "error" not in snaps[0]
    mechanisms = [r["mechanism"] for r in snaps[0]["report"]]
    if n is None:
        # the size is a release of its own, and the directions' noise is
        # calibrated on it: their sensitivity is a released number
        assert mechanisms[0] == "discrete_laplace"
        for snap in snaps:
            gauss = [r for r in snap["report"] if r["mechanism"] == "gaussian"]
            assert gauss[0]["sensitivity"] > 0
            gauss[0]["sensitivity"] = "released size"
    else:
        assert "discrete_laplace" not in mechanisms
    assert neighbours.differences(*snaps) == []
    if n is not None:
        assert points == [n, n]
    else:  # the released size of each: near the rows kept, not equal
        assert all(abs(p - KEPT) < 100 for p in points)
