"""Stream version 3: the cells of a whole public domain named by their
place, bound to the domain by its digest; SHAKE-128 heads a segment at a
time; the data digest in place order; the version a release records."""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from alpha import ALPHA, assert_dlap_moments
from engine_tables import duckdb_table
from keyfile import using_key
from neighbours import differences, snapshot
from plotnine import aes, facet_wrap, geom_bar, ggplot
from scipy import stats
from test_discrete_gaussian import _chi_square as _chi_square_gauss
from test_mechanisms_laplace import _chi_square_pmf
from test_table_declared_labels import CASES, PINNED, fingerprint

import plotnine_private as pp
from plotnine_private import dp_table
from plotnine_private._compat import build
from plotnine_private.cells import assemble, categorical_dimension
from plotnine_private.mechanisms.naming.cellnames import StrLabels, cell_words
from plotnine_private.mechanisms.release import engine
from plotnine_private.mechanisms.release.engine import Query
from plotnine_private.mechanisms.samplers import discrete_gaussian as dg
from plotnine_private.mechanisms.samplers import dlap_inversion as inv
from plotnine_private.mechanisms.samplers import laplace as lap
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams.places import (
    SEGMENT_BITS,
    PlaceStreams,
    column_digest,
    domain_digest,
    place_digest,
    place_index,
    table_streams,
)
from plotnine_private.mechanisms.streams.randomness import (
    CellStreams,
    derive_key,
    master_key,
)
from plotnine_private.mechanisms.streams.versions import (
    CellStreamsV2,
    stream_version,
    use_stream_version,
)

SEG = 1 << SEGMENT_BITS
KEY = derive_key(master_key(2027), "v3 test")
DOMAIN = hashlib.blake2b(b"a domain", digest_size=32).digest()


def _head_by_hand(key: bytes, domain: bytes, place: int) -> int:
    """Word ``place`` written out from the module docstring's definition,
    with hashlib alone."""
    head_key = hashlib.blake2b(
        domain, key=key[:16], digest_size=32, person=b"pnp-v3-head"
    ).digest()
    prefix = b"plotnine_private stream v3 place\0" + head_key
    seg, at = divmod(place, SEG)
    out = hashlib.shake_128(prefix + seg.to_bytes(8, "little"))
    return int.from_bytes(out.digest(8 * (at + 1))[-8:], "little")


def test_place_heads_are_shake128_words_written_by_hand():
    n = 2 * SEG + 5  # three segments, the last one short
    streams = PlaceStreams(KEY, DOMAIN, n)
    heads = streams.heads()
    for place in (0, 1, SEG - 1, SEG, SEG + 1, 2 * SEG, n - 1):
        assert int(heads[place]) == _head_by_hand(KEY, DOMAIN, place)
    # each segment boundary starts a new SHAKE-128 read: no overlap
    assert heads[SEG] != heads[0] and heads[2 * SEG] != heads[SEG]


def test_a_subset_of_places_draws_what_the_whole_domain_draws():
    n = 3 * SEG + 17
    whole = PlaceStreams(KEY, DOMAIN, n).heads()
    rng = np.random.default_rng(3)
    idx = rng.choice(n, size=5000, replace=False)  # unsorted, 4 segments
    idx = np.concatenate([idx, [SEG - 1, SEG, n - 1]])
    assert np.array_equal(PlaceStreams(KEY, DOMAIN, n).heads(idx), whole[idx])
    # the words do not depend on how many places the domain has
    assert np.array_equal(
        PlaceStreams(KEY, DOMAIN, SEG + 3).heads(), whole[: SEG + 3]
    )
    full = lap.discrete_laplace(PlaceStreams(KEY, DOMAIN, n), (2, 1))
    part = lap.discrete_laplace(PlaceStreams(KEY, DOMAIN, n), (2, 1), idx)
    assert np.array_equal(part, full[idx])
    with pytest.raises(IndexError, match="places must lie"):
        PlaceStreams(KEY, DOMAIN, 10).heads(np.array([10]))


def test_the_noise_at_a_place_is_the_inversion_of_its_word():
    n = 4000
    got = lap.discrete_laplace(PlaceStreams(KEY, DOMAIN, n), (2, 1))
    floors = inv._table_floors(2, 1, 63)  # f_m for m = 1, 2, ...
    for place in range(0, n, 97):
        word = _head_by_hand(KEY, DOMAIN, place)
        u = word >> 1
        assert u not in floors  # decided by its head
        magnitude = sum(u < f for f in floors)
        want = -magnitude if word & 1 else magnitude
        assert int(got[place]) == want


