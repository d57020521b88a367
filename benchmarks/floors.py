"""Issue-23 figures next to their floors, measured in the same run.

Run: ``python benchmarks/floors.py [--repeat 3] [--max-cells 1e7]
[--only sampler,table,ckm,ptable,pca]``.

Each figure is the minimum CPU time (``time.process_time``: every thread
of the process, so a shared machine inflates it less than wall-clock
time) of ``--repeat`` runs, printed with the floor (the same amount of
work done by numpy alone), the ratio private / floor, and the 1-minute
load average when the figure was taken. Floors:

* exact discrete Laplace (keyed per-cell streams, integer sampler), for
  stream versions 3 (the default; cells of a public domain named by
  place), 2 and 1 (cells named by words): numpy's float
  ``Generator.laplace`` on as many cells;
* ``dp_table`` over a declared domain of 10**6 labels, under stream
  versions 3 and 2: ``np.bincount`` of the codes plus numpy's float
  Laplace on every cell; each followed by the CPU seconds of each of its
  stages (naming, digest, identity, noise...) in the least of
  ``--repeat`` more runs, each stage's function wrapped in a timer;
* ``count_ckm`` and ``count_dp`` (whole plot build, 10**7 rows in
  memory): ``np.bincount`` of the category codes; and CKM / DP;
* ``create_cnt_ptable(D=20, V=2)``: no floor (one-off table);
* ``dp_pca`` (n=10**6, p=20), with the scree's version 2 (the default)
  and version 1: scikit-learn's ``PCA`` if installed, else numpy's
  ``eigh`` of the covariance (``X^T X``, one BLAS pass), stated; the
  version 2 figure is followed by its user and system seconds.

BLAS runs one thread (``OPENBLAS_NUM_THREADS=1`` unless set): CPU time
would otherwise count its threads' idle spinning on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import warnings
from copy import deepcopy
from pathlib import Path
from typing import Any

# CPU time counts the idle spinning of a multi-threaded BLAS on a shared
# machine (dp_pca measured 7-10 s with two BLAS threads under load, 3.3 s
# with one): one BLAS thread unless the caller chose otherwise
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import make_data, stat_pairs  # noqa: E402

from plotnine_private import dp_table  # noqa: E402
from plotnine_private.mechanisms.ptable import create_cnt_ptable  # noqa: E402
from plotnine_private.mechanisms.ptable.build import (  # noqa: E402
    _create_cached,
)
from plotnine_private.mechanisms.samplers import laplace as lap  # noqa: E402
from plotnine_private.mechanisms.streams.places import (  # noqa: E402
    PlaceStreams,
)
from plotnine_private.mechanisms.streams.randomness import (  # noqa: E402
    _labels_digest,
    _prefixed_labels,
    cell_words,
    derive_key,
)
from plotnine_private.mechanisms.streams.versions import (  # noqa: E402
    cell_streams,
    use_stream_version,
)


def best(fn, repeat: int) -> tuple[float, float]:
    """(minimum CPU seconds of ``repeat`` runs, load average at the
    best)."""
    out = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        out.append((time.process_time() - t0, os.getloadavg()[0]))
    return min(out)


def line(what: str, private, floor=None, floor_name: str = "") -> None:
    sec, load = private
    text = f"{what:<44} {sec:8.3f} s CPU (load {load:4.1f})"
    if floor is not None:
        fsec, fload = floor
        text += (
            f" | {floor_name} {fsec:7.3f} s (load {fload:4.1f})"
            f" | ratio {sec / fsec:6.1f}x"
        )
    print(text, flush=True)


def bench_sampler(sizes, repeat: int) -> None:
    key = derive_key(bytes(32), "bench")
    rng = np.random.default_rng(0)
    for n in sizes:
        words = cell_words(np.arange(n))
        floor = best(lambda: rng.laplace(0.0, 2.0, size=n), repeat)
        for version in (3, 2, 1):

            def streams(version=version):
                if version == 3:  # a whole public domain, named by place
                    return PlaceStreams(key, bytes(32), n)
                return cell_streams(key, words, version)

            private = best(
                lambda: lap.discrete_laplace(
                    streams(), lap.rational_scale(2, 1.0)
                ),
                repeat,
            )
            line(
                f"discrete Laplace b=2, v{version}, {n:.0e} cells "
                f"({n / private[0]:.2g}/s)",
                private,
                floor,
                "numpy float Laplace",
            )


def declared_frame(m: int = 10**6) -> pd.DataFrame:
    """``m`` records of a categorical ``x`` over ``m`` declared text
    labels (seeded): the table of the dp_table figures."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, m, size=m)
    cats = [f"c{i}" for i in range(m)]
    return pd.DataFrame({"x": pd.Categorical.from_codes(codes, cats)})


