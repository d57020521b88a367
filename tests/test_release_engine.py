"""The release engine: identity, keys, privacy maps (OpenDP style), and one
test per defect of the old accounting, each on two neighbouring data sets.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    after_stat,
    geom_bar,
    geom_histogram,
    geom_text,
    ggplot,
)
from plotnine.data import mpg as _mpg

import plotnine_private as pp
from plotnine_private.door import layer_releases
from plotnine_private.mechanisms.release.engine import (
    CKMCounts,
    LaplaceCounts,
    Query,
)
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams import keys

PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)


@pytest.fixture(autouse=True)
def fresh_session():
    current_session().sources.clear()
    keys.use_key(None)
    yield
    keys.use_key(None)
    current_session().sources.clear()


def built(plot):
    return pp._compat.build(plot)


# --------------------------------------------------------------------------
# privacy maps, asserted exactly
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("adjacency", "public", "expected"),
    [
        ("replace", True, (1.0, 0.0)),
        ("add_remove", True, (1.0, 0.0)),
        ("replace", False, (1.0, 1e-6)),
        ("add_remove", False, (1.0, 1e-6)),
    ],
)
def test_laplace_counts_privacy_map(adjacency, public, expected):
    m = LaplaceCounts(eps=1.0, delta=1e-6, adjacency=adjacency)
    assert m.privacy_map(public) == expected
    # margins: a record in three panels costs three times
    assert m.privacy_map(public, 3) == (3.0, 3 * expected[1])


def test_laplace_counts_scale_follows_adjacency():
    assert LaplaceCounts(0.5, adjacency="replace").scale == 4.0
    assert LaplaceCounts(0.5, adjacency="add_remove").scale == 2.0


def test_ckm_has_no_privacy_map():
    assert CKMCounts(PTAB).privacy_map(True) == (None, 0.0)


def test_release_records_what_the_map_says(mpg_cat):
    q = built(
        ggplot(mpg_cat, aes("class"))
        + geom_bar(stat="count_dp", eps=0.7, seed=1, adjacency="add_remove")
    )
    (r,) = layer_releases(q.layers[0])
    assert (r.eps, r.delta, r.sensitivity) == (0.7, 0.0, 1.0)
    assert r.policy == "seed-only" and r.source == "data"


# --------------------------------------------------------------------------
# keys and seeds
# --------------------------------------------------------------------------
def test_create_key_writes_32_private_bytes_and_never_overwrites(tmp_path):
    path = pp.create_key(tmp_path / "k")
    assert path.stat().st_size == 32
    assert (path.stat().st_mode & 0o777) == 0o600
    with pytest.raises(ValueError, match="exists already"):
        pp.create_key(path)


def test_a_key_file_makes_the_seed_a_public_label(tmp_path, mpg_cat):
    def counts():
        p = ggplot(mpg_cat, aes("class")) + geom_bar(
            stat="count_dp", eps=1, seed=3
        )
        return list(pp.layer_data(p)["count"])

    without = counts()
    pp.use_key(pp.create_key(tmp_path / "a"))
    first = counts()
    r = pp.privacy_report(
        ggplot(mpg_cat, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=3)
    )
    assert r.table.iloc[0]["seed_policy"] == (
        "key file (seed is a public label)"
    )
    assert not any("seed-only" in n for n in r.notes)
    pp.use_key(pp.create_key(tmp_path / "b"))
    second = counts()
    # another key, another secret: the same seed label draws other noise
    assert first != second and first != without


def test_the_same_key_seed_and_data_give_the_same_figure_in_any_process(
    tmp_path,
):
    key = pp.create_key(tmp_path / "k")
    code = (
        "import pandas as pd, plotnine_private as pp\n"
        "from plotnine import ggplot, aes, geom_bar\n"
        "from plotnine.data import mpg\n"
        "p = ggplot(mpg, aes('class')) + geom_bar(stat='count_dp', eps=1,"
        " seed='fig-1')\n"
        "print(list(pp.layer_data(p)['count']))\n"
    )
    env = {**os.environ, keys.KEY_ENV: str(key)}
    child = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # this process, with the same key file: another process, one import
    here = io.StringIO()
    pp.use_key(key)
    with contextlib.redirect_stdout(here):
        exec(code, {})
    assert child == here.getvalue() and child.startswith("[")


def test_without_a_key_the_seed_is_stretched_and_the_report_says_so(mpg):
    r = pp.privacy_report(
        ggplot(mpg, aes("class")) + geom_bar(stat="count_dp", eps=1, seed=3)
    )
    assert r.table.iloc[0]["seed_policy"].startswith("seed-only key")
    assert any(
        "anyone who has the code can remove the noise" in n for n in r.notes
    )
    assert keys.secret_for(3).policy == "seed-only"


def test_a_bad_key_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad"
    bad.write_bytes(b"short")
    with pytest.raises(ValueError, match="not a plotnine_private key"):
        pp.use_key(bad)
    with pytest.raises(ValueError, match="cannot read the key file"):
        pp.use_key(tmp_path / "missing")


def test_identity_is_keyed_by_the_secret(tmp_path):
    # keyed: the same query under another secret has another identity, so
    # a secret seed cannot be found by hashing candidate seeds
    q = Query.make("count", "data", 1, x="class")
    plain = q.identity()
    assert (
        len(plain) == 24
        and plain != Query.make("count", "data", 2, x="class").identity()
    )
    pp.use_key(pp.create_key(tmp_path / "k"))
    assert q.identity() != plain


# --------------------------------------------------------------------------
# defect 1: identity from content
# --------------------------------------------------------------------------
def test_a_layer_on_its_own_data_is_another_release_even_if_equal(mpg_cat):
    # no record has hwy > 50: the subset equals the data, and yet it is
    # another source, so another release: the report, the budget and the
    # noise must not reveal that the rows happen to be equal
    sub = mpg_cat[mpg_cat["hwy"] <= 50]
    assert len(sub) == len(mpg_cat)
    p = (
        ggplot(mpg_cat, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=4)
        + geom_bar(data=sub, stat="count_dp", eps=1, seed=4)
    )
    q = built(p)
    a, b = (layer_releases(lyr)[0] for lyr in q.layers)
    assert a.identity != b.identity
    assert pp.privacy_report(p).total_eps == pytest.approx(2.0)
    assert list(q.layers[0].data["noisy_count"]) != list(
        q.layers[1].data["noisy_count"]
    )
    with pytest.raises(pp.BudgetExceededError):
        (p + pp.privacy_budget(eps=1)).draw()


def test_two_layers_on_one_data_object_are_one_source(mpg_cat):
    p = (
        ggplot(mpg_cat, aes("class"))
        + geom_bar(data=mpg_cat, stat="count_dp", eps=1, seed=4)
        + geom_text(
            aes(label=after_stat("count")),
            data=mpg_cat,
            stat="count_dp",
            eps=1,
            seed=4,
        )
    )
    q = built(p)
    assert list(q.layers[0].data["count"]) == list(q.layers[1].data["label"])
    assert pp.privacy_report(p).total_eps == pytest.approx(1.0)


# --------------------------------------------------------------------------
# defect 2: noise that ignores the data; range streams that ignore eps
# --------------------------------------------------------------------------
def range_of(d, eps, seed):
    # unstacked: only the range release is read
    p = ggplot(d, aes("hwy")) + geom_histogram(
        stat="bin_dp", eps=eps, seed=seed, bins=10, position="identity"
    )
    releases = layer_releases(built(p).layers[0])
    (r,) = [x for x in releases if x.family == "range"]
    return r.details["range"]


def test_range_noise_depends_on_the_data_and_on_eps(mpg):
    near = mpg.copy()
    near.loc[0, "hwy"] = near.loc[0, "hwy"] + 1
    # each range of the data at eps 1 is built once and compared thrice
    # (5 seeds: with independent noise no two ranges were equal in 20;
    # with shared noise all five would be)
    base = [range_of(mpg, 1, s) for s in range(5)]
    same_data = [base[s] == range_of(mpg, 1, s) for s in range(2)]
    assert all(same_data)  # one seed, one data: one release
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.PrivacyWarning)
        shared = [base[s] == range_of(near, 1, s) for s in range(5)]
        eps = [base[s] == range_of(mpg, 3, s) for s in range(5)]
    # with shared noise nearly all would be equal (the data differ by one)
    assert sum(shared) <= 2 and sum(eps) <= 2


def test_count_noise_is_not_shared_between_neighbours(mpg_cat):
    near = mpg_cat.copy()
    near.loc[0, "class"] = (
        "suv" if near.loc[0, "class"] != "suv" else ("compact")
    )

    def noisy(d):
        current_session().sources.clear()
        p = ggplot(d, aes("class")) + geom_bar(
            stat="count_dp", eps=1, seed=9, drop=False
        )
        return pp.layer_data(p)["noisy_count"].to_numpy()

    a, b = noisy(mpg_cat), noisy(near)
    true_a = (
        mpg_cat["class"]
        .value_counts(sort=False)
        .reindex(mpg_cat["class"].cat.categories)
        .to_numpy()
    )
    true_b = (
        near["class"]
        .value_counts(sort=False)
        .reindex(near["class"].cat.categories)
        .to_numpy()
    )
    # shared noise would make (a - b) equal the true difference exactly
    assert not np.array_equal(a - b, true_a - true_b)


def test_reusing_a_seed_on_another_frame_warns_by_object_identity(mpg_cat):
    def plot(d):
        return ggplot(d, aes("class")) + geom_bar(
            stat="count_dp", eps=1, seed=11, drop=False
        )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pp.layer_data(plot(mpg_cat))
        pp.layer_data(plot(mpg_cat))  # same object: the same release
        pp.privacy_report(plot(mpg_cat))
    assert not [w for w in caught if w.category is pp.PrivacyWarning]
    copy = mpg_cat.copy()  # equal content, another object
    with pytest.warns(pp.PrivacyWarning, match="one seed per figure"):
        pp.layer_data(plot(copy))


# --------------------------------------------------------------------------
# defect 3: bar and text on an undeclared domain
# --------------------------------------------------------------------------
def test_bar_and_text_agree_on_an_undeclared_domain(mpg):
    p = (
        ggplot(mpg, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=42)
        + geom_text(
            aes(label=after_stat("count")), stat="count_dp", eps=1, seed=42
        )
    )
    q = built(p)
    bars, text = q.layers[0].data, q.layers[1].data
    assert list(bars["count"]) == list(text["label"])
    assert list(bars["x"]) == list(text["x"])
    assert pp.privacy_report(p).total_eps == pytest.approx(1.0)


# --------------------------------------------------------------------------
# defect 4: tables and plots drift
# --------------------------------------------------------------------------
def _plot_counts(d, x, fill=None, facet=None, **params):
    from plotnine import facet_wrap

    mapping = aes(x, fill=fill) if fill else aes(x)
    # every cell of the domain, released zeros too (as the table lists);
    # unstacked, as only the counts are compared
    p = ggplot(d, mapping) + geom_bar(
        stat="count_dp",
        eps=1,
        seed=5,
        drop=False,
        position="identity",
        **params,
    )
    if facet:
        p = p + facet_wrap(facet)
    return built(p).layers[0].data


def _declared(d):
    d = d.copy()
    d["drv"] = pd.Categorical(d["drv"], categories=["4", "f", "r"])
    d["year"] = pd.Categorical(d["year"], categories=[1999, 2008, 2020])
    return d


@pytest.mark.parametrize("order", ["as is", "shuffled"])
@pytest.mark.parametrize(
    ("x", "kwargs", "table_kwargs"),
    [
        ("drv", {}, {}),  # declared
        ("class", {}, {}),  # undeclared strings
        ("cyl", {}, {}),  # undeclared numbers
        ("cyl", {"levels": [4, 5, 6, 8, 10]}, {"levels": [4, 5, 6, 8, 10]}),
        ("drv", {"facet": "year"}, {"facets": "year"}),
        ("class", {"fill": "drv"}, {"groups": "drv"}),
    ],
)
def test_tables_equal_plots_for_every_domain_kind(
    x, kwargs, table_kwargs, order
):
    d = _declared(_mpg)
    if order == "shuffled":
        d = d.sample(frac=1, random_state=3).reset_index(drop=True)
    plot = _plot_counts(d, x, **kwargs)
    table = pp.dp_table(d, x, eps=1, seed=5, **table_kwargs)
    assert sorted(plot["count"].tolist()) == sorted(table["count"].tolist())
    assert len(plot) == len(table)


def test_tables_return_declared_numeric_levels_as_given():
    t = pp.dp_table(_mpg, "year", eps=1, seed=1, levels=[1999, 2008, 2020])
    assert t["year"].tolist() == [1999, 2008, 2020]


@pytest.mark.parametrize("bad", [-5, float("nan"), "10", True])
def test_ckm_table_checks_its_threshold(bad):
    d = pp.add_record_keys(_mpg, rng_seed=1)
    with pytest.raises(ValueError, match="threshold"):
        pp.ckm_table(d, "class", rkey="rkey", ptable=PTAB, threshold=bad)


def test_tables_accept_polars_frames():
    pl = pytest.importorskip("polars")
    d = pl.DataFrame({"class": _mpg["class"].tolist()})
    t = pp.dp_table(d, "class", eps=1, seed=1)
    assert set(t.columns) == {"class", "count"}


# --------------------------------------------------------------------------
# defect 5: one mechanism, one cost
# --------------------------------------------------------------------------
@pytest.mark.parametrize("adjacency", ["replace", "add_remove"])
def test_a_private_range_costs_its_share_under_both_adjacencies(
    mpg, adjacency
):
    p = ggplot(mpg, aes("hwy")) + geom_histogram(
        stat="bin_dp", eps=1, seed=2, bins=10, adjacency=adjacency
    )
    rels = layer_releases(built(p).layers[0])
    rng = [r for r in rels if r.family == "range"]
    counts = [r for r in rels if r.family == "bin"]
    assert len(rng) == 1 and rng[0].eps == pytest.approx(0.2)
    assert counts[0].eps == pytest.approx(0.8)
    assert pp.privacy_report(p).total_eps == pytest.approx(1.0)
