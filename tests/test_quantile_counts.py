"""The Durfee searches count below grid points without a sort (issue
23): the counts, so the released values, are those of the sorted search."""

from __future__ import annotations

import numpy as np
import pytest

from plotnine_private.mechanisms.pca import quantile as qm
from plotnine_private.mechanisms.streams.randomness import derive_key


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


@pytest.mark.parametrize("skew", [1.004, 1 / 1.004])
def test_a_guess_off_by_a_few_points_settles_on_the_sorted_counts(
    monkeypatch, skew
):
    # the guess divides by log(beta): a skewed log puts values up to
    # four grid points off (above or below); the moves, repeated on the
    # values that moved, must still end at the exact counts
    import math
    import types

    fake = types.SimpleNamespace(log=lambda b: math.log(b) * skew)
    monkeypatch.setattr(qm, "math", fake)
    x = np.abs(np.random.default_rng(5).normal(size=20001)) * 4000
    grid = qm._GridCounts.make(x, 0.0, 1.01, 5000)
    assert grid is not None
    i = np.arange(1, 5001)
    np.testing.assert_array_equal(
        grid(i)[1], qm._SortedCounts(x, 0.0, 1.01)(i)[1]
    )


def test_a_guess_too_far_off_gives_up_for_the_sort(monkeypatch):
    import math
    import types

    fake = types.SimpleNamespace(log=lambda b: math.log(b) * 1.1)
    monkeypatch.setattr(qm, "math", fake)
    x = np.abs(np.random.default_rng(5).normal(size=2001)) * 4000
    assert qm._GridCounts.make(x, 0.0, 1.01, 5000) is None


def _bin_cases():
    from plotnine_private.mechanisms.pca.histogram import score_grid

    rng = np.random.default_rng(8)
    g = score_grid((-3.7, 4.1), (0.0, 1.0), (23, 1))
    on = np.concatenate(
        [g.x_breaks, np.nextafter(g.x_breaks, -9), np.nextafter(g.x_breaks, 9)]
    )
    yield "normal", rng.normal(size=50001) * 2, g.x_breaks
    yield "on the breaks", on, g.x_breaks
    yield "outside", np.array([-1e300, -4.0, 5.0, 1e300]), g.x_breaks
    yield "one bin", rng.normal(size=101), np.array([-1.0, 1.0])
    tiny = score_grid((1.0, 1.0 + 1e-12), (0, 1), (40, 1)).x_breaks
    yield "tiny width", 1.0 + rng.uniform(-1e-12, 2e-12, 2001), tiny
    # a width that overflows: the guess cannot settle, the search answers
    huge = np.linspace(-1.0, 1.0, 51) * 1e308
    yield "overflowing width", rng.uniform(-1.0, 1.0, 1001) * 1e308, huge


@pytest.mark.parametrize(("name", "v", "breaks"), list(_bin_cases()))
def test_bin_index_is_the_clamped_search(name, v, breaks):
    from plotnine_private.mechanisms.pca.histogram import _bin_index

    m = len(breaks) - 1
    want = np.clip(np.searchsorted(breaks, v, side="left"), 1, m) - 1
    np.testing.assert_array_equal(_bin_index(v, breaks), want)


@pytest.mark.parametrize("first", [1, 64, 5000])
def test_the_search_stops_where_it_would_with_other_blocks(monkeypatch, first):
    # query i always reads the draw at offset i: the blocks the draws are
    # made in (1024 first, doubling) change no result, capped ones too
    x = np.abs(np.random.default_rng(4).normal(size=801)) * 30
    counter = qm._counter(x, 0.0, 1.01, 5000)
    args = [(q, eps, 5000) for q in (0.3, 0.99) for eps in (0.05, 2.0)]
    args.append((0.99, 0.5, 200))  # capped before the values' top
    keys = [derive_key(bytes(16), "blocks", d) for d in range(8)]

    def run():
        return [
            qm._search(counter, x.size, q, eps, 0.0, 1.01, steps, k)
            for q, eps, steps in args
            for k in keys
        ]

    want = run()
    monkeypatch.setattr(qm, "_FIRST_BLOCK", first)
    assert run() == want
    assert any(capped for *_, capped in want)
