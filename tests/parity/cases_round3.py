"""Cases of issue 36 (swap for swap, round three): one per class that
failed, each as plotnine's user writes it."""

from __future__ import annotations

import numpy as np

from .cases import Case, L, add, x

HWY = {"limits": (10, 46), "bins": 144}

# 2: drop=True leaves out a summary sum's empty (x, fill) combinations
add(
    Case(
        "summary-sum-dodge-drop",
        "summary",
        "mpg",
        {"x": "class", "y": "hwy", "fill": "drv"},
        [
            L(
                "geom_col",
                params={"fun_y": np.sum, "position": "dodge"},
                declare={"bounds": (0, 50)},
            )
        ],
    ),
    ckm=False,
)
# 4: box plots of an empty declared (x, fill) pair are left out
add(
    Case(
        "boxplot-class-fill-drv",
        "boxplot",
        "mpg",
        {"x": "class", "y": "hwy", "fill": "drv"},
        [L("geom_boxplot", declare={**HWY, "drop": True})],
    )
)
# 7: scale_x_reverse with public limits
add(
    Case(
        "histogram-reverse",
        "bin",
        "mpg",
        {"x": "displ"},
        [L("geom_histogram", params={"bins": 10})],
        extras=(x("scale_x_reverse", limits=(1, 8)),),
    )
)
add(
    # limits= are in data units: reversed, (1.6, 7) runs from -7 to -1.6
    Case(
        "histogram-reverse-declared",
        "bin",
        "mpg",
        {"x": "displ"},
        [
            L(
                "geom_histogram",
                params={"bins": 10},
                declare={"limits": (1.6, 7.0)},
            )
        ],
        extras=(x("scale_x_reverse"),),
    )
)
# 9: levels= with a median of a numeric x
add(
    Case(
        "summary-median-levels",
        "summary",
        "mtcars",
        {"x": "cyl", "y": "mpg"},
        [
            L(
                "geom_point",
                params={"fun_y": np.median},
                declare={"bounds": (0, 40), "levels": [4, 6, 8]},
            )
        ],
    ),
    ckm=False,
)

# refusals built: geom_count of two declared categories (plotnine's and
# ggplot2's cut x clarity example)
add(
    Case(
        "count-cut-clarity",
        "sum",
        "diamonds",
        {"x": "cut", "y": "clarity"},
        [L("geom_count")],
    )
)
# refusals built: stat_summary under scale_y_log10 (the mean of log10 y,
# as plotnine; bounds in data units, resolution in the scale's)
add(
    Case(
        "summary-mean-log10",
        "summary",
        "mpg",
        {"x": "class", "y": "hwy"},
        [
            L(
                "geom_point",
                params={"fun_y": np.mean},
                declare={
                    "bounds": (1, 50),
                    "resolution": 1e-7,
                    "errorbar": None,
                },
            )
        ],
        extras=(x("scale_y_log10"),),
    ),
    ckm=False,
)
# refusals built: fun_ymin/fun_ymax of the released pieces (a minimum,
# maximum or median is a quantile of the released fine histogram)
add(
    Case(
        "summary-median-min-max",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [
            L(
                "geom_pointrange",
                params={
                    "fun_y": np.median,
                    "fun_ymin": np.min,
                    "fun_ymax": np.max,
                },
                declare={"bounds": (0, 40)},
            )
        ],
    ),
    ckm=False,
)
# refusals built: plotnine's bandwidth rules, from the released fine
# histogram (post-processing: no eps)
add(
    Case(
        "density-hwy-scott",
        "density",
        "mpg",
        {"x": "hwy"},
        [
            L(
                "geom_density",
                params={"bw": "scott"},
                declare={"limits": (0, 60)},
            )
        ],
        extras=(x("xlim", 0, 60),),
    )
)
