"""The test of it all: the same plot on two neighbouring data sets (one
record changed) with one seed; everything but the noisy numbers (axes,
breaks, legends, panels, group ids, warnings, report rows, bundle
metadata) must be equal.

Each case changes one record of mpg in the way most likely to show: a far
outlier (1000, -700), a missing value, a new category of an undeclared
fill, or moves a record to another declared panel. The same harness
caught, on the version before aggregation at the door, axes trained on
raw rows under ``shrink=False``, group ids counting suppressed fills,
panels of empty declared levels and unprotected axes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from neighbours import (
    bundle_metadata,
    compare_snapshot,
    differences,
    snapshot,
)
from plotnine import (
    aes,
    after_stat,
    coord_flip,
    facet_grid,
    facet_null,
    facet_wrap,
    geom_bar,
    geom_bin_2d,
    geom_boxplot,
    geom_count,
    geom_density,
    geom_histogram,
    geom_text,
    ggplot,
    position_dodge,
    position_fill,
    scale_x_log10,
)
from plotnine.data import mpg as _mpg

import plotnine_private as pp
from plotnine_private.door import layer_releases

PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)


def declared(d: pd.DataFrame) -> pd.DataFrame:
    d = d.copy()
    d["class"] = pd.Categorical(
        d["class"], categories=sorted(_mpg["class"].unique())
    )
    d["drv"] = pd.Categorical(d["drv"], categories=["4", "f", "r"])
    d["year"] = pd.Categorical(d["year"], categories=[1999, 2008])
    # a declared level that no record of mpg has
    d["era"] = pd.Categorical(
        d["year"].astype(int).map({1999: "1990s", 2008: "2000s"}),
        categories=["1990s", "2000s", "2010s"],
    )
    return pp.add_record_keys(d, name="rk", rng_seed=5)


BASE = declared(_mpg)


def neighbour(change: str) -> pd.DataFrame:
    d = BASE.copy()
    if change == "outlier":
        d.loc[0, ["displ", "hwy", "cty"]] = [1000.0, -700, 900]
    elif change == "missing":
        d.loc[0, ["displ", "hwy"]] = [np.nan, np.nan]
    elif change == "new fill":
        d["trans"] = d["trans"].astype(object)
        d.loc[0, "trans"] = "aaa-never-seen"  # sorts before every value
    elif change == "other panel":
        d.loc[0, "year"] = 2008 if d.loc[0, "year"] == 1999 else 1999
    elif change == "empty level":
        d.loc[0, "era"] = "2010s"  # the empty declared level gets a record
    elif change == "log domain":
        d.loc[0, "hwy"] = -5.0
    return d


DP = {"eps": 4, "seed": 7}
CKM = {"ptable": PTAB}
# bars keep their released zeros: which cells exist is then public
DP_ALL = {**DP, "drop": False}
CKM_ALL = {**CKM, "drop": False}
LIM = {"limits": (0, 50), "bins": 10}
LIM2 = {"limits": ((0, 8), (0, 50)), "bins": 8, "drop": False}

# (name, plot maker, axes that show noisy numbers; "shown by noise": the
# layer hides cells by their released value)
CASES = [
    (
        "count, declared, labels",
        lambda d: (
            ggplot(d, aes("class"))
            + geom_bar(stat="count_dp", **DP_ALL)
            + geom_text(
                aes(label=after_stat("count")), stat="count_dp", **DP_ALL
            )
        ),
        ("y",),
    ),
    (
        "count, undeclared fill, dodge",
        # thresholded: at eps 4 a cell of ~8 records is shown or not by
        # its noise (which levels make the legend is then a noisy number);
        # at eps 50 no cell of mpg is within reach of the threshold
        lambda d: (
            ggplot(d, aes("drv", fill="trans"))
            + geom_bar(
                stat="count_dp",
                position=position_dodge(),
                **{**DP_ALL, "eps": 50},
            )
        ),
        ("y",),
    ),
    (
        "count, fill, position fill, facet grid free",
        lambda d: (
            ggplot(d, aes("class", fill="drv"))
            + geom_bar(stat="count_dp", position=position_fill(), **DP_ALL)
            + facet_grid("year ~ .", scales="free")
        ),
        ("y",),
    ),
    (
        "count, facets of a declared level without records",
        lambda d: (
            ggplot(d, aes("drv"))
            + geom_bar(stat="count_dp", **DP_ALL)
            + facet_wrap("era")
        ),
        ("y",),
    ),
    (
        "count ckm, coord_flip",
        lambda d: (
            ggplot(d, aes("class", rkey="rk"))
            + geom_bar(stat="count_ckm", **CKM_ALL)
            + coord_flip()
        ),
        ("y",),
    ),
    (
        "bin with breaks, facet_null no shrink",
        lambda d: (
            ggplot(d, aes("hwy"))
            + geom_histogram(
                stat="bin_dp", breaks=[0, 10, 20, 30, 40, 50], **DP
            )
            + facet_null(shrink=False)
        ),
        ("y",),
    ),
    (
        "bin with limits, facet_wrap no shrink free",
        lambda d: (
            ggplot(d, aes("hwy"))
            + geom_histogram(stat="bin_dp", **LIM, **DP)
            + facet_wrap("year", shrink=False, scales="free")
        ),
        ("y",),
    ),
    (
        "bin ckm, log scale",
        lambda d: (
            ggplot(d, aes("hwy", rkey="rk"))
            + geom_histogram(stat="bin_ckm", limits=(5, 50), bins=6, **CKM)
            + scale_x_log10()
        ),
        ("y",),
    ),
    (
        "bin2d with limits, no shrink",
        lambda d: (
            ggplot(d, aes("displ", "hwy"))
            + geom_bin_2d(stat="bin2d_dp", **LIM2, **DP)
            + facet_wrap("drv", shrink=False)
        ),
        (),
    ),
    (
        "binhex with limits",
        lambda d: (
            ggplot(d, aes("displ", "hwy"))
            + pp.geom_hex(stat="binhex_dp", **LIM2, **DP)
            + facet_null(shrink=False)
        ),
        (),
    ),
    (
        "sum on a public grid, no shrink",
        lambda d: (
            ggplot(d, aes("cty", "hwy"))
            + geom_count(
                stat="sum_dp", limits=((0, 40), (0, 50)), resolution=1, **DP
            )
            + facet_null(shrink=False)
        ),
        ("x", "y", "shown by noise"),
    ),
    (
        "sum ckm thresholded, no shrink",
        lambda d: (
            ggplot(d, aes("cty", "hwy", rkey="rk"))
            + geom_count(
                stat="sum_ckm",
                limits=((0, 40), (0, 50)),
                resolution=1,
                threshold=3,
                **CKM,
            )
            + facet_null(shrink=False)
        ),
        ("x", "y", "shown by noise"),
    ),
    (
        "bin2d dropping zero cells",
        lambda d: (
            ggplot(d, aes("displ", "hwy"))
            + geom_bin_2d(
                stat="bin2d_dp", limits=((0, 8), (0, 50)), bins=8, **DP
            )
        ),
        ("x", "y", "shown by noise"),
    ),
]
CHANGES = [
    "outlier",
    "missing",
    "new fill",
    "other panel",
    "empty level",
    "log domain",
]


#: snapshots of BASE by case: a build is deterministic (same seed, same
#: data, a fresh session each time), so one serves every change
_BASE_SNAPSHOTS: dict[str, dict] = {}


def base_snapshot(name: str, take) -> dict:
    if name not in _BASE_SNAPSHOTS:
        _BASE_SNAPSHOTS[name] = take()
    return _BASE_SNAPSHOTS[name]


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize(
    ("name", "make", "count_axes"), CASES, ids=[c[0] for c in CASES]
)
def test_only_noisy_numbers_differ(name, make, count_axes, change):
    hidden = "shown by noise" in count_axes
    a = base_snapshot(name, lambda: snapshot(make(BASE), count_axes, hidden))
    b = snapshot(make(neighbour(change)), count_axes, hidden)
    assert differences(a, b) == []


@pytest.mark.parametrize(
    ("name", "make", "count_axes"),
    [CASES[0], CASES[4], CASES[7]],
    ids=[CASES[i][0] for i in (0, 4, 7)],
)
def test_bundle_metadata_only_noisy_numbers_differ(name, make, count_axes):
    a = bundle_metadata(make(BASE))
    b = bundle_metadata(make(neighbour("outlier")))
    assert a == b


def test_an_empty_subset_looks_like_any_other():
    # a filter that matches nobody releases noise on the declared levels,
    # exactly as a filter that matches someone
    def make(d):
        return ggplot(d, aes("class")) + geom_bar(stat="count_dp", **DP_ALL)

    some = BASE[BASE["hwy"] > 40]
    none = BASE[BASE["hwy"] > 1000]
    assert len(none) == 0 and len(some) > 0
    assert differences(snapshot(make(some)), snapshot(make(none))) == []


def test_a_one_record_panel_looks_like_any_other():
    def make(d):
        return (
            ggplot(d, aes("drv"))
            + geom_bar(stat="count_dp", **DP_ALL)
            + facet_wrap("year")
        )

    one = BASE.copy()
    one["year"] = pd.Categorical([2008] * len(one), categories=[1999, 2008])
    one.loc[0, "year"] = 1999
    assert differences(snapshot(make(BASE)), snapshot(make(one))) == []


def test_unprotected_layer_is_reported_with_the_axis_it_trains():
    from plotnine import geom_blank

    p = (
        ggplot(BASE, aes("hwy"))
        + geom_histogram(stat="bin_dp", **LIM, **DP)
        + geom_blank(aes(x="displ"))
    )
    r = pp.privacy_report(p)
    row = r.table[r.table["layer"] == 1].iloc[0]
    assert row["composition"] == "not protected"
    assert any("trains the x axis" in n for n in r.notes)


def test_polars_categorical_is_observed_and_enum_is_declared():
    pl = pytest.importorskip("polars")
    levels = [*sorted(_mpg["class"].unique()), "zzz"]  # one empty level
    values = _mpg["class"].tolist()
    cat = pl.DataFrame({"class": pl.Series(values, dtype=pl.Categorical)})
    enum = pl.DataFrame({"class": pl.Series(values, dtype=pl.Enum(levels))})

    def release_of(d):
        q = pp._compat.build(
            ggplot(d, aes("class")) + geom_bar(stat="count_dp", **DP_ALL)
        )
        return layer_releases(q.layers[0])[0], q.layers[0].data

    r_cat, _ = release_of(cat)
    r_enum, data = release_of(enum)
    assert r_cat.domain == "thresholded"  # levels seen, not declared
    assert r_enum.domain == "public: declared levels"
    assert len(data) == len(levels)  # the empty level is released too


# -- issue 18: warnings, errors, weights, bools, tiny subsets ---------------
def _kind(d: pd.DataFrame) -> pd.DataFrame:
    d = d.copy()
    d["kind"] = np.where(d["cyl"] > 5, "big", "small").astype(object)
    return d


RARE_GROUP = {
    "count": lambda d: (
        ggplot(d, aes("year", fill="kind")) + geom_bar(stat="count_dp", **DP)
    ),
    "bin": lambda d: (
        ggplot(d, aes("hwy", fill="kind"))
        + geom_histogram(stat="bin_dp", **LIM, **DP)
    ),
    "density": lambda d: (
        ggplot(d, aes("hwy", colour="kind"))
        + geom_density(stat="density_dp", limits=(0, 50), **DP)
    ),
}


@pytest.mark.parametrize("family", sorted(RARE_GROUP))
def test_a_hidden_rare_group_raises_no_warning(family):
    # an undeclared group whose only rare value is hidden by the threshold
    # once made pandas warn (a Categorical built from values outside its
    # categories): the warning existed only for the unreleased value
    make = RARE_GROUP[family]

    base = _kind(BASE)
    rare = base.copy()
    rare.loc[0, "kind"] = "rare"
    a, b = snapshot(make(base)), snapshot(make(rare))
    assert "error" not in a
    assert differences(a, b) == []


def _weighted(d: pd.DataFrame, value: float) -> pd.DataFrame:
    d = d.copy()
    d["w"] = 2.0
    d.loc[0, "w"] = value
    return d


@pytest.mark.parametrize("value", [np.nan, np.inf, -3.0, 40.0])
def test_ckm_weights_only_change_noisy_numbers(value):
    def make(d):
        return ggplot(d, aes("class", rkey="rk", weight="w")) + geom_bar(
            stat="count_ckm", **CKM
        )

    a = snapshot(make(_weighted(BASE, 2.0)))
    b = snapshot(make(_weighted(BASE, value)))
    assert "error" not in a
    assert differences(a, b) == []


def test_dp_weights_raise_the_same_error_whatever_the_weights():
    def make(d):
        return ggplot(d, aes("class", weight="w")) + geom_bar(
            stat="count_dp", **DP
        )

    a = snapshot(make(_weighted(BASE, 1.0).assign(w=1.0)))
    b = snapshot(make(_weighted(BASE, 5.0)))
    assert "weight aesthetic" in a["error"]
    assert differences(a, b) == []


def _flag(d: pd.DataFrame, missing: bool) -> pd.DataFrame:
    d = d.copy()
    d["big"] = (d["displ"] > 3).to_numpy()
    if missing:  # a numpy bool column with a missing value is object
        d["big"] = d["big"].astype(object)
        d.loc[0, "big"] = None
    return d


@pytest.mark.parametrize("ae", ["x", "fill"])
def test_a_missing_value_in_a_bool_column_changes_no_domain(ae):
    def make(d):
        mapping = aes("big") if ae == "x" else aes("drv", fill="big")
        return ggplot(d, mapping) + geom_bar(stat="count_dp", **DP)

    a = snapshot(make(_flag(BASE, False)))
    b = snapshot(make(_flag(BASE, True)))
    assert "error" not in a
    assert differences(a, b) == []


@pytest.mark.parametrize("declared_x", [True, False])
@pytest.mark.parametrize("adjacency", ["replace", "add_remove"])
def test_empty_and_one_record_subsets_look_alike(adjacency, declared_x):
    # add_remove: no record against one; replace: one record against
    # another (the size of the subset is public there)
    def make(d):
        return ggplot(d, aes("class")) + geom_bar(
            stat="count_dp", adjacency=adjacency, drop=False, **DP
        )

    d = BASE if declared_x else BASE.assign(cls=BASE["class"].astype(str))
    if not declared_x:
        d = d.drop(columns="class").rename(columns={"cls": "class"})
    one = d.iloc[[0]]
    other = d.iloc[[-1]] if adjacency == "replace" else d.iloc[:0]
    assert one["class"].iloc[0] != d["class"].iloc[-1]
    a, b = snapshot(make(one)), snapshot(make(other))
    assert "error" not in a and "error" not in b
    assert differences(a, b) == []


# compare(): the private panels of a comparison may leave; their limits
# must come from released values and public parameters only
COMPARE_CASES = [
    (
        "compare bars, ckm twin",
        lambda d: ggplot(d, aes("class")) + geom_bar(stat="count_dp", **DP),
        ("y",),
    ),
    (
        "compare bin2d on public limits, ckm twin",
        lambda d: (
            ggplot(d, aes("displ", "hwy"))
            + geom_bin_2d(stat="bin2d_dp", **LIM2, **DP)
        ),
        (),
    ),
    (
        "compare histogram with breaks, ckm twin",
        lambda d: (
            ggplot(d, aes("hwy"))
            + geom_histogram(
                stat="bin_dp", breaks=[0, 10, 20, 30, 40, 50], **DP
            )
        ),
        ("y",),
    ),
    (
        "compare densities, ckm twin",
        lambda d: (
            ggplot(d, aes("hwy", fill="drv"))
            + geom_density(stat="density_dp", limits=(0, 50), bins=50, **DP)
        ),
        ("y",),
    ),
    (
        "compare boxes, ckm twin",
        lambda d: (
            ggplot(d, aes("drv", "hwy"))
            + geom_boxplot(stat="boxplot_dp", limits=(0, 50), bins=50, **DP)
        ),
        ("y",),
    ),
]


@pytest.mark.parametrize("change", ["outlier", "missing", "other panel"])
@pytest.mark.parametrize(
    ("name", "make", "count_axes"),
    COMPARE_CASES,
    ids=[c[0] for c in COMPARE_CASES],
)
def test_compare_private_panels_differ_only_in_noisy_numbers(
    name, make, count_axes, change
):
    ckm = {"ckm": {"ptable": PTAB, "rkey": "rk"}}
    a = base_snapshot(
        name, lambda: compare_snapshot(make(BASE), count_axes, **ckm)
    )
    b = compare_snapshot(make(neighbour(change)), count_axes, **ckm)
    assert differences(a, b) == []


@pytest.mark.parametrize("whole_person", [False, True])
def test_a_str_column_with_declared_levels_changes_only_noisy_numbers(
    whole_person,
):
    """A string column counted over levels=: its codes come from Arrow
    where pandas stores it there (pandas 3); a record (or a person's
    three) moved to another declared level, or to a value outside the
    levels, changes only noisy numbers."""
    levels = sorted(_mpg["trans"].unique())

    def make(d):
        d = d.assign(pid=np.arange(len(d)) // 3)
        if whole_person:
            d = pp.source(d, unit="pid", max_records=3)
        return ggplot(d, aes("trans")) + geom_bar(
            stat="count_dp", levels=levels, **DP_ALL
        )

    rows = [0, 1, 2] if whole_person else [0]
    moved, outside = BASE.copy(), BASE.copy()
    moved.loc[rows, "trans"] = levels[-1]
    outside["trans"] = outside["trans"].astype(object)
    outside.loc[rows, "trans"] = "never declared"
    base = snapshot(make(BASE))
    assert differences(base, snapshot(make(moved))) == []
    assert differences(base, snapshot(make(outside))) == []


@pytest.mark.parametrize("whole_person", [False, True])
def test_numbers_counted_over_declared_levels_change_only_noisy_numbers(
    whole_person,
):
    """A numeric x counted over levels= (looked up and named in bulk as
    floats): a record (or a person's three) moved to another declared
    level, or to a value outside the levels, changes only noisy
    numbers."""
    levels = list(range(5, 50))

    def make(d):
        d = d.assign(pid=np.arange(len(d)) // 3)
        if whole_person:
            d = pp.source(d, unit="pid", max_records=3)
        return ggplot(d, aes("hwy")) + geom_bar(
            stat="count_dp", levels=levels, **DP_ALL
        )

    rows = [0, 1, 2] if whole_person else [0]
    moved, outside = BASE.copy(), BASE.copy()
    moved.loc[rows, "hwy"] = 49
    outside.loc[rows, "hwy"] = 1000
    base = snapshot(make(BASE))
    assert differences(base, snapshot(make(moved))) == []
    assert differences(base, snapshot(make(outside))) == []
