"""privacy_report and privacy_budget: the ledger of a plot (composition
rules of README.md and plotnine_private/report.py)."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from plotnine import (
    aes,
    after_stat,
    facet_wrap,
    geom_bar,
    geom_histogram,
    geom_point,
    geom_text,
    ggplot,
)

import plotnine_private as pp
from plotnine_private.exceptions import (
    BudgetExceededError,
    PlotninePrivateError,
)
from plotnine_private.report import privacy_budget, privacy_report

PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)


@pytest.fixture
def cars(mpg_cat) -> pd.DataFrame:
    d = pp.add_record_keys(mpg_cat, rng_seed=11)
    d["year"] = pd.Categorical(d["year"])
    return d


def bars(data, eps=1.0, seed=42, **kw):
    return geom_bar(stat="count_dp", eps=eps, seed=seed, **kw)


def labels(eps=1.0, seed=42):
    return geom_text(
        aes(label=after_stat("count")), stat="count_dp", eps=eps, seed=seed
    )


def rows(report, layer):
    t = report.table
    return t[t["layer"] == layer]


def test_two_dp_layers_compose_sequentially(cars):
    p = (
        ggplot(cars, aes("class"))
        + bars(cars, eps=1)
        + geom_point(
            aes(y=after_stat("count")), stat="count_dp", eps=0.5, seed=1
        )
    )
    r = privacy_report(p)
    assert r.total_eps == pytest.approx(1.5)
    assert r.total_delta == 0
    assert (
        list(r.table["composition"][:2]) == ["sequential (one histogram)"] * 2
    )
    total = r.table.iloc[-1]
    assert total["layer"] == "total" and total["charged_eps"] == 1.5
    assert r.budget is None and r.remaining_eps is None


def test_bar_and_text_with_same_parameters_count_once(cars):
    p = ggplot(cars, aes("class")) + bars(cars) + labels()
    r = privacy_report(p)
    assert r.total_eps == pytest.approx(1.0)
    text = rows(r, 1).iloc[0]
    assert text["composition"] == "duplicate of layer 0"
    assert text["charged_eps"] == 0
    assert any("counted once" in n for n in r.notes)


def test_a_different_seed_is_a_new_release(cars):
    p = ggplot(cars, aes("class")) + bars(cars) + labels(seed=43)
    assert privacy_report(p).total_eps == pytest.approx(2.0)


def test_facets_of_a_public_variable_compose_in_parallel(cars):
    p = ggplot(cars, aes("class")) + bars(cars, eps=0.7) + facet_wrap("year")
    r = privacy_report(p)
    assert r.total_eps == pytest.approx(0.7)  # one histogram, not 1.4
    row = rows(r, 0).iloc[0]
    assert row["composition"] == "sequential (parallel over declared facets)"
    assert row["panel"] == "public: declared facets (year)"
    assert row["cells"] == 2 * 8


def test_private_range_is_paid_out_of_the_layer_eps(cars):
    p = ggplot(cars, aes("displ")) + geom_histogram(
        stat="bin_dp", eps=1, seed=3, bins=10
    )
    r = privacy_report(p)
    layer = rows(r, 0)
    assert set(layer["mechanism"]) == {"discrete_laplace", "durfee_quantile"}
    rng = layer[layer["mechanism"] == "durfee_quantile"].iloc[0]
    assert rng["composition"] == "sequential (private range)"
    # range_share=0.2 of eps for the range, the rest for the counts
    assert rng["eps"] == pytest.approx(0.2)
    counts = layer[layer["mechanism"] == "discrete_laplace"].iloc[0]
    assert counts["eps"] == pytest.approx(0.8)
    assert r.total_eps == pytest.approx(1.0)
    assert any("Durfee" in n for n in r.notes)


def test_ckm_layer_has_no_eps(cars):
    p = ggplot(cars, aes("class", rkey="rkey")) + geom_bar(
        stat="count_ckm", ptable=PTAB
    )
    r = privacy_report(p)
    row = rows(r, 0).iloc[0]
    assert row["eps"] is None and row["mechanism"] == "ckm"
    assert row["composition"] == "no formal guarantee (CKM)"
    assert row["ptable_fingerprint"] == PTAB.fingerprint
    assert "D=5" in row["parameters"]
    assert r.total_eps == 0
    assert any("Cell Key Method" in n for n in r.notes)
    assert "no formal guarantee" in str(r)


def test_unprotected_layer_is_a_report_entry(cars):
    p = (
        ggplot(cars, aes("class"))
        + bars(cars)
        + geom_point(aes("displ", "hwy"), inherit_aes=False)
    )
    r = privacy_report(p)
    row = rows(r, 1).iloc[0]
    assert row["composition"] == "not protected"
    assert any("layer 1" in n and "not protected" in n for n in r.notes)
    assert r.total_eps == pytest.approx(1.0)


def test_thresholded_domain_costs_delta_and_is_noted(mpg):
    p = ggplot(mpg, aes("class")) + geom_bar(
        stat="count_dp", eps=1, delta=1e-5, seed=1
    )
    r = privacy_report(p)
    assert rows(r, 0).iloc[0]["domain"] == "thresholded"
    assert r.total_delta == pytest.approx(1e-5)
    assert any("threshold" in n for n in r.notes)


def test_report_prints_as_a_table(cars):
    p = ggplot(cars, aes("class")) + bars(cars) + privacy_budget(eps=2)
    r = privacy_report(p)
    text = repr(r)
    assert text.startswith("Privacy report") and "stat_count_dp" in text
    assert "remaining: eps=1" in text
    html = r._repr_html_()
    assert "<table" in html and "remaining" in html


# --------------------------------------------------------------------------
# budget
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "eps, delta",
    [(0, 0), (-1, 0), (float("inf"), 0), (True, 0), (1, 1), (1, -0.1)],
)
def test_budget_validates_its_parameters(eps, delta):
    with pytest.raises(PlotninePrivateError, match="privacy_budget"):
        privacy_budget(eps=eps, delta=delta)


def over_budget(cars):
    return (
        ggplot(cars, aes("class"))
        + bars(cars, eps=1)
        + privacy_budget(eps=1.2)
        # added after the budget: still counted
        + labels(eps=0.5, seed=7)
    )


def test_exceeding_the_budget_fails_draw_and_save(cars, tmp_path):
    p = over_budget(cars)
    with pytest.raises(BudgetExceededError, match=r"eps=1\.5.*eps=1\.2"):
        p.draw()
    target = tmp_path / "plot.png"
    with pytest.raises(BudgetExceededError, match="layer 1"):
        p.save(target, verbose=False)
    assert not target.exists()
    with pytest.raises(BudgetExceededError):
        p._repr_mimebundle_()  # notebook display


def test_report_of_a_plot_over_budget_says_by_how_much(cars):
    r = privacy_report(over_budget(cars))
    assert r.budget == (1.2, 0.0)
    assert r.exceeded and r.remaining_eps == pytest.approx(-0.3)
    assert any("exceeds the budget" in n for n in r.notes)


def test_within_budget_saves(cars, tmp_path):
    p = (
        ggplot(cars, aes("class"))
        + bars(cars, eps=1)
        + labels(eps=1)  # identical release: free
        + facet_wrap("year")
        + privacy_budget(eps=1)
    )
    buf = io.BytesIO()
    p.save(buf, format="png", verbose=False, dpi=20)
    assert buf.getvalue()[:4] == b"\x89PNG"
    r = privacy_report(p)
    assert r.remaining_eps == pytest.approx(0.0)
    assert not r.exceeded


def test_delta_counts_against_the_budget(mpg):
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_dp", eps=1, seed=1)
    with pytest.raises(BudgetExceededError, match="delta"):
        (p + privacy_budget(eps=5)).draw()
    buf = io.BytesIO()
    (p + privacy_budget(eps=5, delta=1e-6)).save(
        buf, format="png", verbose=False, dpi=20
    )


def test_a_later_budget_replaces_an_earlier_one_and_plot_is_kept(cars):
    p = ggplot(cars, aes("class")) + bars(cars)
    q = p + privacy_budget(eps=0.5) + privacy_budget(eps=3)
    assert len(p.layers) == 1  # the original plot is not modified
    assert privacy_report(q).budget == (3.0, 0.0)
    assert len(pp.layer_data(q, 0)) == len(pp.layer_data(p, 0))


def test_layers_added_after_the_budget_keep_their_index(cars):
    p = ggplot(cars, aes("class")) + bars(cars) + privacy_budget(eps=5)
    p = p + labels(eps=1)
    assert "label" in pp.layer_data(p, 1).columns
    assert list(privacy_report(p).table["layer"]) == [0, 1, "total"]


def test_without_a_seed_the_report_matches_the_figure_in_a_session(mpg):
    # no seed: the noise is keyed by a per-session OS-entropy secret, so
    # every build in this session shows the same numbers as the report
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_dp", eps=1)
    r = privacy_report(p)
    assert rows(r, 0).iloc[0]["cells"] == len(pp.layer_data(p))
    assert rows(r, 0).iloc[0]["seed_policy"] == (
        "session entropy (not reproducible)"
    )
