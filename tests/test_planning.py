"""pp.accuracy and pp.eps_for agree with an independent simulation of the
noise (numpy's own generator, the project's Gaussian sampler) to within
5% for every family; eps_for is the smallest eps that reaches its
target."""

from __future__ import annotations

import math

import numpy as np
import pytest

import plotnine_private as pp
from plotnine_private.planning import true_histogram
from plotnine_private.stats.fine_histogram import FineHistogram

DRAWS = 8000


def _dlap(rng, b, shape):
    p = math.exp(-1 / b)
    return rng.geometric(1 - p, shape) - rng.geometric(1 - p, shape)


def _smallest_k(noise, level):
    a = np.sort(np.abs(noise))
    return float(a[math.ceil(level * len(a)) - 1])


@pytest.mark.parametrize("adjacency", ["replace", "add_remove"])
@pytest.mark.parametrize("eps", [0.2, 1, 3])
def test_counts_match_the_noise(eps, adjacency):
    rng = np.random.default_rng(11)
    sens = 2 if adjacency == "replace" else 1
    noise = _dlap(rng, sens / eps, 200_000)
    for stat in ("count_dp", "bin_dp", "bin2d_dp", "bin_hex_dp", "sum_dp"):
        got = pp.accuracy(stat, eps=eps, adjacency=adjacency)
        assert got == pytest.approx(_smallest_k(noise, 0.95), rel=0.05)


def _independent_curve_error(name, eps, n, seed=5, **params):
    """Largest error of the stat's output over DRAWS noisy copies of the
    histogram of n records, drawn with numpy's generator."""
    from plotnine_private.planning import _fine_stat

    stat = _fine_stat(name, eps, "replace", "discrete_laplace", params)
    hist = true_histogram(stat, n)
    truth = stat.curve(hist)
    rng = np.random.default_rng(seed)
    k = hist.noisy.shape[1]
    noisy = hist.noisy + _dlap(rng, 2 / eps, (DRAWS, k))
    import pandas as pd

    info = pd.DataFrame({"_g": np.zeros(DRAWS)})
    reps = stat.curve(
        FineHistogram(hist.edges, np.maximum(noisy, 0), noisy, info)
    )
    worst = np.zeros(DRAWS)
    for col in stat.DECLARATION.judged_by:
        t = truth[col].to_numpy(dtype=float)
        r = reps[col].to_numpy(dtype=float).reshape(DRAWS, -1)
        ok = np.isfinite(t)
        worst = np.maximum(worst, np.abs(r[:, ok] - t[ok]).max(axis=1))
    return worst


CURVES = [
    ("density_dp", 1, 300, {"limits": (0, 10)}),
    ("ecdf_dp", 1, 300, {"limits": (0, 10)}),
    ("boxplot_dp", 1, 300, {"limits": (0, 10)}),
    ("boxplot_dp", 0.5, 80, {"limits": (0, 24), "bins": 48}),
    ("density_dp", 2, 150, {"limits": (2, 7), "bins": 128, "bw": 0.3}),
]


@pytest.mark.parametrize(("name", "eps", "n", "params"), CURVES)
def test_curves_match_an_independent_simulation(name, eps, n, params):
    worst = _independent_curve_error(name, eps, n, **params)
    want = float(np.quantile(worst, 0.95))
    got = pp.accuracy(name, eps=eps, n=n, **params)
    assert got == pytest.approx(want, rel=0.05)


@pytest.mark.parametrize(("name", "eps", "n", "params"), CURVES[:3])
def test_eps_for_curves_reaches_its_target(name, eps, n, params):
    target = pp.accuracy(name, eps=eps, n=n, **params)
    found = pp.eps_for(name, error=target, n=n, **params)
    assert pp.accuracy(name, eps=found, n=n, **params) <= target
    assert pp.accuracy(name, eps=found * 0.9, n=n, **params) > target
    # the independent simulation at the eps found agrees with the target
    worst = _independent_curve_error(name, found, n, **params)
    assert float(np.quantile(worst, 0.95)) == pytest.approx(target, rel=0.05)


@pytest.mark.parametrize("eps", [0.5, 2])
def test_count_eps_for_is_the_smallest(eps):
    k = pp.accuracy("count_dp", eps=eps)
    found = pp.eps_for("count_dp", error=k)
    assert found <= eps * 1.001
    assert pp.accuracy("count_dp", eps=found) <= k
    assert pp.accuracy("count_dp", eps=found * 0.995) > k


