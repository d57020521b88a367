"""Coverage of the intervals of every kind of figure drawn from a synopsis.

Run: ``python benchmarks/synopsis_coverage.py [--seeds 60] [--eps 1]
[--alternatives 40]`` (on a shared 2-core machine about 1.5 s a seed for
(A) at both levels and 0.2 s for (B): some 100 s at 60 seeds; 188 s at
100 seeds with ``--alternatives 40``).

The data (generated): (A, seed 1) 600 records of a group ``g`` (3
levels, uniform) and a value ``y`` ~ N(20, 6) clipped to [0, 39.9],
declared ``g: [a, b, c]`` and ``y: (0, 40, 1)`` (40 fine bins, many near
0 in the tails); (B, seed 5, the means only) four groups of 300 at 12,
15, 18 and 21 (sd 3) on ``y: (0, 40, 2)``, half of each group's fine
bins empty (the data of ``tests/test_synopsis_summary.py``). One
synopsis of every 1- and 2-way marginal per seed (a fixed key: the same
noise every run), at ``eps``.

The target of an interval is the same figure drawn by the same layer
from the same data's synopsis at eps 1e7: the figure of the true
marginals through the same drawing, i.e. what it would be without the
release's noise (the intervals are about that noise; the fine bins'
discretisation is the figure's, not the noise's). For the means that is
the mean of the fine-bin centres weighted by the true counts.

Printed per figure kind and level (0.95 and 0.9): the share of marks
whose ``<col>_low``/``<col>_high`` hold the target (``band``: as made
around the linear estimate, with ``draw.HOLD_MARK`` and
``summary.HOLD_MARK`` off; ``held``: widened to hold the drawn mark;
``miss``: the bands that do not hold their own mark), over

* ``bars``: counts of ``g`` (``count_dp``; 3 a seed);
* ``hist``: counts of ``y`` by ``g`` in bins of 4 (``bin_dp``, fill);
* ``ecdf``: ECDF points whose target is in [0.05, 0.95] (at 0 or 1 only
  one side can fail);
* ``density`` and ``violin``: density points whose target is at least
  5% of its group's peak (where it is near 0 the band is cut at 0);
* ``box q1/med/q3``: the quartiles of the box plots (``covers=
  "histogram"``: of the fine histogram, which the target is);
* ``mean`` and ``sum``: ``summary_dp`` of y by g (``fun="mean"``,
  ``"sum"``, ``covers="histogram"``: of the fine-bin centres, which the
  target is).

With n marks a coverage's binomial sd is sqrt(p (1 - p) / n) (printed;
1.3 points at n = 300 and p = 0.95); the marks of one figure are
correlated (the points of one curve, the groups of one synopsis), so the
spread between reruns of other seeds is larger than that for curves.

``--alternatives SEEDS`` also prints the coverage at 0.95 of a basic
parametric bootstrap through the estimator (:func:`bootstrap_alternatives`)
centred on the released tables and on the true ones.

Measured (100 seeds, 160 s), level 0.95 / 0.9, band (held): bars 97.0 /
93.3% of 300, histogram bins 94.1 (94.5) / 89.1 (89.7)% of 3,000, ECDF
94.5 (94.6) / 88.8 (89.3)% of 6,100 points, density and violin 94.9
(95.1) / 89.8 (90.1)% of 116,600, box q1 96.0 / 88.7%, median 93.3 /
88.3%, q3 96.3 / 90.7% of 300, means (A) 94.3 / 87.7% and (B) 95.2 /
92.5%, totals (A) 95.0 / 90.7% and (B) 96.8 / 92.8% (of 300 and 400).
Before the linear estimate (the same simulation around the consistent
tables): histogram bins 99.4%, ECDF 99.8%, density 99.2%, box 99.3-99.7%,
means 92.7 / 100%. The bootstrap alternatives (``--alternatives 40``,
through the clipping estimator): around the released tables ECDF 85.5%
(A) and 89.6% (B), means 91.7% and 85.6%; around the true tables
95.6%, 95.4%, 95.8%, 96.2%.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    geom_bar,
    geom_boxplot,
    geom_density,
    geom_histogram,
    geom_pointrange,
    geom_step,
    geom_violin,
    ggplot,
)

import plotnine_private as pp
from plotnine_private.synopsis import draw as drawing
from plotnine_private.synopsis import summary as summarising

DIMS = {"g": ["a", "b", "c"], "y": (0, 40, 1)}
LEVELS = (0.95, 0.9)


#: the means' second data set: four groups of 300 at 12, 15, 18, 21 (sd
#: 3) on (0, 40, 2): half of each group's fine bins are empty
MEAN_DIMS = {"g": ["a", "b", "c", "d"], "y": (0, 40, 2)}


def mean_data(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = np.concatenate([rng.normal(m, 3, 300) for m in (12, 15, 18, 21)])
    return pd.DataFrame(
        {"g": np.repeat(MEAN_DIMS["g"], 300), "y": y.clip(0, 39.9)}
    )


def data(n: int = 600, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "g": rng.choice(DIMS["g"], n),
            "y": np.clip(rng.normal(20, 6, n), 0, 39.9),
        }
    )


def figures(s, level: float) -> dict:
    """Each kind's plot of the synopsis ``s`` at ``level``."""
    lv = {"level": level}
    return {
        "bars": ggplot(s, aes("g")) + geom_bar(stat="count_dp", **lv),
        "hist": ggplot(s, aes("y", fill="g"))
        + geom_histogram(stat="bin_dp", binwidth=4, **lv),
        "ecdf": ggplot(s, aes("y", colour="g"))
        + geom_step(stat="ecdf_dp", **lv),
        "density": ggplot(s, aes("y", fill="g"))
        + geom_density(stat="density_dp", **lv),
        "violin": ggplot(s, aes("g", "y"))
        + geom_violin(stat="violin_dp", **lv),
        "box": ggplot(s, aes("g", "y"))
        + geom_boxplot(stat="boxplot_dp", covers="histogram", **lv),
        "mean": ggplot(s, aes("g", "y"))
        + geom_pointrange(stat="summary_dp", covers="histogram", **lv),
        "sum": ggplot(s, aes("g", "y"))
        + geom_pointrange(
            stat="summary_dp", fun="sum", covers="histogram", **lv
        ),
    }


