"""A layer's domain is declared from public parameters and scales only.

Each private count stat declares its family (``declare_domain``): the
plot door codes its records against that domain, the engine push-down
releases over it without evaluating the stat on any record, and the
tables take count's levels from the same rule. Here:

- for every family, DP and CKM, the domain declared by a fresh copy of
  the stat (no rows, no cached axes) equals the one the door uses on real
  data: cells, naming content, identity, and the records' codes;
- a domain that would be a private range cannot be declared;
- the engine never runs a stat's ``domain``/``family_cells`` on zero rows
  (the guard below fails on the code that learnt the domain that way);
- dp_table's x family is the plot's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    facet_wrap,
    geom_bar,
    geom_histogram,
    ggplot,
    scale_x_discrete,
)
from test_engines import (
    PLOTS,
    PTABLE,
    RECORDS,
    _pandas,
    _released,
    _source,
)

from plotnine_private import layer_data
from plotnine_private.door import LayerBuild
from plotnine_private.families import Levels, Observed
from plotnine_private.stats.base import PrivateCountStat
from plotnine_private.stats.domains import RowsNeeded
from plotnine_private.tables import _count_levels


def _spy(monkeypatch) -> list:
    """Record, for each ``family_cells`` the door runs, the domain a fresh
    copy of the stat declares without rows, the cells the door used and
    the rows."""
    seen: list = []
    original = PrivateCountStat.family_cells

    def spy(self, data, scales):
        twin = self.for_build(LayerBuild(door=self.build.door))
        try:
            declared = twin.declare_domain(scales)
        except RowsNeeded as err:
            declared = err
        used = original(self, data, scales)
        seen.append((type(self).__name__, declared, used, data))
        return used

    monkeypatch.setattr(PrivateCountStat, "family_cells", spy)
    return seen


def _build(plot) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer_data(plot)


def _same_domain(declared, used, data) -> None:
    assert declared.code is None
    assert type(declared.family) is type(used.family)
    assert declared.public == used.public
    assert declared.source == used.source
    if not used.public:
        # observed: the cells are the values seen, none declared
        assert len(declared.frame) == 0
        assert isinstance(declared.family, (Levels, Observed))
        return
    assert declared.describe == used.describe
    pd.testing.assert_frame_equal(declared.frame, used.frame)
    assert len(declared.content) == len(used.content)
    for a, b in zip(declared.content, used.content):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(
        declared.coded(data).code, np.asarray(used.code)
    )


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_declared_domain_is_the_one_the_door_uses(name, monkeypatch):
    seen = _spy(monkeypatch)
    _build(PLOTS[name](_source("pandas", None)))
    assert len(seen) == 1
    stat, declared, used, data = seen[0]
    assert len(data) > 100
    assert not isinstance(declared, Exception), declared
    _same_domain(declared, used, data)


def _count_plots():
    d = _pandas(RECORDS)
    return {
        "levels": ggplot(d, aes("k"))
        + geom_bar(stat="count_dp", eps=1, seed=1, levels=[0, 2, 4, 6]),
        "scale_limits": ggplot(d, aes("g", rkey="rkey"))
        + geom_bar(stat="count_ckm", ptable=PTABLE)
        + scale_x_discrete(limits=["d", "b", "z"]),
        "discrete_observed": ggplot(d, aes("g"))
        + geom_bar(stat="count_dp", eps=1, seed=1),
    }


@pytest.mark.parametrize(
    "case", ["levels", "scale_limits", "discrete_observed"]
)
def test_declared_count_domain_for_each_source_of_levels(case, monkeypatch):
    plot = _count_plots()[case]
    seen = _spy(monkeypatch)
    _build(plot)
    _, declared, used, data = seen[0]
    _same_domain(declared, used, data)
    expected = {
        "levels": "public: levels",
        "scale_limits": "public: scale limits",
        "discrete_observed": "observed",
    }[case]
    assert declared.source == expected


def test_private_range_cannot_be_declared(monkeypatch):
    seen = _spy(monkeypatch)
    _build(
        ggplot(_pandas(RECORDS), aes("x"))
        + geom_histogram(stat="bin_dp", eps=1, seed=1)
    )
    _, declared, used, _ = seen[0]
    # the door estimated a range from the rows; without rows it cannot
    assert isinstance(declared, RowsNeeded)
    assert "limits=(lo, hi)" in str(declared)
    assert used.source == "private estimate"


def _guard_rows(monkeypatch) -> list:
    """Make every stat's ``domain`` and ``family_cells`` fail on zero
    rows; return the number of rows of each call."""
    calls: list = []

    def guarded(fn, rows_at):
        def run(self, *args, **kwargs):
            rows = kwargs.get("rows", kwargs.get("data"))
            if rows is None and len(args) > rows_at:
                rows = args[rows_at]
            if rows is not None:
                calls.append(len(rows))
                if len(rows) == 0:
                    raise AssertionError(
                        f"{type(self).__name__}.{fn.__name__} on no rows"
                    )
            return fn(self, *args, **kwargs)

        return run

    todo = [PrivateCountStat]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        for attr, rows_at in (("domain", 1), ("family_cells", 0)):
            if attr in vars(cls):
                fn = vars(cls)[attr]
                monkeypatch.setattr(cls, attr, guarded(fn, rows_at))
    return calls


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
@pytest.mark.parametrize("name", sorted(PLOTS))
def test_engine_never_evaluates_a_stat_on_zero_rows(name, engine, monkeypatch):
    calls = _guard_rows(monkeypatch)
    got = _released(PLOTS[name](_source(engine, None)))
    assert len(got) > 0
    # observed domains are built from the grouped values, never empty
    assert all(n > 0 for n in calls)
    if name in ("count_dp_observed", "sum_ckm"):
        assert calls


def test_zero_row_guard_fails_on_an_empty_frame(monkeypatch):
    """The guard of the test above does fail when a stat sees no rows."""
    _guard_rows(monkeypatch)
    stat = PLOTS["bin_dp"](_source("pandas", None)).layers[0].stat
    with pytest.raises(AssertionError, match="on no rows"):
        stat.family_cells(RECORDS.iloc[0:0], None)


@pytest.mark.parametrize(
    ("column", "levels"),
    [("c", None), ("g", None), ("k", None), ("k", [0, 2, 4]), ("c", ["red"])],
)
def test_table_x_family_is_the_plots(column, levels, monkeypatch):
    d = _pandas(RECORDS)
    seen = _spy(monkeypatch)
    _build(
        ggplot(d, aes(column))
        + geom_bar(stat="count_dp", eps=1, seed=1, levels=levels)
    )
    plot_family = seen[0][2].family
    table_family = _count_levels(d, d[column], column, levels)
    assert table_family.declared == plot_family.declared
    assert table_family.numeric == plot_family.numeric
    assert table_family.public == plot_family.public


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_undeclared_values_never_leave_the_engine(engine, monkeypatch):
    """A declared column grouped as it is has its levels tested on the
    grouped rows, still in the engine: no row of a value outside the
    declared levels (nor of a missing one) is collected, and the numbers
    equal those of the frame in memory."""
    import duckdb
    import polars as pl

    from plotnine_private import dp_table, source
    from plotnine_private.engines import push

    rng = np.random.default_rng(3)
    n = 3000
    d = pd.DataFrame(
        {
            "g": rng.choice(["a", "b", "zz"], n).astype(object),
            "f": rng.choice(["u", "v", "ww"], n).astype(object),
        }
    )
    d.loc[::97, "g"] = None
    levels = {"g": ["a", "b"], "f": ["u", "v"]}
    if engine == "duckdb":
        con = duckdb.connect()
        con.register("v", d)
        con.execute("CREATE TABLE t AS SELECT * FROM v")
        src = source(con, "t", levels=levels)
    else:
        src = source(pl.from_pandas(d).lazy(), levels=levels)
    memory = d.assign(
        g=pd.Categorical(d["g"], categories=levels["g"]),
        f=pd.Categorical(d["f"], categories=levels["f"]),
    )
    collected: list = []
    original = push._grouped

    def spy(*args):
        out = original(*args)
        collected.append(out)
        return out

    monkeypatch.setattr(push, "_grouped", spy)
    plot = (
        ggplot(src, aes("g"))
        + geom_bar(stat="count_dp", eps=1, seed=4)
        + facet_wrap("f")
    )
    got = _released(plot)
    table = dp_table(src, "g", facets="f", eps=1, seed=5)
    monkeypatch.setattr(push, "_grouped", original)
    assert len(collected) == 2
    for out in collected:
        values = set(out.drop(columns=["_n"]).stack().astype(str))
        assert not values & {"zz", "ww", "None", "nan"}, values
    expected = _released(
        ggplot(memory, aes("g"))
        + geom_bar(stat="count_dp", eps=1, seed=4)
        + facet_wrap("f")
    )
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True), expected.reset_index(drop=True)
    )
    in_memory = dp_table(memory, "g", facets="f", eps=1, seed=5)
    pd.testing.assert_frame_equal(table, in_memory)