def test_a_cell_past_its_head_reads_its_body_named_by_its_place():
    streams = PlaceStreams(KEY, DOMAIN, 50)
    head = streams.words(np.array([7]))
    assert int(head[0]) == _head_by_hand(KEY, DOMAIN, 7)
    body_key = hashlib.blake2b(
        DOMAIN, key=KEY[:16], digest_size=16, person=b"pnp-v3-body"
    ).digest()
    body = CellStreams(body_key, np.arange(50, dtype=np.uint64)[:, None])
    assert (
        streams.words(np.array([7])).tolist()
        == body.words(np.array([7])).tolist()
    )


@pytest.mark.parametrize("scale", [(1, 2), (2, 1), (20, 3)])
def test_v3_noise_matches_the_exact_pmf(scale):
    b = scale[0] / scale[1]
    domain = hashlib.blake2b(repr(scale).encode(), digest_size=32).digest()
    samples = lap.discrete_laplace(PlaceStreams(KEY, domain, 200_000), scale)
    chi2, df = _chi_square_pmf(samples, b)
    assert chi2 < stats.chi2.isf(ALPHA, df)
    assert_dlap_moments(samples, b)


@pytest.mark.parametrize("wrong", [1.9, 2.1])
def test_the_v3_chi_square_rejects_a_scale_off_by_five_percent(wrong):
    samples = lap.discrete_laplace(PlaceStreams(KEY, DOMAIN, 200_000), (2, 1))
    chi2, df = _chi_square_pmf(samples, wrong)
    assert chi2 > stats.chi2.isf(ALPHA, df)


def test_huge_scales_run_cks_on_the_place_bodies():
    assert inv.inversion_table(2000, 1) is None
    samples = lap.discrete_laplace(
        PlaceStreams(KEY, DOMAIN, 20_000), (2000, 1)
    )
    assert_dlap_moments(samples, 2000.0)


def test_the_discrete_gaussian_reads_place_streams_unchanged():
    # its proposals invert the heads, its acceptance trials read bodies
    streams = PlaceStreams(KEY, DOMAIN, 60_000)
    samples = dg.discrete_gaussian(streams, Fraction(9))
    assert streams._body_ready  # some cell read past its head
    chi2, df = _chi_square_gauss(samples, 9.0)
    assert chi2 < stats.chi2.isf(ALPHA, df)
    chi2, df = _chi_square_gauss(samples, 7.5)  # a wrong sigma fails
    assert chi2 > stats.chi2.isf(ALPHA, df)


def test_v3_numbers_are_pinned():
    # stream version 3 is a published format: these numbers must never
    # change (computed once by this code; the words are checked against
    # hashlib above)
    got = lap.discrete_laplace(PlaceStreams(KEY, DOMAIN, 8), (2, 1))
    assert got.tolist() == [1, 4, -1, -1, 6, 2, -4, 4]
    got = lap.discrete_laplace(PlaceStreams(KEY, DOMAIN, 8), (20, 3))
    assert got.tolist() == [5, 13, -3, -4, 20, 8, -12, 13]
    frame = pd.DataFrame(
        {"x": pd.Categorical(list("aabbbcd" * 3), categories=list("abcdefgh"))}
    )
    assert stream_version() == 3
    assert dp_table(frame, "x", eps=1, seed=7)["count"].tolist() == PIN_TABLE


PIN_TABLE = [8, 10, 2, 3, 0, 0, 0, 9]


# -- the digests -----------------------------------------------------------
def test_a_column_digest_is_the_same_for_every_form_of_its_values():
    labels = [f"c{i}" for i in range(300)] + ["é", ""]
    as_buffer = column_digest(StrLabels.of(labels))
    assert column_digest(labels) == as_buffer
    assert column_digest(np.asarray(labels, dtype=object)) == as_buffer
    assert column_digest(labels[::-1]) != as_buffer  # order is content
    assert column_digest(np.arange(4)) == column_digest([0.0, 1.0, 2.0, 3.0])
    assert column_digest([1, "1"]) != column_digest(["1", 1])
    assert column_digest([("a", 1)]) != column_digest([("a", 2)])


