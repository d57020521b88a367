"""The private PCA on two neighbouring data sets (DESIGN rules 5, 8, 10).

D and D' differ in one record (replace-one adjacency: its features, its
group and its facet panel all change); both are released with one seed,
each in a fresh session (``_SOURCES`` cleared). Everything but the noisy
numbers must be equal, and no noise may be shared.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from alpha import ALPHA
from plotnine import aes, facet_wrap, ggplot
from scipy import stats

import plotnine_private as pp
import plotnine_private.mechanisms.pca.parts as parts
import plotnine_private.pca.fit as fit_module
from plotnine_private import dp_pca, layer_data, privacy_report
from plotnine_private._compat import build
from plotnine_private.mechanisms.samplers.discrete_gaussian import (
    discrete_gaussian_pmf,
)
from plotnine_private.mechanisms.session import current_session
from plotnine_private.report import report_from_built
from plotnine_private.stats.dp_pca_score import stat_dp_pca_score

DATA = Path(__file__).parent / "data" / "gau_g_500.csv.gz"
COLS = [f"V{i}" for i in range(1, 11)]
GROUPS = ["group3", "group1", "group5", "group2", "group4"]  # declared
PANELS = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def neighbours():
    raw = pd.read_csv(DATA)
    half = np.where(np.arange(len(raw)) < 250, "a", "b")
    d = raw.assign(
        group=pd.Categorical(raw["group"], categories=GROUPS),
        half=pd.Categorical(half, categories=PANELS),  # c, d empty
    )
    d2 = d.copy()
    # replace record 0: new features, another group, another panel
    d2.loc[0, COLS] = d.loc[0, COLS].to_numpy() * -2.0 + 3.0
    d2.loc[0, "group"] = (
        "group4" if d.loc[0, "group"] != "group4" else ("group1")
    )
    d2.loc[0, "half"] = "b"
    return d, d2


def _stat_plot(data, **kw):
    args = {"columns": COLS, "eps": 6, "delta": 1e-5, "seed": 11} | kw
    return (
        ggplot(data, aes(fill="group"))
        + stat_dp_pca_score(**args)
        + facet_wrap("half")
    )


def _fresh(make):
    """Build in a fresh session: no memory of earlier data objects."""
    current_session().sources.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = make()
    # SignalWarnings are computed from released values, like the numbers
    return out, sorted(
        str(w.message)
        for w in caught
        if not issubclass(w.category, pp.SignalWarning)
    )


def _data_and_report(p):
    """Layer 0's data and the privacy report of one build (what
    ``layer_data(p)`` and ``privacy_report(p)`` give, each of which is a
    build of its own)."""
    built = build(p)
    return built.layers[0].data, report_from_built(built)


def _spy_keys(monkeypatch):
    """Record the stream key each component's mechanism is called with."""
    keys: list[tuple[str, bytes]] = []
    for cls in (
        parts.KendallDirections,
        parts.ClippedScree,
        parts.DurfeeFrame,
        parts.DiscreteGaussianHistogram,
        parts.SparseHistogram,
    ):
        original = cls.perturb

        def spy(self, table, key, _name=cls.__name__, _original=original):
            keys.append((_name, key))
            return _original(self, table, key)

        monkeypatch.setattr(cls, "perturb", spy)
    return keys


# --- (a) no noise is shared between D and D' ------------------------------


def test_every_stream_key_includes_the_data(neighbours, monkeypatch):
    d, d2 = neighbours
    keys = _spy_keys(monkeypatch)
    runs = []
    for data in (d, d2, d):
        keys.clear()
        res, _ = _fresh(
            lambda data=data: dp_pca(
                data, COLS, eps=6, delta=1e-5, seed=11, group="group"
            )
        )
        runs.append((list(keys), res.sample_key))
    (on_d, sample_d), (on_d2, sample_d2), (again, sample_again) = runs
    assert [n for n, _ in on_d] == [
        "KendallDirections",
        "ClippedScree",  # the scree's version 2 (the default)
        "DurfeeFrame",
        "SparseHistogram",
    ]
    # same query (same identity), other data: every stream differs
    assert all(a != b for (_, a), (_, b) in zip(on_d, on_d2))
    assert sample_d != sample_d2
    # same data: the same streams (one release, reproducible)
    assert on_d == again
    assert sample_d == sample_again


