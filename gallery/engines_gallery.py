"""Gallery: a private histogram of a Parquet table, counted in DuckDB.

``render(outdir)`` writes ``engines_duckdb.png``: 2,000,000 simulated
incomes in four declared regions (fixed seed) are written to a Parquet
file in a temporary directory; the plot reads it through
``pp.source(path)``, DuckDB bins and counts the records over public
limits, and only the 4 x 30 cells leave the engine before the DP release.

Run: ``python gallery/engines_gallery.py [outdir]``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

REGIONS = ["North", "East", "South", "West"]
ROWS = 2_000_000


def _write(path: Path) -> None:
    rng = np.random.default_rng(2026)
    region = rng.integers(0, len(REGIONS), ROWS)
    income = rng.lognormal(3.4 + 0.1 * region, 0.45)
    pd.DataFrame(
        {"region": np.array(REGIONS)[region], "income": income}
    ).to_parquet(path)


def render(outdir: str | Path) -> list[Path]:
    """Write the PNG into ``outdir``; return its path."""
    from plotnine import aes, geom_histogram, ggplot, labs, theme_bw

    import plotnine_private as pp

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "incomes.parquet"
        _write(path)
        incomes = pp.source(str(path), levels={"region": REGIONS})
        plot = (
            ggplot(incomes, aes("income", fill="region"))
            + geom_histogram(
                stat="bin_dp", eps=1, seed=2026, limits=(0, 150), bins=30
            )
            + labs(
                title="2,000,000 Parquet rows, counted in DuckDB (DP, "
                "eps = 1)",
                subtitle="only the 120 cells (region x bin) left the engine",
                x="income (public limits 0..150)",
                y="released count",
            )
            + theme_bw()
        )
        target = out / "engines_duckdb.png"
        plot.save(target, width=7, height=4, dpi=100, verbose=False)
    return [target]


if __name__ == "__main__":
    target = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else (Path(__file__).resolve().parent / "images")
    )
    for p in render(target):
        print(p)
