"""
Densities, ECDFs and box plots: plotnine, DP and CKM side by side
=================================================================

The three fine-histogram stats release one histogram of a continuous
variable in public fine bins between public ``limits``; the curve, the
steps or the box are computed from the released counts. ``pp.compare``
draws plotnine's own stat on the raw data (marked "not for release"),
the DP version and the CKM twin, the private panels on shared scales;
the captions give the count noise and how far the drawn values may be
from the noise-free ones (their interval variables at 95%).
"""

import pandas as pd
from plotnine import aes, geom_boxplot, geom_density, geom_step, ggplot
from plotnine.data import mpg

import plotnine_private as pp

cars = pp.add_record_keys(mpg, name="rk", seed=2024)
cars["drv"] = pd.Categorical(cars["drv"], categories=["4", "f", "r"])
ckm = {"ptable": pp.create_cnt_ptable(D=5, V=2.01, js=2), "rkey": "rk"}
MILEAGE = (10, 45)  # public: the range of the test cycle

# %%
# A density of highway mileage per drive train (eps = 2, 70 fine bins).
density = ggplot(cars, aes("hwy", fill="drv")) + geom_density(
    stat="density_dp", limits=MILEAGE, bins=70, eps=2, seed=1, alpha=0.4
)
pp.compare(density, ckm=ckm, figure_size=(14, 3.8)).show()

# %%
# The ECDF of the same records: the running sums of the released
# counts, made monotone.
ecdf = ggplot(cars, aes("hwy", colour="drv")) + geom_step(
    stat="ecdf_dp", limits=MILEAGE, bins=35, eps=2, seed=1
)
pp.compare(ecdf, ckm=ckm, figure_size=(14, 3.8)).show()

# %%
# Box plots: quartiles from the released CDF; no outliers are ever
# drawn (single records are what a box plot must not show).
boxes = ggplot(cars, aes("drv", "hwy")) + geom_boxplot(
    stat="boxplot_dp", limits=MILEAGE, bins=35, eps=2, seed=1
)
pp.compare(boxes, ckm=ckm, figure_size=(14, 3.8)).show()
