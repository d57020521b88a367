"""Gallery: the noise drawn on the marks, with ``pp.geom_noise()``.

``render(cars, outdir)`` writes ``uncertainty.png``, six DP panels of
mpg at eps = 1, each with its 95% interval variables drawn by
``pp.geom_noise()`` added after the layer, with no arguments: it takes
that layer's stat and parameters (the same release, charged once) and
draws each interval where that layer's mark is:

* error bars on bars (``count_low``/``count_high``);
* the same on bars stacked by drive, at the stacked heights;
* and on bars filled by drive, scaled as the shares are and clipped to
  [0, 1];
* ribbons on densities (``density_low``/``density_high``), 117 cars a
  model year;
* ribbons on ECDFs (``ecdf_low``/``ecdf_high``, simultaneous band);
* interval boxes: the median's interval over each private box.

Run: ``python gallery/render.py`` (renders the whole gallery).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from plotnine import (
    aes,
    element_text,
    geom_bar,
    geom_boxplot,
    geom_density,
    geom_step,
    ggplot,
    ggtitle,
    labs,
    theme,
    theme_bw,
)

import plotnine_private as pp

MILEAGE = (10, 50)  # public: the range of the test cycle
YEARS = [1999, 2008]  # public: the survey's two model years


def uncertainty(cars, out: Path) -> Path:
    cars = cars.assign(
        model_year=pd.Categorical(cars["year"], categories=YEARS)
    )
    bars = {"stat": "count_dp", "eps": 1}
    dens = {"stat": "density_dp", "limits": MILEAGE, "bins": 64, "eps": 1}
    ecdf = {
        "stat": "ecdf_dp",
        "limits": MILEAGE,
        "bins": 40,
        "eps": 1,
        "band": "simultaneous",
    }
    box = {"stat": "boxplot_dp", "limits": MILEAGE, "bins": 40, "eps": 1}
    turned = theme(axis_text_x=element_text(rotation=30, ha="right"))
    panels = [
        ggplot(cars, aes("class"))
        + geom_bar(**bars, seed=21, fill="#9ecae1")
        + pp.geom_noise()
        + labs(x="", y="count")
        + ggtitle("bars: count_low / count_high"),
        ggplot(cars, aes("class", fill="drv"))
        + geom_bar(**bars, seed=25)
        + pp.geom_noise()
        + labs(x="", y="count")
        + ggtitle("stacked: at the stacked heights"),
        ggplot(cars, aes("class", fill="drv"))
        + geom_bar(**bars, seed=26, position="fill")
        + pp.geom_noise()
        + labs(x="", y="share")
        + ggtitle("filled: shares, within [0, 1]"),
        ggplot(cars, aes("hwy", fill="model_year"))
        + geom_density(**dens, seed=22, alpha=0.2)
        + pp.geom_noise()
        + ggtitle("densities: 95% pointwise ribbons"),
        ggplot(cars, aes("hwy", colour="model_year"))
        + geom_step(**ecdf, seed=23)
        + pp.geom_noise(aes(fill="model_year"))
        + labs(y="ecdf")
        + ggtitle("ECDFs: 95% simultaneous bands"),
        ggplot(cars, aes("drv", "hwy"))
        + geom_boxplot(**box, seed=24)
        + pp.geom_noise()
        + ggtitle("boxes: the median's 95% interval"),
    ]
    # the bars' class names turned, so that they never run together
    a, b, c, d, e, f = (
        p + theme_bw() + (turned if i < 3 else theme())
        for i, p in enumerate(panels)
    )
    composed = ((a | b | c) / (d | e | f)) + theme(figure_size=(15, 9))
    path = out / "uncertainty.png"
    composed.save(path, dpi=70)
    return path


def render(cars, out: Path) -> list[Path]:
    return [uncertainty(cars, out)]
