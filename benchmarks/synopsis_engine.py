"""A synopsis of a DuckDB table against the hand-written GROUP BY.

Run: ``python benchmarks/synopsis_engine.py [--rows 1e7] [--repeat 3]``
(needs the ``duckdb`` extra).

The table (made in DuckDB, no data from disk): ``--rows`` flights with
a ``carrier`` of 5 levels, an ``origin`` of 3, a ``month`` of 12 and a
``delay`` in [0, 100). ``pp.synopsis`` declares carrier, origin and
month by their levels and delay as (-100, 100) at resolution 1, with
every 1- and 2-way marginal (10 of them, 3,091 cells): the engine
computes each record's cells and groups them, Python releases and makes
the marginals consistent. The floor is what a user would run by hand
for the same counts: one ``GROUP BY`` of the four columns with the
delay's bin, the rows in the domain only, collected to pandas. Both are
wall times (the engine uses its threads), best of ``--repeat``,
interleaved, with the load average at the start.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import duckdb

import plotnine_private as pp

CARRIERS = ["AA", "B6", "UA", "DL", "EV"]
ORIGINS = ["EWR", "JFK", "LGA"]
DIMS = {
    "carrier": CARRIERS,
    "origin": ORIGINS,
    "delay": (-100, 100, 1),
    "month": list(range(1, 13)),
}
FLOOR = (
    "SELECT carrier, origin, floor((delay + 100) / 1.0) AS d, month, "
    "count(*) AS n FROM t WHERE delay BETWEEN -100 AND 100 GROUP BY ALL"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=float, default=1e7)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = int(args.rows)
    con = duckdb.connect()
    con.execute(
        f"""CREATE TABLE t AS SELECT
          ({CARRIERS})[1 + (i % 5)] AS carrier,
          ({ORIGINS})[1 + ((i // 7) % 3)] AS origin,
          ((hash(i) % 1000) / 10.0)::DOUBLE AS delay,
          (i % 12) + 1 AS month
        FROM range({n}) r(i)"""
    )
    src = pp.source(con, "t")
    warnings.simplefilter("ignore", pp.PrivacyWarning)  # one seed a run
    load = os.getloadavg()[0]
    private, floor = [], []
    for k in range(args.repeat):
        t0 = time.perf_counter()
        pp.synopsis(src, DIMS, eps=1, seed=k)
        private.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        con.execute(FLOOR).df()
        floor.append(time.perf_counter() - t0)
    print(
        f"synopsis of a DuckDB table, {n:.0e} rows, 10 marginals: "
        f"{min(private):.3f} s wall | hand GROUP BY {min(floor):.3f} s | "
        f"ratio {min(private) / min(floor):.2f}x (load {load:.1f} at start)"
    )


if __name__ == "__main__":
    main()
