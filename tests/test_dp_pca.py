"""dp_pca / dp_score API and stat_dp_pca_score (dp-pca spec 1, 4-7)."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from alpha import ALPHA, t_bound
from keyfile import using_key
from plotnine import aes, facet_wrap, geom_rect, ggplot

from plotnine_private import layer_data
from plotnine_private._compat import build
from plotnine_private.exceptions import PlotninePrivateError, PrivacyWarning
from plotnine_private.mechanisms.release.engine import Release
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams.keys import secret_for
from plotnine_private.pca import DPPCAResult, dp_pca, dp_score
from plotnine_private.pca.display import sample_sizes
from plotnine_private.stats.dp_pca_score import stat_dp_pca_score

DATA = Path(__file__).parent / "data" / "gau_g_500.csv.gz"
COLS = [f"V{i}" for i in range(1, 21)]


@pytest.fixture(scope="module")
def gau():
    # every 10th row of dppca's gau_g (5 groups, 20 variables)
    return pd.read_csv(DATA)


@pytest.fixture(scope="module")
def gau_cat(gau):
    # the five groups declared as public levels, in a non-alphabetical
    # order
    levels = ["group3", "group1", "group5", "group2", "group4"]
    return gau.assign(group=pd.Categorical(gau["group"], categories=levels))


@pytest.fixture(scope="module")
def fit(gau):
    return dp_pca(gau, COLS, eps=5, delta=1e-4, seed=1, reference=True)


# --- budget (spec section 5) ---


def test_budget_table_thirds(fit):
    t = fit.privacy
    assert list(t.index) == ["loading", "scree", "frame", "histogram", "total"]
    third = 5 / 3
    assert t.loc["loading", "eps"] == pytest.approx(third)
    assert t.loc["scree", "eps"] == pytest.approx(third)
    assert t.loc["frame", "eps"] == pytest.approx(0.35 * third)  # 0.5833
    assert t.loc["histogram", "eps"] == pytest.approx(0.65 * third)
    assert t.loc["frame", "delta"] == 0
    assert t.loc["histogram", "delta"] == pytest.approx(1e-4 / 3)
    assert t.loc["total", "eps"] == pytest.approx(5)
    assert t.loc["total", "delta"] == pytest.approx(1e-4)


def test_releases_one_per_mechanism(fit):
    assert all(isinstance(r, Release) for r in fit.releases)
    what = [r.details["what"] for r in fit.releases]
    assert what == ["directions", "eigenvalues", "frame", "histogram"]
    assert [r.family for r in fit.releases] == [
        "pca:directions",
        "pca:scree",
        "pca:frame",
        "pca:histogram",
    ]
    # one identity per component: the query's, plus the component
    assert [r.identity for r in fit.releases] == [
        f"{fit.identity}:{c}"
        for c in ("directions", "scree", "frame", "histogram")
    ]
    assert sum(r.eps for r in fit.releases) == pytest.approx(5)
    assert sum(r.delta for r in fit.releases) == pytest.approx(1e-4)
    d = fit.releases[0]
    assert d.sensitivity == pytest.approx(2 * math.sqrt(2) / 500)
    assert {r.adjacency for r in fit.releases} == {"replace"}
    assert {r.policy for r in fit.releases} == {secret_for(1).policy}
    h = fit.releases[3]
    assert h.domain == "thresholded"
    assert h.cells == 400
    # the threshold is in counts and depends on eps and delta only
    eps_h, delta_h = 0.65 * 5 / 3, 1e-4 / 3
    assert h.details["threshold"] == pytest.approx(
        2 * math.log(2 / delta_h) / eps_h + 1
    )


def test_custom_shares(gau):
    r = dp_pca(
        gau,
        COLS,
        eps=2,
        delta=1e-3,
        seed=1,
        shares={"loading": 0.5, "scree": 0.25, "score": 0.25},
    )
    assert r.privacy.loc["histogram", "eps"] == pytest.approx(0.65 * 0.5)


# --- structure (spec section 7B) ---


def test_histogram_structure(fit):
    h = fit.histogram
    assert len(h) == 400
    assert list(h.columns[:4]) == ["xmin", "xmax", "ymin", "ymax"]
    assert (h["prob"] >= 0).all()
    assert h["prob"].sum() == pytest.approx(1)
    # y-outer order
    assert (h["ymin"].iloc[:20] == h["ymin"].iloc[0]).all()
    assert h["xmin"].iloc[1] > h["xmin"].iloc[0]
    # square frame 2 * 1.2 * R; display centred on the private centre
    (x0, x1), (y0, y1) = fit.limits
    assert x1 - x0 == pytest.approx(2.4 * fit.frame.radius)
    assert y1 - y0 == pytest.approx(x1 - x0)
    assert (x0 + x1) / 2 == pytest.approx(0, abs=1e-12)
    assert h["xmin"].min() == pytest.approx(x0)


def test_released_cells_are_the_histogram_cell_by_cell(gau, monkeypatch):
    """The display rows (made as whole columns) hold, row by row, each
    released cell of each shown group and panel, read here one cell at a
    time from the fit's grid and histogram: same values, same order."""
    from plotnine_private.pca.display import released_cells
    from plotnine_private.stats import dp_pca_score

    fits = []
    fit_pca = dp_pca_score.fit_pca

    def keep(*args, **kwargs):
        fits.append(fit_pca(*args, **kwargs))
        return fits[-1]

    monkeypatch.setattr(dp_pca_score, "fit_pca", keep)
    half = np.where(np.arange(len(gau)) < 250, "a", "b")
    g = gau.assign(half=pd.Categorical(half, categories=["a", "b"]))
    layer_data(
        ggplot(g, aes(colour="group"))
        + stat_dp_pca_score(columns=COLS, eps=4, delta=1e-5, seed=1)
        + facet_wrap("half")
    )
    (f,) = fits
    counts = f.histogram.counts
    assert counts.shape[:2] == (2, 5)
    groups = np.array([4, 0, 2])  # any shown subset, in any order
    got = released_cells(f, groups)
    prob = f.histogram.prob(axis=-1)
    (ox, oy), g = f.offset, f.grid
    rows = []
    for p in range(counts.shape[0]):
        for j in groups.tolist():
            for c in range(g.size):
                xmin, xmax = g.xmin[c] - ox, g.xmax[c] - ox
                ymin, ymax = g.ymin[c] - oy, g.ymax[c] - oy
                rows.append(
                    (xmin, xmax, ymin, ymax, (xmin + xmax) / 2)
                    + ((ymin + ymax) / 2, counts[p, j, c], prob[p, j, c])
                    + (p, j)
                )
    want = pd.DataFrame(rows, columns=list(got.columns))
    assert list(got.columns) == [
        *("xmin", "xmax", "ymin", "ymax", "x", "y", "count", "prob"),
        *("_panel", "_g"),
    ]
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_sparse_is_zero_where_empirical_is_zero(fit):
    emp = fit.reference["histogram_prob"]
    assert np.all(fit.histogram["prob"].to_numpy()[emp == 0] == 0)