def first_table(df: pd.DataFrame) -> pd.DataFrame:
    """``dp_table`` of ``df`` as a first table: every run encodes its
    domain afresh (string labels are read into a new buffer per call;
    the cache of tuples of labels, other paths, is cleared all the
    same)."""
    _prefixed_labels.cache_clear()
    _labels_digest.cache_clear()
    return dp_table(df, "x", eps=1, seed=1)


def bench_table(repeat: int, m: int = 10**6) -> None:
    df = declared_frame(m)
    codes = np.asarray(df["x"].cat.codes, dtype=np.int64)
    rng = np.random.default_rng(0)

    def private_fn():
        return first_table(df)

    def floor_fn():
        counts = np.bincount(codes, minlength=m)
        return counts + rng.laplace(0.0, 2.0, size=m)

    floor = best(floor_fn, repeat)
    for version in (3, 2):
        with use_stream_version(version):
            private = best(private_fn, repeat)
            line(
                f"dp_table v{version}, {m:.0e} declared cells "
                f"({m / private[0]:.2g}/s)",
                private,
                floor,
                "bincount + float Laplace",
            )
            table_stages(private_fn, repeat)


def _table_stages() -> list[tuple[Any, str, str]]:
    """(owner, attribute, label) of the stages of a ``dp_table`` call,
    outer stages first; a label's indent says which stage it is in."""
    from plotnine_private import cells, tables
    from plotnine_private.mechanisms.naming import cellnames
    from plotnine_private.mechanisms.release import (
        cell_table,
        count_mechanisms,
        engine,
        query,
    )
    from plotnine_private.mechanisms.streams import places

    return [
        (tables, "_declared_labels", "labels from Arrow's buffers"),
        (tables, "assemble", "assemble (codes, bincount, cells)"),
        (cells, "cell_table", "  cell_table"),
        (places.PlaceDomain, "cell_words", "    cells' words (v1, v2)"),
        (cellnames.StrLabels, "_make_words", "      labels' words"),
        (engine.Query, "identity", "Query.identity"),
        (cellnames.StrLabels, "_make_prefixed", "  labels' prefixed bytes"),
        (cellnames.StrLabels, "digest", "  labels' digest (v3)"),
        (query, "_name_cells", "cells_name (BLAKE2b of the domain)"),
        (engine.CellTable, "digest", "CellTable.digest"),
        (cell_table, "row_order", "  row order (v1, v2)"),
        (cell_table, "data_digest", "  BLAKE2b of the sorted cells (v1, v2)"),
        (places.PlaceDomain, "digest", "  domain digest (v3)"),
        (cell_table, "place_digest", "  digest in place order (v3)"),
        (count_mechanisms.LaplaceCounts, "perturb", "perturb"),
        (places.PlaceStreams, "heads", "  SHAKE-128 heads (v3)"),
        (lap, "discrete_laplace", "  exact discrete Laplace"),
        (tables, "label_values", "output labels"),
    ]


def table_stages(fn, repeat: int) -> None:
    """CPU seconds of each stage of ``fn`` (a ``dp_table`` call), in the
    run with the least total of ``repeat``; each stage's function is
    wrapped in a timer for these runs only (the figure above is taken
    without them)."""
    stages = _table_stages()
    spent: dict[str, float] = {}
    originals = [
        (owner, name, getattr(owner, name)) for owner, name, _ in stages
    ]
    for (owner, name, f), (_, _, label) in zip(originals, stages):

        def timed(*args, _f=f, _label=label, **kwargs):
            t0 = time.process_time()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] = (
                    spent.get(_label, 0.0) + time.process_time() - t0
                )

        setattr(owner, name, timed)
    runs = []
    try:
        for _ in range(repeat):
            spent.clear()
            t0 = time.process_time()
            fn()
            runs.append((time.process_time() - t0, dict(spent)))
    finally:
        for owner, name, f in originals:
            setattr(owner, name, f)
    total, parts = min(runs, key=lambda r: r[0])
    print(f"{'  stages of the least run':<44} {total:8.3f} s CPU", flush=True)
    top = 0.0
    for _, _, label in stages:
        sec = parts.get(label, 0.0)
        if not label.startswith(" "):
            top += sec
        print(f"{'    ' + label:<44} {sec:8.3f} s", flush=True)
    print(f"{'    (the rest)':<44} {total - top:8.3f} s", flush=True)


