"""
Histograms with public breaks
=============================

Bin edges computed from the data (deciles, the data range,
Freedman-Diaconis) would disclose order statistics of the records, so the
private histograms take public ``breaks=`` (or ``limits=`` with ``bins=``).
Every bin of the public grid is noised, empty ones included.
"""

from plotnine import aes, after_stat, geom_histogram, ggplot, ggtitle, labs
from plotnine.data import diamonds

import plotnine_private as pp

BREAKS = [0, 500, 1000, 1500, 2500, 4000, 6000, 9000, 13000, 19000]
gems = pp.add_record_keys(diamonds, name="rk", rng_seed=2024)
ptab = pp.create_cnt_ptable(D=5, V=2.01, js=2)
density = after_stat("count / width")

# %%
# Differential privacy, eps = 1 (the bars show count / width, recomputed
# from the released counts: post-processing is free).

dp = (
    ggplot(gems, aes("price", density))
    + geom_histogram(
        stat="bin_dp",
        breaks=BREAKS,
        eps=1,
        seed=23,
        fill="white",
        color="black",
    )
    + labs(y="count / width")
    + ggtitle("bin_dp, eps = 1, public breaks")
)
dp.show()

# %%
# The Cell Key Method on the same breaks.

(
    ggplot(gems, aes("price", density, rkey="rk"))
    + geom_histogram(
        stat="bin_ckm", breaks=BREAKS, ptable=ptab, fill="white", color="black"
    )
    + labs(y="count / width")
    + ggtitle("bin_ckm, public breaks")
).show()

# %%
# The numbers the DP layer released, as an output checker sees them:

print(pp.layer_data(dp)[["xmin", "xmax", "count", "density"]])