def test_directions_and_eigenvalues(fit):
    v = fit.directions.to_numpy()
    # released on a grid of 2**-32 (the same bits on every machine)
    assert v.T @ v == pytest.approx(np.eye(20), abs=20 * 2.0**-32)
    assert list(fit.directions.index) == COLS
    ref = fit.reference
    cos = np.abs(np.sum(ref["directions"][:, :2] * v[:, :2], axis=0))
    # n = 500, eps_loading = 5/3, p = 20: PC1 is sharp, PC2 rougher
    assert cos[0] > 0.95
    assert cos[1] > 0.5
    ev = fit.eigenvalues.to_numpy()
    assert np.all(np.diff(ev) <= 0)
    assert fit.pve.sum() == pytest.approx(1)


@pytest.mark.slow
def test_top_eigenvalue_is_unbiased_on_average(gau, fit, tmp_path):
    # eps_scree = 5/3 at n = 500, p = 20: the top value's noise SD (about
    # 8.5) is a quarter of it, so one release says little. A t test of the
    # mean of 40 releases (fixed seeds) against the ordinary PCA's value,
    # at ALPHA: about +-7 (20%). The seeds' secrets come from a fixed key
    # file: without one, each seed is stretched by scrypt (some 50 ms of
    # the 130 ms a release takes here), which this test does not study
    key = tmp_path / "fixed.key"
    key.write_bytes(bytes(range(32)))
    key.chmod(0o600)
    with using_key(key):
        tops = np.array(
            [
                dp_pca(gau, COLS, eps=5, delta=1e-4, seed=s).eigenvalues.iloc[
                    0
                ]
                for s in range(40)
            ]
        )
    truth = fit.reference["eigenvalues"][0]
    bound = t_bound(tops.std(ddof=1), len(tops), ALPHA)
    assert abs(tops.mean() - truth) < bound
    # negative control: a mechanism biased by 30% would be caught
    assert abs(tops.mean() - 1.3 * truth) > bound


