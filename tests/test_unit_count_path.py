"""The privacy unit through the count path: bounding, the mechanism's
scale, the query, tables, max_cells, the report, the ledger, the bundle
and planning."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_bar, geom_histogram, ggplot

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.cells import categorical_dimension
from plotnine_private.door import layer_releases
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.release.bounding import (
    bounded_mask,
    cells_mask,
    order_keys,
)
from plotnine_private.mechanisms.release.magnitudes import LaplaceSums
from plotnine_private.mechanisms.samplers import laplace as lap
from plotnine_private.unit_cells import limit_cells

LEVELS = list("abcdefgh")

#: the unit in the report's words
PID_WORDS = "pid, at most 5 records each; records without an id left out"


def visits(n: int = 2000, people: int = 100, seed: int = 0) -> pd.DataFrame:
    """Records of ``people`` persons (about n / people each)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "pid": rng.integers(0, people, n),
            "c": pd.Categorical(rng.choice(LEVELS, n), categories=LEVELS),
            "v": rng.uniform(0, 10, n),
        }
    )


def built(plot):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(plot)


def bars(data, **kw):
    kw = {"eps": 1, "seed": 4, **kw}
    return ggplot(data, aes("c")) + geom_bar(stat="count_dp", **kw)


# -- bounding: the fast path equals a direct lexsort --------------------------
def reference_mask(units, records, k, salt=None):
    """The definition: rank each unit's records by (key, position) with
    one lexsort; keep ranks below k."""
    units = np.asarray(units, dtype=np.int64)
    h = order_keys(units, records, salt)
    order = np.lexsort((np.arange(len(units)), h, units))
    grp = units[order]
    start = np.r_[True, grp[1:] != grp[:-1]]
    place = np.arange(len(order))
    rank = place - np.maximum.accumulate(np.where(start, place, 0))
    keep = np.empty(len(units), dtype=bool)
    keep[order] = rank < k
    return keep


@pytest.mark.parametrize("trial", range(24))
def test_bounded_mask_equals_the_reference(trial):
    rng = np.random.default_rng(trial)
    n = int(rng.integers(1, 4000))
    kind = trial % 4
    if kind == 0:  # small person numbers: counted by bincount
        units = rng.integers(0, 60, n)
    elif kind == 1:  # large identifiers: through np.unique
        units = rng.integers(0, 2**61, 30)[rng.integers(0, 30, n)]
    elif kind == 2:  # negative: as unit_integers leaves no such, but safe
        units = rng.integers(-20, 20, n)
    else:  # one unit with everything
        units = np.zeros(n, dtype=np.int64)
    # repeated record ids within a unit take the exact path (ties)
    records = rng.integers(0, 15, n) if trial % 3 == 0 else np.arange(n)
    k = int(rng.integers(1, 7))
    salt = [None, 3, "x"][trial % 3]
    got = bounded_mask(units, records, k, salt)
    assert (got == reference_mask(units, records, k, salt)).all()
    counts = pd.Series(units[got]).value_counts()
    assert counts.max() <= k


def test_bounded_mask_keeps_every_record_of_small_units():
    units = np.array([5, 5, 7, 9, 9, 9])
    assert bounded_mask(units, np.arange(6), 3).all()
    assert bounded_mask(units, np.arange(6), 2).sum() == 5


# -- max_cells ----------------------------------------------------------------
def test_cells_mask_keeps_at_most_max_cells_per_unit():
    rng = np.random.default_rng(5)
    units = rng.integers(0, 40, 5000)
    cells = rng.integers(0, 30, 5000) * 1_000_003
    for c in (1, 2, 5):
        keep = cells_mask(units, cells, c, salt=2)
        per_unit = pd.DataFrame({"u": units[keep], "c": cells[keep]})
        assert per_unit.groupby("u")["c"].nunique().max() == c
        # every record of a kept (unit, cell) is kept
        kept_pairs = set(zip(units[keep], cells[keep]))
        assert all(
            (u, x) not in kept_pairs
            for u, x in zip(units[~keep], cells[~keep])
        )


