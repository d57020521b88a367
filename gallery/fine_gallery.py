"""Gallery: densities, ECDFs, box plots and violins from a private fine
histogram.

``render(cars, gems, outdir)`` writes, each unperturbed | DP | CKM:

* ``density.png``  diamond prices by cut (public limits 0-20000)
* ``ecdf.png``     highway mileage by drive (public limits 10-50)
* ``boxplot.png``  diamond prices by cut (public limits 0-20000)
* ``violin.png``   diamond prices by cut (public limits 0-20000)

The unperturbed panels use plotnine's own stats, whose bandwidth, ECDF
steps, whiskers and outliers come from the records; the private panels
use public limits, a public bandwidth and no outliers.

Run: ``python gallery/render.py`` (renders the whole gallery).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from plotnine import (
    aes,
    geom_boxplot,
    geom_density,
    geom_step,
    geom_violin,
    ggplot,
    ggtitle,
    labs,
    stat_ecdf,
    theme,
    theme_bw,
    xlim,
    ylim,
)

import plotnine_private as pp

PTABLE = pp.create_cnt_ptable(D=5, V=2.01, js=2)
PRICE = (0, 20000)  # public: the survey's price range
MILEAGE = (10, 50)  # public: the range of the test cycle


def _caption(p) -> str:
    """The private panel's noise caption: its noise and how many of its
    marks are within noise (drawn faded), so none is faded unsaid."""
    return "\n".join(
        textwrap.fill(line, 62) for line in pp.noise_caption(p).split("\n")
    )


def _save(plots, path: Path, width: float = 15) -> Path:
    plain, dp, ckm = plots
    plots = [plain, dp + labs(caption=_caption(dp))]
    plots.append(ckm + labs(caption=_caption(ckm)))
    left, mid, right = (p + theme_bw() for p in plots)
    composed = (left | mid | right) + theme(figure_size=(width, 4.6))
    composed.save(path, dpi=90)
    return path


def densities(gems, out: Path) -> Path:
    bw = 300  # public: dollars
    look = {"alpha": 0.25}
    base = ggplot(gems, aes("price", colour="cut", fill="cut"))
    plain = base + geom_density(bw=bw, **look) + xlim(*PRICE)
    dp = base + geom_density(
        stat="density_dp", limits=PRICE, bw=bw, eps=1, seed=11, **look
    )
    ckm = ggplot(gems, aes("price", colour="cut", fill="cut", rkey="rk")) + (
        geom_density(
            stat="density_ckm", limits=PRICE, bw=bw, ptable=PTABLE, **look
        )
    )
    return _save(
        [
            plain + ggtitle("unperturbed (stat_density, bw = 300)"),
            dp + ggtitle("DP: density_dp, eps = 1, 256 fine bins"),
            ckm + ggtitle("CKM: density_ckm"),
        ],
        out / "density.png",
    )


def ecdfs(cars, out: Path) -> Path:
    base = ggplot(cars, aes("hwy", colour="drv"))
    plain = base + stat_ecdf()
    dp = base + geom_step(
        stat="ecdf_dp", limits=MILEAGE, bins=40, eps=1, seed=11
    )
    ckm = ggplot(cars, aes("hwy", colour="drv", rkey="rk")) + geom_step(
        stat="ecdf_ckm", limits=MILEAGE, bins=40, ptable=PTABLE
    )
    return _save(
        [
            p + labs(y="ecdf") + ggtitle(t)
            for p, t in [
                (plain, "unperturbed (stat_ecdf)"),
                (dp, "DP: ecdf_dp, eps = 1, 1-mpg fine bins"),
                (ckm, "CKM: ecdf_ckm"),
            ]
        ],
        out / "ecdf.png",
    )


def boxplots(gems, out: Path) -> Path:
    base = ggplot(gems, aes("cut", "price"))
    plain = base + geom_boxplot()
    dp = base + geom_boxplot(
        stat="boxplot_dp", limits=PRICE, bins=200, eps=1, seed=11
    )
    ckm = ggplot(gems, aes("cut", "price", rkey="rk")) + geom_boxplot(
        stat="boxplot_ckm", limits=PRICE, bins=200, ptable=PTABLE
    )
    return _save(
        [
            plain + ggtitle("unperturbed (outliers are single diamonds)"),
            dp + ggtitle("DP: boxplot_dp, eps = 1, no outliers"),
            ckm + ggtitle("CKM: boxplot_ckm, no outliers"),
        ],
        out / "boxplot.png",
        width=16,
    )


def violins(gems, out: Path) -> Path:
    bw = 300  # public: dollars, as the densities'
    look = {"fill": "#c6dbef", "draw_quantiles": [0.5]}
    base = ggplot(gems, aes("cut", "price"))
    plain = base + geom_violin(bw=bw, trim=False, **look) + ylim(*PRICE)
    dp = base + geom_violin(
        stat="violin_dp", limits=PRICE, bw=bw, eps=1, seed=11, **look
    )
    ckm = ggplot(gems, aes("cut", "price", rkey="rk")) + geom_violin(
        stat="violin_ckm", limits=PRICE, bw=bw, ptable=PTABLE, **look
    )
    return _save(
        [
            plain + ggtitle("unperturbed (stat_ydensity, bw = 300)"),
            dp + ggtitle("DP: violin_dp, eps = 1, 256 fine bins"),
            ckm + ggtitle("CKM: violin_ckm"),
        ],
        out / "violin.png",
        width=16,
    )


def render(cars, gems, out: Path) -> list[Path]:
    out = Path(out)
    return [
        densities(gems, out),
        ecdfs(cars, out),
        boxplots(gems, out),
        violins(gems, out),
    ]
