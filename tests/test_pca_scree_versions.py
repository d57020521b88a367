"""Versions of dp_pca's eigenvalue (scree) release (issue 23).

v2 (the default) pairs the rows of the Kendall design's random order
and keys its stream by x's digest and the released directions; v1
keeps the former method (its stream named by the scores' digest), with
numbers pinned since the scores became machine-independent. Same
privacy map and clip level (the level that ends the clip search's heavy
tail biased the top eigenvalue by -19% at n = 500: docs/mechanisms.md).
"""

from __future__ import annotations

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

from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.mechanisms.pca.scree import (
    pair_maxima,
    pair_variances,
    private_eigenvalues,
    private_scree,
)
from plotnine_private.mechanisms.streams.randomness import (
    derive_key,
    keyed_permutation,
)
from plotnine_private.mechanisms.streams.versions import use_stream_version
from plotnine_private.pca import dp_pca

# pinned when projections became a fixed-order sum and directions a
# 2**-32 grid (the same bits on every processor kernel: before, the
# scores' digest followed the BLAS kernel), seed-only secret
V1_GAU = [36.7109375, 8.974609375, 8.974609375, 7.26171875, 5.3125, 5.3125]
V1_GAU += [3.224888392857143] * 14
V1_GAU_IDENTITY = "84aabd9acc4d09d241f9f322"
V1_BIG = [
    8.69281005859375,
    4.02740478515625,
    1.0606892903645833,
    1.0606892903645833,
    1.0606892903645833,
    0.986328125,
]
V1_BIG_IDENTITY = "6d4ba7a4a08ba0b1f7cdc0a7"


@pytest.fixture(scope="module")
def gau():
    return gaussian_500()


@pytest.fixture(scope="module")
def big():
    # 20000 rows: the incomplete Kendall estimator (its design's order)
    return spiked_20000()


def _scree(result) -> dict:
    return next(r for r in result.releases if r.family == "pca:scree")


# --- v1 reproduces the numbers it gave before --------------------------------


def test_v1_reproduces_the_former_eigenvalues(gau, big):
    # pinned under stream version 2 (the default then)
    with use_stream_version(2):
        # and the frame's v1: both versions name themselves in the identity
        v1 = {"scree_version": "v1", "frame_version": "v1"}
        a, ids = charged(dp_pca, gau, COLS, eps=5, delta=1e-4, seed=1, **v1)
        assert a.eigenvalues.tolist() == V1_GAU
        assert query_identity(ids) == V1_GAU_IDENTITY
        b, ids = charged(dp_pca, big, eps=2, delta=1e-6, seed=7, **v1)
        assert b.eigenvalues.tolist() == V1_BIG
        assert query_identity(ids) == V1_BIG_IDENTITY
        assert _scree(b).details["version"] == "v1"
        assert _scree(b).details["clip"] == 58.123924111384774


# --- v2 is the default, names itself, and is another release -----------------


def test_v2_is_the_default_and_is_named(gau, big):
    for data, kw in ((gau, {"columns": COLS}), (big, {})):
        new = dp_pca(data, eps=5, delta=1e-4, seed=1, **kw)
        same = dp_pca(
            data, eps=5, delta=1e-4, seed=1, scree_version="v2", **kw
        )
        old = dp_pca(data, eps=5, delta=1e-4, seed=1, scree_version="v1", **kw)
        assert new.eigenvalues.tolist() == same.eigenvalues.tolist()
        assert new.identity == same.identity != old.identity
        rel = _scree(new)
        assert rel.details["version"] == "v2"
        assert rel.identity.endswith(":scree")
        assert new.eigenvalues.tolist() != old.eigenvalues.tolist()
        # the budget table and its map do not change with the version
        pd.testing.assert_frame_equal(new.privacy, old.privacy)
        assert (rel.eps, rel.delta) == (_scree(old).eps, _scree(old).delta)


