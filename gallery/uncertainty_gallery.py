"""Gallery: the noise drawn on the marks, with ``pp.geom_noise``.

``render(cars, outdir)`` writes ``uncertainty.png``, four DP panels of
mpg at eps = 1, each with its 95% interval variables drawn by one
``pp.geom_noise()`` after the layer (its own stat: the same release,
charged once):

* error bars on bars (``count_low``/``count_high``);
* ribbons on densities (``density_low``/``density_high``), 117 cars a
  model year;
* ribbons on ECDFs (``ecdf_low``/``ecdf_high``, simultaneous band);
* interval boxes: the median's interval over each private box.

Run: ``python gallery/render.py`` (renders the whole gallery).
"""

from __future__ import annotations

from pathlib import Path

from plotnine import (
    aes,
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


def uncertainty(cars, out: Path) -> Path:
    bars = {"stat": "count_dp", "eps": 1, "seed": 21}
    dens = {"stat": "density_dp", "limits": MILEAGE, "bins": 64, "eps": 1}
    ecdf = {
        "stat": "ecdf_dp",
        "limits": MILEAGE,
        "bins": 40,
        "eps": 1,
        "band": "simultaneous",
    }
    box = {"stat": "boxplot_dp", "limits": MILEAGE, "bins": 40, "eps": 1}
    panels = [
        ggplot(cars, aes("class"))
        + geom_bar(**bars, fill="#9ecae1")
        + pp.geom_noise()
        + labs(x="", y="count")
        + ggtitle("bars: count_low / count_high"),
        ggplot(cars, aes("hwy", fill="year"))
        + geom_density(**dens, seed=22, alpha=0.2)
        + pp.geom_noise()
        + ggtitle("densities: 95% pointwise ribbons"),
        ggplot(cars, aes("hwy", colour="year"))
        + geom_step(**ecdf, seed=23)
        + pp.geom_noise(aes(fill="year"))
        + labs(y="ecdf")
        + ggtitle("ECDFs: 95% simultaneous bands"),
        ggplot(cars, aes("drv", "hwy"))
        + geom_boxplot(**box, seed=24)
        + pp.geom_noise()
        + ggtitle("boxes: the median's 95% interval"),
    ]
    a, b, c, d = (p + theme_bw() for p in panels)
    composed = ((a | b) / (c | d)) + theme(figure_size=(12, 8))
    path = out / "uncertainty.png"
    composed.save(path, dpi=80)
    return path


def render(cars, out: Path) -> list[Path]:
    return [uncertainty(cars, out)]