def test_reference_only_on_request(gau):
    r = dp_pca(gau, COLS, eps=5, delta=1e-4, seed=1)
    assert r.reference is None
    assert "not private" not in repr(r)


def test_reference_is_labelled_not_private(fit):
    assert fit.reference["label"] == "not private"
    assert "not private" in repr(fit)
    for kind in ("score", "synthetic", "biplot"):
        plot = fit.plot(kind)
        panels = [
            str(v)
            for lyr in plot.layers
            if isinstance(lyr._data, pd.DataFrame) and "panel" in lyr._data
            for v in lyr._data["panel"].unique()
        ]
        assert "Ordinary PCA (not private)" in panels


def test_small_sparse_release_can_be_empty(gau):
    # n = 500, eps_hist = 0.65: the KV threshold (~42 counts) removes all
    r = dp_pca(gau, COLS, eps=3, delta=1e-5, seed=7)
    assert r.empty
    assert (r.histogram["prob"] == 0).all()
    with pytest.warns(UserWarning, match="no positive probability"):
        assert len(r.sample()) == 0
    r.plot("score").draw()


def test_same_seed_same_release(gau):
    kw = {"eps": 30, "delta": 1e-5, "bins": 8}
    a = dp_pca(gau, COLS, seed=7, **kw)
    b = dp_pca(gau, COLS, seed=7, **kw)
    pd.testing.assert_frame_equal(a.histogram, b.histogram)
    assert not a.empty
    c = dp_pca(gau, COLS, seed=8, **kw)
    assert not a.histogram["prob"].equals(c.histogram["prob"])


def test_center_false_keeps_score_coordinates(gau):
    a = dp_pca(gau, COLS, eps=3, delta=1e-5, seed=7, center=False)
    assert a.limits == (a.frame.xlim, a.frame.ylim)
    assert a.offset == (0.0, 0.0)


def test_no_data_dependent_centring(gau):
    # shifting every row shifts the raw scores but not the directions
    # (the Kendall matrix is translation invariant). The shifted data are
    # other data, so they get other noise: compare at a large eps
    a = dp_pca(gau, COLS, eps=1e7, delta=1e-5, seed=3)
    with pytest.warns(PrivacyWarning, match="another data frame"):
        b = dp_pca(gau[COLS] + 5.0, COLS, eps=1e7, delta=1e-5, seed=3)
    assert a.directions.to_numpy()[:, :2] == pytest.approx(
        b.directions.to_numpy()[:, :2], abs=1e-4
    )


def test_add_method_and_large_eps_limit(gau):
    r = dp_pca(
        gau, COLS, eps=1e9, delta=1e-4, seed=1, method="add", reference=True
    )
    assert r.releases[3].mechanism == "discrete_gaussian"
    assert r.histogram["prob"].to_numpy() == pytest.approx(
        r.reference["histogram_prob"], abs=1e-3
    )


# --- groups ---


def test_groups_share_frame_and_partition(gau_cat):
    r = dp_pca(gau_cat, COLS, eps=5, delta=1e-4, seed=2, group="group")
    # declared levels: all of them, in their declared order
    assert r.groups == list(gau_cat["group"].cat.categories)
    assert len(r.histogram) == 5 * 400
    for g in r.groups:
        sub = r.histogram[r.histogram["group"] == g]
        assert sub["prob"].sum() == pytest.approx(1) or sub["prob"].sum() == 0
    hist_rel = [r for r in r.releases if r.details["what"] == "histogram"]
    # one histogram over all groups (they partition the rows)
    assert len(hist_rel) == 1
    assert hist_rel[0].composition == "parallel over groups"
    assert hist_rel[0].cells == 5 * 400
    assert r.privacy.loc["total", "eps"] == pytest.approx(5)
    assert r.columns == COLS  # group column excluded from features


