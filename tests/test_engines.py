"""Tables in an engine (``pp.source``): the same released numbers as the
in-memory path, for every pushable stat, DP and CKM, through DuckDB,
Polars (lazy) and Spark (local mode); clear errors for what cannot be
pushed down; record keys from a row identifier, equal everywhere."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from domain_spies import guard_rows, same_domain, spy_domains
from engine_tables import duckdb_table
from plotnine import (
    aes,
    facet_grid,
    facet_wrap,
    geom_bar,
    geom_bin_2d,
    geom_boxplot,
    geom_count,
    geom_density,
    geom_histogram,
    geom_point,
    geom_step,
    ggplot,
    scale_x_log10,
)

import plotnine_private as pp
from plotnine_private import layer_data
from plotnine_private.engines import (
    push,
    record_key_expr,
    record_keys_sql,
    row_keys,
    source,
)
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.families import integer_keys, outside_as_nan
from plotnine_private.mechanisms.ptable.ckm import record_key_integers

duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")
nw = pytest.importorskip("narwhals")

N = 4000
PTABLE = pp.create_cnt_ptable(D=3, V=2.0, js=1)
FACETS = ["u", "v"]
COLOURS = ["red", "green", "blue", "none"]


def _records() -> pd.DataFrame:
    rng = np.random.default_rng(20261130)
    x = rng.normal(5, 2, N)
    x[:7] = np.nan  # missing positions are left out, as in memory
    x[7:9] = [0.0, 10.0]  # exactly on the outer edges
    y = rng.gamma(2, 2, N)
    d = pd.DataFrame(
        {
            "id": np.arange(N, dtype=np.int64),
            "g": rng.choice(["a", "b", "c", "d"], N),
            "c": rng.choice(COLOURS[:3], N),
            "f": rng.choice(FACETS, N),
            "k": rng.integers(0, 6, N),
            "x": x,
            "y": y,
            "xr": np.round(rng.uniform(0, 4, N) * 2) / 2,
            "yr": np.round(rng.uniform(0, 3, N) * 2) / 2,
            "w": rng.integers(1, 4, N).astype(float),
        }
    )
    return pp.add_record_keys(d, rng_seed=11, row_id="id")


RECORDS = _records()


def _pandas(d: pd.DataFrame) -> pd.DataFrame:
    out = d.copy()
    out["c"] = pd.Categorical(out["c"], categories=COLOURS)
    out["f"] = pd.Categorical(out["f"], categories=FACETS)
    return out


def _source(kind: str, request) -> object:
    d = RECORDS
    if kind == "pandas":
        return _pandas(d)
    if kind == "polars":
        lf = (
            pl.from_pandas(d)
            .lazy()
            .with_columns(
                pl.col("c").cast(pl.Enum(COLOURS)),
                pl.col("f").cast(pl.Enum(FACETS)),
            )
        )
        return source(lf)
    if kind == "duckdb":
        return duckdb_table(d, {"c": COLOURS, "f": FACETS})
    return request.getfixturevalue("spark_records")


@pytest.fixture(scope="session")
def spark_records(spark):
    # Spark has no enum type: public levels are declared on the source
    return source(
        spark.createDataFrame(RECORDS), levels={"c": COLOURS, "f": FACETS}
    )


ENGINES = ["duckdb", "polars", "spark"]


def _plots():
    """Every pushable family, DP and CKM, with groups and facets."""
    rk = {"rkey": "rkey"}
    return {
        "count_dp": lambda d: (
            ggplot(d, aes("g", fill="c"))
            + geom_bar(stat="count_dp", eps=1, seed=5)
            + facet_wrap("f")
        ),
        "count_dp_observed": lambda d: (
            ggplot(d, aes("k")) + geom_bar(stat="count_dp", eps=1, seed=6)
        ),
        "count_ckm": lambda d: (
            ggplot(d, aes("g", fill="c", weight="w", **rk))
            + geom_bar(stat="count_ckm", ptable=PTABLE)
            + facet_wrap("f")
        ),
        "bin_dp": lambda d: (
            ggplot(d, aes("x", fill="c"))
            + geom_histogram(
                stat="bin_dp",
                eps=0.5,
                seed=7,
                limits=(0, 10),
                bins=12,
                closed="left",
                pad=True,
            )
        ),
        # nothing to check outside the bins: the engine's short path
        "bin_plain_dp": lambda d: (
            ggplot(d, aes("x"))
            + geom_histogram(stat="bin_dp", eps=1, seed=4, limits=(0, 10))
        ),
        "bin_ckm": lambda d: (
            ggplot(d, aes("x", **rk))
            + geom_histogram(
                stat="bin_ckm",
                ptable=PTABLE,
                breaks=[0, 1, 2.5, 4, 5, 6, 8, 10],
            )
        ),
        "bin2d_dp": lambda d: (
            ggplot(d, aes("x", "y"))
            + geom_bin_2d(
                stat="bin2d_dp",
                eps=1,
                seed=8,
                limits=((0, 10), (0, 12)),
                bins=(10, 8),
            )
            + facet_wrap("f")
        ),
        "bin2d_ckm": lambda d: (
            ggplot(d, aes("x", "y", **rk))
            + geom_bin_2d(
                stat="bin2d_ckm",
                ptable=PTABLE,
                limits=((0, 10), (0, 12)),
                bins=7,
            )
        ),
        "binhex_dp": lambda d: (
            ggplot(d, aes("x", "y"))
            + pp.geom_hex(
                stat="binhex_dp",
                eps=1,
                seed=9,
                limits=((0, 10), (0, 12)),
                bins=9,
            )
        ),
        "binhex_ckm": lambda d: (
            ggplot(d, aes("x", "y", **rk))
            + pp.geom_hex(
                stat="binhex_ckm",
                ptable=PTABLE,
                limits=((0, 10), (0, 12)),
                bins=(6, 5),
            )
        ),
        "sum_dp": lambda d: (
            ggplot(d, aes("xr", "yr"))
            + geom_count(
                stat="sum_dp",
                eps=1,
                seed=10,
                limits=((0, 4), (0, 3)),
                resolution=(0.5, 0.5),
            )
        ),
        "sum_ckm": lambda d: (
            ggplot(d, aes("xr", "yr", **rk))
            + geom_count(stat="sum_ckm", ptable=PTABLE)
        ),
        # the fine-histogram stats (records beyond the limits clamped or
        # dropped in the engine as in memory)
        "density_dp": lambda d: (
            ggplot(d, aes("x", colour="c"))
            + geom_density(
                stat="density_dp", eps=1, seed=12, limits=(1, 9), bins=64
            )
        ),
        "ecdf_ckm": lambda d: (
            ggplot(d, aes("x", **rk))
            + geom_step(
                stat="ecdf_ckm",
                ptable=PTABLE,
                limits=(0, 10),
                outside="drop",
            )
        ),
        "boxplot_dp": lambda d: (
            ggplot(d, aes("c", "y"))
            + geom_boxplot(stat="boxplot_dp", eps=1, seed=13, limits=(0, 12))
        ),
    }


PLOTS = _plots()


def _released(plot) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return layer_data(plot)


# Spark is slow to answer small queries: one plot per kind of expression
# (raw categories with keys, weights and facets; bin edges; rounding to a
# grid; the hexagon arithmetic is test_privacy_unit_bounded_in_spark's,
# with its units' bound), the rest through DuckDB and Polars
SPARK_PLOTS = ("count_ckm", "bin_dp", "bin_plain_dp", "sum_dp")
#: plots on the short path, where Polars groups the records outside the
#: domain under NaN keys (families.outside_as_nan)
SHORT = ("bin_plain_dp", "binhex_dp", "bin2d_dp")
#: plots whose keys Spark groups as int64 (families.integer_keys)
SHORT_IN_SPARK = tuple(p for p in SHORT if p in SPARK_PLOTS)
CASES = [
    (engine, name)
    for name in sorted(PLOTS)
    for engine in ENGINES
    if engine != "spark" or name in SPARK_PLOTS
]


@dataclass
class InMemory:
    """The in-memory figure of a plot and, for each ``family_cells`` its
    door ran, what :func:`spy_domains` saw."""

    data: pd.DataFrame
    seen: list


@dataclass
class InEngine:
    """A plot's figure through an engine, with what its build did: the
    rows of each ``domain``/``family_cells`` call (:func:`guard_rows`),
    the stages Spark grouped by int64 keys and those Polars marked
    outside the domain."""

    data: pd.DataFrame
    calls: list
    cast: list
    marked: list


#: one build per plot and engine, read by every check of it (a build is
#: deterministic: same data, seed and key; the spies only watch)
_IN_MEMORY: dict[str, InMemory] = {}
_IN_ENGINE: dict[tuple[str, str], InEngine] = {}


def _in_memory(name: str, request) -> InMemory:
    if name not in _IN_MEMORY:
        with pytest.MonkeyPatch.context() as m:
            seen = spy_domains(m)
            data = _released(PLOTS[name](_source("pandas", request)))
        _IN_MEMORY[name] = InMemory(data, seen)
    return _IN_MEMORY[name]


def _in_engine(engine: str, name: str, request) -> InEngine:
    if (engine, name) not in _IN_ENGINE:
        cast: list = []  # Spark groups bins and hexagons by int64 keys
        marked: list = []  # Polars marks the records outside instead

        def spied(stages):
            cast.append(stages)
            return integer_keys(stages)

        def spied_marks(stages, inside):
            marked.append(stages)
            return outside_as_nan(stages, inside)

        with pytest.MonkeyPatch.context() as m:
            calls = guard_rows(m)
            m.setattr(push, "integer_keys", spied)
            m.setattr(push, "outside_as_nan", spied_marks)
            data = _released(PLOTS[name](_source(engine, request)))
        _IN_ENGINE[engine, name] = InEngine(data, calls, cast, marked)
    return _IN_ENGINE[engine, name]


@pytest.mark.parametrize(("engine", "name"), CASES)
def test_same_numbers_as_in_memory(engine, name, request):
    expected = _in_memory(name, request).data
    got = _in_engine(engine, name, request)
    assert len(expected) > 0
    # the short path (nothing to check outside the domain) in Spark
    assert bool(got.cast) == (engine == "spark" and name in SHORT_IN_SPARK)
    assert bool(got.marked) == (engine == "polars" and name in SHORT)
    pd.testing.assert_frame_equal(
        got.data.reset_index(drop=True), expected.reset_index(drop=True)
    )


# the checks of a domain declared from public parameters only (the
# subject of tests/test_family_domains.py), here because they read the
# builds above
@pytest.mark.parametrize("name", sorted(PLOTS))
def test_declared_domain_is_the_one_the_door_uses(name, request):
    """For every family, DP and CKM, the domain a fresh copy of the stat
    declares (no rows, no cached axes) equals the one the door uses on
    real data: cells, naming content, identity, and the records' codes."""
    seen = _in_memory(name, request).seen
    assert len(seen) == 1
    stat, declared, used, data = seen[0]
    assert len(data) > 100
    assert not isinstance(declared, Exception), declared
    same_domain(declared, used, data)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
