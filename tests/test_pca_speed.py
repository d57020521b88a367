"""dp_pca's input matrix: no copy when none is needed, same values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from plotnine_private.pca.validation import numeric_matrix


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_finite_matrix_keeps_its_values_and_layout(order):
    a = np.random.default_rng(0).normal(size=(50, 3))
    df = pd.DataFrame(np.asarray(a, order=order), columns=list("abc"))
    x, cols = numeric_matrix("dp_pca", df, ["a", "b", "c"])
    assert cols == ["a", "b", "c"]
    assert np.array_equal(x, a)
    want = df.to_numpy(dtype=float)
    assert x.flags.c_contiguous == want.flags.c_contiguous


def test_missing_and_infinite_values_still_become_zero():
    df = pd.DataFrame(
        {"a": [1.0, np.nan, 3.0], "b": [np.inf, 2.0, -np.inf], "c": 1.0}
    )
    x, _ = numeric_matrix("dp_pca", df, ["a", "b", "c"])
    assert x.tolist() == [[1.0, 0.0, 1.0], [0.0, 2.0, 1.0], [3.0, 0.0, 1.0]]


def test_a_column_subset_not_in_one_block_is_copied_contiguous():
    a = np.random.default_rng(1).normal(size=(40, 5))
    df = pd.DataFrame(a, columns=list("abcde"))
    x, _ = numeric_matrix("dp_pca", df, ["a", "c", "e"])
    assert x.flags.forc
    assert np.array_equal(x, a[:, [0, 2, 4]])


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_the_kendall_design_gathers_the_rows_in_their_layout(layout):
    from plotnine_private.mechanisms.pca.directions import _gather_rows

    a = np.random.default_rng(2).normal(size=(301, 7))
    if layout == "strided":
        a = np.random.default_rng(2).normal(size=(301, 14))[:, ::2]
    else:
        a = np.asarray(a, order=layout)
    order = np.random.default_rng(3).permutation(301)
    rows = _gather_rows(a, order)
    assert np.array_equal(rows, a[order])
    # a Fortran-ordered matrix (pandas' block) stays Fortran-ordered:
    # the shifted differences then copy whole columns
    assert rows.flags.f_contiguous == (layout == "F")
    assert rows.flags.c_contiguous == (layout != "F")


@pytest.mark.parametrize("n", [1, 2, 1000, 1025, 300_000])
def test_the_keyed_order_by_one_sort_is_the_stable_argsort(n):
    from plotnine_private.mechanisms.streams.randomness import (
        derive_key,
        keyed_permutation,
        keyed_uniform,
        master_key,
    )

    # n = 1025: 11 index bits, the first size whose words drop a bit
    for seed in range(3):
        key = derive_key(master_key(seed), "order")
        want = np.argsort(keyed_uniform(key, n), kind="stable")
        assert keyed_permutation(key, n).tolist() == want.tolist()


@pytest.mark.parametrize("n", [900, 5000, 70_000])
def test_the_order_of_draws_that_share_their_kept_bits_is_exact(n):
    """Draws equal in the bits a word keeps, or equal outright: the
    stable argsort's order (ties by index) either way."""
    from plotnine_private.mechanisms.streams.randomness import draw_order

    rng = np.random.default_rng(n)
    grid = rng.integers(1, 2**54, size=n)
    # a few tens of draws that differ only in their lowest bits, and
    # some exact duplicates
    grid[rng.integers(0, n, 40)] = grid[0] ^ rng.integers(0, 64, 40)
    grid[rng.integers(0, n, 40)] = grid[1]
    u = grid * 2.0**-54
    assert np.all(u * 2.0**54 == grid)  # multiples of 2**-54, exactly
    got = draw_order(u)
    assert got.dtype == np.int64
    assert got.tolist() == np.argsort(u, kind="stable").tolist()


def test_finite_values_whose_sum_overflows_are_kept_as_they_are():
    # the finiteness test sums first: an overflowing sum is not an error
    a = np.asfortranarray(np.full((4, 3), 1e308))
    a[0, 0] = -5.0
    x, _ = numeric_matrix(
        "dp_pca", pd.DataFrame(a, columns=list("abc")), list("abc")
    )
    assert np.array_equal(x, a)
    assert x.flags.f_contiguous
    b = a.copy()
    b[2, 1] = np.inf
    x, _ = numeric_matrix(
        "dp_pca", pd.DataFrame(b, columns=list("abc")), list("abc")
    )
    assert x[2, 1] == 0.0 and x[3, 1] == 1e308
