"""
A private PCA score plot
========================

``dp_pca`` releases private directions, eigenvalues, a private frame and a
private 2-D histogram of the scores; every figure drawn from them is
post-processing. The group labels are declared (the study design is
public), so each group gets its own histogram.
"""

import numpy as np
import pandas as pd

import plotnine_private as pp

rng = np.random.default_rng(1)
p = 10
basis, _ = np.linalg.qr(rng.normal(size=(p, p)))
centres = {"a": 0 * basis[:, 0], "b": 8 * basis[:, 0], "c": 6 * basis[:, 1]}
frames = [
    pd.DataFrame(
        rng.normal(size=(800, p)) + m, columns=[f"V{i}" for i in range(p)]
    ).assign(group=g)
    for g, m in centres.items()
]
df = pd.concat(frames, ignore_index=True)
df["group"] = pd.Categorical(df["group"], categories=list(centres))
columns = [f"V{i}" for i in range(p)]

fit = pp.dp_pca(df, columns, eps=4, delta=1e-5, seed=7, group="group")

# %%
# What each part of the release costs:

print(fit.privacy)

# %%
# The score plot: a private histogram per group.

fit.plot("score").show()

# %%
# Synthetic points drawn from the released histogram (free
# post-processing).

fit.plot("synthetic").show()
