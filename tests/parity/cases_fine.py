"""Density, ECDF and box plot cases: test_geom_density, test_stat_ecdf,
test_geom_boxplot, test_stat_calculate_methods and their docs. The
private twin smooths, accumulates or summarises one fine histogram on
public limits, with plotnine's bandwidth (nrd0 of the data) declared."""

from __future__ import annotations

from plotnine.stats.stat_density import nrd0

from .cases import A, Case, L, add, dataset, x


def bw(data: str, col: str, **where) -> float:
    """plotnine's default bandwidth of a column: the declared ``bw``."""
    d = dataset(data)
    for k, v in where.items():
        d = d[d[k] == v]
    return float(nrd0(d[col].to_numpy(dtype=float)))


HWY_WIDE = (0, 60)
XLIM_HWY = x("xlim", *HWY_WIDE)

# -- density ------------------------------------------------------------
add(
    Case(
        "density-hwy",
        "density",
        "mpg",
        {"x": "hwy"},
        [
            L(
                "geom_density",
                declare={"limits": HWY_WIDE, "bw": bw("mpg", "hwy")},
            )
        ],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-bw2",
        "density",
        "mpg",
        {"x": "hwy"},
        [L("geom_density", params={"bw": 2}, declare={"limits": HWY_WIDE})],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-epa",
        "density",
        "mpg",
        {"x": "hwy"},
        [
            L(
                "geom_density",
                params={"bw": 2, "kernel": "epanechnikov"},
                declare={"limits": HWY_WIDE},
            )
        ],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-fill",
        "density",
        "mpg",
        {"x": "hwy", "fill": "drv"},
        [
            L(
                "geom_density",
                params={"bw": 2, "alpha": 0.3},
                declare={"limits": HWY_WIDE},
            )
        ],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-nrd0-groups",
        "density",
        "mpg",
        {"x": "hwy", "colour": "drv"},
        [
            L(
                "geom_density",
                declare={"limits": HWY_WIDE, "bw": bw("mpg", "hwy")},
            )
        ],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-wrap",
        "density",
        "mpg",
        {"x": "hwy"},
        [L("geom_density", params={"bw": 2}, declare={"limits": HWY_WIDE})],
        extras=(XLIM_HWY, x("facet_wrap", "drv")),
    )
)
add(
    Case(
        "density-hwy-count",
        "density",
        "mpg",
        {"x": "hwy", "y": A("count")},
        [L("geom_density", params={"bw": 2}, declare={"limits": HWY_WIDE})],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-scaled",
        "density",
        "mpg",
        {"x": "hwy", "y": A("scaled"), "colour": "drv"},
        [L("geom_density", params={"bw": 2}, declare={"limits": HWY_WIDE})],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-ladder-gaussian",
        "density",
        "ladder6",
        {"x": "x", "fill": "zf"},
        [
            L(
                "geom_density",
                params={"kernel": "gaussian", "alpha": 0.3},
                declare={"limits": (-3, 9), "bw": bw("ladder6", "x")},
            )
        ],
        extras=(x("xlim", -3, 9),),
    )
)
add(
    Case(
        "density-ladder-bw",
        "density",
        "ladder6",
        {"x": "x", "colour": "zf"},
        [L("geom_density", params={"bw": 0.5}, declare={"limits": (-3, 9)})],
        extras=(x("xlim", -3, 9),),
    )
)
add(
    Case(
        "density-carat",
        "density",
        "diamonds",
        {"x": "carat"},
        [L("geom_density", params={"bw": 0.1}, declare={"limits": (0, 3.5)})],
        extras=(x("xlim", 0, 3.5),),
    )
)

