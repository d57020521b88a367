"""Every parameter a count-family stat accepts has an observable effect."""

from __future__ import annotations

import numpy as np
import pytest
from plotnine import aes, geom_bar, geom_bin_2d, geom_histogram, ggplot
from warns import data_warnings

import plotnine_private as pp
from plotnine_private import layer_data
from plotnine_private._compat import build
from plotnine_private.door import layer_releases
from plotnine_private.mechanisms.samplers.laplace import threshold_for
from plotnine_private.mechanisms.session import current_session


def _release(p, i=0):
    return layer_releases(build(p).layers[i])


def test_pad_adds_an_empty_noised_bin_at_each_end(mpg):
    base = {"stat": "bin_dp", "breaks": [10, 20, 30, 40], "eps": 1, "seed": 3}
    plain = layer_data(ggplot(mpg, aes("hwy")) + geom_histogram(**base))
    padded = layer_data(
        ggplot(mpg, aes("hwy")) + geom_histogram(**base, pad=True)
    )
    assert len(padded) == len(plain) + 2
    assert padded["xmin"].iloc[0] == 0 and padded["xmax"].iloc[-1] == 50


@pytest.mark.parametrize(
    ("kw", "edge"), [({"boundary": 0}, 0.0), ({"center": 0}, -2.5)]
)
def test_center_and_boundary_align_the_bins(mpg, kw, edge):
    d = layer_data(
        ggplot(mpg, aes("hwy"))
        + geom_histogram(
            stat="bin_dp", binwidth=5, limits=(10, 45), eps=1, seed=1, **kw
        )
    )
    assert np.allclose((d["xmin"] - edge) % 5, 0)
    assert np.allclose(d["xmax"] - d["xmin"], 5)


def test_binwidth_per_axis_in_2d(mpg):
    d = layer_data(
        ggplot(mpg, aes("cty", "hwy"))
        + geom_bin_2d(
            stat="bin2d_dp",
            binwidth=(5, 10),
            limits=((5, 40), (10, 50)),
            eps=1,
            seed=1,
            drop=False,
        )
    )
    assert np.allclose(d["xmax"] - d["xmin"], 5)
    assert np.allclose(d["ymax"] - d["ymin"], 10)
    assert len(d) == d["xmin"].nunique() * d["ymin"].nunique()


def test_range_share_sets_the_cost_of_a_private_range(mpg):
    rel = _release(
        ggplot(mpg, aes("hwy"))
        + geom_histogram(
            stat="bin_dp", bins=10, eps=2, seed=1, range_share=0.4
        )
    )
    rng = [r for r in rel if r.mechanism == "durfee_quantile"]
    counts = [r for r in rel if r.mechanism == "discrete_laplace"]
    assert rng[0].eps == pytest.approx(0.8)
    assert counts[0].eps == pytest.approx(1.2)  # the rest of eps=2


@pytest.mark.parametrize("noise", ["discrete_laplace", "laplace"])
@pytest.mark.parametrize("delta", [1e-3, 1e-9])
def test_delta_and_noise_set_the_threshold_of_an_observed_domain(
    mpg, noise, delta
):
    rel = _release(
        ggplot(mpg, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=1, delta=delta, noise=noise)
    )[0]
    assert rel.domain == "thresholded" and rel.delta == delta
    assert rel.details["threshold"] == threshold_for(
        1, delta, "replace", noise
    )


def test_public_domain_spends_no_delta(mpg_cat):
    rel = _release(
        ggplot(mpg_cat, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
    )[0]
    assert rel.delta == 0 and rel.domain.startswith("public")


def test_records_outside_xlim_leave_no_trace(mpg):
    # neighbouring data: one record (hwy 29) moved far outside the public
    # range 0..50. It must vanish without a trace: no bin counts it (not
    # even an edge bin, where a private range would clamp it) and no
    # warning says that a record was removed.
    import warnings

    from plotnine import xlim

    far = mpg.copy()
    far.loc[0, "hwy"] = 1000.0

    def run(data, stat, **params):
        current_session().sources.clear()  # a fresh session for each data set
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            out = layer_data(
                ggplot(data, aes("hwy"))
                + geom_histogram(stat=stat, bins=5, na_rm=False, **params)
                + xlim(0, 50)
            )
        # the eps > 10 warning is about the parameter, not the data
        return out, sorted(
            str(w.message)
            for w in data_warnings(ws)
            if "gives little protection" not in str(w.message)
        )

    # control: in this situation plotnine's own stat_bin does warn, so a
    # private stat that passed the removal on would be caught here
    _, plain = run(far, "bin")
    assert any("Removed 1 rows" in m for m in plain)
    # huge eps: the released counts are the true ones
    (exact, warned), (exact_far, warned_far) = (
        run(d, "bin_dp", eps=1e9, seed=1) for d in (mpg, far)
    )
    assert warned == warned_far == []
    for col in ("x", "xmin", "xmax", "PANEL", "group"):
        # (an edge bin beyond xlim is censored to NaN, as in plotnine)
        assert np.array_equal(exact[col], exact_far[col], equal_nan=True)
    lost = exact["count"].to_numpy() - exact_far["count"].to_numpy()
    assert lost.tolist() == [0, 0, 1, 0, 0]  # the bin 20..30 of hwy 29
    # eps = 1: a changed release (new noise), with the same public parts
    (noisy, _), (noisy_far, _) = (
        run(d, "bin_dp", eps=1, seed=1) for d in (mpg, far)
    )
    for col in ("x", "xmin", "xmax", "PANEL", "group"):
        assert np.array_equal(noisy[col], noisy_far[col], equal_nan=True)
    assert not np.array_equal(noisy["noisy_count"], noisy_far["noisy_count"])


def test_adjacency_sets_sensitivity_in_the_release(mpg_cat):
    for adjacency, sens in (("replace", 2), ("add_remove", 1)):
        rel = _release(
            ggplot(mpg_cat, aes("class"))
            + geom_bar(stat="count_dp", eps=1, seed=1, adjacency=adjacency)
        )[0]
        assert rel.sensitivity == sens
        assert rel.details["scale"] == pytest.approx(sens)


def test_continuous_x_with_public_levels(mpg):
    d = layer_data(
        ggplot(mpg, aes("cyl"))
        + geom_bar(
            stat="count_dp", eps=1, seed=1, levels=[4, 5, 6, 8, 10], drop=False
        )
    )
    assert list(d["x"]) == [4, 5, 6, 8, 10]


def test_independent_range_estimates_are_charged_separately(mpg):
    from plotnine import geom_freqpoly

    p = (
        ggplot(mpg, aes("hwy"))
        + geom_histogram(stat="bin_dp", bins=5, eps=1, seed=1)
        + geom_freqpoly(stat="bin_dp", bins=5, eps=1, seed=2)
        + geom_freqpoly(stat="bin_dp", bins=5, eps=1, seed=1)  # = layer 0
    )
    assert pp.privacy_report(p).total_eps == pytest.approx(2.0)