@pytest.mark.parametrize("name", sorted(PLOTS))
def test_engine_never_evaluates_a_stat_on_zero_rows(name, engine, request):
    """The engine releases over the declared domain: no stat's ``domain``
    or ``family_cells`` runs on zero rows (the guard fails on the code
    that learnt the domain that way)."""
    built = _in_engine(engine, name, request)
    assert len(built.data) > 0
    # observed domains are built from the grouped values, never empty
    assert all(n > 0 for n in built.calls)
    if name in ("count_dp_observed", "sum_ckm"):
        assert built.calls


def test_zero_row_guard_fails_on_an_empty_frame(monkeypatch):
    """The guard of the test above does fail when a stat sees no rows."""
    guard_rows(monkeypatch)
    stat = PLOTS["bin_dp"](_source("pandas", None)).layers[0].stat
    with pytest.raises(AssertionError, match="on no rows"):
        stat.family_cells(RECORDS.iloc[0:0], None)


def test_engine_counts_are_not_the_true_counts(request):
    """The engine path perturbs: released != true for some cell."""
    out = _in_engine("duckdb", "count_dp", request).data
    truth = RECORDS.groupby(["f", "g", "c"]).size()
    released = out.set_index(["PANEL", "group"])["count"]
    assert len(released) == len(truth)
    assert not np.array_equal(
        np.sort(released.to_numpy()), np.sort(truth.to_numpy())
    )


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_tables_accept_sources(engine, request):
    d = _source(engine, request)
    p = _source("pandas", request)
    a = pp.dp_table(p, "g", groups="c", facets="f", eps=1, seed=3)
    b = pp.dp_table(d, "g", groups="c", facets="f", eps=1, seed=3)
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    a = pp.ckm_table(p, "k", rkey="rkey", ptable=PTABLE, groups="g")
    b = pp.ckm_table(d, "k", rkey="rkey", ptable=PTABLE, groups="g")
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    # and the table is the plot's release: same counts
    plot = _in_engine(engine, "count_dp", request).data
    assert sorted(plot["count"]) == sorted(
        pp.dp_table(d, "g", groups="c", facets="f", eps=1, seed=5)["count"]
    )


