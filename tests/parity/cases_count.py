"""Count and sum cases."""

from __future__ import annotations

from .cases import A, Case, L, add, x

LADDER = list(range(1, 11))
CLASS = [
    "2seater",
    "compact",
    "midsize",
    "minivan",
    "pickup",
    "subcompact",
    "suv",
]

# -- count: test_geom_bar_col_histogram and the geom_bar docs -----------
add(
    Case(
        "bar-count",
        "count",
        "ladder",
        {"x": "x"},
        [L("geom_bar", {"fill": "zf"}, declare={"levels": LADDER})],
    )
)
add(
    Case(
        "stat-count-weight",
        "count",
        "count3",
        {"x": "x", "fill": "x"},
        [L("geom_bar")],
    )
)
# CKM perturbs the count and scales it by the cell's mean weight: weights
# 1.5 and 1.6 count 3.1, as in plotnine (DP refuses weights: no DP case)
add(
    Case(
        "bar-fractional-weights-ckm",
        "count",
        "wts",
        {"x": "x", "weight": "w"},
        [L("geom_bar")],
        mech="ckm",
    ),
    ckm=False,
)
add(
    Case(
        "histogram-fractional-weights-ckm",
        "bin",
        "wts",
        {"x": "v", "weight": "w"},
        [L("geom_histogram", params={"bins": 3}, declare={"limits": (1, 4)})],
        mech="ckm",
    ),
    ckm=False,
)
# plotnine draws a bar for the missing value: declared as a public level
# (missing_level=True), the private twins release and draw it too
add(
    Case(
        "bar-missing-level",
        "count",
        "na3",
        {"x": "x"},
        [L("geom_bar", declare={"missing_level": True})],
    )
)
add(
    Case(
        "bar-missing-fill",
        "count",
        "na3",
        {"x": "x", "fill": "f"},
        [L("geom_bar", declare={"missing_level": True})],
    )
)
add(Case("bar-class", "count", "mpg", {"x": "class"}, [L("geom_bar")]))
add(
    Case(
        "bar-class-fill-class",
        "count",
        "mpg",
        {"x": "class", "fill": "class"},
        [L("geom_bar")],
    )
)
add(
    Case(
        "bar-class-fill-drv",
        "count",
        "mpg",
        {"x": "class", "fill": "drv"},
        [L("geom_bar")],
    )
)
add(
    Case(
        "bar-class-dodge",
        "count",
        "mpg",
        {"x": "class", "fill": "drv"},
        [L("geom_bar", params={"position": "dodge"})],
    )
)
add(
    Case(
        "bar-class-fillpos",
        "count",
        "mpg",
        {"x": "class", "fill": "drv"},
        [L("geom_bar", params={"position": "fill"})],
    )
)
add(
    Case(
        "bar-class-flip",
        "count",
        "mpg",
        {"x": "class"},
        [L("geom_bar")],
        extras=(x("coord_flip"),),
    )
)
add(
    Case(
        "bar-class-wrap",
        "count",
        "mpg",
        {"x": "class"},
        [L("geom_bar")],
        extras=(x("facet_wrap", "drv"),),
    )
)
add(
    Case(
        "bar-class-grid",
        "count",
        "mpg",
        {"x": "class"},
        [L("geom_bar")],
        extras=(x("facet_grid", "fyear ~ drv"),),
    )
)
add(
    Case(
        "bar-prop",
        "count",
        "mpg",
        {"x": "class", "y": A("prop"), "group": 1},
        [L("geom_bar")],
    )
)
add(
    Case(
        "bar-prop-wrap",
        "count",
        "mpg",
        {"x": "class", "y": A("prop"), "group": 1},
        [L("geom_bar")],
        extras=(x("facet_wrap", "drv"),),
    )
)
add(
    Case(
        "bar-label",
        "count",
        "mpg",
        {"x": "class"},
        [
            L("geom_bar"),
            L("geom_text", {"label": A("count")}, {"va": "bottom"}),
        ],
    )
)
add(
    Case(
        "bar-diamonds-cut", "count", "diamonds", {"x": "cut"}, [L("geom_bar")]
    )
)
add(
    Case(
        "bar-diamonds-clarity",
        "count",
        "diamonds",
        {"x": "cut", "fill": "clarity"},
        [L("geom_bar")],
    )
)
add(
    Case(
        "bar-scale-limits",
        "count",
        "mpg",
        {"x": "class"},
        [L("geom_bar")],
        extras=(x("scale_x_discrete", limits=CLASS),),
    )
)
add(
    Case(
        "bar-sqrt",
        "count",
        "mpg",
        {"x": "class", "fill": "drv"},
        [L("geom_bar")],
        extras=(x("coord_trans", y="sqrt"),),
    )
)
add(
    Case(
        "bar-cyl-int",
        "count",
        "mtcars",
        {"x": "cyl"},
        [L("geom_bar", declare={"levels": [4, 6, 8]})],
    )
)
add(
    Case(
        "bar-fcyl-am",
        "count",
        "mtcars",
        {"x": "fcyl", "fill": "fam"},
        [L("geom_bar")],
    )
)

# -- sum: test_geom_count and the geom_count docs ----------------------
add(
    Case(
        "count-continuous-x-y",
        "sum",
        "count3",
        {"x": "y", "y": "y"},
        [
            L(
                "geom_count",
                declare={"limits": ((0, 11), (0, 11)), "resolution": (1, 1)},
            )
        ],
    )
)
add(
    Case(
        "count-mpg-cty-hwy",
        "sum",
        "mpg",
        {"x": "cty", "y": "hwy"},
        [
            L(
                "geom_count",
                declare={"limits": ((8, 36), (11, 45)), "resolution": (1, 1)},
            )
        ],
    )
)
add(
    Case(
        "count-mpg-prop",
        "sum",
        "mpg",
        {"x": "cty", "y": "hwy", "size": A("prop"), "group": 1},
        [
            L(
                "geom_count",
                declare={"limits": ((8, 36), (11, 45)), "resolution": (1, 1)},
            )
        ],
    )
)
add(
    Case(
        "count-mpg-wrap",
        "sum",
        "mpg",
        {"x": "cty", "y": "hwy"},
        [
            L(
                "geom_count",
                declare={"limits": ((8, 36), (11, 45)), "resolution": (1, 1)},
            )
        ],
        extras=(x("facet_wrap", "drv"),),
    )
)
add(
    Case(
        "count-mpg-colour",
        "sum",
        "mpg",
        {"x": "cty", "y": "hwy", "colour": "drv"},
        [
            L(
                "geom_count",
                declare={"limits": ((8, 36), (11, 45)), "resolution": (1, 1)},
            )
        ],
    )
)
add(
    Case(
        "count-discrete-x",
        "sum",
        "count3",
        {"x": "x", "y": "y"},
        [L("geom_count")],
    )
)
