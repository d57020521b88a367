"""No released float can single out a true value (DESIGN rule 11).

The attacker knows the mechanism and every record but one, so they know
each cell's true value up to that record: a handful of candidates. With a
float sampler (``count + sigma * ndtri(u)``, ``u`` on a 2**-53 grid) only
some floats are reachable from each candidate, so a released float is
often reachable from the true candidate alone (Mironov 2012). With integer
noise on integer counts (or noise on a public lattice) every lattice point
is reachable from every candidate, and nothing is singled out.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from plotnine import (
    aes,
    geom_bar,
    geom_bin_2d,
    geom_boxplot,
    geom_count,
    geom_density,
    geom_histogram,
    geom_pointrange,
    geom_step,
    ggplot,
)
from plotnine.data import mpg
from scipy.special import ndtr, ndtri

import plotnine_private as pp
from plotnine_private.mechanisms.pca.directions import private_eigenvalues
from plotnine_private.mechanisms.pca.histogram import histogram_sigma
from plotnine_private.mechanisms.samplers.discrete_gaussian import (
    discrete_gaussian_pmf,
)
from plotnine_private.mechanisms.samplers.gaussian import (
    gaussian_resolution,
    round_to_resolution,
)
from plotnine_private.mechanisms.samplers.laplace import dlap_pmf
from plotnine_private.mechanisms.streams.randomness import keyed_normal

CANDIDATES = np.arange(0, 11)  # the unknown record's cell: 0..10 others


def _float_gaussian_reaches(r: float, c: float, sigma: float) -> bool:
    """Whether the float sampler ``c + sigma * ndtri((k + 1/2) 2**-53)``
    outputs exactly ``r`` for some ``k`` (the neighbours of the inverse
    are tried: ndtr is accurate to a few units of 2**-53 near 0)."""
    k0 = math.floor(float(ndtr((r - c) / sigma)) * 2.0**53)
    ks = np.arange(k0 - 6, k0 + 7, dtype=np.float64)
    return bool(np.any(c + sigma * ndtri((ks + 0.5) * 2.0**-53) == r))


def _integer_noise_reaches(r: float, c: float, pmf) -> bool:
    """Whether integer noise with probability mass ``pmf`` takes ``r``
    from ``c``: ``r - c`` is an integer of positive mass."""
    d = r - c
    return d == round(d) and float(pmf(np.array([round(d)]))[0]) > 0


def _singled_out(released, reaches) -> int:
    """Cells whose released value only one candidate count can produce."""
    return sum(
        sum(reaches(float(r), float(c)) for c in CANDIDATES) == 1
        for r in released
    )


@pytest.fixture(scope="module")
def scores() -> pd.DataFrame:
    rng = np.random.default_rng(18)
    return pd.DataFrame(
        rng.normal(size=(2000, 3)) * [3.0, 1.5, 1.0], columns=list("abc")
    )


def _small_cells(counts: np.ndarray) -> np.ndarray:
    """Released values of cells whose noisy count lies among the
    candidates (small cells; clipped ones say nothing more)."""
    return counts[(counts > 0) & (counts <= 12)]


def test_pca_add_histogram_singles_out_nothing(scores):
    r = pp.dp_pca(scores, list("abc"), eps=2, delta=1e-5, seed=3, method="add")
    eps, delta = r.releases[-1].eps, r.releases[-1].delta
    sigma = histogram_sigma(eps, delta)
    released = _small_cells(r.histogram["count"].to_numpy())
    assert released.size > 30  # enough small cells to test
    assert np.array_equal(released, np.round(released))

    def pmf(k):
        return discrete_gaussian_pmf(k, sigma**2)

    singled = _singled_out(
        released, lambda v, c: _integer_noise_reaches(v, c, pmf)
    )
    assert singled == 0


def test_negative_control_the_old_float_gaussian_singles_out_cells():
    # the mechanism before the fix, on small true counts: count +
    # sigma * ndtri(u); the same attacker singles out a share of the cells
    sigma = histogram_sigma(2 * 0.65, 1e-5)
    counts = np.random.default_rng(1).integers(0, 11, size=300)
    noisy = counts + sigma * keyed_normal(bytes(16), counts.size)
    small = _small_cells(noisy)
    # the attacker's model is right: the true count always reaches
    assert all(
        _float_gaussian_reaches(float(v), float(c), sigma)
        for v, c in zip(noisy, counts)
    )
    singled = _singled_out(
        small, lambda v, c: _float_gaussian_reaches(v, c, sigma)
    )
    assert singled >= 10, singled


def test_pca_sparse_histogram_singles_out_nothing(scores):
    r = pp.dp_pca(scores, list("abc"), eps=8, delta=1e-5, seed=3)
    rel = r.releases[-1]
    b = float(rel.details["laplace_scale_counts"])
    released = _small_cells(r.histogram["count"].to_numpy())
    assert np.array_equal(released, np.round(released))

    def pmf(k):
        return dlap_pmf(k, b)

    singled = _singled_out(
        released, lambda v, c: _integer_noise_reaches(v, c, pmf)
    )
    assert singled == 0


def test_pca_real_values_are_on_their_public_grid(scores):
    # directions and eigenvalues come from float Gaussian noise rounded to
    # a power-of-two grid: data sets whose statistics differ by far less
    # than the grid give the very same release
    y = scores.to_numpy()[:, :2]
    a = private_eigenvalues(y, 1.0, 1e-5, clip=20.0, key=bytes(16))
    b = private_eigenvalues(
        y * (1 + 1e-12), 1.0, 1e-5, clip=20.0, key=bytes(16)
    )
    assert a.values.tolist() == b.values.tolist()
    grid = gaussian_resolution(a.sigma)
    on_grid = a.values / grid
    assert np.array_equal(on_grid, np.round(on_grid))
    assert round_to_resolution(np.array([a.values[0] + grid / 3]), a.sigma)[
        0
    ] == pytest.approx(a.values[0])


# --------------------------------------------------------------------------
# every stat: the columns that carry noise are on a public lattice
# --------------------------------------------------------------------------
CARS = pp.add_record_keys(mpg, name="rk", rng_seed=1)
CARS["class"] = pd.Categorical(CARS["class"])
PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)
DP = {"eps": 1, "seed": 1}

# (stat, plot, {column: lattice step}); other float columns are public
# positions or functions of these (docs/privacy-model.md)
STATS = [
    (
        "count_dp",
        ggplot(CARS, aes("class")) + geom_bar(stat="count_dp", **DP),
        {"count": 1, "noisy_count": 1},
    ),
    (
        "count_dp laplace",
        ggplot(CARS, aes("class"))
        + geom_bar(stat="count_dp", noise="laplace", **DP),
        {"count": 1, "noisy_count": 1},
    ),
    (
        "count_ckm",
        ggplot(CARS, aes("class", rkey="rk"))
        + geom_bar(stat="count_ckm", ptable=PTAB),
        {"count": 1},
    ),
    (
        "bin_dp",
        ggplot(CARS, aes("hwy"))
        + geom_histogram(stat="bin_dp", limits=(0, 50), bins=10, **DP),
        {"count": 1, "noisy_count": 1},
    ),
    (
        "bin2d_dp",
        ggplot(CARS, aes("displ", "hwy"))
        + geom_bin_2d(stat="bin2d_dp", limits=((0, 8), (0, 50)), bins=8, **DP),
        {"count": 1, "noisy_count": 1},
    ),
    (
        "binhex_dp",
        ggplot(CARS, aes("displ", "hwy"))
        + pp.geom_hex(
            stat="binhex_dp", limits=((0, 8), (0, 50)), bins=8, **DP
        ),
        {"count": 1, "noisy_count": 1},
    ),
    (
        "sum_dp",
        ggplot(CARS, aes("cty", "hwy"))
        + geom_count(
            stat="sum_dp", limits=((0, 40), (0, 50)), resolution=1, **DP
        ),
        {"n": 1, "noisy_n": 1},
    ),
    (
        "density_dp",
        ggplot(CARS, aes("hwy"))
        + geom_density(stat="density_dp", limits=(0, 50), **DP),
        {"n": 1},
    ),
    (
        "boxplot_dp",
        ggplot(CARS, aes("class", "hwy"))
        + geom_boxplot(stat="boxplot_dp", limits=(0, 50), **DP),
        {"n": 1},
    ),
    (
        "ecdf_dp",
        ggplot(CARS, aes("hwy"))
        + geom_step(stat="ecdf_dp", limits=(0, 50), **DP),
        {"n": 1},
    ),
    (
        "summary_dp",
        ggplot(CARS, aes("class", "hwy"))
        + geom_pointrange(stat="summary_dp", bounds=(0, 50), **DP),
        {"n": 1, "sum": 0.01},
    ),
    (
        "dp_pca_score add",
        ggplot(CARS)
        + pp.stat_dp_pca_score(
            columns=["displ", "cty", "hwy"],
            eps=2,
            delta=1e-5,
            seed=1,
            method="add",
        ),
        {"count": 1},
    ),
    (
        "dp_pca_score sparse",
        ggplot(CARS)
        + pp.stat_dp_pca_score(
            columns=["displ", "cty", "hwy"], eps=8, delta=1e-5, seed=1
        ),
        {"count": 1},
    ),
]


@pytest.mark.parametrize(
    ("name", "plot", "lattice"), STATS, ids=[s[0] for s in STATS]
)
def test_noisy_columns_of_every_stat_are_on_a_public_lattice(
    name, plot, lattice
):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = pp.layer_data(plot, 0)
    for col, step in lattice.items():
        assert col in data.columns, col
        v = data[col].dropna().to_numpy(dtype=float)
        k = np.round(v / step)
        # the nearest float to an integer multiple of the public step
        assert np.allclose(v, k * step, rtol=1e-12, atol=0), (name, col)
        # so every candidate on the lattice reaches it (integer noise of
        # full support): nothing is singled out
        assert (
            _singled_out(
                k[(k > 0) & (k <= 12)],
                lambda r, c: _integer_noise_reaches(r, c, lambda d: d * 0 + 1),
            )
            == 0
        )
