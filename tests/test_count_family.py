"""count_dp / count_ckm: drop-in bar charts (README privacy model)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from alpha import ALPHA, dlap_moments, variance_ratio_bounds
from keyfile import without_key
from plotnine import (
    aes,
    after_stat,
    facet_wrap,
    geom_bar,
    geom_text,
    ggplot,
    position_stack,
)
from plotnine._utils.registry import Registry
from plotnine.exceptions import PlotnineError
from plotnine.stats import stat_count
from warns import data_warnings

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private._compat import build
from plotnine_private.door import layer_releases
from plotnine_private.mechanisms.session import current_session

PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)


def test_names_are_registered_and_do_not_shadow_plotnine():
    assert Registry["stat_count_dp"] is pp.stat_count_dp
    assert Registry["stat_count_ckm"] is pp.stat_count_ckm
    assert Registry["stat_count"] is stat_count


def test_bar_and_text_layers_show_the_same_numbers(mpg_cat):
    p = (
        ggplot(mpg_cat, aes("class", fill="drv"))
        + geom_bar(stat="count_dp", eps=1, seed=42, drop=False)
        + geom_text(
            aes(label=after_stat("count")),
            stat="count_dp",
            eps=1,
            seed=42,
            drop=False,
            position=position_stack(vjust=0.5),
        )
        + facet_wrap("year")
    )
    built = build(p)  # both layers of one build
    bar, text = built.layers[0].data, built.layers[1].data
    assert list(bar["count"]) == list(text["count"])
    # every declared class x drv x panel cell is released, empty ones too
    assert len(bar) == 2 * 8 * 3


def test_undeclared_facets_are_refused_by_dp(mpg, mpg_cat):
    p = ggplot(mpg, aes("drv")) + geom_bar(stat="count_dp", eps=1)
    with pytest.raises(PlotninePrivateError, match="categories="):
        layer_data(p + facet_wrap("year"))
    # a declared level with no records must keep its (noised) panel
    d = mpg_cat.copy()
    d["year"] = pd.Categorical(d["year"], categories=[1999, 2008, 2020])
    p = ggplot(d, aes("drv")) + geom_bar(
        stat="count_dp", eps=1, seed=1, drop=False
    )
    # whatever drop says: the panels of a private layer are the declared
    # levels, never the observed ones
    for facet in (facet_wrap("year"), facet_wrap("year", drop=False)):
        out = layer_data(p + facet)
        assert set(out["PANEL"]) == {1, 2, 3} and len(out) == 9
    # CKM does not hide emptiness: it accepts observed facets, and the
    # report says the panels are unprotected
    k = pp.add_record_keys(mpg, rng_seed=1)
    r = pp.privacy_report(
        ggplot(k, aes("drv", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTAB)
        + facet_wrap("year")
    )
    assert any(
        "facet panels come from the observed values of year" in n
        for n in r.notes
    )


# two processes (different hash seeds), each releasing a seeded and an
# unseeded layer: this one and a child, one import serving both promises
_PROCESS_CODE = (
    "import plotnine_private as pp;"
    "from plotnine import ggplot, aes, geom_bar;"
    "from plotnine.data import mpg;"
    "levels = sorted(mpg['class'].unique());"
    "seeded = ggplot(mpg, aes('class')) + geom_bar(stat='count_dp', eps=1,"
    " seed=7, levels=levels);"
    "unseeded = ggplot(mpg, aes('class')) + geom_bar(stat='count_dp',"
    " eps=0.1, levels=levels);"
    "print(list(pp.layer_data(seeded)['count']));"
    "print(list(pp.layer_data(unseeded)['noisy_count']))"
)


@pytest.fixture(scope="module")
def two_processes() -> list[list[str]]:
    # the child's hash seed differs from this process's, whatever it is
    mine = os.environ.get("PYTHONHASHSEED")
    child = subprocess.run(
        [sys.executable, "-c", _PROCESS_CODE],
        capture_output=True,
        text=True,
        env={"PYTHONHASHSEED": "999" if mine != "999" else "123"},
        check=True,
    ).stdout
    here = io.StringIO()
    with (
        without_key(),
        contextlib.redirect_stdout(here),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        exec(_PROCESS_CODE, {})
    outs = []
    for out in (child, here.getvalue()):
        lines = out.strip().splitlines()
        assert len(lines) == 2 and all(x.startswith("[") for x in lines)
        outs.append(lines)
    return outs


def test_same_seed_same_numbers_across_processes(two_processes):
    (seeded1, _), (seeded2, _) = two_processes
    assert seeded1 == seeded2


def test_no_seed_differs_between_processes(two_processes):
    (_, unseeded1), (_, unseeded2) = two_processes
    assert unseeded1 != unseeded2


def test_declared_levels_get_noise_even_when_empty(mpg_cat):
    p = ggplot(mpg_cat, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=3, drop=False
    )
    d = layer_data(p)
    assert len(d) == 8  # 7 observed classes + the empty 'zzz'
    assert d["noisy_count"].notna().all()
    assert (d["count"] >= 0).all()
    assert np.array_equal(d["count"], np.clip(d["noisy_count"], 0, None))


def test_levels_parameter_makes_a_public_domain(mpg):
    levels = [*sorted(mpg["class"].unique()), "van"]
    p = ggplot(mpg, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=3, levels=levels, drop=False
    )
    d = layer_data(p)
    assert len(d) == len(levels)
    assert set(np.asarray(d["x"], dtype=int)) == set(range(1, 9))


def test_undeclared_domain_is_thresholded_and_axis_shows_released(mpg):
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_dp", eps=1, seed=42)
    q = pp._compat.build(p)
    d = q.layers[0].data
    tau = layer_releases(q.layers[0])[0].details["threshold"]
    assert (d["count"] >= tau).all()
    # 2seater (5 records) cannot clear tau = 31: it is neither drawn nor
    # named on the axis
    labels = q.layout.panel_scales_x[0].final_limits
    assert "2seater" not in labels
    assert len(labels) == len(d)


def test_one_unique_category_only_changes_the_output_through_noise(mpg):
    # the thresholded release of a one-record category: shown with
    # probability <= delta; over seeds it never appears, and the cells
    # shown are redrawn (not shifted by the record: no exact differencing)
    extra = pd.concat(
        [mpg, mpg.iloc[[0]].assign(**{"class": "unique-car"})],
        ignore_index=True,
    )
    # shared noise would change no cell (0 of the seeds); redrawn noise at
    # eps 1 leaves all seven classes equal with probability about 1e-4
    # per seed (two DLap draws agree with p = 0.28), so 12 seeds tell the
    # two apart as well as 40 did
    changed = 0
    for seed in range(12):
        a = pp.dp_table(mpg, "class", eps=1, seed=seed)
        b = pp.dp_table(extra, "class", eps=1, seed=seed)
        assert "unique-car" not in set(b["class"])
        merged = a.merge(b, on="class", suffixes=("_a", "_b"))
        changed += int((merged["count_a"] != merged["count_b"]).any())
    assert changed >= 10


def test_prop_is_recomputed_from_released_counts(mpg_cat):
    p = ggplot(mpg_cat, aes("class", fill="drv")) + geom_bar(
        stat="count_dp", eps=1, seed=1
    )
    d = layer_data(p)
    sums = d.groupby("group")["prop"].sum()
    assert np.allclose(sums[sums > 0], 1.0)
    assert np.allclose(d["xmax"] - d["xmin"], 0.9)


def test_geom_col_style_after_stat_works(mpg_cat):
    p = ggplot(mpg_cat, aes("class")) + geom_bar(
        aes(y=after_stat("prop"), group=1), stat="count_dp", eps=1, seed=1
    )
    d = layer_data(p)
    assert np.isclose(d["y"].sum(), 1.0)


def test_dp_table_equals_the_plot(mpg_cat):
    p = (
        ggplot(mpg_cat, aes("class", fill="drv"))
        + geom_bar(stat="count_dp", eps=1, seed=42, drop=False)
        + facet_wrap("year")
    )
    built = build(p)
    d = built.layers[0].data
    t = pp.dp_table(
        mpg_cat, "class", groups="drv", facets="year", eps=1, seed=42
    )
    assert sorted(t["count"]) == sorted(d["count"])
    first = t[(t["year"] == 1999) & (t["drv"] == "f")]
    # the bars of drv "f" by their fill (plotnine numbers the groups in
    # an order of its version, tested by the parity suite)
    fill_f = built.scales.get_scales("fill").map(pd.Series(["f"]))[0]
    drv_f = d["fill"] == fill_f
    panel1 = d[(d["PANEL"] == 1) & drv_f].sort_values("x")
    assert list(first["count"]) == list(panel1["count"])


def test_count_ckm_matches_hand_lookup(mpg):
    d = pp.add_record_keys(mpg, rng_seed=11)
    p = ggplot(d, aes("class", rkey="rkey")) + geom_bar(
        stat="count_ckm", ptable=PTAB
    )
    out = layer_data(p)
    tab = PTAB.table
    for lab, count in zip(sorted(d["class"].unique()), out["count"]):
        rows = d[d["class"] == lab]
        n = len(rows)
        ck = np.round(rows["rkey"] * 1e8).astype(np.int64).sum() % 10**8
        ck = ck / 1e8
        i = min(n, PTAB.max_i)
        row = tab[
            (tab["i"] == i) & (tab["p_int_lb"] <= ck) & (ck < tab["p_int_ub"])
        ]
        assert count == n + int(row["v"].iloc[0])


def test_ckm_same_records_same_noise_across_plots_and_tables(mpg):
    d = pp.add_record_keys(mpg, rng_seed=5)
    d["drv"] = pd.Categorical(d["drv"])
    bars = layer_data(
        ggplot(d, aes("drv", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTAB)
    )
    table = pp.ckm_table(d, "drv", rkey="rkey", ptable=PTAB)
    assert list(bars["count"]) == list(table["count"])
    # a faceted chart contains the cells (drv, year): its per-panel cells
    # are different records, so we compare with the table of those cells
    faceted = layer_data(
        ggplot(d, aes("drv", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTAB)
        + facet_wrap("year")
    )
    table2 = pp.ckm_table(d, "drv", rkey="rkey", ptable=PTAB, facets="year")
    assert sorted(faceted["count"]) == sorted(table2["count"])


def test_ckm_zero_cells_stay_zero(mpg_cat):
    d = pp.add_record_keys(mpg_cat, rng_seed=5)
    out = layer_data(
        ggplot(d, aes("class", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTAB, drop=False)
    )
    assert len(out) == 8
    assert out["count"].iloc[-1] == 0  # 'zzz'


def test_ckm_weighted_counts_scale_by_mean_weight(mpg):
    d = pp.add_record_keys(mpg, rng_seed=5)
    d["w"] = 2.0
    plain = layer_data(
        ggplot(d, aes("drv", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTAB)
    )
    weighted = layer_data(
        ggplot(d, aes("drv", rkey="rkey", weight="w"))
        + geom_bar(stat="count_ckm", ptable=PTAB)
    )
    assert list(weighted["count"]) == list(2 * plain["count"])


def test_ckm_threshold_suppresses_small_cells(mpg):
    d = pp.add_record_keys(mpg, rng_seed=5)
    out = layer_data(
        ggplot(d, aes("class", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTAB, threshold=10)
    )
    assert (out["count"] >= 10).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eps": 0}, "eps must be a finite number > 0"),
        ({"eps": -1}, "eps must be a finite number > 0"),
        ({"eps": "1"}, "eps must be a number"),
        ({"eps": 1, "delta": 0}, "delta must lie in"),
        ({"eps": 1, "delta": 1.5}, "delta must lie in"),
        ({"eps": 1, "seed": 1.5}, "seed must be an int"),
        ({"eps": 1, "seed": np.random.default_rng(1)}, "seed must be an int"),
        ({"eps": 1, "adjacency": "bounded"}, "adjacency must be one of"),
        ({"eps": 1, "noise": "gauss"}, "noise must be one of"),
        ({"eps": 1, "levels": "abc"}, "levels must be a list"),
        ({"eps": 1, "levels": ["a", "a"]}, "without duplicates"),
        ({"eps": 1, "width": -1}, "width must be > 0"),
    ],
)
def test_bad_dp_parameters_fail_at_construction(kwargs, match):
    with pytest.raises(PlotninePrivateError, match=match):
        ggplot() + geom_bar(stat="count_dp", **kwargs)


def test_a_missing_eps_fails_when_built_on_data(mpg):
    """No eps is a figure drawn from a synopsis (post-processing of its
    release); on data, the build asks for eps before any release."""
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_dp")
    with pytest.raises(PlotninePrivateError, match="eps is required"):
        layer_data(p)


def test_unknown_parameter_is_refused():
    with pytest.raises(PlotnineError, match="epsilon"):
        ggplot() + geom_bar(stat="count_dp", eps=1, epsilon=1)


def test_missing_ptable_and_rkey_are_explained(mpg):
    # made without a ptable (a figure drawn from a CKM synopsis takes
    # the synopsis's); on data, the build asks for it before any release
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_ckm")
    with pytest.raises(PlotninePrivateError, match="ptable is required"):
        layer_data(p)
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_ckm", ptable=PTAB)
    with pytest.raises(PlotninePrivateError, match="aes\\(rkey="):
        layer_data(p)


def test_bad_record_keys_are_refused(mpg):
    d = mpg.assign(rkey=1.5)
    p = ggplot(d, aes("class", rkey="rkey")) + geom_bar(
        stat="count_ckm", ptable=PTAB
    )
    with pytest.raises(PlotninePrivateError, match="rkey"):
        layer_data(p)


def test_weights_are_refused_by_dp(mpg):
    p = ggplot(mpg, aes("class", weight="displ")) + geom_bar(
        stat="count_dp", eps=1
    )
    with pytest.raises(PlotninePrivateError, match="weight"):
        layer_data(p)


def test_y_aesthetic_is_refused(mpg):
    p = ggplot(mpg, aes("class", "hwy")) + geom_bar(stat="count_dp", eps=1)
    with pytest.raises(PlotninePrivateError, match="y aesthetic"):
        layer_data(p)


def test_missing_x_is_dropped_silently_and_never_drawn(mpg):
    # a warning would reveal that some record is missing (or outside the
    # scale limits: plotnine censors those to NaN before the stat), so no
    # warning of any kind may come out; the records are not counted
    import warnings

    d = mpg.copy()
    d["cls"] = d["class"].astype(object)
    d.loc[:4, "cls"] = None
    d["cls"] = pd.Categorical(d["cls"])
    current_session().sources.clear()  # no seed reuse from other tests
    plot = ggplot(d, aes("cls")) + geom_bar(
        stat="count_dp", eps=1e9, seed=1
    )  # made apart: eps > 10 warns there, about the parameter
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        q = pp._compat.build(plot)
    assert [str(w.message) for w in data_warnings(ws)] == []
    assert len(q.layers[0].data) == 7
    assert "nan" not in map(str, q.layout.panel_scales_x[0].final_limits)
    assert q.layers[0].data["count"].sum() == len(d) - 5


def test_empty_data_with_a_public_domain_releases_noise():
    # an empty subset must look like any other data: every declared level
    # gets noise, so the figure does not prove that the filter matched
    d = pd.DataFrame({"x": pd.Categorical([], categories=["a", "b"])})
    p = ggplot(d, aes("x")) + geom_bar(
        stat="count_dp", eps=1, seed=2, drop=False
    )
    out = layer_data(p)
    assert list(out["x"]) == [1.0, 2.0]  # positions of "a" and "b"
    assert np.all(np.isfinite(out["noisy_count"]))


def test_continuous_noise_option_replicates_dpppack(mpg_cat):
    p = ggplot(mpg_cat, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=2, noise="laplace"
    )
    d = layer_data(p)
    assert np.array_equal(d["noisy_count"], np.round(d["noisy_count"]))


@pytest.mark.parametrize(
    ("adjacency", "sens"), [("replace", 2), ("add_remove", 1)]
)
def test_noise_variance_per_cell_follows_adjacency(adjacency, sens):
    # 20000 empty declared levels: the released noisy counts are pure noise
    levels = [f"l{i}" for i in range(20000)]
    d = pd.DataFrame({"x": pd.Categorical(["l0"], categories=levels)})
    p = ggplot(d, aes("x")) + geom_bar(
        stat="count_dp",
        eps=1,
        seed=9,
        adjacency=adjacency,
        drop=False,
        position="identity",  # plotnine's stacking loops per bar: slow
    )
    noise = layer_data(p)["noisy_count"].to_numpy()[1:]
    # DLap(sens / eps): variance 7.84 for s = 2, 1.84 for s = 1; the
    # sample variance of 19,999 cells is within these bounds but with
    # probability ALPHA (normal approximation with the exact kurtosis)
    expected, kurtosis = dlap_moments(sens / 1.0)
    assert expected == pytest.approx(
        pp.mechanisms.samplers.laplace.dlap_variance(sens / 1.0)
    )
    lo, hi = variance_ratio_bounds(len(noise), kurtosis, ALPHA)
    assert lo < noise.var() / expected < hi
    # negative control: the same bounds reject a 10% wrong scale, in
    # either direction
    for wrong in (0.9 * sens, 1.1 * sens):
        ratio = noise.var() / dlap_moments(wrong)[0]
        assert not lo < ratio < hi


def test_different_data_get_independent_noise_in_every_cell(mpg_cat):
    # a release on the data and one on the data minus one record must not
    # share noise: comparing them cell by cell would reveal the record
    levels = [f"l{i}" for i in range(3000)]
    d = pd.DataFrame(
        {"x": pd.Categorical(np.repeat(levels, 5), categories=levels)}
    )
    a = pp.dp_table(d, "x", eps=1, seed=4)["count"].to_numpy()
    again = pp.dp_table(d, "x", eps=1, seed=4)["count"].to_numpy()
    assert np.array_equal(a, again)  # same data: the same release
    b = pp.dp_table(d.iloc[1:], "x", eps=1, seed=4)["count"].to_numpy()
    noise_a, noise_b = a - 5, b - np.r_[4, np.full(2999, 5)]
    assert abs(np.corrcoef(noise_a, noise_b)[0, 1]) < 0.1
    # equal noise only by chance (sum of pmf^2 = 0.13 for DLap(2))
    assert np.mean(noise_a == noise_b) < 0.2


def test_nan_record_key_is_refused(mpg):
    d = pp.add_record_keys(mpg, rng_seed=5)
    d.loc[0, "rkey"] = np.nan
    p = ggplot(d, aes("drv", rkey="rkey")) + geom_bar(
        stat="count_ckm", ptable=PTAB
    )
    with pytest.raises(PlotninePrivateError, match="rkey"):
        layer_data(p)


def test_stats_work_as_layers_on_their_own(mpg_cat):
    p = ggplot(mpg_cat, aes("class")) + pp.stat_count_dp(
        eps=1, seed=1, drop=False
    )
    d = layer_data(p)
    assert len(d) == 8 and {"ymin", "ymax"} <= set(d.columns)  # bars
    k = pp.add_record_keys(mpg_cat, rng_seed=1)
    q = ggplot(k, aes("hwy", rkey="rkey")) + pp.stat_bin_ckm(
        breaks=[10, 20, 30, 50], ptable=PTAB
    )
    assert len(layer_data(q)) == 3


def test_numeric_levels_give_the_same_noise_in_plot_and_table(mpg):
    levels = [4, 5, 6, 8]
    table = pp.dp_table(mpg, "cyl", levels=levels, eps=1, seed=1)
    bars = layer_data(
        ggplot(mpg, aes("cyl"))
        + geom_bar(stat="count_dp", levels=levels, eps=1, seed=1)
    )
    assert list(table["cyl"]) == levels
    assert list(table["count"]) == list(bars["count"])


def test_nothing_released_means_an_empty_axis():
    d = pd.DataFrame({"x": ["alice_hiv+", "bob_hiv-", "carol_hiv+"]})
    q = pp._compat.build(
        ggplot(d, aes("x")) + geom_bar(stat="count_dp", eps=1, seed=1)
    )
    assert len(q.layers[0].data) == 0
    assert list(q.layout.panel_scales_x[0].final_limits) == []


def test_factor_in_a_mapping_is_not_a_declared_domain(mpg):
    # factor(cyl) takes its levels from the data: thresholded, not public
    q = pp._compat.build(
        ggplot(mpg, aes("factor(cyl)"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
    )
    assert layer_releases(q.layers[0])[0].domain == "thresholded"
    assert "5" not in map(str, q.layout.panel_scales_x[0].final_limits)


def test_free_discrete_scales_show_released_levels_only(mpg_cat):
    # each panel's axis is trained on released cells: it lists the levels
    # released in that panel, never one that was seen but not released
    d = mpg_cat.assign(cls=mpg_cat["class"].astype(str))
    p = ggplot(d, aes("cls")) + geom_bar(stat="count_dp", eps=1, seed=1)
    q = pp._compat.build(p + facet_wrap("year", scales="free_x"))
    data = q.layers[0].data
    for i, sc in enumerate(q.layout.panel_scales_x):
        released = data.loc[data["PANEL"] == i + 1, "x"]
        assert len(sc.final_limits) == len(released)


def test_releases_with_different_delta_are_not_merged(mpg):
    from plotnine import geom_count

    p = (
        ggplot(mpg, aes("cty", "hwy"))
        + geom_count(stat="sum_dp", eps=1, seed=1, delta=1e-9)
        + geom_count(stat="sum_dp", eps=1, seed=1, delta=0.2)
    )
    assert pp.privacy_report(p).total_delta == pytest.approx(0.2 + 1e-9)


def test_two_queries_on_an_undeclared_domain_are_two_releases(mpg):
    # another eps is another query: its own threshold and its own levels;
    # the axis shows what either released (both are releases)
    p = (
        ggplot(mpg, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
        + geom_text(
            aes(label=after_stat("count")), stat="count_dp", eps=0.5, seed=1
        )
    )
    q = pp._compat.build(p)
    first, second = (layer_releases(lyr)[0] for lyr in q.layers)
    assert first.domain == second.domain == "thresholded"
    assert first.identity != second.identity
    assert len(q.layers[1].data) == second.cells
    shown = set(q.layout.panel_scales_x[0].final_limits)
    assert len(shown) <= first.cells + second.cells