#: kind -> (figure, column, which marks: a function of the target frame)
def _all(t: pd.DataFrame, col: str) -> np.ndarray:
    return np.isfinite(t[col].to_numpy(dtype=float))


def _cdf_inside(t: pd.DataFrame, col: str) -> np.ndarray:
    return t[col].between(0.05, 0.95).to_numpy()


def _peak_share(t: pd.DataFrame, col: str) -> np.ndarray:
    peak = t.groupby("group")[col].transform("max")
    return (t[col] >= 0.05 * peak).to_numpy()


MARKS = {
    "bars": ("bars", "count", _all),
    "hist": ("hist", "count", _all),
    "ecdf": ("ecdf", "ecdf", _cdf_inside),
    "density": ("density", "density", _peak_share),
    "violin": ("violin", "density", _peak_share),
    "box q1": ("box", "lower", _all),
    "box med": ("box", "middle", _all),
    "box q3": ("box", "upper", _all),
    "mean": ("mean", "y", _all),
    "sum": ("sum", "y", _all),
}


def use_fixed_key(folder: str) -> None:
    """A key file of fixed bytes: the same noise every run, and no
    stretching of each seed."""
    path = Path(folder) / "coverage.key"
    path.write_bytes(hashlib.blake2b(b"synopsis-coverage").digest()[:32])
    path.chmod(0o600)
    pp.use_key(path)


def coverage(df, dims, kinds, seeds: int, eps: float) -> dict:
    """``{(kind, level): (hits, held, misses, marks)}`` of the figures'
    intervals around the same figures drawn at eps 1e7: ``hits`` of the
    bands as made (``draw.HOLD_MARK`` off), ``held`` of the bands widened
    to hold their drawn marks (what ``HOLD_MARK`` does), ``misses``: the
    bands that do not hold their own mark."""
    figs = sorted({MARKS[k][0] for k in kinds})
    hits = {(k, lv): 0 for k in kinds for lv in LEVELS}
    held = dict.fromkeys(hits, 0)
    misses = dict.fromkeys(hits, 0)
    total = dict.fromkeys(hits, 0)

    def draw(s, level):
        return {f: pp.layer_data(figures(s, level)[f]) for f in figs}

    saved = drawing.HOLD_MARK, summarising.HOLD_MARK
    drawing.HOLD_MARK = summarising.HOLD_MARK = False
    try:
        truth = draw(pp.synopsis(df, dims, eps=1e7, seed="truth"), 0.95)
        for seed in range(seeds):
            s = pp.synopsis(df, dims, eps=eps, seed=seed)
            for lv in LEVELS:
                drawn = draw(s, lv)
                for kind in kinds:
                    fig, col, which = MARKS[kind]
                    t, d = truth[fig], drawn[fig]
                    assert len(t) == len(d), kind
                    sel = which(t, col)
                    v = t[col].to_numpy(dtype=float)[sel]
                    mark = d[col].to_numpy(dtype=float)[sel]
                    lo = d[f"{col}_low"].to_numpy(dtype=float)[sel]
                    hi = d[f"{col}_high"].to_numpy(dtype=float)[sel]
                    # a tiny tolerance: the target and the interval are
                    # sums of the same cells in other orders
                    tol = 1e-9 * np.maximum(np.abs(v), 1.0)
                    hits[kind, lv] += int(
                        ((lo - tol <= v) & (v <= hi + tol)).sum()
                    )
                    lo_m, hi_m = np.fmin(lo, mark), np.fmax(hi, mark)
                    held[kind, lv] += int(
                        ((lo_m - tol <= v) & (v <= hi_m + tol)).sum()
                    )
                    misses[kind, lv] += int(
                        ((mark < lo - tol) | (mark > hi + tol)).sum()
                    )
                    total[kind, lv] += int(sel.sum())
    finally:
        drawing.HOLD_MARK, summarising.HOLD_MARK = saved
    return {
        key: (hits[key], held[key], misses[key], total[key]) for key in hits
    }


