"""The ledger follows the data, its rows carry labels, and a refusal
names what is short (issue "People with many rows, honestly", part 5).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp

pytestmark = pytest.mark.usefixtures("ledger_key")

CLASSES = ["2seater", "compact", "midsize", "minivan", "pickup", "subcompact"]
PCA = dict(eps=1, delta=1e-5, seed=1, method="sparse")
COLS = ["displ", "cty", "hwy"]


def _table(data, seed=1, eps=1.0, **kw):
    return pp.dp_table(
        data, "class", eps=eps, seed=seed, levels=CLASSES + ["suv"], **kw
    )


# -- a refusal names the quantity that is short -----------------------------
def test_a_pca_under_a_pure_eps_cap_is_refused_for_its_delta(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10, cap_delta=0)
    with pytest.raises(pp.BudgetExceededError) as err:
        pp.dp_pca(mpg, COLS, **PCA)
    msg = str(err.value)
    assert "short of delta for this release" in msg
    assert "delta: this needs delta=1e-05 and delta=0 is left" in msg
    assert "cap delta=0 (spent 0)" in msg
    assert "eps:" not in msg  # eps fits: not named as short
    assert "a private PCA always spends delta" in msg
    assert "set_cap('mpg', eps=10, delta=1e-05)" in msg
    assert pp.ledger(path).table.empty


def test_an_eps_shortfall_names_eps_and_what_is_left(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=1.5)
    _table(mpg, seed=1)
    with pytest.raises(pp.BudgetExceededError) as err:
        _table(mpg, seed=2)
    msg = str(err.value)
    assert "short of eps for this release (count)" in msg
    assert "eps: this needs eps=1 and eps=0.5 is left of the cap eps=1.5" in (
        msg
    )
    assert "delta:" not in msg
    assert "lower the eps of this release to at most 0.5" in msg
    assert "set_cap('mpg', eps=2, delta=0)" in msg


def test_both_short_names_both(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=0.5, cap_delta=0)
    with pytest.raises(pp.BudgetExceededError) as err:
        pp.dp_pca(mpg, COLS, **PCA)
    msg = str(err.value)
    assert "short of eps and delta" in msg
    assert "eps: this needs eps=1 and" in msg
    assert "delta: this needs delta=1e-05" in msg
    assert "set_cap('mpg', eps=1, delta=1e-05)" in msg


def test_a_plot_budget_names_delta_when_delta_is_short(mpg):
    # an undeclared domain is thresholded: it spends delta=1e-6
    p = (
        ggplot(mpg, aes("manufacturer"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
        + pp.privacy_budget(eps=5)
    )
    with (
        pytest.warns(pp.PrivacyWarning),
        pytest.raises(pp.BudgetExceededError) as err,
    ):
        pp.layer_data(p)
    msg = str(err.value)
    assert "short of delta:" in msg
    assert "delta: this needs delta=1e-06 and delta=0 is left" in msg
    assert "declare the levels or breaks" in msg
    assert "privacy_budget(eps=5, delta=1e-06)" in msg


# -- the ledger follows the data ---------------------------------------------
def _two(path, mpg):
    """A ledger of two data sets, the hospital's cap spent."""
    pp.use_ledger(path, dataset="flights", cap_eps=10)
    pp.use_ledger(path, dataset="hospital", cap_eps=1)
    flights = pp.source(mpg, dataset="flights")
    hospital = pp.source(mpg.copy(), dataset="hospital")
    _table(hospital, seed=1)  # the hospital's whole cap
    return flights, hospital


def _bars(data, seed, **kw):
    return ggplot(data, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=seed, levels=CLASSES + ["suv"], **kw
    )


