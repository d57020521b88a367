"""A CKM table set: ``pp.synopsis(..., method="ckm")``. Each cell is
perturbed by the Cell Key Method as ``ckm_table`` perturbs the same cell,
each marginal is published as perturbed, and figures are drawn from it
with the CKM stats, with the p-table's intervals."""

from __future__ import annotations

import json

import neighbours
import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    geom_bar,
    geom_bin_2d,
    geom_density,
    geom_histogram,
    ggplot,
)
from plotnine.data import mpg as _mpg

import plotnine_private as pp
from plotnine_private.noise_bounds import ckm_interval

CLASSES = sorted(_mpg["class"].unique())
DRV = ["4", "f", "r"]
DIMS = {"class": CLASSES, "drv": DRV, "hwy": (10, 50, 2), "cty": (5, 40, 1)}
WORKLOAD = [("class",), ("class", "drv"), ("hwy",), ("cty", "hwy")]
PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)


def _cars(rng_seed: int = 2024) -> pd.DataFrame:
    cars = pp.add_record_keys(_mpg, name="rk", rng_seed=rng_seed)
    return cars.assign(
        **{
            "class": pd.Categorical(cars["class"], categories=CLASSES),
            "drv": pd.Categorical(cars["drv"], categories=DRV),
        }
    )


@pytest.fixture(scope="module")
def cars():
    return _cars()


@pytest.fixture(scope="module")
def syn(cars):
    return pp.synopsis(
        cars, DIMS, method="ckm", rkey="rk", ptable=PTAB, workload=WORKLOAD
    )


def _ckm(cars, x, **kw):
    return pp.ckm_table(cars, x, rkey="rk", ptable=PTAB, **kw)


def test_every_cell_is_the_ckm_table_of_that_cell(cars, syn):
    one = _ckm(cars, "class")
    np.testing.assert_array_equal(
        syn.marginal("class")["count"].to_numpy(), one["count"].to_numpy()
    )
    two = _ckm(cars, "class", groups="drv").set_index(["class", "drv"])
    held = syn.marginal(("class", "drv")).set_index(["class", "drv"])
    assert len(held) == len(two) == len(CLASSES) * len(DRV)
    np.testing.assert_array_equal(
        held["count"].to_numpy(), two.loc[held.index, "count"].to_numpy()
    )
    # the perturbation is real: some cell is not its true count
    true = cars.groupby(["class", "drv"], observed=False).size()
    assert (held["count"] != true.loc[held.index].to_numpy()).any()
    # a numeric dimension: each fine bin is bin_ckm's bin of the same
    # records (breaks on the fine grid, closed on the left)
    data = pp.layer_data(
        ggplot(cars, aes("hwy", rkey="rk"))
        + geom_histogram(
            stat="bin_ckm",
            ptable=PTAB,
            breaks=list(np.arange(10.0, 51.0, 2.0)),
            closed="left",
        )
    ).set_index("xmin")["count"]
    fine = syn.marginal("hwy").set_index("hwy")["count"]
    assert len(data) > 5
    np.testing.assert_array_equal(fine.loc[data.index], data.to_numpy())
    # and with a threshold: hidden where ckm_table hides
    thr = pp.synopsis(
        cars, {"class": CLASSES}, method="ckm", rkey="rk", ptable=PTAB,
        threshold=12,
    )  # fmt: skip
    # ckm_table leaves hidden cells out; the synopsis shows them as 0
    shown = _ckm(cars, "class", threshold=12).set_index("class")["count"]
    got = thr.marginal("class").set_index("class")["count"]
    assert sorted(set(CLASSES) - set(shown.index)) == ["2seater", "minivan"]
    np.testing.assert_array_equal(got.loc[shown.index], shown.to_numpy())
    assert (got.drop(shown.index) == 0).all()
    # its figure hides them as count_ckm on the data does
    cols = ["x", "fill", "count", "count_low", "count_high", "prop"]
    fig = pp.layer_data(
        ggplot(thr, aes("class", fill="class")) + geom_bar(stat="count_ckm")
    )
    on_data = pp.layer_data(
        ggplot(cars, aes("class", fill="class", rkey="rk"))
        + geom_bar(stat="count_ckm", ptable=PTAB, threshold=12)
    )
    assert len(fig) == len(CLASSES) - 2
    pd.testing.assert_frame_equal(fig[cols], on_data[cols])


