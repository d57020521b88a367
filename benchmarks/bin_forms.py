"""Benchmark: what a 2-D histogram's and a hexbin's engine queries are
made of, in DuckDB (and a 2-D histogram's in Polars).

The query the engine path sends for ``bin2d_dp`` (the benchmark grid of
``benchmarks/engines.py``: 30 x 30 bins of plotnine's ``stat_bin_2d``
over ``x`` in [-5, 5], ``y`` in [-9, 11]) is timed beside its floor
(the engine's own ``GROUP BY floor((x - lo) / w), floor((y - lo) / w)``)
and beside forms of it that each leave one part out:

* ``engine``: the package's query (``Grid.inner_stages`` behind its
  ``domain_filter``, through ``engines.push.grouped``);
* ``division``: the same with the raw index read as before, ``floor((x -
  origin) / step - shift) + 1`` (a division, a subtraction and two sums
  where the engine now has one product and one sum);
* ``no_correction``: the raw indices alone, without the comparison with
  their right edges (not exact: a lower bound of the engine's form);
* ``no_filter``: the engine's stages without the range filter (not
  exact either: records outside get keys).

``--family hex`` times the hexbin of the same box (30 hexagons across)
beside the rectangular floor on the hexagons' spacing, the hexagon count
written by hand (``hex_floor`` of ``benchmarks/engines.py``), the engine's
query (``Hexes.inner_stages``: both candidates, the nearer one, one key)
and ``no_choice``, its candidate floors grouped by lattice B's key alone
(not a hexbin: what the choice between the candidates costs).

``--engine polars`` times the 2-D histogram in Polars (a lazy scan of
the file, its own threads) beside the Polars floor of
``benchmarks/engines.py``:

* ``engine``: the package's query (``Grid.representatives``: each
  record's value near the edge above its raw bin, else a value a 2^-20
  bin below that edge, ``max(x, c)``, grouped, then the exact stages on
  the grouped rows and a second grouping, in one lazy query:
  ``families.represented``);
* ``middles``: the previous representatives, the record's value where
  its position's fractional part is near 1, else its bin's middle (a
  test of the fractional part and a choice where ``engine`` takes one
  maximum), with the same exact stages and second grouping;
* ``nan_keys``: the form before those, ``Grid.inner_stages`` with the
  keys of the records outside NaN (``families.outside_as_nan``);
* ``reps_only``: the representatives grouped, without the exact stages
  and second grouping on the grouped rows (what those cost).

Runs are interleaved (each form once per round, ``--rounds`` rounds) on
one DuckDB thread, so that load from other work moves every form alike;
the figures are CPU seconds (minimum and median over the rounds) and
their ratios to the floor's, and for Polars the wall-clock ratio of the
minima too.

Run: ``python benchmarks/bin_forms.py --file <dir>/pnp_engines_10000000
.parquet [--rounds 20] [--family bin2d|hex] [--engine duckdb|polars]``
(the table of ``benchmarks/engines.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines import BOX, floor_query, hex_floor_query  # noqa: E402

#: the plot's bins per axis (as in benchmarks/engines.py)
BINS = 30


def forms(path: str) -> dict:
    """Name -> a function running that form of the query once."""
    import duckdb
    import narwhals as nw

    from plotnine_private.engines.push import grouped
    from plotnine_private.families import CELL, Bins, Grid
    from plotnine_private.stats.domains import _bin2d_edges

    (x0, x1), (y0, y1) = BOX
    grid = Grid(
        Bins(_bin2d_edges((x0, x1), BINS, None)),
        Bins(_bin2d_edges((y0, y1), BINS, None), axis="y"),
    )
    cols = {"x": nw.col("x"), "y": nw.col("y")}
    keep = grid.domain_filter(cols)
    stages = grid.inner_stages(cols, engine="duckdb")
    division = [dict(stage) for stage in stages]
    for ax, axis in (("x", grid.x), ("y", grid.y)):
        form = axis.form
        assert form is not None
        pos = (nw.col(ax).cast(nw.Float64) - form.origin) / form.step
        # the raw index of the previous form (shift 2**-20), plus one
        division[0][f"_c{ax}_r"] = (pos - 2.0**-20).floor() + 1.0
    wide = float(grid.x.size + 2)
    raw = [
        stages[0],
        {CELL: nw.col("_cy_r") * wide + nw.col("_cx_r")},
    ]
    frame = nw.from_native(duckdb.read_parquet(path))

    def run(where, st):
        return lambda: grouped(frame, {}, where=where, stages=st)

    return {
        "floor": lambda: floor_query(path, "duckdb", "bin2d_dp"),
        "engine": run(keep, stages),
        "division": run(keep, division),
        "no_correction": run(keep, raw),
        "no_filter": run(None, stages),
    }


def polars_forms(path: str) -> dict:
    """:func:`forms` of the 2-D histogram in Polars."""
    import narwhals as nw
    import polars as pl

    from plotnine_private.engines.push import grouped
    from plotnine_private.families import (
        Bins,
        Grid,
        outside_as_nan,
        represented,
    )
    from plotnine_private.stats.domains import _bin2d_edges

    (x0, x1), (y0, y1) = BOX
    grid = Grid(
        Bins(_bin2d_edges((x0, x1), BINS, None)),
        Bins(_bin2d_edges((y0, y1), BINS, None), axis="y"),
    )
    cols = {"x": nw.col("x"), "y": nw.col("y")}
    reps = represented(grid, cols)
    assert reps is not None
    keep = grid.domain_filter(cols)
    marked = outside_as_nan(grid.inner_stages(cols, engine="polars"), keep)
    frame = nw.from_native(pl.scan_parquet(path))
    middles: list[dict] = [{}, {}, {}]
    for ax, axis in (("x", grid.x), ("y", grid.y)):
        form = axis.form
        assert form is not None
        out = f"_rep_{ax}"
        q, low = nw.col(f"{out}_q"), nw.col(f"{out}_lo")
        middles[0][f"{out}_q"] = nw.col(ax) * (1.0 / form.step) + form.lead()
        middles[1][f"{out}_lo"] = q.floor()
        middles[2][out] = (
            nw.when(q - low >= 1.0 - 2.0**-19)
            .then(nw.col(ax))
            .otherwise(low * form.step + (form.origin - 0.5 * form.step))
        )

    def run(st, regroup=()):
        return lambda: grouped(frame, {}, stages=st, regroup=regroup)

    return {
        "floor": lambda: floor_query(path, "polars", "bin2d_dp"),
        "engine": run(*reps),
        "middles": run(middles, reps[1]),
        "nan_keys": run(marked),
        "reps_only": run(reps[0]),
    }


def hex_forms(path: str) -> dict:
    """:func:`forms` for the hexbin of the same box."""
    import duckdb
    import narwhals as nw

    from plotnine_private.engines.push import grouped
    from plotnine_private.families import CELL, Hexes
    from plotnine_private.mechanisms.domains.hexbin import hex_lattice

    (x0, x1), (y0, y1) = BOX
    bw = ((x1 - x0) / BINS, (y1 - y0) / BINS)
    origin = (x0, y0)
    row, col = hex_lattice((x0, x1), (y0, y1), origin, bw)
    hexes = Hexes((x0, x1), (y0, y1), origin, bw, row, col)
    cols = {"x": nw.col("x"), "y": nw.col("y")}
    keep = hexes.domain_filter(cols)
    stages = hexes.inner_stages(cols, engine="duckdb")
    span = hexes._key_span()
    assert span is not None and list(stages[-1]) == [CELL]
    # lattice B's key from the candidates' floors, without the choice
    no_choice = [
        *stages[:-1],
        {CELL: nw.col("_ib") * float(2 * span[1]) + nw.col("_jb")},
    ]
    frame = nw.from_native(duckdb.read_parquet(path))

    def run(st):
        return lambda: grouped(frame, {}, where=keep, stages=st)

    return {
        "floor": lambda: floor_query(path, "duckdb", "binhex_dp"),
        "hex_floor": lambda: hex_floor_query(path, "duckdb"),
        "engine": run(stages),
        "no_choice": run(no_choice),
    }


def _cpu() -> float:
    return time.process_time()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", required=True)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--family", choices=("bin2d", "hex"), default="bin2d")
    ap.add_argument("--engine", choices=("duckdb", "polars"), default="duckdb")
    args = ap.parse_args()
    if args.engine == "polars":
        if args.family != "bin2d":
            ap.error("--engine polars times the bin2d family only")
        runs = polars_forms(args.file)
        threads = "Polars'"
    else:
        import duckdb

        duckdb.execute(f"SET threads = {args.threads}")
        runs = (forms if args.family == "bin2d" else hex_forms)(args.file)
        threads = str(args.threads)
    spent: dict[str, list[float]] = {name: [] for name in runs}
    wall: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, once in runs.items():
            c, t = _cpu(), time.perf_counter()
            once()
            spent[name].append(_cpu() - c)
            wall[name].append(time.perf_counter() - t)
    best, mid = min(spent["floor"]), statistics.median(spent["floor"])
    load = "/".join(f"{v:.1f}" for v in os.getloadavg())
    print(
        f"{args.family} ({args.engine}): {args.rounds} rounds, {threads} "
        f"thread(s), load {load}"
    )
    print(
        f"{'form':14} {'cpu min s':>9} {'ratio':>6} {'median':>7} "
        f"{'wall ratio':>10}"
    )
    for name, times in spent.items():
        print(
            f"{name:14} {min(times):9.3f} {min(times) / best:6.2f} "
            f"{statistics.median(times) / mid:7.2f} "
            f"{min(wall[name]) / min(wall['floor']):10.2f}"
        )


if __name__ == "__main__":
    main()