def test_released_difference_is_not_the_true_difference(neighbours):
    d, d2 = neighbours
    eps, delta = 6.0, 1e-5
    noises = []
    for data in (d, d2):
        x = data[COLS].to_numpy(float)
        v = np.eye(len(COLS))  # public directions: the grid is comparable
        settings = fit_module.Settings(
            fn="t",
            eps=eps,
            delta=delta,
            shares={"loading": 0.0, "score": 1.0},
            bins=(6, 6),
            method="add",
            axes=(1, 2),
            center=False,
            seed=11,
            k=None,
            scale=None,
            scree_clip=None,
            calibration="analytic",
            estimator="auto",
            directions=v,
        )
        group = data["group"].cat.codes.to_numpy().astype(np.int64)
        part = fit_module.Partition(
            np.zeros(len(x), dtype=np.int64), group, group_levels=GROUPS
        )
        query = fit_module.pca_query(settings, COLS, "data")
        fit, _ = _fresh(lambda: fit_module.fit_pca(settings, x, part, query))
        true = fit_module.partition_counts(fit.scores, fit.grid, part)
        noises.append(fit.histogram.noisy - true)
    # the noise of no cell is shared, so D' - D released is not the true
    # difference: independent integer draws agree only by chance, with
    # probability sum_k pmf(k)^2 per cell (a binomial bound at ALPHA;
    # shared noise would agree in every cell)
    sigma = fit.histogram.sigma
    ks = np.arange(-int(40 * sigma) - 10, int(40 * sigma) + 11)
    p_equal = float((discrete_gaussian_pmf(ks, sigma**2) ** 2).sum())
    same = int(np.count_nonzero(noises[0] == noises[1]))
    cells = noises[0].size
    assert same <= stats.binom.isf(ALPHA, cells, p_equal), (same, cells)
    assert same < cells / 2


# --- (b) same data and seed: identical outputs -----------------------------


@pytest.mark.parametrize("output", ["histogram", "synthetic"])
def test_same_data_same_seed_same_figure(neighbours, output):
    d, _ = neighbours
    p = _stat_plot(d, output=output, method="add")
    # two builds, each in a fresh session, give the data and the report
    ((a, ra), wa), ((b, rb), wb) = (
        _fresh(lambda: _data_and_report(p)),
        _fresh(lambda: _data_and_report(p)),
    )
    pd.testing.assert_frame_equal(a, b)
    assert wa == wb
    pd.testing.assert_frame_equal(ra.table, rb.table)


# --- (c) everything but the noisy numbers is equal --------------------------

NOISY = {
    "xmin",
    "xmax",
    "ymin",
    "ymax",
    "x",
    "y",
    "PC1",
    "PC2",
    "count",
    "prob",
    "alpha",
    # interval variables: functions of the released counts
    "count_low",
    "count_high",
    "prob_low",
    "prob_high",
    # whether a tile is only noise: read from its released count
    "signal",
}


@pytest.mark.parametrize(
    ("method", "output"),
    [
        ("add", "histogram"),
        ("sparse", "histogram"),
        ("add", "synthetic"),
        ("sparse", "synthetic"),
    ],
)
def test_neighbours_differ_only_in_noisy_numbers(neighbours, method, output):
    d, d2 = neighbours
    kw = {"method": method, "output": output, "drop_zero": False}
    outs, reports, warns = [], [], []
    for data in (d, d2):
        p = _stat_plot(data, **kw)
        (out, rep), caught = _fresh(lambda p=p: _data_and_report(p))
        outs.append(out)
        reports.append(rep)
        warns.append(caught)
    a, b = outs
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b)  # tiles, or the public number of points
    if output == "histogram":
        # every declared panel and group, every cell, in one order
        assert len(a) == 4 * 5 * 400
        for col in sorted(set(a.columns) - NOISY):
            assert a[col].tolist() == b[col].tolist(), col
    else:
        assert len(a) == len(d)  # n points (public), split by released
        assert set(a["group"]) <= set(range(1, 6))
    ta, tb = reports[0].table, reports[1].table
    pd.testing.assert_frame_equal(ta, tb)  # eps, delta, thresholds, cells
    assert reports[0].total_eps == reports[1].total_eps == 6
    # how many marks are within noise is read from released values
    # (stats/marks.py), like the noisy numbers: the notes agree but that
    assert [
        re.sub(r"\d+ of (\d+) marks", r"# of \1 marks", n)
        for n in reports[0].notes
    ] == [
        re.sub(r"\d+ of (\d+) marks", r"# of \1 marks", n)
        for n in reports[1].notes
    ]
    assert warns[0] == warns[1]
    # but the noisy numbers did change
    noisy = "prob" if output == "histogram" else "x"
    assert not np.allclose(a[noisy], b[noisy])


