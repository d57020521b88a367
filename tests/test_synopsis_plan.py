"""A synopsis with unequal shares of eps, its inverse-variance
consistency, the planner (pp.plan_synopsis) and pp.accuracy of a plan or
a released synopsis, checked against hand computations and simulation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from plotnine.data import mpg as _mpg

import plotnine_private as pp
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.release.count_mechanisms import (
    BlockLaplaceCounts,
)
from plotnine_private.synopsis.consistency import make_consistent
from plotnine_private.synopsis.plan import optimal_shares

CLASSES = sorted(_mpg["class"].unique())
DIMS = {"class": CLASSES, "drv": ["4", "f", "r"], "hwy": (10, 50, 2)}
WL = [("class",), ("class", "hwy"), ("drv",)]
CELLS = [7, 140, 3]
#: class x hwy gets most of eps: scale 2 / (0.6 * 2) vs 2 / (0.2 * 2)
SHARES = {("class",): 0.2, ("class", "hwy"): 0.6, ("drv",): 0.2}


def _true(data: pd.DataFrame, mg: tuple[str, ...]) -> np.ndarray:
    codes = []
    for d in mg:
        if d == "hwy":
            codes.append(((data["hwy"] - 10) // 2).to_numpy().astype(int))
        else:
            codes.append(
                pd.Categorical(data[d], categories=DIMS[d]).codes.astype(int)
            )
    shape = tuple(20 if d == "hwy" else len(DIMS[d]) for d in mg)
    out = np.zeros(shape)
    np.add.at(out, tuple(codes), 1)
    return out


def _dlap_var(scale: float) -> float:
    q = math.exp(-1 / scale)
    return 2 * q / (1 - q) ** 2


@pytest.fixture(scope="module")
def sweep():
    """Ten weighted releases (eps 2) and their raw noise per marginal."""
    data = _mpg.copy()
    noise: dict = {mg: [] for mg in WL}
    last = None
    for seed in range(10):
        last = pp.synopsis(
            data, DIMS, eps=2.0, seed=seed, workload=WL, weights=SHARES
        )
        for mg in WL:
            noise[mg].append(last.raw[mg] - _true(data, mg))
    return last, {mg: np.stack(v) for mg, v in noise.items()}


# -- consistency with unequal variances ---------------------------------
def test_consistency_weights_each_table_by_its_own_variance():
    """By hand: t1 = [10, 4] (variance 1 per cell), t2 = [[6, 3], [3, 1]]
    (variance 4). Total: weights 1/(2*1), 1/(4*4) on 14 and 13 ->
    (7 + 13/16) / (9/16) = 125/9. Margin a: t1 per cell (var 1, weight
    1) and t2's row sums [9, 4] (var 2*4, weight 1/8) -> [89/9, 4], which
    already sums to 125/9. Margin b only from t2: [9, 4] + 4/9 each."""
    t1 = np.array([10.0, 4.0])
    t2 = np.array([[6.0, 3.0], [3.0, 1.0]])
    (a, ab), gap = make_consistent([t1, t2], [("a",), ("a", "b")], [1.0, 4.0])
    np.testing.assert_allclose(a, [89 / 9, 4.0], rtol=1e-12)
    np.testing.assert_allclose(ab.sum(axis=1), [89 / 9, 4.0], rtol=1e-12)
    np.testing.assert_allclose(ab.sum(axis=0), [9 + 4 / 9, 4 + 4 / 9])
    assert ab.sum() == pytest.approx(125 / 9)
    assert gap == 0.0
    # equal variances are the unweighted estimator: a = [29/3, 4]
    (e, _), _ = make_consistent([t1, t2], [("a",), ("a", "b")], [4.0, 4.0])
    (n, _), _ = make_consistent([t1, t2], [("a",), ("a", "b")])
    np.testing.assert_allclose(e, [29 / 3, 4.0])
    np.testing.assert_array_equal(e, n)
    with pytest.raises(ValueError, match="variances"):
        make_consistent([t1, t2], [("a",), ("a", "b")], [1.0, 0.0])


# -- unequal shares: the mechanism and the release ----------------------
def test_block_mechanism_spends_at_most_eps_exactly():
    m = BlockLaplaceCounts(1.0, (0.1, 0.2, 0.7), (2, 3, 4))
    assert m.block_eps() == (Fraction(1, 10), Fraction(1, 5), Fraction(7, 10))
    assert m.scales == pytest.approx((20.0, 10.0, 2 / 0.7))
    thirds = BlockLaplaceCounts(
        0.7, (1 / 3, 1 / 3, 1 / 3), (1, 1, 1), records=3
    )
    assert sum(thirds.block_eps()) <= Fraction(7, 10)
    assert thirds.scales[0] == pytest.approx(6 / (0.7 / 3), rel=1e-5)
    assert m.privacy_map(True, 3) == (1.0, 0.0)
    assert m.privacy_map(True, 6) == (2.0, 0.0)  # twice in every block
    with pytest.raises(ParameterError, match="once per block"):
        m.privacy_map(True, 2)
    with pytest.raises(ParameterError, match="once per block"):
        m.privacy_map(False, 3)
    with pytest.raises(ParameterError, match="summing to 1"):
        BlockLaplaceCounts(1.0, (0.5, 0.6), (1, 1))


def test_each_marginal_gets_its_share_of_the_noise(sweep):
    """raw - true over 10 seeds: class x hwy (1400 draws) at scale
    2/(0.6*2), the 1-way tables (100 draws together... 70 and 30) at
    2/(0.2*2). Equal shares would give scale 3 to all: a variance 3.5
    times smaller for class and drv, 2.2 times larger for class x hwy."""
    syn, noise = sweep
    assert syn.scales == {
        ("class",): pytest.approx(5.0),
        ("class", "hwy"): pytest.approx(5 / 3),
        ("drv",): pytest.approx(5.0),
    }
    assert syn.shares == SHARES
    big = noise[("class", "hwy")].ravel()
    assert np.allclose(big, np.rint(big))
    assert big.var() == pytest.approx(_dlap_var(5 / 3), rel=0.2)
    small = np.concatenate(
        [noise[("class",)].ravel(), noise[("drv",)].ravel()]
    )
    assert small.var() == pytest.approx(_dlap_var(5.0), rel=0.35)
    assert "shares 0.2 (class: eps 0.4, scale 5)" in syn.statement


def test_default_shares_are_unchanged_and_one_charge(tmp_path, ledger_key):
    data = _mpg.copy()
    plain = pp.synopsis(data, DIMS, eps=1.0, seed=7, workload=WL)
    # the first slice's release: scale 2 * 3 / eps in every marginal
    assert list(plain.scales.values()) == [pytest.approx(6.0, rel=1e-4)] * 3
    assert "eps/3=0.333333 per marginal, scale 6" in plain.statement
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10)
    s = pp.synopsis(
        data, DIMS, eps=2.0, seed=3, workload=WL, weights=SHARES, label="W"
    )
    s.marginal(("class", "hwy"))
    pp.accuracy(s, None)
    rows = pp.ledger(path).table
    assert rows["eps"].tolist() == [2.0]


def test_neighbour_one_person_changed_with_shares():
    a = _mpg.copy().assign(person=np.arange(len(_mpg)) // 2)
    b = a.copy()
    b.loc[b["person"] == 0, ["class", "drv", "hwy"]] = ["pickup", "4", 11]
    kw = dict(eps=1.0, seed=4, workload=WL, weights=SHARES)
    sa = pp.synopsis(a, DIMS, unit="person", max_records=2, **kw)
    with pytest.warns(pp.PrivacyWarning, match="same synopsis release"):
        sb = pp.synopsis(b, DIMS, unit="person", max_records=2, **kw)
    assert sa.statement == sb.statement
    assert sa.scales == sb.scales and sa.shares == sb.shares
    assert sa.scales[("drv",)] == pytest.approx(2 * 2 / 0.2)
    for mg in sa.marginals:
        fa, fb = sa.marginal(mg), sb.marginal(mg)
        pd.testing.assert_frame_equal(
            fa.drop(columns="count"), fb.drop(columns="count")
        )
    pd.testing.assert_frame_equal(pp.accuracy(sa, None), pp.accuracy(sb, None))


@pytest.mark.parametrize(
    "weights, match",
    [
        ([0.5, 0.5], "must be None"),
        ({("class", "drv"): 1.0}, "not a marginal of the workload"),
        ({("class",): 0.5, ("drv",): 0.5}, r"no share for \[\('class', 'hwy'"),
        (
            {("class",): 0.2, ("class", "hwy"): 0.6, ("drv",): 0.3},
            "sum to 1.1",
        ),
        ({("class",): 0.4, ("class", "hwy"): 0.6, ("drv",): 0}, "> 0"),
    ],
)
def test_bad_weights_are_refused(weights, match):
    with pytest.raises(pp.PlotninePrivateError, match=match):
        pp.synopsis(_mpg, DIMS, eps=1.0, workload=WL, weights=weights)


# -- the planner ----------------------------------------------------------
def _objective(cells, shares, eps, sens=2.0):
    return sum(c * _dlap_var(sens / (w * eps)) for c, w in zip(cells, shares))


def test_optimal_shares_follow_the_cube_root_and_beat_neighbours():
    cube = np.cbrt(CELLS) / np.cbrt(CELLS).sum()
    # large noise: the discrete variance is 2 b^2 - 1/6, the closed form
    np.testing.assert_allclose(optimal_shares(CELLS, 0.05), cube, rtol=1e-3)
    # eps 4: scales near 1, where the discrete optimum moves away from it
    w = optimal_shares(CELLS, 4.0)
    assert sum(w) == pytest.approx(1.0)
    best = _objective(CELLS, w, 4.0)
    assert best < _objective(CELLS, cube, 4.0) - 1e-6
    assert best < _objective(CELLS, [1 / 3] * 3, 4.0)
    for i in range(3):
        for j in range(3):
            if i != j:  # moving 1% of eps between two marginals costs
                v = list(w)
                v[i] -= 0.01
                v[j] += 0.01
                assert _objective(CELLS, v, 4.0) > best


def test_plan_reports_share_eps_scale_and_intervals():
    plan = pp.plan_synopsis(DIMS, WL, eps=2.0)
    t = pp.accuracy(plan, None)
    assert t["marginal"].tolist() == WL
    assert t["share"].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(t["eps"], 2.0 * t["share"])
    np.testing.assert_allclose(t["scale"], 2 / t["eps"])
    np.testing.assert_allclose(
        t["se"], np.sqrt([_dlap_var(b) for b in t["scale"]])
    )
    # the exact discrete Laplace +- : P(|N| <= k) >= 0.95 > P(|N| < k)
    for b, k in zip(t["scale"], t["halfwidth"]):
        q = math.exp(-1 / b)
        assert 1 - 2 * q ** (k + 1) / (1 + q) >= 0.95
        assert 1 - 2 * q**k / (1 + q) < 0.95
    assert plan.expected_squared_error == pytest.approx(
        sum(c * s**2 for c, s in zip(CELLS, t["se"]))
    )
    # a held 1-way marginal is read from its own table, not summed
    held = pp.plan_synopsis(DIMS, [("class", "hwy"), ("hwy",)], eps=1)
    assert pp.accuracy(held, "hwy")["from"].tolist() == [("hwy",)]
    # a sub-marginal of a held one: sums of 20 noisy cells
    sub = pp.accuracy(plan, ("class",))
    assert sub["from"].tolist() == [("class",)]
    summed = pp.accuracy(
        pp.plan_synopsis(DIMS, [("class", "hwy")], eps=1), "class"
    )
    assert summed["se"][0] == pytest.approx(math.sqrt(20 * _dlap_var(2.0)))
    assert summed["halfwidth"][0] == pytest.approx(1.959964 * summed["se"][0])


def test_plan_for_a_target_takes_the_smallest_eps():
    plan = pp.plan_synopsis(DIMS, WL, target=10.0)
    assert pp.accuracy(plan, None)["halfwidth"].max() <= 10.0
    less = pp.plan_synopsis(DIMS, WL, eps=plan.eps / 1.01)
    assert pp.accuracy(less, None)["halfwidth"].max() > 10.0


def test_plan_refusals_name_the_fix():
    with pytest.raises(pp.PlotninePrivateError, match="exactly one of eps"):
        pp.plan_synopsis(DIMS, WL)
    with pytest.raises(pp.PlotninePrivateError, match="exactly one of eps"):
        pp.plan_synopsis(DIMS, WL, eps=1, target=3)
    with pytest.raises(pp.PlotninePrivateError, match="target=-1"):
        pp.plan_synopsis(DIMS, WL, target=-1)
    with pytest.raises(pp.PlotninePrivateError, match="adjacency='x'"):
        pp.plan_synopsis(DIMS, WL, eps=1, adjacency="x")
    with pytest.raises(pp.PlotninePrivateError, match="workload entry"):
        pp.plan_synopsis(DIMS, [("nope",)], eps=1)
    plan = pp.plan_synopsis(DIMS, WL, eps=1)
    with pytest.raises(pp.PlotninePrivateError, match="neither held"):
        pp.accuracy(plan, ("drv", "hwy"))
    with pytest.raises(pp.PlotninePrivateError, match="target=..."):
        pp.eps_for(plan, error=3)


# -- accuracy of a released synopsis against simulation ------------------
def test_accuracy_of_a_release_matches_its_noise(sweep, tmp_path):
    """The se and +- that pp.accuracy states for the released synopsis
    (from its public scales) against the raw noise of 10 seeds: se within
    20% (a wrong share is off by 2x or more) and the +- covering at least
    93% (its exact coverage is 95-96%)."""
    syn, noise = sweep
    acc = pp.accuracy(syn, None).set_index("from")
    for mg, e in noise.items():
        row = acc.loc[[mg]].iloc[0]
        assert row["scale"] == syn.scales[mg]
        if mg == ("class", "hwy"):
            assert e.std() == pytest.approx(row["se"], rel=0.2)
        assert np.mean(np.abs(e) <= row["halfwidth"]) >= 0.93
    # a sub-marginal: hwy from class x hwy, sums of 7 cells (200 draws)
    sub = pp.accuracy(syn, "hwy").iloc[0]
    assert sub["from"] == ("class", "hwy") and sub["cells"] == 20
    summed = noise[("class", "hwy")].sum(axis=1).ravel()
    assert summed.std() == pytest.approx(sub["se"], rel=0.3)
    # the planned accuracy is the released one; it survives a save
    plan = pp.plan_synopsis(DIMS, WL, eps=2.0)
    s = pp.synopsis(_mpg, DIMS, eps=2.0, workload=WL, weights=plan.weights)
    pd.testing.assert_frame_equal(
        pp.accuracy(s, None).drop(columns=["scale", "se"]),
        pp.accuracy(plan, None).drop(columns=["scale", "se"]),
    )
    back = pp.load_synopsis(s.save(tmp_path / "s.json"))
    pd.testing.assert_frame_equal(
        pp.accuracy(back, None), pp.accuracy(s, None)
    )


def test_drawn_intervals_simulate_each_tables_own_noise():
    """class at share 0.9 (scale 2/0.9), class x drv at 0.1 (scale 20):
    the consistent class counts are the inverse-variance mean of class
    and class x drv's row sums (3 cells each); with these two tables the
    total is their sum, so a class cell's error variance is exactly
    1 / (1/v1 + 1/(3 v2)) = 9.36 (equal weights would give 155)."""
    from plotnine import aes, geom_bar, ggplot

    from plotnine_private.synopsis.draw import simulated_errors

    wl = [("class",), ("class", "drv")]
    syn = pp.synopsis(
        _mpg,
        DIMS,
        eps=1.0,
        seed=2,
        workload=wl,
        weights={("class",): 0.9, ("class", "drv"): 0.1},
    )
    assert math.isnan(syn.scale)
    v1, v2 = _dlap_var(2 / 0.9), _dlap_var(20.0)
    err = simulated_errors(syn)[("class",)]
    assert err.var() == pytest.approx(1 / (1 / v1 + 1 / (3 * v2)), rel=0.1)
    bars = pp.layer_data(ggplot(syn, aes("class")) + geom_bar(stat="count_dp"))
    width = (bars["count_high"] - bars["count_low"]).to_numpy()
    # 95% of an error of sd 3.06: about +-6, never the +-28 of equal weights
    assert ((width > 8) & (width < 16)).all()
