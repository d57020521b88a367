"""Timing and accuracy of the private PCA pipeline.

Run: ``python benchmarks/bench_pca.py`` (a few minutes on one core) or
``--quick`` (under a minute). Prints one table per experiment:

1. private directions for n = 1e3 .. 1e6, p = 10 and 50 (``"auto"``:
   exact Kendall matrix up to 5e7 pairs, i.e. n <= 1e4; incomplete with
   1e7 pairs beyond);
2. exact vs incomplete Kendall estimator: error (Frobenius) and time;
3. private frame and histogram at n = 1e7;
4. the whole ``dp_pca`` at n = 1e6, p = 20.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd

from plotnine_private.mechanisms.pca.directions import (
    private_directions,
    spherical_kendall,
)
from plotnine_private.mechanisms.pca.histogram import (
    grid_counts,
    private_histogram,
    score_grid,
)
from plotnine_private.mechanisms.pca.quantile import private_frame
from plotnine_private.mechanisms.streams.randomness import derive_key
from plotnine_private.pca import dp_pca

# a fixed stream key per experiment (the release engine derives real ones
# from the secret, the release and the data)
KEY = derive_key(bytes(32), "bench_pca")


def spiked(n: int, p: int, seed: int) -> np.ndarray:
    """Gaussian data with two leading components (sd 3 and 2)."""
    rng = np.random.default_rng(seed)
    scale = np.ones(p)
    scale[:2] = [3.0, 2.0]
    return rng.normal(size=(n, p)) * scale


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def angle(v: np.ndarray, j: int) -> float:
    """Angle (degrees) between private PC j+1 and the true axis j."""
    return math.degrees(math.acos(min(1.0, abs(float(v[j, j])))))


def bench_directions(sizes, dims) -> pd.DataFrame:
    rows = []
    for p in dims:
        for n in sizes:
            x = spiked(n, p, seed=n + p)
            d, sec = timed(private_directions, x, 1.0, 1e-6, key=KEY)
            rows.append(
                {
                    "n": n,
                    "p": p,
                    "estimator": d.estimator,
                    "shifts": d.shifts,
                    "pairs": d.n_pairs,
                    "seconds": round(sec, 2),
                    "angle_PC1_deg": round(angle(d.vectors, 0), 2),
                    "angle_PC2_deg": round(angle(d.vectors, 1), 2),
                }
            )
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def bench_estimators(n: int, p: int, shift_list) -> pd.DataFrame:
    x = spiked(n, p, seed=3)
    exact, t_exact = timed(spherical_kendall, x, estimator="exact")
    rows = [
        {
            "estimator": "exact",
            "shifts": None,
            "pairs": exact.n_pairs,
            "seconds": round(t_exact, 2),
            "frobenius_error": 0.0,
            "noise_sd_at_eps1": 0.0,
        }
    ]
    for k in shift_list:
        inc, sec = timed(
            spherical_kendall, x, estimator="incomplete", shifts=k, key=KEY
        )
        rows.append(
            {
                "estimator": "incomplete",
                "shifts": k,
                "pairs": inc.n_pairs,
                "seconds": round(sec, 2),
                "frobenius_error": float(
                    np.linalg.norm(inc.matrix - exact.matrix)
                ),
                "noise_sd_at_eps1": None,
            }
        )
    # for scale: Frobenius norm of the privacy noise at eps=1, delta=1e-6
    d = private_directions(x, 1.0, 1e-6, estimator="exact", key=KEY)
    rows[0]["noise_sd_at_eps1"] = d.sigma * math.sqrt(p * (p + 1) / 2)
    out = pd.DataFrame(rows)
    print(out.to_string(index=False), flush=True)
    return out


def bench_frame_histogram(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    s = rng.normal(size=(n, 2)) * [3.0, 1.0] + [10.0, -4.0]
    frame, t_frame = timed(private_frame, s, 0.5, key=KEY)
    grid = score_grid(frame.xlim, frame.ylim, (20, 20))
    counts, t_count = timed(grid_counts, s[:, 0], s[:, 1], grid)
    rows = [
        {"step": "private_frame (3 Durfee quantiles)", "seconds": t_frame},
        {"step": "grid_counts", "seconds": t_count},
    ]
    for method in ("add", "sparse"):
        _, sec = timed(private_histogram, counts, method, 1.0, 1e-6, key=KEY)
        rows.append({"step": f"histogram {method}", "seconds": sec})
    out = pd.DataFrame(rows)
    out["seconds"] = out["seconds"].round(3)
    print(f"n = {n:.0e}; frame {frame.xlim}, {frame.ylim}")
    print(out.to_string(index=False), flush=True)
    return out


def bench_dp_pca(n: int, p: int) -> float:
    x = pd.DataFrame(spiked(n, p, seed=9), columns=[f"V{i}" for i in range(p)])
    res, sec = timed(dp_pca, x, eps=2.0, delta=1e-6, seed=1)
    print(f"dp_pca n={n:.0e} p={p}: {sec:.1f} s; {res!r}", flush=True)
    return sec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        bench_directions([10**3, 10**4, 10**5], [10])
        bench_estimators(2000, 10, [1, 5, 25])
        bench_frame_histogram(10**6)
        bench_dp_pca(10**5, 20)
        return
    bench_directions([10**3, 10**4, 10**5, 10**6], [10, 50])
    bench_estimators(10**4, 10, [1, 10, 100, 1000])
    bench_frame_histogram(10**7)
    bench_dp_pca(10**6, 20)


if __name__ == "__main__":
    main()