def test_spark_table(request):
    d = _source("spark", request)
    a = pp.ckm_table(
        _source("pandas", request), "g", rkey="rkey", ptable=PTABLE, facets="f"
    )
    b = pp.ckm_table(d, "g", rkey="rkey", ptable=PTABLE, facets="f")
    pd.testing.assert_frame_equal(a, b, check_dtype=False)


#: a synopsis over the records: "d" of g and x's NaNs lie outside
SYN_DIMS = {"g": ["a", "b", "c"], "c": COLOURS, "x": (0, 10, 0.5)}


@pytest.mark.parametrize("engine", ENGINES)
def test_synopsis_counted_in_the_engine(engine, request, monkeypatch):
    """A synopsis of a table in an engine is the one of the same records
    in memory (same noisy marginals, same statement), and only grouped
    cells leave the engine: a row per combination seen, inside every
    declared domain, with its count."""
    from plotnine_private.synopsis import engine_cells

    left: list[pd.DataFrame] = []
    original = engine_cells.grouped

    def spied(*args, **kwargs):
        left.append(original(*args, **kwargs))
        return left[-1]

    monkeypatch.setattr(engine_cells, "grouped", spied)
    wl = [("g", "c"), ("x",), ("c", "x")]
    mem = pp.synopsis(_pandas(RECORDS), SYN_DIMS, eps=1, seed=8, workload=wl)
    with pytest.warns(pp.PrivacyWarning, match="same synopsis release"):
        eng = pp.synopsis(
            _source(engine, request), SYN_DIMS, eps=1, seed=8, workload=wl
        )
    assert eng.statement == mem.statement
    for mg in mem.marginals:
        np.testing.assert_array_equal(eng.raw[mg], mem.raw[mg])
        np.testing.assert_array_equal(eng.tables[mg], mem.tables[mg])
    (g,) = left
    assert sorted(g.columns) == ["_c0", "_c1", "_c2", "_n"]
    assert set(g["_c0"].astype(object)) <= {"a", "b", "c"}
    assert g["_c2"].between(0, 19).all()
    inside = RECORDS["g"].isin(["a", "b", "c"]) & RECORDS["x"].between(0, 10)
    assert int(g["_n"].sum()) == int(inside.sum()) < N


