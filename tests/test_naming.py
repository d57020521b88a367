"""The naming rule (docs/architecture.md, "Names"): a renamed public
parameter keeps working under its old name for a release, with a
DeprecationWarning that names the new one, and means the same; both
names at once are refused; delta has one default, in one place."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp
from plotnine_private import PlotninePrivateError, layer_data
from plotnine_private._compat import build
from plotnine_private.door import layer_releases
from plotnine_private.mechanisms.release.engine import LaplaceCounts
from plotnine_private.mechanisms.samplers.laplace import DEFAULT_DELTA
from plotnine_private.pca import dp_pca, dp_score
from plotnine_private.stats.dp_pca_score import stat_dp_pca_score

RNG = np.random.default_rng(22)
COLS = ["a", "b", "c"]
DATA = pd.DataFrame(
    RNG.normal(size=(300, 3)) @ np.diag([3, 2, 1]), columns=COLS
)
SHARES3 = {"loading": 0.5, "scree": 0.25, "score": 0.25}
SHARES2 = {"loading": 0.4, "score": 0.6}


def _deprecated(old: str, new: str, call):
    """Run ``call`` and return its result; it must warn once that
    ``old=`` is deprecated, naming ``new=``."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = call()
    named = [
        w
        for w in record
        if issubclass(w.category, DeprecationWarning)
        and f"{old}=" in str(w.message)
    ]
    assert len(named) == 1, [str(w.message) for w in record]
    assert f"use {new}=" in str(named[0].message)
    return out


def _budget(result) -> list:
    return [(r.details["what"], r.eps, r.delta) for r in result.releases]


def test_dp_pca_split_is_shares():
    new = dp_pca(DATA, COLS, eps=4, delta=1e-5, seed=3, shares=SHARES3)
    old = _deprecated(
        "split",
        "shares",
        lambda: dp_pca(DATA, COLS, eps=4, delta=1e-5, seed=3, split=SHARES3),
    )
    assert _budget(old) == _budget(new)
    # the split changed the budget (not the default thirds)
    thirds = dp_pca(DATA, COLS, eps=4, delta=1e-5, seed=3)
    assert _budget(old) != _budget(thirds)
    pd.testing.assert_frame_equal(old.histogram, new.histogram)


def test_dp_score_split_is_shares():
    new = dp_score(DATA, COLS, eps=4, delta=1e-5, seed=3, shares=SHARES2)
    old = _deprecated(
        "split",
        "shares",
        lambda: dp_score(DATA, COLS, eps=4, delta=1e-5, seed=3, split=SHARES2),
    )
    assert _budget(old) == _budget(new)
    assert _budget(old) != _budget(
        dp_score(DATA, COLS, eps=4, delta=1e-5, seed=3)
    )


@pytest.mark.parametrize("fn", [dp_pca, dp_score])
def test_split_and_shares_together_are_refused(fn):
    with pytest.raises(PlotninePrivateError, match=r"split=.*shares="):
        fn(
            DATA,
            COLS,
            eps=4,
            delta=1e-5,
            shares=SHARES2,
            split=SHARES2,
        )


def test_stat_split_is_shares():
    def plot(**kw):
        return ggplot(DATA) + stat_dp_pca_score(
            columns=COLS, eps=4, delta=1e-5, seed=3, **kw
        )

    new = build(plot(shares=SHARES2))
    old = _deprecated("split", "shares", lambda: build(plot(split=SHARES2)))
    assert [r.eps for r in layer_releases(old.layers[0])] == [
        r.eps for r in layer_releases(new.layers[0])
    ]
    assert [r.eps for r in layer_releases(new.layers[0])] != [
        r.eps for r in layer_releases(build(plot()).layers[0])
    ]
    with pytest.raises(PlotninePrivateError, match="give shares= only"):
        stat_dp_pca_score(
            columns=COLS, eps=4, delta=1e-5, split=SHARES2, shares=SHARES2
        )


@pytest.mark.parametrize("method, scale", [("uniform", 0.5), ("center", 1.0)])
def test_stat_bandwidth_scale_is_adjust(method, scale):
    # the old value was in cell widths; adjust multiplies the method's
    # default (0.25 uniform, 0.5 center): 2x the default either way
    def points(**kw):
        p = ggplot(DATA) + stat_dp_pca_score(
            columns=COLS,
            eps=4,
            delta=1e-5,
            seed=3,
            output="synthetic",
            n_sample=200,
            bins=(4, 4),
            sample_method=method,
            **kw,
        )
        out = layer_data(p)[["x", "y"]]
        assert len(out) == 200
        return out

    old = _deprecated(
        "bandwidth_scale", "adjust", lambda: points(bandwidth_scale=scale)
    )
    pd.testing.assert_frame_equal(old, points(adjust=2.0))
    assert not old.equals(points())


def test_sample_bandwidth_scale_is_adjust():
    # enough rows that the sparse histogram keeps cells at any seed
    big = pd.DataFrame(
        np.random.default_rng(5).normal(size=(5000, 3)) @ np.diag([3, 2, 1]),
        columns=COLS,
    )
    fit = dp_pca(big, COLS, eps=4, delta=1e-5, seed=3)
    assert len(fit.sample(n=100, method="center")) == 100
    old = _deprecated(
        "bandwidth_scale",
        "adjust",
        lambda: fit.sample(n=100, method="center", bandwidth_scale=0.25),
    )
    pd.testing.assert_frame_equal(
        old, fit.sample(n=100, method="center", adjust=0.5)
    )
    assert not old.equals(fit.sample(n=100, method="center"))
    with pytest.raises(PlotninePrivateError, match="give adjust= only"):
        fit.sample(n=10, adjust=2.0, bandwidth_scale=0.5)


def test_bad_adjust_is_refused_before_plotting():
    with pytest.raises(PlotninePrivateError, match="adjust must be"):
        stat_dp_pca_score(columns=COLS, eps=4, delta=1e-5, adjust=-1)


def test_accuracy_split_is_shares():
    kw = {"n": 500, "delta": 1e-5}
    new = pp.accuracy("dp_pca_score", eps=2, shares=SHARES2, **kw)
    old = _deprecated(
        "split",
        "shares",
        lambda: pp.accuracy("dp_pca_score", eps=2, split=SHARES2, **kw),
    )
    assert old == new != pp.accuracy("dp_pca_score", eps=2, **kw)


def test_delta_has_one_default():
    assert DEFAULT_DELTA == 1e-6
    assert LaplaceCounts(eps=1.0).delta == DEFAULT_DELTA
    assert (
        inspect.signature(pp.dp_table).parameters["delta"].default
        == DEFAULT_DELTA
    )
    # every private stat that takes delta: the one default, or required
    # (the PCA, which always spends it)
    private = {
        name: cls
        for name, cls in vars(pp).items()
        if name.startswith("stat_")
        and "delta" in getattr(cls, "DEFAULT_PARAMS", {})
    }
    assert len(private) >= 10
    for name, cls in private.items():
        default = cls.DEFAULT_PARAMS["delta"]
        expected = None if cls is stat_dp_pca_score else DEFAULT_DELTA
        assert default == expected, name
    # and the default is what a thresholded layer releases with
    df = pd.DataFrame({"k": list("aab")})
    p = ggplot(df, aes("k")) + geom_bar(stat="count_dp", eps=1, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (r,) = layer_releases(build(p).layers[0])
    assert r.delta == DEFAULT_DELTA
