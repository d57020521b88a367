"""Benchmark: bound once, draw many (``pp.source(..., keep_bounded=True)``).

On a Parquet table of ``--rows`` records (written into ``--dir``, default
the system's temporary directory, never the repository: ``id``, ``g``,
8 categories, ``x`` normal), each person owning ``--per-unit`` records
(default 4) scattered over the file (``person = id * 2654435761 mod
(rows / per_unit)``, or its text ``'p' || person`` with ``--ids text``)
and keeping ``--k`` (default 3) of them, it times (best of
``--repeats``, seconds, the figure built, nothing drawn):

* DuckDB ``floor``: the engine's own hand-written exact bounding and
  count, ``row_number() OVER (PARTITION BY person ORDER BY hash(person,
  id)) <= k`` then ``GROUP BY g`` (DuckDB's own hash, the cheapest there
  is); ``floor_keyed``: the same window ordered by the package's keyed
  hash (``idhash.pair_keys``) written as SQL by hand, one subquery a
  round;
* ``first``: the first bounded figure of a fresh ``keep_bounded`` source
  (``count_dp``): it bounds (its ids named as memory names them) and
  keeps the rows in a temporary table; ``first / floor``;
* ``later``: a later figure of that source (``bin_dp``, then ``count_dp``
  again), and ``unbounded``, the same figure without a unit; ``later /
  unbounded``;
* memory (``--memory``, pandas, the same rows read into memory): the
  first bounded figure against numpy's floor (the order keys, a
  ``lexsort`` by unit and key, the rank in the unit, a ``bincount`` of
  ``g``), and a later figure against the unbounded one.

Targets: first <= 2x floor, later <= 1.5x unbounded.

``--variants`` (instead of the above): a bounded ``count_dp`` (no
``keep_bounded``, a fresh source each time, best of
``--repeats``) counting units (``count="units"``) and under bounds per
cell (``max_cells=2, max_records_per_cell=1``), against the same figure
counting records under ``max_records`` alone, in DuckDB and (with
``--memory``) in memory.

Run: ``python benchmarks/bound_once.py --rows 1e7 [--ids int,text]
[--memory] [--repeats 2] [--k 3] [--per-unit 4] [--dir DIR]``. The
machine may be shared: the load average is printed with each line.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

SCATTER = 2654435761
LEVELS = [f"g{i}" for i in range(8)]


def generate(path: str, rows: int) -> None:
    import duckdb

    if os.path.exists(path):
        return
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    con.execute(
        f"""
        COPY (
          SELECT id, 'g' || CAST(id * 7919 % 8 AS VARCHAR) AS g,
                 sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())
                   AS x
          FROM (SELECT range AS id FROM range({rows}))
        ) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)
        """
    )


def relation(con, path: str, units: int, ids: str):
    person = f"id * {SCATTER} % {units}"
    if ids == "text":
        person = f"'p' || CAST({person} AS VARCHAR)"
    return con.sql(f"SELECT *, {person} AS person FROM read_parquet('{path}')")


def plot(data, stat: str):
    from plotnine import aes, geom_bar, geom_histogram, ggplot

    if stat == "count_dp":
        return ggplot(data, aes("g")) + geom_bar(
            stat="count_dp", eps=1, seed=1
        )
    return ggplot(data, aes("x")) + geom_histogram(
        stat="bin_dp", eps=1, seed=1, limits=(-5, 5), bins=30
    )


def built(make) -> float:
    from plotnine_private._compat import build

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build(make())
    return time.perf_counter() - t0


def best(fn, repeats: int) -> float:
    return min(fn() for _ in range(repeats))


class _Sql:
    """An SQL integer expression with ``+ * // %`` (what
    :func:`~plotnine_private.mechanisms.naming.idhash.pair_keys` uses), so the
    keyed order is written as SQL by hand, a subquery a round."""

    def __init__(self, text: str):
        self.text = text

    def _op(self, other, op):
        other = other.text if isinstance(other, _Sql) else str(int(other))
        return _Sql(f"({self.text} {op} {other})")

    def __add__(self, o):
        return self._op(o, "+")

    __radd__ = __add__

    def __mul__(self, o):
        return self._op(o, "*")

    __rmul__ = __mul__

    def __mod__(self, o):
        return self._op(o, "%")

    def __floordiv__(self, o):
        return self._op(o, "//")


def keyed_floor_sql(base: str, k: int) -> str:
    from plotnine_private.mechanisms.naming.idhash import pair_keys
    from plotnine_private.mechanisms.release.bounding import pair_seed

    selects: list[str] = []

    def stage(values: dict) -> dict:
        i = len(selects)
        cols = ", ".join(f"{v.text} AS s{i}_{n}" for n, v in values.items())
        selects.append(cols)
        return {n: _Sql(f"s{i}_{n}") for n in values}

    key = pair_keys(
        _Sql("CAST(person_code AS BIGINT)"),
        _Sql("id"),
        pair_seed(None),
        stage=stage,
    )
    sql = base
    for cols in selects:
        sql = f"SELECT *, {cols} FROM ({sql})"
    return (
        f"SELECT g, count(*) FROM (SELECT g, row_number() OVER (PARTITION "
        f"BY person ORDER BY {key.text}) AS rn FROM ({sql})) "
        f"WHERE rn <= {k} GROUP BY g"
    )


def bench_duckdb(path, rows, units, ids, args, pp) -> None:
    import duckdb

    con = duckdb.connect()

    def floor(order: str) -> float:
        if order == "hash":
            sql = (
                "SELECT g, count(*) FROM (SELECT g, row_number() OVER "
                "(PARTITION BY person ORDER BY hash(person, id)) AS rn "
                "FROM rel) WHERE rn <= {k} GROUP BY g"
            ).format(k=args.k)
        else:
            # the unit's name: itself, or (text) a number it carries
            code = "person" if ids == "int" else "substr(person, 2)"
            base = f"SELECT *, {code} AS person_code FROM rel"
            sql = keyed_floor_sql(base, args.k)
        rel = relation(con, path, units, ids)  # noqa: F841 (read by SQL)
        t0 = time.perf_counter()
        con.sql(sql).fetchall()
        return time.perf_counter() - t0

    declared = {
        "unit": "person",
        "max_records": args.k,
        "record_id": "id",
        "levels": {"g": LEVELS},
    }

    def first() -> float:
        src = pp.source(
            relation(con, path, units, ids), keep_bounded=True, **declared
        )
        t = built(lambda: plot(src, "count_dp"))
        first.src = src  # type: ignore[attr-defined]
        return t

    def unbounded(stat: str) -> float:
        src = pp.source(relation(con, path, units, ids), levels={"g": LEVELS})
        return built(lambda: plot(src, stat))

    f_hash = best(lambda: floor("hash"), args.repeats)
    f_keyed = best(lambda: floor("keyed"), args.repeats)
    t_first = best(first, args.repeats)
    src = first.src  # type: ignore[attr-defined]
    for stat in ("bin_dp", "count_dp"):
        later = best(lambda s=stat: built(lambda: plot(src, s)), args.repeats)
        plain = best(lambda s=stat: unbounded(s), args.repeats)
        print(
            f"duckdb {ids:4s} {rows:.0e} later {stat:8s} {later:7.2f} "
            f"unbounded {plain:7.2f} later/unbounded {later / plain:5.2f} "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    src.invalidate()
    print(
        f"duckdb {ids:4s} {rows:.0e} first {t_first:7.2f} floor(hash) "
        f"{f_hash:7.2f} floor(keyed) {f_keyed:7.2f} first/floor(hash) "
        f"{t_first / f_hash:5.2f} first/floor(keyed) "
        f"{t_first / f_keyed:5.2f} load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def bench_memory(path, rows, units, ids, args, pp) -> None:
    import duckdb
    import numpy as np
    import pandas as pd

    from plotnine_private.identifiers import id_codes
    from plotnine_private.mechanisms.release.bounding import order_keys

    d = relation(duckdb.connect(), path, units, ids).df()
    d["g"] = pd.Categorical(d["g"], categories=LEVELS)

    def floor() -> float:
        t0 = time.perf_counter()
        u, _ = id_codes(d["person"])
        key = order_keys(u, d["id"].to_numpy())
        order = np.lexsort((key, u))
        us = u[order]
        start = np.r_[True, us[1:] != us[:-1]]
        first_at = np.maximum.accumulate(
            np.where(start, np.arange(len(us)), 0)
        )
        rank = np.arange(len(us)) - first_at
        kept = order[rank < args.k]
        np.bincount(d["g"].cat.codes.to_numpy()[kept], minlength=8)
        return time.perf_counter() - t0

    def first() -> float:
        src = pp.source(d, unit="person", max_records=args.k, record_id="id")
        t = built(lambda: plot(src, "count_dp"))
        first.src = src  # type: ignore[attr-defined]
        return t

    f = best(floor, args.repeats)
    t_first = best(first, args.repeats)
    src = first.src  # type: ignore[attr-defined]
    print(
        f"memory {ids:4s} {rows:.0e} first {t_first:7.2f} floor(numpy) "
        f"{f:7.2f} first/floor {t_first / f:5.2f} "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    for stat in ("bin_dp", "count_dp"):
        later = best(lambda s=stat: built(lambda: plot(src, s)), args.repeats)
        plain = best(lambda s=stat: built(lambda: plot(d, s)), args.repeats)
        print(
            f"memory {ids:4s} {rows:.0e} later {stat:8s} {later:7.2f} "
            f"unbounded {plain:7.2f} later/unbounded {later / plain:5.2f} "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )


def bench_variants(path, rows, units, ids, args, pp, memory) -> None:
    import duckdb
    import pandas as pd
    from plotnine import aes, geom_bar, ggplot

    con = duckdb.connect()
    d = None
    if memory:
        d = relation(con, path, units, ids).df()
        d["g"] = pd.Categorical(d["g"], categories=LEVELS)

    def source(**extra):
        unit = {"unit": "person", "max_records": args.k, "record_id": "id"}
        if memory:
            return pp.source(d, **unit, **extra)
        rel = relation(con, path, units, ids)
        return pp.source(rel, levels={"g": LEVELS}, **unit, **extra)

    def timed(count: str, **extra) -> float:
        def once() -> float:
            src = source(**extra)  # a fresh source: bounds again
            return built(
                lambda: (
                    ggplot(src, aes("g"))
                    + geom_bar(stat="count_dp", eps=1, seed=1, count=count)
                )
            )

        return best(once, args.repeats)

    base = timed("records")
    where = "memory" if memory else "duckdb"
    for name, t in (
        ("units", timed("units")),
        ("cells", timed("records", max_cells=2, max_records_per_cell=1)),
    ):
        print(
            f"{where} {ids:4s} {rows:.0e} count_dp {name:5s} {t:7.2f} "
            f"records {base:7.2f} ratio {t / base:5.2f} "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="1e7")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--ids", default="int")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--per-unit", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--variants", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
    import plotnine_private as pp

    for rows in (int(float(r)) for r in args.rows.split(",")):
        path = os.path.join(args.dir, f"pnp_bound_once_{rows}.parquet")
        generate(path, rows)
        units = rows // args.per_unit
        for ids in args.ids.split(","):
            if args.variants:
                bench_variants(path, rows, units, ids, args, pp, False)
                if args.memory:
                    bench_variants(path, rows, units, ids, args, pp, True)
                continue
            bench_duckdb(path, rows, units, ids, args, pp)
            if args.memory:
                bench_memory(path, rows, units, ids, args, pp)


if __name__ == "__main__":
    main()