def test_parquet_path(tmp_path):
    path = tmp_path / "records.parquet"
    RECORDS.to_parquet(path)
    plot = ggplot(source(str(path)), aes("g")) + geom_bar(
        stat="count_dp", eps=1, seed=12, levels=["a", "b", "c", "d"]
    )
    mem = ggplot(RECORDS, aes("g")) + geom_bar(
        stat="count_dp", eps=1, seed=12, levels=["a", "b", "c", "d"]
    )
    pd.testing.assert_frame_equal(_released(plot), _released(mem))
    with pytest.raises(PlotninePrivateError, match="no file"):
        source(str(tmp_path / "missing.parquet"))


# -- what cannot be pushed down fails early and says what to do ------------
def _polars_source():
    return source(pl.from_pandas(RECORDS).lazy())


def test_expression_in_aes_is_refused():
    plot = ggplot(_polars_source(), aes("x * 2")) + geom_histogram(
        stat="bin_dp", eps=1, limits=(0, 10)
    )
    with pytest.raises(
        PlotninePrivateError,
        match=r"aes\(x='x \* 2'\).*"
        "Add the column in the engine",
    ):
        layer_data(plot)


def test_non_private_layer_is_refused():
    plot = ggplot(_polars_source(), aes("x", "y")) + geom_point()
    with pytest.raises(
        PlotninePrivateError, match=r"stat=.identity. would draw the records"
    ):
        layer_data(plot)