def test_a_report_of_flights_figures_is_not_refused_for_the_hospital(
    tmp_path, mpg
):
    path = tmp_path / "l.sqlite"
    flights, hospital = _two(path, mpg)
    figures = [_bars(flights, seed=s) for s in (2, 3, 4)]
    report = pp.privacy_report(figures)  # the ledger is at "hospital"
    assert report.total_eps == 3
    t = pp.ledger(path).table
    assert t["dataset"].tolist() == ["hospital"] + ["flights"] * 3
    totals = pp.ledger(path).total.set_index("dataset")["eps"]
    assert totals.to_dict() == {"flights": 3.0, "hospital": 1.0}
    # the hospital's own figures are still refused, for its own cap
    with pytest.raises(pp.BudgetExceededError, match="'hospital' is short"):
        pp.layer_data(_bars(hospital, seed=5))
    # a plain frame is charged to the ledger's data set (the hospital)
    with pytest.raises(pp.BudgetExceededError, match="'hospital' is short"):
        _table(mpg, seed=6)
    assert len(pp.ledger(path).table) == 4


def test_a_figure_of_two_data_sets_charges_each_its_own(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="flights", cap_eps=10)
    pp.use_ledger(path, dataset="hospital", cap_eps=10)
    flights = pp.source(mpg, dataset="flights")
    hospital = pp.source(mpg.copy(), dataset="hospital")
    p = _bars(flights, seed=1) + geom_bar(
        data=hospital, stat="count_dp", eps=0.5, seed=2, levels=CLASSES
    )
    p.draw()
    t = pp.ledger(path).table
    assert t[["dataset", "eps"]].values.tolist() == [
        ["flights", 1.0],
        ["hospital", 0.5],
    ]
    # a re-draw finds both rows, each in its own data set: free
    p.draw()
    assert len(pp.ledger(path).table) == 2


def test_a_mixed_figure_is_refused_for_its_data_set_over_the_cap(
    tmp_path, mpg
):
    path = tmp_path / "l.sqlite"
    flights, hospital = _two(path, mpg)
    p = _bars(flights, seed=2) + geom_bar(
        data=hospital, stat="count_dp", eps=1, seed=3, levels=CLASSES
    )
    with pytest.raises(pp.BudgetExceededError, match="'hospital' is short"):
        p.draw()
    # the flights layer, built first, is charged (its noise was drawn)
    t = pp.ledger(path).table
    assert t["dataset"].tolist() == ["hospital", "flights"]


def test_engine_tables_and_pca_follow_their_source(tmp_path, mpg):
    pl = pytest.importorskip("polars")
    path = tmp_path / "l.sqlite"
    flights, _ = _two(path, mpg)
    pp.ledger(path).set_cap("flights", eps=10, delta=1e-3)
    lazy = pp.source(pl.from_pandas(mpg).lazy(), dataset="Flights")
    pp.layer_data(
        ggplot(lazy, aes("displ"))
        + geom_bar(stat="bin_dp", eps=1, seed=7, limits=(1, 7), bins=6)
    )
    pp.dp_pca(flights, COLS, **PCA)
    t = pp.ledger(path).table
    # names are compared after folding case: "Flights" is "flights"
    assert set(t["dataset"][1:]) == {"flights"}
    assert t["family"][1:].tolist()[:2] == ["bin", "pca:directions"]


def test_a_data_set_new_to_the_ledger_is_refused_until_added(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="hospital", cap_eps=1)
    flights = pp.source(mpg, dataset="flights")
    with pytest.raises(pp.PlotninePrivateError) as err:
        _table(flights)
    msg = str(err.value)
    assert "pp.source(..., dataset='flights')" in msg
    assert "has no data set 'flights', so it has no cap yet" in msg
    assert "add_dataset('flights', eps=..., delta=...)" in msg
    assert pp.ledger(path).table.empty
    book = pp.ledger(path).add_dataset("flights", eps=2)
    assert book.caps["flights"] == (2.0, 0.0)
    _table(flights)
    assert pp.ledger(path).table["dataset"].tolist() == ["flights"]
    # added again with its own cap: nothing changes; another is refused
    pp.ledger(path).add_dataset("Flights", eps=2)
    with pytest.raises(pp.PlotninePrivateError, match="set_cap"):
        pp.ledger(path).add_dataset("flights", eps=3)
    with pytest.raises(pp.PlotninePrivateError, match="punctuation"):
        pp.ledger(path).add_dataset("flights!", eps=3)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("", "dataset='' is empty"),
        ("  ", "is empty"),
        (3, "dataset must be a text"),
        ("a\nb", "line break"),
        ("x" * 201, "201 characters long"),
    ],
)
def test_a_bad_dataset_name_is_refused(mpg, value, match):
    with pytest.raises(
        pp.PlotninePrivateError, match=f"source\\(\\): .*{match}"
    ):
        pp.source(mpg, dataset=value)