def test_the_domain_digest_binds_sizes_order_and_levels():
    a, b = ["p", "q"], ["x", "y", "z"]
    base = domain_digest([2, 3], [[a], [b]])
    assert domain_digest([3, 2], [[b], [a]]) != base  # dims' order
    assert domain_digest([2, 3], [[a], [["x", "y", "w"]]]) != base
    assert domain_digest([2, 3], [[a, a], [b]]) != base  # columns
    assert domain_digest([2, 3], [[a], [b]]) == base


def test_the_data_digest_hashes_counts_in_place_order():
    n = np.array([3, 0, 300, 2])
    base = place_digest(DOMAIN, n)
    assert place_digest(DOMAIN, n.astype(np.int32)) == base  # values only
    assert place_digest(DOMAIN, n[::-1]) != base  # places, not a set
    assert place_digest(DOMAIN, n + np.array([0, 1, 0, 0])) != base
    assert place_digest(DOMAIN[::-1], n) != base
    assert place_digest(DOMAIN, n, np.zeros(4, np.int64)) != base


# -- tables and plots --------------------------------------------------------
def _declared(categories=None) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    cats = [f"L{i}" for i in range(120)] if categories is None else categories
    x = np.asarray(sorted(cats), dtype=object)[rng.integers(0, 120, 900)]
    return pd.DataFrame({"x": pd.Categorical(x, categories=cats)})


def _charged(fn):
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        out = fn()
    finally:
        engine.set_charge_hook(previous)
    return out, seen


def test_a_v3_table_draws_by_place_and_never_names_its_cells():
    frame = _declared()
    x = categorical_dimension("x", frame["x"], list(frame["x"].cat.categories))
    table, _ = assemble([x])
    assert "words" not in vars(table)  # not made
    assert isinstance(table_streams(KEY, table), PlaceStreams)
    with use_stream_version(2):
        assert type(table_streams(KEY, table)) is CellStreamsV2
    # read on demand, they are the words versions 1 and 2 name cells by
    assert table.words.tolist() == cell_words(x.content[0]).tolist()
    seen = categorical_dimension("x", frame["x"].astype(str), None)
    observed, _ = assemble([seen])  # not public: named by words
    assert observed.places is None
    assert type(table_streams(KEY, observed)) is CellStreamsV2


def test_v3_identities_differ_from_v2_and_name_labels_by_digest():
    labels = tuple(f"c{i}" for i in range(100))
    as_tuple = Query.make("count", "data", 1, domain=labels)
    as_buffer = Query.make("count", "data", 1, domain=StrLabels.of(labels))
    with use_stream_version(2):
        v2 = as_tuple.identity()
        assert as_buffer.identity() == v2
    assert as_tuple.identity() == as_buffer.identity() != v2
    other = Query.make("count", "data", 1, domain=labels[::-1])
    assert other.identity() != as_tuple.identity()


@pytest.mark.parametrize("case", CASES)
def test_v3_tables_keep_the_cells_name_and_agree_across_label_forms(case):
    v3 = fingerprint(case, version=3)
    want = PINNED[case]
    # the cells' name does not depend on the stream version; the
    # identity and the data digest do
    assert v3["cells"] == want["cells"]
    assert v3["dtypes"] == want["dtypes"] and v3["labels"] == want["labels"]
    assert v3["identity"] != want["identity"]
    assert v3["digest"] != want["digest"]
    if case in ("python_str", "arrow_dtype", "object"):
        # another session: no seed-reuse warning
        current_session().sources.clear()
        assert v3 == fingerprint("arrow_str", version=3)


def test_a_domain_declared_in_another_order_is_another_release():
    cats = [f"L{i}" for i in range(120)]
    a, seen_a = _charged(lambda: dp_table(_declared(cats), "x", eps=1, seed=4))
    current_session().sources.clear()
    b, seen_b = _charged(
        lambda: dp_table(_declared(cats[::-1]), "x", eps=1, seed=4)
    )
    assert seen_a[0].identity != seen_b[0].identity
    assert seen_a[0].digest != seen_b[0].digest
    # same true counts per label, drawn afresh: the noise is not carried
    # over to the label's new place
    a = a.set_index("x")["count"]
    b = b.set_index("x")["count"].loc[a.index]
    assert (a.to_numpy() != b.to_numpy()).mean() > 0.5