def test_dp_pca_neighbours_differ_only_in_noisy_numbers(neighbours):
    d, d2 = neighbours
    res = [
        _fresh(
            lambda data=data: dp_pca(
                data, COLS, eps=6, delta=1e-5, seed=11, group="group"
            )
        )[0]
        for data in (d, d2)
    ]
    a, b = res
    assert a.groups == b.groups == GROUPS
    assert len(a.histogram) == len(b.histogram) == 5 * 400
    assert a.histogram["group"].tolist() == b.histogram["group"].tolist()
    pd.testing.assert_frame_equal(a.privacy, b.privacy)
    assert len(a.sample()) == len(b.sample()) == 500
    for ra, rb in zip(a.releases, b.releases):
        assert (ra.identity, ra.family, ra.eps, ra.delta, ra.cells) == (
            rb.identity,
            rb.family,
            rb.eps,
            rb.delta,
            rb.cells,
        )
        assert ra.details.get("threshold") == rb.details.get("threshold")


# --- (d) facets are charged once ------------------------------------------


def test_declared_facets_are_charged_once(neighbours):
    d, _ = neighbours
    p = _stat_plot(d, method="sparse")
    rep, _ = _fresh(lambda: privacy_report(p))
    t = rep.table[rep.table["layer"] != "total"]
    assert rep.total_eps == pytest.approx(6)
    assert rep.total_delta == pytest.approx(1e-5)
    assert list(t["mechanism"]) == [
        "gaussian",
        "durfee_quantile",
        "stability_histogram",
    ]
    hist = t.iloc[2]
    assert hist["composition"] == (
        "sequential (parallel over declared facets and groups)"
    )
    assert hist["panel"] == "public: declared facets (half)"
    assert hist["cells"] == 4 * 5 * 400
    # a second identical layer is the same release: charged once
    twice = p + stat_dp_pca_score(
        columns=COLS, eps=6, delta=1e-5, seed=11, output="synthetic"
    )
    rep2, _ = _fresh(lambda: privacy_report(twice))
    assert rep2.total_eps == pytest.approx(6)
    dup = rep2.table[rep2.table["layer"] == 1]
    assert (dup["composition"] == "duplicate of layer 0").all()


# --- (e) declared group order --------------------------------------------


def test_declared_group_order_is_kept(neighbours):
    d, _ = neighbours
    p = ggplot(d, aes(fill="group")) + stat_dp_pca_score(
        columns=COLS,
        eps=6,
        delta=1e-5,
        seed=11,
        method="add",
        drop_zero=False,
    )
    built, _ = _fresh(lambda: build(p))
    scale = built.scales.get_scales("fill")
    assert list(scale.final_limits) == GROUPS
    data = built.layers[0].data
    # group ids follow the declared levels, and so do the colours
    first = data.drop_duplicates("group").sort_values("group")
    assert first["group"].tolist() == [1, 2, 3, 4, 5]
    assert first["fill"].tolist() == list(scale.map(pd.Series(GROUPS)))
    r, _ = _fresh(
        lambda: dp_pca(d, COLS, eps=6, delta=1e-5, seed=11, group="group")
    )
    assert list(r.histogram["group"].cat.categories) == GROUPS
    assert list(r.sample()["group"].cat.categories) == GROUPS


def test_axes_are_titled_by_the_components(neighbours):
    d, _ = neighbours
    p = ggplot(d) + stat_dp_pca_score(
        columns=COLS, eps=6, delta=1e-5, seed=11, axes=(2, 3)
    )
    built, _ = _fresh(lambda: build(p))
    assert (built.labels.x, built.labels.y) == ("PC2", "PC3")
    r, _ = _fresh(lambda: dp_pca(d, COLS, eps=6, delta=1e-5, seed=11))
    assert r.axis_titles[0].startswith("PC1 (")
    assert "private" in r.axis_titles[0]


# --- (f) empty and one-record declared panels -------------------------------


@pytest.mark.parametrize("method", ["add", "sparse"])
@pytest.mark.parametrize("output", ["histogram", "synthetic"])
def test_empty_and_one_record_panels_build(neighbours, method, output):
    d, _ = neighbours
    one = np.where(np.arange(len(d)) == 7, "b", "a")  # b: one record
    data = d.assign(half=pd.Categorical(one, categories=PANELS))
    # 6 x 6 bins: what is checked does not depend on the grid, and the
    # draw below has 720 tiles instead of 8000 to make
    p = _stat_plot(
        data, method=method, output=output, drop_zero=False, bins=(6, 6)
    )
    out, _ = _fresh(lambda: layer_data(p))
    if output == "histogram":
        # every declared panel gets every cell of every group, with noise
        assert out.groupby("PANEL", observed=False).size().tolist() == (
            [5 * 36] * 4
        )
    else:
        assert len(out) == len(d)
    _fresh(lambda: p.draw())
