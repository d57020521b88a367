"""Stream version 4 (issue 39): a public domain of floats is named by one
digest of its float64 buffer, in the identity and the domain digest
alike. Opt-in only: version 3 stays the default and its numbers are
unchanged (pinned in test_streams_v3.py and test_table_declared_labels.py).
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp
import plotnine_private.mechanisms.release.engine as engine
from plotnine_private.cells import as_floats
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.families.levels import FloatSequence, Levels
from plotnine_private.mechanisms.naming.cellnames import (
    FloatLevels,
    float_column,
    float_digest,
)
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams import places
from plotnine_private.mechanisms.streams.randomness import _canonical_chunks
from plotnine_private.mechanisms.streams.versions import (
    stream_version,
    use_stream_version,
)


def _digest_by_definition(values) -> bytes:
    """float_digest written float by float."""
    h = hashlib.sha256(b"plotnine_private v4 floats\0%d <f8 " % len(values))
    for v in values:
        v = float(v)
        v = 0.0 if v == 0 else (float("nan") if v != v else v)
        h.update(struct.pack("<d", v))
    return h.digest()


EDGES = [
    [-(2**63), -5, 0, 3, 2**53 - 1, 2**63 - 1],  # int64 extremes
    [-0.0, 0.5, -1e300, 1e-300, 2.0**60],
    [float("nan"), 1.0],
    [],
]


@pytest.mark.parametrize("values", EDGES)
def test_the_float_digest_is_the_float_by_float_definition(values):
    want = _digest_by_definition(values)
    assert float_digest(values) == want
    assert float_digest(np.array(values, dtype=float)) == want
    ro = np.array(values, dtype=float)
    ro.flags.writeable = False
    assert float_digest(ro) == want  # first: made; then: the kept one
    assert float_digest(ro) == want


def test_a_view_is_digested_afresh_after_its_base_changes():
    base = np.arange(100.0)
    view = base[:]
    view.flags.writeable = False
    first = float_digest(view)
    base[0] = 7.0
    assert float_digest(view) != first
    assert float_digest(view) == _digest_by_definition(base.tolist())


def test_the_digest_tells_levels_apart():
    a = float_digest([1.0, 2.0])
    assert a != float_digest([2.0, 1.0])  # order
    assert a != float_digest([1.0, 2.0, 3.0])  # length
    assert float_digest([]) != float_digest([0.0])
    assert float_digest([0.0]) == float_digest([-0.0])  # one level


def test_float_columns_are_floats_only():
    assert float_column([1.0, np.float64(2.0)]).tolist() == [1.0, 2.0]
    for other in ([1, 2.0], [True], ["1.0"], [], np.array([1, 2])):
        assert float_column(other) is None
    obj = np.array([1.0, 2.5], dtype=object)
    assert float_column(obj).tolist() == [1.0, 2.5]


def test_version_four_is_opt_in_and_named_in_the_error():
    assert stream_version() == 3  # the default is unchanged
    with use_stream_version(4):
        assert stream_version() == 4
    assert stream_version() == 3
    with pytest.raises(Exception, match=r"\(1, 2, 3, 4\).*got 5"):
        use_stream_version(5)


def test_the_identity_names_many_floats_by_their_digest_only_in_v4():
    def named(part, floats=False):
        return b"".join(_canonical_chunks(part, True, floats))

    floats = tuple(float(i) for i in range(-3, 97))
    levels = FloatLevels(np.array(floats))
    v3 = named(("q", levels))
    assert named(("q", floats)) == v3  # the buffer names the tuple
    assert b"F:" not in v3
    v4 = named(("q", levels), floats=True)
    assert named(("q", floats), floats=True) == v4 != v3
    assert v4.endswith(b"F:" + levels.digest())
    # 64 floats or fewer, and ints, keep their texts
    few = floats[:64]
    assert named(few, floats=True) == named(few)
    ints = tuple(range(100))
    assert named(ints, floats=True) == named(ints)


def test_the_domain_digest_of_floats_in_v4_is_one_digest_per_column():
    col = np.arange(-5.0, 200.0)
    objects = np.array(col.tolist(), dtype=object)
    v3 = places.domain_digest([len(col)], [[col]])
    assert places.domain_digest([len(col)], [[objects]]) == v3
    with use_stream_version(4):
        v4 = places.domain_digest([len(col)], [[col]])
        assert places.domain_digest([len(col)], [[objects]]) == v4
        assert places.column_digest(col) == float_digest(col)
        # strings and ints keep their digests of version 3
        named = places.column_digest(["a", "b"]), places.column_digest([1])
    assert v4 != v3
    assert named == (
        places.column_digest(["a", "b"]),
        places.column_digest([1]),
    )


# -- the table and the plot, in version 4 ----------------------------------
LEVELS = list(range(-40, 160))  # negative ints, more than 64 levels


@pytest.fixture(scope="module")
def records() -> pd.DataFrame:
    rng = np.random.default_rng(39)
    x = rng.integers(-50, 170, size=3000).astype(float)
    x[::101] = np.nan
    return pd.DataFrame({"x": x})


def _plot_counts(data, levels, seed) -> pd.Series:
    """The plot's count of each x, from its built layer."""
    p = ggplot(data, aes("x")) + geom_bar(
        stat="count_dp", eps=1, seed=seed, levels=levels
    )
    d = pp._compat.build(p).layers[0].data
    return pd.Series(d["count"].to_numpy(), index=d["x"].to_numpy())