def test_a_units_cells_do_not_depend_on_other_units():
    # an observed level's code shifts when another unit adds a level
    # ("a" moves from code 0 to 1); the choice of cells must not
    d1 = pd.DataFrame({"u": [1, 1, 1, 2], "c": ["a", "b", "c", "b"]})
    d2 = pd.DataFrame({"u": [1, 1, 1, 3], "c": ["a", "b", "c", "0"]})
    keep = []
    for d in (d1, d2):
        dim = categorical_dimension("x", d["c"], None)
        keep.append(limit_cells([dim], d["u"].to_numpy(), 2, None)[:3])
    assert keep[0].tolist() == keep[1].tolist()
    assert keep[0].sum() == 2


def test_max_cells_in_a_plot_limits_cells_and_lowers_the_threshold():
    df = visits(3000, 60)
    df["c"] = df["c"].astype(str)  # undeclared: a thresholded release
    src = pp.source(df, unit="pid", max_records=6, max_cells=2)
    plain = built(bars(pp.source(df, unit="pid", max_records=6)))
    limited = built(bars(src))
    r_plain = layer_releases(plain.layers[0])[0]
    r_lim = layer_releases(limited.layers[0])[0]
    assert r_lim.details["threshold"] < r_plain.details["threshold"]
    assert r_lim.details["threshold"] == lap.threshold_for(
        1, 1e-6, "replace", records=6, cells=2
    )
    # the table gives the same cells and numbers as the plot
    t = pp.dp_table(src, "c", eps=1, seed=4)
    shown = limited.layers[0].data
    assert sorted(t["count"].tolist()) == sorted(shown["count"].tolist())


# -- the mechanism and the query ----------------------------------------------
def test_sensitivity_scales_with_k_and_one_row_keeps_its_identity():
    df = visits()
    one = layer_releases(built(bars(df)).layers[0])[0]
    also_one = layer_releases(built(bars(pp.source(df))).layers[0])[0]
    k3 = built(bars(pp.source(df, unit="pid", max_records=3)))
    r3 = layer_releases(k3.layers[0])[0]
    assert one.sensitivity == 2 and r3.sensitivity == 6
    assert r3.details["scale"] == pytest.approx(3 * one.details["scale"])
    assert also_one.identity == one.identity  # nothing declared: as before
    assert r3.identity != one.identity  # the unit is part of the query
    k1 = built(bars(pp.source(df, unit="pid", max_records=1)))
    r1 = layer_releases(k1.layers[0])[0]
    assert r1.sensitivity == 2 and r1.identity != one.identity
    # each person keeps at most 3 records: the counts add up to that
    kept = pd.Series(
        bounded_mask(df["pid"].to_numpy(), np.arange(len(df)), 3)
    ).sum()
    per_person = df.groupby("pid").size().clip(upper=3).sum()
    assert kept == per_person


def test_intervals_follow_the_bigger_noise():
    df = visits()
    one = built(bars(df)).layers[0].data
    k4 = built(bars(pp.source(df, unit="pid", max_records=4))).layers[0].data
    width1 = (one["count_high"] - one["count_low"]).max()
    width4 = (k4["count_high"] - k4["count_low"]).max()
    assert width4 > 3 * width1


def test_warn_eps_scale_uses_the_bounded_scale():
    df = visits()
    total = 40  # a public total: noise 2/eps < 40 < 2k/eps
    plain = bars(df, eps=0.1, total=total)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pp.PrivacyWarning)
        build(plain)  # scale 20: expected noise below 40, no warning
    src = pp.source(df, unit="pid", max_records=5)
    with pytest.warns(pp.PrivacyWarning, match="exceeds the layer's public"):
        build(bars(src, eps=0.1, total=total))


@pytest.mark.parametrize("stat", ["bin_dp", "bin2d_dp", "binhex_dp", "sum_dp"])
def test_binned_families_scale_with_k(stat):
    # unstacked: only the releases are read, and stacking a hundred cells
    # was most of each build
    df = visits()
    df["w"] = np.floor(df["v"])
    if stat == "bin_dp":
        layer = geom_histogram(
            aes("v"),
            stat=stat,
            breaks=np.arange(11.0),
            eps=1,
            seed=2,
            position="identity",
        )
    elif stat == "sum_dp":
        layer = geom_bar(
            aes("v", "w"),
            stat=stat,
            limits=((0, 10), (0, 10)),
            resolution=(1, 1),
            eps=1,
            seed=2,
            position="identity",
        )
    else:
        layer = geom_bar(
            aes("v", "w"),
            stat=stat,
            limits=((0, 10), (0, 10)),
            eps=1,
            seed=2,
            position="identity",
            **({"bins": 5} if stat == "bin2d_dp" else {"binwidth": 2}),
        )
    for k in (1, 3):
        src = pp.source(df, unit="pid", max_records=k)
        r = layer_releases(built(ggplot(src) + layer).layers[0])[-1]
        assert r.sensitivity == 2 * k


