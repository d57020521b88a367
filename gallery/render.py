"""Render the gallery: every plot type unperturbed | DP | CKM, side by side.

Each figure is ``pp.compare`` of a DP plot: plotnine's own stat on the raw
data (marked "unperturbed: not for release"), the DP plot, and its CKM
twin, on shared position, colour, fill and size scales, with the 95% noise
interval of each private panel in its caption.

The examples follow the seed blog post (``shared/seeds``) in Python, on
data that ships with plotnine (``mpg``, ``diamonds``). Where the post used
data-derived settings (quantile breaks, observed categories), the private
versions use public ones and the caption says why.

Run: ``python gallery/render.py [outdir]`` (default ``gallery/images``).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pandas as pd
from plotnine import (
    aes,
    after_stat,
    geom_bar,
    geom_bin_2d,
    geom_count,
    geom_freqpoly,
    geom_histogram,
    geom_text,
    ggplot,
    labs,
    position_stack,
    scale_size_area,
    theme,
    theme_bw,
    xlim,
    ylim,
)
from plotnine.data import diamonds, mpg

import plotnine_private as pp

HERE = Path(__file__).resolve().parent

# Public facts, not read from the data: the vehicle classes and drive types
# of the survey, and a p-table of the kind an office publishes.
CLASSES = [
    "2seater",
    "compact",
    "midsize",
    "minivan",
    "pickup",
    "subcompact",
    "suv",
]
DRIVES = ["4", "f", "r"]
PTABLE = pp.create_cnt_ptable(D=5, V=2.01, js=2)


def _data():
    cars = pp.add_record_keys(mpg, name="rk", rng_seed=2024)
    cars["class"] = pd.Categorical(cars["class"], categories=CLASSES)
    cars["drv"] = pd.Categorical(cars["drv"], categories=DRIVES)
    gems = pp.add_record_keys(diamonds, name="rk", rng_seed=2024)
    return cars, gems


def _look(p):
    return p + theme_bw()


CKM = {"ptable": PTABLE, "rkey": "rk"}


def _save(plot, path: Path, width=15, **twins):
    """plot (DP) with its unperturbed version and CKM twin, side by side
    on shared scales (pp.compare), noise intervals in the captions."""
    twins = twins or {"ckm": CKM}
    pp.compare(plot, figure_size=(width, 4.8), **twins).save(path, dpi=90)
    return path


def bar_charts(cars, out):
    label = {"va": "top", "nudge_y": -0.5, "color": "white", "size": 8}
    dp = (
        ggplot(cars, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=42)
        + geom_text(
            aes(label=after_stat("count_label")),
            stat="count_dp",
            eps=1,
            seed=42,
            **label,
        )
    )
    # rotated labels: "pickup" and "subcompact" ran together when flat
    return _save(_look(dp) + theme(axis_text_x=_rotated()), out / "bar.png")


def stacked_bars(cars, out):
    # count_label is "" where the released count is 0: empty declared
    # (class, drv) cells get no "0" label
    lab = {"color": "white", "size": 7, "position": position_stack(vjust=0.5)}
    dp = (
        ggplot(cars, aes("class", fill="drv"))
        + geom_bar(stat="count_dp", eps=1, seed=42)
        + geom_text(
            aes(label=after_stat("count_label")),
            stat="count_dp",
            eps=1,
            seed=42,
            **lab,
        )
    )
    return _save(
        _look(dp) + theme(axis_text_x=_rotated()), out / "bar_stacked.png"
    )


def _rotated():
    from plotnine import element_text

    return element_text(rotation=45, ha="right")


# The post cut prices at their deciles: breaks computed from the data would
# disclose ten order statistics. Public, round breaks do the same job.
PRICE_BREAKS = [0, 500, 1000, 1500, 2500, 4000, 6000, 9000, 13000, 19000]


def histograms(gems, out):
    y = after_stat("count / width")
    text = {"size": 7, "va": "bottom"}
    dp = (
        ggplot(gems, aes("price", y))
        + geom_histogram(
            stat="bin_dp",
            breaks=PRICE_BREAKS,
            eps=1,
            seed=23,
            fill="white",
            color="black",
        )
        + geom_text(
            aes(label=after_stat("count_label")),
            stat="bin_dp",
            breaks=PRICE_BREAKS,
            eps=1,
            seed=23,
            **text,
        )
    )
    return _save(_look(dp + labs(y="count / width")), out / "histogram.png")


def freqpolys(gems, out):
    lims = (0, 20000)  # public: the price range of the survey
    style = {"linetype": "dotted", "color": "blue"}
    text = {"size": 7, "va": "bottom"}
    dp = (
        ggplot(gems, aes("price"))
        + geom_freqpoly(
            stat="bin_dp", bins=10, limits=lims, eps=0.5, seed=23, **style
        )
        + geom_text(
            aes(label=after_stat("count_label")),
            stat="bin_dp",
            bins=10,
            limits=lims,
            eps=0.5,
            seed=23,
            **text,
        )
    )
    return _save(_look(dp), out / "freqpoly.png")


def bins_2d(cars, out):
    dp = ggplot(cars, aes("cty", "hwy")) + geom_bin_2d(
        stat="bin2d_dp", bins=10, eps=0.5, seed=1234
    )
    return _save(_look(dp + xlim(8, 38) + ylim(10, 45)), out / "bin2d.png")


def hexes(cars, gems, out):
    box = ((8, 38), (10, 45))
    dp = ggplot(cars, aes("cty", "hwy")) + pp.geom_hex(
        stat="binhex_dp", bins=12, limits=box, eps=0.5, seed=1234
    )
    small = _save(_look(dp), out / "hex_mpg.png")
    gbox = ((0, 5.5), (0, 19000))
    gdp = ggplot(gems, aes("carat", "price")) + pp.geom_hex(
        stat="binhex_dp", bins=30, limits=gbox, eps=0.5, seed=7
    )
    large = _save(_look(gdp), out / "hex_diamonds.png")
    return [small, large]


def point_counts(cars, out):
    grid = {"limits": ((8, 38), (10, 45)), "resolution": 1}
    size = scale_size_area(breaks=[3, 6, 12])
    dp = ggplot(cars, aes("cty", "hwy")) + geom_count(
        stat="sum_dp", eps=0.5, seed=1000, **grid
    )
    return _save(_look(dp + size), out / "count.png")


def ptable_figure(out):
    p = pp.plot_ptable(PTABLE) + theme(figure_size=(10, 6))
    path = out / "ptable.png"
    p.save(path, dpi=90, verbose=False)
    return path


def render(outdir: str | Path = HERE / "images") -> list[Path]:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    cars, gems = _data()
    paths = [
        bar_charts(cars, out),
        stacked_bars(cars, out),
        histograms(gems, out),
        freqpolys(gems, out),
        bins_2d(cars, out),
        *hexes(cars, gems, out),
        point_counts(cars, out),
        ptable_figure(out),
    ]
    sys.path.insert(0, str(HERE))
    paths += __import__("fine_gallery").render(cars, gems, out)
    from pca_gallery import render as render_pca

    paths += render_pca(out)
    paths += __import__("summary_gallery").render(out)
    paths += __import__("engines_gallery").render(out)
    paths += __import__("uncertainty_gallery").render(cars, out)
    paths += __import__("many_rows_gallery").render(out)
    paths += __import__("synopsis_gallery").render(cars, out)
    return paths


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # plotnine's size/bins notices
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "images"
    for path in render(target):
        print(path)