def bootstrap_alternatives(df, dims, seeds: int, eps: float) -> dict:
    """Coverage at 0.95 of a basic parametric bootstrap of the ECDF
    (interior points) and the means, computed here with numpy from the
    held 2-way table: 200 draws of discrete Laplace noise of the public
    scale added to every table, made consistent as the release was,
    around (``released``) the released tables, (``oracle``) the true
    ones (what no interval can know). Not the package's intervals: the
    evidence for the choice in docs/synopsis.md."""
    from plotnine_private.synopsis.consistency import make_consistent

    held = ("g", "y")
    lo, hi, res = dims["y"]
    centres = lo + (np.arange(round((hi - lo) / res)) + 0.5) * res

    def feats(t):
        n = t.sum(-1)
        return {
            "ecdf": np.cumsum(t, -1) / n[..., None],
            "mean": (t @ centres) / n,
        }

    def around(s, centre, draws=200):
        rng = np.random.default_rng(38_2026)
        p = -math.expm1(-1.0 / s.scale)
        k = s.marginals.index(held)
        out = np.empty((draws, *centre[k].shape))
        for i in range(draws):
            noisy = [
                t + rng.geometric(p, t.shape) - rng.geometric(p, t.shape)
                for t in centre
            ]
            out[i] = make_consistent(noisy, s.marginals)[0][k]
        return feats(centre[k]), feats(out)

    truth = pp.synopsis(df, dims, eps=1e7, seed="truth")
    ft = feats(truth.tables[held])
    inside = (ft["ecdf"] >= 0.05) & (ft["ecdf"] <= 0.95)
    out: dict = {}
    for seed in range(seeds):
        s = pp.synopsis(df, dims, eps=eps, seed=seed)
        fc = feats(s.tables[held])
        for name, tables in (("released", s.tables), ("oracle", truth.tables)):
            fs, fb = around(s, [tables[m] for m in s.marginals])
            for f in ("ecdf", "mean"):
                q_lo, q_hi = np.quantile(fb[f] - fs[f], [0.025, 0.975], axis=0)
                ok = (fc[f] - q_hi <= ft[f] + 1e-9) & (
                    ft[f] <= fc[f] - q_lo + 1e-9
                )
                sel = inside if f == "ecdf" else np.ones(ok.shape, bool)
                h, n = out.get((f, name), (0, 0))
                out[f, name] = (h + int(ok[sel].sum()), n + int(sel.sum()))
    return out


def table(title: str, result: dict) -> None:
    """Per kind and level: the bands' coverage, that of the bands
    widened to hold their marks, and the share that miss their mark."""
    print(title)
    print(
        f"{'kind':<9}"
        + "".join(f"{f'level {lv}: band / held (miss)':>38}" for lv in LEVELS)
        + f"{'marks':>8}"
    )
    for kind in dict.fromkeys(k for k, _ in result):
        row = f"{kind:<9}"
        for lv in LEVELS:
            h, w, m, n = result[kind, lv]
            n = max(n, 1)
            row += f"{h / n:>20.1%} / {w / n:.1%} ({m / n:.1%})"
        sd = np.sqrt(LEVELS[0] * (1 - LEVELS[0]) / n)
        print(row + f"{n:>8} (sd {sd:.1%} at {LEVELS[0]})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=60)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument(
        "--alternatives",
        type=int,
        default=0,
        metavar="SEEDS",
        help="also the bootstrap alternatives over SEEDS seeds",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # eps 1e7 gives little protection
    with tempfile.TemporaryDirectory() as folder:
        use_fixed_key(folder)
        start = time.perf_counter()
        a = coverage(data(), DIMS, list(MARKS), args.seeds, args.eps)
        took = time.perf_counter() - start
        table(
            f"{args.seeds} seeds at eps {args.eps:g}: 600 records, g 3 x y "
            f"40 fine bins ({took:.0f} s)",
            a,
        )
        start = time.perf_counter()
        b = coverage(
            mean_data(), MEAN_DIMS, ["mean", "sum"], args.seeds, args.eps
        )
        took = time.perf_counter() - start
        table(
            f"{args.seeds} seeds at eps {args.eps:g}: 4 groups of 300, y 20 "
            f"fine bins of 2 ({took:.0f} s)",
            b,
        )
        if args.alternatives:
            for title, df, dims in (
                ("g 3 x y 40", data(), DIMS),
                ("4 groups of 300", mean_data(), MEAN_DIMS),
            ):
                alt = bootstrap_alternatives(
                    df, dims, args.alternatives, args.eps
                )
                print(
                    f"basic bootstrap at 0.95, {title}, "
                    f"{args.alternatives} seeds:"
                )
                for (f, name), (h, n) in sorted(alt.items()):
                    print(
                        f"  {f:<5} around the {name:<8} tables "
                        f"{h / n:.1%} of {n}"
                    )


if __name__ == "__main__":
    main()