@pytest.mark.parametrize(
    "given",
    [
        LEVELS,
        tuple(LEVELS),
        range(-40, 160),
        [float(v) for v in LEVELS],
        np.array(LEVELS),
    ],
    ids=["list", "tuple", "range", "floats", "array"],
)
def test_a_v4_table_is_the_same_for_every_form_of_the_levels(records, given):
    with use_stream_version(4):
        want = pp.dp_table(records, "x", eps=1, seed=5, levels=LEVELS)
        got = pp.dp_table(records, "x", eps=1, seed=5, levels=given)
    assert got["count"].tolist() == want["count"].tolist()
    assert [float(v) for v in got["x"]] == [float(v) for v in LEVELS]


def test_a_v4_table_draws_other_numbers_than_v3(records):
    v3 = pp.dp_table(records, "x", eps=1, seed=5, levels=LEVELS)
    with use_stream_version(4):
        v4 = pp.dp_table(records, "x", eps=1, seed=5, levels=LEVELS)
    assert v3["x"].tolist() == v4["x"].tolist()
    assert (v3["count"] != v4["count"]).mean() > 0.5
    # both noisy: most counts are not the true ones
    true = (
        records["x"]
        .value_counts()
        .reindex([float(v) for v in LEVELS], fill_value=0)
    )
    assert (v4["count"].to_numpy() != true.to_numpy()).mean() > 0.5


@pytest.mark.parametrize("version", [3, 4])
def test_a_table_and_its_plot_release_the_same_counts(records, version):
    with use_stream_version(version):
        table = pp.dp_table(records, "x", eps=1, seed=5, levels=LEVELS)
        current_session().sources.clear()
        plot = _plot_counts(records, LEVELS, seed=5)
    xs = table["x"].astype(float).to_numpy()
    assert set(plot.index) <= set(xs) and len(plot) > 150
    got = pd.Series(table["count"].to_numpy(), index=xs)[plot.index]
    assert got.tolist() == plot.tolist()


#: dp_table(records, "x", eps=1, seed=5, levels=LEVELS) under version 4
#: when it was made: the first 12 counts, a digest of all, the identity
#: and the cells' name (a change to any is a change of version 4)
PINNED_V4 = (
    [18, 26, 11, 8, 17, 14, 10, 8, 19, 11, 17, 23],
    "22a59839f8c0f340",
    "ad8aed224c73a72fdd46f742",
    "744c26b2978dc898971ed515",
)


def test_version_four_releases_its_pinned_numbers(records):
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        with use_stream_version(4):
            t = pp.dp_table(records, "x", eps=1, seed=5, levels=LEVELS)
    finally:
        engine.set_charge_hook(previous)
    counts = t["count"].to_numpy()
    got = (
        counts[:12].tolist(),
        hashlib.sha256(counts.tobytes()).hexdigest()[:16],
        seen[0].identity,
        seen[0].cells,
    )
    assert got == PINNED_V4