def test_sums_scale_by_records():
    one = LaplaceSums(1.0, bound=4, unit=0.5)
    k = LaplaceSums(1.0, bound=4, unit=0.5, records=3)
    assert k.sensitivity == 3 * one.sensitivity == 12.0
    assert k.scale == pytest.approx(3 * one.scale)
    assert "records" not in one.parameters()
    assert k.parameters()["records"] == 3
    with pytest.raises(ParameterError, match="max_records"):
        LaplaceSums(1.0, bound=4, unit=0.5, records=0)


# -- tables -------------------------------------------------------------------
def test_table_bounds_a_unit_frame_like_the_plot():
    df = visits()
    src = pp.source(df, unit="pid", max_records=2, salt="s")
    t = pp.dp_table(src, "c", eps=1, seed=4)
    plot = built(bars(src)).layers[0].data
    assert t["count"].tolist() == plot["count"].tolist()
    # polars in (levels declared by an Enum), the same release
    pl = pytest.importorskip("polars")
    frame = pl.from_pandas(df).with_columns(pl.col("c").cast(pl.Enum(LEVELS)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one seed on two frame objects
        t2 = pp.dp_table(
            pp.source(frame, unit="pid", max_records=2, salt="s"),
            "c",
            eps=1,
            seed=4,
        )
    assert t2["count"].tolist() == t["count"].tolist()


def test_ckm_table_bounds_rows_too():
    df = pp.add_record_keys(visits(), seed=1)
    pt = pp.create_cnt_ptable(D=2, V=1.05, js=1)
    src = pp.source(df, unit="pid", max_records=1)
    t = pp.ckm_table(src, "c", rkey="rkey", ptable=pt)
    # one record per person: about as many records as people
    assert t["count"].sum() <= df["pid"].nunique() + 2 * len(LEVELS)


# -- report, bundle, ledger ---------------------------------------------------
def test_report_names_the_unit_for_every_figure():
    df = visits()
    src = pp.source(df, unit="pid", max_records=5)
    r = pp.privacy_report(bars(src))
    assert r.unit_line == f"privacy unit: {PID_WORDS}"
    assert f"privacy unit: {PID_WORDS}" in str(r)
    assert r.table["unit"].iloc[0] == PID_WORDS
    plain = pp.privacy_report(bars(df, seed=6))
    assert plain.unit_line == "privacy unit: one row"
    assert any("a person with k rows" in n for n in plain.notes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seed 4 on another frame object
        both = pp.privacy_report([bars(src), bars(df, seed=5)])
    assert both.unit_line.startswith("privacy units differ")
    assert "one row (layer 0 of plot 2)" in both.unit_line
    cells = pp.source(df, unit="pid", max_records=5, max_cells=2)
    assert pp.privacy_report(bars(cells)).unit_line.endswith(
        "in at most 2 cells of a layer; records without an id left out"
    )


def test_bundle_records_the_unit(tmp_path, key_file):
    src = pp.source(visits(), unit="pid", max_records=5)
    pp.save_release(bars(src), tmp_path / "b", dpi=20)
    meta = json.loads((tmp_path / "b" / "results.json").read_text())
    out = meta["results"]["output_0"]["properties"]
    assert out["privacy_unit"] == PID_WORDS
    assert out["releases"][0]["unit"] == PID_WORDS
    report = meta["plotnine_private"]["privacy_report"]
    assert report["privacy_unit"] == f"privacy unit: {PID_WORDS}"


def test_ledger_rows_carry_the_unit_and_bound(tmp_path, ledger_key):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="visits", cap_eps=10)
    try:
        src = pp.source(visits(), unit="pid", max_records=4)
        pp.dp_table(src, "c", eps=1, seed=1)
        pp.dp_table(visits(), "c", eps=1, seed=1)
        table = pp.ledger(path).table
    finally:
        pp.use_ledger(None)
    assert table["unit"].tolist() == ["pid", "one row"]
    assert table["bound"].tolist() == [4, 1]


# -- planning -----------------------------------------------------------------
def test_planning_follows_the_bound():
    one = pp.accuracy("count_dp", eps=1)
    assert pp.accuracy("count_dp", eps=2, max_records=2) == one
    assert pp.eps_for("count_dp", error=6, max_records=3) == pytest.approx(
        3 * pp.eps_for("count_dp", error=6), rel=2e-3
    )
    s1 = pp.accuracy("summary_dp", eps=1, bounds=(0, 10), fun="sum")
    s3 = pp.accuracy(
        "summary_dp", eps=1, bounds=(0, 10), fun="sum", max_records=3
    )
    assert s3 == pytest.approx(3 * s1, rel=0.01)
    with pytest.raises(pp.PlotninePrivateError, match="max_records"):
        pp.accuracy("count_dp", eps=1, max_records=0)


def test_a_sources_mask_is_computed_once_and_checked(monkeypatch):
    from plotnine_private import door

    calls = []
    real = door.bounded_mask

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(door, "bounded_mask", counting)
    df = visits()
    src = pp.source(df, unit="pid", max_records=2)
    a = built(bars(src)).layers[0].data
    b = built(bars(src)).layers[0].data  # the same figure again
    pp.dp_table(src, "c", eps=1, seed=4)  # and a table of the source
    assert len(calls) == 1
    assert a["count"].tolist() == b["count"].tolist()
    # another bound is another mask; so are changed units in place
    built(bars(pp.source(df, unit="pid", max_records=3)))
    df.loc[0, "pid"] = 10**6
    built(bars(src))
    assert len(calls) == 3


def test_the_docs_table_of_records_kept_is_what_its_code_prints(capsys):
    import re
    from pathlib import Path

    page = (
        Path(__file__).resolve().parents[1]
        / "docs"
        / "privacy-unit-and-budget.md"
    ).read_text()
    code = re.search(
        r"```python\n(import numpy as np\n.*?)```", page, re.S
    ).group(1)
    exec(compile(code, "docs", "exec"), {})
    printed = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    rows = re.findall(
        r"^\| (\d+) \| ([\d.]+)% \| ([\d.]+)% \| (\d+) \|$", page, re.M
    )
    assert len(rows) == len(printed) == 4
    for (k, kept, whole, noise), out in zip(rows, printed):
        assert out[0] == k
        assert float(out[1]) == round(float(kept) / 100, 3)
        assert float(out[2]) == round(float(whole) / 100, 3)
        assert pp.accuracy("count_dp", eps=1, max_records=int(k)) == float(
            noise
        )


def test_the_fast_hash_equals_the_engine_hash_at_the_edges():
    from plotnine_private.mechanisms.naming.idhash import (
        PRIME,
        SPAN,
        key_ints,
        key_ints_array,
    )

    rng = np.random.default_rng(11)
    edges = [0, 1, PRIME - 1, PRIME, PRIME + 1, PRIME * 7, SPAN - 1, SPAN]
    # longer than two chunks of the fast hash, edges at the end
    x = np.r_[rng.integers(0, 2**62, 300_000), edges, 2**62 - 1]
    for seed in (0, "pnp-bounding-v1:unit"):
        for scale in (SPAN, 97):
            assert (
                key_ints_array(x, seed, scale) == key_ints(x, seed, scale)
            ).all()


def test_max_cells_counts_only_where_it_is_enforced():
    from types import SimpleNamespace

    from plotnine_private.stats.count import stat_count_dp
    from plotnine_private.units import Unit

    stat = stat_count_dp(eps=1)
    stat.build = SimpleNamespace(door=SimpleNamespace(unit=Unit("pid", 4, 2)))
    # the mixin's mechanism: k only (a family that does not limit cells
    # must not lower its threshold)
    mech = stat.make_mechanism()
    assert (mech.records, mech.cells) == (4, None)
    # an empty layer states the same query as a full one
    df = visits()
    df["c"] = df["c"].astype(str)
    src = pp.source(df, unit="pid", max_records=4, max_cells=2)
    full = layer_releases(built(bars(src)).layers[0])[0]
    empty = built(
        bars(
            pp.source(
                df[df["pid"] < 0], unit="pid", max_records=4, max_cells=2
            )
        )
    )
    assert (
        layer_releases(empty.layers[0])[0].details["threshold"]
        == (full.details["threshold"])
    )
