"""
Dates: a private histogram by calendar month
============================================

A ``datetime64`` column is a date axis, as in plotnine. Limits are dates
and ``binwidth`` a calendar step, so the edges fall on month starts and
every month of the public limits gets a count, empty or not.
"""

import numpy as np
import pandas as pd
from plotnine import aes, geom_histogram, ggplot, labs, theme_bw

import plotnine_private as pp

rng = np.random.default_rng(7)
# 600 simulated visits over 2020, busier in spring
days = rng.normal(120, 60, 600).clip(0, 365)
visits = pd.DataFrame(
    {"date": pd.Timestamp("2020-01-01") + pd.to_timedelta(days, unit="D")}
)

p = (
    ggplot(visits, aes("date"))
    + geom_histogram(
        stat="bin_dp",
        limits=("2020-01-01", "2021-01-01"),
        binwidth="1 month",
        eps=1,
        seed=5,
        fill="#4c72b0",
    )
    + pp.geom_noise(
        stat="bin_dp",
        limits=("2020-01-01", "2021-01-01"),
        binwidth="1 month",
        eps=1,
        seed=5,
    )
    + labs(x="month (public limits: 2020)", y="released count")
    + theme_bw()
)
p.show()