def test_neighbouring_v4_tables_differ_in_counts_only(records):
    other = records.copy()
    other.loc[17, "x"] = 12.0  # one record changed
    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        with use_stream_version(4):
            a = pp.dp_table(records, "x", eps=1.0, seed=4, levels=LEVELS)
            current_session().sources.clear()  # no reuse warning
            b = pp.dp_table(other, "x", eps=1.0, seed=4, levels=LEVELS)
    finally:
        engine.set_charge_hook(previous)
    assert list(a.columns) == list(b.columns)
    assert list(a.dtypes) == list(b.dtypes)
    assert a["x"].tolist() == b["x"].tolist()
    assert seen[0].identity == seen[1].identity
    assert seen[0].cells == seen[1].cells
    assert seen[0].digest != seen[1].digest  # the data enter the noise
    assert (a["count"] != b["count"]).mean() > 0.5


def test_levels_one_as_floats_are_refused_in_v4(records):
    with (
        use_stream_version(4),
        pytest.raises(PlotninePrivateError, match="one category twice"),
    ):
        pp.dp_table(records, "x", eps=1, seed=1, levels=[2**63 - 1, 2**63 - 2])
    with (
        use_stream_version(4),
        pytest.raises(PlotninePrivateError, match="one category twice"),
    ):
        pp.dp_table(records, "x", eps=1, seed=1, levels=[*range(70), 4.0])


# -- the bulk paths of numeric levels (every version) -----------------------
@pytest.mark.parametrize(
    "given",
    [range(-5, 6), range(10, -10, -3), range(0), range(2**53, 2**53 + 3)],
)
def test_a_range_is_read_as_its_floats(given):
    want = (
        np.array([float(v) for v in given])
        if len(given) and abs(given[-1]) < 2**53 and abs(given[0]) < 2**53
        else None
    )
    got = as_floats(given)
    if want is None:
        assert got is None or got.tolist() == [float(v) for v in given]
    else:
        assert got.tolist() == want.tolist()
    fam = Levels(given, numeric=True)
    assert list(fam.declared) == sorted(float(v) for v in given)


def test_numeric_levels_are_one_float_array():
    fam = Levels([3, 1, 2.5], numeric=True)
    assert isinstance(fam.declared, FloatSequence)
    assert list(fam.declared) == [1.0, 2.5, 3.0]
    assert fam.declared == [1.0, 2.5, 3.0] and fam.declared[0] == 1.0
    assert fam.declared[1:] == [2.5, 3.0]
    assert fam.order.tolist() == [1, 2, 0]
    assert not fam.numbers.flags.writeable
    assert Levels(["a"], numeric=False).declared == ["a"]
    assert Levels(range(2)).declared == [0, 1]  # discrete: a list


def test_int_levels_read_in_bulk_are_their_floats():
    rng = np.random.default_rng(7)
    ints = rng.integers(-(2**63), 2**63 - 1, size=2000, dtype=np.int64)
    values = [int(v) for v in ints]
    values += [2**53 + 1, -(2**53) - 1, 2**63 - 1, -(2**63), 0, -1]
    assert as_floats(values).tolist() == [float(v) for v in values]
    big = [*values, 2**64]  # beyond int64: float() of each
    assert as_floats(big).tolist() == [float(v) for v in big]
    assert as_floats([1, 2.5]).tolist() == [1.0, 2.5]
    assert as_floats([1, np.int64(2)]) is None  # numpy scalars: one by one


def test_v4_tables_agree_across_engines(records):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    con = duckdb.connect()
    con.register("t", records)
    with use_stream_version(4):
        want = pp.dp_table(records, "x", eps=1, seed=2, levels=LEVELS)
        for data in (pp.source(con.table("t")), pl.from_pandas(records)):
            current_session().sources.clear()
            got = pp.dp_table(data, "x", eps=1, seed=2, levels=LEVELS)
            assert got["count"].tolist() == want["count"].tolist()
            assert got["x"].tolist() == want["x"].tolist()
