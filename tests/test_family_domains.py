"""A layer's domain is declared from public parameters and scales only.

Each private count stat declares its family (``declare_domain``): the
plot door codes its records against that domain, the engine push-down
releases over it without evaluating the stat on any record, and the
tables take count's levels from the same rule. Here:

- for each source of count's levels, the domain declared by a fresh copy
  of the stat (no rows, no cached axes) equals the one the door uses on
  real data: cells, naming content, identity, and the records' codes;
- a domain that would be a private range cannot be declared;
- dp_table's x family is the plot's;
- undeclared values never leave the engine.

The same two checks for every family, DP and CKM (the declared domain is
the door's; the engine never runs a stat's ``domain``/``family_cells`` on
zero rows), are in tests/test_engines.py: they read the one build of each
plot in memory and in each engine that its test of equal numbers makes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from domain_spies import same_domain, spy_domains
from plotnine import (
    aes,
    facet_wrap,
    geom_bar,
    geom_histogram,
    ggplot,
    scale_x_discrete,
)
from test_engines import PTABLE, RECORDS, _pandas, _released

from plotnine_private import layer_data
from plotnine_private.stats.domains import RowsNeeded
from plotnine_private.tables import _count_levels


def _build(plot) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer_data(plot)


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
    seen = spy_domains(monkeypatch)
    _build(plot)
    _, declared, used, data = seen[0]
    same_domain(declared, used, data)
    expected = {
        "levels": "public: levels",
        "scale_limits": "public: scale limits",
        "discrete_observed": "observed",
    }[case]
    assert declared.source == expected


def test_private_range_cannot_be_declared(monkeypatch):
    seen = spy_domains(monkeypatch)
    _build(
        ggplot(_pandas(RECORDS), aes("x"))
        + geom_histogram(stat="bin_dp", eps=1, seed=1)
    )
    _, declared, used, _ = seen[0]
    # the door estimated a range from the rows; without rows it cannot
    assert isinstance(declared, RowsNeeded)
    assert "limits=(lo, hi)" in str(declared)
    assert used.source == "private estimate"


@pytest.mark.parametrize(
    ("column", "levels"),
    [("c", None), ("g", None), ("k", None), ("k", [0, 2, 4]), ("c", ["red"])],
)
def test_table_x_family_is_the_plots(column, levels, monkeypatch):
    d = _pandas(RECORDS)
    seen = spy_domains(monkeypatch)
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