def test_score_releases_are_unchanged(gau):
    # pinned under stream version 2 (the default then)
    with use_stream_version(2):
        from plotnine_private.pca import dp_score

        # dp_score releases no scree: its identity is the one it had
        # before v2 (commit 2288095), its numbers the pinned ones since
        # projections are machine-independent, with the frame's v1
        a, ids = charged(
            dp_score, gau, COLS, eps=2, delta=1e-5, seed=3, frame_version="v1"
        )
        assert query_identity(ids) == "7315809a6f29705cd2ece80f"
        assert a.frame.xlim == (-13.995199964219188, 13.954999964219189)
        assert a.directions.iloc[0, 0] == 0.3981591823976487
        with pytest.raises(TypeError):
            dp_score(gau, COLS, eps=2, delta=1e-5, seed=3, scree_version="v1")


@pytest.mark.parametrize("bad", ["v3", "V2", 2, None])
def test_unknown_version_is_refused_naming_the_fix(gau, bad):
    with pytest.raises(PlotninePrivateError) as err:
        dp_pca(gau, COLS, eps=5, delta=1e-4, seed=1, scree_version=bad)
    text = str(err.value)
    assert "scree_version" in text and repr(bad) in text
    assert "'v1'" in text and "'v2'" in text


# --- the v2 mechanism -----------------------------------------------------


def test_v2_pairs_are_the_v1_pairs_of_the_same_order():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(1001, 5)) * [4, 2, 1, 1, 1]
    v = np.linalg.qr(rng.normal(size=(5, 3)))[0]
    order = keyed_permutation(bytes(16), len(x))
    rows = x[order]
    y = x @ v
    want = (y[order[1:1000:2]] - y[order[0:1000:2]]) ** 2 / 2
    np.testing.assert_allclose(pair_variances(rows, v), want, rtol=1e-12)
    # blocks give the same rows as one call
    np.testing.assert_array_equal(
        pair_variances(rows, v, 100, 300), pair_variances(rows, v)[100:300]
    )


def test_v2_without_noise_is_the_clipped_pair_mean():
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(20001, 4)) * [3, 2, 1, 0.5]
    v = np.eye(4)
    w = pair_variances(rows, v)
    for clip in (1.0, 1e6):
        got = private_scree(
            rows, v, 1e9, 0.5, clip=clip, mono=False, key=bytes(16)
        )
        # the analytic Gaussian's sigma at eps = 1e9 is Delta/sqrt(2 eps):
        # about 5e-9 C, so within 6 sigma of the clipped pair mean
        assert got.sigma < 1e-8 * clip
        np.testing.assert_allclose(
            got.values,
            np.minimum(w, clip).mean(axis=0),
            rtol=1e-12,
            atol=6 * got.sigma,
        )
        assert got.clip_source == "public" and got.clip_quantile is None
    # and it estimates the variances (3, 2, 1, 0.5)**2 without clipping
    np.testing.assert_allclose(got.values, [9, 4, 1, 0.25], rtol=0.05)


def test_v2_map_is_the_v1_map():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(4000, 3))
    v = np.eye(3)
    key = derive_key(bytes(16), "map")
    a = private_scree(x, v, 1.0, 1e-5, clip=9.0, key=key, records=2)
    b = private_eigenvalues(x @ v, 1.0, 1e-5, clip=9.0, key=key, records=2)
    # sigma from sqrt(k) C r / m with the same (eps, delta): equal maps
    assert a.sigma == b.sigma
    assert (a.eps, a.delta, a.clip) == (b.eps, b.delta, b.clip)
    with pytest.raises(Exception, match="v must be"):
        private_scree(x, np.eye(2), 1.0, 1e-5, key=key)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_maxima_are_the_maxima_of_the_pair_variances(seed):
    # the same floats: ties, zeros, signs and a block of a larger matrix
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(2001, 6)) * rng.exponential(size=(2001, 1))
    rows[:40] = np.round(rows[:40])  # equal |w| in a pair, and zeros
    rows[41] = rows[40]
    v = np.linalg.qr(rng.normal(size=(6, 6)))[0][:, :4]
    for start, stop in ((0, None), (7, 700), (0, 1)):
        want = pair_variances(rows, v, start, stop).max(axis=1)
        got = pair_maxima(rows, v, start, stop)
        assert got.tolist() == want.tolist()
