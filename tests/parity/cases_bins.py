"""Histogram and 2-D bin cases: test_geom_bar_col_histogram,
test_geom_bin_2d, test_stat_calculate_methods and the geom_histogram /
geom_bin_2d docs. The public limits are the data range, as plotnine bins
it."""

from __future__ import annotations

from .cases import A, Case, L, add, x

HWY = (12, 44)
DISPL = (1.6, 7.0)
CARAT = (0.21, 3.01)
PRICE = (339, 18730)
LADDER = (1, 10)

# -- bin ----------------------------------------------------------------
add(
    Case(
        "histogram-count",
        "bin",
        "ladder",
        {"x": "x"},
        [
            L(
                "geom_histogram",
                {"fill": "zf"},
                {"bins": 10},
                {"limits": LADDER},
            )
        ],
    )
)
add(
    Case(
        "histogram-breaks",
        "bin",
        "ladder",
        {"x": "x"},
        [L("geom_histogram", params={"breaks": [0, 2.5, 5, 7.5, 10]})],
    )
)
add(
    Case(
        "histogram-weights",
        "bin",
        "ladder",
        {"x": "x", "weight": "z"},
        [L("geom_histogram", params={"bins": 5}, declare={"limits": LADDER})],
    )
)
add(
    # plotnine's default bins: Freedman-Diaconis of the data (11 for hwy)
    Case(
        "histogram-hwy-fd",
        "bin",
        "mpg",
        {"x": "hwy"},
        [L("geom_histogram", declare={"limits": HWY, "bins": 11})],
    )
)
add(
    Case(
        "histogram-hwy-bins10",
        "bin",
        "mpg",
        {"x": "hwy"},
        [L("geom_histogram", params={"bins": 10}, declare={"limits": HWY})],
    )
)
add(
    Case(
        "histogram-hwy-xlim",
        "bin",
        "mpg",
        {"x": "hwy"},
        [L("geom_histogram", params={"bins": 10})],
        extras=(x("xlim", *HWY),),
    ),
    twin_image=True,
)
add(
    Case(
        "histogram-hwy-binwidth",
        "bin",
        "mpg",
        {"x": "hwy"},
        [L("geom_histogram", params={"binwidth": 2}, declare={"limits": HWY})],
    )
)
add(
    Case(
        "histogram-hwy-boundary",
        "bin",
        "mpg",
        {"x": "hwy"},
        [
            L(
                "geom_histogram",
                params={"binwidth": 2, "boundary": 0},
                declare={"limits": HWY},
            )
        ],
    )
)
add(
    Case(
        "histogram-hwy-center",
        "bin",
        "mpg",
        {"x": "hwy"},
        [
            L(
                "geom_histogram",
                params={"binwidth": 3, "center": 0},
                declare={"limits": HWY},
            )
        ],
    )
)
add(
    Case(
        "histogram-hwy-fill",
        "bin",
        "mpg",
        {"x": "hwy", "fill": "drv"},
        [L("geom_histogram", params={"bins": 10}, declare={"limits": HWY})],
    )
)
add(
    Case(
        "histogram-hwy-wrap",
        "bin",
        "mpg",
        {"x": "hwy"},
        [L("geom_histogram", params={"bins": 10}, declare={"limits": HWY})],
        extras=(x("facet_wrap", "drv"),),
    )
)
add(
    Case(
        "histogram-density-wrap",
        "bin",
        "mpg",
        {"x": "hwy", "y": A("density")},
        [L("geom_histogram", params={"bins": 10}, declare={"limits": HWY})],
        extras=(x("facet_wrap", "drv"),),
    )
)
add(
    Case(
        "histogram-ncount-grid",
        "bin",
        "mpg",
        {"x": "hwy", "y": A("ncount")},
        [L("geom_histogram", params={"bins": 10}, declare={"limits": HWY})],
        extras=(x("facet_grid", "fyear ~ drv"),),
    )
)
add(
    Case(
        "histogram-ndensity-fill",
        "bin",
        "mpg",
        {"x": "hwy", "y": A("ndensity"), "fill": "drv"},
        [
            L(
                "geom_histogram",
                params={"bins": 10, "position": "identity"},
                declare={"limits": HWY},
            )
        ],
    )
)
add(
    Case(
        "freqpoly-hwy",
        "bin",
        "mpg",
        {"x": "hwy", "colour": "drv"},
        [L("geom_freqpoly", params={"bins": 10}, declare={"limits": HWY})],
    )
)
add(
    Case(
        "histogram-carat",
        "bin",
        "diamonds",
        {"x": "carat"},
        [
            L(
                "geom_histogram",
                params={"binwidth": 0.1},
                declare={"limits": CARAT},
            )
        ],
    )
)
add(
    Case(
        "histogram-price-cut",
        "bin",
        "diamonds",
        {"x": "price", "fill": "cut"},
        [
            L(
                "geom_histogram",
                params={"binwidth": 1000},
                declare={"limits": PRICE},
            )
        ],
    )
)
add(
    Case(
        "histogram-sqrt-breaks",
        "bin",
        "ladder",
        {"x": "x"},
        [L("geom_histogram", params={"breaks": [1, 2.5, 4, 10]})],
        extras=(x("scale_x_sqrt"),),
    )
)
add(
    Case(
        "histogram-labels",
        "bin",
        "mpg",
        {"x": "hwy"},
        [
            L("geom_histogram", params={"bins": 10}, declare={"limits": HWY}),
            L(
                "geom_text",
                {"label": A("count")},
                {"bins": 10, "va": "bottom"},
                {"limits": HWY},
            ),
        ],
    )
)
add(
    Case(
        "histogram-sqrt-coord",
        "bin",
        "mpg",
        {"x": "hwy", "fill": "drv"},
        [L("geom_histogram", params={"bins": 10}, declare={"limits": HWY})],
        extras=(x("coord_trans", y="sqrt"),),
    )
)