def test_neighbouring_v3_tables_differ_in_counts_only():
    frame = _declared()
    other = frame.copy()
    other.loc[17, "x"] = "L3" if other.loc[17, "x"] != "L3" else "L4"
    a, seen_a = _charged(lambda: dp_table(frame, "x", eps=1.0, seed=9))
    current_session().sources.clear()
    b, seen_b = _charged(lambda: dp_table(other, "x", eps=1.0, seed=9))
    assert a["x"].tolist() == b["x"].tolist()
    assert list(a.dtypes) == list(b.dtypes)
    assert seen_a[0].identity == seen_b[0].identity
    assert seen_a[0].cells == seen_b[0].cells
    assert seen_a[0].digest != seen_b[0].digest  # the data enter the noise
    assert (a["count"] != b["count"]).mean() > 0.5


def test_neighbouring_v3_plots_differ_only_in_noisy_numbers(mpg_cat):
    def make(d):
        return (
            ggplot(d, aes("class", fill="drv"))
            + geom_bar(stat="count_dp", eps=1, seed=11)
            + facet_wrap("year")
        )

    other = mpg_cat.copy()
    other.loc[3, "class"] = (
        "suv" if other.loc[3, "class"] != "suv" else "midsize"
    )
    with use_stream_version(3):
        a, b = snapshot(make(mpg_cat)), snapshot(make(other))
    assert differences(a, b) == []
    assert {
        r["stream_version"] for r in a["report"] if r["layer"] != "total"
    } == {3}


def test_a_v3_table_equals_the_plot_in_memory_and_in_duckdb(mpg):
    pytest.importorskip("duckdb")
    d = mpg[["class", "drv"]].copy()
    levels = {"class": sorted(d["class"].unique()), "drv": ["4", "f", "r"]}
    for col, cats in levels.items():
        d[col] = pd.Categorical(d[col], categories=cats)
    p = ggplot(d, aes("class", fill="drv")) + geom_bar(
        stat="count_dp", eps=1, seed=13
    )
    bars = build(p).layers[0].data
    table = dp_table(d, "class", groups="drv", eps=1, seed=13)
    current_session().sources.clear()
    in_db = dp_table(
        duckdb_table(d.astype(str), levels),
        "class",
        groups="drv",
        eps=1,
        seed=13,
    )
    assert in_db["count"].tolist() == table["count"].tolist()
    assert sorted(bars["count"]) == sorted(table["count"])


def test_the_bundle_and_report_tell_stream_version_3(tmp_path):
    frame = _declared()
    p = ggplot(frame, aes("x")) + geom_bar(stat="count_dp", eps=1, seed=3)
    rows = pp.privacy_report(p).to_dict()["releases"]
    assert {r["stream_version"] for r in rows if r["layer"] != "total"} == {3}
    with using_key():
        out = pp.save_release(p, tmp_path / "v3")
    meta = json.loads((out / "results.json").read_text())
    (rec,) = meta["results"].values()
    assert [r["stream_version"] for r in rec["properties"]["releases"]] == [3]


def test_a_release_names_its_cells_when_read_and_a_copy_drops_places():
    import dataclasses

    frame = _declared()
    x = categorical_dimension("x", frame["x"], list(frame["x"].cat.categories))
    table, _ = assemble([x])
    query = Query.make("count", "data", 3, aes=(("x", "x"),), domain="d")
    mech = engine.LaplaceCounts(eps=1.0)
    released = engine.release_cells(
        Query.make(
            "count",
            "data",
            3,
            aes=(("x", "x"),),
            domain="d",
            **mech.parameters(),
        ),
        table,
        mech,
        domain="public",
    )
    rel = released.release
    assert "_cells_name" not in vars(rel)  # not made yet
    assert rel.cells_name == engine.cells_name(query) != ""
    assert vars(rel)["_cells_name"] == rel.cells_name  # made once
    # a copy may list other cells: it is named by its words
    copy = dataclasses.replace(table, n=table.n + 1)
    assert table.by_place() and copy.places is None and not copy.by_place()


def test_without_an_active_ledger_no_charge_is_built():
    pp.use_ledger(None)  # the test's session restores it
    assert not engine.charging()  # the package's hook: not listening
    previous = engine.set_charge_hook([].extend)  # a plain hook: always
    try:
        assert engine.charging()
    finally:
        engine.set_charge_hook(previous)


@pytest.mark.parametrize("sizes", [[1, 7], [2, 3, 4], [3, 1, 5, 2], [9]])
def test_the_place_index_is_the_mixed_radix_of_each_place(sizes):
    places = np.arange(int(np.prod(sizes)))
    want = np.column_stack(np.unravel_index(places, sizes))
    assert place_index(sizes).tolist() == want.tolist()
