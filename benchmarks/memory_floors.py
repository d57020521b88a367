"""Issue-39 figures: in-memory builds, tables, the ledger and dp_pca next
to their floors, measured in one run.

Run: ``python benchmarks/memory_floors.py [--repeat 3] [--rows 1e7]
[--interval-rows 1e6] [--only count,stats,memory,table,ledger,pca,
intervals]`` (with the worktree first on ``PYTHONPATH`` when another
copy of the package is installed).

Each figure is the minimum CPU time (``time.process_time``) of
``--repeat`` runs, with the 1-minute load average at the best run, next
to its floor and the ratio private / floor:

* ``count``: ``count_dp`` whole plot build (``deepcopy`` + ``_build``) at
  ``--rows`` rows, on a pandas ``Categorical`` and on a ``str`` column
  with ``levels=``; floor ``np.bincount`` of the integer codes;
* ``stats``: ``boxplot_dp`` and ``summary_dp`` builds at the same rows,
  against ``bin_dp``'s build on the same column (the issue's floor);
* ``memory``: peak memory of one build (``tracemalloc``) against the
  bytes of the columns the plot reads;
* ``table``: ``dp_table`` over 10**6 declared cells, with an ``int``, a
  ``str`` (both with ``levels=``) and a ``Categorical`` column, in cells
  per second, each a first table (the caches of recent domains cleared);
  the ``int`` levels as an array, quarter-valued ``float`` levels as an
  array, a ``Categorical`` of int categories; then the ``int`` table
  under stream version 4 (numeric domains named by one digest of their
  float64 buffer), its levels a list and a ``range``, and the float
  array; then naive date-times (one a minute from 1900), their levels a
  list of Timestamps, a ``DatetimeIndex`` and a Categorical's
  categories; floor ``np.bincount`` plus numpy's float Laplace;
* ``ledger``: the Categorical ``dp_table`` again under a ledger (a
  repeat, charged nothing) minus the call without a ledger, the two
  interleaved;
* ``pca``: ``dp_pca`` at 10**6 x 20 in a fresh process (imports
  included), against scikit-learn's ``PCA(2).fit_transform`` in another
  fresh process (imports included), each the wall time of the child's
  work as the child measures it (``process_time``), best of
  ``--repeat`` processes;
* ``intervals``: density and box plot builds at ``level=0.9`` on
  ``--interval-rows`` rows against the same builds with the stat's
  ``add_intervals`` made a no-op.

BLAS runs one thread (``OPENBLAS_NUM_THREADS=1`` unless set).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable
from copy import deepcopy
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from plotnine import (  # noqa: E402
    aes,
    geom_bar,
    geom_boxplot,
    geom_density,
    geom_histogram,
    geom_pointrange,
    ggplot,
)

import plotnine_private as pp  # noqa: E402
from plotnine_private.mechanisms.streams.randomness import (  # noqa: E402
    _labels_digest,
    _prefixed_labels,
)

LEVELS = [f"level{i}" for i in range(10)]


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(minimum CPU seconds of ``repeat`` runs, load average then)."""
    out = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        out.append((time.process_time() - t0, os.getloadavg()[0]))
    return min(out)


def line(what: str, private, floor=None, floor_name: str = "") -> None:
    sec, load = private
    text = f"{what:<46} {sec:8.3f} s CPU (load {load:4.1f})"
    if floor is not None:
        fsec, fload = floor
        text += (
            f" | {floor_name} {fsec:7.3f} s (load {fload:4.1f})"
            f" | ratio {sec / fsec:6.2f}x"
        )
    print(text, flush=True)