def bench_ckm(n: int, repeat: int) -> None:
    d = make_data(n)
    _, _, dp_plot, ckm_plot = next(stat_pairs(d))
    for p in (dp_plot, ckm_plot):
        deepcopy(p)._build()  # warm caches (p-table, imports)
    codes = d["cat"].cat.codes.to_numpy()
    floor = best(lambda: np.bincount(codes), repeat)
    dp = best(lambda: deepcopy(dp_plot)._build(), repeat)
    ckm = best(lambda: deepcopy(ckm_plot)._build(), repeat)
    line(f"count_dp plot build, {n:.0e} rows", dp, floor, "bincount")
    line(f"count_ckm plot build, {n:.0e} rows", ckm, floor, "bincount")
    line("count_ckm / count_dp", ckm, dp, "count_dp")


def bench_ptable(repeat: int) -> None:
    def build():
        _create_cached.cache_clear()
        create_cnt_ptable(D=20, V=2)

    line("create_cnt_ptable(D=20, V=2), uncached", best(build, repeat))


def user_and_system(fn, repeat: int) -> list[tuple[float, float, float]]:
    """(user, system) CPU seconds of each of ``repeat`` runs, and the
    load average after it.

    A 10**6 x 20 release faults in some 200 MB of fresh memory: on a
    shared machine the kernel's share of that (system time) varies from
    0.02 to 0.5 s between runs, so the two are printed apart."""
    out = []
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        fn()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        user, system = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
        out.append((user, system, os.getloadavg()[0]))
    return out


def bench_pca(n: int, p: int, repeat: int) -> None:
    from bench_pca import spiked

    from plotnine_private.pca import dp_pca

    x = pd.DataFrame(spiked(n, p, seed=9), columns=[f"V{i}" for i in range(p)])

    def release():
        dp_pca(x, eps=2.0, delta=1e-6, seed=1)

    release()  # the seed's key stretching and first imports, not timed
    runs = user_and_system(release, repeat)
    private = min((u + s, load) for u, s, load in runs)
    former = best(
        lambda: dp_pca(x, eps=2.0, delta=1e-6, seed=1, scree_version="v1"),
        repeat,
    )
    arr = x.to_numpy()
    try:
        from sklearn.decomposition import PCA

        name = "scikit-learn PCA"
        floor = best(lambda: PCA(n_components=2).fit(arr), repeat)
    except ImportError:
        name = "numpy eigh(cov) (no sklearn)"

        def floor_fn():
            c = arr - arr.mean(axis=0)
            return np.linalg.eigh(c.T @ c / (n - 1))

        floor = best(floor_fn, repeat)
    line(f"dp_pca n={n:.0e} p={p}", private, floor, name)
    for user, system, load in runs:
        print(
            f"{'  a run':<44} {user:8.3f} s user, {system:.3f} s system "
            f"(load {load:4.1f})",
            flush=True,
        )
    line(f"dp_pca n={n:.0e} p={p}, scree v1", former, floor, name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-cells", type=float, default=1e7)
    ap.add_argument("--only", default="sampler,table,ckm,ptable,pca")
    args = ap.parse_args()
    only = set(args.only.split(","))
    print(
        f"numpy {np.__version__}; {os.cpu_count()} cores; BLAS threads "
        f"{os.environ['OPENBLAS_NUM_THREADS']}; min CPU time of "
        f"{args.repeat} runs",
        flush=True,
    )
    sizes = [10**k for k in range(4, 8) if 10**k <= args.max_cells]
    if "sampler" in only:
        bench_sampler(sizes, args.repeat)
    if "table" in only:
        bench_table(args.repeat)
    if "ckm" in only:
        bench_ckm(int(args.max_cells), args.repeat)
    if "ptable" in only:
        bench_ptable(args.repeat)
    if "pca" in only:
        bench_pca(10**6, 20, args.repeat)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    main()
