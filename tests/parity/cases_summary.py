"""Summary cases: test_stat_summary and the stat_summary docs."""

from __future__ import annotations

import numpy as np

from .cases import Case, L, add, x

# -- summary: test_stat_summary and the stat_summary docs --------------
MPG_BOUNDS = {"bounds": (0, 40)}
add(
    Case(
        "summary-mean",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [L("geom_point", params={"fun_y": np.mean}, declare=MPG_BOUNDS)],
    ),
    ckm=False,
)
add(
    Case(
        "summary-mean-col",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [L("geom_col", params={"fun_y": np.mean}, declare=MPG_BOUNDS)],
    ),
    ckm=False,
)
add(
    Case(
        "summary-pointrange",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [L("geom_pointrange", declare=MPG_BOUNDS)],
    ),
    ckm=False,
)
add(
    Case(
        "summary-mean-se",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [
            L(
                "geom_pointrange",
                params={"fun_data": "mean_se"},
                declare=MPG_BOUNDS,
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-mean-cl-normal",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [
            L(
                "geom_pointrange",
                params={"fun_data": "mean_cl_normal"},
                declare=MPG_BOUNDS,
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-mean-sdl",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [
            L(
                "geom_pointrange",
                params={"fun_data": "mean_sdl"},
                declare=MPG_BOUNDS,
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-median",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [L("geom_point", params={"fun_y": np.median}, declare=MPG_BOUNDS)],
    ),
    ckm=False,
)
add(
    Case(
        "summary-fun-min-max",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [
            L(
                "geom_pointrange",
                params={
                    "fun_y": np.mean,
                    "fun_ymin": np.min,
                    "fun_ymax": np.max,
                },
                declare=MPG_BOUNDS,
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-line-group",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg", "group": 1},
        [L("geom_line", params={"fun_y": np.mean}, declare=MPG_BOUNDS)],
    ),
    ckm=False,
)
add(
    Case(
        "summary-line-nogroup",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [L("geom_line", params={"fun_y": np.mean}, declare=MPG_BOUNDS)],
    ),
    ckm=False,
)
add(
    Case(
        "summary-class-hwy",
        "summary",
        "mpg",
        {"x": "class", "y": "hwy"},
        [
            L(
                "geom_point",
                params={"fun_y": np.mean},
                declare={"bounds": (0, 50)},
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-class-hwy-wrap",
        "summary",
        "mpg",
        {"x": "class", "y": "hwy"},
        [
            L(
                "geom_point",
                params={"fun_y": np.mean},
                declare={"bounds": (0, 50)},
            )
        ],
        extras=(x("facet_wrap", "drv"),),
    ),
    ckm=False,
)
add(
    Case(
        "summary-colour-dodge",
        "summary",
        "mpg",
        {"x": "class", "y": "hwy", "colour": "drv"},
        [
            L(
                "geom_point",
                params={"fun_y": np.mean},
                declare={"bounds": (0, 50)},
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-sum",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [L("geom_col", params={"fun_y": np.sum}, declare=MPG_BOUNDS)],
    ),
    ckm=False,
)
add(
    Case(
        "summary-mean-sdl-mult1",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg"},
        [
            L(
                "geom_pointrange",
                params={"fun_data": "mean_sdl", "fun_args": {"mult": 1}},
                declare=MPG_BOUNDS,
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-errorbar-mean-se",
        "summary",
        "mpg",
        {"x": "class", "y": "hwy"},
        [
            L(
                "geom_errorbar",
                params={"fun_data": "mean_se", "width": 0.3},
                declare={"bounds": (0, 50)},
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-cl-normal-99-colour",
        "summary",
        "mpg",
        {"x": "class", "y": "hwy", "colour": "drv"},
        [
            L(
                "geom_pointrange",
                params={
                    "fun_data": "mean_cl_normal",
                    "fun_args": {"confidence_interval": 0.99},
                },
                declare={"bounds": (0, 50)},
            )
        ],
    ),
    ckm=False,
)
add(
    Case(
        "summary-line-group-var",
        "summary",
        "mtcars",
        {"x": "fcyl", "y": "mpg", "group": "fam"},
        [L("geom_line", params={"fun_y": np.mean}, declare=MPG_BOUNDS)],
    ),
    ckm=False,
)
add(
    Case(
        "summary-median-hilow",
        "summary",
        "mpg",
        {"x": "class", "y": "hwy"},
        [
            L(
                "geom_pointrange",
                params={"fun_data": "median_hilow"},
                declare={"bounds": (0, 50), "bins": 500},
            )
        ],
    ),
    ckm=False,
)