def rows(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    codes = rng.integers(0, len(LEVELS), size=n)
    return pd.DataFrame(
        {
            "cat": pd.Categorical.from_codes(codes, LEVELS),
            "s": np.asarray(LEVELS, dtype=object)[codes],
            "y": rng.normal(size=n),
        }
    )


def build(p) -> Any:
    return deepcopy(p)._build()


def count_plots(d: pd.DataFrame) -> dict[str, Any]:
    return {
        "Categorical": ggplot(d, aes("cat"))
        + geom_bar(stat="count_dp", eps=1, seed=1),
        "str + levels=": ggplot(d, aes("s"))
        + geom_bar(stat="count_dp", eps=1, seed=1, levels=LEVELS),
    }


def stat_plots(d: pd.DataFrame) -> dict[str, Any]:
    lim = (-5.0, 5.0)
    return {
        "bin_dp": ggplot(d, aes("y"))
        + geom_histogram(stat="bin_dp", bins=48, limits=lim, eps=1, seed=1),
        "boxplot_dp": ggplot(d, aes("cat", "y"))
        + geom_boxplot(stat="boxplot_dp", limits=lim, bins=48, eps=1, seed=1),
        "summary_dp": ggplot(d, aes("cat", "y"))
        + geom_pointrange(stat="summary_dp", bounds=lim, eps=1, seed=1),
    }


def bench_count(d: pd.DataFrame, repeat: int) -> None:
    n = len(d)
    codes = d["cat"].cat.codes.to_numpy()
    floor = best(lambda: np.bincount(codes), repeat)
    for name, p in count_plots(d).items():
        build(p)
        line(
            f"count_dp {name}, {n:.0e} rows",
            best(lambda p=p: build(p), repeat),
            floor,
            "bincount",
        )


def bench_stats(d: pd.DataFrame, repeat: int) -> None:
    n = len(d)
    plots = stat_plots(d)
    for p in plots.values():
        build(p)
    floor = best(lambda: build(plots["bin_dp"]), repeat)
    line(f"bin_dp, {n:.0e} rows", floor)
    for name in ("boxplot_dp", "summary_dp"):
        line(
            f"{name}, {n:.0e} rows",
            best(lambda p=plots[name]: build(p), repeat),
            floor,
            "bin_dp",
        )


def peak(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench_memory(d: pd.DataFrame) -> None:
    plots = {**count_plots(d), **stat_plots(d)}
    reads = {
        "Categorical": ["cat"],
        "str + levels=": ["s"],
        "bin_dp": ["y"],
        "boxplot_dp": ["cat", "y"],
        "summary_dp": ["cat", "y"],
    }
    for name, p in plots.items():
        build(p)
        cols = int(d[reads[name]].memory_usage(index=False, deep=True).sum())
        top = peak(lambda p=p: build(p))
        print(
            f"{'peak memory ' + name:<46} {top / 1e6:8.1f} MB | columns "
            f"read {cols / 1e6:7.1f} MB | ratio {top / cols:5.2f}x",
            flush=True,
        )


def first_table(df: pd.DataFrame, levels=None) -> pd.DataFrame:
    """``dp_table`` of ``df`` as a first table: the caches of the last
    domains' bytes are cleared, so its domain is named afresh."""
    _prefixed_labels.cache_clear()
    _labels_digest.cache_clear()
    return pp.dp_table(df, "x", eps=1, seed=1, levels=levels)


def bench_table(repeat: int, m: int = 10**6) -> None:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, m, size=m)
    labels = [f"c{i}" for i in range(m)]
    frames = {
        "int": (pd.DataFrame({"x": codes}), list(range(m))),
        "str": (
            pd.DataFrame({"x": np.asarray(labels, dtype=object)[codes]}),
            labels,
        ),
        "Categorical": (
            pd.DataFrame({"x": pd.Categorical.from_codes(codes, labels)}),
            None,
        ),
    }
    floor = best(
        lambda: (
            np.bincount(codes, minlength=m) + rng.laplace(0.0, 2.0, size=m)
        ),
        repeat,
    )
    cases = [(name, df, levels, 3) for name, (df, levels) in frames.items()]
    # numbers in other forms: levels as an int array, quarter floats as
    # an array, a Categorical of int categories
    quarters = codes / 4
    cases += [
        ("int array", frames["int"][0], np.arange(m), 3),
        ("float array", pd.DataFrame({"x": quarters}), np.arange(m) / 4, 3),
        (
            "int Categorical",
            pd.DataFrame(
                {"x": pd.Categorical(codes, categories=np.arange(m))}
            ),
            None,
            3,
        ),
        ("int v4", frames["int"][0], frames["int"][1], 4),
        ("int v4 range", frames["int"][0], range(m), 4),
        ("float array v4", pd.DataFrame({"x": quarters}), np.arange(m) / 4, 4),
    ]
    # naive date-times, one a minute from 1900: levels as a list of
    # Timestamps, as a DatetimeIndex, and a Categorical's categories
    days = pd.date_range("1900-01-01", periods=m, freq="min")
    dates = pd.DataFrame({"x": days[codes]})
    cases += [
        ("date list", dates, list(days), 3),
        ("date index", dates, days, 3),
        (
            "date cat",
            pd.DataFrame({"x": pd.Categorical(days[codes], categories=days)}),
            None,
            3,
        ),
    ]
    for name, df, levels, version in cases:
        with pp.use_stream_version(version):
            private = best(
                lambda df=df, levels=levels: first_table(df, levels), repeat
            )
        line(
            f"dp_table {name}, {m:.0e} cells ({m / private[0]:.2g}/s)",
            private,
            floor,
            "bincount+Laplace",
        )


def bench_ledger(repeat: int, m: int = 10**6) -> None:
    labels = [f"c{i}" for i in range(m)]
    codes = np.random.default_rng(0).integers(0, m, size=m)
    df = pd.DataFrame({"x": pd.Categorical.from_codes(codes, labels)})

    def table():
        first_table(df)

    with tempfile.TemporaryDirectory() as tmp:
        pp.use_key(pp.create_key(Path(tmp) / "bench.key"))
        try:
            table()  # with the key: the first release, out of a ledger
            plain, again = [], []
            with pp.use_ledger(Path(tmp) / "l.sqlite", dataset="b", cap_eps=1):
                first = best(table, 1)
            for _ in range(repeat):  # interleaved: the same load for both
                plain.append(best(table, 1))
                with pp.use_ledger(
                    Path(tmp) / "l.sqlite", dataset="b", cap_eps=1
                ):
                    again.append(best(table, 1))
        finally:
            pp.use_key(None)
    line(f"dp_table {m:.0e} cells, no ledger", min(plain))
    line(f"dp_table {m:.0e} cells, first under a ledger", first)
    line(
        f"dp_table {m:.0e} cells, a ledger repeat",
        min(again),
        min(plain),
        "none",
    )
    print(
        f"{'  the ledger repeat adds':<46} "
        f"{(min(again)[0] - min(plain)[0]) * 1e3:8.1f} ms CPU",
        flush=True,
    )


_PCA_CHILD = """
import os, time, sys
t0 = time.process_time()
import numpy as np
rng = np.random.default_rng(9)
n, p = 10**6, 20
x = rng.normal(size=(n, p)) @ rng.normal(size=(p, p))
t1 = time.process_time()
if sys.argv[1] == "sklearn":
    from sklearn.decomposition import PCA
    PCA(n_components=2).fit_transform(x)
else:
    import pandas as pd
    import plotnine_private as pp
    pp.dp_pca(pd.DataFrame(x, columns=[f"V{i}" for i in range(p)]),
              eps=2.0, delta=1e-6, seed=1)
print(time.process_time() - t1, os.getloadavg()[0])
"""


def bench_pca(repeat: int) -> None:
    def child(which: str) -> tuple[float, float]:
        runs = []
        for _ in range(repeat):
            out = subprocess.run(
                [sys.executable, "-c", _PCA_CHILD, which],
                capture_output=True,
                text=True,
                check=True,
                env=os.environ.copy(),
            ).stdout.split()
            runs.append((float(out[0]), float(out[1])))
        return min(runs)

    try:
        floor = child("sklearn")
    except subprocess.CalledProcessError:
        print("dp_pca: scikit-learn is not installed, no floor", flush=True)
        floor = None
    line(
        "dp_pca 1e6 x 20, fresh process (with imports)",
        child("pp"),
        floor,
        "sklearn PCA(2)",
    )


def bench_intervals(repeat: int, n: int) -> None:
    from plotnine_private.stats.boxplot import stat_boxplot_dp
    from plotnine_private.stats.density import stat_density_dp

    d = rows(n)
    lim = (-5.0, 5.0)
    plots = {
        "density_dp": (
            stat_density_dp,
            ggplot(d, aes("y"))
            + geom_density(
                stat="density_dp", limits=lim, eps=1, seed=1, level=0.9
            ),
        ),
        "boxplot_dp": (
            stat_boxplot_dp,
            ggplot(d, aes("cat", "y"))
            + geom_boxplot(
                stat="boxplot_dp",
                limits=lim,
                bins=48,
                eps=1,
                seed=1,
                level=0.9,
            ),
        ),
    }
    for name, (cls, p) in plots.items():
        build(p)
        with_them = best(lambda p=p: build(p), repeat)
        original = cls.add_intervals
        cls.add_intervals = lambda self, out, released: None  # type: ignore
        try:
            build(p)
            without = best(lambda p=p: build(p), repeat)
        finally:
            cls.add_intervals = original  # type: ignore
        line(
            f"{name} level=0.9, {n:.0e} rows",
            with_them,
            without,
            "no intervals",
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--interval-rows", type=float, default=1e6)
    ap.add_argument(
        "--only", default="count,stats,memory,table,ledger,pca,intervals"
    )
    args = ap.parse_args()
    only = set(args.only.split(","))
    print(
        f"numpy {np.__version__}, pandas {pd.__version__}; "
        f"{os.cpu_count()} cores; BLAS threads "
        f"{os.environ['OPENBLAS_NUM_THREADS']}; min CPU time of "
        f"{args.repeat} runs; load {os.getloadavg()[0]:.1f} at start",
        flush=True,
    )
    n = int(args.rows)
    if only & {"count", "stats", "memory"}:
        d = rows(n)
        if "count" in only:
            bench_count(d, args.repeat)
        if "stats" in only:
            bench_stats(d, args.repeat)
        if "memory" in only:
            bench_memory(d)
        del d
    if "table" in only:
        bench_table(args.repeat)
    if "ledger" in only:
        bench_ledger(args.repeat)
    if "pca" in only:
        bench_pca(args.repeat)
    if "intervals" in only:
        bench_intervals(args.repeat, int(args.interval_rows))


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    main()
