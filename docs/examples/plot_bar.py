"""
Bar charts: plotnine, DP and CKM
================================

The vehicle classes of ``mpg`` are declared as public levels, so every
class gets a bar, empty or not. First plotnine's ``stat_count`` (not
private), then ``stat_count_dp`` with exact discrete Laplace noise
(eps = 1), then ``stat_count_ckm`` with record keys and a p-table.
"""

import pandas as pd
from plotnine import aes, after_stat, geom_bar, geom_text, ggplot, ggtitle
from plotnine.data import mpg

import plotnine_private as pp

CLASSES = [
    "2seater",
    "compact",
    "midsize",
    "minivan",
    "pickup",
    "subcompact",
    "suv",
]  # public: the survey's classes
cars = pp.add_record_keys(mpg, name="rk", rng_seed=2024)
cars["class"] = pd.Categorical(cars["class"], categories=CLASSES)
ptab = pp.create_cnt_ptable(D=5, V=2.01, js=2)
# sphinx_gallery_thumbnail_number = 2

# %%
# The ordinary plot, for comparison (it would not pass output checking):

(ggplot(cars, aes("class")) + geom_bar() + ggtitle("plotnine")).show()

# %%
# Differential privacy: one word changes, plus the budget and a seed. The
# text labels show the same release (same query and seed: counted once).

dp = (
    ggplot(cars, aes("class"))
    + geom_bar(stat="count_dp", eps=1, seed=42)
    + geom_text(
        aes(label=after_stat("count")),
        stat="count_dp",
        eps=1,
        seed=42,
        va="bottom",
    )
    + ggtitle("count_dp, eps = 1")
)
dp.show()

# %%
# What the plot releases and what it costs:

print(pp.privacy_report(dp))

# %%
# The Cell Key Method: the noise is read from the p-table at each bar's
# cell key, so the same records get the same noise in every output.

(
    ggplot(cars, aes("class", rkey="rk"))
    + geom_bar(stat="count_ckm", ptable=ptab)
    + ggtitle("count_ckm, D = 5, V = 2.01, js = 2")
).show()
