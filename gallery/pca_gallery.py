"""Gallery: private PCA score plots beside ordinary (non-private) PCA.

``render(outdir)`` writes PNGs made from simulated data shaped like
dppca's ``gau_g`` (5 groups of 1000 rows in 20 dimensions, fixed seed):

* ``pca_score.png``      private score histogram | ordinary PCA scatter
* ``pca_groups.png``     group-wise histograms on one private frame
* ``pca_synthetic.png``  synthetic points from the private histogram
* ``pca_biplot.png``     private biplot | ordinary biplot
* ``pca_scree.png``      private vs ordinary proportions of variance
* ``pca_stat.png``       the same release as a plotnine layer
  (``ggplot(df) + stat_dp_pca_score(...)``)

Every right-hand panel is labelled "not private": it is computed from
the raw data for comparison only.

Run: ``python gallery/pca_gallery.py [outdir]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

EPS, DELTA, SEED = 4.0, 1e-5, 2026


def gau_like(n_per_group: int = 1000, p: int = 20, seed: int = 1):
    """Five Gaussian groups along two hidden directions (gau_g-like)."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.normal(size=(p, p)))
    u1, u2 = basis[:, 0], basis[:, 1]
    means = [0 * u1, 10 * u1, -7 * u1, -3 * u2, 7 * u2]
    spread = [1.0, 0.7, 1.3, 1.0, 1.2]
    frames = []
    for g, (m, s) in enumerate(zip(means, spread), start=1):
        x = rng.normal(size=(n_per_group, p)) * s + m
        part = pd.DataFrame(x, columns=[f"V{i}" for i in range(1, p + 1)])
        part["group"] = f"group{g}"
        frames.append(part)
    df = pd.concat(frames, ignore_index=True)
    # the group labels are public (the study design): declare them
    levels = [f"group{g}" for g in range(1, len(means) + 1)]
    df["group"] = pd.Categorical(df["group"], categories=levels)
    return df


def render(outdir: str | Path) -> list[Path]:
    """Write the gallery PNGs into ``outdir``; return their paths."""
    from plotnine import aes, coord_fixed, ggplot, labs, theme_minimal

    from plotnine_private import dp_pca, stat_dp_pca_score

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    df = gau_like()
    cols = [c for c in df.columns if c != "group"]
    fit = dp_pca(df, cols, eps=EPS, delta=DELTA, seed=SEED, reference=True)
    groups = dp_pca(
        df,
        cols,
        eps=EPS,
        delta=DELTA,
        seed=SEED,
        group="group",
        reference=True,
    )
    plots = {
        "pca_score.png": fit.plot("score"),
        "pca_groups.png": groups.plot("score"),
        "pca_synthetic.png": groups.plot("synthetic"),
        "pca_biplot.png": fit.plot("biplot"),
        "pca_scree.png": fit.plot("scree"),
        "pca_stat.png": (
            ggplot(df, aes(fill="group"))
            + stat_dp_pca_score(
                columns=cols, eps=EPS, delta=DELTA, seed=SEED, bins=25
            )
            + coord_fixed()
            + labs(title="stat_dp_pca_score: group-wise private histogram")
            + theme_minimal()
        ),
    }
    paths = []
    for name, plot in plots.items():
        path = out / name
        size = (6, 5) if name == "pca_stat.png" else (10, 5)
        plot.save(path, width=size[0], height=size[1], dpi=100, verbose=False)
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in render(sys.argv[1] if len(sys.argv) > 1 else "gallery_out"):
        print(p)