# -- ecdf -----------------------------------------------------------------
add(
    Case(
        "ecdf",
        "ecdf",
        "ten",
        {"x": "x"},
        [L("geom_step", declare={"limits": (-1, 10), "bins": 110})],
        extras=(x("xlim", -1, 10),),
    )
)
add(
    Case(
        "ecdf-no-pad",
        "ecdf",
        "ten",
        {"x": "x"},
        [
            L(
                "geom_step",
                params={"pad": False},
                declare={"limits": (-1, 10), "bins": 110},
            )
        ],
        extras=(x("xlim", -1, 10),),
    )
)
add(
    Case(
        "ecdf-hwy",
        "ecdf",
        "mpg",
        {"x": "hwy"},
        [L("geom_step", declare={"limits": (10, 46), "bins": 144})],
        extras=(x("xlim", 10, 46),),
    )
)
add(
    Case(
        "ecdf-hwy-colour",
        "ecdf",
        "mpg",
        {"x": "hwy", "colour": "drv"},
        [L("geom_step", declare={"limits": (10, 46), "bins": 144})],
        extras=(x("xlim", 10, 46),),
    )
)
add(
    Case(
        "ecdf-hwy-wrap",
        "ecdf",
        "mpg",
        {"x": "hwy"},
        [L("geom_step", declare={"limits": (10, 46), "bins": 144})],
        extras=(x("xlim", 10, 46), x("facet_wrap", "drv")),
    )
)

# -- boxplot -----------------------------------------------------------------
BOX = {"limits": (10, 46), "bins": 144}
add(
    Case(
        "boxplot-class-hwy",
        "boxplot",
        "mpg",
        {"x": "class", "y": "hwy"},
        [L("geom_boxplot", declare=BOX)],
    )
)
add(
    Case(
        "boxplot-class-fill",
        "boxplot",
        "mpg",
        {"x": "class", "y": "hwy", "fill": "class"},
        [L("geom_boxplot", declare=BOX)],
    )
)
add(
    Case(
        "boxplot-drv-hwy",
        "boxplot",
        "mpg",
        {"x": "drv", "y": "hwy"},
        [L("geom_boxplot", declare=BOX)],
    )
)
add(
    Case(
        "boxplot-drv-flip",
        "boxplot",
        "mpg",
        {"x": "drv", "y": "hwy"},
        [L("geom_boxplot", declare=BOX)],
        extras=(x("coord_flip"),),
    )
)
add(
    Case(
        "boxplot-drv-wrap",
        "boxplot",
        "mpg",
        {"x": "drv", "y": "hwy"},
        [L("geom_boxplot", declare=BOX)],
        extras=(x("facet_wrap", "fyear"),),
    )
)
add(
    Case(
        "boxplot-drv-fill-year",
        "boxplot",
        "mpg",
        {"x": "drv", "y": "hwy", "fill": "fyear"},
        [L("geom_boxplot", declare=BOX)],
    )
)

# -- the range from xlim/ylim, trim and bounds (class 8 of issue 20) -------
# no limits= declared: the scale's limits are the public range, as for
# the bin stats (records outside them are left out, as plotnine censors)
add(
    Case(
        "density-hwy-xlim-only",
        "density",
        "mpg",
        {"x": "hwy"},
        [L("geom_density", params={"bw": 2})],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-scale-limits",
        "density",
        "mpg",
        {"x": "hwy", "fill": "drv"},
        [L("geom_density", params={"bw": 2, "alpha": 0.3})],
        extras=(x("scale_x_continuous", limits=(5, 50)),),
    )
)
add(
    Case(
        "density-hwy-bounds",
        "density",
        "mpg",
        {"x": "hwy"},
        [L("geom_density", params={"bw": 2, "bounds": (12, 44)})],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-bounds-open",
        "density",
        "mpg",
        {"x": "hwy", "colour": "drv"},
        [
            L(
                "geom_density",
                params={"bw": 2, "bounds": (12, float("inf"))},
            )
        ],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "density-hwy-trim",
        "density",
        "mpg",
        {"x": "hwy", "fill": "drv"},
        [L("geom_density", params={"bw": 2, "trim": True, "alpha": 0.3})],
        extras=(XLIM_HWY,),
    )
)
add(
    Case(
        "ecdf-hwy-xlim-only",
        "ecdf",
        "mpg",
        {"x": "hwy"},
        [L("geom_step", declare={"bins": 144})],
        extras=(x("xlim", 10, 46),),
    )
)
add(
    Case(
        "boxplot-drv-ylim-only",
        "boxplot",
        "mpg",
        {"x": "drv", "y": "hwy"},
        [L("geom_boxplot", declare={"bins": 120})],
        extras=(x("ylim", 0, 60),),
    )
)
