"""Render the gallery: every plot type unperturbed | DP | CKM, side by side.

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
    ggtitle,
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
CLASSES = ["2seater", "compact", "midsize", "minivan", "pickup",
           "subcompact", "suv"]
DRIVES = ["4", "f", "r"]
PTABLE = pp.create_cnt_ptable(D=5, V=2.01, js=2)


def _data():
    cars = pp.add_record_keys(mpg, name="rk", seed=2024)
    cars["class"] = pd.Categorical(cars["class"], categories=CLASSES)
    cars["drv"] = pd.Categorical(cars["drv"], categories=DRIVES)
    gems = pp.add_record_keys(diamonds, name="rk", seed=2024)
    return cars, gems


def _look(p, title):
    return p + ggtitle(title) + theme_bw()


def _save(plots, path: Path, width=15):
    left, mid, right = plots
    composed = (left | mid | right) + theme(figure_size=(width, 4.6))
    composed.save(path, dpi=90)
    return path


def bar_charts(cars, out):
    base = ggplot(cars, aes("class"))
    label = {"va": "top", "nudge_y": -0.5, "color": "white", "size": 8}
    plain = base + geom_bar() + geom_text(
        aes(label=after_stat("count")), stat="count", **label)
    dp = base + geom_bar(stat="count_dp", eps=1, seed=42) + geom_text(
        aes(label=after_stat("count")), stat="count_dp", eps=1, seed=42,
        **label)
    ckm_base = ggplot(cars, aes("class", rkey="rk"))
    ckm = ckm_base + geom_bar(stat="count_ckm", ptable=PTABLE) + geom_text(
        aes(label=after_stat("count")), stat="count_ckm", ptable=PTABLE,
        **label)
    return _save(
        [_look(plain, "unperturbed"),
         _look(dp, "DP: count_dp, eps = 1"),
         _look(ckm, "CKM: count_ckm, D = 5, V = 2.01")],
        out / "bar.png",
    )


def stacked_bars(cars, out):
    lab = {"color": "white", "size": 7,
           "position": position_stack(vjust=0.5)}
    plain = ggplot(cars, aes("class", fill="drv")) + geom_bar() + geom_text(
        aes(label=after_stat("count")), stat="count", **lab)
    dp = (ggplot(cars, aes("class", fill="drv"))
          + geom_bar(stat="count_dp", eps=1, seed=42)
          + geom_text(aes(label=after_stat("count")), stat="count_dp",
                      eps=1, seed=42, **lab))
    ckm = (ggplot(cars, aes("class", fill="drv", rkey="rk"))
           + geom_bar(stat="count_ckm", ptable=PTABLE)
           + geom_text(aes(label=after_stat("count")), stat="count_ckm",
                       ptable=PTABLE, **lab))
    plots = [_look(p, t) for p, t in
             [(plain, "unperturbed"), (dp, "DP: count_dp, eps = 1"),
              (ckm, "CKM: count_ckm")]]
    plots = [p + theme(axis_text_x=_rotated()) for p in plots]
    return _save(plots, out / "bar_stacked.png")


def _rotated():
    from plotnine import element_text

    return element_text(rotation=45, ha="right")


# The post cut prices at their deciles: breaks computed from the data would
# disclose ten order statistics. Public, round breaks do the same job.
PRICE_BREAKS = [0, 500, 1000, 1500, 2500, 4000, 6000, 9000, 13000, 19000]


def histograms(gems, out):
    y = after_stat("count / width")
    text = {"size": 7, "va": "bottom"}
    plain = (ggplot(gems, aes("price", y))
             + geom_histogram(breaks=PRICE_BREAKS, fill="white",
                              color="black")
             + geom_text(aes(label=after_stat("count")), stat="bin",
                         breaks=PRICE_BREAKS, format_string="{:.0f}",
                         **text))
    dp = (ggplot(gems, aes("price", y))
          + geom_histogram(stat="bin_dp", breaks=PRICE_BREAKS, eps=1,
                           seed=23, fill="white", color="black")
          + geom_text(aes(label=after_stat("count")), stat="bin_dp",
                      breaks=PRICE_BREAKS, eps=1, seed=23, **text))
    ckm = (ggplot(gems, aes("price", y, rkey="rk"))
           + geom_histogram(stat="bin_ckm", breaks=PRICE_BREAKS,
                            ptable=PTABLE, fill="white", color="black")
           + geom_text(aes(label=after_stat("count")), stat="bin_ckm",
                       breaks=PRICE_BREAKS, ptable=PTABLE, **text))
    plots = [_look(p + labs(y="count / width"), t) for p, t in
             [(plain, "unperturbed (public breaks)"),
              (dp, "DP: bin_dp, eps = 1"), (ckm, "CKM: bin_ckm")]]
    return _save(plots, out / "histogram.png")


def freqpolys(gems, out):
    lims = (0, 20000)  # public: the price range of the survey
    style = {"linetype": "dotted", "color": "blue"}
    text = {"size": 7, "va": "bottom"}
    plain = (ggplot(gems, aes("price"))
             + geom_freqpoly(bins=10, **style)
             + geom_text(aes(label=after_stat("count")), stat="bin",
                         bins=10, format_string="{:.0f}", **text))
    dp = (ggplot(gems, aes("price"))
          + geom_freqpoly(stat="bin_dp", bins=10, limits=lims, eps=0.5,
                          seed=23, **style)
          + geom_text(aes(label=after_stat("count")), stat="bin_dp",
                      bins=10, limits=lims, eps=0.5, seed=23, **text))
    ckm = (ggplot(gems, aes("price", rkey="rk"))
           + geom_freqpoly(stat="bin_ckm", bins=10, limits=lims,
                           ptable=PTABLE, **style)
           + geom_text(aes(label=after_stat("count")), stat="bin_ckm",
                       bins=10, limits=lims, ptable=PTABLE, **text))
    return _save(
        [_look(plain, "unperturbed (bins over the data range)"),
         _look(dp, "DP: bin_dp, eps = 0.5, public limits"),
         _look(ckm, "CKM: bin_ckm, public limits")],
        out / "freqpoly.png",
    )


def bins_2d(cars, out):
    lims = [xlim(8, 38), ylim(10, 45)]
    plain = ggplot(cars, aes("cty", "hwy")) + geom_bin_2d(bins=10)
    dp = ggplot(cars, aes("cty", "hwy")) + geom_bin_2d(
        stat="bin2d_dp", bins=10, eps=0.5, seed=1234)
    ckm = ggplot(cars, aes("cty", "hwy", rkey="rk")) + geom_bin_2d(
        stat="bin2d_ckm", bins=10, ptable=PTABLE)
    return _save(
        [_look(p + lims[0] + lims[1], t) for p, t in
         [(plain, "unperturbed"), (dp, "DP: bin2d_dp, eps = 0.5"),
          (ckm, "CKM: bin2d_ckm")]],
        out / "bin2d.png",
    )


def hexes(cars, gems, out):
    box = ((8, 38), (10, 45))
    plain = ggplot(cars, aes("cty", "hwy")) + pp.geom_hex(bins=12)
    dp = ggplot(cars, aes("cty", "hwy")) + pp.geom_hex(
        stat="binhex_dp", bins=12, limits=box, eps=0.5, seed=1234)
    ckm = ggplot(cars, aes("cty", "hwy", rkey="rk")) + pp.geom_hex(
        stat="binhex_ckm", bins=12, limits=box, ptable=PTABLE)
    lims = [xlim(8, 38), ylim(10, 45)]
    small = _save(
        [_look(p + lims[0] + lims[1], t) for p, t in
         [(plain, "unperturbed"), (dp, "DP: binhex_dp, eps = 0.5"),
          (ckm, "CKM: binhex_ckm")]],
        out / "hex_mpg.png",
    )
    gbox = ((0, 5.5), (0, 19000))
    gplain = ggplot(gems, aes("carat", "price")) + pp.geom_hex(bins=30)
    gdp = ggplot(gems, aes("carat", "price")) + pp.geom_hex(
        stat="binhex_dp", bins=30, limits=gbox, eps=0.5, seed=7)
    gckm = ggplot(gems, aes("carat", "price", rkey="rk")) + pp.geom_hex(
        stat="binhex_ckm", bins=30, limits=gbox, ptable=PTABLE)
    large = _save(
        [_look(p, t) for p, t in
         [(gplain, "unperturbed, 53,940 diamonds"),
          (gdp, "DP: binhex_dp, eps = 0.5"), (gckm, "CKM: binhex_ckm")]],
        out / "hex_diamonds.png",
    )
    return [small, large]


def point_counts(cars, out):
    grid = {"limits": ((8, 38), (10, 45)), "resolution": 1}
    size = scale_size_area(breaks=[3, 6, 12])
    lims = [xlim(8, 38), ylim(10, 45)]
    plain = ggplot(cars, aes("cty", "hwy")) + geom_count()
    dp = ggplot(cars, aes("cty", "hwy")) + geom_count(
        stat="sum_dp", eps=0.5, seed=1000, **grid)
    ckm = ggplot(cars, aes("cty", "hwy", rkey="rk")) + geom_count(
        stat="sum_ckm", ptable=PTABLE)
    return _save(
        [_look(p + size + lims[0] + lims[1], t) for p, t in
         [(plain, "unperturbed"),
          (dp, "DP: sum_dp, eps = 0.5, public grid"),
          (ckm, "CKM: sum_ckm")]],
        out / "count.png",
    )


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
    from pca_gallery import render as render_pca

    paths += render_pca(out)
    paths += __import__("engines_gallery").render(out)
    return paths


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # plotnine's size/bins notices
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "images"
    for path in render(target):
        print(path)

