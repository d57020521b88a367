"""The Durfee searches count below grid points without a sort (issue
23): the counts, so the released values, are those of the sorted search."""

from __future__ import annotations

import numpy as np
import pytest

from plotnine_private.mechanisms import quantile as qm
from plotnine_private.mechanisms.randomness import derive_key


def _cases():
    rng = np.random.default_rng(23)
    grid = qm._grid(np.arange(1, 400), 0.0, 1.01)
    yield "normal", np.abs(rng.normal(size=20001)) * 5, 0.0, 1.01
    # values exactly on grid points and one ulp either side
    on = np.concatenate(
        [grid, np.nextafter(grid, 0), np.nextafter(grid, np.inf)]
    )
    yield "on the grid", on, 0.0, 1.01
    yield "zeros", np.zeros(101), 0.0, 1.01
    yield "heavy", np.exp(rng.normal(size=5000) * 8), 0.0, 1.01
    yield "huge", np.array([0.0, 1e300, np.finfo(float).max]), 0.0, 1.01
    yield "lower", 7.5 + np.abs(rng.normal(size=3001)), 7.5, 1.05
    yield "negative lower", rng.uniform(-3, 40, 2001), -3.0, 1.001
    yield "empty", np.empty(0), 0.0, 1.01


@pytest.mark.parametrize(("name", "x", "lower", "beta"), list(_cases()))
def test_grid_counts_are_the_sorted_counts(name, x, lower, beta):
    steps = 5000
    grid = qm._GridCounts.make(x, lower, beta, steps)
    assert grid is not None, name
    i = np.arange(1, steps + 1)
    t_sorted, c_sorted = qm._SortedCounts(x, lower, beta)(i)
    t_grid, c_grid = grid(i)
    np.testing.assert_array_equal(t_grid, t_sorted)
    np.testing.assert_array_equal(c_grid, c_sorted)


@pytest.mark.parametrize("q", [0.01, 0.5, 0.99])
def test_searches_release_what_the_sorted_search_releases(q):
    rng = np.random.default_rng(7)
    x = np.abs(rng.standard_t(2, size=3001)) * 3
    for s in range(40):
        key = derive_key(bytes(16), "counts", s)
        eps = [0.05, 0.5, 5.0][s % 3]
        args = (x.size, q, eps, 0.0, 1.01, 5000, key)
        assert qm._search(
            qm._GridCounts.make(x, 0.0, 1.01, 5000), *args
        ) == qm._search(qm._SortedCounts(x, 0.0, 1.01), *args)


def test_tied_grid_points_fall_back_to_the_sort():
    # lower = 1e20 swallows beta**i for small i: many grid points tie,
    # and the guess cannot settle in a few moves
    x = 1e20 + np.arange(5.0) * 1e5
    assert qm._GridCounts.make(x, 1e20, 1.01, 5000) is None
    assert isinstance(qm._counter(x, 1e20, 1.01, 5000), qm._SortedCounts)
    # the search still runs (on the sorted values)
    qm.upper_quantile(x, 0.5, 1.0, lower=1e20, key=bytes(16))
