"""
Engines: the cells are counted where the rows are
=================================================

``pp.source`` wraps a DuckDB relation, a Polars lazy frame, a Spark frame
or a Parquet path. The engine bins and counts the records itself; only
the cell table (here 4 regions x 30 bins) reaches Python, where the
release engine adds the noise. The numbers equal the in-memory path's
for the same data and seed.
"""

import numpy as np
import pandas as pd
from plotnine import aes, geom_histogram, ggplot, labs, theme_bw

import plotnine_private as pp

REGIONS = ["North", "East", "South", "West"]
rng = np.random.default_rng(2026)
region = rng.integers(0, len(REGIONS), 20_000)
incomes = pd.DataFrame(
    {
        "region": np.array(REGIONS)[region],
        "income": rng.lognormal(3.4 + 0.1 * region, 0.45),
    }
)

try:
    import duckdb

    table = duckdb.from_df(incomes)
    engine = "DuckDB"
except ImportError:  # the same counts from the frame itself
    table, engine = incomes, "pandas"
data = pp.source(table, levels={"region": REGIONS})

p = (
    ggplot(data, aes("income", fill="region"))
    + geom_histogram(stat="bin_dp", eps=1, seed=2026, limits=(0, 150), bins=30)
    + labs(
        title=f"20,000 rows counted in {engine}, DP eps = 1",
        x="income (public limits 0..150)",
        y="released count",
    )
    + theme_bw()
)
p.show()
