"""Gallery: mean highway mileage by vehicle class, unperturbed | DP | CKM.

``render(outdir)`` writes ``summary.png``: plotnine's own ``stat_summary``
(the exact means), ``stat_summary_dp`` and ``stat_summary_ckm``. The
private panels draw error bars that contain the noise (``errorbar=
"noise"``): for DP a 95% interval from the public noise scales, for CKM
the range the bounded p-table noise cannot leave. They say nothing about
sampling variation.

Run: ``python gallery/summary_gallery.py [outdir]``.
"""

from __future__ import annotations

import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from plotnine import (
    aes,
    element_text,
    geom_pointrange,
    ggplot,
    ggtitle,
    labs,
    stat_summary,
    theme,
    theme_bw,
    ylim,
)
from plotnine.data import mpg

import plotnine_private as pp

HERE = Path(__file__).resolve().parent

# public facts: the survey's classes, and a plausible range of highway
# mileage known before looking at the data
CLASSES = [
    "2seater",
    "compact",
    "midsize",
    "minivan",
    "pickup",
    "subcompact",
    "suv",
]
BOUNDS = (10, 45)
COUNTS = pp.create_cnt_ptable(D=5, V=2.01, js=2)
MAGNITUDES = pp.create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5])


def _look(p, title, private=True):
    # the noise caption says how many classes are within noise (drawn
    # faded): no class is missing from the picture unsaid
    caption = pp.noise_caption(p) if private else "not for release"
    # one clause a line: the panels' captions sit side by side
    caption = "\n".join(
        textwrap.fill(line, 62) for line in caption.split("\n")
    )
    return (
        p
        + ggtitle(title)
        + labs(caption=caption)
        + labs(x="class", y="mean hwy (mpg)")
        + ylim(*BOUNDS)
        + theme_bw()
        + theme(axis_text_x=element_text(rotation=30, ha="right"))
    )


def render(outdir: str | Path = HERE / "images") -> list[Path]:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    cars = pp.add_record_keys(mpg, name="rk", rng_seed=2024)
    cars["class"] = pd.Categorical(cars["class"], categories=CLASSES)
    plain = ggplot(cars, aes("class", "hwy")) + stat_summary(
        fun_y=np.mean, fun_ymin=np.mean, fun_ymax=np.mean
    )
    dp = ggplot(cars, aes("class", "hwy")) + geom_pointrange(
        stat="summary_dp", bounds=BOUNDS, eps=1, seed=42
    )
    ckm = ggplot(cars, aes("class", "hwy", rkey="rk")) + geom_pointrange(
        stat="summary_ckm",
        bounds=BOUNDS,
        ptable=COUNTS,
        num_ptable=MAGNITUDES,
    )
    composed = (
        _look(plain, "unperturbed (stat_summary, mean)", private=False)
        | _look(dp, "DP: summary_dp, eps = 1, bounds (10, 45)")
        | _look(ckm, "CKM: summary_ckm, num p-table D = 5, V = 2")
    ) + theme(figure_size=(15, 4.6))
    path = out / "summary.png"
    composed.save(path, dpi=90)
    return [path]


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "images"
    for p in render(target):
        print(p)
