"""Shared checks of the fine-histogram stats (density, ecdf, boxplot...)."""

from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pandas as pd
from plotnine.data import mpg as _mpg
from scipy import stats

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.declarations import registered
from plotnine_private.door import layer_build

PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)
DRIVES = ["4", "f", "r"]

#: computed columns of these stats that carry released numbers (added to
#: the neighbour harness's list for these tests only): what every stat of
#: the fine query family declares, so a new one is covered
FINE_NOISY = frozenset().union(
    *(
        e.declaration.noisy
        for e in registered()
        if getattr(e.cls, "FAMILY", None) == "fine"
    )
)


def cars() -> pd.DataFrame:
    """mpg with declared drives and years, and record keys."""
    d = _mpg.copy()
    d["drv"] = pd.Categorical(d["drv"], categories=DRIVES)
    d["year"] = pd.Categorical(d["year"], categories=[1999, 2008])
    return pp.add_record_keys(d, name="rk", rng_seed=5)


def synthetic(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Continuous values in (0, 40) in three declared groups, with a few
    far values (still inside the limits) so that whiskers bind."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], size=n)
    centre = pd.Series(g).map({"a": 12.0, "b": 20.0, "c": 26.0}).to_numpy()
    x = centre + rng.normal(0, 3, size=n)
    x[:12] = rng.uniform(1, 39, size=12)
    x = np.clip(x, 0.5, 39.5)
    d = pd.DataFrame(
        {"v": x, "g": pd.Categorical(g, categories=["a", "b", "c"])}
    )
    return pp.add_record_keys(d, name="rk", rng_seed=3)


def built(plot, i: int = 0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(plot).layers[i]


def fine_of(plot, i: int = 0):
    """The released fine histogram of layer i."""
    return layer_build(built(plot, i)).fine


def draws(plot) -> None:
    """Draw the plot to PNG bytes: raises if the geom cannot draw it."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plot.save(buf, format="png", verbose=False, width=4, height=3, dpi=50)
    assert buf.getvalue()[:4] == b"\x89PNG"


def ckm_cells_by_table(data, column, edges, rkey, groups=None):
    """What ckm_table gives for the same cells (records labelled by their
    fine bin, closed on the right): the p-table noise depends only on a
    cell's records, so plots and tables must agree."""
    x = data[column].to_numpy(dtype=float)
    idx = np.searchsorted(edges, x, side="left") - 1
    idx[x == edges[0]] = 0
    idx = np.clip(idx, 0, len(edges) - 2)
    labelled = data.assign(
        _bin=pd.Categorical(idx, categories=list(range(len(edges) - 1)))
    )
    return pp.ckm_table(
        labelled, "_bin", rkey=rkey, ptable=PTAB, groups=groups
    )


ALPHA = 1e-6


def epsilon_lower_bound(first, second, cut):
    """Clopper-Pearson lower bound on eps from the event {value >= cut}
    (see test_privacy_audit)."""
    n1, n2 = len(first), len(second)
    k1, k2 = int((first >= cut).sum()), int((second >= cut).sum())
    lo2 = stats.beta.ppf(ALPHA / 2, k2, n2 - k2 + 1) if k2 > 0 else 0.0
    hi1 = stats.beta.ppf(1 - ALPHA / 2, k1 + 1, n1 - k1) if k1 < n1 else 1.0
    return math.log(lo2 / hi1) if lo2 > 0 else -math.inf


def audit_frame(levels: int, count: int) -> pd.DataFrame:
    """`levels` declared groups, each with `count` records at x = 1 (the
    first fine bin of limits (0, 4), bins=2)."""
    names = [f"g{i}" for i in range(levels)]
    return pd.DataFrame(
        {
            "x": np.ones(levels * count),
            "g": pd.Categorical(np.repeat(names, count), categories=names),
        }
    )
