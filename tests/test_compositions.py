"""Several figures at once (``a | b``, ``a / b``, lists) and mixed
protections (the same cells by DP and by CKM)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from plotnine import aes, after_stat, geom_bar, geom_text, ggplot

import plotnine_private as pp

PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)

# bundles of seeded plots need a key file (a seed alone is a guessable secret)
pytestmark = pytest.mark.usefixtures("key_file")


@pytest.fixture
def cars(mpg_cat) -> pd.DataFrame:
    return pp.add_record_keys(mpg_cat, rng_seed=11)


def dp(data, x="class", eps=1.0, seed=1):
    return ggplot(data, aes(x)) + geom_bar(stat="count_dp", eps=eps, seed=seed)


def labelled(data, eps=1.0, seed=1):
    return dp(data, eps=eps, seed=seed) + geom_text(
        aes(label=after_stat("count")), stat="count_dp", eps=eps, seed=seed
    )


def ckm(data, x="class"):
    return ggplot(data, aes(x, rkey="rkey")) + geom_bar(
        stat="count_ckm", ptable=PTAB
    )


# --------------------------------------------------------------------------
# compositions and lists
# --------------------------------------------------------------------------
def test_report_of_lists_and_compositions_sums_distinct_releases(cars):
    a, b = dp(cars, seed=1), dp(cars, "drv", eps=0.5, seed=2)
    for several in ([a, b], a | b, a / b, (a,) + (b,), [[a], a | b]):
        r = pp.privacy_report(several)
        assert r.total_eps == pytest.approx(1.5)
        assert r.headline == "DP total eps=1.5, delta=0"
    r = pp.privacy_report([a, b])
    layers = r.table["layer"].tolist()
    assert layers == ["0 of plot 1", "0 of plot 2", "total"]
    assert any("2 plots composed" in n for n in r.notes)
    # a release shared by plots (same source, query and seed) once
    r = pp.privacy_report((labelled(cars) | a) / b)
    assert r.total_eps == pytest.approx(1.5)
    comp = r.table.set_index("layer")["composition"]
    assert comp["1 of plot 1"] == "duplicate of layer 0 of plot 1"
    assert comp["0 of plot 2"] == "duplicate of layer 0 of plot 1"
    # a single plot keeps its integer layers
    assert pp.privacy_report(a).table["layer"].tolist() == [0, "total"]


def test_composition_budget_is_checked_before_drawing(cars, tmp_path):
    a, b = dp(cars, seed=1), dp(cars, "drv", seed=2)
    capped = (a | b) + pp.privacy_budget(eps=1)
    out = tmp_path / "fig.png"
    with pytest.raises(pp.BudgetExceededError, match="eps=2"):
        capped.save(out)
    assert not out.exists()
    with pytest.raises(pp.BudgetExceededError):
        pp.save_release(capped, tmp_path / "bundle")
    assert not (tmp_path / "bundle").exists()
    r = pp.privacy_report(capped)
    assert r.budget == (1.0, 0.0) and r.exceeded
    # nested: the inner composition's budget binds inside a larger one
    with pytest.raises(pp.BudgetExceededError):
        (capped / dp(cars, "year", seed=3)).draw()
    # a budget that fits: drawn and saved
    ok = (a | b) + pp.privacy_budget(eps=2)
    ok.save(out, verbose=False, dpi=20)
    assert out.exists()
    # the budget is not put on the last plot (plotnine's default for +)
    assert not any(hasattr(lyr, "budget_eps") for lyr in ok[-1].layers)


def test_budget_check_of_a_list(cars):
    figs = [dp(cars, seed=1), labelled(cars, seed=1), dp(cars, "drv", seed=2)]
    pp.privacy_budget(eps=2).check(figs)  # the labels are free
    with pytest.raises(pp.BudgetExceededError, match="layer 0 of plot 3"):
        pp.privacy_budget(eps=1.5).check(figs)


def test_save_release_of_a_composition(cars, tmp_path):
    a, b = labelled(cars, seed=1), dp(cars, "drv", eps=0.5, seed=2)
    folder = pp.save_release(a | b, tmp_path / "c", dpi=20)
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "checksums.sha256",
        "config.json",
        "figure.png",
        "plot_1_layer_0_stat_count_dp.csv",
        "plot_1_layer_1_stat_count_dp.csv",
        "plot_2_layer_0_stat_count_dp.csv",
        "results.json",
    ]
    meta = json.loads((folder / "results.json").read_text())
    assert sorted(meta["results"]) == [
        "output_1_0",
        "output_1_1",
        "output_2_0",
    ]
    assert meta["results"]["output_2_0"]["properties"]["plot"] == 2
    report = meta["plotnine_private"]["privacy_report"]
    assert report["total_eps"] == pytest.approx(1.5)
    assert meta["plotnine_private"]["ledger"] is None  # no ledger in use
    # a list: one figure per plot
    folder = pp.save_release([a, b], tmp_path / "l", dpi=20)
    assert (folder / "figure_1.png").exists()
    assert (folder / "figure_2.png").exists()
    assert not (folder / "figure.png").exists()
    outputs = json.loads((folder / "results.json").read_text())["results"]
    assert outputs["output_2_0"]["files"][-1]["name"] == "figure_2.png"


def test_save_release_copies_the_ledger_rows(cars, tmp_path, ledger_key):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="cars", cap_eps=5)
    a, b = labelled(cars, seed=1), dp(cars, "drv", eps=0.5, seed=2)
    dp(cars, "year", seed=9).draw()  # another release, not in the bundle
    folder = pp.save_release(a | b, tmp_path / "c", dpi=20)
    meta = json.loads((folder / "results.json").read_text())
    led = meta["plotnine_private"]["ledger"]
    assert led["file"] == "l.sqlite" and led["dataset"] == "cars"
    assert [r["eps"] for r in led["rows"]] == [1.0, 0.5]
    assert led["data_set_total"]["eps"] == pytest.approx(2.5)
    assert led["data_set_total"]["cap_eps"] == 5
    ids = set(pp.ledger(path).table["identity"])
    assert {r["identity"] for r in led["rows"]} < ids


def test_noise_interval_of_a_composition(cars):
    a, b = dp(cars, seed=1), dp(cars, "drv", eps=0.5, seed=2)
    ni = pp.noise_interval(a | b)
    assert ni["layer"].tolist() == ["0 of plot 1", "0 of plot 2"]
    assert ni["eps"].tolist() == [1.0, 0.5]
    first, *marks = ni.caption().split("\n")
    assert first == (
        "noise: ±6 (95%) for count_dp eps=1; ±12 (95%) for count_dp eps=0.5"
    )
    # the key file is new in each test, so how many marks are noise varies
    assert all(
        re.fullmatch(
            r"count_dp: \d+ of (8|3) marks (is|are) within noise "
            r"\(drawn faded\)",
            m,
        )
        for m in marks
    )
    assert pp.noise_interval([a, b]).equals(ni)


def test_noise_interval_charges_nothing(cars, tmp_path, ledger_key):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="cars", cap_eps=1)
    a, b = dp(cars, seed=1), dp(cars, "drv", seed=2)
    pp.noise_interval(a | b)  # public parameters only: free
    assert pp.ledger(path).table.empty
    with pytest.raises(pp.BudgetExceededError):
        pp.privacy_report(a | b)  # the report shows released values


@pytest.mark.parametrize("bad", [42, "plot", [], [1]])
def test_errors_name_the_type(bad, tmp_path):
    for fn in (pp.privacy_report, pp.noise_interval):
        with pytest.raises(pp.PlotninePrivateError, match=fn.__name__):
            fn(bad)
    with pytest.raises(pp.PlotninePrivateError, match="save_release"):
        pp.save_release(bad, tmp_path / "x")
    assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------
# mixed protections
# --------------------------------------------------------------------------
def test_dp_and_ckm_on_the_same_cells_say_no_dp_guarantee(cars, tmp_path):
    mixed = dp(cars) + geom_bar(
        aes(rkey="rkey"), stat="count_ckm", ptable=PTAB, alpha=0.3
    )
    r = pp.privacy_report(mixed)
    assert r.mixed == ["layer 0 (DP) and layer 1 (CKM)"]
    assert r.headline.startswith("NO DP GUARANTEE for cells also released")
    assert not r.headline.startswith("DP total")
    assert r.notes[0].startswith("MIXED PROTECTION: layer 0")
    assert "NO DP GUARANTEE" in str(r).splitlines()[1]
    assert "NO DP GUARANTEE" in r._repr_html_()
    # across the plots of a composition too
    r = pp.privacy_report(dp(cars) | ckm(cars))
    assert r.mixed == ["layer 0 of plot 1 (DP) and layer 0 of plot 2 (CKM)"]
    # other cells: not mixed
    r = pp.privacy_report(dp(cars) | ckm(cars, "drv"))
    assert r.mixed == [] and r.headline == "DP total eps=1, delta=0"
    # the bundle's method statement makes no DP claim for them
    folder = pp.save_release(mixed, tmp_path / "b", dpi=20)
    meta = json.loads((folder / "results.json").read_text())
    statement = meta["plotnine_private"]["method_statement"]
    assert "no differential privacy guarantee" in statement
    assert "total eps" not in statement
    assert meta["plotnine_private"]["privacy_report"]["mixed_protection"]


def test_ledger_flags_mixed_protection(cars, tmp_path, ledger_key):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="cars", cap_eps=5)
    dp(cars).draw()
    ckm(cars, "drv").draw()
    book = pp.ledger(path)
    assert book.mixed().empty and book.notes() == []
    ckm(cars).draw()  # the DP class counts, now also by CKM
    book = pp.ledger(path)
    assert book.mixed()["mechanism"].tolist() == ["discrete_laplace", "ckm"]
    assert book.mixed()["id"].tolist() == [1, 3]
    assert book.notes()[0].startswith("MIXED PROTECTION")
    assert "rows 1, 3" in str(book)
    assert book.total["eps"].tolist() == [1.0]  # CKM costs no eps