add(
    # xlim censors the record at 49 before the stat: the first bin, (49,
    # 51] by plotnine's rule for binwidth=2, counts 50 and 51 only
    Case(
        "histogram-xlim-censored",
        "bin",
        "edge4",
        {"x": "x"},
        [L("geom_histogram", params={"binwidth": 2})],
        extras=(x("xlim", 50, 90),),
    ),
    twin_image=True,
)

# -- bin_2d ---------------------------------------------------------------
DIAG = ((1, 18), (1, 18))  # the data range
add(
    Case(
        "bin2d-drop-true",
        "bin_2d",
        "diagonal",
        {"x": "x", "y": "y"},
        [
            L(
                "geom_bin_2d",
                params={"binwidth": 2, "drop": True},
                declare={"limits": DIAG},
            )
        ],
    )
)
add(
    Case(
        "bin2d-drop-false",
        "bin_2d",
        "diagonal",
        {"x": "x", "y": "y"},
        [
            L(
                "geom_bin_2d",
                params={"binwidth": 2, "drop": False},
                declare={"limits": DIAG},
            )
        ],
    )
)
add(
    Case(
        "bin2d-breaks",
        "bin_2d",
        "diagonal",
        {"x": "x", "y": "y"},
        [
            L(
                "geom_bin_2d",
                params={"breaks": ([0, 5, 10, 20], [0, 5, 10, 20])},
            )
        ],
    )
)
add(
    Case(
        "bin2d-bins10",
        "bin_2d",
        "diagonal",
        {"x": "x", "y": "y"},
        [L("geom_bin_2d", params={"bins": 10}, declare={"limits": DIAG})],
    )
)
add(
    Case(
        "bin2d-mpg",
        "bin_2d",
        "mpg",
        {"x": "displ", "y": "hwy"},
        [
            L(
                "geom_bin_2d",
                params={"bins": 10},
                declare={"limits": (DISPL, HWY)},
            )
        ],
    )
)
add(
    Case(
        "bin2d-mpg-binwidth",
        "bin_2d",
        "mpg",
        {"x": "displ", "y": "hwy"},
        [
            L(
                "geom_bin_2d",
                params={"binwidth": (0.5, 4)},
                declare={"limits": (DISPL, HWY)},
            )
        ],
    )
)
add(
    Case(
        "bin2d-mpg-wrap",
        "bin_2d",
        "mpg",
        {"x": "displ", "y": "hwy"},
        [
            L(
                "geom_bin_2d",
                params={"bins": 8},
                declare={"limits": (DISPL, HWY)},
            )
        ],
        extras=(x("facet_wrap", "drv"),),
    )
)
add(
    Case(
        "bin2d-mpg-density",
        "bin_2d",
        "mpg",
        {"x": "displ", "y": "hwy", "fill": A("density")},
        [
            L(
                "geom_bin_2d",
                params={"bins": 8},
                declare={"limits": (DISPL, HWY)},
            )
        ],
        extras=(x("facet_wrap", "fyear"),),
    )
)
add(
    Case(
        "bin2d-diamonds",
        "bin_2d",
        "diamonds",
        {"x": "carat", "y": "price"},
        [
            L(
                "geom_bin_2d",
                params={"bins": 20},
                declare={"limits": (CARAT, PRICE)},
            )
        ],
    )
)
add(
    Case(
        "bin2d-diamonds-wrap",
        "bin_2d",
        "diamonds",
        {"x": "carat", "y": "price"},
        [
            L(
                "geom_bin_2d",
                params={"binwidth": (0.25, 1000)},
                declare={"limits": (CARAT, PRICE)},
            )
        ],
        extras=(x("facet_wrap", "cut"),),
    )
)
add(
    # the grid starts on the low limits: its first tiles are drawn from 4
    # (within the limits), records are cut at edges moved out by one
    # epsilon, and those outside the limits are censored
    Case(
        "bin2d-lim-grid",
        "bin_2d",
        "square",
        {"x": "x", "y": "y"},
        [L("geom_bin_2d", params={"bins": 30})],
        extras=(x("xlim", 4, 10), x("ylim", 4, 10)),
    ),
    twin_image=True,
)