def test_a_source_keeps_its_data_set_when_wrapped_again(mpg):
    a = pp.source(mpg, dataset="flights")
    assert pp.source(a, unit="manufacturer", max_records=2).dataset == (
        "flights"
    )
    assert pp.source(a, dataset="other").dataset == "other"
    assert "data set 'flights'" in repr(a)


# -- labels ------------------------------------------------------------------
def _mechanism(entry):
    if entry.mechanism == "dp":
        extra = {"eps": 1, "seed": 1}
        if entry.name == "dp_pca_score":
            extra["delta"] = 1e-5
        return extra
    extra = {"ptable": pp.create_cnt_ptable(D=2, V=1.05, js=1)}
    if "num_ptable" in entry.cls.DEFAULT_PARAMS:
        extra["num_ptable"] = pp.create_num_ptable(D=2, V=1, icat=[1, 2])
    return extra


def _entries():
    from plotnine_private.declarations import registered

    return registered(aliases=False)


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e.name)
def test_every_private_stat_takes_and_checks_a_label(entry):
    example = entry.declaration.example.get("params", {})
    params = {**example, **_mechanism(entry)}
    stat = entry.cls(label="  F01 flights by carrier ", **params)
    assert stat.params["label"] == "F01 flights by carrier"
    assert entry.cls(**params).params["label"] is None
    for bad, words in ((3, "label must be a text"), ("", "is empty")):
        with pytest.raises(pp.PlotninePrivateError, match=words) as err:
            entry.cls(label=bad, **params)
        assert str(err.value).startswith(f"{entry.cls.__name__}(): ")


def test_a_label_is_no_part_of_the_release(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10)
    plain = pp.layer_data(_bars(mpg, seed=1))
    named = pp.layer_data(_bars(mpg, seed=1, label="F01 cars by class"))
    # the same release: the same noise, one row, the label it was last
    # drawn with
    assert named["count"].tolist() == plain["count"].tolist()
    t = pp.ledger(path).table
    assert len(t) == 1 and t["label"].tolist() == ["F01 cars by class"]
    relabelled = pp.label(_bars(mpg, seed=1), "F01b cars by class")
    pp.layer_data(relabelled)
    t = pp.ledger(path).table
    assert len(t) == 1 and t["label"].tolist() == ["F01b cars by class"]
    # drawn again without a label: the row keeps its label
    pp.layer_data(_bars(mpg, seed=1))
    assert pp.ledger(path).table["label"].tolist() == ["F01b cars by class"]


def test_labels_in_the_ledger_the_command_line_and_the_bundle(
    tmp_path, mpg, capsys
):
    import json

    from plotnine_private.__main__ import main as cli

    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10)
    a = pp.label(_bars(mpg, seed=1), "F01 cars by class")
    b = _bars(mpg, seed=2, label="F02 own label")
    b = pp.label(b, "ignored: the layer's own label wins")
    _table(mpg, seed=3, label="T01 table")
    folder = pp.save_release(a, tmp_path / "bundle", dpi=20)
    pp.layer_data(b)
    t = pp.ledger(path).table
    assert t["label"].tolist() == [
        "T01 table",
        "F01 cars by class",
        "F02 own label",
    ]
    assert cli(["ledger", str(path)]) == 0
    out = capsys.readouterr().out
    for text in ("F01 cars by class", "F02 own label", "T01 table"):
        assert text in out
    meta = json.loads((folder / "results.json").read_text())
    assert meta["results"]["output_0"]["properties"]["label"] == (
        "F01 cars by class"
    )
    rows = meta["plotnine_private"]["ledger"]["rows"]
    assert [r["label"] for r in rows] == ["F01 cars by class"]


