"""The parity cases: plotnine's own test cases and documentation examples
for count, bin, bin_2d, boxplot, density, ECDF, summary and sum, each as
one row of data: the same data, the same public parameters, and on the
private side ``eps`` huge (or a near-noiseless p-table) with the public
declarations set to what plotnine computes from the data (levels, breaks,
limits, bandwidth). plotnine has no ``bin_hex`` stat: no cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import plotnine as p9
from plotnine import aes, after_stat
from plotnine.data import diamonds, mpg, mtcars

import plotnine_private as pp

EPS = 1e9
SEED = 20
#: a p-table that almost never moves a count (V = 1e-4): CKM at parity
PTABLE = pp.create_cnt_ptable(D=1, V=0.0001)

STATS = {
    "count": "count",
    "bin": "bin",
    "bin_2d": "bin_2d",
    "boxplot": "boxplot",
    "density": "density",
    "ecdf": "ecdf",
    "summary": "summary",
    "sum": "sum",
}


def _cat(col: pd.Series) -> pd.Categorical:
    """Declared categories: the sorted values, as plotnine orders them."""
    return pd.Categorical(
        col.astype(str), categories=sorted(col.astype(str).unique())
    )


@cache
def dataset(name: str) -> pd.DataFrame:
    """The data sets of the cases, with CKM record keys in ``rk``."""
    if name == "ladder":  # plotnine's test_geom_bar_col_histogram data
        n = 10
        d = pd.DataFrame(
            {
                "x": np.repeat(range(n + 1), range(n + 1)),
                "z": np.repeat(range(n // 2), range(3, n * 2, 4)),
            }
        )
        d["zf"] = _cat(d["z"])
    elif name == "ladder6":  # test_geom_density
        n = 6
        d = pd.DataFrame(
            {
                "x": np.repeat(range(n + 1), range(n + 1)),
                "z": np.repeat(range(n // 2), range(3, n * 2, 4)),
            }
        )
        d["zf"] = _cat(d["z"])
    elif name == "diagonal":  # test_geom_bin_2d
        n = 20
        reps = np.hstack([np.arange(n // 2), np.arange(n // 2)[::-1]])
        diag = np.repeat(np.arange(n), reps)
        d = pd.DataFrame(
            {"x": np.hstack([diag, diag]), "y": np.hstack([diag, diag[::-1]])}
        )
    elif name == "count3":  # test_geom_count
        d = pd.DataFrame(
            {
                "x": list("aaaaaaaaaabbbbbbbbbbcccccccccc"),
                "y": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
                + [1, 1, 1, 1, 1, 6, 6, 8, 10, 10]
                + [1, 1, 2, 4, 4, 4, 4, 9, 9, 9],
            }
        )
        d["x"] = _cat(d["x"])
    elif name == "edge4":  # one record below xlim(50, 90) (issue)
        d = pd.DataFrame({"x": [49.0, 50.0, 51.0, 60.0]})
    elif name == "square":  # records around xlim(4, 10) + ylim(4, 10)
        rs = np.random.RandomState(4)
        d = pd.DataFrame(
            {"x": rs.uniform(3, 11, 300), "y": rs.uniform(3, 11, 300)}
        )
    elif name == "wts":  # weights that are not whole numbers (issue)
        d = pd.DataFrame(
            {
                "x": pd.Categorical(list("aab"), categories=["a", "b"]),
                "v": [1.0, 1.5, 4.0],
                "w": [1.5, 1.6, 2.25],
            }
        )
    elif name == "na3":  # a missing value of a declared category (issue)
        d = pd.DataFrame(
            {
                "x": pd.Categorical(
                    ["a", "b", None, "a"], categories=["a", "b"]
                ),
                "f": pd.Categorical(
                    ["u", None, "v", "v"], categories=["u", "v"]
                ),
            }
        )
    elif name == "ten":  # test_stat_ecdf
        d = pd.DataFrame({"x": np.arange(10.0)})
    elif name == "uniform":  # test_geom_density bounds
        rs = np.random.RandomState(123)
        d = pd.DataFrame({"x": rs.uniform(size=1000)})
    elif name == "mpg":
        d = mpg.copy()
        for c in ("class", "drv", "manufacturer", "fl", "trans"):
            d[c] = _cat(d[c])
        d["fyear"] = _cat(d["year"])
        d["fcyl"] = _cat(d["cyl"])
    elif name == "mtcars":
        d = mtcars.copy()
        d["fcyl"] = _cat(d["cyl"])
        d["fam"] = _cat(d["am"])
        d["fgear"] = _cat(d["gear"])
    elif name == "diamonds":  # a fixed sample keeps the suite cheap
        d = diamonds.sample(3000, random_state=1).reset_index(drop=True)
        for c in ("cut", "color", "clarity"):
            d[c] = pd.Categorical(
                d[c].astype(str), categories=list(diamonds[c].cat.categories)
            )
    else:  # pragma: no cover - a typo in the table
        raise KeyError(name)
    return pp.add_record_keys(d, name="rk", seed=7)


@dataclass
class Layer:
    """One layer: a geom, its own mapping and its public parameters."""

    geom: str
    mapping: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    declare: dict = field(default_factory=dict)
    stat: str | None = None  # None: the case's family


@dataclass
class Case:
    """One plot of plotnine's tests or docs, and its private twin."""

    id: str
    family: str
    data: str
    mapping: dict
    layers: list[Layer]
    extras: tuple = ()
    mech: str = "dp"
    #: draw and compare pixels (a CKM twin draws the DP case's figure:
    #: built only, to keep the suite cheap)
    image: bool = True

    def plot(self, private: bool) -> p9.ggplot:
        mapping = dict(self.mapping)
        if private and self.mech == "ckm":
            mapping["rkey"] = "rk"
        p = p9.ggplot(dataset(self.data), aes(**mapping))
        for lyr in self.layers:
            stat = lyr.stat or STATS[self.family]
            params: dict[str, Any] = dict(lyr.params)
            if private:
                stat = f"{stat}_{self.mech}"
                params.update(lyr.declare)
                if stat.startswith(("count_", "summary_")):
                    # plotnine has no row for an empty combination
                    params.setdefault("drop", True)
                if self.mech == "dp":
                    params.update(eps=EPS, seed=SEED)
                else:
                    params.update(ptable=PTABLE)
            geom = getattr(p9, lyr.geom)
            p += geom(aes(**lyr.mapping), stat=stat, **params)
        for name, args, kwargs in self.extras:
            p += getattr(p9, name)(*args, **kwargs)
        return p


def x(name: str, *args, **kwargs) -> tuple:
    """An extra plot component (facet, scale, coord) by name."""
    return (name, args, kwargs)


CASES: list[Case] = []


def add(case: Case, ckm: bool = True, twin_image: bool = False) -> None:
    """Add ``case`` and, unless ``ckm=False``, its CKM twin (drawn too
    with ``twin_image``: where plotnine drops censored rows only when it
    draws, the built data of the two sides differ before drawing)."""
    CASES.append(case)
    if ckm:
        twin = Case(
            **{
                **case.__dict__,
                "id": case.id + "-ckm",
                "mech": "ckm",
                "image": twin_image,
            }
        )
        CASES.append(twin)


L = Layer
A = after_stat
