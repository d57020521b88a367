"""Gallery: several figures from one synopsis, next to plotnine's.

``render(cars, outdir)`` writes ``synopsis.png``. One ``pp.synopsis`` of
mpg releases three marginals once (eps = 3 in all: class by drive, the
highway mileage, city by highway mileage), made consistent; the bottom
row draws three figures from it with ordinary plotnine calls and
``pp.geom_noise()`` (no new noise, no new charge), the top row is
plotnine's own figure of the same records (unperturbed: not for
release). The stacked bars' totals by class, the histogram's bins and
the tiles' sums agree (4 mpg tiles on the
fine grid), being sums of the same consistent tables. The third row
draws the same marginals from a CKM table set (``method="ckm"``, the
cars' record keys ``rk`` and the gallery's p-table): each cell is the
one ``ckm_table`` publishes, published as perturbed, so it draws the
declared fine bins only (2 mpg).

Run: ``python gallery/render.py`` (renders the whole gallery).
"""

from __future__ import annotations

from pathlib import Path

from plotnine import (
    aes,
    element_text,
    geom_bar,
    geom_bin_2d,
    geom_histogram,
    ggplot,
    ggtitle,
    labs,
    theme,
    theme_bw,
)

import plotnine_private as pp

#: the gallery's count p-table (as render.py's)
PTABLE = pp.create_cnt_ptable(D=5, V=2.01, js=2)

# public facts of the survey: its classes, drives and the mileage ranges
# of the test cycle (2 mpg fine bins)
CLASSES = [
    "2seater",
    "compact",
    "midsize",
    "minivan",
    "pickup",
    "subcompact",
    "suv",
]
DIMS = {
    "class": CLASSES,
    "drv": ["4", "f", "r"],
    "cty": (8, 36, 2),
    "hwy": (10, 46, 2),
}
WORKLOAD = [("class", "drv"), ("hwy",), ("cty", "hwy")]
# 4 mpg tiles on the fine grid (the fine 2 x 2 grid has 252 cells for
# 234 cars)
TILES = (list(range(8, 37, 4)), list(range(10, 47, 4)))


def synopsis_figures(cars, out: Path) -> Path:
    syn = pp.synopsis(cars, DIMS, eps=3, seed=31, workload=WORKLOAD)
    turned = theme(axis_text_x=element_text(rotation=30, ha="right"))
    plain = "unperturbed (not for release)"
    # not syn.name: a seed-only release's identity is blinded by a
    # secret of the process, so the name (and the image) would change
    # with every render
    drawn = "from one synopsis (eps=3, once)"
    top = [
        ggplot(cars, aes("class", fill="drv"))
        + geom_bar()
        + labs(x="", y="count")
        + ggtitle(f"bars by drive: {plain}"),
        ggplot(cars, aes("hwy"))
        + geom_histogram(binwidth=4, boundary=10, fill="#9ecae1")
        + ggtitle(f"highway mpg: {plain}"),
        ggplot(cars, aes("cty", "hwy"))
        + geom_bin_2d(breaks=TILES)
        + ggtitle(f"city x highway: {plain}"),
    ]
    bottom = [
        ggplot(syn, aes("class", fill="drv"))
        + geom_bar(stat="count_dp")
        + pp.geom_noise()
        + labs(x="", y="count")
        + ggtitle(f"bars by drive: {drawn}"),
        ggplot(syn, aes("hwy"))
        + geom_histogram(stat="bin_dp", binwidth=4, fill="#9ecae1")
        + pp.geom_noise()
        + ggtitle("histogram: the same release"),
        ggplot(syn, aes("cty", "hwy"))
        + geom_bin_2d(stat="bin2d_dp", breaks=TILES)
        + ggtitle("2-D bins: the same release"),
    ]
    ckm = pp.synopsis(
        cars, DIMS, method="ckm", rkey="rk", ptable=PTABLE, workload=WORKLOAD
    )
    ckm_row = [
        ggplot(ckm, aes("class", fill="drv"))
        + geom_bar(stat="count_ckm")
        + pp.geom_noise()
        + labs(x="", y="count")
        + ggtitle("bars by drive: from a CKM table set"),
        ggplot(ckm, aes("hwy"))
        + geom_histogram(stat="bin_ckm", binwidth=2, fill="#9ecae1")
        + pp.geom_noise()
        + ggtitle("histogram (fine bins): the same CKM set"),
        ggplot(ckm, aes("cty", "hwy"))
        + geom_bin_2d(stat="bin2d_ckm", binwidth=2)
        + ggtitle("2-D fine bins: the same CKM set"),
    ]
    # the bars' class names turned, so that they never run together
    a, b, c, d, e, f, g, h, i = (
        p + theme_bw() + (turned if k % 3 == 0 else theme())
        for k, p in enumerate(top + bottom + ckm_row)
    )
    composed = ((a | b | c) / (d | e | f) / (g | h | i)) + theme(
        figure_size=(16, 13)
    )
    path = out / "synopsis.png"
    composed.save(path, dpi=70)
    return path


def render(cars, out: Path) -> list[Path]:
    return [synopsis_figures(cars, out)]
