"""The synopsis's consistent marginals against its raw noisy ones.

Run: ``python benchmarks/synopsis_error.py [--seeds 40] [--eps 1,4]``.

On plotnine's ``mpg`` (234 rows; class x drv x hwy in 20 fine bins of 2,
every 1- and 2-way marginal: 6 marginals, 251 cells), for each total
eps and seed: one ``pp.synopsis`` release. The raw noisy tables have the
distribution of six separate ``dp_table`` releases at eps/6 each (same
mechanism and scale); the consistent tables are their post-processing.
Printed per marginal: the mean absolute error per cell of the raw and
the consistent counts against the truth, and the largest disagreement
between two raw tables' shared 1-way totals (the consistent ones agree:
their ``disagreement`` is printed too).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from plotnine.data import mpg

import plotnine_private as pp

DIMS = {
    "class": sorted(mpg["class"].unique()),
    "drv": ["4", "f", "r"],
    "hwy": (10, 50, 2),
}


def truth(mg: tuple[str, ...]) -> np.ndarray:
    codes, shape = [], []
    for d in mg:
        if d == "hwy":
            codes.append(((mpg["hwy"] - 10) // 2).to_numpy().astype(int))
            shape.append(20)
        else:
            codes.append(pd.Categorical(mpg[d], DIMS[d]).codes.astype(int))
            shape.append(len(DIMS[d]))
    out = np.zeros(shape)
    np.add.at(out, tuple(codes), 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--eps", default="1,4")
    args = ap.parse_args()
    warnings.simplefilter("ignore", pp.PrivacyWarning)
    for eps in map(float, args.eps.split(",")):
        raw_err: dict = {}
        con_err: dict = {}
        gaps, left = [], []
        for seed in range(args.seeds):
            s = pp.synopsis(mpg, DIMS, eps=eps, seed=seed)
            for mg in s.marginals:
                t = truth(mg)
                raw_err.setdefault(mg, []).append(np.abs(s.raw[mg] - t).mean())
                con_err.setdefault(mg, []).append(
                    np.abs(s.tables[mg] - t).mean()
                )
            a = s.raw[("class",)]
            b = s.raw[("class", "drv")].sum(axis=1)
            gaps.append(np.abs(a - b).max())
            left.append(s.disagreement)
        print(
            f"eps={eps:g} (eps/6={eps / 6:.3g} per marginal), "
            f"{args.seeds} seeds"
        )
        print(f"  {'marginal':<18} {'raw MAE':>9} {'consistent MAE':>15}")
        for mg in raw_err:
            print(
                f"  {','.join(mg):<18} {np.mean(raw_err[mg]):9.2f} "
                f"{np.mean(con_err[mg]):15.2f}"
            )
        allr = np.mean([np.mean(v) for v in raw_err.values()])
        allc = np.mean([np.mean(v) for v in con_err.values()])
        print(f"  {'mean of marginals':<18} {allr:9.2f} {allc:15.2f}")
        print(
            f"  raw class vs class-by-drv totals: max gap mean "
            f"{np.mean(gaps):.1f}; consistent: max {max(left):.1e}"
        )


if __name__ == "__main__":
    main()
