"""pp.synopsis: one release of a workload's marginals (one charge), made
consistent, answered by post-processing, saved and loaded."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from plotnine.data import mpg as _mpg

import plotnine_private as pp
from plotnine_private.synopsis.consistency import (
    linear_consistent,
    make_consistent,
)

CLASSES = sorted(_mpg["class"].unique())
DIMS = {"class": CLASSES, "drv": ["4", "f", "r"], "hwy": (10, 50, 2)}


def _true(data: pd.DataFrame, mg: tuple[str, ...]) -> np.ndarray:
    """The true counts of a marginal, computed here independently."""
    codes = []
    for d in mg:
        if d == "hwy":
            codes.append(((data["hwy"] - 10) // 2).to_numpy().astype(int))
        else:
            codes.append(
                pd.Categorical(data[d], categories=DIMS[d]).codes.astype(int)
            )
    shape = tuple(20 if d == "hwy" else len(DIMS[d]) for d in mg)
    out = np.zeros(shape)
    np.add.at(out, tuple(codes), 1)
    return out


def _scale(statement: str) -> float:
    return float(re.search(r"scale ([0-9.]+) per cell", statement)[1])


def _dlap_var(scale: float) -> float:
    q = math.exp(-1 / scale)
    return 2 * q / (1 - q) ** 2


@pytest.fixture(scope="module")
def syn():
    return pp.synopsis(_mpg.copy(), DIMS, eps=1.0, seed=7)


def _agree(s, atol=1e-6):
    """Every two held tables agree on each shared 1-way margin and on the
    grand total."""
    totals = [t.sum() for t in s.tables.values()]
    np.testing.assert_allclose(totals, totals[0], rtol=0, atol=atol)
    for a in s.dims:
        margins = [
            t.sum(axis=tuple(k for k in range(t.ndim) if mg[k] != a))
            for mg, t in s.tables.items()
            if a in mg
        ]
        for m in margins[1:]:
            np.testing.assert_allclose(m, margins[0], rtol=0, atol=atol)


def test_default_workload_is_every_1_and_2_way_marginal(syn):
    assert syn.marginals == [
        ("class",),
        ("drv",),
        ("hwy",),
        ("class", "drv"),
        ("class", "hwy"),
        ("drv", "hwy"),
    ]
    assert syn.tables[("class", "hwy")].shape == (7, 20)


def test_marginals_agree_on_shared_totals_and_are_non_negative(syn):
    _agree(syn)
    assert all((t >= 0).all() for t in syn.tables.values())
    # a figure's totals: the bars by class equal the stacked bars' sums
    by_class = syn.marginal("class")["count"].to_numpy()
    stacked = syn.marginal(("class", "drv")).groupby("class", sort=False)
    np.testing.assert_allclose(
        stacked["count"].sum().to_numpy(), by_class, rtol=0, atol=1e-6
    )
    # a histogram at any multiple of the resolution sums the same records
    for width in (2, 8, 40):
        h = syn.histogram("hwy", binwidth=width)
        assert len(h) == 40 // width
        assert h["count"].sum() == pytest.approx(by_class.sum(), abs=1e-6)
    assert syn.histogram("hwy", binwidth=8)["xmin"].tolist() == [
        10,
        18,
        26,
        34,
        42,
    ]


def test_low_eps_negative_cells_are_raked_and_still_agree():
    s = pp.synopsis(_mpg.copy(), DIMS, eps=0.05, seed=3)
    assert any((r < 0).any() for r in s.raw.values())  # raking was needed
    assert all((t >= 0).all() for t in s.tables.values())
    assert s.disagreement <= 1e-9
    _agree(s)


def test_consistency_is_least_squares_when_nothing_is_negative():
    # one 1-way and one 2-way table, equal variance per cell: the shared
    # margin is the inverse-variance mean (weights 1 and 1/2)
    a = np.array([100.0, 50.0])
    ab = np.array([[60.0, 43.0], [20.0, 33.0]])  # row sums 103, 53
    (one, two), gap = make_consistent([a, ab], [("a",), ("a", "b")])
    total = (a.sum() / 2 + ab.sum() / 4) / (1 / 2 + 1 / 4)
    mean = (a + ab.sum(axis=1) / 2) / 1.5
    mean += (total - mean.sum()) / 2
    np.testing.assert_allclose(one, mean)
    np.testing.assert_allclose(two.sum(axis=1), mean)
    np.testing.assert_allclose(
        two.sum(axis=0), ab.sum(axis=0) + (total - ab.sum()) / 2
    )
    assert gap == 0.0


def test_one_charge_for_many_marginals_and_none_for_drawing(
    tmp_path, ledger_key
):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10)
    s = pp.synopsis(_mpg.copy(), DIMS, eps=2.0, seed=11, label="S1 mpg")
    for mg in s.marginals:
        s.marginal(mg)
    s.histogram("hwy", binwidth=4)
    rows = pp.ledger(path).table
    assert len(rows) == 1
    assert rows["eps"].tolist() == [2.0]
    assert rows["label"].tolist() == ["S1 mpg"]


def test_noise_scale_is_eps_over_marginals_on_a_seed_sweep():
    """raw - true over 6 marginals x 5 seeds (1255 cells): discrete
    Laplace of scale 2 * 6 / eps. A variance 15% off fails (a release at
    eps per marginal, not eps/6, would be 36 times smaller)."""
    data = _mpg.copy()
    eps = 1.5
    noise = []
    for seed in range(5):
        s = pp.synopsis(data, DIMS, eps=eps, seed=seed)
        noise += [(s.raw[mg] - _true(data, mg)).ravel() for mg in s.marginals]
    e = np.concatenate(noise)
    assert np.allclose(e, np.rint(e))  # integer noise
    var = _dlap_var(2 * 6 / eps)
    assert abs(e.mean()) < 4 * math.sqrt(var / len(e))
    assert e.var() == pytest.approx(var, rel=0.15)


def test_unit_bound_scales_the_noise():
    data = _mpg.copy().assign(person=np.arange(len(_mpg)) // 3)
    s = pp.synopsis(data, DIMS, eps=1.0, seed=1, unit="person", max_records=2)
    # two records per person: sensitivity 2 * 2, six marginals at eps/6
    assert _scale(s.statement) == pytest.approx(24, rel=1e-4)
    assert "keeping 2 records" in s.statement
    plain = pp.synopsis(data, DIMS, eps=1.0, seed=1)
    assert _scale(plain.statement) == pytest.approx(12, rel=1e-4)
    added = pp.synopsis(data, DIMS, eps=1.0, seed=1, adjacency="add_remove")
    assert _scale(added.statement) == pytest.approx(6, rel=1e-4)
    # at most 2 of each person's 3 records are counted
    assert s.raw[("class",)].sum() < len(data) * 0.67 + 200


def test_neighbour_one_record_changed_only_noisy_numbers_differ():
    a = _mpg.copy()
    b = _mpg.copy()
    b.loc[0, ["class", "drv", "hwy"]] = ["2seater", "r", 49]
    wl = [("class", "drv"), ("hwy",), ("drv",)]
    sa = pp.synopsis(a, DIMS, eps=1.0, seed=5, workload=wl)
    with pytest.warns(pp.PrivacyWarning, match="same synopsis release"):
        # the neighbour is other data under the same seed, on purpose
        sb = pp.synopsis(b, DIMS, eps=1.0, seed=5, workload=wl)
    assert sa.marginals == sb.marginals
    assert sa.statement == sb.statement
    for mg in sa.marginals:
        fa, fb = sa.marginal(mg), sb.marginal(mg)
        assert fa.shape == fb.shape
        pd.testing.assert_frame_equal(
            fa.drop(columns="count"), fb.drop(columns="count")
        )
    assert sa.histogram("hwy", 4)[["xmin", "xmax"]].equals(
        sb.histogram("hwy", 4)[["xmin", "xmax"]]
    )


def test_refusals_name_the_fix(syn):
    s = pp.synopsis(
        _mpg.copy(),
        DIMS,
        eps=1.0,
        seed=9,
        workload=[("class", "drv"), ("hwy",)],
    )
    with pytest.raises(
        pp.PlotninePrivateError,
        match=r"holds \[\('class', 'drv'\), \('hwy',\)\]",
    ):
        s.marginal(("class", "hwy"))
    assert len(s.marginal("drv")) == 3  # a sub-marginal of a held one
    with pytest.raises(
        pp.PlotninePrivateError, match="binwidth=3 must be a whole multiple"
    ):
        syn.histogram("hwy", binwidth=3)
    with pytest.raises(
        pp.PlotninePrivateError, match="not a numeric dimension"
    ):
        syn.histogram("class", binwidth=1)
    with pytest.raises(pp.PlotninePrivateError, match=r"dims\['hwy'\]"):
        pp.synopsis(_mpg, {"hwy": (10, 50, 3)}, eps=1, seed=1)
    with pytest.raises(pp.PlotninePrivateError, match="workload entry"):
        pp.synopsis(_mpg, DIMS, eps=1, seed=1, workload=[("class", "cty")])
    with pytest.raises(
        pp.PlotninePrivateError, match="'cyl' is not in the data"
    ):
        pp.synopsis(_mpg.drop(columns="cyl"), {"cyl": [4, 6]}, eps=1, seed=1)
    with pytest.raises(pp.PlotninePrivateError, match="eps"):
        pp.synopsis(_mpg, DIMS, eps=-1, seed=1)


def test_save_and_load_round_trip(syn, tmp_path):
    path = syn.save(tmp_path / "s.json")
    back = pp.load_synopsis(path)
    assert back.marginals == syn.marginals
    assert back.statement == syn.statement and back.eps == syn.eps
    for mg in syn.marginals:
        pd.testing.assert_frame_equal(back.marginal(mg), syn.marginal(mg))
    pd.testing.assert_frame_equal(
        back.histogram("hwy", 10), syn.histogram("hwy", 10)
    )
    # the raw noisy tables too: the intervals' linear estimate is kept
    for mg in syn.marginals:
        np.testing.assert_array_equal(back.raw[mg], syn.raw[mg])
        np.testing.assert_allclose(back.linear()[mg], syn.linear()[mg])
    # a file without them (an earlier version): the consistent tables
    # stand in for the linear estimate
    old = json.loads(path.read_text())
    for t in old["tables"]:
        del t["noisy"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    older = pp.load_synopsis(tmp_path / "old.json")
    assert older.raw == {} and older.linear() is older.tables
    (tmp_path / "bad.json").write_text('{"format": "x"}')
    with pytest.raises(pp.PlotninePrivateError, match="not a synopsis file"):
        pp.load_synopsis(tmp_path / "bad.json")


def test_neighbour_one_person_changed_under_a_unit():
    """A whole person (3 records) replaced, max_records=3: the tables'
    shapes and labels and the statement are equal; only counts differ."""
    a = _mpg.copy().assign(person=np.arange(len(_mpg)) // 3)
    b = a.copy()
    b.loc[b["person"] == 0, ["class", "drv", "hwy"]] = ["pickup", "4", 11]
    sa = pp.synopsis(a, DIMS, eps=1.0, seed=4, unit="person", max_records=3)
    with pytest.warns(pp.PrivacyWarning, match="same synopsis release"):
        sb = pp.synopsis(
            b, DIMS, eps=1.0, seed=4, unit="person", max_records=3
        )
    assert sa.statement == sb.statement
    for mg in sa.marginals:
        fa, fb = sa.marginal(mg), sb.marginal(mg)
        pd.testing.assert_frame_equal(
            fa.drop(columns="count"), fb.drop(columns="count")
        )


def test_a_table_in_duckdb_whole_person_changed():
    """A synopsis of a DuckDB table under a unit: a whole person (3
    records) replaced changes only the noisy counts, and each synopsis
    is the one of the same records in memory."""
    pytest.importorskip("duckdb")
    from engine_tables import duckdb_table

    a = _mpg.copy().assign(person=np.arange(len(_mpg)) // 3)
    b = a.copy()
    b.loc[b["person"] == 0, ["class", "drv", "hwy"]] = ["pickup", "4", 11]
    unit = {"unit": "person", "max_records": 2}
    sa = pp.synopsis(duckdb_table(a, {}, **unit), DIMS, eps=1.0, seed=4)
    with pytest.warns(pp.PrivacyWarning, match="same synopsis release"):
        sb = pp.synopsis(duckdb_table(b, {}, **unit), DIMS, eps=1.0, seed=4)
        mem = pp.synopsis(pp.source(b, **unit), DIMS, eps=1.0, seed=4)
    assert sa.statement == sb.statement == mem.statement
    assert "keeping 2 records" in sa.statement
    for mg in sa.marginals:
        fa, fb = sa.marginal(mg), sb.marginal(mg)
        pd.testing.assert_frame_equal(
            fa.drop(columns="count"), fb.drop(columns="count")
        )
        np.testing.assert_array_equal(sb.raw[mg], mem.raw[mg])
    # the changed person's records move counts between cells
    assert any(
        not np.array_equal(sa.raw[mg], sb.raw[mg]) for mg in sa.marginals
    )


def test_the_linear_estimates_error_does_not_depend_on_the_data():
    """L, the consistency step without its clipping, is affine and keeps
    consistent tables: L(T + Z) = T + L(Z), so the error of a
    synopsis's linear estimate is L of its noise whatever the counts
    (what its intervals simulate); the clipping estimator's is not (its
    error near empty cells depends on T)."""
    data = _mpg.copy()
    s = pp.synopsis(data, DIMS, eps=0.5, seed=3)
    truth = [_true(data, mg) for mg in s.marginals]
    noise = [s.raw[mg] - t for mg, t in zip(s.marginals, truth)]
    lin_error = linear_consistent(noise, s.marginals)
    for mg, t, e in zip(s.marginals, truth, lin_error):
        np.testing.assert_allclose(s.linear()[mg] - t, e, atol=1e-9)
    # at eps 0.5 the clipping moved some cells: its error is another
    made, _ = make_consistent(list(s.raw.values()), s.marginals)
    gaps = [
        np.abs((m - t) - e).max() for m, t, e in zip(made, truth, lin_error)
    ]
    assert max(gaps) > 1.0
    assert (s.linear()[("class", "hwy")] < 0).any()  # not clipped
