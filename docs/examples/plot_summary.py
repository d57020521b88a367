"""
Means and totals: plotnine, DP and CKM side by side
===================================================

``stat_summary_dp`` releases a noisy total and a noisy count per cell,
with the values clamped to public ``bounds``; the mean is their ratio
and its 95% interval is drawn as an error bar. The unperturbed panel is
plotnine's ``stat_summary`` with the exact mean (no range: it has no
noise).
"""

import pandas as pd
from plotnine import aes, geom_pointrange, ggplot
from plotnine.data import mpg

import plotnine_private as pp

cars = pp.add_record_keys(mpg, name="rk", seed=2024)
cars["drv"] = pd.Categorical(cars["drv"], categories=["4", "f", "r"])
ckm = {
    "ptable": pp.create_cnt_ptable(D=5, V=2.01, js=2),
    "num_ptable": pp.create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5]),
    "rkey": "rk",
}

mean_hwy = ggplot(cars, aes("drv", "hwy")) + geom_pointrange(
    stat="summary_dp", bounds=(10, 45), eps=2, seed=3
)
pp.compare(mean_hwy, ckm=ckm, figure_size=(14, 3.8)).show()