def test_undeclared_groups_are_thresholded(gau):
    r = dp_pca(gau, COLS, eps=5, delta=1e-4, seed=2, group="group")
    # only groups with a cell over the threshold are shown
    assert set(r.groups) <= {f"group{i}" for i in range(1, 6)}
    assert r.groups == sorted(r.groups)
    sums = r.histogram.groupby("group", observed=True)["prob"].sum()
    assert sums.to_numpy() == pytest.approx(1)
    # how many groups exist is not public: the release counts the cells
    # shown, not the observed groups times the grid
    hist = r.releases[-1]
    assert hist.cells == int((r.histogram["count"] > 0).sum())
    with pytest.raises(PlotninePrivateError, match="not declared"):
        dp_pca(gau, COLS, eps=5, delta=1e-4, group="group", method="add")


def test_group_sample_sizes_from_released_totals(gau_cat):
    r = dp_pca(
        gau_cat,
        COLS,
        eps=5,
        delta=1e-4,
        seed=2,
        group="group",
        method="add",
    )
    s = r.sample(n=13)
    want = sample_sizes([r.group_totals[g] for g in r.groups], 13)
    got = s["group"].value_counts().reindex(r.groups).tolist()
    assert got == want.tolist()
    assert len(r.sample()) == 500  # n is public under replace-one


# --- sampling and plots ---


def test_sample_defaults(fit):
    s = fit.sample()
    assert list(s.columns) == ["PC1", "PC2"]
    assert len(s) == 500
    pd.testing.assert_frame_equal(s, fit.sample())
    c = fit.sample(n=50, method="center", adjust=0)
    # centre sampling without jitter lands on cell centres
    assert set(c["PC1"]).issubset(
        set(fit.histogram["x"].round(12)) | set(fit.histogram["x"])
    )


def test_all_plot_kinds_build(fit):
    for kind in ("score", "synthetic", "biplot", "scree"):
        fit.plot(kind).draw()
    with pytest.raises(PlotninePrivateError, match="kind"):
        fit.plot("pie")


def test_dp_score_without_and_with_directions(gau, fit):
    a = dp_score(gau, COLS, eps=2, delta=1e-5, seed=1)
    assert a.eigenvalues is None
    assert a.privacy.loc["loading", "eps"] == pytest.approx(1)
    b = dp_score(
        gau, COLS, eps=2, delta=1e-5, seed=1, directions=fit.directions
    )
    assert b.privacy.loc["loading", "eps"] == 0
    assert b.privacy.loc["histogram", "eps"] == pytest.approx(1.3)
    assert [r.details["what"] for r in b.releases] == ["frame", "histogram"]
    with pytest.raises(PlotninePrivateError, match="shares"):
        dp_score(
            gau,
            COLS,
            eps=2,
            delta=1e-5,
            directions=fit.directions,
            shares={"loading": 0.5, "score": 0.5},
        )
    with pytest.raises(PlotninePrivateError, match="scree"):
        a.plot("scree")


# --- validation ---


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"columns": ["V1"]}, "at least 2"),
        ({"columns": ["V1", "group"]}, "not numeric"),
        ({"columns": ["V1", "nope"]}, "not in the data"),
        ({"bins": 0}, "bins"),
        ({"bins": (10, 2.5)}, "bins"),
        ({"eps": 0}, "eps"),
        ({"eps": float("inf")}, "eps"),
        ({"delta": 1}, "delta"),
        ({"delta": 0}, "delta"),
        ({"axes": (1, 1)}, "different"),
        ({"axes": (1, 21)}, "axes"),
        ({"axes": (0, 2)}, "axes"),
        ({"shares": {"loading": 0.5, "scree": 0.5, "score": 0.5}}, "sum"),
        ({"shares": {"loading": 0.5, "score": 0.5}}, "keys"),
        ({"method": "laplace"}, "method"),
        ({"scale": [1.0, 2.0]}, "scale"),
        ({"seed": 1.5}, "seed"),
    ],
)
def test_bad_input(gau, kwargs, match):
    args = {"columns": COLS, "eps": 2, "delta": 1e-5} | kwargs
    with pytest.raises(PlotninePrivateError, match=match):
        dp_pca(gau, **args)


