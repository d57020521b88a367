"""Versions of the PCA score frame (dp_pca, dp_score, stat_dp_pca_score).

v2 (the default) searches the frame's radius at a public level lowered
from 0.99 (``tail_level``) so that its noisy target rarely passes every
distance; v1 keeps the former level. Same privacy map.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from pca_versions import (
    COLS,
    charged,
    gaussian_500,
    query_identity,
    spiked_20000,
)
from plotnine import ggplot

from plotnine_private import layer_data
from plotnine_private._compat import build
from plotnine_private.door import layer_releases
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.pca import quantile as qm
from plotnine_private.mechanisms.pca.quantile import (
    FRAME_TAIL,
    private_frame,
    tail_level,
    upper_quantile,
)
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams.randomness import (
    _key_words,
    derive_key,
)
from plotnine_private.mechanisms.streams.siphash import siphash24
from plotnine_private.mechanisms.streams.versions import use_stream_version
from plotnine_private.pca import dp_pca, dp_score
from plotnine_private.pca.api import make_settings
from plotnine_private.pca.inputs import pca_query
from plotnine_private.stats.dp_pca_score import stat_dp_pca_score

# dp_pca's frame budget at eps = 5: a third to the score, 0.35 of it
EPS_FRAME = 5 / 3 * 0.35


@pytest.fixture(scope="module")
def gau():
    return gaussian_500()


@pytest.fixture(scope="module")
def big():
    return spiked_20000()


def _frame(releases) -> object:
    return next(r for r in releases if r.details["what"] == "frame")


def _stat_frame(gau, **kw):
    p = ggplot(gau) + stat_dp_pca_score(
        columns=COLS, eps=4, delta=1e-5, seed=1, **kw
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the too-few-rows signal
        return _frame(layer_releases(build(p).layers[0]))


# --- v1 reproduces the frames it gave before ---

# the identities as before frame versions existed (commit 5f108e5); the
# numbers pinned since the scores are machine-independent (a fixed-order
# projection on directions on a 2**-32 grid); seed-only secret


def test_v1_reproduces_the_former_frames(gau, big):
    # pinned under stream version 2 (the default then)
    with use_stream_version(2):
        a, ids = charged(
            dp_pca, gau, COLS, eps=5, delta=1e-4, seed=1, frame_version="v1"
        )
        assert query_identity(ids) == "ebe720b1c2277b7f9928e4ab"
        assert a.frame.radius == 11.772375803217816
        assert a.frame.xlim == (-14.08624695386138, 14.167454973861378)
        assert a.frame.ylim == (-14.075840913761379, 14.17786101396138)
        assert a.eigenvalues.tolist()[:2] == [40.0, 6.62890625]
        assert _frame(a.releases).details["version"] == "v1"
        assert _frame(a.releases).details["radius_quantile"] == 0.99
        b, ids = charged(
            dp_score, gau, COLS, eps=2, delta=1e-5, seed=3, frame_version="v1"
        )
        assert query_identity(ids) == "7315809a6f29705cd2ece80f"
        assert b.frame.xlim == (-13.995199964219188, 13.954999964219189)
        assert b.frame.radius == 11.645916636849323
        c, ids = charged(
            dp_pca, big, eps=2, delta=1e-6, seed=7, frame_version="v1"
        )
        assert query_identity(ids) == "eb3d3af09232ece6152ad8e2"
        assert c.frame.radius == 8.016201436033276
        s, ids = charged(_stat_frame, gau, frame_version="v1")
        assert "726462708fb4526661d53e24:frame" in ids
        assert s.details["xlim"] == (-15.511741125703294, 15.613761225903295)


def test_the_mechanism_keeps_its_numbers_without_a_tail():
    # private_frame's other callers (benchmarks, tests) pass no tail
    s = np.column_stack([np.arange(-50, 51)] * 2) / 10.0
    f = private_frame(s, eps=1.0, key=bytes(16))
    assert f.radius == 7.001420979242296
    assert f.xlim == (-8.432006175090754, 8.371404175090754)
    assert f.level == 0.99


# --- v2 is the default, names itself, and is another release ---


def test_v2_is_the_default_and_is_named(gau, big):
    for data, kw in ((gau, {"columns": COLS}), (big, {})):
        new = dp_pca(data, eps=5, delta=1e-4, seed=1, **kw)
        same = dp_pca(
            data, eps=5, delta=1e-4, seed=1, frame_version="v2", **kw
        )
        old = dp_pca(data, eps=5, delta=1e-4, seed=1, frame_version="v1", **kw)
        assert new.frame == same.frame
        assert new.identity == same.identity != old.identity
        assert new.frame != old.frame  # other noise (same map)
        rel = _frame(new.releases)
        assert rel.details["version"] == "v2"
        assert rel.details["radius_quantile"] == new.frame.level
        # the budget table and the frame's share do not change
        pd.testing.assert_frame_equal(new.privacy, old.privacy)
        assert rel.eps == _frame(old.releases).eps
    # n = 500: the level is lowered; n = 20000: 0.99 is already safe
    small = dp_pca(gau, COLS, eps=5, delta=1e-4, seed=1)
    assert small.frame.level == tail_level(0.99, EPS_FRAME / 3, 500)
    assert 0.90 < small.frame.level < 0.91
    large = dp_pca(big, eps=5, delta=1e-4, seed=1)
    assert large.frame.level == 0.99


def test_the_query_names_v2_and_not_v1():
    kw = dict(
        eps=1.0,
        delta=1e-5,
        shares={"loading": 0.5, "score": 0.5},
        bins=(20, 20),
        method="sparse",
        axes=(1, 2),
        center=True,
        seed=1,
        k=None,
        scale=None,
        scree_clip=None,
        calibration="analytic",
        estimator="auto",
        directions=None,
    )
    cols = ["a", "b", "c"]
    v2 = pca_query(make_settings("dp_score", cols, **kw), cols, "data")
    v1 = pca_query(
        make_settings("dp_score", cols, frame_version="v1", **kw),
        cols,
        "data",
    )
    assert v2.part("frame_version") == "pnp-frame-v2"
    assert v1.part("frame_version") is None
    assert "frame_version" not in dict(v1.parts)
    assert v1.identity() != v2.identity()


def test_the_stat_is_dp_score_in_both_versions(gau):
    for version in ("v1", "v2"):
        s = _stat_frame(gau, frame_version=version)
        ref = dp_score(
            gau, COLS, eps=4, delta=1e-5, seed=1, frame_version=version
        )
        assert s.details["xlim"] == ref.frame.xlim
        assert s.details["version"] == version
        assert s.identity == ref.identity + ":frame"
    default = _stat_frame(gau)
    assert default.details["version"] == "v2"


@pytest.mark.parametrize("bad", ["v3", "V2", 2, None])
def test_unknown_version_is_refused_naming_the_fix(gau, bad):
    calls = [
        lambda: dp_pca(gau, COLS, eps=5, delta=1e-4, frame_version=bad),
        lambda: dp_score(gau, COLS, eps=5, delta=1e-4, frame_version=bad),
        # the stat refuses it when it is made, before any plotting
        lambda: stat_dp_pca_score(
            columns=COLS, eps=4, delta=1e-5, frame_version=bad
        ),
    ]
    for call in calls:
        with pytest.raises(PlotninePrivateError) as err:
            call()
        text = str(err.value)
        assert "frame_version" in text and repr(bad) in text
        assert "'v1'" in text and "'v2'" in text


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.5, True, "0.01", math.nan])
def test_private_frame_refuses_a_bad_tail(bad):
    with pytest.raises(ParameterError, match="tail must be None"):
        private_frame(np.ones((10, 2)), 1.0, key=bytes(16), tail=bad)


# --- the level ---


def test_tail_level_bounds_the_chance_the_target_passes_every_value():
    for eps, n, records in (
        (EPS_FRAME / 3, 500, 1),
        (0.1, 10**4, 1),
        (1.0, 500, 3),
        (0.05, 10**6, 2),
    ):
        q = tail_level(0.99, eps, n, records, FRAME_TAIL)
        assert 0.5 <= q <= 0.99
        rate = eps / (2 * records)
        if q > 0.5:
            # P(q n + E_0 > n) = exp(-rate (1 - q) n) <= FRAME_TAIL
            assert math.exp(-rate * (1 - q) * n) <= FRAME_TAIL * (1 + 1e-9)
    assert tail_level(0.99, 0.5, 10**6) == 0.99
    assert tail_level(0.99, 0.01, 50) == 0.5
    # a unit of 3 rows: a third of the rate, a lower level
    assert tail_level(0.99, 1.0, 2000, 3) < tail_level(0.99, 1.0, 2000)


def test_a_unit_of_rows_lowers_the_frame_level(gau):
    x = gau[COLS[:2]].to_numpy()
    one = private_frame(x, 1.0, key=bytes(16), tail=FRAME_TAIL)
    three = private_frame(x, 1.0, key=bytes(16), tail=FRAME_TAIL, records=3)
    assert one.level == tail_level(0.99, 1 / 3, 500)
    assert three.level == tail_level(0.99, 1 / 3, 500, 3) < one.level


# --- the radius's heavy tail (v1) and its guard (v2) ---


def _radii(r, levels, eps, keys, width=384):
    """``upper_quantile(r, q, eps, key=k)`` for every level ``q`` and
    key: the first ``width`` queries of every search drawn in one keyed
    hash (one key per message); a search that goes further is run by
    upper_quantile itself."""
    inner = [derive_key(k, "durfee_upper_quantile") for k in keys]
    words = np.array([_key_words(k) for k in inner], dtype=np.uint64)
    drawn = siphash24(
        np.repeat(words[:, 0], width + 1),
        np.repeat(words[:, 1], width + 1),
        np.tile(np.arange(width + 1, dtype=np.uint64), len(keys)),
    ).reshape(len(keys), width + 1)
    u = ((drawn >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
    noise = -np.log(u) / (eps / 2)  # rate eps/2 (one record per unit)
    t, counts = qm._counter(r, 0.0, 1.01, 5000)(np.arange(1, width + 1))
    out = {}
    for name, q in levels.items():
        hit = counts + noise[:, 1:] >= (q * r.size + noise[:, :1])
        radii = t[np.argmax(hit, axis=1)]
        for i in np.flatnonzero(~hit.any(axis=1)):
            radii[i] = upper_quantile(r, q, eps, key=keys[i])
        out[name] = radii
    return out


@pytest.mark.slow
def test_v2_radius_has_no_heavy_tail_where_v1_has_one(gau):
    # dp_pca's frame at n = 500, eps = 5: the radius search has eps/3 of
    # the frame's budget. The distances are taken from a fixed centre (the
    # medians' own noise is not what has the tail), 3000 keyed draws.
    x = gau[COLS].to_numpy()
    c = x - x.mean(axis=0)
    v = np.linalg.eigh(c.T @ c)[1][:, ::-1]
    s = x @ v[:, :2]
    r = np.hypot(*(s - np.median(s, axis=0)).T)
    part = EPS_FRAME / 3
    levels = {"v1": 0.99, "v2": tail_level(0.99, part, len(r), 1, FRAME_TAIL)}
    keys = [derive_key(bytes(16), "t", d) for d in range(3000)]
    over = {}
    for name, radii in _radii(r, levels, part, keys).items():
        # the vectorised searches are upper_quantile's, draw for draw
        assert radii[:25].tolist() == [
            upper_quantile(r, levels[name], part, key=k) for k in keys[:25]
        ]
        over[name] = (radii / r.max() > [[1.0], [10.0]]).mean(axis=1)
    # v1: the noisy target passes every distance in about 4% of releases
    # and then climbs the grid: about 1 in 500 radii is 10x the largest
    # distance (expected counts near 120 and 6 of 3000: the bounds are
    # far in the lower tails of their binomials)
    assert over["v1"][0] > 0.02 and over["v1"][1] > 3e-4
    # v2: at most FRAME_TAIL of radii pass the largest distance, none 10x
    assert over["v2"][0] <= FRAME_TAIL and over["v2"][1] == 0


# --- neighbours: the level is public ---


def _fresh(make):
    current_session().sources.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make()


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_neighbours_differ_only_in_the_frame_numbers(gau, version):
    d = gau
    d2 = gau.copy()
    # replace record 0 by a far point: it moves the largest distance
    d2.loc[0, COLS] = d.loc[0, COLS].to_numpy() * -4.0 + 30.0
    a, b = (
        _fresh(
            lambda data=data: dp_score(
                data,
                COLS,
                eps=3,
                delta=1e-5,
                seed=11,
                frame_version=version,
            )
        )
        for data in (d, d2)
    )
    fa, fb = _frame(a.releases), _frame(b.releases)
    assert a.identity == b.identity
    assert a.frame.level == b.frame.level
    assert (fa.identity, fa.eps, fa.delta, fa.cells) == (
        fb.identity,
        fb.eps,
        fb.delta,
        fb.cells,
    )
    noisy = {"xlim", "ylim"}
    assert {k: v for k, v in fa.details.items() if k not in noisy} == {
        k: v for k, v in fb.details.items() if k not in noisy
    }
    assert a.frame.xlim != b.frame.xlim  # the noisy numbers
    pd.testing.assert_frame_equal(a.privacy, b.privacy)


def test_the_layer_draws_with_v2(gau):
    p = ggplot(gau) + stat_dp_pca_score(
        columns=COLS, eps=4, delta=1e-5, seed=1, bins=(8, 8)
    )
    d = layer_data(p)
    assert d["prob"].sum() == pytest.approx(1)
