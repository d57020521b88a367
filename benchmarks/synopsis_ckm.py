"""A CKM synopsis against ckm_table and the DP synopsis.

Run: ``python benchmarks/synopsis_ckm.py [--rows 200000]`` (about 1 s).

The data (generated, seed 1): ``rows`` records with ``a`` of 10 levels,
``b`` of 4 and ``v`` uniform on (0, 100), declared (0, 100, 1); record
keys from ``add_record_keys(rng_seed=3)``; the p-table
``create_cnt_ptable(D=5, V=2.01, js=2)``; the default workload (every
1- and 2-way marginal: 6 tables, 1,554 cells).

Printed: the time of one CKM synopsis and of one DP synopsis (eps=1) of
the same workload; whether every ``a x b`` cell equals
``ckm_table(df, "a", groups="b")``; how far the published 1-way ``a``
table is from the ``a``-sums of the ``a x b`` table (CKM publishes each
marginal as perturbed); and ``Synopsis.disagreement``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import plotnine_private as pp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    n = parser.parse_args().rows
    rng = np.random.default_rng(1)
    levels_a, levels_b = list("abcdefghij"), ["x", "y", "z", "w"]
    df = pd.DataFrame(
        {
            "a": pd.Categorical(rng.choice(levels_a, n), levels_a),
            "b": pd.Categorical(rng.choice(levels_b, n), levels_b),
            "v": rng.uniform(0, 100, n),
        }
    )
    df = pp.add_record_keys(df, name="rk", rng_seed=3)
    dims = {"a": levels_a, "b": levels_b, "v": (0, 100, 1)}
    pt = pp.create_cnt_ptable(D=5, V=2.01, js=2)
    t = time.perf_counter()
    syn = pp.synopsis(df, dims, method="ckm", rkey="rk", ptable=pt)
    t_ckm = time.perf_counter() - t
    t = time.perf_counter()
    pp.synopsis(df, dims, eps=1, seed=1)
    t_dp = time.perf_counter() - t
    table = pp.ckm_table(df, "a", groups="b", rkey="rk", ptable=pt)
    want = table.set_index(["a", "b"])["count"].sort_index()
    got = syn.marginal(("a", "b")).set_index(["a", "b"])["count"]
    equal = bool((got.sort_index().to_numpy() == want.to_numpy()).all())
    gap = np.abs(syn.tables[("a",)] - syn.tables[("a", "b")].sum(axis=1))
    print(
        f"rows {n}: CKM synopsis {t_ckm:.2f} s, DP synopsis {t_dp:.2f} s, "
        f"{syn.release.cells} cells"
    )
    print(f"every a x b cell equals ckm_table's: {equal}")
    print(
        f"1-way a against the a-sums of a x b: mean |diff| "
        f"{gap.mean():.2f}, max {gap.max():g}; disagreement "
        f"{syn.disagreement:g}"
    )


if __name__ == "__main__":
    main()
