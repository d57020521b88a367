"""The order a unit's records are kept in: ``pnp-bounding-v2`` (one keyed
hash of (unit, record)) by default, ``pnp-bounding-v1`` (two nested
hashes) on request.

Each order is checked for what the privacy argument and the parity of
engines rest on: numpy and engine expressions compute the same keys; the
order is uniform over a unit's records (no record is favoured by its
identifier) and differs between units; the release identity names the
order of a bounded query only, so one-row releases and ``v1`` releases
keep the identity (and the noise) they had before ``v2``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_bar, ggplot
from test_engine_units import TRUE, _released, _source

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.door import _kept_labels, layer_releases
from plotnine_private.engines.bounding import order_key_stages
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.identifiers import content_ids, value_words
from plotnine_private.mechanisms.naming.idhash import (
    LOW,
    PRIME,
    SPAN,
    key_ints,
    pair_keys,
    pair_keys_array,
    unit_parts_array,
)
from plotnine_private.mechanisms.release.bounding import (
    BOUNDINGS,
    bounded_mask,
    cells_mask,
    labels,
    order_keys,
)
from plotnine_private.mechanisms.release.engine import Query
from plotnine_private.units import ONE_ROW, Unit, with_unit

duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")
nw = pytest.importorskip("narwhals")

EDGES = [0, 1, PRIME - 1, PRIME, PRIME + 1, LOW - 1, LOW, SPAN - 1, SPAN]


# -- the hash ---------------------------------------------------------------
def test_the_fast_pair_hash_equals_the_plain_one_at_the_edges():
    rng = np.random.default_rng(5)
    # longer than two chunks of the fast hash, edges on both sides
    n = 300_000
    u = np.r_[rng.integers(0, 2**62, n), EDGES, EDGES[::-1], 2**62 - 1]
    r = np.r_[rng.integers(0, 2**62, n), EDGES, EDGES, 0]
    for seed in ("pnp-bounding-v2:record", 7):
        want = pair_keys(u, r, seed)
        got = pair_keys_array(unit_parts_array(u, seed), r, seed)
        assert (got == want).all()
        assert want.min() >= 0
        # the record's low bits are the tie break below the hash
        assert ((want % LOW) == (r % LOW)).all()
        assert (want // LOW < PRIME).all()


def test_v1_keeps_the_records_it_kept_before_v2():
    """``v1`` is the former formula, written out here from its definition
    (two nested eight-round hashes)."""
    rng = np.random.default_rng(8)
    u = rng.integers(0, 50, 2000)
    r = rng.integers(0, 2**62, 2000)
    for salt in (None, "s"):
        base = "pnp-bounding-v1" + ("" if salt is None else f":{salt}")
        hu = key_ints(u, base + ":unit")
        want = key_ints((hu + r % SPAN) % SPAN, base + ":record")
        assert (order_keys(u, r, salt, "v1") == want).all()
        assert labels(salt) == (base + ":unit", base + ":record")
    assert not (order_keys(u, r) == order_keys(u, r, None, "v1")).all()


@pytest.mark.parametrize("bounding", ["v1", "v2"])
@pytest.mark.parametrize("kind", ["duckdb", "polars_lazy"])
def test_engine_keys_equal_numpy_for_both_orders(kind, bounding):
    ids = pd.DataFrame(
        {
            "person": np.array([0, 1, 5, 2**40 + 3, 2**62 - 1, LOW], np.int64),
            "rid": np.array([2**62 - 1, 0, 99, LOW, 7, PRIME], np.int64),
        }
    )
    for salt in (None, "wave 2"):
        if kind == "duckdb":
            frame = nw.from_native(duckdb.from_df(ids))
        else:
            frame = nw.from_native(pl.from_pandas(ids).lazy())
        stages = order_key_stages(
            nw.col("person"), nw.col("rid"), salt, "k", bounding
        )
        for stage in stages:
            frame = frame.with_columns(**stage)
        got = frame.select("person", "k").collect().to_pandas()
        got = got.sort_values("person")["k"].to_numpy()
        ids_sorted = ids.sort_values("person")
        want = order_keys(
            ids_sorted["person"].to_numpy(),
            ids_sorted["rid"].to_numpy(),
            salt,
            bounding,
        )
        assert got.tolist() == want.tolist()


def _keep_rates(mask: np.ndarray, units: int, n: int) -> np.ndarray:
    return mask.reshape(units, n).sum(axis=0)


def _chi2(counts: np.ndarray, expected: float) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.parametrize("bounding", ["v1", "v2"])
def test_the_order_is_uniform_over_a_units_records(bounding):
    """20,000 units of 10 records with identifiers 0..9 (the worst case:
    consecutive ids) keep 3 each: every identifier is kept in 30% of the
    units, and keeping one record says nothing of its neighbour beyond
    the 2/9 chance. Chi-square with 9 degrees of freedom: the 1e-4 upper
    quantile is 33.7. The control ranks by the identifier and fails."""
    units, n, k = 20_000, 10, 3
    u = np.repeat(np.arange(units) * 7919 + 11, n)
    r = np.tile(np.arange(n), units)
    mask = bounded_mask(u, r, k, None, bounding)
    expected = units * k / n
    assert _chi2(_keep_rates(mask, units, n), expected) < 33.7
    kept = mask.reshape(units, n)
    both = kept[kept[:, 0], 1].mean()
    assert both == pytest.approx(2 / 9, abs=0.015)
    # the control: by identifier, records 0..2 are always kept
    by_id = (r < k).astype(bool)
    assert _chi2(_keep_rates(by_id, units, n), expected) > 1000


def test_two_units_order_the_same_identifiers_differently():
    r = np.arange(40)
    orders = {
        tuple(np.argsort(order_keys(np.full(40, u), r))) for u in range(50)
    }
    assert len(orders) == 50


def test_cells_follow_the_order_too():
    rng = np.random.default_rng(2)
    u = rng.integers(0, 30, 3000)
    cells = rng.integers(0, 40, 3000)
    for bounding in ("v1", "v2"):
        keep = cells_mask(u, cells, 2, None, bounding)
        per_unit = pd.DataFrame({"u": u, "c": cells})[keep]
        assert per_unit.groupby("u")["c"].nunique().max() == 2
    a, b = (cells_mask(u, cells, 2, None, v) for v in ("v1", "v2"))
    assert not (a == b).all()


# -- the declaration and the release identity ---------------------------------
def test_bounding_is_checked_where_it_is_declared():
    df = pd.DataFrame({"pid": [1, 1], "c": ["a", "b"]})
    with pytest.raises(PlotninePrivateError, match=r"bounding='v3'.*'v2'"):
        pp.source(df, unit="pid", max_records=1, bounding="v3")
    with pytest.raises(PlotninePrivateError, match="bounding='v1' needs"):
        pp.source(df, bounding="v1")
    assert pp.source(df, unit="pid", max_records=1).unit.bounding == "v2"


def _bars(data):
    return ggplot(data, aes("c")) + geom_bar(stat="count_dp", eps=1, seed=4)


def _release(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return layer_releases(build(_bars(data)).layers[0])[0]


def test_the_order_is_in_the_identity_of_bounded_releases_only():
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {
            "pid": rng.integers(0, 40, 400),
            "c": pd.Categorical(rng.choice(list("abc"), 400)),
        }
    )
    assert ONE_ROW.query_parts() == {}
    # one row a unit: the identity of a plain frame, as before v2
    assert _release(pp.source(df)).identity == _release(df).identity
    v2 = _release(pp.source(df, unit="pid", max_records=2))
    v1 = _release(pp.source(df, unit="pid", max_records=2, bounding="v1"))
    assert v1.identity != v2.identity
    # v1 has the parts (so the identity) it had before orders had names
    q = Query.make("count", "data", 4, eps=1.0)
    p1 = dict(with_unit(q, Unit("pid", 2, bounding="v1")).parts)
    p2 = dict(with_unit(q, Unit("pid", 2)).parts)
    assert "bounding" not in p1
    assert p2 == {**p1, "bounding": BOUNDINGS["v2"]}


@pytest.mark.parametrize("kind", ["polars", "duckdb", "polars_lazy"])
def test_v1_gives_the_same_numbers_in_memory_and_in_engines(kind):
    unit = {
        "unit": "person",
        "max_records": 2,
        "record_id": "rid",
        "bounding": "v1",
    }
    make = TRUE["count_dp"]
    want = _released(make(_source("pandas", None, **unit)))
    got = _released(make(_source(kind, None, **unit)))
    cols = ["PANEL", "x", "count"]
    pd.testing.assert_frame_equal(got[cols], want[cols])
    v2 = _released(make(_source("pandas", None, **{**unit, "bounding": "v2"})))
    # another order keeps other records (the counts differ somewhere)
    assert not v2["count"].equals(want["count"])


# -- content identifiers and kept rows ----------------------------------------
def test_content_ids_v2_read_values_not_positions_or_types_of_storage():
    a = pd.DataFrame(
        {
            "x": [0.0, -0.0, np.nan, 1.5],
            "n": [1, 2, 3, 4],
            "g": pd.Categorical(["a", "b", None, "a"], categories=["a", "b"]),
            "s": ["p", "q", "r", None],
        }
    )
    ids = content_ids(a)
    assert ids[0] != ids[1]  # n differs
    b = a.copy()
    b["x"] = [-0.0, 0.0, float("nan"), 1.5]
    b["n"] = b["n"].astype(np.int32)
    b["g"] = pd.Categorical(b["g"], categories=["z", "b", "a"])
    assert (content_ids(b) == ids).all()
    # positions pick rows; the order of rows does not change their ids
    assert (content_ids(a, np.array([3, 0])) == ids[[3, 0]]).all()
    assert (content_ids(a.iloc[::-1]) == ids[::-1]).all()
    # every column counts, and in its place
    c = a.copy()
    c.loc[3, "s"] = "p"
    assert (content_ids(c) != ids).tolist() == [False, False, False, True]
    swapped = a.rename(columns={"x": "y"})[["n", "y", "g", "s"]]
    assert (content_ids(swapped) != ids).all()
    assert ids.min() >= 0 and ids.max() < 2**62
    # v1 is pandas' row hash of the values' words
    words = pd.DataFrame({c: value_words(a[c]) for c in a.columns})
    hashed = pd.util.hash_pandas_object(words, index=False).to_numpy(np.uint64)
    v1 = (hashed >> np.uint64(2)).astype(np.int64)
    assert (content_ids(a, bounding="v1") == v1).all()


def test_kept_rows_are_found_by_label():
    keep = np.array([True, False, True, True, False])
    idx = pd.RangeIndex(10, 15)
    labels = pd.Index([14, 12, 10, 11])  # reordered, as by facets
    assert _kept_labels(idx, labels, keep).tolist() == [
        False,
        True,
        True,
        False,
    ]
    # labels outside the rows' range, or another index: by lookup
    outside = pd.Index([9, 12])
    assert _kept_labels(idx, outside, keep).tolist() == [False, True]
    named = pd.Index(list("abcde"))
    assert _kept_labels(named, pd.Index(["e", "c"]), keep).tolist() == [
        False,
        True,
    ]
    # repeated labels: by position
    dup = pd.Index([0, 0, 1, 1, 2])
    assert _kept_labels(dup, dup, keep) is keep


def test_unit_dataclass_default_order_is_v2():
    assert Unit("p", 2).bounding == "v2"
    assert Unit("p", 2).query_parts()["bounding"] == "pnp-bounding-v2"
