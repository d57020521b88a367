"""
2-D bins and hexagons on a public grid
======================================

``xlim``/``ylim`` (or ``limits=``) make the grid public, so every cell of
the grid is noised: under differential privacy noise shows where there are
no cars. ``geom_hex`` ships with the package (plotnine has none).
"""

from plotnine import aes, geom_bin_2d, ggplot, ggtitle, xlim, ylim
from plotnine.data import mpg

import plotnine_private as pp

box = ((8, 38), (10, 45))  # public: the range of the fuel economy scale

# %%
# Hexagons, DP with eps = 0.5.

(
    ggplot(mpg, aes("cty", "hwy"))
    + pp.geom_hex(stat="binhex_dp", bins=12, limits=box, eps=0.5, seed=1234)
    + ggtitle("binhex_dp, eps = 0.5")
).show()

# %%
# Rectangular bins, DP with eps = 0.5; the scale limits are the public
# grid.

(
    ggplot(mpg, aes("cty", "hwy"))
    + geom_bin_2d(stat="bin2d_dp", bins=10, eps=0.5, seed=1234)
    + xlim(*box[0])
    + ylim(*box[1])
    + ggtitle("bin2d_dp, eps = 0.5")
).show()