def test_summary_mean_matches_the_two_noises():
    rng = np.random.default_rng(2)
    eps, n, lo, hi = 1.0, 40, 0.0, 50.0
    # the stat: half of eps to the totals of (y - 25) on a 0.01 grid
    # (sensitivity 2 * 2500 grid units under replace), half to counts
    s = _dlap(rng, 2 * 2500 / 0.5, 200_000) * 0.01
    c = _dlap(rng, 2 / 0.5, 200_000)
    mean = np.clip(25 + s / np.maximum(n + c, 1), lo, hi)
    want = float(np.quantile(np.abs(mean - 25), 0.95))
    got = pp.accuracy("summary_dp", eps=eps, n=n, bounds=(lo, hi))
    assert got == pytest.approx(want, rel=0.05)
    found = pp.eps_for("summary_dp", error=got, n=n, bounds=(lo, hi))
    assert found == pytest.approx(eps, rel=0.05)


def test_summary_total_is_exact():
    rng = np.random.default_rng(4)
    s = _dlap(rng, 2 * 5000 / 1.0, 200_000) * 0.01  # bounds (0, 50)
    want = _smallest_k(s, 0.95)
    got = pp.accuracy("summary_dp", eps=1, bounds=(0, 50), fun="sum")
    assert got == pytest.approx(want, rel=0.05)


def test_pca_tiles_match_the_gaussian_sampler():
    from plotnine_private.mechanisms.pca.histogram import gaussian_counts

    eps, n, delta = 4.0, 178, 1e-5
    # half of eps and delta to the scores, 0.65 of that eps to the
    # histogram
    noise = gaussian_counts(
        np.zeros(100_000), eps * 0.5 * 0.65, delta * 0.5, key=bytes(16)
    )
    want = _smallest_k(noise / n, 0.95)
    kw = {"n": n, "delta": delta, "method": "add"}
    got = pp.accuracy("dp_pca_score", eps=eps, **kw)
    assert got == pytest.approx(want, rel=0.05)
    # the noise is integer, so the error is a step function of eps:
    # eps_for gives the smallest eps on the step that reaches it
    found = pp.eps_for("dp_pca_score", error=got, **kw)
    assert found <= eps * 1.001
    assert pp.accuracy("dp_pca_score", eps=found, **kw) <= got
    assert pp.accuracy("dp_pca_score", eps=found * 0.99, **kw) > got


def test_pca_sparse_tiles_match_discrete_laplace_noise():
    rng = np.random.default_rng(8)
    eps, n = 4.0, 178
    # discrete Laplace on each shown tile's count
    noise = _dlap(rng, 2 / (eps * 0.5 * 0.65), 200_000)
    want = _smallest_k(noise / n, 0.95)
    got = pp.accuracy("dp_pca_score", eps=eps, n=n, delta=1e-5)
    assert got == pytest.approx(want, rel=0.05)


def test_the_wrong_noise_fails_the_same_check():
    # negative control: a sensitivity of 1 instead of 2 is far outside 5%
    rng = np.random.default_rng(11)
    wrong = _smallest_k(_dlap(rng, 1.0, 200_000), 0.95)
    assert abs(pp.accuracy("count_dp", eps=1) / wrong - 1) > 0.05
    worst = _independent_curve_error("boxplot_dp", 2, 300, limits=(0, 10))
    got = pp.accuracy("boxplot_dp", eps=1, n=300, limits=(0, 10))
    assert abs(got / float(np.quantile(worst, 0.95)) - 1) > 0.05


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: pp.accuracy("mean_dp", eps=1), "stat must be one of"),
        (lambda: pp.accuracy("count_dp", eps=0), "eps must be"),
        (lambda: pp.accuracy("count_dp", eps=1, level=1), "level"),
        (lambda: pp.accuracy("boxplot_dp", eps=1, n=50), "limits"),
        (lambda: pp.accuracy("density_dp", eps=1, limits=(0, 1)), "n is"),
        (lambda: pp.eps_for("count_dp", error=0), "error must be"),
        (
            lambda: pp.eps_for("count_dp", error=1, eps_max=0.01),
            "not reached",
        ),
    ],
)
def test_bad_input_names_the_parameter(call, words):
    with pytest.raises(pp.PlotninePrivateError, match=words):
        call()