def test_marginals_are_published_as_perturbed(syn):
    # the 1-way class table and the class totals of the 2-way table are
    # perturbed apart: they may differ, and the synopsis says by how much
    one = syn.tables[("class",)]
    two = syn.tables[("class", "drv")].sum(axis=1)
    assert syn.disagreement == pytest.approx(
        max(
            np.abs(one - two).max(),
            abs(
                syn.tables[("hwy",)] - syn.tables[("cty", "hwy")].sum(0)
            ).max(),
            max(t.sum() for t in syn.tables.values())
            - min(t.sum() for t in syn.tables.values()),
        )
    )
    assert syn.disagreement > 0
    assert "published as perturbed" in syn.statement
    assert "p-table D=5, V=2.01, js=2" in syn.statement
    assert "eps" not in syn.statement.replace("no eps", "")
    assert syn.eps is None and syn.release.mechanism == "ckm"


def test_figures_draw_the_perturbed_cells_with_ptable_intervals(cars, syn):
    bars = pp.layer_data(
        ggplot(syn, aes("class")) + geom_bar(stat="count_ckm")
    )
    on_data = pp.layer_data(
        ggplot(cars, aes("class", rkey="rk"))
        + geom_bar(stat="count_ckm", ptable=PTAB)
    )
    cols = ["x", "count", "count_low", "count_high", "prop"]
    pd.testing.assert_frame_equal(bars[cols], on_data[cols])
    # the interval is the p-table's: +-3 for D=5, V=2.01 at 95%
    low, high, _ = ckm_interval(PTAB, 0.95)
    assert (low, high) == (-3.0, 3.0)
    # noise_interval reads the synopsis's p-table (the stat has none)
    row = pp.noise_interval(
        ggplot(syn, aes("class")) + geom_bar(stat="count_ckm")
    ).iloc[0]
    assert (row["low"], row["high"]) == (-3.0, 3.0)
    big = bars["count"] > 10
    np.testing.assert_array_equal(
        bars.loc[big, "count_high"], bars.loc[big, "count"] + 3
    )
    # the synopsis's own p-table (an equal one) and threshold are accepted
    same = pp.layer_data(
        ggplot(syn, aes("class"))
        + geom_bar(stat="count_ckm", ptable=pp.create_cnt_ptable(5, 2.01, 2))
    )
    pd.testing.assert_frame_equal(same, bars)
    split = pp.layer_data(
        ggplot(syn, aes("class", fill="drv")) + geom_bar(stat="count_ckm")
    )
    assert split["count"].sum() == syn.tables[("class", "drv")].sum()
    hist = pp.layer_data(
        ggplot(syn, aes("hwy")) + geom_histogram(stat="bin_ckm")
    )
    np.testing.assert_array_equal(hist["count"], syn.marginal("hwy")["count"])
    tiles = pp.layer_data(
        ggplot(syn, aes("cty", "hwy")) + geom_bin_2d(stat="bin2d_ckm")
    )
    assert tiles["count"].sum() == syn.tables[("cty", "hwy")].sum()
    assert set(tiles["xmax"] - tiles["xmin"]) == {1.0}


def test_the_report_says_from_synopsis_and_names_the_ptable(syn):
    p = ggplot(syn, aes("class")) + geom_bar(stat="count_ckm")
    q = ggplot(syn, aes("hwy")) + geom_histogram(stat="bin_ckm")
    report = pp.privacy_report(p | q)
    rows = report.table[report.table["layer"] != "total"]
    assert set(rows["domain"]) == {f"from {syn.name}"}
    assert set(rows["mechanism"]) == {"ckm"}
    assert set(rows["identity"]) == {syn.release.identity}
    assert all("p-table D=5, V=2.01, js=2" in v for v in rows["parameters"])
    assert report.total_eps == 0


