"""Timing of p-table construction and lookup (a script, not a test).

Run: ``python benchmarks/bench_ptable.py``. Prints wall-clock seconds for
``create_cnt_ptable`` (first call solves the optimisation problems, a
repeated call hits the cache) and for ``PTable.noise`` on 10**4..10**7
cells.
"""

from __future__ import annotations

import time

import numpy as np

from plotnine_private.mechanisms.ptable import create_cnt_ptable
from plotnine_private.mechanisms.ptable.build import _create_cached


def best_of(fn, repeat: int = 3) -> float:
    """Smallest wall-clock time of ``repeat`` runs, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_create() -> None:
    cases = [
        {"D": 5, "V": 2.01, "js": 2},
        {"D": 5, "V": 3, "js": 2, "pstay": 0.5},
        {"D": 10, "V": 6},
        {"D": 10, "V": 6, "js": 3, "pstay": 0.3},
    ]
    print("create_cnt_ptable            uncached     cached")
    for case in cases:

        def uncached(case=case):
            _create_cached.cache_clear()
            create_cnt_ptable(**case)

        first = best_of(uncached)
        create_cnt_ptable(**case)
        cached = best_of(lambda case=case: create_cnt_ptable(**case), 100)
        label = ", ".join(f"{k}={v}" for k, v in case.items())
        print(f"  {label:<26} {first * 1e3:8.1f} ms {cached * 1e6:7.1f} us")


def bench_noise() -> None:
    pt = create_cnt_ptable(D=5, V=2.01, js=2)
    rng = np.random.default_rng(0)
    print("PTable.noise (D=5, js=2)     seconds   ns/cell")
    for n in (10**4, 10**5, 10**6, 10**7):
        counts = rng.integers(0, 40, size=n)
        sums = rng.integers(0, 10**8 * 30, size=n)
        sec = best_of(lambda c=counts, s=sums: pt.noise(c, s))
        print(f"  {n:>10,d} cells          {sec:8.4f}  {sec / n * 1e9:7.1f}")


if __name__ == "__main__":
    bench_create()
    bench_noise()
