"""A date axis of a bounded source in an engine keeps the records memory
keeps.

Without ``record_id=``, a unit's records are named by their content (the
source's columns). An engine puts a date on its axis by adding a column
of days since 1970 to the source before the query; that column was named
with the record's content, so a unit over the bound kept other records
in the engine than in memory, and the released numbers differed from
memory's for the same data, seed and key (documented equal). Each side
still bounded every unit, so this was no leak; it broke the agreement
the engines promise.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_histogram, ggplot

import plotnine_private as pp

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")


def _people() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 8, 120)
    sizes[5] = 30
    pid = np.repeat(np.arange(120), sizes)
    days = rng.integers(0, 365, len(pid))
    return pd.DataFrame(
        {
            "pid": pid,
            "x": rng.uniform(0, 10, len(pid)),
            "t": pd.Timestamp("2020-01-01") + pd.to_timedelta(days, "D"),
        }
    )


def _counts(data) -> list[float]:
    src = pp.source(data, unit="pid", max_records=3)
    plot = ggplot(src, aes("t")) + geom_histogram(
        stat="bin_dp",
        limits=("2020-01-01", "2021-01-01"),
        binwidth="1 month",
        eps=1000,  # noise of a few hundredths: the counts show the rows
        seed=3,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pp.layer_data(plot, 0)["count"].tolist()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_bounded_date_axis_in_an_engine_keeps_memory_records(engine):
    d = _people()
    if engine == "polars":
        table = pl.from_pandas(d).lazy()
    else:
        con = duckdb.connect()
        con.register("people", d)
        table = con.sql("SELECT * FROM people")
    memory = _counts(d)
    # the months' counts of the rows memory keeps (3 per person at most)
    assert sum(memory) == pytest.approx(
        np.minimum(d.pid.value_counts(), 3).sum(), abs=1
    )
    assert _counts(table) == memory
