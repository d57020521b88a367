"""Benchmark: what the ledger adds to a release.

Times the charge hook alone (``ledger_store._charge_releases``) on a fresh
SQLite file: ``n`` new releases (each one transaction: check, insert,
commit with the file's default journal, then the key file's record of the
data set's spending), then the same ``n`` again (each found in the
ledger: a read, free), and a ``dp_table`` with and without a ledger for
scale. Best of ``repeat`` runs of each figure. A ledger needs a key
file: each run makes one beside its ledger.

Run: ``python benchmarks/bench_ledger.py [n]`` (default 200).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import plotnine_private as pp
from plotnine_private.ledger import store as ledger_store
from plotnine_private.mechanisms.release.engine import Charge


def _charge(i: int) -> Charge:
    return Charge(
        f"id{i}", "ab" * 16, "count", "discrete_laplace", 1.0, 0.0,
        "replace", "data", "cells",
    )  # fmt: skip


def _per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - start) / n * 1e3


def main(n: int = 200, repeat: int = 3) -> None:
    from plotnine.data import mpg

    levels = sorted(mpg["class"].unique())

    def table(i: int) -> None:
        pp.dp_table(mpg, "class", eps=1e-3, seed=1, levels=levels)

    new, again, plain, charged = [], [], [], []
    for r in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "ledger.sqlite"
            pp.use_key(pp.create_key(Path(tmp) / "bench.key"))
            plain.append(_per_call(table, n))
            with pp.use_ledger(path, dataset="bench"):
                off = r * n
                new.append(
                    _per_call(
                        lambda i: ledger_store._charge_releases(
                            [_charge(off + i)]
                        ),
                        n,
                    )
                )
                again.append(
                    _per_call(
                        lambda i: ledger_store._charge_releases(
                            [_charge(off + i)]
                        ),
                        n,
                    )
                )
                charged.append(_per_call(table, n))
    print(f"charge hook, new release:     {min(new):8.2f} ms")
    print(f"charge hook, same release:    {min(again):8.2f} ms")
    print(f"dp_table without a ledger:    {min(plain):8.2f} ms")
    print(f"dp_table under a ledger:      {min(charged):8.2f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