def test_nan_and_inf_are_replaced_by_zero_not_refused(gau):
    # an error naming the column would tell that some record has a
    # missing value; the documented rule replaces it by 0 instead
    zero = gau.copy()
    zero.loc[3, "V2"] = 0.0
    want = dp_pca(zero, COLS, eps=2, delta=1e-5, seed=4)
    for bad_value in (np.nan, np.inf, -np.inf):
        bad = gau.copy()
        bad.loc[3, "V2"] = bad_value
        got = dp_pca(bad, COLS, eps=2, delta=1e-5, seed=4)
        np.testing.assert_array_equal(got.directions, want.directions)


def test_constant_columns_and_duplicate_rows_work():
    rng = np.random.default_rng(0)
    x = pd.DataFrame(rng.normal(size=(200, 4)), columns=list("abcd"))
    x["const"] = 3.0
    x = pd.concat([x, x.iloc[:50]], ignore_index=True)  # duplicates
    r = dp_pca(x, eps=3, delta=1e-5, seed=1)
    assert isinstance(r, DPPCAResult)
    assert r.columns == ["a", "b", "c", "d", "const"]
    assert np.isfinite(r.eigenvalues).all()


def test_public_scale_is_applied():
    rng = np.random.default_rng(1)
    x = pd.DataFrame(
        rng.normal(size=(300, 2)) * [100.0, 1.0], columns=["big", "small"]
    )
    r = dp_pca(x, eps=20, delta=1e-5, seed=1, scale=[100.0, 1.0], k=2)
    # scaled, both columns have variance 1; a mean of 150 pair variances
    # lies in 0.53 .. 1.67 times it but with probability ALPHA (chi2(150)),
    # while unscaled the top value would be about 10^4
    assert 0.53 < r.eigenvalues.iloc[0] < 1.67


# --- the stat ---


def test_stat_draws_tiles_and_records_releases(gau):
    st = stat_dp_pca_score(columns=COLS, eps=4, delta=1e-5, seed=1)
    p = ggplot(gau) + st
    d = layer_data(p)
    assert {"xmin", "xmax", "ymin", "ymax", "prob"} <= set(d.columns)
    assert (d["prob"] > 0).all()  # zero cells omitted by default
    assert d["prob"].sum() == pytest.approx(1)
    # the same numbers as dp_score with the same seed and budget
    ref = dp_score(gau, COLS, eps=4, delta=1e-5, seed=1)
    want = ref.histogram[ref.histogram["prob"] > 0]
    assert np.sort(d["prob"].to_numpy()) == pytest.approx(
        np.sort(want["prob"].to_numpy())
    )
    built = p.draw()
    assert built is not None


def test_stat_releases_list(gau):
    from plotnine_private.door import layer_releases
    from plotnine_private.stats import dp_pca_score as mod

    p = ggplot(gau) + stat_dp_pca_score(
        columns=COLS, eps=4, delta=1e-5, seed=1
    )
    lyr = build(p).layers[0]
    assert isinstance(lyr.stat, mod.stat_dp_pca_score)
    releases = layer_releases(lyr)
    assert [r.details["what"] for r in releases] == [
        "directions",
        "frame",
        "histogram",
    ]
    assert all(r.family.startswith("pca:") for r in releases)


def test_stat_groups_by_fill(gau_cat):
    p = ggplot(gau_cat, aes(fill="group")) + stat_dp_pca_score(
        columns=COLS, eps=4, delta=1e-5, seed=1, method="add"
    )
    d = layer_data(p)
    assert d["group"].nunique() == 5
    for _, sub in d.groupby("group"):
        assert sub["prob"].sum() == pytest.approx(1)
        assert sub["fill"].nunique() == 1


def test_stat_synthetic_points(gau_cat):
    p = ggplot(gau_cat, aes(color="group")) + stat_dp_pca_score(
        columns=COLS,
        eps=4,
        delta=1e-5,
        seed=1,
        output="synthetic",
        n_sample=300,
        method="add",
    )
    d = layer_data(p)
    assert len(d) == 300
    assert {"x", "y", "color"} <= set(d.columns)
    assert type(p.layers[0].geom).__name__ == "geom_point"


