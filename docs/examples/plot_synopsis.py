"""
One synopsis, several figures
=============================

``pp.synopsis`` releases the marginals of ``mpg``'s class, drive and
highway mileage once (eps = 2 in all), made consistent; every figure
below is drawn from it with an ordinary plotnine call, with no new noise
and no new charge. The bars by class are the sums of the bars split by
drive, and the histogram's bins are sums of the declared 2-mpg fine
bins.
"""

from plotnine import aes, geom_bar, geom_boxplot, geom_histogram, ggplot
from plotnine.data import mpg

import plotnine_private as pp

dims = {
    "class": [
        "2seater",
        "compact",
        "midsize",
        "minivan",
        "pickup",
        "subcompact",
        "suv",
    ],  # public: the survey's classes
    "drv": ["4", "f", "r"],
    "hwy": (10, 50, 2),  # public range of the test cycle, 2 mpg bins
}
syn = pp.synopsis(mpg, dims, eps=2, seed=7)

# %%
# Bars split by drive, with their 95% intervals:

(
    ggplot(syn, aes("class", fill="drv"))
    + geom_bar(stat="count_dp")
    + pp.geom_noise()
).show()

# %%
# A histogram at 4 mpg, two fine bins each:

(
    ggplot(syn, aes("hwy"))
    + geom_histogram(stat="bin_dp", binwidth=4)
    + pp.geom_noise()
).show()

# %%
# Box plots of the same fine histogram per drive:

(ggplot(syn, aes("drv", "hwy")) + geom_boxplot(stat="boxplot_dp")).show()

# %%
# One release in the report, however many figures:

print(pp.privacy_report(ggplot(syn, aes("drv")) + geom_bar(stat="count_dp")))
