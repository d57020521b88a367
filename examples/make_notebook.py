"""Write ``naive_swap.ipynb`` from the cells below (run after editing).

The notebook is kept without outputs; the test suite executes it
headless (``tests/test_examples.py``), so every cell must run.
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CELLS = [
    (
        "md",
        """# The naive swap, stat by stat

A plotnine user changes one word (`stat="count"` becomes
`stat="count_dp"`) and adds `eps=`. This notebook makes that swap for every
private stat on plotnine's own data sets and shows what the package says
when the swap alone would mislead: each `PrivacyWarning` states a public
fact and its fix, and the next cell applies the fix. It ends with a
comparison figure, dates on the x axis, a noise caption and the privacy
report.""",
    ),
    (
        "code",
        """import warnings

import pandas as pd
from plotnine import (
    aes,
    after_stat,
    geom_bar,
    geom_bin_2d,
    geom_boxplot,
    geom_count,
    geom_density,
    geom_histogram,
    geom_pointrange,
    geom_step,
    geom_text,
    ggplot,
    labs,
    scale_x_datetime,
)
from plotnine.data import diamonds, economics, mpg

import plotnine_private as pp

warnings.simplefilter("always", pp.PrivacyWarning)
pp.__version__""",
    ),
    (
        "md",
        """## Counts: `count_dp`

On a plain string column the set of classes is not declared, so it must
come from the data; only classes whose noisy count clears a threshold are
shown. The warning says so and names the fix.""",
    ),
    (
        "code",
        """ggplot(mpg, aes("class")) + geom_bar(
    stat="count_dp", eps=1, seed=1)""",
    ),
    (
        "md",
        """Fix: declare the levels (they are public knowledge). Every
class is now shown, empty or not, and the layer is pure eps-DP. Labels from
`after_stat("count_label")` leave cells released as 0 unlabelled.""",
    ),
    (
        "code",
        """cars = mpg.copy()
cars["class"] = pd.Categorical(cars["class"], categories=[
    "2seater", "compact", "midsize", "minivan", "pickup", "subcompact",
    "suv"])
cars["drv"] = pd.Categorical(cars["drv"], categories=["4", "f", "r"])
bars = (ggplot(cars, aes("class", fill="drv"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
        + geom_text(aes(label=after_stat("count_label")), stat="count_dp",
                    eps=1, seed=1, position="stack", va="bottom"))
bars""",
    ),
    (
        "md",
        """## Histograms: `bin_dp`

Without `limits=` or `breaks=` the range is estimated privately with a
share of eps (the warning says how much); give public limits for exact
bins.""",
    ),
    (
        "code",
        """ggplot(cars, aes("hwy")) + geom_histogram(
    stat="bin_dp", bins=20, eps=1, seed=2)""",
    ),
    (
        "code",
        """hist = ggplot(cars, aes("hwy")) + geom_histogram(
    stat="bin_dp", bins=20, limits=(10, 50), eps=1, seed=2)
hist""",
    ),
    ("md", "## 2-D bins and hexagons: `bin2d_dp`, `binhex_dp`"),
    (
        "code",
        """box = ((0, 5500), (0, 20000))
(ggplot(diamonds, aes("carat * 1000", "price"))
 + geom_bin_2d(stat="bin2d_dp", bins=25, limits=box, eps=1, seed=3))""",
    ),
    (
        "code",
        """(ggplot(diamonds, aes("carat * 1000", "price"))
 + pp.geom_hex(stat="binhex_dp", bins=25, limits=box, eps=1, seed=3))""",
    ),
    (
        "md",
        """## Point counts: `sum_dp`

Without a public grid the positions come from the data: only positions
whose noisy count clears a threshold are drawn. Give `limits=` and
`resolution=`.""",
    ),
    (
        "code",
        """ggplot(cars, aes("cty", "hwy")) + geom_count(
    stat="sum_dp", eps=1, seed=4)""",
    ),
    (
        "code",
        """(ggplot(cars, aes("cty", "hwy"))
 + geom_count(stat="sum_dp", limits=((5, 40), (10, 50)), resolution=1,
              eps=1, seed=4))""",
    ),
    (
        "md",
        """## Densities, ECDFs, box plots and means

These need public `limits=` (or `bounds=` for means); the bandwidth is a
public number, never estimated from the data.""",
    ),
    (
        "code",
        """(ggplot(diamonds, aes("price", colour="cut"))
 + geom_density(stat="density_dp", limits=(0, 20000), eps=1, seed=5))""",
    ),
    (
        "code",
        """(ggplot(cars, aes("hwy", colour="drv"))
 + geom_step(stat="ecdf_dp", limits=(10, 50), bins=40, eps=1, seed=6))""",
    ),
    (
        "code",
        """(ggplot(diamonds, aes("cut", "price"))
 + geom_boxplot(stat="boxplot_dp", limits=(0, 20000), eps=1, seed=7))""",
    ),
    (
        "code",
        """(ggplot(cars, aes("class", "hwy"))
 + geom_pointrange(stat="summary_dp", bounds=(10, 45), eps=1, seed=8))""",
    ),
    (
        "md",
        """## The Cell Key Method twins

Record keys are drawn once and stored with the data; a p-table says how
counts move. Same records, same noise, whatever the plot.""",
    ),
    (
        "code",
        """keyed = pp.add_record_keys(cars, name="rk", rng_seed=2024)
ptab = pp.create_cnt_ptable(D=5, V=2.01, js=2)
(ggplot(keyed, aes("class", rkey="rk"))
 + geom_bar(stat="count_ckm", ptable=ptab))""",
    ),
    ("md", """## Private PCA score plot: `stat_dp_pca_score`"""),
    (
        "code",
        """nums = cars[["displ", "cty", "hwy"]].astype(float)
ggplot(nums) + pp.stat_dp_pca_score(
    columns=["displ", "cty", "hwy"], eps=4, delta=1e-5, seed=9,
    scale=[7.0, 35.0, 45.0])""",
    ),
    (
        "md",
        """## Dates on the x axis

Limits and breaks take Timestamps; `binwidth="1 year"` puts the bin edges
on calendar boundaries (public).""",
    ),
    (
        "code",
        """(ggplot(economics, aes("date"))
 + geom_histogram(stat="bin_dp", binwidth="5 years",
                  limits=(pd.Timestamp("1965-01-01"),
                          pd.Timestamp("2015-12-31")), eps=1, seed=10)
 + scale_x_datetime(date_labels="%Y"))""",
    ),
    (
        "md",
        """## How large is the noise?

`noise_interval` computes each private layer's 95% noise interval from
public parameters only; `noise_caption` writes it for a caption.""",
    ),
    ("code", """pp.noise_interval(hist)"""),
    ("code", """hist + labs(caption=pp.noise_caption(hist))"""),
    (
        "md",
        """## Unperturbed, DP and CKM side by side

`pp.compare` builds the three versions with shared scales; the
unperturbed panel is marked "not for release".""",
    ),
    (
        "code",
        """keyed_plot = (ggplot(keyed, aes("class", fill="drv"))
              + geom_bar(stat="count_dp", eps=1, seed=11))
pp.compare(keyed_plot, ckm=dict(ptable=ptab, rkey="rk"))""",
    ),
    ("md", "## What the figure costs"),
    ("code", """pp.privacy_report(bars)"""),
]


def build() -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        new_markdown_cell(src) if kind == "md" else new_code_cell(src)
        for kind, src in CELLS
    ]
    return nb


if __name__ == "__main__":
    out = Path(__file__).with_name("naive_swap.ipynb")
    nbformat.write(build(), out)
    print(out)