def test_stat_facets_are_released_separately(gau):
    half = np.where(np.arange(len(gau)) < 250, "a", "b")
    g = gau.assign(half=pd.Categorical(half, categories=["a", "b"]))
    p = (
        ggplot(g)
        + stat_dp_pca_score(
            columns=COLS, eps=4, delta=1e-5, seed=1, method="add"
        )
        + facet_wrap("half")
    )
    d = layer_data(p)
    assert set(d["PANEL"].astype(int)) == {1, 2}
    # an undeclared facet variable would reveal which values occur
    g2 = gau.assign(half=half)
    with pytest.raises(PlotninePrivateError, match="no public set"):
        layer_data(
            ggplot(g2)
            + stat_dp_pca_score(columns=COLS, eps=4, delta=1e-5, seed=1)
            + facet_wrap("half")
        )


def test_stat_errors(gau):
    with pytest.raises(PlotninePrivateError, match="eps"):
        stat_dp_pca_score(columns=COLS, delta=1e-5)
    with pytest.raises(PlotninePrivateError, match="output"):
        stat_dp_pca_score(columns=COLS, eps=1, delta=1e-5, output="x")
    with pytest.raises(PlotninePrivateError, match="not in the layer"):
        layer_data(
            ggplot(gau)
            + stat_dp_pca_score(columns=["zz", "V1"], eps=1, delta=1e-5)
        )
    # a geom given the stat works too: the door hands it every column
    d = layer_data(
        ggplot(gau)
        + geom_rect(
            stat=stat_dp_pca_score(columns=COLS, eps=4, delta=1e-5, seed=1)
        )
    )
    assert d["prob"].sum() == pytest.approx(1)
    with pytest.raises(PlotninePrivateError, match="must not be mapped"):
        layer_data(
            ggplot(gau, aes(x="V1"))
            + stat_dp_pca_score(columns=COLS, eps=1, delta=1e-5)
        )
    with pytest.raises(PlotninePrivateError, match="continuous"):
        layer_data(
            ggplot(gau, aes(fill="V1"))
            + stat_dp_pca_score(columns=COLS, eps=1, delta=1e-5)
        )


def test_stat_reads_features_of_the_right_rows(gau):
    # facets reorder the evaluated rows; a duplicated index must not
    # mismatch features and panels
    half = np.where(np.arange(len(gau)) % 3 == 0, "a", "b")
    g = gau.assign(half=pd.Categorical(half, categories=["a", "b"]))
    dup = g.set_axis(np.repeat(np.arange(len(g) // 2), 2))

    def released(data):
        current_session().sources.clear()
        return layer_data(
            ggplot(data)
            + stat_dp_pca_score(
                columns=COLS,
                eps=4,
                delta=1e-5,
                seed=1,
                method="add",
                drop_zero=False,
            )
            + facet_wrap("half")
        )

    pd.testing.assert_frame_equal(released(g), released(dup))


def test_key_file_policy_reaches_every_release(gau, tmp_path, monkeypatch):
    from plotnine_private.mechanisms.streams import keys

    keys.use_key(keys.create_key(tmp_path / "pp.key"))
    r = dp_pca(gau, COLS, eps=5, delta=1e-4, seed=1)
    assert {x.policy for x in r.releases} == {"key"}
    assert {x.details["key_id"] for x in r.releases} == {keys.current_key_id()}
    keys.use_key(None)
    other = dp_pca(gau, COLS, eps=5, delta=1e-4, seed=1)
    # another secret: another identity and other noise
    assert other.identity != r.identity
    assert not other.histogram["prob"].equals(r.histogram["prob"])


def test_the_result_keeps_no_seed_not_even_pickled(gau):
    # without a key file the seed is the secret of every noise stream
    r = dp_pca(gau, COLS, eps=2, delta=1e-5, seed=918273)
    assert not hasattr(r, "seed")
    blob = pickle.dumps(r)
    assert b"918273" not in blob
    again = pickle.loads(blob)
    assert not hasattr(again, "seed")
    assert again.histogram.equals(r.histogram)
    assert "918273" not in repr(r)