def test_stat_needing_rows_is_refused():
    plot = ggplot(_polars_source(), aes("x", "y")) + geom_point(
        stat="dp_pca_score", eps=1, delta=1e-5, seed=1
    )
    with pytest.raises(PlotninePrivateError, match="needs the rows"):
        layer_data(plot)


def test_private_range_is_refused():
    plot = ggplot(_polars_source(), aes("x")) + geom_histogram(
        stat="bin_dp", eps=1, seed=1
    )
    with pytest.raises(PlotninePrivateError, match="limits=.*breaks="):
        layer_data(plot)


def test_scale_transform_is_refused():
    plot = (
        ggplot(_polars_source(), aes("y"))
        + geom_histogram(stat="bin_dp", eps=1, seed=1, limits=(0.1, 10))
        + scale_x_log10()
    )
    with pytest.raises(PlotninePrivateError, match="transforms positions"):
        layer_data(plot)


def test_dp_weight_is_refused():
    plot = ggplot(_polars_source(), aes("g", weight="w")) + geom_bar(
        stat="count_dp", eps=1, seed=1
    )
    with pytest.raises(PlotninePrivateError, match="weight aesthetic"):
        layer_data(plot)


def test_undeclared_facet_is_refused_for_dp():
    plot = (
        ggplot(_polars_source(), aes("g"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
        + facet_wrap("f")
    )
    with pytest.raises(PlotninePrivateError, match="facet variable"):
        layer_data(plot)


def test_undeclared_facet_is_refused_for_ckm_and_margins_too():
    src = _polars_source()
    ckm = geom_bar(stat="count_ckm", ptable=PTABLE)
    plot = ggplot(src, aes("g", rkey="rkey")) + ckm + facet_wrap("f")
    with pytest.raises(PlotninePrivateError, match="levels="):
        layer_data(plot)
    declared = source(src, levels={"f": FACETS})
    plot = (
        ggplot(declared, aes("g", rkey="rkey"))
        + ckm
        + facet_grid("f~.", margins=True)
    )
    with pytest.raises(PlotninePrivateError, match="margins"):
        layer_data(plot)


def test_bad_keys_in_engine_are_refused():
    lf = (
        pl.from_pandas(RECORDS)
        .lazy()
        .with_columns(
            pl.when(pl.col("id") == 3)
            .then(1.5)
            .otherwise(pl.col("rkey"))
            .alias("rkey")
        )
    )
    plot = ggplot(source(lf), aes("g", rkey="rkey")) + geom_bar(
        stat="count_ckm", ptable=PTABLE
    )
    with pytest.raises(PlotninePrivateError, match="rkey"):
        layer_data(plot)


def test_memory_frames_are_sources_with_one_row_as_unit():
    from plotnine_private.units import ONE_ROW, UnitFrame

    src = source(RECORDS)
    assert isinstance(src, UnitFrame) and src.unit is ONE_ROW
    assert src.to_pandas() is RECORDS
    with pytest.raises(PlotninePrivateError, match="levels= is for tables"):
        source(RECORDS, levels={"g": ["a"]})
    with pytest.raises(PlotninePrivateError, match="needs max_records"):
        source(RECORDS, unit="g")
    with pytest.raises(PlotninePrivateError, match="needs a privacy unit"):
        source(RECORDS, max_records=3)


# -- record keys -----------------------------------------------------------
def test_row_keys_equal_in_every_engine(request):
    ids = np.r_[np.arange(5000), 2**40 + 7, 2**62 + 1]
    ref = row_keys(ids, seed=11)
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id BIGINT)")
    # one INSERT from a frame (5,002 single-row INSERTs took 3 s)
    con.register("id_frame", pd.DataFrame({"id": ids.astype(np.int64)}))
    con.execute("INSERT INTO t SELECT id FROM id_frame")
    sql = con.sql(
        f"SELECT {record_keys_sql('id', 11)} AS k FROM t ORDER BY id"
    ).fetchnumpy()["k"]
    assert np.array_equal(sql, ref)
    lazy = (
        nw.from_native(pl.LazyFrame({"id": ids}))
        .with_columns(record_key_expr("id", 11).alias("k"))
        .collect()["k"]
        .to_numpy()
    )
    # polars divides by a constant through its reciprocal (a last-bit
    # difference); the key integers the CKM sums are equal
    assert np.array_equal(record_key_integers(lazy), record_key_integers(ref))
    ints = row_keys(ids, seed=11, integer_range=256)
    sql = con.sql(
        f"SELECT {record_keys_sql('id', 11, integer_range=256)} AS k "
        "FROM t ORDER BY id"
    ).fetchnumpy()["k"]
    assert np.array_equal(sql, ints)
    assert ints.min() >= 0 and ints.max() < 256
    # polars eager and the pandas path agree; an engine table gets them
    # as an expression
    pf = pp.add_record_keys(pl.DataFrame({"id": ids}), seed=11, row_id="id")
    assert np.array_equal(pf["rkey"].to_numpy(), ref)
    src = pp.add_record_keys(source(con, "t"), seed=11, row_id="id")
    got = src.frame.sort("id").collect()["rkey"].to_numpy()
    assert np.array_equal(got, ref)


def test_row_keys_are_uniform_and_seeded():
    ids = np.arange(200_000)
    k = row_keys(ids, seed=1)
    counts = np.histogram(k, bins=20, range=(0, 1))[0]
    expected = len(ids) / 20
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 43.8  # 99.9% point of chi2(19)
    assert abs(np.corrcoef(k[:-1], k[1:])[0, 1]) < 0.01
    # digits decimals exactly, and another seed gives other keys
    assert np.array_equal(record_key_integers(k), np.rint(k * 1e8))
    other = row_keys(ids, seed=2)
    assert np.mean(other == k) < 0.001
    with pytest.raises(ValueError, match="seed"):
        pp.add_record_keys(pd.DataFrame({"id": [1]}), row_id="id")
    with pytest.raises(ValueError, match=">= 0"):
        row_keys([-1], seed=1)


def test_polars_eager_frames_work_like_pandas():
    pf = pl.from_pandas(RECORDS.drop(columns="rkey"))
    keyed = pp.add_record_keys(pf, rng_seed=4)
    ref = pp.add_record_keys(RECORDS.drop(columns="rkey"), seed=4)
    assert np.array_equal(keyed["rkey"].to_numpy(), ref["rkey"].to_numpy())
    a = _released(
        ggplot(keyed, aes("g", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTABLE)
    )
    b = _released(
        ggplot(ref, aes("g", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTABLE)
    )
    pd.testing.assert_frame_equal(a, b)


def test_readme_example_runs_and_table_equals_plot():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = text.split("## Data beyond memory", 1)[1]
    # a "py" fence: the README's other tests count its "python" blocks
    block = re.search(r"```py\n(.*?)```", section, re.S).group(1)
    # the example's table has 10^6 rows; its code runs the same on 3 x
    # 10^4 (every region and age still occurs), and the check below
    # reads every row back into memory and builds the histogram there,
    # which at 10^6 rows was most of this test's time
    rows = "FROM range(1000000)"
    assert block.count(rows) == 1, "the README example changed"
    block = block.replace(rows, "FROM range(30000)")
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(block, "README", "exec"), scope)
        bars = layer_data(scope["bars"])
        ages = layer_data(scope["ages"])
    assert list(bars["count"]) == list(scope["table"]["count"])
    assert len(bars) == 4 and len(ages) == 12
    # the CKM histogram is the in-memory one of the same rows and keys
    rows = scope["people"].frame.collect().to_pandas()
    rows = pp.add_record_keys(rows, rng_seed=99, row_id="id")
    mem = ggplot(rows, aes("age", rkey="rkey")) + geom_histogram(
        stat="bin_ckm",
        ptable=pp.create_cnt_ptable(D=3, V=2, js=1),
        limits=(20, 80),
        bins=12,
    )
    pd.testing.assert_frame_equal(ages, _released(mem))


@pytest.mark.parametrize("closed", ["right", "left"])
@pytest.mark.parametrize(
    "breaks",
    [
        np.linspace(-5, 5, 31),
        np.linspace(0.1, 0.7, 8),
        np.linspace(1999, 2008, 10),
        np.array([0, 1, 2.5, 4, 10.0]),
    ],
)
def test_bin_index_in_engine_is_exact_at_edges(breaks, closed):
    from plotnine_private.families import Bins
    from plotnine_private.stats.domains import bin_index

    rng = np.random.default_rng(3)
    x = np.r_[
        rng.uniform(breaks[0] - 1, breaks[-1] + 1, 20000),
        breaks,
        np.nextafter(breaks, np.inf),
        np.nextafter(breaks, -np.inf),
    ]
    ref = bin_index(x.copy(), breaks, closed, False)
    stages = Bins(breaks, closed).stages({"x": nw.col("x")})
    table = pl.DataFrame({"x": x})
    for native in (table.lazy(), duckdb.from_arrow(table.to_arrow())):
        lf = nw.from_native(native)
        for stage in stages:
            lf = lf.with_columns(**stage)
        got = lf.select("_cell").collect()["_cell"]
        assert np.array_equal(got.to_numpy(), ref)


def test_pca_takes_polars_frames_and_refuses_sources():
    frame = RECORDS[["x", "y", "w"]].dropna().reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = pp.dp_pca(
            pl.from_pandas(frame), ["x", "y", "w"], eps=2, delta=1e-5, seed=1
        )
        b = pp.dp_pca(frame, ["x", "y", "w"], eps=2, delta=1e-5, seed=1)
    assert np.array_equal(a.directions, b.directions)
    with pytest.raises(PlotninePrivateError, match="needs the rows"):
        pp.dp_pca(_polars_source(), ["x", "y"], eps=2, delta=1e-5, seed=1)


@pytest.mark.parametrize("name", ["count_dp", "bin2d_dp", "binhex_ckm"])
def test_neighbours_differ_only_in_noisy_numbers(name):
    """The differential harness on DuckDB sources: one record changed,
    one seed: everything but the released numbers is equal."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from neighbours import differences, snapshot

    other = RECORDS.copy()
    other.loc[100, ["g", "c", "x", "y"]] = ["d", "blue", 9.9, 0.1]

    def duck(d):
        return duckdb_table(d, {"c": COLOURS, "f": FACETS})

    make = PLOTS[name]
    hidden = name != "count_dp"  # drop= hides cells by released value
    axes = ("y",) if name == "count_dp" else ()
    a = snapshot(make(duck(RECORDS)), axes, hidden)
    b = snapshot(make(duck(other)), axes, hidden)
    assert differences(a, b) == []
    assert a["report"] and a["layer 0"]


@pytest.mark.parametrize("name", SHORT)
def test_polars_records_moved_outside_the_domain_change_only_noisy_numbers(
    name,
):
    """Polars groups the records outside a public domain under NaN keys
    and drops that grouped row (instead of filtering the scan): a record
    moved from inside the box to outside changes the released numbers
    only, never which cells are drawn or what else the figure shows."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from neighbours import differences, snapshot

    # every record inside every plot's box, then one moved beyond it:
    # the grouped row of the records outside exists on one side only
    inside = RECORDS.assign(
        x=RECORDS["x"].clip(0.5, 9.5), y=RECORDS["y"].clip(0.5, 11.5)
    )
    other = inside.copy()
    other.loc[100, ["x", "y"]] = [25.0, 30.0]

    def polars(d):
        return source(
            pl.from_pandas(d)
            .lazy()
            .with_columns(
                pl.col("c").cast(pl.Enum(COLOURS)),
                pl.col("f").cast(pl.Enum(FACETS)),
            )
        )

    make = PLOTS[name]
    # a histogram's y axis is trained on its released counts; the cells
    # a 2-D layer draws (hence its axes) are those whose released count
    # is positive: post-processing of noisy numbers
    axes = ("y",) if name == "bin_plain_dp" else ("x", "y")
    a = snapshot(make(polars(inside)), axes, True)
    b = snapshot(make(polars(other)), axes, True)
    assert differences(a, b) == []
    assert a["report"] and a["layer 0"]


def test_privacy_unit_bounded_in_spark(request):
    """The bounding of a privacy unit in Spark: its order keys equal
    numpy's, and a bounded figure equals the in-memory one (the checks of
    tests/test_engine_units.py, run where Spark is already started)."""
    from test_engine_units import (
        check_ids_by_value,
        check_order_keys_equal_numpy,
        check_same_numbers_through_spark,
    )

    check_order_keys_equal_numpy("spark", request)
    check_same_numbers_through_spark("binhex_dp", request)
    check_ids_by_value("negative", ["spark"], request)


def test_any_ids_bounded_in_spark(request, monkeypatch):
    """Text and content-named ids in Spark (tests/test_engine_ids.py's
    checks, run where Spark is already started)."""
    from test_engine_ids import check_ids_through_spark

    check_ids_through_spark(request, monkeypatch)


def test_units_and_cell_bounds_in_spark(request):
    """Counts of units and bounds per cell in Spark equal memory's
    (tests/test_unit_counts.py's check, run where Spark is started)."""
    from test_unit_counts import check_units_and_cell_bounds_through_spark

    check_units_and_cell_bounds_through_spark(request)


# bin_dp at eps=1e4 (noise below a half) and sum_dp at eps=1: the noise
# of a Spark TIMESTAMP (in the session's zone, UTC) equals a naive one's
@pytest.mark.parametrize("kind", ["bin_dp", "sum_dp"])
def test_dates_through_spark_equal_memory(request, kind):
    """Class 7 of issue 20 in Spark (DuckDB and Polars are in
    tests/test_engine_dates.py; here, where Spark is already started): a
    TIMESTAMP column lands on a date axis and the released cells equal
    the in-memory ones for the same data and seed."""
    from test_engine_dates import _built, _memory, _plot, _same_layer

    frame = request.getfixturevalue("spark_dates")
    engine = _built(_plot(kind, source(frame)))
    memory = _memory(kind)
    _same_layer(memory, engine)


@pytest.fixture(scope="module")
def spark_dates(spark):
    """One Spark frame of the dated records for both kinds.
    Spark keeps microseconds: the column goes over as microseconds, which
    Arrow converts in one piece (nanoseconds sent it row by row through
    Python datetimes, which drop them too: the same values in Spark)."""
    from test_engine_dates import _records

    d = _records()
    return spark.createDataFrame(d.assign(t=d["t"].astype("M8[us]")))