def test_pp_label_refuses_what_it_cannot_label(mpg):
    with pytest.raises(pp.PlotninePrivateError, match="label each plot"):
        pp.label(_bars(mpg, 1) | _bars(mpg, 2), "F01")
    with pytest.raises(pp.PlotninePrivateError, match=r"label\(\): label="):
        pp.label(_bars(mpg, 1), "two\nlines")
    with pytest.raises(pp.PlotninePrivateError, match="dp_table"):
        _table(mpg, label=["F01"])


def test_a_ledger_without_the_label_column_reads_and_gains_it(tmp_path, mpg):
    import sqlite3

    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10)
    _table(mpg, seed=1)
    with sqlite3.connect(path) as con:  # as written before labels
        con.execute("ALTER TABLE releases DROP COLUMN label")
    assert pp.ledger(path).table["label"].tolist() == [""]
    _table(mpg, seed=2, label="T02")
    assert pp.ledger(path).table["label"].tolist() == ["", "T02"]


# -- neighbours --------------------------------------------------------------
def _people(change: str | None) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    pid = np.repeat(np.arange(60), rng.integers(1, 4, 60))
    frame = pd.DataFrame(
        {
            "pid": pid,
            "class": pd.Categorical(rng.choice(CLASSES, len(pid)), CLASSES),
            "displ": rng.uniform(1, 7, len(pid)),
        }
    )
    if change == "record":
        frame.loc[0, "class"] = CLASSES[-1]
    elif change == "person":
        mine = frame["pid"] == 5
        frame.loc[mine, "class"] = CLASSES[0]
        frame.loc[mine, "displ"] = 6.9
    return frame


def _mixed_figure(data: pd.DataFrame):
    flights = pp.source(data, unit="pid", max_records=2, dataset="flights")
    hospital = pp.source(data.copy(), dataset="hospital")
    p = ggplot(flights, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=3, levels=CLASSES, label="F01 by class"
    )
    p = p + geom_bar(
        data=hospital, stat="count_dp", eps=1, seed=4, levels=CLASSES
    )
    return pp.label(p, "F01 figure")


@pytest.mark.filterwarnings("ignore:seed . was already used")
@pytest.mark.parametrize("change", ["record", "person"])
def test_data_sets_and_labels_are_the_same_on_neighbours(
    tmp_path, ledger_key, change
):
    from neighbours import bundle_metadata, differences

    tables, bundles = [], []
    for name, data in (("a", _people(None)), ("b", _people(change))):
        key = tmp_path / f"{name}.key"
        key.write_bytes(ledger_key.read_bytes()[:32])
        pp.use_key(key)
        path = tmp_path / f"{name}.sqlite"
        pp.use_ledger(path, dataset="hospital", cap_eps=5)
        pp.ledger(path).add_dataset("flights", eps=5)
        _mixed_figure(data).draw()
        tables.append(pp.ledger(path).table)
        with pp.use_ledger(None):
            bundles.append(bundle_metadata(_mixed_figure(data)))
    a, b = tables
    assert a[["dataset", "label"]].values.tolist() == [
        ["flights", "F01 by class"],
        ["hospital", "F01 figure"],
    ]
    keep = [c for c in a.columns if c not in ("digest", "at")]
    pd.testing.assert_frame_equal(a[keep], b[keep])
    assert differences(bundles[0], bundles[1]) == []
    labels = [o["properties"]["label"] for o in bundles[0].values()]
    assert labels == ["F01 by class", "F01 figure"]