def test_neighbour_one_person_changed_only_perturbed_numbers_differ():
    a = _cars().assign(person=np.arange(len(_mpg)) // 3)
    # a person's records share one key
    a = pp.add_record_keys(a, name="pk", rng_seed=7, unit="person")
    b = a.copy()
    b.loc[b["person"] == 0, ["class", "drv", "hwy", "cty"]] = [
        "pickup", "4", 12, 9,
    ]  # fmt: skip
    kw = dict(method="ckm", rkey="pk", ptable=PTAB, workload=WORKLOAD)
    kw |= dict(unit="person", max_records=3)
    sa, sb = pp.synopsis(a, DIMS, **kw), pp.synopsis(b, DIMS, **kw)
    ja, jb = sa.to_json(), sb.to_json()
    for j in (ja, jb):
        for t in j["tables"]:
            t.pop("counts")
        j.pop("disagreement")
        j["release"].pop("cells")  # shown cells: all, here
    assert ja == jb
    assert sa.release.cells == sb.release.cells == 7 + 21 + 20 + 700
    assert any(
        not np.array_equal(sa.tables[m], sb.tables[m]) for m in sa.marginals
    )
    for mg in sa.marginals:
        pd.testing.assert_frame_equal(
            sa.marginal(mg).drop(columns="count"),
            sb.marginal(mg).drop(columns="count"),
        )
    plots = [
        lambda s: (
            ggplot(s, aes("class", fill="drv")) + geom_bar(stat="count_ckm")
        ),
        lambda s: ggplot(s, aes("hwy")) + geom_histogram(stat="bin_ckm"),
    ]
    for make in plots:
        assert (
            neighbours.differences(
                neighbours.snapshot(make(sa)), neighbours.snapshot(make(sb))
            )
            == []
        )


@pytest.mark.parametrize(
    ("layer", "x", "words"),
    [
        (
            geom_bar(stat="count_dp"),
            "class",
            "use its CKM twin, stat='count_ckm'",
        ),
        (
            geom_histogram(stat="bin_ckm", binwidth=4),
            "hwy",
            "binwidth=2, the default",
        ),
        (
            geom_bar(stat="count_ckm", ptable=pp.create_cnt_ptable(D=2, V=1)),
            "class",
            "not the synopsis's p-table (p-table D=5",
        ),
        (
            geom_bar(stat="count_ckm", threshold=3),
            "class",
            "remove threshold=",
        ),
        (geom_bar(stat="count_ckm"), "drv", "never a sum of perturbed cells"),
        (geom_bar(), "class", "a layer that is not private"),
        (
            geom_density(stat="density_ckm"),
            "hwy",
            "CKM is not drawn from a synopsis: use one of",
        ),
    ],
)
def test_figures_that_are_not_its_cells_are_refused(syn, layer, x, words):
    with pytest.raises(pp.PlotninePrivateError, match="on synopsis") as e:
        pp.layer_data(ggplot(syn, aes(x)) + layer)
    assert words in str(e.value)


def test_refusals_name_the_fix(cars, syn):
    dp = pp.synopsis(_mpg, {"class": CLASSES}, eps=1, seed=3)
    with pytest.raises(pp.PlotninePrivateError, match="stat='count_dp'"):
        pp.layer_data(ggplot(dp, aes("class")) + geom_bar(stat="count_ckm"))
    with pytest.raises(pp.PlotninePrivateError, match="use its CKM twin"):
        pp.layer_data(
            ggplot(syn, aes("class", "hwy")) + geom_bar(stat="summary_dp")
        )
    bad = [
        (dict(method="ckm", rkey="rk", ptable=PTAB, eps=1), "eps= is a diff"),
        (dict(method="ckm", rkey="rk", ptable=PTAB, seed=1), "seed= is a dif"),
        (dict(method="ckm", rkey="rk"), "ptable is required"),
        (dict(method="ckm", ptable=PTAB), "rkey=None must name"),
        (dict(eps=1, ptable=PTAB), "give method='ckm'"),
        (dict(method="cmk"), "method must be one of"),
        (
            dict(
                method="ckm",
                rkey="rk",
                ptable=pp.create_num_ptable(D=2, V=1, icat=[1, 2]),
            ),
            "must be a count p-table",
        ),  # fmt: skip
        (dict(method="ckm", rkey="nokeys", ptable=PTAB), "'nokeys' is not"),
        (
            dict(
                method="ckm", rkey="rk", ptable=PTAB, weights={("class",): 1.0}
            ),
            "weights= is a diff",
        ),  # fmt: skip
    ]
    for kw, words in bad:
        with pytest.raises(pp.PlotninePrivateError, match="synopsis") as e:
            pp.synopsis(cars, {"class": CLASSES}, **kw)
        assert words in str(e.value), (kw, str(e.value))
    with pytest.raises(pp.PlotninePrivateError, match="rkey='rk'"):
        pp.synopsis(
            cars.assign(rk=np.nan), {"class": CLASSES}, method="ckm",
            rkey="rk", ptable=PTAB,
        )  # fmt: skip
    with pytest.raises(pp.PlotninePrivateError, match="not a perturbed cell"):
        syn.marginal("drv")
    with pytest.raises(pp.PlotninePrivateError, match="binwidth=2"):
        syn.histogram("hwy", binwidth=4)
    with pytest.raises(pp.PlotninePrivateError, match="Cell Key Method"):
        pp.accuracy(syn, "class")


def test_save_and_load_keeps_the_ptable_and_draws_the_same(syn, tmp_path):
    path = syn.save(tmp_path / "ckm.json")
    saved = json.loads(path.read_text())
    assert saved["method"] == "ckm"
    assert saved["ptable"]["params"]["V"] == 2.01
    back = pp.load_synopsis(path)
    assert back.ckm and back.ptable == PTAB and back.rkey == "rk"
    assert back.statement == syn.statement and back.eps is None
    for mg in syn.marginals:
        pd.testing.assert_frame_equal(back.marginal(mg), syn.marginal(mg))
    figs = [
        pp.layer_data(
            ggplot(s, aes("class", fill="drv")) + geom_bar(stat="count_ckm")
        )
        for s in (syn, back)
    ]
    pd.testing.assert_frame_equal(figs[0], figs[1])
    report = pp.privacy_report(
        ggplot(back, aes("class")) + geom_bar(stat="count_ckm")
    )
    other = pp.create_cnt_ptable(D=2, V=1)
    with pytest.raises(pp.PlotninePrivateError, match="p-table D=5, V=2.01"):
        pp.layer_data(
            ggplot(back, aes("class"))
            + geom_bar(stat="count_ckm", ptable=other)
        )
    assert "p-table D=5, V=2.01, js=2" in report.table["parameters"].iloc[0]
    # a p-table that is not the one saved is refused
    saved["ptable"]["fingerprint"] = "0" * 64
    (tmp_path / "edited.json").write_text(json.dumps(saved))
    with pytest.raises(pp.PlotninePrivateError, match="fingerprint"):
        pp.load_synopsis(tmp_path / "edited.json")


def test_an_integer_key_ptable_is_saved_and_read_back(tmp_path):
    ons = pp.read_ptable(PTAB.to_ons_frame())  # integer keys mod 256
    data = pp.add_record_keys(
        _cars(), name="ik", rng_seed=5, integer_range=ons.key_modulus
    )
    s = pp.synopsis(
        data, {"class": CLASSES}, method="ckm", rkey="ik", ptable=ons
    )
    want = pp.ckm_table(data, "class", rkey="ik", ptable=ons)
    assert ons.key_kind == "integer" and ons != PTAB
    back = pp.load_synopsis(s.save(tmp_path / "ons.json"))
    assert back.ptable == ons
    np.testing.assert_array_equal(back.tables[("class",)], want["count"])


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_a_table_in_an_engine_is_the_same_ckm_table_set(cars, syn, engine):
    """The records counted and their keys summed in the engine: every
    cell equals the in-memory CKM synopsis's (and so ckm_table's)."""
    plain = cars.assign(**{c: cars[c].astype(str) for c in ("class", "drv")})
    if engine == "duckdb":
        pytest.importorskip("duckdb")
        from engine_tables import duckdb_table

        src = duckdb_table(plain, {})
    else:
        pl = pytest.importorskip("polars")
        src = pp.source(pl.from_pandas(plain).lazy())
    eng = pp.synopsis(
        src, DIMS, method="ckm", rkey="rk", ptable=PTAB, workload=WORKLOAD
    )
    assert eng.statement == syn.statement
    for mg in syn.marginals:
        np.testing.assert_array_equal(eng.tables[mg], syn.tables[mg])
